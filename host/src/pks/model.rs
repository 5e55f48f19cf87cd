//! What a phenomenon is made of (docs/pks.md, "Phenomena"): how it is recognised (a
//! fingerprint of weighted signals), how it is resolved (a playbook of actions and verify steps),
//! and where it applies (routes, device, locale, sign-in state). These are the shapes agents send
//! to `nova.pks_upsert` and get back from the reads.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most fallback selectors of one action.
pub const MAX_FALLBACKS: usize = 5;
/// Most signals in a fingerprint.
pub const MAX_SIGNALS: usize = 64;
/// Most actions, and most verify steps, in a playbook.
pub const MAX_STEPS: usize = 20;

/// The kind of recurring situation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A consent banner or dialog (a consent management platform).
    ConsentCmp,
    /// A modal dialog in the way.
    Modal,
    /// A paywall.
    Paywall,
    /// A wall asking to sign in.
    LoginWall,
    /// Content that moves as the page settles.
    LayoutShift,
    /// A native `alert` / `confirm` / `beforeunload` dialog.
    NativeDialog,
    /// A popover left open.
    PopoverOpen,
    /// Anything else.
    Custom,
}

impl Kind {
    /// Wire and stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ConsentCmp => "consent_cmp",
            Self::Modal => "modal",
            Self::Paywall => "paywall",
            Self::LoginWall => "login_wall",
            Self::LayoutShift => "layout_shift",
            Self::NativeDialog => "native_dialog",
            Self::PopoverOpen => "popover_open",
            Self::Custom => "custom",
        }
    }
}

/// The kind of a fingerprint signal, with its weight in matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    /// An element matching a selector is on the page (1.00).
    Dom,
    /// A vendor's script, global or frame is present (0.85).
    Vendor,
    /// Visible text (0.70).
    Text,
    /// Something an interaction revealed (0.60).
    Interaction,
    /// A layout condition: scroll locked, viewport covered (0.55).
    Layout,
}

impl SignalKind {
    /// Its weight in a match.
    pub fn weight(self) -> f64 {
        match self {
            Self::Dom => 1.0,
            Self::Vendor => 0.85,
            Self::Text => 0.70,
            Self::Interaction => 0.60,
            Self::Layout => 0.55,
        }
    }
}

/// One signal of a fingerprint or an observation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Signal {
    /// What kind of evidence.
    pub kind: SignalKind,
    /// What must match: a selector (`dom`), a vendor name (`vendor`), text (`text`), ...
    #[serde(rename = "match")]
    pub matches: String,
    /// The locale the text is in (`text` signals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

/// How a phenomenon is recognised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Fingerprint {
    /// The signals, 1 to 64.
    pub signals: Vec<Signal>,
    /// The weighted share of signals that must be seen for a match, 0 to 1 (default 0.6).
    #[serde(default = "min_confidence")]
    pub min_confidence: f64,
}

fn min_confidence() -> f64 {
    0.6
}

/// What a playbook aims for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Close it.
    Dismiss,
    /// Decline (consent: reject all, or the least data).
    RejectPreferred,
    /// Accept (never the default for consent).
    Accept,
    /// Leave it.
    Ignore,
    /// Tell the agent, do nothing.
    Warn,
    /// Something else.
    Custom,
}

/// What an action does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionType {
    /// Click an element.
    Click,
    /// Type into a field.
    Type,
    /// Press a key.
    PressKey,
    /// Wait.
    Wait,
    /// Close the surface (its close control).
    Dismiss,
}

impl ActionType {
    /// Whether it changes the page (and so must declare a polarity).
    pub fn mutates(self) -> bool {
        !matches!(self, Self::Wait)
    }
}

/// What an action means for the person's choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Polarity {
    /// Declines (reject all, necessary only, close without consenting).
    Reject,
    /// Agrees (accept all).
    Accept,
    /// Opens the settings.
    Manage,
    /// Goes somewhere.
    Navigate,
    /// Changes no choice.
    Noop,
}

/// How far an action may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MaxScope {
    /// Inside the consent surface the fingerprint found (the default for consent).
    ScopedToCmpSurface,
    /// Inside the frame.
    ScopedToFrame,
    /// Inside the top frame.
    ScopedToTopFrame,
}

/// What an action may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Only the consent state.
    ConsentStateOnly,
    /// Only where the page is.
    NavigationOnly,
    /// Nothing.
    ReadOnly,
}

/// Where a typed value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ValueSource {
    /// The person's vault.
    FromVault,
    /// The agent supplies it when applying.
    AgentSupplied,
    /// The person is asked.
    UserPrompt,
}

