//! `nova.learn_feedback` (docs/learning.md, "Feedback"): the audit of learning-level changes,
//! newest first: which phenomenon moved, from where to where, why (the gates and evidence as
//! they stood), and when.

use rusqlite::params;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::promote::level_number;
use crate::call::{CallError, CallRecord, ToolReply, check_range};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// `limit` bounds and default.
pub const LIMIT: (u32, u32, u32) = (1, 100, 20);
/// How far back `since` defaults to, ms (7 days).
pub const DEFAULT_SINCE_MS: i64 = 7 * 86_400_000;

/// Arguments of `nova.learn_feedback`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FeedbackArgs {
    /// The site (default: every site; `*` too).
    #[serde(default)]
    pub scope: Option<String>,
    /// From when: ISO 8601 or ms since the epoch (default: 7 days ago).
    #[serde(default)]
    pub since: Option<Value>,
    /// Most events (1 to 100, default 20).
    #[serde(default = "limit")]
    pub limit: u32,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

fn limit() -> u32 {
    LIMIT.2
}

/// What `nova.learn_feedback` reaches.
pub struct Feedback<'h> {
    /// The journal.
    pub lcj: &'h crate::lcj::Journal,
}

impl<'h> From<&'h crate::hub::Hub> for Feedback<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { lcj: &hub.lcj }
    }
}

crate::tool! {
    /// `nova.learn_feedback` in the tool registry.
    pub static LEARN_FEEDBACK = ToolDef::new(
        "nova.learn_feedback",
        "Recent learning-level changes (promotions, demotions, retirements, revivals), newest \
         first: which phenomenon, from and to which level, and the gates and evidence that decided.",
        registry::schema::<FeedbackArgs>,
        crate::handler!(Feedback::learn_feedback),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::None)
    .read_only();
}

impl Feedback<'_> {
    /// `nova.learn_feedback`.
    pub async fn learn_feedback(
        &self,
        rec: &mut CallRecord,
        a: FeedbackArgs,
    ) -> Result<ToolReply, CallError> {
        check_range("limit", a.limit, LIMIT)?;
        let site = match a.scope.as_deref().map(str::trim) {
            None | Some("" | "*") => None,
            Some(s) => Some(crate::pks::scope::normalize(s)?),
        };
        let now = crate::clock::now_ms();
        let since = match &a.since {
            None | Some(Value::Null) => now - DEFAULT_SINCE_MS,
            Some(v) => crate::time::parse_time(v).ok_or_else(|| {
                CallError::invalid(
                    "since",
                    "`since` must be an ISO 8601 time (2026-11-20T10:00:00Z) or ms since the epoch",
                )
            })?,
        };
        let events = self.lcj.with(|c| {
            let mut stmt = c.prepare(
                "SELECT stable_id, context_host, from_level, to_level, reason_kind, reason_json, created_at, owner_id
                 FROM lcj_audit WHERE created_at >= ?1 AND (?2 IS NULL OR context_host = ?2)
                 ORDER BY created_at DESC, audit_id DESC LIMIT ?3",
            )?;
            stmt.query_map(params![since, site, a.limit], |r| {
                let (from, to): (String, String) = (r.get(2)?, r.get(3)?);
                let at: i64 = r.get(6)?;
                Ok(json!({
                    "stableId": r.get::<_, String>(0)?, "contextHost": r.get::<_, String>(1)?,
                    "fromLevel": level_number(&from), "toLevel": level_number(&to), "fromState": from, "toState": to,
                    "reasonKind": r.get::<_, String>(4)?,
                    "reason": serde_json::from_str::<Value>(&r.get::<_, String>(5)?).unwrap_or(Value::Null),
                    "agentId": r.get::<_, Option<String>>(7)?,
                    "createdAtMs": at, "createdAtUtc": crate::time::iso(at),
                }))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
        })?;
        rec.executed();
        Ok(ToolReply::ok(json!({
            "ok": true, "scope": site, "since": crate::time::iso(since), "limit": a.limit,
            "count": events.len(), "events": events,
        })))
    }
}
