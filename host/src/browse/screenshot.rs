//! `nova.capture_screenshot`: the capture, the screenshot budget (`aag.screenshot_budget`,
//! judged once the size is known), thumbnails and files for captures too large to send inline.

use base64::Engine as _;
use nova_shared::protocol::{ScreenshotParams, ScreenshotResult, method};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::bridge::DEFAULT_TIMEOUT;
use crate::call::check_range;
use crate::call::{CallError, CallRecord, ToolReply};
use crate::observation::{ActionKind, flags};
use crate::registry::{self, Bundle, Evidence, PageUse, ToolDef};
use crate::replies::{merge, ok_body};
use crate::settings::GateMode;

/// `nova.capture_screenshot.quality` bounds and default (JPEG only).
pub const SCREENSHOT_QUALITY: (u32, u32, u32) = (1, 100, 80);

fn default_quality() -> u32 {
    SCREENSHOT_QUALITY.2
}

/// Screenshot image format.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    /// Lossless PNG (default).
    #[default]
    Png,
    /// JPEG with `quality`.
    Jpeg,
}

crate::tool_args! {
    /// `nova.capture_screenshot` arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ScreenshotArgs [tab, agent] {
        /// `png` (default) or `jpeg`.
        #[serde(default)]
        pub format: ImageFormat,
        /// JPEG quality 1-100 (default 80).
        #[serde(default = "default_quality")]
        #[schemars(range(min = 1, max = 100))]
        pub quality: u32,
        /// inline | reference | thumbnail+reference | auto (default: inline when small).
        #[serde(default)]
        pub response_mode: crate::aag::screenshot::ResponseMode,
        /// Return an over-budget capture inline anyway (never above the absolute limits).
        #[serde(default)]
        pub allow_large: bool,
    }
}

crate::tool! {
    /// `nova.capture_screenshot` in the tool registry.
    pub static SCREENSHOT = ToolDef::new(
        "nova.capture_screenshot",
        "Capture the visible part of a tab as an image.",
        registry::schema::<ScreenshotArgs>,
        crate::handler!(Shots::screenshot),
    )
    .bundles(&[Bundle::BrowserAutomation, Bundle::PageReadDebug])
    .tob(ActionKind::Read, "webpage", flags::VISUAL_EXPOSED | flags::VIEWPORT_ONLY)
    .page(PageUse::Reads { perceives: false })
    .evidence(Evidence::Screenshot)
    .read_only()
    .in_sequence();
}
/// The narrow context of the screenshot tool: the tab, the browser, the data dir (thumbnails and
/// files are written there; the settings say the budget).
pub struct Shots<'h> {
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
    /// The data dir.
    pub data: &'h crate::paths::DataDir,
}

impl<'h> From<&'h crate::hub::Hub> for Shots<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { tabs: hub.tabs(), bridge: &hub.bridge, data: &hub.data }
    }
}