/// One playbook action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Action {
    /// What it does.
    #[serde(rename = "type")]
    pub kind: ActionType,
    /// The element (exact: broad selectors are refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Up to 5 alternatives, for click and type only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback_selectors: Vec<String>,
    /// How long to wait for it, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u32>,
    /// What it means for the person's choices; required for every action that changes the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_polarity: Option<Polarity>,
    /// The visible text of the element it targets, which must agree with the polarity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_visible_text: Option<String>,
    /// How far it may reach (consent default: the consent surface).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_scope: Option<MaxScope>,
    /// What it may change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_effect: Option<Effect>,
    /// Where a typed value comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_source: Option<ValueSource>,
    /// A vendor API call instead of a click (allowlisted, agreeing with the polarity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor_api_call: Option<String>,
    /// The key (`press_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// What a verify step checks after the actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerifyType {
    /// The viewport is covered no more than `threshold`.
    ObstructionCleared,
    /// The page scrolls again.
    ScrollUnlocked,
    /// The page's own controls take clicks again.
    TopmostClickabilityRestored,
    /// `selector` is gone within `timeoutMs`.
    Absent,
    /// A pause.
    Wait,
}

/// One verify step (never with fallback selectors).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Verify {
    /// What it checks.
    #[serde(rename = "type")]
    pub kind: VerifyType,
    /// The element (`absent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Share of the viewport still allowed covered (`obstruction_cleared`, default 0.05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// How long to wait, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u32>,
}

/// How a phenomenon is resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Playbook {
    /// What it aims for.
    pub policy: Policy,
    /// The actions, in order (at most 20).
    #[serde(default)]
    pub actions: Vec<Action>,
    /// The checks after them (at most 20).
    #[serde(default)]
    pub verify: Vec<Verify>,
}

/// A device class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Device {
    /// A desktop browser.
    Desktop,
    /// A phone.
    Mobile,
    /// A tablet.
    Tablet,
}

/// The sign-in state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Auth {
    /// Not signed in.
    Anonymous,
    /// Signed in.
    LoggedIn,
    /// Either.
    Unknown,
}

/// Where a phenomenon applies; absent fields apply everywhere.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Context {
    /// Routes: `feed` (first path segment), `in/*` (a prefix), `_root` (`/`), `*` (all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routes: Option<Vec<String>>,
    /// Device class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    /// Locale (`de`, `en-GB`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// Sign-in state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<Auth>,
}

/// A phenomenon as an agent writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Phenomenon {
    /// Its stable id (letters, digits, `_`, `-`, `.`, `:`; 1 to 128); made from the type and
    /// fingerprint when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The kind of situation.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// How it is recognised.
    pub fingerprint: Fingerprint,
    /// How it is resolved.
    pub playbook: Playbook,
    /// Where it applies.
    #[serde(default)]
    pub context: Context,
}

/// Why a full navigation away from `path` would lose a fragile single-page app's state, from a
/// site's context (`domainCapabilities.spaNavigation`: `fragile`, `routes` as paths or `/prefix/*`
/// patterns, default every route, and `why`); docs/pks.md, "Sites (scopes)".
pub fn spa_risk(context: &serde_json::Value, path: &str) -> Option<String> {
    let spa = &context["domainCapabilities"]["spaNavigation"];
    if spa["fragile"] != true {
        return None;
    }
    let on_route = match spa["routes"].as_array() {
        None => true,
        Some(routes) => {
            routes.iter().filter_map(serde_json::Value::as_str).any(|r| match r.strip_suffix('*') {
                Some(prefix) => path.starts_with(prefix),
                None => r == path,
            })
        }
    };
    on_route.then(|| {
        spa["why"].as_str().map_or_else(
            || "the site is a single-page app whose state lives in the page".to_owned(),
            str::to_owned,
        )
    })
}

#[cfg(test)]
mod spa_tests {
    use serde_json::json;

    #[test]
    fn a_fragile_app_is_known_per_route() {
        let ctx = json!({"domainCapabilities": {"spaNavigation": {"fragile": true, "routes": ["/app/*", "/draft"], "why": "drafts"}}});
        assert_eq!(super::spa_risk(&ctx, "/app/inbox").as_deref(), Some("drafts"));
        assert_eq!(super::spa_risk(&ctx, "/draft").as_deref(), Some("drafts"));
        assert!(super::spa_risk(&ctx, "/about").is_none());
        assert!(
            super::spa_risk(&json!({"domainCapabilities": {"spaNavigation": {"fragile": false}}}), "/")
                .is_none()
        );
        assert!(
            super::spa_risk(&json!({"domainCapabilities": {"spaNavigation": {"fragile": true}}}), "/x")
                .is_some()
        );
        assert!(super::spa_risk(&json!({}), "/").is_none());
    }
}
