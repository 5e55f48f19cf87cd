//! The browser tools: `nova.perceive`, `nova.read_text`, `nova.navigate`,
//! `nova.click_selector`, `nova.type_selector`, and in [`screenshot`] `nova.capture_screenshot`;
//! [`delta`] answers `nova.perceive {since}` with what changed.
//!
//! Each tool validates its arguments, resolves the target tab (`active` -> the focused tab),
//! asks the extension through the bridge, and fills the observation row with what it touched.
//! Page-side work (finding elements, checking they can be clicked, typing) happens in the
//! extension; this module turns its reports into tool results.

use std::time::Duration;

use nova_shared::page::{ActionReport, PageModel, TextRead};
use nova_shared::protocol::{
    ClickParams, FrameInfo, FramesParams, NavigateParams, NavigateResult, PerceiveParams, ReadTextParams,
    TabInfo, TypeParams, method,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::bridge::{BridgeError, DEFAULT_TIMEOUT};
use crate::call::{CallError, CallRecord, ToolReply, check_chars, check_range};
use crate::observation::{ActionKind, flags};
use crate::replies::{NATIVE_DIALOG_TIMEOUT, merge, note_file_input_refusal, ok_body, parse_frame};
use nova_shared::cls::TransitionContract;

pub mod delta;
pub mod screenshot;
use crate::registry::{self, Bundle, Evidence, PageUse, ToolDef};
use nova_shared::protocol::PageAction;

/// What the browser tools reach.
pub struct Browser<'h> {
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// Guarded transitions (CLS).
    pub guard: crate::cls::engine::Guard<'h>,
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
    /// Tab leases.
    pub leases: &'h crate::lease::Leases,
    /// The person's controls.
    pub control: &'h crate::aag::control::Control,
    /// Guarded transitions.
    pub cls: &'h crate::cls::Cls,
    /// The data dir.
    pub data: &'h crate::paths::DataDir,
    /// Operational knowledge (system observations, `okHints`).
    pub ok: &'h crate::ok::Knowledge,
    /// Per-site knowledge (`pks`, `pksAdvice` on page reads).
    pub pks: &'h crate::pks::Pks,
}

impl<'h> From<&'h crate::hub::Hub> for Browser<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self {
            tabs: hub.tabs(),
            guard: crate::cls::engine::Guard::from(hub),
            bridge: &hub.bridge,
            leases: &hub.leases,
            control: &hub.control,
            cls: &hub.cls,
            data: &hub.data,
            ok: &hub.ok,
            pks: &hub.pks,
        }
    }
}

/// `nova.perceive.maxElements` bounds and default.
pub const PERCEIVE_MAX_ELEMENTS: (u32, u32, u32) = (1, 5000, 400);
/// `nova.perceive.maxTextChars` bounds and default.
pub const PERCEIVE_MAX_TEXT: (u32, u32, u32) = (0, 200_000, 4000);
/// `nova.read_text.maxChars` bounds and default.
pub const READ_TEXT_MAX_CHARS: (u32, u32, u32) = (1, 1_000_000, 20_000);
/// `nova.navigate.timeoutMs` bounds and default.
pub const NAVIGATE_TIMEOUT_MS: (u32, u32, u32) = (1000, 120_000, 30_000);
/// `nova.type_selector.text`: most characters in one call.
pub const TYPE_MAX_CHARS: usize = 100_000;
/// Longest selector accepted.
pub const MAX_SELECTOR_LEN: usize = 4096;

macro_rules! default_fn {
    ($name:ident, $bounds:expr) => {
        fn $name() -> u32 {
            $bounds.2
        }
    };
}
default_fn!(default_max_elements, PERCEIVE_MAX_ELEMENTS);
default_fn!(default_max_text, PERCEIVE_MAX_TEXT);
default_fn!(default_read_chars, READ_TEXT_MAX_CHARS);
default_fn!(default_nav_timeout, NAVIGATE_TIMEOUT_MS);

