//! The browser's own sign-in dialog for HTTP authentication (README, "Awareness signals",
//! `httpSignIn`). A server answered a request with 401 (a proxy with 407) and a challenge, and
//! the browser asks the person for a user name and password in a dialog of its own: no page
//! script shows it, sees it or answers it, and the request waits on it. When the document the
//! tab is opening asks, the tab itself waits (Firefox shows the dialog over it; headless
//! Chromium gives up at once); when a request the page's script made asks (Radicale's sign-in),
//! the page waits for its answer and shows it is loading.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Longest realm kept, in characters: the server names it, and it is shown to the agent.
pub const REALM_MAX_CHARS: usize = 200;

/// One sign-in the browser asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HttpSignIn {
    /// Who asks: the site's origin (`http://127.0.0.1:5232`), or the proxy's host and port.
    pub origin: String,
    /// What the server calls the place (the dialog shows it), when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realm: Option<String>,
    /// A proxy asks (407), not the site.
    #[serde(default)]
    pub proxy: bool,
    /// The document the tab is opening asks, not a request the page's script made.
    #[serde(default)]
    pub document: bool,
}

/// What the agent is told to do about a sign-in only the person can answer.
pub const ASK_THE_PERSON: &str = "Ask the person to sign in; never guess or type a password for them";

impl HttpSignIn {
    /// Who asks, and for what: `http://127.0.0.1:5232 ("Radicale - Password Required")`.
    pub fn who(&self) -> String {
        let who = if self.proxy { format!("the proxy {}", self.origin) } else { self.origin.clone() };
        let realm = self.realm.as_deref().map(|r| format!(" (\"{r}\")")).unwrap_or_default();
        format!("{who}{realm}")
    }

    /// What the browser asks, for the agent, in one sentence.
    pub fn question(&self) -> String {
        let waits = if self.document { "the tab waits on it" } else { "the page's request waits on it" };
        format!(
            "the browser asks for a user name and password for {} in a dialog of its own, which no \
             page script can read or answer: {waits}. {ASK_THE_PERSON}",
            self.who()
        )
    }
}

/// Whether a response's `WWW-Authenticate` (or `Proxy-Authenticate`) value makes a browser ask
/// the person for a user name and password: a challenge in a scheme browsers prompt for
/// (Basic, Digest, NTLM, Negotiate; a `Bearer` challenge is for scripts). Its realm, when named.
pub fn challenge(value: &str) -> Option<Option<String>> {
    const PROMPTED: [&str; 4] = ["basic", "digest", "ntlm", "negotiate"];
    let prompts = value.split(',').any(|part| {
        let scheme = part.trim_start().split([' ', '\t']).next().unwrap_or_default();
        !scheme.contains('=') && PROMPTED.iter().any(|p| scheme.eq_ignore_ascii_case(p))
    });
    if !prompts {
        return None;
    }
    let Some(at) = value.to_ascii_lowercase().find("realm=") else { return Some(None) };
    let rest = &value[at + "realm=".len()..];
    let named = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next().unwrap_or_default(),
        None => rest.split([',', ' ']).next().unwrap_or_default(),
    };
    Some(realm(Some(named)))
}

/// `realm` as kept: at most [`REALM_MAX_CHARS`] characters, none when empty.
pub fn realm(realm: Option<&str>) -> Option<String> {
    let r = realm?.trim();
    (!r.is_empty()).then(|| r.chars().take(REALM_MAX_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_names_who_asks_and_what_waits() {
        let asked = HttpSignIn {
            origin: "http://127.0.0.1:5232".into(),
            realm: Some("Radicale - Password Required".into()),
            proxy: false,
            document: false,
        };
        let q = asked.question();
        assert!(q.contains("http://127.0.0.1:5232 (\"Radicale - Password Required\")"), "{q}");
        assert!(q.contains("the page's request waits"), "{q}");
        let proxy =
            HttpSignIn { origin: "proxy.example:3128".into(), realm: None, proxy: true, document: true };
        let q = proxy.question();
        assert!(q.contains("for the proxy proxy.example:3128 in a dialog"), "{q}");
        assert!(q.contains("the tab waits"), "{q}");
    }

    #[test]
    fn a_challenge_prompts_only_in_the_schemes_browsers_ask_for() {
        assert_eq!(challenge("Basic realm=\"Nova fixture\""), Some(Some("Nova fixture".into())));
        assert_eq!(challenge("Negotiate, Basic realm=intranet"), Some(Some("intranet".into())));
        assert_eq!(challenge("digest realm=\"a, b\", nonce=\"x\""), Some(Some("a, b".into())));
        assert_eq!(challenge("NTLM"), Some(None));
        assert_eq!(challenge("Bearer realm=\"api\", error=\"invalid_token\""), None);
        assert_eq!(challenge(""), None);
    }

    #[test]
    fn a_realm_is_trimmed_and_bounded() {
        assert_eq!(realm(Some("  ")), None);
        assert_eq!(realm(None), None);
        assert_eq!(realm(Some(" Nova ")).as_deref(), Some("Nova"));
        assert_eq!(realm(Some(&"é".repeat(500))).map(|r| r.chars().count()), Some(REALM_MAX_CHARS));
    }
}
