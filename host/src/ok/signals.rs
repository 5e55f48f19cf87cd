//! The OK signal vocabulary: the 15 canonical `core.*` signals (the list is
//! `nova_shared::facts::CORE_FACTS`, which contracts read too), what value each takes and where
//! its fact lives, and the grammar custom signals follow (docs/ok.md, "Signals").

use serde_json::Value;

/// Longest signal key, in characters.
pub const MAX_KEY_CHARS: usize = 128;

/// Where a fact of a signal lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Home {
    /// What one tab shows of a service (the page type, the model picked in it): the binding of
    /// that tab and service. Never read for another tab.
    Binding,
    /// What holds for the service in every tab (the language, the models offered).
    Service,
    /// What belongs to the signed-in account (plan, subscription, who it is): the account scope
    /// once the account is known, else the service.
    Account,
}

/// The values a signal takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// A string; one of the listed values when the list is not empty.
    Text(&'static [&'static str]),
    /// `true` or `false`.
    Bool,
    /// A JSON array.
    List,
    /// Any JSON value (custom signals).
    Any,
}

impl ValueType {
    /// The name stored in `ok_facts.value_type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text(_) => "string",
            Self::Bool => "boolean",
            Self::List => "json_array",
            Self::Any => "json",
        }
    }

    /// Whether `v` is a value of this type; the error says what is expected.
    pub fn check(self, key: &str, v: &Value) -> Result<(), String> {
        let ok = match self {
            Self::Text(allowed) => v
                .as_str()
                .is_some_and(|s| !s.trim().is_empty() && (allowed.is_empty() || allowed.contains(&s))),
            Self::Bool => v.is_boolean(),
            Self::List => v.is_array(),
            Self::Any => !v.is_null(),
        };
        if ok {
            return Ok(());
        }
        Err(match self {
            Self::Text([]) => format!("`{key}` takes a non-empty string"),
            Self::Text(allowed) => format!("`{key}` takes one of {}", allowed.join(", ")),
            Self::Bool => format!("`{key}` takes true or false"),
            Self::List => format!("`{key}` takes a JSON array"),
            Self::Any => format!("`{key}` takes a value other than null"),
        })
    }
}

/// What the vocabulary says of one signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal {
    /// The values it takes.
    pub value: ValueType,
    /// Where its fact lives.
    pub home: Home,
    /// Whether it describes the page at one URL, so that a new URL makes it stale.
    pub route: bool,
    /// What it means, for an agent deciding what to report (`nova.ok_signal_schema`).
    pub description: &'static str,
    /// A value it takes, as JSON text; empty for a custom signal (its values are not known).
    pub example: &'static str,
}

/// A custom signal (`acme.workspace.name`): any value, in the binding of the tab and service.
pub const CUSTOM: Signal = Signal {
    value: ValueType::Any,
    home: Home::Binding,
    route: false,
    description: "A custom signal, in the namespace its service or agent chose: any JSON value other \
                  than null, held for the tab that showed it.",
    example: "",
};

/// The `core.*` signals every service context is expected to have: missing ones are named in
/// `okHints.missingOrStaleKeys`. Other canonical signals are tracked once a fact of them exists.
pub const EXPECTED: &[&str] = &["core.login_state", "core.page.type"];