fn yes() -> bool {
    true
}

crate::tool_args! {
    /// `nova.perceive` arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct PerceiveArgs [tab, agent, frame] {
        /// Most interactive elements to list (1-5000, default 400).
        #[serde(default = "default_max_elements")]
        #[schemars(range(min = 1, max = 5000))]
        pub max_elements: u32,
        /// Most characters of visible text (0-200000, default 4000).
        #[serde(default = "default_max_text")]
        #[schemars(range(min = 0, max = 200000))]
        pub max_text_chars: u32,
        /// How much of the site's stored knowledge to carry: off, summary (default), full.
        #[serde(default)]
        pub pks_include: crate::pks::delivery::Include,
        /// The `perceptionId` of this session's last read of the tab (and frame): answer with
        /// what changed since then (a full read, with `fullReason`, after a navigation).
        #[serde(default)]
        pub since: Option<String>,
    }
}

crate::tool_args! {
    /// `nova.read_text` arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ReadTextArgs [tab, agent, frame] {
        /// Read only inside this element (CSS, `>>>`, or a perceive ref); whole page when absent.
        #[serde(default)]
        pub selector: Option<String>,
        /// Most characters to return (1-1000000, default 20000).
        #[serde(default = "default_read_chars")]
        #[schemars(range(min = 1, max = 1000000))]
        pub max_chars: u32,
    }
}

crate::tool_args! {
    /// `nova.navigate` arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct NavigateArgs [tab, agent] {
        /// Absolute http(s), file or about:blank URL.
        pub url: String,
        /// Open in a new tab instead.
        #[serde(default)]
        pub new_tab: bool,
        /// How long to wait for the page to load (1000-120000, default 30000).
        #[serde(default = "default_nav_timeout")]
        #[schemars(range(min = 1000, max = 120000))]
        pub timeout_ms: u32,
        /// How much of the site's stored knowledge to carry: off, summary (default), full.
        #[serde(default)]
        pub pks_include: crate::pks::delivery::Include,
    }
}

crate::tool_args! {
    /// `nova.click_selector` arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ClickArgs [tab, agent, frame, contract] {
        /// CSS selector (with `>>>` into shadow roots and same-origin iframes) or a perceive ref.
        pub selector: String,
        /// Double-click: press twice, as a person opening an item's editor or a file does.
        /// Refused on a commit point (`double_click_commit_point`).
        #[serde(default)]
        pub double_click: bool,
    }
}

crate::tool_args! {
    /// `nova.type_selector` arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct TypeArgs [tab, agent, frame, contract] {
        /// Input, textarea, select or contenteditable element: CSS (with `>>>`) or a perceive ref.
        pub selector: String,
        /// Text to enter (at most 100000 characters). Password values are never stored or logged.
        pub text: String,
        /// Replace the current content (default) instead of appending.
        #[serde(default = "yes")]
        pub clear: bool,
        /// Press Enter after typing.
        #[serde(default)]
        pub press_enter: bool,
    }
}

/// The shared preparation of click and type.
struct Prepared {
    tab: TabInfo,
    frame_id: Option<nova_shared::protocol::FrameId>,
    contract: Option<TransitionContract>,
    guarded: bool,
}

fn check_selector(selector: &str) -> Result<(), CallError> {
    if selector.len() > MAX_SELECTOR_LEN {
        return Err(CallError::invalid(
            "selector",
            format!("`selector` is {} bytes; at most {MAX_SELECTOR_LEN} are allowed", selector.len()),
        ));
    }
    nova_shared::selector::parse(selector)
        .map(|_| ())
        .map_err(|e| CallError::invalid("selector", format!("`selector` is invalid: {e}")))
}

fn check_url(url: &str) -> Result<(), CallError> {
    let lower = url.trim().to_ascii_lowercase();
    let allowed =
        ["http://", "https://", "file://"].iter().any(|p| lower.starts_with(p)) || lower == "about:blank";
    if !allowed {
        return Err(CallError::invalid(
            "url",
            "`url` must be an absolute http://, https:// or file:// URL, or about:blank",
        ));
    }
    Ok(())
}

