//! From a tool call to the journal (docs/learning.md, "Journal"): its tool event, the candidate
//! it raises or verifies, and its observations, attributed and throttled.
//!
//! | call | candidate | observations |
//! |---|---|---|
//! | any that failed | unverified diagnostic, 0.4 (never promoted) | `action_failure` for an action tool |
//! | the next success of that tool in that tab | the diagnostic one verified, 0.75 | |
//! | a successful `run_sequence`, `pks_upsert`, `pks_patch`, `pks_upsert_hint`, reported success | verified, 0.82 | |
//! | `perceive` | | `perceive_signature` 0 / 0 |
//! | click, type, guarded macros | | `action_success` 1 / 0 or `action_failure` −1 / 0, attributed by selector |
//! | `phenomenon_apply` | | `action_success` / `action_failure` of that phenomenon |
//! | `dismiss_blockers` | | `blocker_dismissed` ±1 / 0 per blocker, and per entry it applied |
//! | `telemetry_report` | | `telemetry_confirmed` 1 / 0, or `selector_drift` −1 / 2 for a failure |

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use super::rows::{self, Event, NewCandidate, Observation, Origin};
use super::sessions::Sessions;
use super::throttle::{self, Throttle};
use super::{attribution, keys};
use crate::observation::{Observation as Row, Outcome};
use crate::pks::records;

/// One finished tool call, as the journal takes it.
#[derive(Debug, Clone, Default)]
pub struct Call {
    /// The call's id and dispatch sequence number.
    pub call: (String, i64),
    /// The tool.
    pub tool: String,
    /// The calling agent.
    pub owner: String,
    /// The tab it acted on.
    pub tab: Option<String>,
    /// The task run it is bound to.
    pub task: Option<String>,
    /// Whether it did what it was asked.
    pub success: bool,
    /// Whether it failed (not blocked, not refused for its arguments).
    pub failed: bool,
    /// How long it took, ms.
    pub duration_ms: i64,
    /// Why it failed.
    pub error_text: Option<String>,
    /// The page it ended on (or began on).
    pub url: Option<String>,
    /// The page it began on.
    pub url_before: Option<String>,
    /// The navigation epoch of the document it began on (a new document is a new DOM state).
    pub epoch: Option<u32>,
    /// Its arguments as recorded (secrets replaced).
    pub args_summary: Option<String>,
    /// The selector it used.
    pub selector: Option<String>,
    /// The site its arguments name (knowledge tools).
    pub scope: Option<String>,
    /// The phenomenon its arguments or reply name.
    pub phenomenon: Option<String>,
    /// The outcome a `telemetry_report` reported.
    pub reported: Option<String>,
    /// What of its reply the journal reads (`dismissed`, `pksUsed`, `status`).
    pub reply: Value,
    /// When it finished (ms, the memory clock).
    pub at: i64,
}

impl Call {
    /// The call `obs` records, with its arguments and reply; `task`: the task run on its tab.
    pub fn of(obs: &Row, args: &Map<String, Value>, reply: Option<&Value>, task: Option<String>) -> Self {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let reply = reply.cloned().unwrap_or(Value::Null);
        let said_no = reply["ok"] == false;
        let outcome = obs.outcome.unwrap_or(Outcome::Failed);
        let failed = outcome == Outcome::Failed || (outcome == Outcome::Success && said_no);
        let mut kept = Map::new();
        for k in ["status", "dismissed", "pksUsed", "preconditionFailed"] {
            if let Some(v) = reply.get(k) {
                kept.insert(k.to_owned(), v.clone());
            }
        }
        Self {
            call: (obs.call_id.clone(), obs.seq),
            tool: obs.tool.clone(),
            owner: obs.agent_id.clone(),
            tab: obs.target_id.clone(),
            task,
            success: outcome == Outcome::Success && !said_no,
            failed,
            duration_ms: obs.duration_ms,
            error_text: failed
                .then(|| obs.reason_code.clone().or_else(|| text(reply.get("message"))))
                .flatten(),
            url: obs.url_after.clone().or_else(|| obs.url_before.clone()),
            url_before: obs.url_before.clone(),
            epoch: obs.nav_epoch_before,
            args_summary: obs.args_json.clone(),
            selector: obs.selector.clone().or_else(|| text(args.get("selector"))),
            scope: text(args.get("scope")).or_else(|| text(reply.get("scope"))),
            phenomenon: text(args.get("phenomenonId"))
                .or_else(|| text(args.get("stableId")))
                .or_else(|| text(reply.get("phenomenonId"))),
            reported: text(args.get("outcome")),
            reply: Value::Object(kept),
            at: crate::clock::now_ms(),
        }
    }
}