impl Shots<'_> {
    /// `nova.capture_screenshot`.
    pub async fn screenshot(&self, rec: &mut CallRecord, a: ScreenshotArgs) -> Result<ToolReply, CallError> {
        check_range("quality", a.quality, SCREENSHOT_QUALITY)?;
        let tab = match self.tabs.enter(rec, &a.target_id, false).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        let (format, mime, ext) = match a.format {
            ImageFormat::Png => ("png", "image/png", "png"),
            ImageFormat::Jpeg => ("jpeg", "image/jpeg", "jpg"),
        };
        use crate::aag::screenshot::{self as budget, Budget, ResponseMode};
        let wants_thumbnail =
            matches!(a.response_mode, ResponseMode::Auto | ResponseMode::ThumbnailReference);
        let params = ScreenshotParams {
            target: tab.target_id.clone(),
            format: format.to_owned(),
            quality: u8::try_from(a.quality).unwrap_or(80),
            thumbnail_max_px: wants_thumbnail.then_some(budget::THUMBNAIL_PX),
        };
        let shot: ScreenshotResult = match self.bridge.call(method::SCREENSHOT, params, DEFAULT_TIMEOUT).await
        {
            Ok(s) => s,
            Err(e) => return Ok(ToolReply::bridge_failure(&e)),
        };
        rec.executed();
        rec.obs.url_after = Some(shot.url.clone());
        let b64 = shot.data_url.split_once(',').map(|(_, d)| d).unwrap_or_default().to_owned();
        let bytes = base64::engine::general_purpose::STANDARD.decode(&b64).unwrap_or_default();
        let (width, height) = image_size(&bytes).unzip();
        let size = bytes.len() as u64;
        let settings = crate::settings::Settings::load(self.data);
        let gate_mode = crate::aag::mode_of(&settings, crate::aag::gate::SCREENSHOT_BUDGET);
        let (w, h) = (width.unwrap_or(0), height.unwrap_or(0));
        // Over budget as asked: what `block` would refuse. Other modes, `allowLarge` and a
        // force bypass let it through, each reported as such.
        let over_budget = matches!(
            budget::decide(size, w, h, a.response_mode, a.allow_large),
            Budget::Refuse { overridable: true, .. }
        );
        let let_through = gate_mode != GateMode::Block || rec.force_bypass;
        let decision = budget::decide(size, w, h, a.response_mode, a.allow_large || let_through);
        let details = json!({
            "bytes": size, "width": width, "height": height, "responseMode": a.response_mode.as_str(),
            "limits": {"warnBytes": budget::WARN_BYTES, "limitBytes": budget::LIMIT_BYTES, "limitPixels": budget::LIMIT_PIXELS,
                       "limitSide": budget::LIMIT_SIDE, "absoluteBytes": budget::ABSOLUTE_BYTES, "absolutePixels": budget::ABSOLUTE_PIXELS},
        });
        let (mode, warn) = match decision {
            Budget::Refuse { reason, overridable } => {
                let message = if overridable {
                    "The capture is over the inline budget: ask for responseMode reference or thumbnail+reference, or allowLarge."
                } else {
                    "The capture is above the absolute size limits and is not returned."
                };
                let mut reply = crate::aag::block::block_reply(
                    crate::aag::gate::SCREENSHOT_BUDGET,
                    GateMode::Block,
                    reason,
                    message.into(),
                    None,
                    details,
                    "nova.capture_screenshot",
                );
                // Judged once the size is known: the capture ran but is not returned.
                for aag in
                    [reply.meta.get_mut("io.nova/aag"), Some(&mut reply.structured)].into_iter().flatten()
                {
                    aag["forceBypassAvailable"] = json!(overridable);
                    aag["stage"] = json!(SCREENSHOT_STAGE);
                }
                rec.obs.block_stage = Some(SCREENSHOT_STAGE.into());
                rec.obs.error_code = Some(format!("aag_blocked:{}", crate::aag::gate::SCREENSHOT_BUDGET));
                return Ok(reply);
            }
            Budget::Send { mode, warn } => (mode, warn),
        };
        let status = match gate_mode {
            GateMode::Off => None,
            GateMode::ShadowBlock if over_budget => Some("would_block"),
            GateMode::Block if over_budget => Some("bypassed"),
            _ => warn.map(|_| "warned"),
        };
        let path = self.data.screenshots().join(format!("{}.{ext}", rec.obs.call_id));
        let saved = std::fs::write(&path, &bytes).is_ok();
        let mut structured = ok_body(&tab.target_id);
        merge(
            &mut structured,
            json!({
                "url": shot.url, "mimeType": mime, "bytes": size,
                "width": width, "height": height, "responseMode": mode.as_str(),
                "screenshotFilePath": saved.then(|| path.display().to_string()),
            }),
        );
        if let (Some(status), Some(reason)) = (status, warn) {
            let id = crate::aag::gate::SCREENSHOT_BUDGET;
            structured["_aagGates"][crate::aag::warning_key(id)] = json!({
                "gateId": id, "gateMode": gate_mode.as_str(), "status": status,
                "reasonCode": reason, "details": details,
            });
            rec.obs.note_gates([(id, status)]);
        }
        let reply = ToolReply::ok(structured);
        Ok(match mode {
            ResponseMode::Reference => reply,
            ResponseMode::ThumbnailReference => {
                match shot.thumbnail_data_url.as_deref().and_then(|d| d.split_once(',')) {
                    Some((_, thumb)) => reply.with_image(thumb.to_owned(), "image/jpeg"),
                    None => reply,
                }
            }
            _ => reply.with_image(b64, mime),
        })
    }
}

/// `stage` of a screenshot refused by its budget: judged after the capture, before the reply.
const SCREENSHOT_STAGE: &str = "aag_postcapture";

/// Width and height of a PNG (IHDR chunk) or JPEG (first start-of-frame segment).
fn image_size(bytes: &[u8]) -> Option<(u32, u32)> {
    png_size(bytes).or_else(|| jpeg_size(bytes))
}

fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" {
        return None;
    }
    let w = u32::from_be_bytes(bytes[16..20].try_into().ok()?);
    let h = u32::from_be_bytes(bytes[20..24].try_into().ok()?);
    Some((w, h))
}

fn jpeg_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let be16 = |i: usize| Some(u16::from_be_bytes([*bytes.get(i)?, *bytes.get(i + 1)?]));
    if bytes.get(..2) != Some(&[0xFF, 0xD8][..]) {
        return None;
    }
    let mut i = 2;
    while i + 4 <= bytes.len() {
        if bytes[i] != 0xFF {
            return None;
        }
        let marker = bytes[i + 1];
        match marker {
            // Fill bytes before a marker.
            0xFF => i += 1,
            // Start of frame (baseline, progressive, ...), not DHT / JPG / DAC.
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                let h = be16(i + 5)?;
                let w = be16(i + 7)?;
                return Some((u32::from(w), u32::from(h)));
            }
            _ => i += 2 + usize::from(be16(i + 2)?),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_dimensions_are_read_from_the_header() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&800u32.to_be_bytes());
        png.extend_from_slice(&600u32.to_be_bytes());
        assert_eq!(png_size(&png), Some((800, 600)));
        assert_eq!(png_size(b"nope"), None);
        // SOI, an APP0 segment, then SOF0 with height 600 and width 800.
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00];
        jpeg.extend([0xFF, 0xC0, 0x00, 0x11, 0x08, 0x02, 0x58, 0x03, 0x20, 0x03]);
        assert_eq!(image_size(&jpeg), Some((800, 600)));
        assert_eq!(jpeg_size(&jpeg[..12]), None, "truncated");
        assert_eq!(jpeg_size(&[0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF]), None, "a length past the end");
    }
}
