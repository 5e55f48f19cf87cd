//! The remaining browser tools: `nova.route` (client-side routing),
//! `nova.file_upload`, `nova.dismiss_blockers` and `nova.run_sequence`. Each is recorded as
//! evidence like any other call; the steps of a sequence go through the full call pipeline one
//! by one.

use std::path::PathBuf;

use base64::Engine as _;
use nova_shared::page::ActionReport;
use nova_shared::protocol::{
    DismissParams, DismissResult, RouteParams, RouteResult, UploadFile, UploadParams, method,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::bridge::DEFAULT_TIMEOUT;
use crate::call::check_range;
use crate::call::{CallError, CallRecord, ToolReply};
use crate::observation::{ActionKind, flags};
use crate::registry::{self, Bundle, Evidence, PageUse, ToolDef};
use crate::replies::{merge, ok_body, parse_frame};
use crate::tuc::sources;

/// What the page tools reach.
pub struct Pages<'h> {
    /// The whole hub: a sequence runs other tools through the call pipeline.
    pub hub: &'h crate::hub::Hub,
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
}

impl<'h> From<&'h crate::hub::Hub> for Pages<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { hub, tabs: hub.tabs(), bridge: &hub.bridge }
    }
}

crate::tool_args! {
    /// `nova.route`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct RouteArgs [tab, agent] {
        /// Where to go: a path (`/settings`), a relative URL, or an absolute URL on the same origin.
        pub path: String,
        /// Replace the current history entry instead of adding one.
        #[serde(default)]
        pub replace: bool,
    }
}

/// Largest total upload, bytes.
pub const MAX_UPLOAD_BYTES: usize = 25 * 1024 * 1024;
/// Most files per upload.
pub const MAX_UPLOAD_FILES: usize = 20;

/// A file given inline.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InlineFile {
    /// File name the page sees.
    pub name: String,
    /// MIME type (default `application/octet-stream`).
    #[serde(default)]
    pub mime_type: Option<String>,
    /// Content, base64.
    pub content_base64: String,
}

crate::tool_args! {
    /// `nova.file_upload`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct UploadArgs [tab, agent] {
        /// Frame id (default: the top frame).
        #[serde(default)]
        pub frame_id: Option<String>,
        /// The `<input type=file>` (selector or ref).
        pub selector: String,
        /// Absolute paths of files on this computer.
        #[serde(default)]
        pub paths: Vec<String>,
        /// Files given inline.
        #[serde(default)]
        pub files: Vec<InlineFile>,
    }
}

crate::tool_args! {
    /// `nova.dismiss_blockers`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct DismissArgs [tab, agent] {
        /// Most blockers to act on, 1-10 (default 3).
        #[serde(default = "three")]
        #[schemars(range(min = 1, max = 10))]
        pub max_actions: u32,
        /// Allow "accept" controls when nothing declines or closes (default false: consent is
        /// declined, never given, unless the person allows it here).
        #[serde(default)]
        pub allow_accept: bool,
    }
}

fn three() -> u32 {
    3
}

/// One step of a sequence.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Step {
    /// A browser tool (`nova.navigate`, `nova.click_selector`, ...).
    pub tool: String,
    /// Its arguments (`targetId` and `agentId` default to the sequence's).
    #[serde(default)]
    pub args: Map<String, Value>,
}

crate::tool_args! {
    /// `nova.run_sequence`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct SequenceArgs [tab, agent] {
        /// 1-20 steps, run in order; the first failure stops the sequence.
        pub steps: Vec<Step>,
    }
}

/// Most steps in a sequence.
pub const MAX_STEPS: usize = 20;

/// Tools a sequence may run (registry: `in_sequence`).
pub fn sequence_tools() -> Vec<&'static str> {
    crate::registry::all().iter().filter(|t| t.in_sequence).map(|t| t.name).collect()
}

