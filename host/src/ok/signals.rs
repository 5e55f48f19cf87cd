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
}

/// The `core.*` signals every service context is expected to have: missing ones are named in
/// `okHints.missingOrStaleKeys`. Other canonical signals are tracked once a fact of them exists.
pub const EXPECTED: &[&str] = &["core.login_state", "core.page.type"];

/// What the vocabulary says of `core.<path>`; `None` for an unknown core signal.
pub fn core(path: &str) -> Option<Signal> {
    if !nova_shared::facts::CORE_FACTS.contains(&path) {
        return None;
    }
    let (value, home, route) = match path {
        "login_state" => {
            (ValueType::Text(&["logged_in", "logged_out", "session_expired"]), Home::Binding, false)
        }
        "page.type" => (ValueType::Text(&["chat", "dashboard", "login", "settings"]), Home::Binding, true),
        "model.active" | "model.family" => (ValueType::Text(&[]), Home::Binding, false),
        "model.routing_mode" => {
            (ValueType::Text(&["auto", "manual", "pro", "instant"]), Home::Binding, false)
        }
        "session.state" => {
            (ValueType::Text(&["active", "idle", "throttled", "blocked"]), Home::Binding, false)
        }
        "models.available" | "feature.available" => (ValueType::List, Home::Service, false),
        "ui.language" => (ValueType::Text(&[]), Home::Service, false),
        "ui.theme" => (ValueType::Text(&["dark", "light", "system"]), Home::Service, false),
        "plan.tier" => (ValueType::Text(&["free", "pro", "team", "enterprise"]), Home::Account, false),
        "subscription.active" => (ValueType::Bool, Home::Account, false),
        // plan.label, account.display_name, account.email
        _ => (ValueType::Text(&[]), Home::Account, false),
    };
    Some(Signal { value, home, route })
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
        None => Ok(Signal { value: ValueType::Any, home: Home::Binding, route: false }),
    }
}

/// `^[a-z][a-z0-9]*(\.[a-z][a-z0-9_]*)+$`.
fn grammatical(key: &str) -> bool {
    let mut parts = key.split('.');
    let head = parts.next().unwrap_or_default();
    let starts = |p: &str| p.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    let namespace_ok = starts(head) && head.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let mut rest = parts.peekable();
    namespace_ok
        && rest.peek().is_some()
        && rest
            .all(|p| starts(p) && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_signal_is_described_and_keys_follow_the_grammar() {
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
