//! Arguments of the ETM tools (docs/tasks.md, "Arguments"); TUC's are in `crate::tuc::args`. Every
//! type rejects unknown fields; bounds are checked by the tools and named in the error.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::completion::CompletionCondition;
use crate::tuc::args::UnitSource;

fn yes() -> bool {
    true
}

/// `currentScope` (shared by task_match and task_instance_create). Extra keys are allowed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentScope {
    /// Route inside the site.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// Page type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_type: Option<String>,
    /// Locale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// Language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Legacy: the target URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_url: Option<String>,
    /// anonymous | logged_in | unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_state: Option<AuthState>,
    /// Anything else (languages, sections, tags, section, unitKind, entities, variables, ...).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// `currentScope.authState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthState {
    /// Not signed in.
    Anonymous,
    /// Signed in.
    LoggedIn,
    /// Unknown.
    Unknown,
}

crate::tool_args! {
    /// `nova.task_search`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct SearchArgs [agent] {
        /// Free text, any language.
        pub query: String,
        /// Filter or boost.
        #[serde(default)]
        pub domain: Option<String>,
        /// Filter or boost.
        #[serde(default)]
        pub platform: Option<String>,
        /// Filter.
        #[serde(default)]
        pub task_type: Option<String>,
        /// 1-50, default 10.
        #[serde(default = "ten")]
        #[schemars(range(min = 1, max = 50))]
        pub limit: u32,
    }
}

fn ten() -> u32 {
    10
}

crate::tool_args! {
    /// `nova.task_match`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct MatchArgs [agent] {
        /// What the agent is about to do.
        pub task_description: String,
        /// Narrows the search.
        #[serde(default)]
        pub task_type: Option<String>,
        /// Domain.
        #[serde(default)]
        pub domain: Option<String>,
        /// Platform; when omitted its weight is redistributed.
        #[serde(default)]
        pub platform: Option<String>,
        /// Target URL (preferred over currentScope.targetUrl).
        #[serde(default)]
        pub target_url: Option<String>,
        /// Scope.
        #[serde(default)]
        pub current_scope: Option<CurrentScope>,
    }
}

crate::tool_args! {
    /// `nova.task_profiles`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ProfilesArgs [agent] {
        /// Exact match.
        #[serde(default)]
        pub task_type: Option<String>,
        /// Exact match.
        #[serde(default)]
        pub domain: Option<String>,
        /// Exact match.
        #[serde(default)]
        pub platform: Option<String>,
        /// Include archived profiles.
        #[serde(default)]
        pub include_archived: bool,
        /// 1-500, default 100.
        #[serde(default = "hundred")]
        #[schemars(range(min = 1, max = 500))]
        pub limit: u32,
    }
}

fn hundred() -> u32 {
    100
}

crate::tool_args! {
    /// `nova.task_profile_get`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ProfileGetArgs [agent] {
        /// The profile.
        pub profile_id: String,
    }
}

/// A mandatory check of a profile or ad-hoc context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MandatoryCheck {
    /// Stable id.
    pub check_id: String,
    /// What must be checked.
    pub description: String,
    /// Kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Required (default true).
    #[serde(default = "yes")]
    pub required: bool,
}

/// One step of a verification contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VerificationStep {
    /// Stable id.
    pub step_id: String,
    /// The tool that checks it.
    pub tool: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Value,
    /// What it checks.
    #[serde(default)]
    pub description: String,
    /// fast | deep | restricted.
    #[serde(default = "fast")]
    pub gate: String,
    /// Whether a failure blocks completion (fast gate only).
    #[serde(default = "yes")]
    pub required: bool,
    /// empty_result | has_results | field_match | field_equals.
    pub assertion_type: String,
    /// Expected value for field assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_value: Option<Value>,
    /// What the step looks at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ref: Option<String>,
}

fn fast() -> String {
    "fast".into()
}

/// A verification contract.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VerificationContract {
    /// Steps.
    pub steps: Vec<VerificationStep>,
}

/// The task definition shared by profiles and ad-hoc contexts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AdHocContext {
    /// Normalised type (audit, reconciliation, language_quality_review, ...).
    pub task_type: String,
    /// Name.
    pub display_name: String,
    /// Goal.
    pub goal: String,
    /// When the task is done.
    pub completion_condition: CompletionCondition,
    /// Website domain or domain category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// Guidance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stable_guidance: Vec<Value>,
    /// Mandatory checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mandatory_checks: Vec<MandatoryCheck>,
    /// Known exceptions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_exceptions: Vec<Value>,
    /// Verification contract (steps whose results come back as evidenceReport).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_contract: Option<VerificationContract>,
}