/// Tools whose success raises a verified candidate.
const WRITES: &[&str] = &[
    "nova.run_sequence",
    "nova.pks_upsert",
    "nova.pks_patch",
    "nova.pks_upsert_hint",
    "nova.telemetry_report",
];

/// Tools that act on an element the agent names by selector.
pub const ACTIONS: &[&str] = &[
    "nova.click_selector",
    "nova.type_selector",
    "nova.guarded_login",
    "nova.guarded_send_message",
    "nova.guarded_submit_form",
    "nova.guarded_switch_model",
    "nova.guarded_switch_sandbox",
];

/// The site a call belongs to: the one its arguments name, else its page's; empty when neither.
pub fn host_of(call: &Call) -> String {
    let named = call.scope.as_deref().and_then(|s| crate::pks::scope::normalize(s).ok());
    let page = || {
        call.url
            .as_deref()
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
            .and_then(|u| crate::pks::scope::normalize(u).ok())
    };
    named.or_else(page).unwrap_or_default()
}

/// The journal's state between calls.
#[derive(Default)]
pub struct State {
    /// The throttle.
    pub throttle: Throttle,
    /// Activity sessions.
    pub sessions: Sessions,
}

/// Writes what `call` adds to the journal.
pub fn ingest(c: &Connection, state: &mut State, call: &Call) -> rusqlite::Result<()> {
    let host = host_of(call);
    let short = |s: &str| s.strip_prefix("nova.").unwrap_or(s).to_owned();
    let session = state.sessions.at(&call.owner, &host, call.at);
    let event_id = rows::insert_event(
        c,
        &Event {
            call_id: &call.call.0,
            task_id: call.task.as_deref(),
            tab_id: call.tab.as_deref(),
            owner_id: &call.owner,
            tool_name: &call.tool,
            success: call.success,
            duration_ms: call.duration_ms,
            error_text: call.error_text.as_deref(),
            context_host: &host,
            args_summary: call.args_summary.as_deref(),
            session: &session,
            at: call.at,
        },
    )?;
    let tab = call.tab.as_deref().unwrap_or_default();
    let merge = |component: &str, claim: &str, status: &str, confidence: f64, origin: &str, key: &str| {
        let n = NewCandidate {
            owner_id: &call.owner,
            context_host: &host,
            tab_id: call.tab.as_deref(),
            task_id: call.task.as_deref(),
            component,
            claim,
            status,
            confidence,
            origin,
            candidate_key: key,
            source_event_id: Some(event_id),
            at: call.at,
        };
        rows::merge_candidate(c, &n).map(|_| ())
    };
    let diag = keys::candidate_key(&["diag", &call.tool, tab]);
    if call.failed {
        let why = call.error_text.clone().unwrap_or_else(|| format!("{} failed", short(&call.tool)));
        merge(&call.tool, &why, "unverified", 0.4, "diagnostic", &diag)?;
    } else if call.success {
        rows::verify_open(c, &call.owner, &host, &diag, event_id, call.at)?;
        let reported_ok = call.reported.as_deref().is_none_or(|r| r == "success");
        if WRITES.contains(&call.tool.as_str()) && reported_ok && !host.is_empty() {
            let key = match &call.phenomenon {
                Some(id) => keys::of_entry(&host, id),
                None => keys::candidate_key(&[&short(&call.tool), &host, tab]),
            };
            let what = call.phenomenon.as_deref().unwrap_or("the site");
            let claim = format!("{} succeeded for {what} on {host}", short(&call.tool));
            merge(what, &claim, "verified", 0.82, "write", &key)?;
        }
    }
    if host.is_empty() {
        return Ok(());
    }
    let entries = if call.selector.is_some() { records::entries(c, &host)? } else { Vec::new() };
    let from = Origin {
        event_id,
        host: &host,
        tab: call.tab.as_deref(),
        owner: &call.owner,
        session: &session,
        tool: &call.tool,
        call: (&call.call.0, call.call.1),
        at: call.at,
    };
    for o in observations(call, &entries) {
        let disc = [
            o.target_stable_id.as_deref(),
            o.candidate_key.as_deref(),
            o.selector_norm.as_deref(),
            o.fingerprint_hash.as_deref(),
            Some(call.tool.as_str()),
        ];
        let key = throttle::key(o.kind, &host, tab, &disc);
        if state.throttle.admit(&key, call.at) {
            rows::insert_observation(c, &o, &from, &key)?;
        }
    }
    Ok(())
}

