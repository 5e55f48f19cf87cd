//! `aag.screenshot_budget`: how a capture may travel back to the agent. Above 200 KB an inline
//! image is a warning (auto mode sends a thumbnail and the file path instead); above 1 MB,
//! 16 MP or 10,000 px on a side it is over budget (inline only with `allowLarge`; auto sends the
//! file path); above 50 MB or 50 MP it is refused whatever the mode.
//!
//! The gate's mode (`gateModes`) says what happens to an inline capture over budget: `block`
//! (default) refuses it unless `allowLarge` or `_meta.forceBypass`; `shadow_block` and `warn`
//! send it with a warning (`would_block` / `warned`); `off` sends it without one. `auto` picks
//! the response by size in every mode, and the absolute limits hold in every mode.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Warning threshold, bytes.
pub const WARN_BYTES: u64 = 200 * 1024;
/// Overridable limit, bytes.
pub const LIMIT_BYTES: u64 = 1024 * 1024;
/// Overridable limit, pixels.
pub const LIMIT_PIXELS: u64 = 16_000_000;
/// Overridable limit, pixels on one side.
pub const LIMIT_SIDE: u32 = 10_000;
/// Absolute limit, bytes.
pub const ABSOLUTE_BYTES: u64 = 50 * 1024 * 1024;
/// Absolute limit, pixels.
pub const ABSOLUTE_PIXELS: u64 = 50_000_000;
/// Longer side of thumbnails, pixels.
pub const THUMBNAIL_PX: u32 = 480;

/// `responseMode` of `nova.capture_screenshot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum ResponseMode {
    /// The image in the result.
    #[serde(rename = "inline")]
    Inline,
    /// Only the saved file's path.
    #[serde(rename = "reference")]
    Reference,
    /// A small JPEG in the result and the saved file's path.
    #[serde(rename = "thumbnail+reference")]
    ThumbnailReference,
    /// Inline when small, else thumbnail+reference, else reference (default).
    #[default]
    #[serde(rename = "auto")]
    Auto,
}

impl ResponseMode {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inline => "inline",
            Self::Reference => "reference",
            Self::ThumbnailReference => "thumbnail+reference",
            Self::Auto => "auto",
        }
    }
}

/// What the budget decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Budget {
    /// Send it this way.
    Send {
        /// How the capture travels.
        mode: ResponseMode,
        /// The reason of a warning, when there is one.
        warn: Option<&'static str>,
    },
    /// Refused.
    Refuse {
        /// The reason code.
        reason: &'static str,
        /// Whether `allowLarge` or another mode would pass (below the absolute limits).
        overridable: bool,
    },
}

/// Decides how a capture of `bytes` and `width` x `height` pixels travels.
pub fn decide(bytes: u64, width: u32, height: u32, mode: ResponseMode, allow_large: bool) -> Budget {
    let pixels = u64::from(width) * u64::from(height);
    if bytes > ABSOLUTE_BYTES || pixels > ABSOLUTE_PIXELS {
        return Budget::Refuse { reason: "screenshot.absolute_limit", overridable: false };
    }
    let over = bytes > LIMIT_BYTES || pixels > LIMIT_PIXELS || width.max(height) >= LIMIT_SIDE;
    let large = bytes > WARN_BYTES;
    match mode {
        ResponseMode::Inline if over && !allow_large => {
            Budget::Refuse { reason: "screenshot.over_budget", overridable: true }
        }
        ResponseMode::Inline if over => {
            Budget::Send { mode: ResponseMode::Inline, warn: Some("screenshot.over_budget") }
        }
        ResponseMode::Inline if large => {
            Budget::Send { mode: ResponseMode::Inline, warn: Some("screenshot.large_inline") }
        }
        ResponseMode::Auto if over => {
            Budget::Send { mode: ResponseMode::Reference, warn: Some("screenshot.over_budget") }
        }
        ResponseMode::Auto if large => {
            Budget::Send { mode: ResponseMode::ThumbnailReference, warn: Some("screenshot.large_inline") }
        }
        ResponseMode::Auto => Budget::Send { mode: ResponseMode::Inline, warn: None },
        m => Budget::Send { mode: m, warn: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_follows_the_seed_thresholds() {
        use ResponseMode::*;
        assert_eq!(decide(50_000, 800, 600, Auto, false), Budget::Send { mode: Inline, warn: None });
        assert_eq!(
            decide(300_000, 800, 600, Auto, false),
            Budget::Send { mode: ThumbnailReference, warn: Some("screenshot.large_inline") }
        );
        assert_eq!(
            decide(300_000, 800, 600, Inline, false),
            Budget::Send { mode: Inline, warn: Some("screenshot.large_inline") }
        );
        assert_eq!(
            decide(2_000_000, 800, 600, Auto, false),
            Budget::Send { mode: Reference, warn: Some("screenshot.over_budget") }
        );
        assert_eq!(
            decide(2_000_000, 800, 600, Inline, false),
            Budget::Refuse { reason: "screenshot.over_budget", overridable: true }
        );
        assert_eq!(
            decide(2_000_000, 800, 600, Inline, true),
            Budget::Send { mode: Inline, warn: Some("screenshot.over_budget") }
        );
        assert_eq!(
            decide(100, 10_000, 10, Inline, false),
            Budget::Refuse { reason: "screenshot.over_budget", overridable: true }
        );
        assert_eq!(
            decide(100, 5_000, 4_000, Auto, false),
            Budget::Send { mode: Reference, warn: Some("screenshot.over_budget") }
        );
        assert_eq!(
            decide(60_000_000, 800, 600, Reference, true),
            Budget::Refuse { reason: "screenshot.absolute_limit", overridable: false }
        );
        assert_eq!(
            decide(100, 8_000, 7_000, ThumbnailReference, true),
            Budget::Refuse { reason: "screenshot.absolute_limit", overridable: false }
        );
    }
}
