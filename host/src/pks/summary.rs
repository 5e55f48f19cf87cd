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
        let selectors: Vec<String> = e.playbook["actions"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|a| {
                a["selector"]
                    .as_str()
                    .into_iter()
                    .chain(a["fallbackSelectors"].as_array().into_iter().flatten().filter_map(Value::as_str))
            })
            .map(str::to_owned)
            .collect();
        let fragile: Vec<&String> = selectors.iter().filter(|s| fragile::why(s).is_some()).collect();
        v["learningLevel"] = json!(e.level);
        v["origin"] = json!(e.origin);
        v["fingerprint"] = e.fingerprint.clone();
        v["playbook"] = e.playbook.clone();
        v["context"] = e.context.clone();
        v["hasFragileSelectors"] = json!(!fragile.is_empty());
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