crate::tool! {
    /// `nova.route` in the tool registry.
    pub static ROUTE = ToolDef::new(
        "nova.route",
        "Route inside a single-page web app without reloading it (history push + popstate), on the \
                     same origin; use nova.navigate for other sites.",
        registry::schema::<RouteArgs>,
        crate::handler!(Pages::route),
    )
    .bundles(&[Bundle::BrowserAutomation])
    .tob(ActionKind::Navigate, "webpage", flags::NAVIGATION_INTENT)
    .page(PageUse::Navigates)
    .evidence(Evidence::Visit)
    .in_sequence();
}

crate::tool! {
    /// `nova.file_upload` in the tool registry.
    pub static FILE_UPLOAD = ToolDef::new(
        "nova.file_upload",
        "Put files (absolute paths on this computer, or inline base64) into an <input type=file>, \
                     as the browser's file picker would.",
        registry::schema::<UploadArgs>,
        crate::handler!(Pages::file_upload),
    )
    .bundles(&[Bundle::BrowserAutomation])
    .tob(
        ActionKind::Interact,
        "dom_node",
        flags::SELECTOR_TOUCHED | flags::INPUT_SUPPLIED | flags::MUTATION_ATTEMPTED | flags::FILE_EXPOSED,
    )
    .page(PageUse::Acts { needs_perception: true })
    .in_sequence();
}

crate::tool! {
    /// `nova.dismiss_blockers` in the tool registry.
    pub static DISMISS_BLOCKERS = ToolDef::new(
        "nova.dismiss_blockers",
        "Close visible blockers (cookie/consent banners, dialogs, modal layers): first with what \
         Nova knows of the site (its active per-site entries on the page, applied and verified: \
         pksUsed), then with their decline or close control; consent is never accepted unless \
         allowAccept is set.",
        registry::schema::<DismissArgs>,
        crate::handler!(Pages::dismiss_blockers),
    )
    .bundles(&[Bundle::BrowserAutomation])
    .tob(ActionKind::Interact, "webpage", flags::MUTATION_ATTEMPTED)
    .page(PageUse::Acts { needs_perception: false })
    .in_sequence();
}

crate::tool! {
    /// `nova.run_sequence` in the tool registry.
    pub static RUN_SEQUENCE = ToolDef::new(
        "nova.run_sequence",
        "Run up to 20 browser tool calls in order; each is checked and recorded like a single call and \
                     the first failure stops the sequence.",
        registry::schema::<SequenceArgs>,
        crate::handler!(Pages::run_sequence),
    )
    .bundles(&[Bundle::BrowserAutomation]);
}

