//! The task-memory tools (ETM) as the tool registry knows them; their handlers are in
//! [`super`] and [`super::guidance`].

/// `nova.task_search` in the tool registry.
pub const TASK_SEARCH: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_search",
    "Find stored task profiles by free text (any language); candidates come with scores.",
    crate::registry::schema::<super::args::SearchArgs>,
    crate::handler!(task_search),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Meta, "none", 0)
.read_only();

/// `nova.task_match` in the tool registry.
pub const TASK_MATCH: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_match",
    "Match a task description (and domain, platform, target URL) to a stored profile, with the                  score breakdown and the profile's taskAwareness.",
    crate::registry::schema::<super::args::MatchArgs>,
    crate::handler!(task_match),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Meta, "none", 0)
.read_only();

/// `nova.task_profiles` in the tool registry.
pub const TASK_PROFILES: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_profiles",
    "List task profiles.",
    crate::registry::schema::<super::args::ProfilesArgs>,
    crate::handler!(task_profiles),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Meta, "none", 0)
.read_only();

/// `nova.task_profile_get` in the tool registry.
pub const TASK_PROFILE_GET: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_profile_get",
    "Read one task profile.",
    crate::registry::schema::<super::args::ProfileGetArgs>,
    crate::handler!(task_profile_get),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Meta, "none", 0)
.read_only();

/// `nova.task_profile_upsert` in the tool registry.
pub const TASK_PROFILE_UPSERT: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_profile_upsert",
    "Create or update a reusable task profile (compare-and-set on expectedContentRev).",
    crate::registry::schema::<super::args::ProfileUpsertArgs>,
    crate::handler!(task_profile_upsert),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Write, "none", 0);

/// `nova.task_instance_create` in the tool registry.
pub const TASK_INSTANCE_CREATE: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_instance_create",
    "Start a task run from a profile or an ad-hoc context. Calls on the bound tab become its                  evidence; unitSource seeds URL units (explicit, site_urls, crawler).",
    crate::registry::schema::<super::args::CreateArgs>,
    crate::handler!(task_instance_create),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Write, "none", 0);

/// `nova.task_instance_get` in the tool registry.
pub const TASK_INSTANCE_GET: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_instance_get",
    "Read a task run: progress, evidenceSummary (observed support for checked units), urlCoverage                  and taskAwareness.completionAllowed.",
    crate::registry::schema::<super::args::GetArgs>,
    crate::handler!(task_instance_get),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Meta, "none", 0)
.read_only();

/// `nova.task_instance_progress` in the tool registry.
pub const TASK_INSTANCE_PROGRESS: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_instance_progress",
    "Report units discovered, checked, excluded, blocked or failed, findings and mandatory checks                  (compare-and-set on expectedInstanceRev, idempotent on clientEventId).",
    crate::registry::schema::<super::args::ProgressArgs>,
    crate::handler!(task_instance_progress),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Write, "none", 0);

/// `nova.task_instance_verify` in the tool registry.
pub const TASK_INSTANCE_VERIFY: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_instance_verify",
    "The verification steps of a task run, whose results go to task_instance_complete as evidenceReport.",
    crate::registry::schema::<super::args::VerifyArgs>,
    crate::handler!(task_instance_verify),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Meta, "none", 0)
.read_only();

/// `nova.task_instance_complete` in the tool registry.
pub const TASK_INSTANCE_COMPLETE: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_instance_complete",
    "Ask to complete a task run. Nova judges it against observed evidence and the completion                  policy; a refusal names the reason (evidence_gap, units_remaining, ...) and what is missing.",
    crate::registry::schema::<super::args::CompleteArgs>,
    crate::handler!(task_instance_complete),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Write, "none", 0);

/// `nova.task_instance_abort` in the tool registry.
pub const TASK_INSTANCE_ABORT: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_instance_abort",
    "Abort or fail a task run.",
    crate::registry::schema::<super::args::AbortArgs>,
    crate::handler!(task_instance_abort),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Write, "none", 0);

/// `nova.task_guidance_log_add` in the tool registry.
pub const TASK_GUIDANCE_LOG_ADD: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_guidance_log_add",
    "Log a lesson for a task profile; recurring lessons become promotion candidates.",
    crate::registry::schema::<super::guidance::GuidanceAddArgs>,
    crate::handler!(task_guidance_log_add),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Write, "none", 0);

/// `nova.task_guidance_logs` in the tool registry.
pub const TASK_GUIDANCE_LOGS: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_guidance_logs",
    "List guidance logs.",
    crate::registry::schema::<super::guidance::GuidanceLogsArgs>,
    crate::handler!(task_guidance_logs),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Meta, "none", 0)
.read_only();

/// `nova.task_promotion_candidates` in the tool registry.
pub const TASK_PROMOTION_CANDIDATES: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_promotion_candidates",
    "Guidance logged often enough to promote into the profile.",
    crate::registry::schema::<super::guidance::CandidatesArgs>,
    crate::handler!(task_promotion_candidates),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Meta, "none", 0)
.read_only();

/// `nova.task_promote_guidance` in the tool registry.
pub const TASK_PROMOTE_GUIDANCE: crate::registry::ToolDef = crate::registry::ToolDef::new(
    "nova.task_promote_guidance",
    "Promote a guidance log into the profile's stable guidance.",
    crate::registry::schema::<super::guidance::PromoteArgs>,
    crate::handler!(task_promote_guidance),
)
.bundles(&[crate::registry::Bundle::TaskMemory])
.tob(crate::tob::ActionKind::Write, "none", 0);
