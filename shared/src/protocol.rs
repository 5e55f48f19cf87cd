//! The native-messaging protocol between the hub (`nova native`) and the extension.
//!
//! Every frame carries one [`Envelope`]: `{v, id, kind, method, params | result | error}`.
//! Requests flow both ways; each has a timeout on the sending side, and a missing reply becomes
//! an error with a reason rather than a hang. Host-to-browser frames above
//! [`HOST_TO_BROWSER_MAX_FRAME`] are split into [`Kind::Chunk`] frames that the extension
//! reassembles. The messages of a guarded action (check, act, watch) are in [`act`]; those of
//! applying stored site knowledge in [`pks`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Protocol version carried in every envelope. Bumped on incompatible changes.
pub const PROTOCOL_VERSION: u32 = 1;

/// Chrome refuses host-to-browser messages above 1 MiB; larger payloads are chunked.
pub const HOST_TO_BROWSER_MAX_FRAME: usize = 1024 * 1024;

/// Chrome sends at most 64 MiB browser-to-host; anything larger is rejected before allocation.
pub const BROWSER_TO_HOST_MAX_FRAME: usize = 64 * 1024 * 1024;

/// Payload bytes per chunk: the frame limit minus room for the envelope around the data
/// (JSON string escaping can double a byte, so half the budget is the safe figure).
pub const CHUNK_DATA_BYTES: usize = HOST_TO_BROWSER_MAX_FRAME / 2 - 1024;

mod act;
pub use act::{
    ActParams, CheckParams, CheckResult, ClickParams, DOUBLE_CLICK_GAP_MS, PageAction, SelectParams,
    TypeParams, WatchParams, WatchResult, WatchSpec,
};

pub use crate::FrameId;

pub mod pks;

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A request that expects exactly one `res` with the same id.
    Req,
    /// The response to a request.
    Res,
    /// A one-way event.
    Evt,
    /// One piece of an envelope too large for a single frame.
    Chunk,
}

/// An error carried in a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WireError {
    /// A reason code from [`crate::reason`] (or a host reason code).
    pub code: String,
    /// A sentence for humans saying what went wrong.
    pub message: String,
}

/// One piece of a chunked envelope: `data` slices of the serialised envelope, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Chunk {
    /// Zero-based index of this piece.
    pub seq: u32,
    /// How many pieces make the whole envelope.
    pub total: u32,
    /// A slice of the JSON text of the whole envelope.
    pub data: String,
}

/// The frame envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// Protocol version ([`PROTOCOL_VERSION`]).
    pub v: u32,
    /// Correlation id: a response carries its request's id. Events use 0.
    pub id: u32,
    /// Frame kind.
    pub kind: Kind,
    /// Method name, on requests and events (see [`method`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Request or event parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Successful response payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Failed response payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<WireError>,
    /// Chunk payload, on `chunk` frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<Chunk>,
    /// On responses from the extension: how long its stages took, in ms (`backgroundMs`,
    /// `tabMs`, `pageMs` and the page's own parts), for the hub's stage timings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<std::collections::BTreeMap<String, f64>>,
}

impl Envelope {
    /// A request.
    pub fn request(id: u32, method: &str, params: Value) -> Self {
        Self::new(id, Kind::Req, Some(method.to_owned()), Some(params), None, None)
    }

    /// An event.
    pub fn event(method: &str, params: Value) -> Self {
        Self::new(0, Kind::Evt, Some(method.to_owned()), Some(params), None, None)
    }

    /// A successful response.
    pub fn ok(id: u32, result: Value) -> Self {
        Self::new(id, Kind::Res, None, None, Some(result), None)
    }

    /// A failed response.
    pub fn err(id: u32, code: &str, message: impl Into<String>) -> Self {
        let error = WireError { code: code.to_owned(), message: message.into() };
        Self::new(id, Kind::Res, None, None, None, Some(error))
    }

    fn new(
        id: u32,
        kind: Kind,
        method: Option<String>,
        params: Option<Value>,
        result: Option<Value>,
        error: Option<WireError>,
    ) -> Self {
        Self { v: PROTOCOL_VERSION, id, kind, method, params, result, error, chunk: None, timing: None }
    }
}

