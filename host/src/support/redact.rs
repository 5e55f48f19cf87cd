//! Redaction for everything support tooling writes out (`nova report`, `nova bundle`, the JSONL
//! export): credential-like query parameters, `Authorization` and `Cookie` headers, bearer and
//! basic credentials, passwords in addresses, JSON fields named like secrets, and known secret
//! values (the MCP token) wherever they appear. Typed text and passwords never reach the store (the call pipeline keeps
//! only their length); this is the second line.

use std::borrow::Cow;

use serde_json::Value;

/// What replaces a secret.
pub const MARK: &str = "[redacted]";

/// Query parameter and JSON field names whose values are credentials (compared lowercase;
/// `-` and `_` alike).
const CREDENTIAL_NAMES: &[&str] = &[
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "auth",
    "auth_token",
    "authorization",
    "sig",
    "signature",
    "key",
    "api_key",
    "apikey",
    "password",
    "passwd",
    "pwd",
    "pass",
    "secret",
    "client_secret",
    "session",
    "sessionid",
    "session_id",
    "sid",
    "code",
    "jwt",
    "cookie",
    "cookies",
    "set_cookie",
    "csrf",
    "csrf_token",
    "xsrf_token",
    "x_amz_signature",
    "x_amz_credential",
    "x_amz_security_token",
];

/// Header-like prefixes whose rest of line is a credential.
const HEADERS: &[&str] = &["authorization:", "proxy-authorization:", "cookie:", "set-cookie:", "x-api-key:"];

/// Schemes whose next word is a credential.
const SCHEMES: &[&str] = &["bearer ", "basic ", "token "];

/// Whether `name` is a credential's name.
pub fn is_credential_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    CREDENTIAL_NAMES.contains(&n.as_str())
}