/// The core signals, in the order of `nova_shared::facts::CORE_FACTS` (a test holds them equal):
/// path, values, where the fact lives, whether a new URL makes it stale, meaning, example.
#[rustfmt::skip]
const CORE: [(&str, Signal); 15] = {
    use Home::{Account, Binding, Service};
    use ValueType::{Bool, List, Text};
    const fn s(value: ValueType, home: Home, route: bool, description: &'static str, example: &'static str) -> Signal {
        Signal { value, home, route, description, example }
    }
    [
        ("login_state", s(Text(&["logged_in", "logged_out", "session_expired"]), Binding, false,
            "Whether the tab is signed in to the service: a sign-out control or the account's menu \
             shows (logged_in), a sign-in form shows (logged_out), or the page says the session \
             ended (session_expired).",
            r#""logged_in""#)),
        ("model.active", s(Text(&[]), Binding, false,
            "The model the tab's picker has selected, as the page names it.",
            r#""GPT-4o""#)),
        ("model.family", s(Text(&[]), Binding, false,
            "The family of the selected model, as the page names it.",
            r#""GPT-4""#)),
        ("model.routing_mode", s(Text(&["auto", "manual", "pro", "instant"]), Binding, false,
            "How the service picks the model for a message: by itself (auto), the person's choice \
             (manual), or a named mode.",
            r#""auto""#)),
        ("models.available", s(List, Service, false,
            "The models the service's picker offers, as the page names them.",
            r#"["GPT-4o", "o3"]"#)),
        ("plan.label", s(Text(&[]), Account, false,
            "The plan the account is on, in the page's words.",
            r#""Team plan""#)),
        ("plan.tier", s(Text(&["free", "pro", "team", "enterprise"]), Account, false,
            "The tier of the account's plan.",
            r#""team""#)),
        ("account.display_name", s(Text(&[]), Account, false,
            "The signed-in account's name as the page shows it.",
            r#""Ada Lovelace""#)),
        ("account.email", s(Text(&[]), Account, false,
            "The signed-in account's email address as the page shows it.",
            r#""ada@example.org""#)),
        ("session.state", s(Text(&["active", "idle", "throttled", "blocked"]), Binding, false,
            "Whether the service takes work in this tab: active, idle, throttled (rate-limited) or \
             blocked.",
            r#""active""#)),
        ("page.type", s(Text(&["chat", "dashboard", "login", "settings"]), Binding, true,
            "The kind of page the tab shows; stale once the tab is at another URL.",
            r#""dashboard""#)),
        ("ui.language", s(Text(&[]), Service, false,
            "The language the service's pages are shown in, as a language tag.",
            r#""en""#)),
        ("ui.theme", s(Text(&["dark", "light", "system"]), Service, false,
            "The colour theme the service's pages are shown in.",
            r#""dark""#)),
        ("subscription.active", s(Bool, Account, false,
            "Whether the account's paid subscription is active.",
            "true")),
        ("feature.available", s(List, Service, false,
            "The features the service offers the account, as the page names them.",
            r#"["web search", "file upload"]"#)),
    ]
};

/// What the vocabulary says of `core.<path>`; `None` for an unknown core signal.
pub fn core(path: &str) -> Option<Signal> {
    CORE.iter().find(|(p, _)| *p == path).map(|(_, s)| *s)
}

/// The core signals, as `(path, signal)` in the vocabulary's order.
pub fn core_signals() -> impl Iterator<Item = (&'static str, Signal)> {
    CORE.iter().copied()
}

/// Why a signal key was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyError {
    /// Not `namespace.path` or too long: that claim is rejected, the others go on.
    Format(String),
    /// A `core.*` name the vocabulary does not have: the whole call is refused (-32602).
    UnknownCore(String),
}

/// The signal `key` names: a canonical core signal, or a custom one (any value, in the binding).
pub fn parse(key: &str) -> Result<Signal, KeyError> {
    let chars = key.chars().count();
    if chars > MAX_KEY_CHARS {
        return Err(KeyError::Format(format!(
            "signalKey is {chars} characters; at most {MAX_KEY_CHARS} are allowed"
        )));
    }
    if !grammatical(key) {
        return Err(KeyError::Format(format!(
            "signalKey `{key}` is not namespace.path: lower-case segments of letters, digits and `_` \
             joined by dots, each starting with a letter (core.login_state, acme.workspace.name)"
        )));
    }
    match key.strip_prefix("core.") {
        Some(path) => core(path).ok_or_else(|| {
            KeyError::UnknownCore(format!(
                "`{key}` is not a core signal; the core signals are {} (custom signals use their \
                 own namespace, such as acme.{path})",
                nova_shared::facts::CORE_FACTS
                    .iter()
                    .map(|p| format!("core.{p}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }),
        None => Ok(CUSTOM),
    }
}

/// Whether `n` is a namespace, a key's first segment: `^[a-z][a-z0-9]*$`.
pub fn is_namespace(n: &str) -> bool {
    n.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// `^[a-z][a-z0-9]*(\.[a-z][a-z0-9_]*)+$`.
fn grammatical(key: &str) -> bool {
    let segment = |p: &str| {
        p.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    key.split_once('.').is_some_and(|(head, path)| is_namespace(head) && path.split('.').all(segment))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_signal_is_described_and_keys_follow_the_grammar() {
        let paths: Vec<&str> = core_signals().map(|(p, _)| p).collect();
        assert_eq!(paths, nova_shared::facts::CORE_FACTS, "the vocabulary follows CORE_FACTS");
        for (path, signal) in core_signals() {
            assert!(!signal.description.is_empty(), "core.{path} is described");
            let example: Value = serde_json::from_str(signal.example).expect("the example is JSON");
            assert_eq!(
                signal.value.check(path, &example),
                Ok(()),
                "core.{path}'s example is a value it takes"
            );
        }
        for path in nova_shared::facts::CORE_FACTS {
            assert!(parse(&format!("core.{path}")).is_ok(), "core.{path}");
        }
        assert_eq!(parse("core.login_state").map(|s| s.home), Ok(Home::Binding));
        assert_eq!(parse("core.plan.tier").map(|s| s.home), Ok(Home::Account));
        assert_eq!(parse("acme.workspace.name").map(|s| s.value), Ok(ValueType::Any));
        assert!(
            matches!(parse("core.mood"), Err(KeyError::UnknownCore(m)) if m.contains("core.login_state"))
        );
        for bad in
            ["login_state", "Core.login_state", "core.", ".core", "core..x", "9a.b", "a.9b", "a-b.c", "a.b-c"]
        {
            assert!(matches!(parse(bad), Err(KeyError::Format(_))), "{bad}");
        }
        let long = format!("acme.{}", "a".repeat(124));
        assert!(matches!(parse(&long), Err(KeyError::Format(m)) if m.contains("at most 128")));
        assert!(parse(&format!("acme.{}", "a".repeat(123))).is_ok(), "128 characters are allowed");
    }

    #[test]
    fn values_are_checked_against_the_vocabulary() {
        let login = parse("core.login_state").expect("core");
        assert!(login.value.check("core.login_state", &serde_json::json!("logged_in")).is_ok());
        let e = login.value.check("core.login_state", &serde_json::json!("yes")).expect_err("enum");
        assert!(e.contains("logged_in, logged_out, session_expired"), "{e}");
        assert!(ValueType::Bool.check("k", &serde_json::json!("true")).is_err());
        assert!(ValueType::List.check("k", &serde_json::json!(["a"])).is_ok());
        assert!(ValueType::Any.check("k", &Value::Null).is_err());
    }
}
