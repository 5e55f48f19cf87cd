//! The arguments of every registered tool: JSON into the typed arguments, through the parser
//! every handler uses (`nova_host::call::parse_args`, via `serde_path_to_error`).
//!
//! Input: a tool name on the first line, then the arguments as JSON. An unknown name tries the
//! arguments on every tool.
//!
//! Checks: parsing never panics; a refusal is `InvalidParams` naming the field (its path inside
//! arrays and objects) in its message. Before the first input, the table below is checked
//! against the registry: every registered tool has exactly one entry, and the entry's type
//! produces the tool's published schema (so it is the type the handler parses).

#![no_main]

use std::collections::BTreeSet;
use std::sync::Once;

use libfuzzer_sys::fuzz_target;
use nova_host::call::{CallError, parse_args};
use nova_host::registry;
use nova_host::{aag, alp, browse, cls, etm, lcj, lease, ok, pagetools, pks, tuc};
use serde_json::{Map, Value};

/// Parses `args` as one tool's argument type; the value is dropped.
type Parse = fn(Map<String, Value>) -> Result<(), CallError>;
/// The published schema of that type.
type Schema = fn() -> Map<String, Value>;

fn parse<T: serde::de::DeserializeOwned>(args: Map<String, Value>) -> Result<(), CallError> {
    parse_args::<T>(args).map(drop)
}

macro_rules! tools {
    ($($name:literal => $ty:ty,)*) => {
        &[$(($name, parse::<$ty> as Parse, registry::schema::<$ty> as Schema),)*]
    };
}

/// Every registered tool and its argument type (the `registry::schema::<T>` of its
/// declaration). A tool added to the host must be added here; the check below says so.
const TOOLS: &[(&str, Parse, Schema)] = tools! {
    "nova.permission_prompt" => aag::permission::PromptArgs,
    "nova.get_instructions" => aag::tools::InstructionsArgs,
    "nova.tools_bundle" => aag::tools::BundleArgs,
    "nova.version" => aag::tools::VersionArgs,
    "nova.explain" => alp::explain::ExplainArgs,
    "nova.learn_feedback" => alp::feedback::FeedbackArgs,
    "nova.learn_generate" => alp::generate::GenerateArgs,
    "nova.learn_promote" => alp::promote::PromoteArgs,
    "nova.learn_resolve_opportunity" => alp::resolve::ResolveArgs,
    "nova.learn_suggest" => alp::suggest::SuggestArgs,
    "nova.perceive" => browse::PerceiveArgs,
    "nova.read_text" => browse::ReadTextArgs,
    "nova.navigate" => browse::NavigateArgs,
    "nova.click_selector" => browse::ClickArgs,
    "nova.type_selector" => browse::TypeArgs,
    "nova.capture_screenshot" => browse::screenshot::ScreenshotArgs,
    "nova.goal_register" => cls::goals::GoalArgs,
    "nova.guarded_send_message" => cls::macros::SendMessageArgs,
    "nova.guarded_login" => cls::macros::LoginArgs,
    "nova.guarded_submit_form" => cls::macros::SubmitFormArgs,
    "nova.guarded_switch_model" => cls::macros::SwitchArgs,
    "nova.guarded_switch_sandbox" => cls::macros::SwitchArgs,
    "nova.task_search" => etm::args::SearchArgs,
    "nova.task_match" => etm::args::MatchArgs,
    "nova.task_profiles" => etm::args::ProfilesArgs,
    "nova.task_profile_get" => etm::args::ProfileGetArgs,
    "nova.task_profile_upsert" => etm::args::ProfileUpsertArgs,
    "nova.task_instance_create" => etm::args::CreateArgs,
    "nova.task_instance_get" => etm::args::GetArgs,
    "nova.task_instance_progress" => etm::args::ProgressArgs,
    "nova.task_instance_verify" => etm::args::VerifyArgs,
    "nova.task_instance_complete" => etm::args::CompleteArgs,
    "nova.task_instance_abort" => etm::args::AbortArgs,
    "nova.task_guidance_log_add" => etm::guidance::GuidanceAddArgs,
    "nova.task_guidance_logs" => etm::guidance::GuidanceLogsArgs,
    "nova.task_promotion_candidates" => etm::guidance::CandidatesArgs,
    "nova.task_promote_guidance" => etm::guidance::PromoteArgs,
    "nova.memory_stats" => lcj::stats::StatsArgs,
    "nova.memory_add_candidate" => lcj::tools::AddArgs,
    "nova.tab_claim" => lease::ClaimArgs,
    "nova.tab_release" => lease::ReleaseArgs,
    "nova.ok_observe" => ok::tools::ObserveArgs,
    "nova.ok_signal_schema" => ok::schema::SchemaArgs,
    "nova.route" => pagetools::RouteArgs,
    "nova.file_upload" => pagetools::UploadArgs,
    "nova.dismiss_blockers" => pagetools::DismissArgs,
    "nova.run_sequence" => pagetools::SequenceArgs,
    "nova.phenomenon_apply" => pks::apply::ApplyArgs,
    "nova.pks_patch" => pks::edits::PatchArgs,
    "nova.pks_upsert_hint" => pks::edits::HintArgs,
    "nova.revalidate" => pks::revalidate::RevalidateArgs,
    "nova.telemetry_report" => pks::runtime::TelemetryArgs,
    "nova.pks_platform_seed" => pks::seeding::SeedArgs,
    "nova.pks_platform_get" => pks::seeding::GetArgs,
    "nova.pks_platform_list" => pks::seeding::ListArgs,
    "nova.pks_upsert" => pks::tools::UpsertArgs,
    "nova.pks_get" => pks::tools::GetArgs,
    "nova.pks_match" => pks::tools::MatchArgs,
    "nova.pks_list" => pks::tools::ListArgs,
    "nova.pks_deprecate" => pks::tools::DeprecateArgs,
    "nova.coverage_scan" => tuc::CoverageScanArgs,
    "nova.task_instance_reconcile_coverage" => tuc::args::ReconcileArgs,
};