impl Pages<'_> {
    /// `nova.route`.
    pub async fn route(&self, rec: &mut CallRecord, a: RouteArgs) -> Result<ToolReply, CallError> {
        if a.path.trim().is_empty() {
            return Err(CallError::invalid("path", "`path` must not be empty"));
        }
        let tab = match self.tabs.enter(rec, &a.target_id, true).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        rec.obs.signal_flags |= flags::NAVIGATION_INTENT;
        // The tab list follows browser events and may trail a navigation that just ended (in
        // Firefox even `tabs.query` can): resolve against the document's own URL.
        // Firefox may still answer from the tab's initial about:blank for a moment after a
        // navigation ended; a route never starts from about:blank, so wait that out (2 s).
        let mut current = tab.url.clone();
        for attempt in 0..10 {
            let read = nova_shared::protocol::ReadTextParams {
                target: tab.target_id.clone(),
                frame_id: None,
                selector: None,
                max_chars: 1,
            };
            if let Ok(t) = self
                .bridge
                .call::<nova_shared::page::TextRead>(
                    nova_shared::protocol::method::READ_TEXT,
                    read,
                    crate::bridge::DEFAULT_TIMEOUT,
                )
                .await
            {
                current = t.url;
            }
            if current != "about:blank" || attempt == 9 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        let Some(url) = sources::resolve(&current, &a.path) else {
            return Err(CallError::invalid("path", format!("`{}` is not a route", a.path)));
        };
        if crate::url::origin(&url) != crate::url::origin(&current) {
            return Ok(ToolReply::failure(
                "route_cross_origin",
                format!("{url} is on another origin than {current}; use nova.navigate"),
                false,
            ));
        }
        let params = RouteParams { target: tab.target_id.clone(), url, replace: a.replace };
        match self.bridge.call::<RouteResult>(method::ROUTE, params, DEFAULT_TIMEOUT).await {
            Ok(r) => {
                rec.executed();
                rec.obs.url_after = Some(r.url_after.clone());
                rec.obs.signal_flags |= flags::NAVIGATION_COMMITTED;
                let mut body = ok_body(&tab.target_id);
                merge(&mut body, serde_json::to_value(&r).unwrap_or(Value::Null));
                body["hint"] =
                    json!("The document was not reloaded; nova.perceive shows what the app rendered.");
                Ok(ToolReply::ok(body))
            }
            Err(e) => Ok(ToolReply::bridge_failure(&e)),
        }
    }

    /// `nova.file_upload`.
    pub async fn file_upload(&self, rec: &mut CallRecord, a: UploadArgs) -> Result<ToolReply, CallError> {
        let count = a.paths.len() + a.files.len();
        if count == 0 {
            return Err(CallError::invalid("paths", "give `paths` or `files` (at least one file)"));
        }
        if count > MAX_UPLOAD_FILES {
            return Err(CallError::invalid(
                "files",
                format!("{count} files; at most {MAX_UPLOAD_FILES} per upload"),
            ));
        }
        let mut files = Vec::new();
        let mut total = 0usize;
        for p in &a.paths {
            let path = PathBuf::from(p);
            if !path.is_absolute() {
                return Err(CallError::invalid("paths", format!("`{p}` is not an absolute path")));
            }
            let meta =
                std::fs::metadata(&path).map_err(|e| CallError::invalid("paths", format!("{p}: {e}")))?;
            total += usize::try_from(meta.len()).unwrap_or(usize::MAX);
            if total > MAX_UPLOAD_BYTES {
                return Err(CallError::invalid(
                    "paths",
                    format!("the files exceed {MAX_UPLOAD_BYTES} bytes"),
                ));
            }
            let bytes = std::fs::read(&path).map_err(|e| CallError::invalid("paths", format!("{p}: {e}")))?;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            files.push(UploadFile {
                mime_type: mime_for(&name).into(),
                name,
                content_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            });
        }
        for f in &a.files {
            let len = base64::engine::general_purpose::STANDARD
                .decode(&f.content_base64)
                .map_err(|e| {
                    CallError::invalid("files.contentBase64", format!("{}: not base64: {e}", f.name))
                })?
                .len();
            total += len;
            if total > MAX_UPLOAD_BYTES {
                return Err(CallError::invalid(
                    "files",
                    format!("the files exceed {MAX_UPLOAD_BYTES} bytes"),
                ));
            }
            files.push(UploadFile {
                name: f.name.clone(),
                mime_type: f.mime_type.clone().unwrap_or_else(|| mime_for(&f.name).into()),
                content_base64: f.content_base64.clone(),
            });
        }
        let frame_id = parse_frame(a.frame_id.as_deref())?;
        let tab = match self.tabs.enter(rec, &a.target_id, true).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        rec.obs.selector = Some(a.selector.clone());
        rec.obs.signal_flags |= flags::SELECTOR_TOUCHED | flags::INPUT_SUPPLIED | flags::FILE_EXPOSED;
        let params = UploadParams { target: tab.target_id.clone(), frame_id, selector: a.selector, files };
        let report = self.bridge.call::<ActionReport>(method::UPLOAD, params, DEFAULT_TIMEOUT * 3).await;
        let mut reply = crate::browse::Browser::action_reply(self.bridge, rec, &tab, report);
        reply.structured["bytes"] = json!(total);
        Ok(reply)
    }

    /// `nova.dismiss_blockers`.
    pub async fn dismiss_blockers(
        &self,
        rec: &mut CallRecord,
        a: DismissArgs,
    ) -> Result<ToolReply, CallError> {
        check_range("maxActions", a.max_actions, (1, 10, 3))?;
        let tab = match self.tabs.enter(rec, &a.target_id, true).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        // What the site is known for comes first: its active entries, verified when applied.
        let known = crate::pks::apply::PksApply::from(self.hub).consult(rec, &tab).await?;
        let params = DismissParams {
            target: tab.target_id.clone(),
            max_actions: a.max_actions,
            allow_accept: a.allow_accept,
        };
        match self.bridge.call::<DismissResult>(method::DISMISS, params, DEFAULT_TIMEOUT).await {
            Ok(r) => {
                rec.executed();
                rec.obs.url_after = Some(r.url_after.clone());
                if !r.dismissed.is_empty() {
                    rec.obs.signal_flags |= flags::MUTATION_COMMITTED;
                }
                let mut body = ok_body(&tab.target_id);
                merge(&mut body, serde_json::to_value(&r).unwrap_or(Value::Null));
                body["actionDispatched"] = json!(!r.dismissed.is_empty() || !known.is_empty());
                body["pksUsed"] = json!(known);
                if r.remaining > 0 {
                    body["hint"] = json!(
                        "Some blockers remain: nova.perceive shows them; close them with nova.click_selector."
                    );
                }
                Ok(ToolReply::ok(body))
            }
            Err(e) => Ok(ToolReply::bridge_failure(&e)),
        }
    }

    /// `nova.run_sequence`: each step is a full tool call (validated, gated, recorded); the
    /// first failure stops the rest.
    pub async fn run_sequence(&self, rec: &mut CallRecord, a: SequenceArgs) -> Result<ToolReply, CallError> {
        if a.steps.is_empty() || a.steps.len() > MAX_STEPS {
            return Err(CallError::invalid(
                "steps",
                format!("`steps` has {} entries; 1-{MAX_STEPS} are allowed", a.steps.len()),
            ));
        }
        for (i, s) in a.steps.iter().enumerate() {
            if !crate::registry::find(&s.tool).is_some_and(|t| t.in_sequence) {
                return Err(CallError::invalid(
                    &format!("steps[{i}].tool"),
                    format!(
                        "steps[{i}].tool: `{}` cannot run in a sequence; allowed: {}",
                        s.tool,
                        sequence_tools().join(", ")
                    ),
                ));
            }
        }
        rec.executed();
        let session = rec.session.clone();
        let agent = rec.obs.agent_id.clone();
        let mut results = Vec::new();
        let mut stopped_at = None;
        for (i, step) in a.steps.into_iter().enumerate() {
            let mut args = step.args;
            args.entry("targetId").or_insert_with(|| json!(a.target_id));
            args.entry("agentId").or_insert_with(|| json!(agent));
            let outcome = Box::pin(crate::dispatch::call_tool(self.hub, &session, &step.tool, args)).await;
            let (ok, body) = match outcome {
                Ok(reply) => (!reply.is_error, reply.structured),
                Err(e) => (
                    false,
                    json!({"ok": false, "status": "invalid", "reasonCode": e.reason_code(), "message": e.to_string()}),
                ),
            };
            results.push(json!({"index": i, "tool": step.tool, "ok": ok, "result": body}));
            if !ok {
                stopped_at = Some(i);
                break;
            }
        }
        let all_ok = stopped_at.is_none();
        let body = json!({
            "ok": all_ok, "status": if all_ok { "ok" } else { "failed" },
            "reasonCode": stopped_at.map(|_| "sequence_step_failed"),
            "stepsRun": results.len(), "stoppedAt": stopped_at, "steps": results,
        });
        let mut reply = ToolReply::ok(body);
        reply.is_error = !all_ok;
        Ok(reply)
    }
}

fn mime_for(name: &str) -> &'static str {
    let ext = name.rsplit('.').next().unwrap_or_default().to_ascii_lowercase();
    match ext.as_str() {
        "txt" => "text/plain",
        "csv" => "text/csv",
        "json" => "application/json",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "html" | "htm" => "text/html",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}
