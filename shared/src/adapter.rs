//! Adapters: declarative selector sets per kind of page (chat, form, login, picker). Generic
//! heuristics come first; site-specific sets are data files (`host/adapters/*.json`) matched by
//! URL. The page-side collectors read `chat.*`, `form.*` and `overlay.*` facts through them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One adapter. Selectors may end in `:visible` (first visible match).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Adapter {
    /// Adapter name (`generic-chat`, `example-chat`, ...).
    pub name: String,
    /// Substring the page URL must contain; empty for generic adapters.
    #[serde(default)]
    pub url_contains: String,
    /// The message composer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composer: Option<String>,
    /// The send control (absent: Enter sends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send: Option<String>,
    /// Every message turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<String>,
    /// Assistant turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant: Option<String>,
    /// Visible while a reply streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<String>,
    /// Error banners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_banner: Option<String>,
}

impl Adapter {
    /// Whether this adapter applies to `url`.
    pub fn matches(&self, url: &str) -> bool {
        self.url_contains.is_empty() || url.contains(&self.url_contains)
    }
}

/// Picks the first site-specific adapter matching `url`, else the first generic one.
pub fn choose<'a>(adapters: &'a [Adapter], url: &str) -> Option<&'a Adapter> {
    adapters
        .iter()
        .find(|a| !a.url_contains.is_empty() && a.matches(url))
        .or_else(|| adapters.iter().find(|a| a.url_contains.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_adapters_win_over_generic_ones() {
        let generic = Adapter { name: "generic".into(), ..Default::default() };
        let site = Adapter { name: "site".into(), url_contains: "chat.example".into(), ..Default::default() };
        let all = [generic, site];
        assert_eq!(choose(&all, "https://chat.example/c/1").map(|a| a.name.as_str()), Some("site"));
        assert_eq!(choose(&all, "https://other.test/").map(|a| a.name.as_str()), Some("generic"));
        assert!(serde_json::from_str::<Adapter>(r#"{"name":"x","bogus":1}"#).is_err());
    }
}