/// Splits a serialised envelope into chunk frames when it exceeds the host-to-browser limit.
/// Returns the text unchanged (one frame) when it fits.
pub fn chunk_frames(id: u32, json: &str) -> Vec<String> {
    if json.len() <= HOST_TO_BROWSER_MAX_FRAME {
        return vec![json.to_owned()];
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < json.len() {
        let mut end = (start + CHUNK_DATA_BYTES).min(json.len());
        while !json.is_char_boundary(end) {
            end -= 1;
        }
        pieces.push(&json[start..end]);
        start = end;
    }
    let total = u32::try_from(pieces.len()).unwrap_or(u32::MAX);
    pieces
        .into_iter()
        .enumerate()
        .map(|(seq, data)| {
            let chunk = Chunk { seq: u32::try_from(seq).unwrap_or(u32::MAX), total, data: data.to_owned() };
            let mut env = Envelope::new(id, Kind::Chunk, None, None, None, None);
            env.chunk = Some(chunk);
            serde_json::to_string(&env).unwrap_or_default()
        })
        .collect()
}

/// Reassembles chunked envelopes on the receiving side. Pieces must arrive in order (native
/// messaging preserves order); a piece that does not continue the current envelope starts over.
#[derive(Debug, Default)]
pub struct Reassembler {
    id: u32,
    next: u32,
    text: String,
}

impl Reassembler {
    /// Takes one chunk frame; returns the whole envelope once its last piece arrived.
    pub fn push(&mut self, id: u32, chunk: Chunk) -> Option<Result<Envelope, String>> {
        if chunk.seq == 0 {
            self.id = id;
            self.next = 0;
            self.text.clear();
        }
        // `next` is `u32::MAX` once an envelope is done or broken: only a new first piece fits.
        if id != self.id || chunk.seq != self.next || self.next == u32::MAX {
            self.next = u32::MAX;
            self.text.clear();
            return Some(Err(format!("chunk {} of envelope {id} arrived out of order", chunk.seq)));
        }
        self.text.push_str(&chunk.data);
        self.next += 1;
        if self.next < chunk.total {
            return None;
        }
        let whole = serde_json::from_str(&std::mem::take(&mut self.text)).map_err(|e| e.to_string());
        self.next = u32::MAX;
        Some(whole)
    }
}

/// Method names. Requests from host to extension unless noted.
pub mod method {
    /// Event, extension to host, on every (re)connect: [`super::Hello`].
    pub const HELLO: &str = "hello";
    /// Event, extension to host: a tab was created, navigated, activated or closed.
    pub const TABS_CHANGED: &str = "tabs.changed";
    /// Liveness probe; the result echoes the params.
    pub const PING: &str = "ping";
    /// List tabs: [`super::TabInfo`] list.
    pub const TABS_LIST: &str = "tabs.list";
    /// Open a URL in a target: [`super::NavigateParams`] -> [`super::NavigateResult`].
    pub const NAVIGATE: &str = "tab.navigate";
    /// Frames of a tab: [`super::FramesParams`] -> [`super::FrameInfo`] list.
    pub const FRAMES: &str = "tab.frames";
    /// Capture the visible viewport: [`super::ScreenshotParams`] -> [`super::ScreenshotResult`].
    pub const SCREENSHOT: &str = "tab.screenshot";
    /// Compact page model: [`super::PerceiveParams`] -> [`crate::page::PageModel`].
    pub const PERCEIVE: &str = "page.perceive";
    /// Visible text: [`super::ReadTextParams`] -> [`crate::page::TextRead`].
    pub const READ_TEXT: &str = "page.readText";
    /// Click: [`super::ClickParams`] -> [`crate::page::ActionReport`].
    pub const CLICK: &str = "page.click";
    /// Type: [`super::TypeParams`] -> [`crate::page::ActionReport`].
    pub const TYPE: &str = "page.type";
    /// Evaluate an assertion set now: [`super::CheckParams`] -> [`super::CheckResult`].
    pub const CHECK: &str = "page.check";
    /// Arm the postcondition watch, then dispatch: [`super::ActParams`] ->
    /// [`crate::page::ActionReport`]. The watch keeps running under its `watchId`.
    pub const ACT: &str = "page.act";
    /// The verdict of an armed watch, or of a new watch on a document reached by navigation:
    /// [`super::WatchParams`] -> [`super::WatchResult`].
    pub const WATCH: &str = "page.watch";
    /// Runs a registered coverage scan in a frame (`ScanParams` -> `ScanResult`).
    pub const SCAN: &str = "page.scan";
    /// Fetches a URL from the extension with the user's session (`FetchParams` -> `FetchResult`).
    pub const FETCH: &str = "site.fetch";
    /// Changes the route of a single-page app in place (`RouteParams` -> `RouteResult`).
    pub const ROUTE: &str = "page.route";
    /// Puts files into a file input (`UploadParams` -> `ActionReport`).
    pub const UPLOAD: &str = "page.upload";
    /// Closes visible blockers: consent banners, dialogs, modal layers (`DismissParams` -> `DismissResult`).
    pub const DISMISS: &str = "page.dismiss";
    /// Looks for a stored phenomenon's signals and checks the page after its playbook
    /// (`pks::ProbeParams` -> `pks::ProbeResult`).
    pub const PKS_PROBE: &str = "page.pksProbe";
    /// One playbook action inside the surface it may touch (`pks::StepParams` -> `pks::StepResult`).
    pub const PKS_STEP: &str = "page.pksStep";
    /// The document's revision now: [`super::RevParams`] -> [`super::RevResult`]. Cheap; the
    /// hub asks only when a call looks like a loop, to see whether the page changed meanwhile.
    pub const REV: &str = "page.rev";
    /// Event, extension to host, sent just before the reply to every request a document
    /// answered: [`super::PageStamp`], the document's navigation epoch and revision then.
    pub const PAGE_STAMP: &str = "page.stamp";
    /// Selectors in the document order of the elements they name: [`super::OrderParams`] ->
    /// [`super::OrderResult`]. A form's fields are filled top to bottom, as a person would.
    pub const ORDER: &str = "page.order";
    /// The control that submits the form a field belongs to: [`super::SubmitterParams`] ->
    /// [`super::SubmitterResult`]. A macro clicks the button of the form it filled, not the first
    /// button on the page with a likely name.
    pub const SUBMITTER: &str = "page.submitter";
}

/// First event after connecting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Hello {
    /// The extension's version from its manifest.
    pub extension_version: String,
    /// `chromium` or `firefox`.
    pub browser: String,
    /// The browser's user agent string.
    pub user_agent: String,
}

