//! How a phenomenon is shown to agents (docs/pks.md, "Tools"): its summary (id, type,
//! verified, 30-day success rate, attempts) or in full (level, origin, fingerprint, playbook,
//! context, fragile selectors, drift, health). `nova.pks_get` and the delivery on
//! `nova.perceive` / `nova.navigate` show the same shapes.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::fragile;
use super::records::Entry;

/// How much a read returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Detail {
    /// Everything (the default).
    #[default]
    Full,
    /// Ids, types and health.
    Summary,
}

/// An entry as agents see it at `detail`, with its 30-day success rate and attempts.
pub fn describe(e: &Entry, (rate, attempts): (Option<f64>, i64), detail: Detail) -> Value {
    let mut v = json!({
        "id": e.id, "type": e.kind, "verified": e.attempts.1 > 0, "successRate30d": rate,
        "totalAttempts": attempts,
    });
    if detail == Detail::Full {
        v["learningLevel"] = json!(e.level);
        v["origin"] = json!(e.origin);
        v["fingerprint"] = e.fingerprint.clone();
        v["playbook"] = e.playbook.clone();
        v["context"] = e.context.clone();
        v["hasFragileSelectors"] = json!(has_fragile_selectors(e));
        v["driftDebt"] = json!(e.drift_debt);
        v["health"] = json!({
            "totalAttempts": e.attempts.0, "successCount": e.attempts.1, "failureCount": e.attempts.2,
            "consecutiveFailures": e.attempts.3, "lastOutcome": e.last.0,
            "lastAttempt": e.last.1.map(crate::time::iso),
        });
        if let Some(why) = &e.deprecated {
            v["deprecated"] = json!(true);
            v["deprecatedReason"] = json!(why);
        }
    }
    v
}

/// Whether any selector of the entry's playbook (an action's, or one of its fallbacks) is
/// generated or positional ([`fragile::why`]).
pub fn has_fragile_selectors(e: &Entry) -> bool {
    e.playbook["actions"].as_array().into_iter().flatten().any(|a| {
        a["selector"]
            .as_str()
            .into_iter()
            .chain(a["fallbackSelectors"].as_array().into_iter().flatten().filter_map(Value::as_str))
            .any(|s| fragile::why(s).is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(playbook: Value) -> Entry {
        Entry { playbook, ..Entry::sample("p", "consent_cmp", "L2") }
    }

    #[test]
    fn a_generated_selector_anywhere_in_the_playbook_is_fragile_and_shown_in_full() {
        let steady =
            entry(json!({"actions": [{"selector": "#reject", "fallbackSelectors": ["[data-testid=no]"]}]}));
        assert!(!has_fragile_selectors(&steady));
        let fallback =
            entry(json!({"actions": [{"selector": "#reject"}, {"fallbackSelectors": [".css-1q2w3e"]}]}));
        assert!(has_fragile_selectors(&fallback));
        let own = entry(json!({"actions": [{"selector": "button.sc-bdVaJa"}]}));
        assert!(has_fragile_selectors(&own));
        assert_eq!(describe(&own, (None, 0), Detail::Full)["hasFragileSelectors"], true);
        assert_eq!(describe(&steady, (None, 0), Detail::Full)["hasFragileSelectors"], false);
        assert!(describe(&own, (None, 0), Detail::Summary).get("hasFragileSelectors").is_none());
    }
}
