//! `okHints` on `nova.perceive` and `nova.navigate` (docs/ok.md, "Hints"): whether the agent
//! should report what it sees, and why (first visit, a new URL, missing, stale or conflicted
//! signals), with the facts OK holds for the tab's service context. `null` when nothing needs
//! refreshing.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::facts::{self, Binding, Fact};
use super::{Knowledge, Place, signals};
use crate::call::CallError;

/// What the tab's binding was before this call (`None`: never observed on this service).
pub fn before(k: &Knowledge, place: &Place) -> Result<Option<Binding>, CallError> {
    k.with(|c| facts::binding(c, &place.binding()))
}

/// The current facts of the tab's service context, one per key, most specific scope first
/// (binding, account, service).
pub fn context(k: &Knowledge, place: &Place) -> Result<Vec<Fact>, CallError> {
    k.with(|c| {
        let binding = place.binding();
        let mut scopes = vec![binding.clone()];
        if let Some(account) = facts::binding(c, &binding)?.and_then(|b| b.account_ref) {
            scopes.push(account);
        }
        if place.service.is_some() {
            scopes.push(place.service_scope());
        }
        let mut seen = BTreeSet::new();
        Ok(facts::current_in(c, &scopes)?.into_iter().filter(|f| seen.insert(f.key.clone())).collect())
    })
}

/// The hints for `place` now, given what its binding was `before` this call.
pub fn hints(
    k: &Knowledge,
    place: &Place,
    before: Option<&Binding>,
    now: i64,
    window_ms: i64,
) -> Result<Value, CallError> {
    let facts = context(k, place)?;
    let first_visit = before.is_none();
    let url_changed = before.and_then(|b| b.last_url.as_deref()).is_some_and(|u| u != place.url);
    let by_key: BTreeMap<&str, &Fact> = facts.iter().map(|f| (f.key.as_str(), f)).collect();
    let tracked: BTreeSet<&str> = signals::EXPECTED
        .iter()
        .copied()
        .chain(facts.iter().map(|f| f.key.as_str()).filter(|k| k.starts_with("core.")))
        .collect();
    let missing: Vec<&str> = tracked
        .into_iter()
        .filter(|key| {
            by_key
                .get(key)
                .is_none_or(|f| matches!(f.current().state_at(now, window_ms), "stale" | "conflicted"))
        })
        .collect();
    if !first_visit && !url_changed && missing.is_empty() {
        return Ok(Value::Null);
    }
    let oldest = facts.iter().map(|f| f.last_observed_at).min();
    let current: serde_json::Map<String, Value> = facts
        .iter()
        .map(|f| {
            let mut entry = json!({
                "valueJson": f.value,
                "factState": f.current().state_at(now, window_ms),
                "certaintyLevel": f.certainty,
                "lastObservedAt": crate::time::iso(f.last_observed_at),
                "sourceKind": f.source.as_str(),
                "scope": super::scope_kind(&f.scope_ref),
            });
            // A service or account fact last seen in another tab says so: never reused silently.
            if f.target_id != place.target {
                entry["observedInTarget"] = json!(f.target_id);
            }
            (f.key.clone(), entry)
        })
        .collect();
    Ok(json!({
        "shouldObserve": true,
        "missingOrStaleKeys": missing,
        "lastObservedAgoMs": oldest.map(|t| (now - t).max(0)),
        "serviceKey": place.service,
        "currentFacts": if current.is_empty() { Value::Null } else { Value::Object(current) },
        "firstVisit": first_visit,
        "urlChanged": url_changed,
        "capabilities": capabilities(&facts, now, window_ms),
    }))
}

/// What the facts say the agent can count on, as orientation: signed in or not, and the
/// features the service shows. `null` where no fresh fact says.
pub fn capabilities(facts: &[Fact], now: i64, window_ms: i64) -> Value {
    let fresh = |key: &str| {
        facts
            .iter()
            .find(|f| f.key == key && matches!(f.current().state_at(now, window_ms), "fresh" | "confirmed"))
            .map(|f| &f.value)
    };
    let authenticated = fresh("core.login_state").and_then(Value::as_str).map(|s| s == "logged_in");
    json!({
        "authenticated": authenticated,
        "featuresAvailable": fresh("core.feature.available"),
        "subscriptionActive": fresh("core.subscription.active"),
    })
}
