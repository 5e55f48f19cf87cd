//! The tool registry: every tool Nova offers, declared once next to its handler as a
//! [`ToolDef`], and listed here in [`TOOLS`].
//!
//! Everything that needs to know about tools reads this: the MCP catalog (name, description,
//! schema from the argument type), the dispatcher (the handler), the gates (bundles, whether a
//! tool touches, reads or perceives a page, setup tools), TOB (action kind, entity type, signal
//! flags), redaction (secret arguments), TUC (evidence class) and `nova.run_sequence` (which
//! tools a sequence may run). Adding a tool is one handler plus its declaration, and one line in
//! [`TOOLS`].

use std::future::Future;
use std::pin::Pin;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::call::{CallError, CallRecord, ToolReply};
use crate::hub::Hub;
use crate::tob::ActionKind;

/// A capability bundle an agent loads with `nova.tools_bundle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Bundle {
    /// Browser tools, tab leases, guarded actions.
    BrowserAutomation,
    /// Task memory, URL coverage, goals.
    TaskMemory,
    /// Read-only page tools.
    PageReadDebug,
    /// Learning tools (PKS, LCJ).
    PksLearning,
    /// Setup and the person's approval.
    SystemTools,
}

impl Bundle {
    /// Every bundle.
    pub const ALL: [Self; 5] = [
        Self::BrowserAutomation,
        Self::TaskMemory,
        Self::PageReadDebug,
        Self::PksLearning,
        Self::SystemTools,
    ];

    /// Wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BrowserAutomation => "browser_automation",
            Self::TaskMemory => "task_memory",
            Self::PageReadDebug => "page_read_debug",
            Self::PksLearning => "pks_learning",
            Self::SystemTools => "system_tools",
        }
    }

    /// The tools it groups, in catalog order.
    pub fn tools(self) -> Vec<&'static str> {
        TOOLS.iter().filter(|t| t.bundles.contains(&self)).map(|t| t.name).collect()
    }
}

/// What a tool does to the page it works on (the gates and TUC read it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageUse {
    /// No page (task memory, setup, the person's approval).
    None,
    /// Works on a tab without reading or touching its document (leases).
    Tab,
    /// Reads the page; `perceives`: the read counts as perceiving it (`safety.perceive_first`).
    Reads {
        /// Whether it refreshes the agent's perception of the tab.
        perceives: bool,
    },
    /// Opens or changes the document (navigation, routing).
    Navigates,
    /// Touches the page (clicks, typing, uploads, closing blockers).
    Acts {
        /// Whether it needs fresh perception of the tab first (`safety.perceive_first`,
        /// `safety.identity_overlay`); closing a consent banner right after loading does not.
        needs_perception: bool,
    },
}

/// The TUC evidence class a successful call gives the URL it worked on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// The page was opened.
    Visit,
    /// A screenshot (counts as a visit when `taskUrlCoverageScreenshotCounts`).
    Screenshot,
    /// Text read from the page.
    TextLight,
    /// A registered coverage scan.
    RegisteredScan,
}

/// A handler: runs one call whose arguments the gates let through.
pub type Handler = for<'a> fn(
    &'a Hub,
    &'a mut CallRecord,
    Map<String, Value>,
) -> Pin<Box<dyn Future<Output = Result<ToolReply, CallError>> + Send + 'a>>;

