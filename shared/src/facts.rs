//! Fact keys: `namespace.path`, optionally with one argument in parentheses.
//!
//! Page-level and DOM facts every page has (docs/cls.md, "Contract"):
//! `page.url`, `page.origin`, `page.title`, `page.readyState`, `page.navEpoch`, `page.signOut`,
//! `page.busy`,
//! `dom.exists(SEL)`, `dom.visible(SEL)`, `dom.count(SEL)`, `dom.text(SEL)`, `dom.value(SEL)`,
//! `dom.attr(SEL|NAME)`, `dom.checked(SEL)`, `dom.enabled(SEL)`. Collector namespaces
//! (`form`, `chat`, `overlay`, `core`) share the key space.

/// Namespaces a fact key may use.
pub const NAMESPACES: &[&str] = &["page", "dom", "form", "chat", "overlay", "core"];

/// `page.*` facts (no argument).
/// `signOut` is whether the page offers to sign out: `shown`, `hidden` (in the document, in a
/// closed account menu say) or `none`. `busy` is whether the page shows it is at work (a busy
/// region, a progress bar with no value, a short "Loading" text).
pub const PAGE_FACTS: &[&str] = &["url", "origin", "title", "readyState", "navEpoch", "signOut", "busy"];

/// `dom.*` facts (a selector argument; `attr` takes `SEL|NAME`).
pub const DOM_FACTS: &[&str] = &["exists", "visible", "count", "text", "value", "attr", "checked", "enabled"];

/// What `dom.value` (and `dom.attr(SEL|value)`) of a filled password field reads: the secret
/// never leaves the page, in a reply, an assertion result or the journal. Empty reads `""`.
pub const PASSWORD_FILLED: &str = "[password]";

/// `chat.*` facts (collected through the chat adapter).
pub const CHAT_FACTS: &[&str] = &[
    "composer",
    "messageCount",
    "streamActive",
    "streamActive.started",
    "assistantTurnCreated",
    "errorBanner",
];

/// `form.*` facts.
pub const FORM_FACTS: &[&str] = &["submitted", "validationErrors", "errorNote"];

/// `overlay.*` facts.
pub const OVERLAY_FACTS: &[&str] = &["present", "count", "text"];

/// The 15 canonical `core.*` signals (docs/cls.md, "Contract"). Unknown core keys fail fast.
pub const CORE_FACTS: &[&str] = &[
    "login_state",
    "model.active",
    "model.family",
    "model.routing_mode",
    "models.available",
    "plan.label",
    "plan.tier",
    "account.display_name",
    "account.email",
    "session.state",
    "page.type",
    "ui.language",
    "ui.theme",
    "subscription.active",
    "feature.available",
];

/// What a fact's value is, which decides the operators that mean something on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `true` or `false`, never absent (`dom.exists` of a missing element is `false`).
    Bool,
    /// A number, never absent (`dom.count` of nothing is `0`).
    Number,
    /// Text that is always there (`page.title`).
    Text,
    /// Text, or `null` when there is nothing to read (`dom.text` of a missing element).
    OptionalText,
    /// Anything, or `null` (the `core.*` signals that are lists or flags).
    Any,
}

/// Longest fact key accepted.
pub const MAX_KEY_LEN: usize = 4096;

/// A parsed fact key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactKey {
    /// `page`, `dom`, ...
    pub namespace: String,
    /// What follows the namespace: `exists`, `streamActive.started`, ...
    pub path: String,
    /// The parenthesised argument, if any.
    pub arg: Option<String>,
}

impl FactKey {
    /// What this fact's value is.
    pub fn kind(&self) -> Kind {
        match (self.namespace.as_str(), self.path.as_str()) {
            ("page", "navEpoch") => Kind::Number,
            ("page", "busy") => Kind::Bool,
            ("page", _) => Kind::Text,
            ("dom", "exists" | "visible" | "checked" | "enabled") => Kind::Bool,
            ("dom", "count") => Kind::Number,
            ("dom", _) => Kind::OptionalText,
            ("chat", "assistantTurnCreated" | "streamActive" | "streamActive.started") => Kind::Bool,
            ("chat", "messageCount") => Kind::Number,
            ("chat", _) => Kind::OptionalText,
            ("form", "submitted") => Kind::Bool,
            ("form", "errorNote") => Kind::OptionalText,
            ("form", _) => Kind::Number,
            ("overlay", "present") => Kind::Bool,
            ("overlay", "count") => Kind::Number,
            ("overlay", _) => Kind::OptionalText,
            ("core", "models.available" | "subscription.active" | "feature.available") => Kind::Any,
            ("core", _) => Kind::OptionalText,
            _ => Kind::Any,
        }
    }

