//! `nova.memory_stats` (docs/ok.md, "Statistics"; docs/learning.md, "Journal"): what Nova's
//! memory holds over a window: OK's observations and facts (`crate::ok::stats`), and the
//! journal's tool events (by tool, and how many failed), candidates by status and origin,
//! observations by kind, the busiest components and sites.

use rusqlite::params;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::Journal;
use crate::call::{CallError, CallRecord, ToolReply, check_chars, check_range};
use crate::observation::ActionKind;
use crate::ok::{Knowledge, signals, stats as ok_stats};
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// `windowHours` bounds and default.
pub const WINDOW_HOURS: (u32, u32, u32) = (1, 720, 24);
/// `topComponents` bounds and default.
pub const TOP_COMPONENTS: (u32, u32, u32) = (1, 50, 5);

/// Arguments of `nova.memory_stats`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StatsArgs {
    /// Hours back to count (1 to 720, default 24).
    #[serde(default = "window_hours")]
    pub window_hours: u32,
    /// How many signal keys and services to list (1 to 50, default 5).
    #[serde(default = "top_components")]
    pub top_components: u32,
    /// Count only signal keys or services starting with this (`core.plan`, `acme`).
    #[serde(default)]
    pub component_filter: Option<String>,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

fn window_hours() -> u32 {
    WINDOW_HOURS.2
}

fn top_components() -> u32 {
    TOP_COMPONENTS.2
}

/// What `nova.memory_stats` reaches.
pub struct MemoryStats<'h> {
    /// OK's tables.
    pub ok: &'h Knowledge,
    /// The journal.
    pub lcj: &'h Journal,
    /// Settings (OK's freshness window).
    pub data: &'h crate::paths::DataDir,
}

impl<'h> From<&'h crate::hub::Hub> for MemoryStats<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { ok: &hub.ok, lcj: &hub.lcj, data: &hub.data }
    }
}

crate::tool! {
    /// `nova.memory_stats` in the tool registry.
    pub static MEMORY_STATS = ToolDef::new(
        "nova.memory_stats",
        "Counts of what Nova's memory holds over the last windowHours: operational knowledge \
         (observations by source and outcome, facts by state, conflicts, the busiest signal keys \
         and services) and the learning journal (tool events, candidates by status, observations \
         by kind, the busiest components and sites).",
        registry::schema::<StatsArgs>,
        crate::handler!(MemoryStats::memory_stats),
    )
    .bundles(&[Bundle::PageReadDebug, Bundle::PksLearning])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::None)
    .read_only();
}

impl MemoryStats<'_> {
    /// `nova.memory_stats`.
    pub async fn memory_stats(&self, rec: &mut CallRecord, a: StatsArgs) -> Result<ToolReply, CallError> {
        check_range("windowHours", a.window_hours, WINDOW_HOURS)?;
        check_range("topComponents", a.top_components, TOP_COMPONENTS)?;
        let filter = a.component_filter.as_deref().map(str::trim).filter(|f| !f.is_empty());
        check_chars("componentFilter", filter.unwrap_or_default(), signals::MAX_KEY_CHARS)?;
        let now = crate::clock::now_ms();
        let since = now - i64::from(a.window_hours) * 3_600_000;
        let q = ok_stats::Query {
            since,
            now,
            window_ms: crate::ok::window_ms(self.data),
            top: a.top_components as usize,
            filter,
        };
        let ok = ok_stats::stats(self.ok, &q)?;
        let complete = self.lcj.flush_within(crate::lcj::FLUSH_MAX).await;
        let lcj = stats(self.lcj, since, q.top, filter)?;
        rec.executed();
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok", "windowHours": a.window_hours, "since": crate::time::iso(since),
            "topComponents": a.top_components, "componentFilter": filter,
            "components": {"ok": ok, "lcj": lcj}, "ingestionComplete": complete,
        })))
    }
}

/// The counts since `since` (ms); `top` components and sites; only components or sites
/// starting with `filter`.
pub fn stats(j: &Journal, since: i64, top: usize, filter: Option<&str>) -> Result<Value, CallError> {
    j.with(|c| {
        let like = filter.map(|f| format!("{}%", f.replace('%', "\\%").replace('_', "\\_")));
        let top = i64::try_from(top).unwrap_or(i64::MAX);
        let counts = |sql: &str| -> rusqlite::Result<Map<String, Value>> {
            let mut stmt = c.prepare(sql)?;
            stmt.query_map(params![since, like], |r| Ok((r.get::<_, String>(0)?, json!(r.get::<_, i64>(1)?))))?
                .collect()
        };
        let ranked = |sql: &str, name: &str| -> rusqlite::Result<Vec<Value>> {
            let mut stmt = c.prepare(sql)?;
            stmt.query_map(params![since, like, top], |r| {
                Ok(json!({name: r.get::<_, String>(0)?, "count": r.get::<_, i64>(1)?}))
            })?
            .collect()
        };
        let site = "(?2 IS NULL OR context_host LIKE ?2 ESCAPE '\\')";
        let (events, failed): (i64, i64) = c.query_row(
            &format!("SELECT COUNT(*), COALESCE(SUM(success = 0), 0) FROM lcj_tool_events WHERE created_at >= ?1 AND {site}"),
            params![since, like],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let sessions: i64 = c.query_row(
            &format!("SELECT COUNT(DISTINCT activity_session_id) FROM lcj_tool_events WHERE created_at >= ?1 AND {site}"),
            params![since, like],
            |r| r.get(0),
        )?;
        let cand = "(?2 IS NULL OR component LIKE ?2 ESCAPE '\\' OR context_host LIKE ?2 ESCAPE '\\')";
        Ok(json!({
            "toolEvents": {"total": events, "failed": failed, "activitySessions": sessions,
                "byTool": counts(&format!("SELECT tool_name, COUNT(*) FROM lcj_tool_events WHERE created_at >= ?1 AND {site} GROUP BY tool_name"))?},
            "candidates": {
                "byStatus": counts(&format!("SELECT status, COUNT(*) FROM lcj_candidates WHERE updated_at >= ?1 AND {cand} GROUP BY status"))?,
                "byOrigin": counts(&format!("SELECT origin, COUNT(*) FROM lcj_candidates WHERE updated_at >= ?1 AND {cand} GROUP BY origin"))?,
            },
            "observations": {"byKind": counts(&format!("SELECT kind, COUNT(*) FROM lcj_observations WHERE created_at >= ?1 AND {site} GROUP BY kind"))?},
            "topComponents": ranked(&format!("SELECT component, COUNT(*) n FROM lcj_candidates WHERE updated_at >= ?1 AND {cand} GROUP BY component ORDER BY n DESC, component LIMIT ?3"), "component")?,
            "topHosts": ranked(&format!("SELECT context_host, COUNT(*) n FROM lcj_tool_events WHERE created_at >= ?1 AND {site} AND context_host <> '' GROUP BY context_host ORDER BY n DESC, context_host LIMIT ?3"), "contextHost")?,
        }))
    })
}
