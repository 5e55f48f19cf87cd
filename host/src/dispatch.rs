//! The call pipeline every tool call goes through, whatever transport it came by:
//! parse and bound-check arguments -> run the tool -> record one TOB observation (always,
//! including invalid, blocked and failed calls).
//!
//! The gate pipeline (AAG, `crate::aag::pipeline`) runs before the tool; a blocked call is
//! recorded and never runs.

use std::time::Instant;

use serde_json::{Map, Value, json};

use crate::call::{CallError, CallRecord, Session, ToolReply};
use crate::hub::Hub;
use crate::observation::{ActionKind, Observation, Outcome};

/// Arguments as recorded: the arguments the tool declares secret (typed text, passwords, OK
/// claims, a form's field values) are replaced by their length (of their JSON, when not text),
/// each member on its own for an object (a form's selectors stay, their values go), so that no
/// secret is ever stored. A step of a sequence (`steps[]` naming a `tool` and its `args`) is
/// redacted as that tool's own call is. The password of an address (`http://user:pw@host/`)
/// is replaced wherever it appears ([`crate::url_passwords`]).
fn redact(tool: &str, args: &Map<String, Value>) -> String {
    let recorded = Value::Object(redacted(tool, args.clone())).to_string();
    crate::url_passwords::without_passwords(&recorded).into_owned()
}

fn redacted(tool: &str, mut args: Map<String, Value>) -> Map<String, Value> {
    let secret_keys = crate::registry::find(tool).map_or(&[][..], |t| t.secrets);
    for key in secret_keys {
        match args.get_mut(*key) {
            Some(Value::Null) | None => {}
            Some(Value::Object(members)) => members.values_mut().for_each(hide),
            Some(value) => hide(value),
        }
    }
    if let Some(Value::Array(steps)) = args.get_mut("steps") {
        for step in steps.iter_mut().filter_map(Value::as_object_mut) {
            let Some(inner) = step.get("tool").and_then(Value::as_str).map(str::to_owned) else { continue };
            if let Some(Value::Object(inner_args)) = step.get_mut("args") {
                *inner_args = redacted(&inner, std::mem::take(inner_args));
            }
        }
    }
    args
}

/// Replaces a secret by its length.
fn hide(value: &mut Value) {
    let n = match &*value {
        Value::String(text) => text.chars().count(),
        other => other.to_string().chars().count(),
    };
    *value = json!(format!("<redacted {n} chars>"));
}