/// A tab as the extension knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TabInfo {
    /// Stable id of the tab for its lifetime (the browser's tab id, as a string).
    pub target_id: String,
    /// Window the tab lives in.
    pub window_id: i32,
    /// Current URL.
    pub url: String,
    /// Current title.
    pub title: String,
    /// Whether this is the focused tab of the focused window.
    pub active: bool,
    /// Count of committed top-level navigations in this tab since the extension saw it.
    pub nav_epoch: u32,
}

/// `tab.navigate` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NavigateParams {
    /// `active` or a target id.
    pub target: String,
    /// Absolute URL to open.
    pub url: String,
    /// Open in a new tab instead of the target.
    pub new_tab: bool,
    /// How long to wait for the load to complete.
    pub timeout_ms: u32,
}

/// `tab.navigate` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NavigateResult {
    /// The tab that navigated.
    pub target_id: String,
    /// URL before navigating.
    pub url_before: String,
    /// URL after the navigation committed (after redirects).
    pub url: String,
    /// Title once loaded.
    pub title: String,
    /// Navigation epoch after the navigation.
    pub nav_epoch: u32,
    /// Whether the load event fired before the timeout.
    pub load_complete: bool,
}

/// `tab.screenshot` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScreenshotParams {
    /// `active` or a target id.
    pub target: String,
    /// `png` or `jpeg`.
    pub format: String,
    /// JPEG quality 1-100 (ignored for PNG).
    pub quality: u8,
    /// Also return a JPEG thumbnail whose longer side is at most this many pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thumbnail_max_px: Option<u32>,
}