crate::tool! {
    /// `nova.perceive` in the tool registry.
    pub static PERCEIVE = ToolDef::new(
        "nova.perceive",
        "Understand the visible page: URL, title, page state, interactive elements with \
         refs (e12) usable as selectors, landmarks, forms and visible text, plus awareness \
         signals: sign-in / payment / consent overlays, autofill fields, native dialogs \
         and framework hints.",
        registry::schema::<PerceiveArgs>,
        crate::handler!(Browser::perceive),
    )
    .bundles(&[Bundle::BrowserAutomation, Bundle::PageReadDebug])
    .tob(ActionKind::Read, "webpage", flags::CONTENT_EXPOSED | flags::VISUAL_EXPOSED | flags::DOM_EXPOSED)
    .page(PageUse::Reads { perceives: true })
    .evidence(Evidence::TextLight)
    .read_only()
    .in_sequence();
}

crate::tool! {
    /// `nova.read_text` in the tool registry.
    pub static READ_TEXT = ToolDef::new(
        "nova.read_text",
        "Read the visible text of the page or of one element.",
        registry::schema::<ReadTextArgs>,
        crate::handler!(Browser::read_text),
    )
    .bundles(&[Bundle::BrowserAutomation, Bundle::PageReadDebug])
    .tob(ActionKind::Read, "dom_node", flags::CONTENT_EXPOSED | flags::DOM_EXPOSED)
    .page(PageUse::Reads { perceives: true })
    .evidence(Evidence::TextLight)
    .read_only()
    .in_sequence();
}

crate::tool! {
    /// `nova.navigate` in the tool registry.
    pub static NAVIGATE = ToolDef::new(
        "nova.navigate",
        "Open a URL in a tab and wait for it to load.",
        registry::schema::<NavigateArgs>,
        crate::handler!(Browser::navigate),
    )
    .bundles(&[Bundle::BrowserAutomation])
    .tob(ActionKind::Navigate, "webpage", flags::NAVIGATION_INTENT)
    .page(PageUse::Navigates)
    .evidence(Evidence::Visit)
    .in_sequence();
}

crate::tool! {
    /// `nova.click_selector` in the tool registry.
    pub static CLICK = ToolDef::new(
        "nova.click_selector",
        "Click an element after checking it is visible, enabled and not covered. \
         Reports actionDispatched: true only once the page was touched. File inputs and \
         their labels are refused (file_input_click): use nova.file_upload.",
        registry::schema::<ClickArgs>,
        crate::handler!(Browser::click),
    )
    .bundles(&[Bundle::BrowserAutomation])
    .tob(ActionKind::Interact, "dom_node", flags::MUTATION_ATTEMPTED)
    .page(PageUse::Acts { needs_perception: true })
    .in_sequence();
}

crate::tool! {
    /// `nova.type_selector` in the tool registry.
    pub static TYPE = ToolDef::new(
        "nova.type_selector",
        "Type into an input, textarea or contenteditable editor with real input events; into a \
         select, `text` chooses the option it names. Password values are never stored or logged.",
        registry::schema::<TypeArgs>,
        crate::handler!(Browser::type_text),
    )
    .bundles(&[Bundle::BrowserAutomation])
    .tob(ActionKind::Interact, "dom_node", flags::MUTATION_ATTEMPTED | flags::INPUT_SUPPLIED)
    .page(PageUse::Acts { needs_perception: true })
    .secrets(&["text"])
    .in_sequence();
}

