//! The MCP server handler. One [`NovaServer`] per MCP session; it translates `tools/list` and
//! `tools/call` and nothing else.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ErrorData,
    Implementation, InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::json;

use super::listing::Listing;
use crate::call::{CallError, Session, ToolReply};
use crate::hub::Hub;
use crate::lease::OWNER_MISMATCH_CODE;

/// Instructions sent to agents at initialize.
pub const INSTRUCTIONS: &str = "Nova drives the user's own browser. Read before acting: call \
nova.perceive to see the page (elements come with refs such as e12 that work as selectors), then \
act with nova.click_selector / nova.type_selector and check the result. Every call is recorded as \
evidence. Use nova.tab_claim when several agents share the browser.";

/// The server info every Nova MCP endpoint reports.
pub fn server_info() -> InitializeResult {
    InitializeResult::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
        .with_server_info(Implementation::new("nova", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
}

/// Turns a tool reply into an MCP result.
pub fn to_result(reply: ToolReply) -> CallToolResult {
    let text = reply.text.unwrap_or_else(|| reply.structured.to_string());
    let mut content = Vec::new();
    if let Some((data, mime)) = reply.image {
        content.push(ContentBlock::image(data, mime));
    }
    content.push(ContentBlock::text(text));
    let mut result =
        if reply.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    result.structured_content = Some(reply.structured);
    if !reply.meta.is_empty() {
        result.meta = Some(rmcp::model::MetaObject(reply.meta));
    }
    result
}

/// Turns a protocol-level call error into a JSON-RPC error.
pub fn to_error(e: &CallError) -> ErrorData {
    match e {
        CallError::InvalidParams { field, message } => ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            message.clone(),
            Some(json!({"reasonCode": e.reason_code(), "field": field})),
        ),
        CallError::UnknownTool(name) => ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!("unknown tool `{name}`"),
            Some(json!({"reasonCode": "unknown_tool"})),
        ),
        CallError::UnknownScan(id) => ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!("unknown scanId `{id}`; known: {}", nova_shared::protocol::scan::ALL.join(", ")),
            Some(
                json!({"reasonCode": "unknown_scan_id", "field": "scanId", "knownScanIds": nova_shared::protocol::scan::ALL}),
            ),
        ),
        CallError::NotAllowed { reason, message } => ErrorData::new(
            ErrorCode(-32002),
            message.clone(),
            Some(json!({"reasonCode": reason, "retryable": false})),
        ),
        CallError::Store(m) => ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            format!("the evidence store failed: {m}"),
            Some(json!({"reasonCode": "store_error", "retryable": true})),
        ),
        CallError::Coverage { message, data } => {
            let mut data = data.clone();
            data["reasonCode"] = json!(crate::call::COVERAGE_NOT_MET);
            data["retryable"] = json!(true);
            ErrorData::new(ErrorCode(crate::call::COVERAGE_NOT_MET_CODE), message.clone(), Some(data))
        }
        CallError::Owner(o) => ErrorData::new(
            ErrorCode(OWNER_MISMATCH_CODE),
            o.to_string(),
            Some(json!({
                "reasonCode": e.reason_code(), "targetId": o.target_id, "claimOwner": o.owner,
                "leaseRemainingMs": o.remaining_ms, "retryable": true,
                "retryAfterMs": o.remaining_ms.min(30_000),
            })),
        ),
    }
}

/// One MCP session's handler.
#[derive(Clone)]
pub struct NovaServer {
    hub: Arc<Hub>,
    session: Session,
    /// What `tools/list` shows before bundles are loaded ([`super::listing`]).
    listing: Arc<Mutex<Listing>>,
    _presence: Arc<crate::aag::ui::Leave>,
}

impl NovaServer {
    /// A handler for a new session.
    pub fn new(hub: Arc<Hub>) -> Self {
        let session = Session::new();
        let presence = Arc::new(crate::aag::ui::Leave::join(hub.clone(), &session.id));
        Self { hub, session, listing: Arc::default(), _presence: presence }
    }

    /// The tools this session lists now: its listing and the bundles it has loaded.
    fn listed(&self) -> Vec<rmcp::model::Tool> {
        let loaded =
            crate::aag::state_of(&self.session).lock().unwrap_or_else(|p| p.into_inner()).bundles.clone();
        self.listing.lock().unwrap_or_else(|p| p.into_inner()).tools(loaded.iter().map(String::as_str))
    }
}

impl ServerHandler for NovaServer {
    fn get_info(&self) -> InitializeResult {
        server_info()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.hub.presence.named(&self.session.id, &request.client_info.name);
        let relay = request
            .capabilities
            .experimental
            .as_ref()
            .and_then(|e| e.get(crate::aag::resume::RELAY_CAPABILITY));
        if let Some(key) = relay.and_then(|r| r.get("session")).and_then(serde_json::Value::as_str) {
            crate::aag::facts::resume_session(&self.hub, &self.session, key).await;
        }
        let asked = match context.extensions.get::<axum::http::request::Parts>().and_then(|p| p.uri.query()) {
            Some(query) => Listing::from_query(query).transpose().map_err(|m| {
                ErrorData::invalid_params(m, Some(json!({"reasonCode": "invalid_tools", "field": "tools"})))
            })?,
            None => None,
        };
        let asked = asked.or_else(|| {
            Listing::from_capability(
                request.capabilities.experimental.as_ref()?.get(super::listing::CAPABILITY),
            )
        });
        if let Some(listing) = asked {
            *self.listing.lock().unwrap_or_else(|p| p.into_inner()) = listing;
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let loads = request.name == crate::aag::tools::TOOLS_BUNDLE.name;
        let before = loads.then(|| self.listed().len());
        // rmcp hands the request's `_meta` over in the context.
        let timed = context.meta.0.get(crate::stages::META_KEY) == Some(&true.into());
        let call = crate::dispatch::call_tool(&self.hub, &self.session, &request.name, args);
        let result = if timed {
            let (mut result, stages) = crate::stages::collect(call).await;
            if let Ok(reply) = result.as_mut() {
                reply.meta.insert(crate::stages::META_KEY.to_owned(), stages);
            }
            result
        } else {
            call.await
        };
        // A bundle loaded: its tools are listed from now on; say so (MCP `listChanged`).
        if before.is_some_and(|n| n != self.listed().len()) {
            let _ = context.peer.notify_tool_list_changed().await;
        }
        match result {
            Ok(reply) => Ok(to_result(reply).into()),
            Err(e) => Err(to_error(&e)),
        }
    }
}