/// `tab.screenshot` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScreenshotResult {
    /// The captured tab.
    pub target_id: String,
    /// URL of the captured page.
    pub url: String,
    /// `data:image/...;base64,...`
    pub data_url: String,
    /// The thumbnail, when asked for (`data:image/jpeg;base64,...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thumbnail_data_url: Option<String>,
}

/// `tab.frames` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FramesParams {
    /// `active` or a target id.
    pub target: String,
}

/// One frame of a tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FrameInfo {
    /// The frame id (0 is the top frame).
    pub frame_id: FrameId,
    /// The parent frame id (-1 for the top frame).
    pub parent_frame_id: FrameId,
    /// The frame's URL.
    pub url: String,
}

/// `page.perceive` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PerceiveParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame to work in (a `webNavigation` frame id); the top frame when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// Most interactive elements to list.
    pub max_elements: u32,
    /// Most characters of visible text to include.
    pub max_text_chars: u32,
    /// The adapter to read the page's `core.*` signals through (top frame only): the answer
    /// then carries them in `signals`, for operational knowledge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<crate::adapter::Adapter>,
}

/// Which document answered a request, and in what state ([`method::PAGE_STAMP`]).
///
/// `doc_rev` counts the changes a person could notice since the page module started in that
/// document: content and structure (DOM mutations other than inline `style`, which animations
/// rewrite many times a second) and form values that really changed. It only ever grows within
/// one document; a new document (a new `nav_epoch`) starts again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PageStamp {
    /// The tab.
    pub target_id: String,
    /// The frame that answered (0: the top frame).
    pub frame_id: FrameId,
    /// The tab's navigation epoch when the answer left the browser.
    pub nav_epoch: u32,
    /// The document's revision when it answered.
    pub doc_rev: u32,
}

/// `page.rev` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RevParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame to ask (a `webNavigation` frame id); the top frame when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
}

/// `page.rev` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RevResult {
    /// The document's revision now.
    pub doc_rev: u32,
}

/// Most selectors one `page.order` request may carry.
pub const ORDER_MAX_SELECTORS: usize = 200;

/// `page.order` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OrderParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame to ask (a `webNavigation` frame id); the top frame when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// Selectors or refs, at most [`ORDER_MAX_SELECTORS`].
    pub selectors: Vec<String>,
}

/// `page.order` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OrderResult {
    /// The request's selectors, each once, in the document order of the first element each
    /// names; those naming nothing (or that cannot be parsed) last, in the order they came.
    pub selectors: Vec<String>,
    /// The selectors naming nothing on the page now (the tail of `selectors`).
    pub missing: Vec<String>,
}

/// `page.submitter` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SubmitterParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame to ask (a `webNavigation` frame id); the top frame when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// A field of the form, by selector or ref.
    pub field: String,
    /// For a field in no form (a page that signs in with script): words a button near the field
    /// may be named with (`sign in`), matched in its accessible name, case-insensitively.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<String>,
}

/// `page.submitter` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SubmitterResult {
    /// The ref (`e12`) of the form's default button (its first submit button in tree order, the
    /// one Enter in the field presses) when it is visible, else of the first visible submit button
    /// that sends the same name and value. For a field in no form, or in a form with no submit
    /// button of its own (a dialog whose "Create" sits in its footer, outside the form), the
    /// visible button named with one of `words` inside the field's nearest ancestor that holds
    /// one (in a form's case, one disabled until the form is filled too). Absent when the field
    /// names nothing, or no such button shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitter: Option<String>,
    /// That button's accessible name, as a person reads it ("Next", "Sign in").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Whether the field belongs to a form: a button found elsewhere on the page would send
    /// another form, or nothing of this one.
    #[serde(default)]
    pub in_form: bool,
}

/// `page.readText` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadTextParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame to work in (a `webNavigation` frame id); the top frame when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// Read only inside this element; the whole page when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Most characters to return.
    pub max_chars: u32,
}

/// `page.route` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RouteParams {
    /// `active` or a target id.
    pub target: String,
    /// Absolute same-origin URL to route to.
    pub url: String,
    /// Replace the history entry instead of pushing one.
    pub replace: bool,
}

/// `page.route` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RouteResult {
    /// URL before.
    pub url_before: String,
    /// URL after.
    pub url_after: String,
    /// `history_push` or `history_replace` (a `popstate` event tells the app).
    pub method: String,
}