/// Redacts text and JSON; built once with the secrets known by value.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// A redactor that also removes each of `secrets` (values shorter than 6 characters are
    /// ignored: they would match ordinary text).
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> =
            secrets.into_iter().map(|s| s.trim().to_owned()).filter(|s| s.len() >= 6).collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Self { secrets }
    }

    /// The redactor for a data dir: the patterns, plus the MCP token's value.
    pub fn for_data_dir(data: &crate::paths::DataDir) -> Self {
        Self::new([std::fs::read_to_string(data.token_file()).unwrap_or_default()])
    }

    /// `text` with every credential replaced by [`MARK`].
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = Cow::Owned(out.replace(s.as_str(), MARK));
            }
        }
        let params = query_params(&out);
        if let Cow::Owned(p) = params {
            out = Cow::Owned(p);
        }
        let headers = after_prefixes(&out, HEADERS, is_line_end);
        if let Cow::Owned(h) = headers {
            out = Cow::Owned(h);
        }
        let schemes = after_prefixes(&out, SCHEMES, is_word_end);
        if let Cow::Owned(s) = schemes {
            out = Cow::Owned(s);
        }
        if let Cow::Owned(a) = crate::url_passwords::without_passwords(&out) {
            out = Cow::Owned(a);
        }
        out
    }

    /// A stored text cell: JSON kept as text is redacted as JSON (fields named like credentials
    /// too), anything else as text.
    pub fn cell(&self, text: &str) -> String {
        let t = text.trim_start();
        if (t.starts_with('{') || t.starts_with('['))
            && let Ok(v) = serde_json::from_str::<Value>(text)
        {
            return self.json(&v).to_string();
        }
        self.text(text).into_owned()
    }

    /// `v` with every string redacted and the values of fields named like credentials replaced.
    pub fn json(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.text(s).into_owned()),
            Value::Array(items) => Value::Array(items.iter().map(|i| self.json(i)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let v = if is_credential_name(k) && !matches!(v, Value::Null | Value::Bool(_)) {
                            Value::String(MARK.into())
                        } else {
                            self.json(v)
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.'
}

fn is_value_end(b: u8) -> bool {
    matches!(
        b,
        b'&' | b'#' | b'"' | b'\'' | b'<' | b'>' | b' ' | b'\t' | b'\r' | b'\n' | b',' | b';' | b')' | b'\\'
    )
}

fn is_line_end(b: u8) -> bool {
    matches!(b, b'\r' | b'\n' | b'"' | b'\\')
}

fn is_word_end(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'' | b',' | b';' | b'\\' | b'<')
}

/// `name=value` pairs with a credential's name: the value is replaced.
fn query_params(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while let Some(eq) = bytes[i..].iter().position(|&b| b == b'=').map(|p| p + i) {
        let start = bytes[..eq].iter().rposition(|&b| !is_name_byte(b)).map_or(0, |p| p + 1);
        let name = &text[start..eq];
        let mut end = eq + 1;
        while end < bytes.len() && !is_value_end(bytes[end]) {
            end += 1;
        }
        if !name.is_empty() && is_credential_name(name) && end > eq + 1 && &text[eq + 1..end] != MARK {
            out.push_str(&text[copied..=eq]);
            out.push_str(MARK);
            copied = end;
        }
        i = end.max(eq + 1);
    }
    if copied == 0 { Cow::Borrowed(text) } else { Cow::Owned(out + &text[copied..]) }
}

/// What follows any of `prefixes` (case-insensitive) up to `end` is replaced.
fn after_prefixes<'a>(text: &'a str, prefixes: &[&str], end: fn(u8) -> bool) -> Cow<'a, str> {
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for p in prefixes {
        let mut from = 0;
        while let Some(at) = lower[from..].find(p).map(|x| x + from) {
            let boundary = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
            let mut s = at + p.len();
            while s < bytes.len() && bytes[s] == b' ' {
                s += 1;
            }
            let mut e = s;
            while e < bytes.len() && !end(bytes[e]) {
                e += 1;
            }
            if boundary && e > s && &text[s..e] != MARK {
                cuts.push((s, e));
            }
            from = at + p.len();
        }
    }
    if cuts.is_empty() {
        return Cow::Borrowed(text);
    }
    cuts.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (s, e) in cuts {
        if s < copied {
            continue;
        }
        out.push_str(&text[copied..s]);
        out.push_str(MARK);
        copied = e;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn credential_parameters_go_and_ordinary_ones_stay() {
        let r = Redactor::default();
        let url = "https://x.test/cb?page=2&access_token=abc.def&monkey=banana&sig=ZZ9%2F#key=k1";
        assert_eq!(
            r.text(url),
            "https://x.test/cb?page=2&access_token=[redacted]&monkey=banana&sig=[redacted]#key=[redacted]"
        );
        assert_eq!(r.text("open http://ada:pw-77@nas.local/"), "open http://ada:[redacted]@nas.local/");
        assert_eq!(r.text("nothing to see ?a=1"), "nothing to see ?a=1");
        assert!(matches!(r.text("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn headers_schemes_fields_and_known_values_go() {
        let r = Redactor::new(["tok-1234567890".to_owned(), "abc".to_owned()]);
        let log = "GET / Authorization: Bearer s3cr3t\nCookie: sid=1; theme=dark\nok tok-1234567890 abc";
        let out = r.text(log);
        assert!(
            !out.contains("s3cr3t") && !out.contains("sid=1") && !out.contains("tok-1234567890"),
            "{out}"
        );
        assert!(out.contains("ok [redacted] abc"), "short values are not secrets: {out}");
        let v = r.json(
            &json!({"password": "hunter2", "nested": [{"Api-Key": 5, "url": "/?token=t"}], "ok": true}),
        );
        assert_eq!(
            v,
            json!({"password": MARK, "nested": [{"Api-Key": MARK, "url": "/?token=[redacted]"}], "ok": true})
        );
        assert_eq!(r.text("say \"Bearer xyz\" now"), "say \"Bearer [redacted]\" now");
    }

    #[test]
    fn redaction_is_stable_and_keeps_utf8_whole() {
        let r = Redactor::default();
        let once = r.text("héllo ?token=ünï&x=1 Authorization: Basic ÄÖ").into_owned();
        assert_eq!(r.text(&once), once);
        assert!(!once.contains("ünï") && !once.contains("ÄÖ"), "{once}");
    }
}
