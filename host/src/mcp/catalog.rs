//! The tool catalog: names, descriptions and input schemas generated from the argument types
//! (so `deny_unknown_fields` shows as `additionalProperties: false` and bounds as
//! `minimum`/`maximum`).

use std::sync::{Arc, OnceLock};

use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;

use crate::browse::{ClickArgs, NavigateArgs, PerceiveArgs, ReadTextArgs, ScreenshotArgs, TypeArgs};
use crate::lease::{ClaimArgs, ReleaseArgs};

fn tool<T: JsonSchema>(name: &'static str, description: &'static str, read_only: bool) -> Tool {
    let schema = schemars::schema_for!(T).to_value();
    let mut object = schema.as_object().cloned().unwrap_or_default();
    object.remove("$schema");
    object.remove("title");
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(read_only);
    annotations.open_world_hint = Some(true);
    Tool::new(name, description, Arc::new(object)).with_annotations(annotations)
}

/// Every tool Nova offers, in a stable order.
pub fn tools() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        vec![
            tool::<PerceiveArgs>(
                "nova.perceive",
                "Understand the visible page: URL, title, page state, interactive elements with \
                 refs (e12) usable as selectors, landmarks, forms and visible text, plus awareness \
                 signals: sign-in / payment / consent overlays, autofill fields, native dialogs \
                 and framework hints.",
                true,
            ),
            tool::<ReadTextArgs>(
                "nova.read_text",
                "Read the visible text of the page or of one element.",
                true,
            ),
            tool::<NavigateArgs>("nova.navigate", "Open a URL in a tab and wait for it to load.", false),
            tool::<ClickArgs>(
                "nova.click_selector",
                "Click an element after checking it is visible, enabled and not covered. \
                 Reports actionDispatched: true only once the page was touched. File inputs and \
                 their labels are refused (file_input_click): use nova.file_upload.",
                false,
            ),
            tool::<TypeArgs>(
                "nova.type_selector",
                "Type into an input, textarea or contenteditable editor with real input events. \
                 Password values are never stored or logged.",
                false,
            ),
            tool::<ScreenshotArgs>(
                "nova.capture_screenshot",
                "Capture the visible part of a tab as an image.",
                true,
            ),
            tool::<ClaimArgs>(
                "nova.tab_claim",
                "Reserve a tab for this agent; other agents' calls on it fail with \
                 claim.owner_mismatch until release or expiry.",
                false,
            ),
            tool::<ReleaseArgs>("nova.tab_release", "Release a tab this agent claimed.", false),
            tool::<crate::cls::macros::SendMessageArgs>(
                "nova.guarded_send_message",
                "Send a chat message with outcome checks: types into the composer, sends, and verifies that \
                 an assistant turn or stream started (or that an error banner appeared). Never re-sends.",
                false,
            ),
            tool::<crate::cls::macros::LoginArgs>(
                "nova.guarded_login",
                "Sign in with outcome checks: fills the username and password fields, submits, and verifies \
                 the login left the form (or reports the error shown). The password is never stored or logged.",
                false,
            ),
            tool::<crate::cls::macros::SubmitFormArgs>(
                "nova.guarded_submit_form",
                "Fill and submit a form with outcome checks: success is a navigation or a success message; \
                 validation errors or an error banner are a verified failure. Never submits twice.",
                false,
            ),
            tool::<crate::cls::macros::SwitchArgs>(
                "nova.guarded_switch_model",
                "Switch the model of an assistant with outcome checks: opens the model picker, chooses the \
                 option and verifies the picker shows it; an upgrade dialog or error is a verified failure.",
                false,
            ),
            tool::<crate::cls::macros::SwitchArgs>(
                "nova.guarded_switch_sandbox",
                "Switch workspace / sandbox / project with outcome checks (like guarded_switch_model).",
                false,
            ),
            tool::<crate::aag::tools::InstructionsArgs>(
                "nova.get_instructions",
                "How to work with Nova: the tool contract, gates and recovery (mode quickstart | task | learn).",
                true,
            ),
            tool::<crate::aag::tools::BundleArgs>(
                "nova.tools_bundle",
                "Load a capability bundle (browser_automation, task_memory, page_read_debug, pks_learning, \
                 system_tools). Work calls are blocked until a bundle is loaded (setup.bootstrap_required).",
                false,
            ),
            tool::<crate::pagetools::RouteArgs>(
                "nova.route",
                "Route inside a single-page web app without reloading it (history push + popstate), on the \
                 same origin; use nova.navigate for other sites.",
                false,
            ),
            tool::<crate::pagetools::UploadArgs>(
                "nova.file_upload",
                "Put files (absolute paths on this computer, or inline base64) into an <input type=file>, \
                 as the browser's file picker would.",
                false,
            ),
            tool::<crate::pagetools::DismissArgs>(
                "nova.dismiss_blockers",
                "Close visible blockers (cookie/consent banners, dialogs, modal layers) with their decline or \
                 close control; consent is never accepted unless allowAccept is set.",
                false,
            ),
            tool::<crate::pagetools::SequenceArgs>(
                "nova.run_sequence",
                "Run up to 20 browser tool calls in order; each is checked and recorded like a single call and \
                 the first failure stops the sequence.",
                false,
            ),
            tool::<crate::aag::prompt::PromptArgs>(
                "nova.permission_prompt",
                "Ask the person in the browser for permission (a prompt window in the extension). Waits for \
                 their answer: decision approved, denied or timed_out (treat anything but approved as no).",
                false,
            ),
            tool::<crate::etm::args::SearchArgs>(
                "nova.task_search",
                "Find stored task profiles by free text (any language); candidates come with scores.",
                true,
            ),
            tool::<crate::etm::args::MatchArgs>(
                "nova.task_match",
                "Match a task description (and domain, platform, target URL) to a stored profile, with the                  score breakdown and the profile's taskAwareness.",
                true,
            ),
            tool::<crate::etm::args::ProfilesArgs>("nova.task_profiles", "List task profiles.", true),
            tool::<crate::etm::args::ProfileGetArgs>("nova.task_profile_get", "Read one task profile.", true),
            tool::<crate::etm::args::ProfileUpsertArgs>(
                "nova.task_profile_upsert",
                "Create or update a reusable task profile (compare-and-set on expectedContentRev).",
                false,
            ),
            tool::<crate::etm::args::CreateArgs>(
                "nova.task_instance_create",
                "Start a task run from a profile or an ad-hoc context. Calls on the bound tab become its                  evidence; unitSource seeds URL units (explicit, site_urls, crawler).",
                false,
            ),
            tool::<crate::etm::args::GetArgs>(
                "nova.task_instance_get",
                "Read a task run: progress, evidenceSummary (observed support for checked units), urlCoverage                  and taskAwareness.completionAllowed.",
                true,
            ),
            tool::<crate::etm::args::ProgressArgs>(
                "nova.task_instance_progress",
                "Report units discovered, checked, excluded, blocked or failed, findings and mandatory checks                  (compare-and-set on expectedInstanceRev, idempotent on clientEventId).",
                false,
            ),
            tool::<crate::etm::args::VerifyArgs>(
                "nova.task_instance_verify",
                "The verification steps of a task run, whose results go to task_instance_complete as evidenceReport.",
                true,
            ),
            tool::<crate::etm::args::CompleteArgs>(
                "nova.task_instance_complete",
                "Ask to complete a task run. Nova judges it against observed evidence and the completion                  policy; a refusal names the reason (evidence_gap, units_remaining, ...) and what is missing.",
                false,
            ),
            tool::<crate::etm::args::AbortArgs>("nova.task_instance_abort", "Abort or fail a task run.", false),
            tool::<crate::etm::args::GuidanceAddArgs>(
                "nova.task_guidance_log_add",
                "Log a lesson for a task profile; recurring lessons become promotion candidates.",
                false,
            ),
            tool::<crate::etm::args::GuidanceLogsArgs>("nova.task_guidance_logs", "List guidance logs.", true),
            tool::<crate::etm::args::CandidatesArgs>(
                "nova.task_promotion_candidates",
                "Guidance logged often enough to promote into the profile.",
                true,
            ),
            tool::<crate::etm::args::PromoteArgs>(
                "nova.task_promote_guidance",
                "Promote a guidance log into the profile's stable guidance.",
                false,
            ),
            tool::<crate::tuc::CoverageScanArgs>(
                "nova.coverage_scan",
                "Run a registered coverage scan (nova_full_page_text_v1, nova_structured_dom_v1,                  nova_i18n_spellcheck_v1) on a tab. Its coverageEvidence is checked by Nova against what it                  measured, and trusted evidence checks the page's URL unit.",
                true,
            ),
            tool::<crate::etm::args::ReconcileArgs>(
                "nova.task_instance_reconcile_coverage",
                "Replay stored coverage scans against a task run's open URL units; dryRun (default) proposes,                  dryRun=false applies when the user allows it.",
                false,
            ),
            tool::<crate::cls::goals::GoalArgs>(
                "nova.goal_register",
                "Create, query, close or annotate a closed-loop goal: a durable objective on a tab with an \
                 ordered step plan whose verified outcomes advance it; nova.perceive shows it as goalContext.",
                false,
            ),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_forbid_unknown_fields_and_carry_bounds() {
        let perceive = tools().iter().find(|t| t.name == "nova.perceive").expect("perceive");
        let schema = serde_json::Value::Object((*perceive.input_schema).clone());
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["properties"]["maxElements"]["maximum"], 5000);
        let claim = tools().iter().find(|t| t.name == "nova.tab_claim").expect("claim");
        let schema = serde_json::Value::Object((*claim.input_schema).clone());
        assert_eq!(schema["properties"]["ttlMs"]["minimum"], 5000);
        assert_eq!(schema["required"], serde_json::json!(["targetId"]));
    }

    #[test]
    fn names_are_unique_and_namespaced() {
        let mut names: Vec<_> = tools().iter().map(|t| t.name.to_string()).collect();
        assert!(names.iter().all(|n| n.starts_with("nova.")));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), tools().len());
    }
}
