//! Claims that look like secrets are refused and never stored (docs/ok.md, "Secrets"): a
//! signal or object field named like a credential, or text shaped like a token, a key, a
//! session cookie or an `Authorization` header. OK holds what a person sees on the page, and a
//! person's own credentials are never that.

use serde_json::Value;

/// Names of keys and fields that hold credentials.
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passcode",
    "secret",
    "token",
    "cookie",
    "cookies",
    "apikey",
    "api_key",
    "credential",
    "credentials",
    "sessionid",
    "session_id",
    "session_token",
    "access_token",
    "refresh_token",
    "otp",
    "private_key",
];

/// Prefixes of well-known token formats.
const TOKEN_PREFIXES: &[&str] = &[
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "AKIA",
    "ASIA",
    "AIza",
    "ya29.",
    "hf_",
    "npm_",
    "pypi-",
];

/// Session cookie names (`name=value`).
const SESSION_COOKIES: &[&str] = &[
    "sessionid=",
    "phpsessid=",
    "jsessionid=",
    "connect.sid=",
    "_session=",
    "session=",
    "csrftoken=",
    "sid=",
];

/// Why a claim looks like a secret, or `None`.
pub fn why(key: &str, value: &Value, evidence: Option<&str>) -> Option<String> {
    if let Some(seg) = key.split('.').find(|s| named_secret(s)) {
        return Some(format!("the signal `{key}` names a credential (`{seg}`)"));
    }
    if let Some(w) = in_value(value) {
        return Some(format!("the value {w}"));
    }
    evidence.and_then(in_text).map(|w| format!("the evidence {w}"))
}

/// A credential name given a value in running text: `password=hunter2`, `token: abc123`.
fn assigned_credential(text: &str) -> Option<String> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.match_indices(['=', ':']).find_map(|(i, _)| {
        let name: String = text[..i]
            .chars()
            .rev()
            .take_while(|c| is_name(*c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let value = text[i + 1..].trim_start_matches(' ');
        let value = value
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '&'))
            .next()
            .unwrap_or_default();
        (named_secret(&name) && value.chars().count() >= 4).then_some(name)
    })
}

fn named_secret(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    SECRET_NAMES.contains(&n.as_str()) || SECRET_NAMES.iter().any(|s| n.ends_with(&format!("_{s}")))
}

fn in_value(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => in_text(s),
        Value::Array(items) => items.iter().find_map(in_value),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            if named_secret(k) && !v.is_null() {
                Some(format!("has a credential field (`{k}`)"))
            } else {
                in_value(v)
            }
        }),
        _ => None,
    }
}

/// Whether `text` holds something shaped like a credential.
fn in_text(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let scheme_then_credential = |scheme: &str| {
        lower.match_indices(scheme).any(|(i, _)| {
            let next = lower[i + scheme.len()..].split_whitespace().next().unwrap_or_default();
            next.len() >= 8
        })
    };
    if scheme_then_credential("bearer ")
        || lower.contains("authorization") && scheme_then_credential("basic ")
    {
        return Some("holds an Authorization header".into());
    }
    if let Some(c) = SESSION_COOKIES.iter().find(|c| {
        lower.match_indices(*c).any(|(i, _)| {
            let before = lower[..i].chars().next_back();
            before.is_none_or(|b| !b.is_ascii_alphanumeric() && b != '_') && lower.len() > i + c.len()
        })
    }) {
        return Some(format!("holds a session cookie (`{}`)", c.trim_end_matches('=')));
    }
    if let Some(name) = assigned_credential(text) {
        return Some(format!("assigns a credential (`{name}=…`)"));
    }
    for word in
        text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '(' | ')' | '<' | '>'))
    {
        if let Some(w) = token(word) {
            return Some(w.into());
        }
    }
    None
}

/// Whether one word is shaped like a token or key.
fn token(word: &str) -> Option<&'static str> {
    if TOKEN_PREFIXES.iter().any(|p| word.starts_with(p) && word.len() >= p.len() + 16) {
        return Some("looks like an API key or access token");
    }
    let mut parts = word.split('.');
    if word.starts_with("eyJ") && parts.clone().count() == 3 && parts.all(|p| p.len() >= 4) {
        return Some("looks like a JSON Web Token");
    }
    // A long opaque run of letters and digits in both cases: a generated key or session id.
    let opaque = word.len() >= 32
        && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '/' | '='))
        && word.chars().any(|c| c.is_ascii_uppercase())
        && word.chars().any(|c| c.is_ascii_lowercase())
        && word.chars().any(|c| c.is_ascii_digit());
    opaque.then_some("looks like a generated key or session id")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn credentials_given_a_value_in_text_are_found() {
        assert!(in_text("log in with password=hunter2").is_some());
        assert!(in_text("token: abcd1234 for the API").is_some());
        assert!(in_text("the password reset page is at /reset").is_none());
        assert!(in_text("time: 10:30, user=alice").is_none());
    }

    #[test]
    fn credentials_are_recognised_and_page_state_is_not() {
        let secret = [
            ("acme.password", json!("hunter2"), None),
            ("acme.api_token", json!("x"), None),
            ("acme.account", json!({"name": "Ada", "password": "hunter2"}), None),
            ("acme.key", json!("sk-proj-abcdefghijklmnopqrstuvwx"), None),
            ("acme.key", json!("ghp_abcdefghijklmnopqrstuvwxyz0123456789"), None),
            ("acme.jwt", json!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"), None),
            ("acme.header", json!("Authorization: Bearer abcdefgh.ijk"), None),
            ("acme.auth_cookie", json!("x"), None),
            ("acme.note", json!("cookie: sessionid=9f8e7d6c5b4a; path=/"), None),
            ("acme.list", json!(["fine", "AKIAABCDEFGHIJKLMNOP"]), None),
            ("acme.opaque", json!("Zx9QmT4vLp2RwY8sKd6NbH3jFc7GaE5u"), None),
            ("core.plan.label", json!("Pro"), Some("the session cookie was sessionid=abc123def")),
        ];
        for (key, value, evidence) in &secret {
            assert!(why(key, value, *evidence).is_some(), "{key} {value} {evidence:?}");
        }
        let fine = [
            ("core.login_state", json!("logged_in"), Some("The user menu shows Ada Lovelace.")),
            ("core.session.state", json!("active"), None),
            ("core.account.email", json!("ada@example.org"), None),
            ("core.model.active", json!("claude-3-5-sonnet-20241022"), None),
            ("core.feature.available", json!(["canvas", "voice"]), None),
            ("acme.conversation", json!("0d9c3b6e-5f1a-4c2b-9a7e-1f2d3c4b5a69"), None),
            ("acme.commit", json!("9fceb02d0ae598e95dc970b74767f19372d61af8"), None),
            ("acme.token_count", json!(1200), None),
            (
                "acme.sessions",
                json!({"count": 3}),
                Some("Three sessions are listed; the session badge is green."),
            ),
            ("core.plan.label", json!("Basic plan"), Some("Plan: Basic")),
            ("acme.note", json!("The bearer of this card may enter."), None),
        ];
        for (key, value, evidence) in &fine {
            assert_eq!(why(key, value, *evidence), None, "{key} {value}");
        }
    }
}
