//! The tool registry: every tool Nova offers, declared once next to its handler as a
//! [`ToolDef`] that adds itself to [`TOOLS`].
//!
//! Everything that needs to know about tools reads this: the MCP catalog (name, description,
//! schema from the argument type), the dispatcher (the handler), the gates (bundles, whether a
//! tool touches, reads or perceives a page, setup tools), TOB (action kind, entity type, signal
//! flags), redaction (secret arguments), TUC (evidence class) and `nova.run_sequence` (which
//! tools a sequence may run). Adding a tool is one handler plus its declaration.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::call::{CallError, CallRecord, ToolReply};
use crate::hub::Hub;
use crate::observation::ActionKind;

/// A capability bundle an agent loads with `nova.tools_bundle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
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
        all().iter().filter(|t| t.bundles.contains(&self)).map(|t| t.name).collect()
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

/// Declares a tool and adds it to [`TOOLS`]:
/// `tool! { /// docs \n pub static NAME = ToolDef::new(..).bundles(..); }`.
///
/// Registration is a link section (`linkme`), the one place where the host allows
/// `unsafe_code`: it holds no unsafe operation, only the attribute that places the static.
#[macro_export]
macro_rules! tool {
    ($(#[$attr:meta])* $vis:vis static $name:ident = $def:expr;) => {
        $(#[$attr])*
        #[allow(unsafe_code)]
        #[linkme::distributed_slice($crate::registry::TOOLS)]
        $vis static $name: $crate::registry::ToolDef = $def;
    };
}

/// A [`Handler`] running `$ctx::$method` with parsed arguments, on the tool's narrow context
/// `$ctx` (built from the hub with `From<&Hub>`: only what the tool's subsystem reaches).
#[macro_export]
macro_rules! handler {
    ($ctx:ident :: $method:ident) => {
        |hub, rec, args| {
            Box::pin(async move { $ctx::from(hub).$method(rec, $crate::call::parse_args(args)?).await })
        }
    };
    ($ctx:ident :: $method:ident, $extra:expr) => {
        |hub, rec, args| {
            Box::pin(
                async move { $ctx::from(hub).$method(rec, $extra, $crate::call::parse_args(args)?).await },
            )
        }
    };
}

/// Every tool. Each declaration adds itself ([`tool!`](crate::tool)), so the registry imports no
/// handler and handlers import the registry, never the other way round. Read it through [`all`],
/// which gives the catalog order.
#[allow(unsafe_code)]
#[linkme::distributed_slice]
pub static TOOLS: [ToolDef];

/// Every tool in catalog order: by the first bundle that lists it (in [`Bundle::ALL`] order),
/// then by name.
pub fn all() -> &'static [&'static ToolDef] {
    static ORDERED: OnceLock<Vec<&'static ToolDef>> = OnceLock::new();
    ORDERED.get_or_init(|| {
        let mut tools: Vec<&'static ToolDef> = TOOLS.iter().collect();
        let rank = |t: &ToolDef| t.bundles.first().and_then(|b| Bundle::ALL.iter().position(|a| a == b));
        tools.sort_by_key(|t| (rank(t), t.name));
        tools
    })
}

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    all().iter().copied().find(|t| t.name == name)
}

/// How TOB classifies a call of `tool`: action kind, entity and the signal flags it always
/// carries (an unknown tool is `meta` on `none`).
pub fn classify(tool: &str) -> (ActionKind, &'static str, i64) {
    find(tool).map_or((ActionKind::Meta, "none", 0), |t| (t.kind, t.entity, t.flags))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn every_tool_is_declared_once_and_completely() {
        let mut names = BTreeSet::new();
        assert!(all().len() >= 39, "{} tools registered", all().len());
        for t in all() {
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
        let known: BTreeSet<&str> = all().iter().map(|t| t.name).collect();
        let mut mentioned = crate::aag::tools::mentioned_tools();
        mentioned.extend(crate::aag::pipeline::named_in_blocks());
        assert!(mentioned.len() > 10, "{mentioned:?}");
        for name in mentioned {
            assert!(known.contains(name), "`{name}` is mentioned but not registered");
        }
    }

    #[test]
    fn classification_follows_the_contract_table() {
        let (kind, _, f) = classify("nova.type_selector");
        assert_eq!(kind, ActionKind::Interact);
        assert_ne!(f & crate::observation::flags::INPUT_SUPPLIED, 0);
        assert_eq!(classify("nova.navigate").0, ActionKind::Navigate);
        assert_eq!(classify("nova.tab_claim").0, ActionKind::Meta);
    }
}