/// One tool, declared once next to its handler.
#[derive(Clone, Copy)]
pub struct ToolDef {
    /// MCP name (`nova.*`).
    pub name: &'static str,
    /// What an agent reads in `tools/list`.
    pub description: &'static str,
    /// The input schema, made from the argument type.
    pub schema: fn() -> Map<String, Value>,
    /// The bundles that list it; the first is the one suggested for it.
    pub bundles: &'static [Bundle],
    /// TOB action kind (and with it the domain policy's action group and the risk class).
    pub kind: ActionKind,
    /// TOB entity type: `webpage`, `dom_node` or `none`.
    pub entity: &'static str,
    /// TOB signal flags set on every call.
    pub flags: i64,
    /// What it does to the page.
    pub page: PageUse,
    /// Arguments holding secrets: never stored (only their length is).
    pub secrets: &'static [&'static str],
    /// The TUC evidence class of a successful call.
    pub evidence: Option<Evidence>,
    /// Changes nothing (`readOnlyHint`): the risk class is `safe` when set, `normal` otherwise.
    pub read_only: bool,
    /// Setup tools pass every gate.
    pub setup: bool,
    /// Whether `nova.run_sequence` may run it as a step.
    pub in_sequence: bool,
    /// The handler.
    pub run: Handler,
}

impl ToolDef {
    /// A tool with no page, no flags and no bundle yet; the `const fn` setters below fill in
    /// the rest.
    pub const fn new(
        name: &'static str,
        description: &'static str,
        schema: fn() -> Map<String, Value>,
        run: Handler,
    ) -> Self {
        Self {
            name,
            description,
            schema,
            bundles: &[],
            kind: ActionKind::Meta,
            entity: "none",
            flags: 0,
            page: PageUse::None,
            secrets: &[],
            evidence: None,
            read_only: false,
            setup: false,
            in_sequence: false,
            run,
        }
    }

    /// The bundles that list it.
    pub const fn bundles(mut self, bundles: &'static [Bundle]) -> Self {
        self.bundles = bundles;
        self
    }

    /// TOB action kind, entity type and signal flags.
    pub const fn tob(mut self, kind: ActionKind, entity: &'static str, flags: i64) -> Self {
        self.kind = kind;
        self.entity = entity;
        self.flags = flags;
        self
    }

    /// What it does to the page.
    pub const fn page(mut self, page: PageUse) -> Self {
        self.page = page;
        self
    }

    /// Secret arguments.
    pub const fn secrets(mut self, secrets: &'static [&'static str]) -> Self {
        self.secrets = secrets;
        self
    }

    /// TUC evidence class.
    pub const fn evidence(mut self, evidence: Evidence) -> Self {
        self.evidence = Some(evidence);
        self
    }

    /// Changes nothing.
    pub const fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// A setup tool.
    pub const fn setup(mut self) -> Self {
        self.setup = true;
        self
    }

    /// May run as a step of `nova.run_sequence`.
    pub const fn in_sequence(mut self) -> Self {
        self.in_sequence = true;
        self
    }

    /// The domain policy's action group.
    pub fn action_group(&self) -> Option<&'static str> {
        match self.kind {
            ActionKind::Read => Some("read"),
            ActionKind::Navigate => Some("navigate"),
            ActionKind::Interact => Some("interact"),
            _ => None,
        }
    }

    /// Whether it acts on a tab (`targetId`).
    pub fn on_tab(&self) -> bool {
        self.page != PageUse::None
    }
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("name", &self.name).finish_non_exhaustive()
    }
}

/// The input schema of argument type `T` (`deny_unknown_fields` shows as
/// `additionalProperties: false`, bounds as `minimum` / `maximum`).
pub fn schema<T: JsonSchema>() -> Map<String, Value> {
    let mut object = schemars::schema_for!(T).to_value().as_object().cloned().unwrap_or_default();
    object.remove("$schema");
    object.remove("title");
    object
}

/// A [`Handler`] calling `Hub::$method` with parsed arguments.
#[macro_export]
macro_rules! handler {
    ($method:ident) => {
        |hub, rec, args| Box::pin(async move { hub.$method(rec, $crate::call::parse_args(args)?).await })
    };
    ($method:ident, $extra:expr) => {
        |hub, rec, args| {
            Box::pin(async move { hub.$method(rec, $extra, $crate::call::parse_args(args)?).await })
        }
    };
}

