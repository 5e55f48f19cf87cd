//! The page side of applying stored site knowledge (docs/pks.md, "Applying"): `page.pksProbe`
//! (which of a fingerprint's signals are on the page, and whether the page is free again) and
//! `page.pksStep` (one playbook action, held inside the surface it may touch).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One thing to look for on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", tag = "kind")]
pub enum Probe {
    /// An element matching the selector (`>>>` into shadow roots and same-origin frames) is
    /// visible.
    Dom {
        /// The selector.
        selector: String,
    },
    /// Any of these selectors matches an element, visible or not (a vendor's script tag, its
    /// root element).
    Present {
        /// The selectors.
        selectors: Vec<String>,
    },
    /// The page's visible text contains this (case-insensitive).
    Text {
        /// The text.
        text: String,
    },
    /// The page cannot scroll: `overflow: hidden` on the root or body, or a fixed body.
    ScrollLocked,
    /// A fixed or absolute layer covers at least half of the viewport.
    Overlay,
    /// An element shows this text (case-insensitive); the answer proposes an exact selector for
    /// the closest box around it that has one (an id, a `data-testid`, an `aria-label`).
    Holder {
        /// The text.
        text: String,
    },
    /// The selector names an iframe (inside `within`'s element, when given); the answer is its
    /// address, to find the frame when its document is another origin's.
    FrameSrc {
        /// The iframe.
        selector: String,
        /// The element it must be inside.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        within: Option<String>,
    },
}

/// A check after a playbook ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", tag = "type")]
pub enum Check {
    /// At most `threshold` of the viewport (a 10x10 grid of points) is covered by the surface
    /// or by a layer covering half of the viewport.
    ObstructionCleared {
        /// Largest covered share allowed, 0 to 1.
        threshold: f64,
    },
    /// The page can scroll again.
    ScrollUnlocked,
    /// The centre and the four quarter points of the viewport reach the page, not the surface
    /// or a covering layer.
    TopmostClickabilityRestored,
    /// Nothing visible matches the selector.
    Absent {
        /// The selector.
        selector: String,
    },
}

/// `page.pksProbe` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProbeParams {
    /// `active` or a target id.
    pub target: String,
    /// What to look for.
    #[serde(default)]
    pub probes: Vec<Probe>,
    /// The phenomenon's surface (its banner or dialog), for the checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
    /// Checks to run.
    #[serde(default)]
    pub checks: Vec<Check>,
}

/// How one check went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckOutcome {
    /// Whether it holds.
    pub ok: bool,
    /// What was measured (`covered 0.32 of the viewport`).
    pub detail: String,
}

/// `page.pksProbe` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProbeResult {
    /// Per probe, whether it was found.
    pub present: Vec<bool>,
    /// Per check, in order.
    pub checks: Vec<CheckOutcome>,
    /// Per probe, the selector a `holder` probe proposes or the address a `frameSrc` probe
    /// found (none for the other kinds).
    #[serde(default)]
    pub proposals: Vec<Option<String>>,
    /// The document's URL.
    pub url: String,
}

/// What a step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Click the element (the checks of `page.click`).
    Click,
    /// Press a key on the element, or on the surface without one.
    PressKey,
    /// Press Escape on the surface (closes dialogs).
    Dismiss,
}

/// `page.pksStep` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StepParams {
    /// `active` or a target id.
    pub target: String,
    /// The frame to act in (a `webNavigation` frame id); the top frame when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<crate::FrameId>,
    /// What to do.
    pub kind: StepKind,
    /// The element, then the fallbacks in order (the first one found is used).
    pub selectors: Vec<String>,
    /// The key for `press_key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The element must be inside this one (the surface), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<String>,
    /// The element must be in the same document as `within`'s element.
    #[serde(default)]
    pub same_frame: bool,
    /// The element must be in the top document.
    #[serde(default)]
    pub top_frame: bool,
}

/// `page.pksStep` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StepResult {
    /// The selector used (the first one found).
    pub selector: String,
    /// The element (`button "Reject all"`).
    pub element: String,
    /// The document's URL after the step.
    pub url_after: String,
}