/// A file to upload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UploadFile {
    /// File name the page sees.
    pub name: String,
    /// MIME type.
    pub mime_type: String,
    /// Content, base64.
    pub content_base64: String,
}

/// `page.upload` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UploadParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame to work in; the top frame when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// The `<input type=file>`.
    pub selector: String,
    /// Files.
    pub files: Vec<UploadFile>,
}

/// `page.dismiss` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DismissParams {
    /// `active` or a target id.
    pub target: String,
    /// Most blockers to act on.
    pub max_actions: u32,
    /// Whether "accept" / "agree" controls may be used when nothing declines or closes.
    pub allow_accept: bool,
}

/// One blocker handled by `page.dismiss`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Dismissed {
    /// consent | dialog | overlay.
    pub kind: String,
    /// The blocker's text (start).
    pub text: String,
    /// The control used (`button "Reject all"`, or `Escape`).
    pub control: String,
    /// Whether the blocker is gone afterwards.
    pub gone: bool,
}

/// `page.dismiss` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DismissResult {
    /// What was done.
    pub dismissed: Vec<Dismissed>,
    /// Blockers still visible.
    pub remaining: u32,
    /// Blockers left alone (no safe control), with their text.
    pub skipped: Vec<String>,
    /// The document's URL once the blockers were dismissed.
    pub url_after: String,
}

/// Registered coverage scans (docs/tasks.md, "Registered scans").
pub mod scan {
    /// Visible text, aria-labels, placeholders, alt text; node, control, frame, shadow counts.
    pub const FULL_PAGE_TEXT: &str = "nova_full_page_text_v1";
    /// Landmark sequence, roles and control counts.
    pub const STRUCTURED_DOM: &str = "nova_structured_dom_v1";
    /// Visible text per language and hidden language containers, for spell checking.
    pub const I18N_SPELLCHECK: &str = "nova_i18n_spellcheck_v1";
    /// Every registered scan.
    pub const ALL: &[&str] = &[FULL_PAGE_TEXT, STRUCTURED_DOM, I18N_SPELLCHECK];
    /// Longest scan output kept; longer output is cut (and is then no JSON).
    pub const MAX_RAW_BYTES: usize = 4 * 1024 * 1024;
}

/// `page.scan` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScanParams {
    /// `active` or a target id.
    pub target: String,
    /// One of [`scan::ALL`].
    pub scan_id: String,
    /// Descend into open shadow roots.
    pub include_shadow_dom: bool,
    /// Descend into same-origin iframes.
    pub include_iframes: bool,
    /// Wait until the document is complete and quiet first.
    pub wait_for_hydration: bool,
    /// Longest wait for hydration, ms.
    pub hydration_timeout_ms: u32,
}

/// What Nova measured of the document, independently of the scan's own output.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DocumentFacts {
    /// `location.href` when measured (after the scan).
    pub effective_url: String,
    /// Characters of rendered body text (`innerText`, whitespace collapsed).
    pub visible_text_chars_measured: u64,
    /// Elements, open shadow trees included.
    pub node_count_measured: u64,
    /// `iframe` / `frame` elements.
    pub iframe_count: u64,
    /// Open shadow roots.
    pub shadow_root_count: u64,
    /// `document.readyState`.
    pub ready_state: String,
}

/// `page.scan` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScanResult {
    /// The scan's output as produced (JSON text, `null`, or cut at [`scan::MAX_RAW_BYTES`]).
    pub raw: String,
    /// The document as measured by Nova.
    pub document: DocumentFacts,
    /// Whether the document was complete and quiet before the scan ran.
    pub hydration_stable: bool,
    /// Time spent waiting for hydration, ms.
    pub hydration_wait_ms: u32,
    /// Time the scan itself took, ms.
    pub scan_ms: u32,
}

/// `site.fetch` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FetchParams {
    /// Absolute http(s) URL.
    pub url: String,
    /// Longest body returned, bytes.
    pub max_bytes: u32,
}