impl Browser<'_> {
    /// `nova.perceive`.
    pub async fn perceive(&self, rec: &mut CallRecord, a: PerceiveArgs) -> Result<ToolReply, CallError> {
        check_range("maxElements", a.max_elements, PERCEIVE_MAX_ELEMENTS)?;
        check_range("maxTextChars", a.max_text_chars, PERCEIVE_MAX_TEXT)?;
        check_chars("since", a.since.as_deref().unwrap_or_default(), delta::MAX_SINCE_CHARS)?;
        let tab = match self.tabs.enter(rec, &a.target_id, false).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        let frame_id = parse_frame(a.frame_id.as_deref())?;
        // The site adapters, read once: the page reads its signals through one, OK learns
        // services from them.
        let site = (frame_id.unwrap_or(0) == 0).then(|| crate::adapters::site(self.data));
        let params = PerceiveParams {
            target: tab.target_id.clone(),
            frame_id,
            max_elements: a.max_elements,
            max_text_chars: a.max_text_chars,
            // The top frame's core signals feed operational knowledge.
            adapter: site.as_ref().map(|site| nova_shared::adapter::choose(site, &tab.url)),
        };
        // The frame list is asked for while the page is read: one round trip, not two.
        let (page, frames) = tokio::join!(
            self.bridge.call::<PageModel>(method::PERCEIVE, params, DEFAULT_TIMEOUT),
            self.child_frames(&tab.target_id, frame_id.unwrap_or(0))
        );
        let mut page = match page {
            Ok(p) => p,
            Err(e) => return Ok(ToolReply::bridge_failure(&e)),
        };
        rec.executed();
        rec.obs.url_after = Some(page.url.clone());
        let signals = std::mem::take(&mut page.signals);
        let hidden_chars = std::mem::take(&mut page.hidden_chars);
        self.note_overlay(&tab.target_id, frame_id, &page);
        let text = render_page(&page, &frames);
        let mut structured = ok_body(&tab.target_id);
        merge(&mut structured, serde_json::to_value(&page).unwrap_or(Value::Null));
        note_injection(&mut structured, &page.text, page.elements.iter().map(String::as_str), hidden_chars);
        structured["frames"] = json!(frames);
        structured["goalContext"] = self.cls.goals.context(&tab.target_id, &rec.obs.agent_id);
        if let Some(site) = &site {
            let at = (tab.target_id.as_str(), page.url.as_str());
            structured["okHints"] = crate::ok::page::perceived(self.ok, self.data, at, site, signals)
                .unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "operational knowledge not updated");
                    Value::Null
                });
        }
        if frame_id.unwrap_or(0) == 0 {
            let facts = crate::pks::delivery::PageFacts {
                consent_showing: page
                    .identity_overlay_warning
                    .as_ref()
                    .is_some_and(|w| w.items.iter().any(|i| i.kind == "consent")),
                native_dialog: page.native_dialog_warning.is_some(),
            };
            self.deliver_pks(rec, &mut structured, &page.url, a.pks_include, facts);
        }
        let in_doubt = self.cls.journal.in_doubt(&tab.target_id);
        if !in_doubt.is_empty() {
            structured["inDoubtTransitions"] = json!(in_doubt);
        }
        if let Some(p) = self.cls.pending(&tab.target_id) {
            structured["pendingTransition"] = p;
        }
        let key = (tab.target_id.clone(), frame_id.unwrap_or(0));
        let nav_epoch = self.bridge.nav_epoch(&key.0, key.1);
        let Value::Object(full) = structured else { return Ok(ToolReply::ok(structured).with_text(text)) };
        let reads = rec.session.slots.get::<delta::Reads>();
        let reply = reads.answer(key, nav_epoch, a.since.as_deref(), full);
        let text = if reply.get("incremental") == Some(&json!(true)) { delta::render(&reply) } else { text };
        Ok(ToolReply::ok(Value::Object(reply)).with_text(text))
    }

    /// Adds what the site's stored knowledge says (`pks`, `pksDedup`, `pksAdvice`,
    /// `pksOnboarding`); a store failure leaves the read as it is.
    fn deliver_pks(
        &self,
        rec: &CallRecord,
        structured: &mut Value,
        url: &str,
        include: crate::pks::delivery::Include,
        facts: crate::pks::delivery::PageFacts,
    ) {
        let delivered = rec.session.slots.get::<crate::pks::delivery::Delivered>();
        match crate::pks::delivery::deliver(self.pks, &delivered, &rec.obs.agent_id, url, include, facts) {
            Ok(fields) => {
                for (k, v) in fields {
                    structured[k] = v;
                }
            }
            Err(e) => tracing::warn!(error = %e, "per-site knowledge not delivered"),
        }
    }

    /// Feeds `safety.identity_overlay`: a sign-in, payment or identity overlay seen on the tab
    /// holds mutating calls until a perceive no longer sees it. A perceive of a child frame can
    /// add an overlay but never clear the top frame's.
    fn note_overlay(&self, target: &str, frame_id: Option<nova_shared::protocol::FrameId>, page: &PageModel) {
        let gating = page
            .identity_overlay_warning
            .as_ref()
            .filter(|w| w.items.iter().any(|i| matches!(i.kind.as_str(), "sso" | "payment" | "identity")));
        // The document that answered: its stamp reached the bridge before the reply.
        let epoch = self.bridge.state().tab(target).map_or(0, |t| t.nav_epoch);
        match gating {
            Some(w) => self.control.set_overlay(target, epoch, serde_json::to_value(w).ok()),
            None if frame_id.unwrap_or(0) == 0 => self.control.set_overlay(target, epoch, None),
            None => {}
        }
    }

    /// The frames inside `parent`, one line each (`frame 12 http://…`): their ids are what
    /// `frameId` takes. Same-origin frames are also reachable from the parent with `>>>`.
    async fn child_frames(&self, target: &str, parent: nova_shared::protocol::FrameId) -> Vec<String> {
        let params = FramesParams { target: target.to_owned() };
        let frames: Vec<FrameInfo> =
            self.bridge.call(method::FRAMES, params, DEFAULT_TIMEOUT).await.unwrap_or_default();
        frames
            .iter()
            .filter(|f| f.parent_frame_id == parent)
            .map(|f| format!("frame {} {}", f.frame_id, f.url))
            .collect()
    }

    /// The contract of the current step of the target's active goal, when the caller may act
    /// on it: a goal step's contract guards the raw action that performs it.
    fn step_contract(&self, target_id: &str, agent: &str) -> Option<TransitionContract> {
        let goal = self.cls.goals.active(target_id)?;
        if goal.owner.as_deref().is_some_and(|o| o != agent) {
            return None;
        }
        goal.step_contract
    }

    /// `nova.read_text`.
    pub async fn read_text(&self, rec: &mut CallRecord, a: ReadTextArgs) -> Result<ToolReply, CallError> {
        check_range("maxChars", a.max_chars, READ_TEXT_MAX_CHARS)?;
        if let Some(s) = &a.selector {
            check_selector(s)?;
            rec.obs.selector = Some(s.clone());
        }
        let tab = match self.tabs.enter(rec, &a.target_id, false).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        let params = ReadTextParams {
            target: tab.target_id.clone(),
            frame_id: parse_frame(a.frame_id.as_deref())?,
            selector: a.selector.clone(),
            max_chars: a.max_chars,
        };
        if a.selector.is_some() {
            rec.obs.signal_flags |= flags::SELECTOR_TOUCHED;
        } else {
            rec.obs.signal_flags |= flags::FULL_DOCUMENT;
        }
        let mut read: TextRead = match self.bridge.call(method::READ_TEXT, params, DEFAULT_TIMEOUT).await {
            Ok(r) => r,
            Err(e) => return Ok(ToolReply::bridge_failure(&e)),
        };
        rec.executed();
        rec.obs.url_after = Some(read.url.clone());
        let mut structured = ok_body(&tab.target_id);
        let hidden_chars = std::mem::take(&mut read.hidden_chars);
        merge(&mut structured, serde_json::to_value(&read).unwrap_or(Value::Null));
        note_injection(&mut structured, &read.text, [], hidden_chars);
        Ok(ToolReply::ok(structured).with_text(read.text))
    }

    /// `nova.navigate`.
    pub async fn navigate(&self, rec: &mut CallRecord, a: NavigateArgs) -> Result<ToolReply, CallError> {
        check_range("timeoutMs", a.timeout_ms, NAVIGATE_TIMEOUT_MS)?;
        check_url(&a.url)?;
        // A new tab leaves the current one alone: its lease does not matter.
        let entered = if a.new_tab {
            self.tabs.resolve(&a.target_id).await.inspect(|tab| {
                rec.obs.target_id = Some(tab.target_id.clone());
                rec.obs.url_before = Some(tab.url.clone());
                rec.obs.signal_flags |= flags::TARGET_RESOLVED;
            })
        } else {
            self.tabs.enter(rec, &a.target_id, true).await?
        };
        let tab = match entered {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        let params = NavigateParams {
            target: tab.target_id.clone(),
            url: a.url.clone(),
            new_tab: a.new_tab,
            timeout_ms: a.timeout_ms,
        };
        let wait = Duration::from_millis(u64::from(a.timeout_ms) + 5000);
        let nav: NavigateResult = match self.bridge.call(method::NAVIGATE, params, wait).await {
            Ok(n) => n,
            Err(e) => return Ok(ToolReply::bridge_failure(&e)),
        };
        rec.executed();
        rec.obs.signal_flags |= flags::NAVIGATION_COMMITTED;
        rec.obs.target_id = Some(nav.target_id.clone());
        rec.obs.url_after = Some(nav.url.clone());
        rec.obs.nav_epoch_after = Some(nav.nav_epoch);
        self.bridge.landed(&nav.target_id, &nav.url, nav.nav_epoch);
        if a.new_tab {
            let agent = rec.obs.agent_id.clone();
            self.leases.auto_claim(&nav.target_id, &agent).map_err(CallError::Owner)?;
        }
        let mut structured = ok_body(&nav.target_id);
        merge(&mut structured, serde_json::to_value(&nav).unwrap_or(Value::Null));
        structured["okHints"] = crate::ok::page::at(self.ok, self.data, &nav.target_id, &nav.url)
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "operational knowledge not read");
                Value::Null
            });
        let facts = crate::pks::delivery::PageFacts::default();
        self.deliver_pks(rec, &mut structured, &nav.url, a.pks_include, facts);
        if !nav.load_complete {
            structured["status"] = json!("partial");
            structured["reasonCode"] = json!("load_incomplete");
        }
        Ok(ToolReply::ok(structured))
    }

    /// What click and type share before dispatch: argument checks, the target and its lease,
    /// and the contract (given, or the current goal step's).
    async fn prepare_action(
        &self,
        rec: &mut CallRecord,
        target_id: &str,
        selector: &str,
        frame_id: Option<&str>,
        contract: Option<TransitionContract>,
    ) -> Result<Result<Prepared, ToolReply>, CallError> {
        check_selector(selector)?;
        let frame_id = parse_frame(frame_id)?;
        if let Some(c) = &contract {
            c.validate(false).map_err(|m| CallError::invalid("transitionContract", m))?;
        }
        rec.obs.selector = Some(selector.to_owned());
        let tab = match self.tabs.enter(rec, target_id, true).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(Err(reply)),
        };
        rec.obs.signal_flags |= flags::SELECTOR_TOUCHED;
        let contract = contract.or_else(|| self.step_contract(&tab.target_id, &rec.obs.agent_id));
        // A contract guards a commit point only if it says what the outcome looks like; with
        // empty postconditions the page refuses commit points (fail closed).
        let guarded = contract.as_ref().is_some_and(|c| !c.postconditions.is_empty());
        Ok(Ok(Prepared { tab, frame_id, contract, guarded }))
    }

    /// `nova.click_selector`.
    pub async fn click(&self, rec: &mut CallRecord, a: ClickArgs) -> Result<ToolReply, CallError> {
        let p = match self
            .prepare_action(rec, &a.target_id, &a.selector, a.frame_id.as_deref(), a.transition_contract)
            .await?
        {
            Ok(p) => p,
            Err(reply) => return Ok(reply),
        };
        let params = ClickParams {
            target: p.tab.target_id.clone(),
            frame_id: p.frame_id,
            selector: a.selector,
            guarded: p.guarded,
            double_click: a.double_click,
        };
        if let Some(contract) = &p.contract {
            return self.guard.guarded(rec, &p.tab, PageAction::Click(params), contract).await;
        }
        let report = self.bridge.call::<ActionReport>(method::CLICK, params, DEFAULT_TIMEOUT).await;
        Ok(crate::browse::Browser::action_reply(self.bridge, rec, &p.tab, report))
    }

    /// `nova.type_selector`.
    pub async fn type_text(&self, rec: &mut CallRecord, a: TypeArgs) -> Result<ToolReply, CallError> {
        let chars = check_chars("text", &a.text, TYPE_MAX_CHARS)?;
        let p = match self
            .prepare_action(rec, &a.target_id, &a.selector, a.frame_id.as_deref(), a.transition_contract)
            .await?
        {
            Ok(p) => p,
            Err(reply) => return Ok(reply),
        };
        let params = TypeParams {
            target: p.tab.target_id.clone(),
            frame_id: p.frame_id,
            selector: a.selector,
            guarded: p.guarded,
            text: a.text,
            clear: a.clear,
            press_enter: a.press_enter,
        };
        let tab = p.tab;
        let mut reply = match &p.contract {
            Some(contract) => self.guard.guarded(rec, &tab, PageAction::Type(params), contract).await?,
            None => {
                let report = self.bridge.call::<ActionReport>(method::TYPE, params, DEFAULT_TIMEOUT).await;
                crate::browse::Browser::action_reply(self.bridge, rec, &tab, report)
            }
        };
        reply.structured["typedChars"] = json!(chars);
        Ok(reply)
    }

    pub(crate) fn action_reply(
        bridge: &crate::bridge::Bridge,
        rec: &mut CallRecord,
        tab: &TabInfo,
        report: Result<ActionReport, BridgeError>,
    ) -> ToolReply {
        match report {
            Ok(r) => {
                rec.executed();
                rec.obs.url_after = Some(r.url_after.clone());
                if r.navigated {
                    rec.obs.signal_flags |= flags::NAVIGATION_COMMITTED;
                    rec.obs.nav_epoch_after = r.nav_epoch;
                    if let Some(epoch) = r.nav_epoch {
                        bridge.landed(&tab.target_id, &r.url_after, epoch);
                    }
                }
                if r.action_dispatched {
                    rec.obs.signal_flags |= flags::MUTATION_COMMITTED;
                }
                let mut structured = ok_body(&tab.target_id);
                merge(&mut structured, serde_json::to_value(&r).unwrap_or(Value::Null));
                ToolReply::ok(structured)
            }
            Err(e) => {
                let mut reply = ToolReply::bridge_failure(&e);
                // Page-side refusals (not visible, covered, disabled) happen before any event is
                // dispatched; timeouts, disconnects and a frame gone after taking the action
                // leave the question open.
                let dispatched = match &e {
                    BridgeError::Remote { code, .. } if code == nova_shared::reason::GONE_AFTER_DISPATCH => {
                        reply.structured["retryAdvice"] = json!("check_postcondition_first");
                        Value::Null
                    }
                    BridgeError::Remote { .. } => json!(false),
                    _ => Value::Null,
                };
                reply.structured["actionDispatched"] = dispatched;
                reply.structured["targetId"] = json!(tab.target_id);
                match &e {
                    BridgeError::Remote { code, message }
                        if code == nova_shared::reason::FILE_INPUT_CLICK =>
                    {
                        note_file_input_refusal(&mut reply.structured, message);
                    }
                    // A page blocked in alert() / confirm() / beforeunload answers nothing.
                    BridgeError::Timeout { .. } => {
                        reply.structured["nativeDialogWarning"] = json!(NATIVE_DIALOG_TIMEOUT);
                    }
                    _ => {}
                }
                reply
            }
        }
    }
}

