//! The task-memory tools (ETM) as the tool registry knows them; their handlers are in
//! [`super`] and [`super::guidance`].

use super::context::Tasks;
use super::guidance::Guidance;
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, ToolDef};

crate::tool! {
    /// `nova.task_search` in the tool registry.
    pub static TASK_SEARCH = ToolDef::new(
        "nova.task_search",
        "Find stored task profiles by free text (any language); candidates come with scores.",
        registry::schema::<super::args::SearchArgs>,
        crate::handler!(Tasks::task_search),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Meta, "none", 0)
    .read_only();
}

crate::tool! {
    /// `nova.task_match` in the tool registry.
    pub static TASK_MATCH = ToolDef::new(
        "nova.task_match",
        "Match a task description (and domain, platform, target URL) to a stored profile, with the                  score breakdown and the profile's taskAwareness.",
        registry::schema::<super::args::MatchArgs>,
        crate::handler!(Tasks::task_match),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Meta, "none", 0)
    .read_only();
}

crate::tool! {
    /// `nova.task_profiles` in the tool registry.
    pub static TASK_PROFILES = ToolDef::new(
        "nova.task_profiles",
        "List task profiles.",
        registry::schema::<super::args::ProfilesArgs>,
        crate::handler!(Tasks::task_profiles),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Meta, "none", 0)
    .read_only();
}

crate::tool! {
    /// `nova.task_profile_get` in the tool registry.
    pub static TASK_PROFILE_GET = ToolDef::new(
        "nova.task_profile_get",
        "Read one task profile.",
        registry::schema::<super::args::ProfileGetArgs>,
        crate::handler!(Tasks::task_profile_get),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Meta, "none", 0)
    .read_only();
}

crate::tool! {
    /// `nova.task_profile_upsert` in the tool registry.
    pub static TASK_PROFILE_UPSERT = ToolDef::new(
        "nova.task_profile_upsert",
        "Create or update a reusable task profile (compare-and-set on expectedContentRev).",
        registry::schema::<super::args::ProfileUpsertArgs>,
        crate::handler!(Tasks::task_profile_upsert),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Write, "none", 0);
}

crate::tool! {
    /// `nova.task_instance_create` in the tool registry.
    pub static TASK_INSTANCE_CREATE = ToolDef::new(
        "nova.task_instance_create",
        "Start a task run from a profile or an ad-hoc context. Calls on the bound tab become its                  evidence; unitSource seeds URL units (explicit, site_urls, crawler).",
        registry::schema::<super::args::CreateArgs>,
        crate::handler!(Tasks::task_instance_create),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Write, "none", 0);
}

crate::tool! {
    /// `nova.task_instance_get` in the tool registry.
    pub static TASK_INSTANCE_GET = ToolDef::new(
        "nova.task_instance_get",
        "Read a task run: progress, evidenceSummary (observed support for checked units), urlCoverage                  and taskAwareness.completionAllowed.",
        registry::schema::<super::args::GetArgs>,
        crate::handler!(Tasks::task_instance_get),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Meta, "none", 0)
    .read_only();
}

crate::tool! {
    /// `nova.task_instance_progress` in the tool registry.
    pub static TASK_INSTANCE_PROGRESS = ToolDef::new(
        "nova.task_instance_progress",
        "Report units discovered, checked, excluded, blocked or failed, findings and mandatory checks                  (compare-and-set on expectedInstanceRev, idempotent on clientEventId).",
        registry::schema::<super::args::ProgressArgs>,
        crate::handler!(Tasks::task_instance_progress),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Write, "none", 0);
}

crate::tool! {
    /// `nova.task_instance_verify` in the tool registry.
    pub static TASK_INSTANCE_VERIFY = ToolDef::new(
        "nova.task_instance_verify",
        "The verification steps of a task run, whose results go to task_instance_complete as evidenceReport.",
        registry::schema::<super::args::VerifyArgs>,
        crate::handler!(Tasks::task_instance_verify),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Meta, "none", 0)
    .read_only();
}

crate::tool! {
    /// `nova.task_instance_complete` in the tool registry.
    pub static TASK_INSTANCE_COMPLETE = ToolDef::new(
        "nova.task_instance_complete",
        "Ask to complete a task run. Nova judges it against observed evidence and the completion                  policy; a refusal names the reason (evidence_gap, units_remaining, ...) and what is missing.",
        registry::schema::<super::args::CompleteArgs>,
        crate::handler!(Tasks::task_instance_complete),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Write, "none", 0);
}

crate::tool! {
    /// `nova.task_instance_abort` in the tool registry.
    pub static TASK_INSTANCE_ABORT = ToolDef::new(
        "nova.task_instance_abort",
        "Abort or fail a task run.",
        registry::schema::<super::args::AbortArgs>,
        crate::handler!(Tasks::task_instance_abort),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Write, "none", 0);
}

crate::tool! {
    /// `nova.task_guidance_log_add` in the tool registry.
    pub static TASK_GUIDANCE_LOG_ADD = ToolDef::new(
        "nova.task_guidance_log_add",
        "Log a lesson for a task profile; recurring lessons become promotion candidates.",
        registry::schema::<super::guidance::GuidanceAddArgs>,
        crate::handler!(Guidance::task_guidance_log_add),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Write, "none", 0);
}

crate::tool! {
    /// `nova.task_guidance_logs` in the tool registry.
    pub static TASK_GUIDANCE_LOGS = ToolDef::new(
        "nova.task_guidance_logs",
        "List guidance logs.",
        registry::schema::<super::guidance::GuidanceLogsArgs>,
        crate::handler!(Guidance::task_guidance_logs),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Meta, "none", 0)
    .read_only();
}

crate::tool! {
    /// `nova.task_promotion_candidates` in the tool registry.
    pub static TASK_PROMOTION_CANDIDATES = ToolDef::new(
        "nova.task_promotion_candidates",
        "Guidance logged often enough to promote into the profile.",
        registry::schema::<super::guidance::CandidatesArgs>,
        crate::handler!(Guidance::task_promotion_candidates),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Meta, "none", 0)
    .read_only();
}

crate::tool! {
    /// `nova.task_promote_guidance` in the tool registry.
    pub static TASK_PROMOTE_GUIDANCE = ToolDef::new(
        "nova.task_promote_guidance",
        "Promote a guidance log into the profile's stable guidance.",
        registry::schema::<super::guidance::PromoteArgs>,
        crate::handler!(Guidance::task_promote_guidance),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Write, "none", 0);
}
