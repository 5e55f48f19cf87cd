//! How a gate's block reads: the reply an agent gets when a gate stops its call
//! (`_meta["io.nova/aag"]`, mirrored into `structuredContent`).

use serde_json::{Value, json};

use super::GATES;
use crate::call::ToolReply;
use crate::settings::GateMode;

/// Bundles an agent can load with `nova.tools_bundle`.
pub const BUNDLES: [&str; 5] = {
    let all = crate::registry::Bundle::ALL;
    [all[0].as_str(), all[1].as_str(), all[2].as_str(), all[3].as_str(), all[4].as_str()]
};

/// The bundle suggested for `tool`: the first that lists it.
pub(crate) fn preferred_bundle(tool: &str) -> &'static str {
    crate::registry::find(tool).and_then(|t| t.bundles.first()).map_or("browser_automation", |b| b.as_str())
}

/// A structured block (`_meta["io.nova/aag"]`), also mirrored into `structuredContent`.
pub fn block_reply(
    id: &'static str,
    mode: GateMode,
    reason: &str,
    message: String,
    retry_after_ms: Option<u64>,
    details: Value,
    tool: &str,
) -> ToolReply {
    let bypass = GATES.iter().find(|g| g.id == id).is_some_and(|g| g.bypass);
    let aag = json!({
        "gateId": id, "gateMode": mode.as_str(), "status": "blocked", "stage": "aag_preflight",
        "retryable": true, "retryAfterMs": retry_after_ms, "reasonCode": reason, "details": details,
        "forceBypassAvailable": bypass, "knownBundles": BUNDLES, "preferredBundle": preferred_bundle(tool),
        "message": message,
    });
    let mut structured = aag.clone();
    structured["ok"] = json!(false);
    structured["actionDispatched"] = json!(false);
    let mut reply = ToolReply::ok(structured);
    reply.is_error = true;
    reply.meta.insert("io.nova/aag".into(), aag);
    reply
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aag::gate;

    #[test]
    fn blocks_carry_the_seed_shape() {
        let r = block_reply(
            gate::LOOP,
            GateMode::Block,
            "loop.detected",
            "m".into(),
            Some(5000),
            json!({}),
            "nova.task_instance_get",
        );
        let a = &r.meta["io.nova/aag"];
        assert_eq!(
            (a["status"].clone(), a["preferredBundle"].clone()),
            (json!("blocked"), json!("task_memory"))
        );
        assert!(r.is_error);
    }
}