/// The text rendering of a page model agents read: short lines, refs first.
fn render_page(p: &PageModel, frames: &[String]) -> String {
    let mut out = format!("{} — {}\nstate: {}\n", p.title, p.url, p.page_state);
    if let Some(w) = &p.identity_overlay_warning {
        let items: Vec<String> = w
            .items
            .iter()
            .map(|i| format!("{} {}{}", i.kind, i.provider, if i.blocking { " (blocking)" } else { "" }))
            .collect();
        out.push_str(&format!("overlay: {} — {}: {}\n", items.join(", "), w.recommended_action, w.message));
    }
    if let Some(w) = &p.autofill_warning {
        let fields: Vec<String> =
            w.fields.iter().map(|f| format!("{} {}", f.selector, f.autofill_field_role)).collect();
        out.push_str(&format!("autofill: {} — {}\n", fields.join(", "), w.message));
    }
    if let Some(w) = &p.native_dialog_warning {
        let on = if w.elements.is_empty() { String::new() } else { format!("{} — ", w.elements.join(" ")) };
        out.push_str(&format!("native dialogs: {on}{}\n", w.message));
    }
    if let Some(asked) = &p.http_sign_in {
        out.push_str(&format!("http sign-in: {}\n", asked.question()));
    }
    for h in &p.framework_hints {
        out.push_str(&format!("framework: {} ({}) — {}\n", h.framework, h.evidence, h.hint));
    }
    for f in frames {
        out.push_str(f);
        out.push('\n');
    }
    if !p.landmarks.is_empty() {
        out.push_str(&format!("landmarks: {}\n", p.landmarks.join("; ")));
    }
    for f in &p.forms {
        out.push_str(f);
        out.push('\n');
    }
    out.push_str("elements:\n");
    for e in &p.elements {
        out.push_str(e);
        out.push('\n');
    }
    out.push_str("text:\n");
    out.push_str(&p.text);
    if p.truncated.any {
        out.push_str(&format!(
            "\n[truncated: {} elements, {} text chars in total]",
            p.truncated.elements_total, p.truncated.text_chars_total
        ));
    }
    out
}