crate::tool_args! {
    /// `nova.task_profile_upsert`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ProfileUpsertArgs [agent] {
        /// Omit to create.
        #[serde(default)]
        pub profile_id: Option<String>,
        /// Optimistic concurrency.
        #[serde(default)]
        pub expected_content_rev: Option<i64>,
        /// Type.
        pub task_type: String,
        /// Name.
        pub display_name: String,
        /// Goal.
        pub goal: String,
        /// Domain.
        #[serde(default)]
        pub domain: Option<String>,
        /// Platform.
        #[serde(default)]
        pub platform: Option<String>,
        /// Guidance.
        #[serde(default)]
        pub stable_guidance: Option<Vec<Value>>,
        /// Mandatory checks.
        #[serde(default)]
        pub mandatory_checks: Option<Vec<MandatoryCheck>>,
        /// Completion condition.
        #[serde(default)]
        pub completion_condition: Option<CompletionCondition>,
        /// Known exceptions.
        #[serde(default)]
        pub known_exceptions: Option<Vec<Value>>,
        /// Verification contract.
        #[serde(default)]
        pub verification_contract: Option<VerificationContract>,
        /// 0-1, default 0.5.
        #[serde(default)]
        pub confidence: Option<f64>,
        /// Seeds the profile from an instance's effective context.
        #[serde(default)]
        pub source_instance_id: Option<String>,
    }
}

/// `declaredTaskKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// Content review.
    ContentAudit,
    /// Compliance review.
    Compliance,
    /// UI smoke test.
    UiSmoke,
    /// Exploration.
    Exploratory,
    /// Accessibility review.
    Accessibility,
    /// Legal review.
    Legal,
    /// Security review.
    SecurityReview,
    /// Route inventory.
    RouteInventory,
}

impl TaskKind {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ContentAudit => "content_audit",
            Self::Compliance => "compliance",
            Self::UiSmoke => "ui_smoke",
            Self::Exploratory => "exploratory",
            Self::Accessibility => "accessibility",
            Self::Legal => "legal",
            Self::SecurityReview => "security_review",
            Self::RouteInventory => "route_inventory",
        }
    }

    /// Strictness of the sampling policy it implies (All 4 > Min3 2 > Min2 1).
    pub fn strictness(self) -> u8 {
        match self {
            Self::ContentAudit
            | Self::Compliance
            | Self::Legal
            | Self::SecurityReview
            | Self::Accessibility => 4,
            Self::RouteInventory | Self::Exploratory => 2,
            Self::UiSmoke => 1,
        }
    }
}

crate::tool_args! {
    /// `nova.task_instance_create`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct CreateArgs [agent] {
        /// A stored profile (or adHocContext).
        #[serde(default)]
        pub profile_id: Option<String>,
        /// An ad-hoc task (or profileId).
        #[serde(default)]
        pub ad_hoc_context: Option<AdHocContext>,
        /// Canonical top-level target.
        #[serde(default)]
        pub target_url: Option<String>,
        /// Scope.
        #[serde(default)]
        pub current_scope: Option<CurrentScope>,
        /// Deep-merged overrides (currentScopePatch / scope, stableGuidance, knownExceptions, tags,
        /// sections, languages, variables).
        #[serde(default)]
        pub overrides: Option<serde_json::Map<String, Value>>,
        /// Declared kind (heuristics may tighten it, never loosen it).
        #[serde(default)]
        pub declared_task_kind: Option<TaskKind>,
        /// URL units to seed (TUC).
        #[serde(default)]
        pub unit_source: Option<UnitSource>,
        /// The tab whose calls become this instance's evidence (default: the agent's claimed tab,
        /// else the active tab).
        #[serde(default)]
        pub target_id: Option<String>,
    }
}

crate::tool_args! {
    /// `nova.task_instance_get`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct GetArgs [agent] {
        /// The instance.
        pub instance_id: String,
        /// Include a preview of discovered units (legacy alias includePendingUnits).
        #[serde(default, alias = "includePendingUnits")]
        pub include_discovered_units_preview: bool,
        /// 1-200, default 20 (legacy alias pendingUnitsLimit).
        #[serde(default = "twenty", alias = "pendingUnitsLimit")]
        #[schemars(range(min = 1, max = 200))]
        pub discovered_units_preview_limit: u32,
        /// Include recent events.
        #[serde(default)]
        pub include_recent_events: bool,
        /// 1-100, default 10.
        #[serde(default = "ten")]
        #[schemars(range(min = 1, max = 100))]
        pub recent_event_limit: u32,
    }
}

fn twenty() -> u32 {
    20
}

/// A unit reported by progress.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DiscoveredUnit {
    /// Key (a URL makes a URL unit).
    pub unit_key: String,
    /// Kind (default: the condition's unitKind).
    #[serde(default)]
    pub unit_kind: Option<String>,
}

/// New unit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnitStatus {
    /// Checked.
    Checked,
    /// Excluded (with a reason).
    Excluded,
    /// Blocked.
    Blocked,
    /// Failed.
    Failed,
}

impl UnitStatus {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Checked => "checked",
            Self::Excluded => "excluded",
            Self::Blocked => "blocked",
            Self::Failed => "failed",
        }
    }
}

