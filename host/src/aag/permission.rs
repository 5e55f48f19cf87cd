//! `nova.permission_prompt`: an agent asks the person in the browser, who approves or denies in
//! the extension (a prompt window and the popup); no answer in time is `timed_out`. Every
//! question and its decision is kept in the `approvals` table (the options page lists them).

use std::time::{Duration, Instant};

use nova_shared::ui::{Prompt, method};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::call::{CallError, CallRecord, ToolReply};
use crate::registry::{self, Bundle, ToolDef};
use crate::time::now_ms;

/// What `nova.permission_prompt` reaches.
pub struct Asking<'h> {
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// The person's controls.
    pub control: &'h crate::aag::control::Control,
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
    /// Permission prompts.
    pub prompts: &'h crate::aag::prompt::Prompts,
}

impl<'h> From<&'h crate::hub::Hub> for Asking<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { tabs: hub.tabs(), control: &hub.control, bridge: &hub.bridge, prompts: &hub.prompts }
    }
}

/// `timeoutMs` bounds and default.
pub const TIMEOUT_MS: (u32, u32, u32) = (5_000, 600_000, 120_000);
/// Longest title, in characters.
pub const TITLE_MAX: usize = 120;
/// Longest message, in characters.
pub const MESSAGE_MAX: usize = 2_000;

fn default_agent() -> String {
    crate::lease::DEFAULT_AGENT.to_owned()
}

fn default_timeout() -> u32 {
    TIMEOUT_MS.2
}

/// `nova.permission_prompt` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PromptArgs {
    /// The question for the person: what you want to do and why (1-2000 characters).
    pub message: String,
    /// A short title (at most 120 characters; default "An agent asks for permission").
    #[serde(default)]
    pub title: Option<String>,
    /// The tab the question is about; an approval also clears `safety.identity_overlay` there.
    #[serde(default)]
    pub target_id: Option<String>,
    /// Asking agent.
    #[serde(default = "default_agent")]
    pub agent_id: String,
    /// How long to wait for the person, ms (5000-600000, default 120000).
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 5000, max = 600000))]
    pub timeout_ms: u32,
}

fn check_text(field: &str, value: &str, max: usize) -> Result<(), CallError> {
    let n = value.chars().count();
    if value.trim().is_empty() || n > max {
        return Err(CallError::invalid(
            field,
            format!("`{field}` must have 1 to {max} characters (not blank); it has {n}"),
        ));
    }
    Ok(())
}

crate::tool! {
    /// `nova.permission_prompt` in the tool registry.
    pub static PERMISSION_PROMPT = ToolDef::new(
        "nova.permission_prompt",
        "Ask the person in the browser for permission (a prompt window in the extension). Waits for \
                     their answer: decision approved, denied or timed_out (treat anything but approved as no).",
        registry::schema::<PromptArgs>,
        crate::handler!(Asking::permission_prompt),
    )
    .bundles(&[Bundle::BrowserAutomation, Bundle::SystemTools]);
}

impl Asking<'_> {
    /// `nova.permission_prompt`.
    pub async fn permission_prompt(
        &self,
        rec: &mut CallRecord,
        a: PromptArgs,
    ) -> Result<ToolReply, CallError> {
        check_text("message", &a.message, MESSAGE_MAX)?;
        if let Some(t) = &a.title {
            check_text("title", t, TITLE_MAX)?;
        }
        crate::call::check_range("timeoutMs", a.timeout_ms, TIMEOUT_MS)?;
        let page_url = match &a.target_id {
            Some(t) => match self.tabs.resolve(t).await {
                Ok(tab) => Some(tab.url),
                Err(reply) => return Ok(reply),
            },
            None => None,
        };
        if !self.bridge.is_connected() {
            return Ok(ToolReply::failure(
                "browser_not_connected",
                "the browser extension is not connected, so nobody can be asked",
                true,
            ));
        }
        let asked = now_ms();
        let prompt = Prompt {
            prompt_id: uuid::Uuid::new_v4().simple().to_string(),
            agent_id: a.agent_id.clone(),
            target_id: a.target_id.clone(),
            page_url,
            title: a.title.unwrap_or_else(|| "An agent asks for permission".to_owned()),
            message: a.message,
            decision: "pending".to_owned(),
            asked_at_ms: asked,
            expires_at_ms: Some(asked + i64::from(a.timeout_ms)),
            decided_at_ms: None,
        };
        self.control.record_prompt(&prompt).map_err(|e| CallError::Store(e.to_string()))?;
        rec.obs.target_id = a.target_id.clone();
        let rx = self.prompts.insert(prompt.clone());
        self.bridge.notify(method::PROMPT_OPEN, serde_json::to_value(&prompt).unwrap_or_default());
        tracing::info!(prompt = %prompt.prompt_id, "asking the person");
        rec.executed();
        let started = Instant::now();
        let decision = match tokio::time::timeout(Duration::from_millis(u64::from(a.timeout_ms)), rx).await {
            Ok(Ok(d)) => d,
            _ => {
                let mut p = self.prompts.expire(&prompt.prompt_id).unwrap_or(prompt.clone());
                p.decision = "timed_out".to_owned();
                p.decided_at_ms = Some(now_ms());
                if let Err(e) = self.control.decide(&p) {
                    tracing::error!(error = %e, "cannot store the prompt decision");
                }
                "timed_out".to_owned()
            }
        };
        self.bridge
            .notify(method::PROMPT_CLOSED, json!({"promptId": prompt.prompt_id, "decision": decision}));
        if decision == "approved"
            && let Some(t) = &a.target_id
        {
            self.control.set_overlay(t, 0, None);
        }
        let waited = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut body = json!({
            "ok": true,
            "status": "ok",
            "promptId": prompt.prompt_id,
            "decision": decision,
            "approved": decision == "approved",
            "waitedMs": waited,
        });
        if let Some(t) = a.target_id {
            body["targetId"] = json!(t);
        }
        let text = match decision.as_str() {
            "approved" => "The person approved.".to_owned(),
            "denied" => "The person denied: do not do it; ask what they want instead.".to_owned(),
            _ => format!(
                "No answer within {} s: treat it as not approved; you may ask again later.",
                a.timeout_ms / 1000
            ),
        };
        Ok(ToolReply::ok(body).with_text(text))
    }
}