/// Adds `promptInjectionWarning` when the text the agent gets addresses AI agents with orders,
/// or the page hid text in invisible characters (`hidden_chars` taken out of it).
fn note_injection<'a>(
    structured: &mut Value,
    text: &str,
    elements: impl IntoIterator<Item = &'a str>,
    hidden_chars: u32,
) {
    let found = nova_shared::injection::scan(text, elements);
    if let Some(w) = nova_shared::injection::with_hidden(found, hidden_chars) {
        structured["promptInjectionWarning"] = serde_json::to_value(w).unwrap_or(Value::Null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_errors_name_field_and_bounds() {
        let err = check_range("maxElements", 9000, PERCEIVE_MAX_ELEMENTS).expect_err("out of range");
        let text = err.to_string();
        assert!(text.contains("maxElements") && text.contains("5000") && text.contains("9000"), "{text}");
        check_range("maxElements", 1, PERCEIVE_MAX_ELEMENTS).expect("lower bound inclusive");
    }

    #[test]
    fn urls_outside_the_allowed_schemes_are_refused() {
        assert!(check_url("javascript:alert(1)").is_err());
        assert!(check_url("chrome://settings").is_err());
        check_url("https://example.com/").expect("https");
        check_url("about:blank").expect("blank");
    }

    #[test]
    fn unknown_fields_are_rejected_by_name() {
        let err =
            serde_json::from_value::<ClickArgs>(json!({"selector": "a", "bogus": 1})).expect_err("unknown");
        assert!(err.to_string().contains("bogus"));
    }
}