/// Runs one tool call end to end and records it.
pub async fn call_tool(
    hub: &Hub,
    session: &Session,
    name: &str,
    args: Map<String, Value>,
) -> Result<ToolReply, CallError> {
    let started = Instant::now();
    let agent_id = args.get("agentId").and_then(Value::as_str).unwrap_or(crate::lease::DEFAULT_AGENT);
    let class = crate::registry::classify(name);
    let mut rec = CallRecord {
        obs: Observation {
            args_json: Some(redact(name, &args)),
            ..Observation::start(hub.recorder.next_seq(), name, class, agent_id, &session.id)
        },
        session: session.clone(),
        force_bypass: crate::aag::force_bypass(&args),
    };
    let span = tracing::info_span!("tool", call = %&rec.obs.call_id[..8], tool = name);
    let _guard = span.enter();
    let agent = rec.obs.agent_id.clone();
    let gates =
        crate::stages::within("gatesMs", crate::aag::facts::preflight(hub, session, name, &args, &agent))
            .await;
    if let Some(mut block) = gates.block {
        // Not executed; recorded as blocked before dispatch.
        let obs = &mut rec.obs;
        obs.duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        obs.outcome = Some(Outcome::BlockedPreflight);
        obs.block_stage = Some("aag_preflight".into());
        obs.error_code = gates.blocked_by.map(|g| format!("aag_blocked:{g}"));
        obs.reason_code = block.structured.get("reasonCode").and_then(Value::as_str).map(str::to_owned);
        obs.note_gates(gates.decisions.iter().copied());
        if let Some(t) = args.get("targetId").and_then(Value::as_str) {
            obs.target_id = Some(t.to_owned());
        }
        tracing::info!(gate = ?gates.blocked_by, "blocked by a gate");
        hub.presence.called(&session.id, crate::aag::presence::activity(&rec.obs, None));
        let durable = durable(&rec.obs);
        hub.recorder.record(rec.obs);
        if durable {
            hub.recorder.flush().await;
        }
        block.meta.extend(gates.meta);
        if !gates.warnings.is_empty() {
            block.structured["_aagGates"] = Value::Object(gates.warnings);
        }
        return Ok(block);
    }
    // `_meta` is for the gates (forceBypass); tools never see it.
    let gate_args = args.clone();
    let mut args = args;
    args.remove("_meta");
    rec.obs.note_gates(gates.decisions.iter().copied());
    let result = crate::stages::within("toolMs", run(hub, &mut rec, name, args)).await;
    let after = Instant::now();
    let obs = &mut rec.obs;
    obs.duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    match &result {
        Ok(reply) => {
            obs.ok = !reply.is_error;
            obs.outcome = Some(if reply.is_error { Outcome::Failed } else { Outcome::Success });
            obs.reason_code = reply.structured.get("reasonCode").and_then(Value::as_str).map(str::to_owned);
        }
        Err(e) => {
            obs.outcome = Some(match e {
                CallError::Owner(_) | CallError::NotAllowed { .. } | CallError::Coverage { .. } => {
                    Outcome::BlockedPreflight
                }
                CallError::Store(_) => Outcome::Failed,
                _ => Outcome::InvalidParams,
            });
            obs.block_stage = Some(match e {
                CallError::Owner(_) => "lease".to_owned(),
                CallError::NotAllowed { .. } => "settings".to_owned(),
                CallError::Coverage { .. } => "learn".to_owned(),
                CallError::Store(_) => "store".to_owned(),
                _ => "validation".to_owned(),
            });
            obs.reason_code = Some(e.reason_code().to_owned());
        }
    }
    tracing::info!(ok = obs.ok, ms = obs.duration_ms, reason = ?obs.reason_code, "tool call");
    if obs.workflow_scope_id.is_none()
        && let Some(target) = obs.target_id.as_deref()
        && let Some((scope, mode)) = hub.scopes.bind(target, &obs.agent_id)
    {
        obs.workflow_scope_id = Some(scope);
        obs.binding_mode = Some(mode.to_owned());
    }
    let task = rec.obs.target_id.as_deref().and_then(|t| hub.scopes.on_target(t)).and_then(|s| s.instance_id);
    let journaled =
        crate::lcj::Call::of(&rec.obs, &gate_args, result.as_ref().ok().map(|r| &r.structured), task);
    let learning = match &result {
        Ok(reply) => crate::alp::semantic::Semantic::from(hub).after_call(
            session,
            &journaled,
            &gate_args,
            &reply.structured,
        ),
        Err(_) => Map::new(),
    };
    let click = AutoClick::of(&journaled);
    hub.lcj.ingest(journaled);
    let autonomous = match click {
        Some(click) => autonomous_learning(hub, click).await,
        None => None,
    };
    crate::tuc::Coverage::from(hub).attribute_call(&rec.obs);
    crate::aag::facts::after_call(hub, session, &gate_args, &rec.obs);
    let hint = crate::tuc::Coverage::from(hub).scan_hint(&rec.obs);
    let structured = result.as_ref().ok().map(|r| &r.structured);
    hub.presence.called(&session.id, crate::aag::presence::activity(&rec.obs, structured));
    crate::stages::note("afterCallMs", after);
    let recording = Instant::now();
    let durable = durable(&rec.obs);
    hub.recorder.record(rec.obs);
    if durable {
        hub.recorder.flush().await;
    }
    crate::stages::note("evidenceMs", recording);
    let mut result = result;
    if let Ok(reply) = result.as_mut() {
        for (k, v) in learning {
            reply.structured[k] = v;
        }
        if let Some(a) = autonomous {
            reply.structured["pksAutonomousLearning"] = a;
        }
        if let Some(h) = hint {
            reply.structured["_aagGates"]["coverageScanRecommended"] = h;
        }
        for (k, v) in gates.warnings {
            reply.structured["_aagGates"][k] = v;
        }
        reply.meta.extend(gates.meta);
    }
    result
}

/// A successful click on an auto-safe selector: what autonomous learning (FR-1) judges.
struct AutoClick {
    selector: String,
    host: String,
    url: String,
    owner: String,
}