/// Every tool, in catalog order.
pub const TOOLS: &[&ToolDef] = &[
    &crate::browse::PERCEIVE,
    &crate::browse::READ_TEXT,
    &crate::browse::NAVIGATE,
    &crate::browse::CLICK,
    &crate::browse::TYPE,
    &crate::browse::SCREENSHOT,
    &crate::lease::TAB_CLAIM,
    &crate::lease::TAB_RELEASE,
    &crate::cls::macros::SEND_MESSAGE,
    &crate::cls::macros::LOGIN,
    &crate::cls::macros::SUBMIT_FORM,
    &crate::cls::macros::SWITCH_MODEL,
    &crate::cls::macros::SWITCH_SANDBOX,
    &crate::aag::tools::GET_INSTRUCTIONS,
    &crate::aag::tools::TOOLS_BUNDLE,
    &crate::pagetools::ROUTE,
    &crate::pagetools::FILE_UPLOAD,
    &crate::pagetools::DISMISS_BLOCKERS,
    &crate::pagetools::RUN_SEQUENCE,
    &crate::aag::prompt::PERMISSION_PROMPT,
    &crate::etm::tools::TASK_SEARCH,
    &crate::etm::tools::TASK_MATCH,
    &crate::etm::tools::TASK_PROFILES,
    &crate::etm::tools::TASK_PROFILE_GET,
    &crate::etm::tools::TASK_PROFILE_UPSERT,
    &crate::etm::tools::TASK_INSTANCE_CREATE,
    &crate::etm::tools::TASK_INSTANCE_GET,
    &crate::etm::tools::TASK_INSTANCE_PROGRESS,
    &crate::etm::tools::TASK_INSTANCE_VERIFY,
    &crate::etm::tools::TASK_INSTANCE_COMPLETE,
    &crate::etm::tools::TASK_INSTANCE_ABORT,
    &crate::etm::tools::TASK_GUIDANCE_LOG_ADD,
    &crate::etm::tools::TASK_GUIDANCE_LOGS,
    &crate::etm::tools::TASK_PROMOTION_CANDIDATES,
    &crate::etm::tools::TASK_PROMOTE_GUIDANCE,
    &crate::tuc::COVERAGE_SCAN,
    &crate::tuc::RECONCILE_COVERAGE,
    &crate::cls::GOAL_REGISTER,
    &crate::aag::tools::VERSION,
];

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().copied().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn every_tool_is_declared_once_and_completely() {
        let mut names = BTreeSet::new();
        for t in TOOLS {
            assert!(names.insert(t.name), "{} is registered twice", t.name);
            assert!(t.name.starts_with("nova.") && t.name.len() > 5, "{}", t.name);
            assert!(
                t.description.split_whitespace().count() >= 3 && t.description.ends_with('.'),
                "{}: describe it",
                t.name
            );
            assert!(!t.bundles.is_empty(), "{} is in no bundle", t.name);
            let schema = (t.schema)();
            assert_eq!(schema.get("type"), Some(&Value::from("object")), "{}", t.name);
            assert_eq!(
                schema.get("additionalProperties"),
                Some(&Value::Bool(false)),
                "{}: unknown fields must be refused",
                t.name
            );
            let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
            for secret in t.secrets {
                assert!(props.contains_key(*secret), "{}: secret `{secret}` is no argument", t.name);
            }
            if t.on_tab() {
                assert!(props.contains_key("targetId"), "{} acts on a tab but takes no targetId", t.name);
            }
            if matches!(t.page, PageUse::Acts { .. }) {
                assert_eq!(t.kind, ActionKind::Interact, "{} touches the page", t.name);
            }
        }
    }

    #[test]
    fn every_tool_name_the_host_mentions_is_registered() {
        let known: BTreeSet<&str> = TOOLS.iter().map(|t| t.name).collect();
        let mut mentioned = crate::aag::tools::mentioned_tools();
        mentioned.extend(crate::aag::pipeline::named_in_blocks());
        assert!(mentioned.len() > 10, "{mentioned:?}");
        for name in mentioned {
            assert!(known.contains(name), "`{name}` is mentioned but not registered");
        }
    }
}