/// `site.fetch` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FetchResult {
    /// HTTP status.
    pub status: u16,
    /// URL after redirects.
    pub final_url: String,
    /// `Content-Type`.
    pub content_type: String,
    /// Body text, cut at `maxBytes`.
    pub body: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_envelope_matches_golden_json() {
        let env = Envelope::request(7, method::PERCEIVE, json!({"target": "active"}));
        let text = serde_json::to_value(&env).expect("serialise");
        assert_eq!(
            text,
            json!({"v": 1, "id": 7, "kind": "req", "method": "page.perceive",
                   "params": {"target": "active"}})
        );
    }

    #[test]
    fn error_envelope_round_trips() {
        let golden = r#"{"v":1,"id":3,"kind":"res","error":{"code":"timeout","message":"slow"}}"#;
        let env: Envelope = serde_json::from_str(golden).expect("parse");
        assert_eq!(env, Envelope::err(3, "timeout", "slow"));
        assert_eq!(serde_json::to_string(&env).expect("serialise"), golden);
    }

    #[test]
    fn envelope_rejects_unknown_fields() {
        let err = serde_json::from_str::<Envelope>(r#"{"v":1,"id":1,"kind":"evt","extra":1}"#)
            .expect_err("unknown field must fail");
        assert!(err.to_string().contains("extra"), "{err}");
    }

    #[test]
    fn small_payload_is_one_frame() {
        assert_eq!(chunk_frames(1, "{}"), vec!["{}".to_owned()]);
    }

    #[test]
    fn reassembler_restores_chunked_envelopes_and_rejects_gaps() {
        let big =
            Envelope::request(4, method::TYPE, json!({"text": "x".repeat(3 * HOST_TO_BROWSER_MAX_FRAME)}));
        let frames = chunk_frames(4, &serde_json::to_string(&big).expect("json"));
        let mut r = Reassembler::default();
        let mut out = None;
        for f in &frames {
            let env: Envelope = serde_json::from_str(f).expect("frame");
            out = r.push(env.id, env.chunk.expect("chunk"));
        }
        assert_eq!(out.expect("complete").expect("valid"), big);

        let second: Envelope = serde_json::from_str(&frames[1]).expect("frame");
        let gap = Reassembler::default().push(second.id, second.chunk.expect("chunk"));
        assert!(gap.expect("reported").is_err(), "a piece without its start is an error");
    }

    #[test]
    fn a_piece_after_a_finished_envelope_is_refused_without_overflow() {
        // Found by fuzzing (fuzz/fuzz_targets/chunks.rs): `seq` u32::MAX after a finished
        // envelope matched the "done" marker and overflowed it.
        let mut r = Reassembler::default();
        let whole = r.push(4, Chunk { seq: 0, total: 1, data: r#"{"v":1,"id":4,"kind":"evt"}"#.into() });
        assert!(whole.expect("complete").is_ok());
        let stray = r.push(4, Chunk { seq: u32::MAX, total: 1, data: "x".into() });
        assert!(stray.expect("reported").is_err(), "a piece of no envelope is an error");
        let after_gap = r.push(4, Chunk { seq: u32::MAX, total: 2, data: "x".into() });
        assert!(after_gap.expect("reported").is_err());
        let next = r.push(5, Chunk { seq: 0, total: 1, data: r#"{"v":1,"id":5,"kind":"evt"}"#.into() });
        assert_eq!(next.expect("complete").expect("valid").id, 5, "a new first piece starts over");
    }

    #[test]
    fn large_payload_is_chunked_and_reassembles() {
        let big = Envelope::ok(9, json!({"text": "é".repeat(HOST_TO_BROWSER_MAX_FRAME)}));
        let text = serde_json::to_string(&big).expect("serialise");
        let frames = chunk_frames(9, &text);
        assert!(frames.len() > 2);
        let mut joined = String::new();
        for (i, frame) in frames.iter().enumerate() {
            assert!(frame.len() <= HOST_TO_BROWSER_MAX_FRAME, "frame {i} is {}", frame.len());
            let env: Envelope = serde_json::from_str(frame).expect("chunk parses");
            let chunk = env.chunk.expect("chunk payload");
            assert_eq!(chunk.seq as usize, i);
            assert_eq!(chunk.total as usize, frames.len());
            joined.push_str(&chunk.data);
        }
        assert_eq!(joined, text);
    }
}