/// The table above is the registry: same tools, same schemas.
fn check_table() {
    let listed: BTreeSet<&str> = TOOLS.iter().map(|(name, _, _)| *name).collect();
    assert_eq!(listed.len(), TOOLS.len(), "a tool is listed twice in fuzz_targets/tool_args.rs");
    let registered: BTreeSet<&str> = registry::all().iter().map(|t| t.name).collect();
    let missing: Vec<_> = registered.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "registered tools missing from fuzz/fuzz_targets/tool_args.rs (add `name => ArgsType`): {missing:?}"
    );
    let gone: Vec<_> = listed.difference(&registered).collect();
    assert!(gone.is_empty(), "fuzz/fuzz_targets/tool_args.rs lists tools that are not registered: {gone:?}");
    for (name, _, schema) in TOOLS {
        let tool = registry::find(name).expect("registered");
        assert!(
            schema() == (tool.schema)(),
            "{name}: the type listed in fuzz/fuzz_targets/tool_args.rs is not the one its declaration publishes"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    static CHECKED: Once = Once::new();
    CHECKED.call_once(check_table);
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (name, json) = text.split_once('\n').unwrap_or(("", text));
    let Ok(args) = serde_json::from_str::<Map<String, Value>>(json) else { return };
    let chosen: Vec<_> = match TOOLS.iter().find(|(n, _, _)| *n == name.trim()) {
        Some(one) => vec![one],
        None => TOOLS.iter().collect(),
    };
    for (name, parse, _) in chosen {
        match parse(args.clone()) {
            Ok(()) => {}
            Err(CallError::InvalidParams { field, message }) => {
                // The field may be `` when the agent sent a key that is the empty string.
                let field = field.unwrap_or_else(|| panic!("{name}: refusal names no field: {message}"));
                assert!(
                    message.contains(&format!("`{field}`")),
                    "{name}: `{field}` is not in the message: {message}"
                );
            }
            Err(other) => panic!("{name}: parsing refused with {other:?}, not invalid params"),
        }
    }
});
