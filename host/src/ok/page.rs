//! What every page read feeds into OK and gets back (docs/ok.md, "Hints"): after a perceive of
//! a tab's top frame, the `core.*` signals the page showed are filed as system observations and
//! `okHints` are computed; after a navigation, `okHints` for where the tab landed; after a
//! verified sign-in, the tab's login state.

use std::collections::BTreeMap;

use serde_json::Value;

use super::observe::{self, Batch, Claim};
use super::rules::{Certainty, Source};
use super::{Knowledge, hints, service};
use crate::call::CallError;
use crate::clock;
use crate::paths::DataDir;

/// After a perceive of `target` at `url` that read `signals`: files them and returns `okHints`.
/// `site` is the site adapters the perceive already read (they name services).
pub fn perceived(
    k: &Knowledge,
    data: &DataDir,
    (target, url): (&str, &str),
    site: &[nova_shared::adapter::Adapter],
    signals: BTreeMap<String, Value>,
) -> Result<Value, CallError> {
    let place =
        super::Place { target: target.to_owned(), url: url.to_owned(), service: service::detect(url, site) };
    let before = hints::before(k, &place)?;
    let (now, window_ms) = (clock::now_ms(), super::window_ms(data));
    let claims: Vec<Claim> = signals
        .into_iter()
        .map(|(key, value)| Claim { key, value, certainty: Certainty::Likely, evidence: None })
        .collect();
    // Even with nothing read, the binding learns the URL its tab is at.
    let batch =
        Batch { place: &place, source: Source::System, agent_id: None, perception_id: None, now, window_ms };
    observe::apply(k, &batch, &claims)?;
    hints::hints(k, &place, before.as_ref(), now, window_ms)
}

/// After a sign-in Nova verified (`nova.guarded_login`'s postconditions held) in `target`, now
/// at `url`: files `core.login_state = logged_in` as its own read, with `certainty` (likely when
/// nothing on the page showed the signed-in state). A page whose sign-out hides in a closed menu
/// shows no sign-in state to a perceive; the verified login is the proof.
pub fn signed_in(
    k: &Knowledge,
    data: &DataDir,
    target: &str,
    url: &str,
    certainty: Certainty,
) -> Result<(), CallError> {
    let place = service::place(data, target, url);
    let (now, window_ms) = (clock::now_ms(), super::window_ms(data));
    let claim = Claim {
        key: "core.login_state".into(),
        value: Value::from("logged_in"),
        certainty,
        evidence: Some("nova.guarded_login verified the sign-in".into()),
    };
    let batch =
        Batch { place: &place, source: Source::System, agent_id: None, perception_id: None, now, window_ms };
    observe::apply(k, &batch, &[claim])?;
    Ok(())
}

/// `okHints` for `target` now at `url`, without observing anything.
pub fn at(k: &Knowledge, data: &DataDir, target: &str, url: &str) -> Result<Value, CallError> {
    let place = service::place(data, target, url);
    let before = hints::before(k, &place)?;
    hints::hints(k, &place, before.as_ref(), clock::now_ms(), super::window_ms(data))
}