impl AutoClick {
    fn of(call: &crate::lcj::Call) -> Option<Self> {
        let selector = call.selector.as_deref().map(crate::lcj::keys::selector_norm)?;
        if call.tool != "nova.click_selector"
            || !call.success
            || !crate::alp::autonomous::auto_safe(&selector)
        {
            return None;
        }
        Some(Self {
            selector,
            host: crate::lcj::ingest::host_of(call),
            url: call.url_before.clone().or_else(|| call.url.clone())?,
            owner: call.owner.clone(),
        })
    }
}

/// Autonomous learning (FR-1) after a click: the journal's barrier first (the click is in
/// the evidence), then the conditions (`crate::alp::autonomous`).
async fn autonomous_learning(hub: &Hub, click: AutoClick) -> Option<Value> {
    if !hub.lcj.flush_within(crate::lcj::FLUSH_MAX).await {
        return None;
    }
    let now = crate::clock::now_ms();
    let r = hub.pks.with(|c| {
        let tx = crate::store::write_tx(c)?;
        let r = crate::alp::autonomous::consider(
            &tx,
            (&click.host, &click.url),
            &click.selector,
            &click.owner,
            now,
        );
        if matches!(r, Ok(Some(ref v)) if v["written"] == true) {
            tx.commit()?;
        }
        Ok(r)
    });
    match r {
        Ok(Ok(v)) => v,
        Ok(Err(e)) | Err(e) => {
            tracing::warn!(error = %e, "autonomous learning skipped a click");
            None
        }
    }
}

/// Whether a call is answered only once its row is committed: every call but a read, so that a
/// hub killed right after answering still holds the record of what it did or refused (reads stay
/// off the disk's path).
fn durable(obs: &Observation) -> bool {
    obs.action_kind != ActionKind::Read
}

async fn run(
    hub: &Hub,
    rec: &mut CallRecord,
    name: &str,
    args: Map<String, Value>,
) -> Result<ToolReply, CallError> {
    hub.scopes.sweep();
    let tool = crate::registry::find(name).ok_or_else(|| CallError::UnknownTool(name.to_owned()))?;
    (tool.run)(hub, rec, args).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_is_never_recorded() {
        let args = json!({"selector": "#pw", "text": "hunter2"});
        let Value::Object(map) = args else { unreachable!() };
        let recorded = redact("nova.type_selector", &map);
        assert!(!recorded.contains("hunter2"), "{recorded}");
        assert!(recorded.contains("<redacted 7 chars>"));
        let claims = json!([{"signalKey": "acme.note", "value": "sk-abcdefghijklmnopqrstuvwx"}]);
        let args = json!({"claims": claims});
        let Value::Object(map) = args else { unreachable!() };
        let recorded = redact("nova.ok_observe", &map);
        assert!(!recorded.contains("sk-abc"), "{recorded}");
        assert!(recorded.contains(&format!("<redacted {} chars>", claims.to_string().len())), "{recorded}");
    }

    #[test]
    fn form_values_and_the_steps_of_a_sequence_are_never_recorded() {
        let args = json!({"fields": {"#name": "Trip", "#password": "s3cret-code"}, "formSelector": "#f"});
        let Value::Object(map) = args else { unreachable!() };
        let recorded = redact("nova.guarded_submit_form", &map);
        assert!(!recorded.contains("s3cret") && !recorded.contains("Trip"), "{recorded}");
        assert!(recorded.contains(r##""#password":"<redacted 11 chars>""##), "{recorded}");
        assert!(recorded.contains(r##""formSelector":"#f""##), "{recorded}");

        let args = json!({"steps": [
            {"tool": "nova.navigate", "args": {"url": "https://example.org/"}},
            {"tool": "nova.type_selector", "args": {"selector": "#pw", "text": "hunter2"}},
            {"tool": "nova.guarded_submit_form", "args": {"fields": {"#pin": "4321"}}},
        ]});
        let Value::Object(map) = args else { unreachable!() };
        let recorded = redact("nova.run_sequence", &map);
        assert!(!recorded.contains("hunter2") && !recorded.contains("4321"), "{recorded}");
        assert!(
            recorded.contains("https://example.org/") && recorded.contains("<redacted 7 chars>"),
            "{recorded}"
        );
    }

    #[test]
    fn parse_errors_name_the_field() {
        let Value::Object(map) = json!({"selector": "a", "nope": 1}) else { unreachable!() };
        let err = crate::call::parse_args::<crate::browse::ClickArgs>(map).expect_err("unknown field");
        match err {
            CallError::InvalidParams { field, message } => {
                assert_eq!(field.as_deref(), Some("nope"));
                assert!(message.contains("nope"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