    /// For `dom.attr(SEL|NAME)`: the selector and the attribute name.
    pub fn attr_parts(&self) -> Option<(&str, &str)> {
        let arg = self.arg.as_deref()?;
        let (sel, name) = arg.rsplit_once('|')?;
        Some((sel.trim(), name.trim()))
    }
}

/// Parses and validates a fact key; the error says what is wrong with it.
pub fn parse(key: &str) -> Result<FactKey, String> {
    if key.len() > MAX_KEY_LEN {
        return Err(format!("fact key is {} bytes; at most {MAX_KEY_LEN} are allowed", key.len()));
    }
    let (head, arg) = match key.find('(') {
        Some(open) => {
            let inner = key[open + 1..]
                .strip_suffix(')')
                .ok_or_else(|| format!("fact key `{key}` opens `(` without closing it at the end"))?;
            (&key[..open], Some(inner.to_owned()))
        }
        None => (key, None),
    };
    let (namespace, path) =
        head.split_once('.').ok_or_else(|| format!("fact key `{key}` must be `namespace.path`"))?;
    if !NAMESPACES.contains(&namespace) {
        return Err(format!(
            "fact key `{key}`: unknown namespace `{namespace}` (known: {})",
            NAMESPACES.join(", ")
        ));
    }
    if path.is_empty()
        || !path.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Err(format!("fact key `{key}`: path `{path}` must be dot-separated names"));
    }
    match namespace {
        "page" if !PAGE_FACTS.contains(&path) || arg.is_some() => {
            return Err(format!("fact key `{key}`: page facts are {} (no argument)", PAGE_FACTS.join(", ")));
        }
        "dom" if !DOM_FACTS.contains(&path) => {
            return Err(format!("fact key `{key}`: dom facts are {}", DOM_FACTS.join(", ")));
        }
        "dom" if arg.as_deref().is_none_or(|a| a.trim().is_empty()) => {
            return Err(format!("fact key `{key}`: dom.{path} needs a selector argument"));
        }
        "chat" | "form" | "overlay" | "core" => {
            let known = match namespace {
                "chat" => CHAT_FACTS,
                "form" => FORM_FACTS,
                "overlay" => OVERLAY_FACTS,
                _ => CORE_FACTS,
            };
            if !known.contains(&path) {
                return Err(format!("fact key `{key}`: {namespace} facts are {}", known.join(", ")));
            }
            if arg.is_some() {
                return Err(format!("fact key `{key}`: {namespace}.{path} takes no argument"));
            }
        }
        _ => {}
    }
    let parsed = FactKey { namespace: namespace.to_owned(), path: path.to_owned(), arg };
    if parsed.namespace == "dom"
        && parsed.path == "attr"
        && parsed.attr_parts().is_none_or(|(s, n)| s.is_empty() || n.is_empty())
    {
        return Err(format!("fact key `{key}`: dom.attr takes `SELECTOR|ATTRIBUTE`"));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_and_dom_keys_parse() {
        assert_eq!(parse("page.url").expect("ok").arg, None);
        let k = parse("dom.exists(form >>> #send)").expect("ok");
        assert_eq!(
            (k.namespace.as_str(), k.path.as_str(), k.arg.as_deref()),
            ("dom", "exists", Some("form >>> #send"))
        );
        let attr = parse("dom.attr(a.link|href)").expect("ok");
        assert_eq!(attr.attr_parts(), Some(("a.link", "href")));
        let nested = parse("dom.text(li:nth-child(2))").expect("ok");
        assert_eq!(nested.arg.as_deref(), Some("li:nth-child(2)"));
        assert_eq!(parse("chat.streamActive.started").expect("ok").path, "streamActive.started");
    }

    #[test]
    fn bad_keys_say_what_is_wrong() {
        assert!(parse("url").expect_err("no ns").contains("namespace.path"));
        assert!(parse("web.url").expect_err("ns").contains("unknown namespace"));
        assert!(parse("page.cookies").expect_err("page").contains("page facts"));
        assert!(parse("dom.exists").expect_err("arg").contains("selector"));
        assert!(parse("dom.exists(#a").expect_err("paren").contains("closing"));
        assert!(parse("dom.attr(#a)").expect_err("attr").contains("SELECTOR|ATTRIBUTE"));
        assert!(parse("dom.frobnicate(#a)").expect_err("fn").contains("dom facts"));
        assert!(parse("core.mood").expect_err("core").contains("core facts are login_state"));
        assert!(parse("chat.vibes").expect_err("chat").contains("chat facts"));
        assert!(parse("core.login_state(x)").expect_err("arg").contains("no argument"));
        assert!(parse("core.feature.available").is_ok());
        assert!(parse("core.model.active").is_ok());
    }
}