/// The observations `call` makes (before the throttle).
pub fn observations(call: &Call, entries: &[records::Entry]) -> Vec<Observation> {
    let ok = |b: bool| if b { 1 } else { -1 };
    let tool = call.tool.as_str();
    let mut out = Vec::new();
    match tool {
        "nova.perceive" if call.success => {
            let page = call.url.as_deref().unwrap_or_default();
            let path = page.split(['?', '#']).next().unwrap_or_default();
            out.push(Observation {
                kind: "perceive_signature",
                fingerprint_hash: Some(keys::fingerprint_hash("perceive", path)),
                payload: Some(json!({"url": path})),
                ..Observation::default()
            });
        }
        // A tab or frame that is gone (`target_not_found`, or `page_gone_after_dispatch`: a frame
        // may close itself on the very click) says nothing about the selector: no evidence
        // either way.
        t if ACTIONS.contains(&t)
            && call.failed
            && call.error_text.as_deref().is_some_and(|e| {
                e == nova_shared::reason::TARGET_NOT_FOUND || e == nova_shared::reason::GONE_AFTER_DISPATCH
            }) => {}
        t if ACTIONS.contains(&t) && (call.success || call.failed) => {
            let selector = call.selector.as_deref().map(keys::selector_norm);
            let target =
                selector.as_deref().and_then(|s| attribution::attribute(entries, s)).map(|e| e.id.clone());
            let page = call.url_before.as_deref().or(call.url.as_deref()).unwrap_or_default();
            out.push(Observation {
                kind: if call.success { "action_success" } else { "action_failure" },
                outcome: ok(call.success),
                target_stable_id: target,
                selector_norm: selector,
                // Where it happened: autonomous learning counts pages and documents.
                payload: Some(
                    json!({"url": page.split(['?', '#']).next().unwrap_or_default(), "navEpoch": call.epoch}),
                ),
                ..Observation::default()
            });
        }
        "nova.phenomenon_apply" if call.success || call.failed => {
            let done = call.success && call.reply["status"] == "ok";
            // Refused before anything ran (not active, drift gate, not on the page): no attempt.
            let refused = matches!(call.reply["status"].as_str(), Some("rejected" | "blocked"));
            let skipped = refused || call.reply["preconditionFailed"] == true;
            if !skipped {
                out.push(Observation {
                    kind: if done { "action_success" } else { "action_failure" },
                    outcome: ok(done),
                    target_stable_id: call.phenomenon.clone(),
                    ..Observation::default()
                });
            }
        }
        "nova.dismiss_blockers" if call.success => {
            for d in call.reply["dismissed"].as_array().into_iter().flatten() {
                out.push(Observation {
                    kind: "blocker_dismissed",
                    outcome: ok(d["gone"] == true),
                    selector_norm: d["control"].as_str().map(keys::selector_norm),
                    payload: Some(json!({"kind": d["kind"], "text": d["text"]})),
                    ..Observation::default()
                });
            }
            for u in call.reply["pksUsed"].as_array().into_iter().flatten() {
                out.push(Observation {
                    kind: "blocker_dismissed",
                    outcome: ok(u["verified"] == true),
                    target_stable_id: u["phenomenonId"].as_str().map(str::to_owned),
                    ..Observation::default()
                });
            }
        }
        "nova.telemetry_report" if call.success => match call.reported.as_deref() {
            Some("success") => out.push(Observation {
                kind: "telemetry_confirmed",
                outcome: 1,
                target_stable_id: call.phenomenon.clone(),
                ..Observation::default()
            }),
            Some("failure") => out.push(Observation {
                kind: "selector_drift",
                outcome: -1,
                severity: 2,
                target_stable_id: call.phenomenon.clone(),
                ..Observation::default()
            }),
            _ => {}
        },
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, success: bool) -> Call {
        Call {
            call: ("c1".into(), 1),
            tool: tool.into(),
            owner: "ada".into(),
            tab: Some("t1".into()),
            success,
            failed: !success,
            url: Some("https://www.shop.example/cart?x=1".into()),
            at: 1_000,
            ..Call::default()
        }
    }

    #[test]
    fn each_call_makes_its_observations() {
        assert_eq!(host_of(&call("nova.perceive", true)), "shop.example");
        let scoped = Call { scope: Some("Other.example".into()), ..call("nova.pks_upsert", true) };
        assert_eq!(host_of(&scoped), "other.example");
        assert_eq!(host_of(&Call { url: Some("about:blank".into()), ..call("nova.perceive", true) }), "");
        // A `scope` that names no site (a refused call's) is not taken as one: the page's is.
        for bad in ["not a site", "ftp://files.example", "about:blank", ""] {
            let refused = Call { scope: Some(bad.into()), ..call("nova.pks_upsert", false) };
            assert_eq!(host_of(&refused), "shop.example", "{bad}");
        }

        let p = observations(&call("nova.perceive", true), &[]);
        assert_eq!((p[0].kind, p[0].outcome), ("perceive_signature", 0));
        let click = Call { selector: Some(" #reject ".into()), ..call("nova.click_selector", false) };
        let o = observations(&click, &[]);
        assert_eq!(
            (o[0].kind, o[0].outcome, o[0].selector_norm.as_deref()),
            ("action_failure", -1, Some("#reject"))
        );
        let dismiss = Call {
            reply: json!({"dismissed": [{"kind": "consent", "text": "We use", "control": "button \"Reject\"", "gone": true}],
                          "pksUsed": [{"phenomenonId": "banner", "verified": false}]}),
            ..call("nova.dismiss_blockers", true)
        };
        let o = observations(&dismiss, &[]);
        assert_eq!(
            o.iter().map(|o| (o.kind, o.outcome)).collect::<Vec<_>>(),
            [("blocker_dismissed", 1), ("blocker_dismissed", -1)]
        );
        assert_eq!(o[1].target_stable_id.as_deref(), Some("banner"));
        let report = |r: &str| Call {
            reported: Some(r.into()),
            phenomenon: Some("b".into()),
            ..call("nova.telemetry_report", true)
        };
        let o = observations(&report("failure"), &[]);
        assert_eq!((o[0].kind, o[0].outcome, o[0].severity), ("selector_drift", -1, 2));
        assert_eq!(observations(&report("success"), &[])[0].kind, "telemetry_confirmed");
        assert!(observations(&report("not_applicable"), &[]).is_empty());
        let skipped =
            Call { reply: json!({"preconditionFailed": true}), ..call("nova.phenomenon_apply", true) };
        assert!(observations(&skipped, &[]).is_empty(), "a phenomenon not on the page is no attempt");
        let refused = Call { reply: json!({"status": "rejected"}), ..call("nova.phenomenon_apply", false) };
        assert!(observations(&refused, &[]).is_empty(), "an entry not active is no attempt");
        let broke = Call { reply: json!({"status": "error"}), ..call("nova.phenomenon_apply", false) };
        assert_eq!(observations(&broke, &[])[0].kind, "action_failure");
        assert!(observations(&call("nova.read_text", true), &[]).is_empty());
        let gone = Call {
            error_text: Some(nova_shared::reason::TARGET_NOT_FOUND.into()),
            ..call("nova.click_selector", false)
        };
        assert!(observations(&gone, &[]).is_empty(), "a frame that closed itself is no evidence");
    }
}