/// A unit update.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UnitUpdate {
    /// The unit (its key, or the URL of a URL unit; `unitId` is a legacy alias).
    #[serde(alias = "unitId")]
    pub unit_key: String,
    /// checked | excluded | blocked | failed.
    pub status: UnitStatus,
    /// Why (required for excluded).
    #[serde(default)]
    pub reason: Option<String>,
    /// Evidence class the agent claims.
    #[serde(default)]
    pub evidence_class: Option<String>,
}

/// A finding.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Finding {
    /// Distinct key.
    pub finding_key: String,
    /// Detail.
    #[serde(default)]
    pub detail: Option<String>,
}

/// Mandatory-check state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckState {
    /// Not done.
    Pending,
    /// Done.
    Satisfied,
    /// Failed.
    Failed,
    /// Waived.
    Waived,
    /// Does not apply.
    NotApplicable,
}

/// A mandatory-check update.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckUpdate {
    /// The check.
    pub check_id: String,
    /// New state.
    pub state: CheckState,
    /// Evidence.
    #[serde(default)]
    pub evidence: Option<String>,
}

/// `resumeStateDelta`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResumeDelta {
    /// Cursor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Last processed URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_processed_url: Option<String>,
    /// Last action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_action: Option<String>,
    /// Checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
}

/// Discovery state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscoveryState {
    /// Initial.
    Unknown,
    /// Some units known.
    Partial,
    /// Complete; cannot be undone.
    Frozen,
}

impl DiscoveryState {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Partial => "partial",
            Self::Frozen => "frozen",
        }
    }
}

crate::tool_args! {
    /// `nova.task_instance_progress`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ProgressArgs [agent] {
        /// The instance.
        pub instance_id: String,
        /// Compare-and-set revision.
        pub expected_instance_rev: i64,
        /// Idempotency key.
        pub client_event_id: String,
        /// New units (alias `newUnits`).
        #[serde(default, alias = "newUnits")]
        pub discovered_units: Vec<DiscoveredUnit>,
        /// Unit status changes.
        #[serde(default)]
        pub unit_updates: Vec<UnitUpdate>,
        /// Findings.
        #[serde(default)]
        pub findings: Vec<Finding>,
        /// Mandatory-check updates.
        #[serde(default)]
        pub mandatory_check_updates: Vec<CheckUpdate>,
        /// Resume state to merge.
        #[serde(default)]
        pub resume_state_delta: Option<ResumeDelta>,
        /// unknown | partial | frozen (alias `discoveryState`).
        #[serde(default, alias = "discoveryState")]
        pub set_discovery_state: Option<DiscoveryState>,
        /// Note.
        #[serde(default)]
        pub note: Option<String>,
    }
}

crate::tool_args! {
    /// `nova.task_instance_verify`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct VerifyArgs [agent] {
        /// The instance.
        pub instance_id: String,
    }
}

/// State of a verification step as reported by the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepState {
    /// Passed.
    Passed,
    /// Failed.
    Failed,
    /// Could not tell.
    Inconclusive,
    /// Not run.
    Skipped,
}

/// An `evidenceReport` entry.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EvidenceEntry {
    /// The step.
    pub step_id: String,
    /// passed | failed | inconclusive | skipped.
    pub state: StepState,
    /// What the tool returned.
    #[serde(default)]
    pub tool_result: Option<Value>,
    /// Detail.
    #[serde(default)]
    pub detail: Option<String>,
}

crate::tool_args! {
    /// `nova.task_instance_complete`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct CompleteArgs [agent] {
        /// The instance.
        pub instance_id: String,
        /// Compare-and-set revision.
        pub expected_instance_rev: i64,
        /// Idempotency key.
        pub client_event_id: String,
        /// Completion note (legacy alias completionNote). A claim, not evidence.
        #[serde(default, alias = "completionNote")]
        pub note: Option<String>,
        /// Verification evidence.
        #[serde(default)]
        pub evidence_report: Vec<EvidenceEntry>,
        /// A Learn Mode task on the run's tab below its coverage floors completes only with this
        /// set and a reason (docs/learning.md, "Learn Mode").
        #[serde(default)]
        pub coverage_exhausted: bool,
        /// Why coverage is exhausted (1 to 500 characters; required with `coverageExhausted`).
        #[serde(default)]
        pub coverage_exhausted_reason: Option<String>,
    }
}

/// `abort.outcome`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AbortOutcome {
    /// Aborted.
    #[default]
    Aborted,
    /// Failed.
    Failed,
}

crate::tool_args! {
    /// `nova.task_instance_abort`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct AbortArgs [agent] {
        /// The instance.
        pub instance_id: String,
        /// Compare-and-set revision.
        pub expected_instance_rev: i64,
        /// Idempotency key.
        pub client_event_id: String,
        /// Why (stored in the event log).
        pub reason: String,
        /// aborted (default) | failed.
        #[serde(default)]
        pub outcome: AbortOutcome,
    }
}
