//! Learn Mode tasks (docs/learning.md, "Learn Mode"): a tab where an agent maps a platform,
//! and how far it got: the distinct pages it read (visited surfaces) and the successful actions
//! it took there (meaningful interactions), counted from the journal since the task began.
//! Releasing the tab below the floors is refused unless the agent says coverage is exhausted.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

/// Distinct pages a learn task must read.
pub const MIN_VISITED_SURFACES: i64 = 5;
/// Successful actions a learn task must take.
pub const MIN_MEANINGFUL_INTERACTIONS: i64 = 8;

/// Tools whose success is a meaningful interaction besides the selector actions
/// (`super::ingest::ACTIONS`).
pub const OTHER_INTERACTIONS: &[&str] = &[
    "nova.dismiss_blockers",
    "nova.phenomenon_apply",
    "nova.file_upload",
    "nova.route",
    "nova.run_sequence",
];

/// A learn task.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Its id (`learn_<16 hex>`).
    pub id: String,
    /// The tab.
    pub tab: String,
    /// The agent.
    pub owner: String,
    /// The platform's site.
    pub domain: String,
    /// When it began (ms).
    pub started_at: i64,
}

/// How far a task got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Distinct pages read.
    pub visited_surfaces: i64,
    /// Successful actions.
    pub meaningful_interactions: i64,
}

impl Progress {
    /// Whether both floors are met.
    pub fn floors_met(&self) -> bool {
        self.visited_surfaces >= MIN_VISITED_SURFACES
            && self.meaningful_interactions >= MIN_MEANINGFUL_INTERACTIONS
    }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Task> {
    Ok(Task { id: r.get(0)?, tab: r.get(1)?, owner: r.get(2)?, domain: r.get(3)?, started_at: r.get(4)? })
}

/// The open learn task of `owner` on `tab`.
pub fn active(c: &Connection, tab: &str, owner: &str) -> rusqlite::Result<Option<Task>> {
    c.query_row(
        "SELECT task_id, tab_id, owner_id, domain, started_at FROM lcj_learn_tasks
         WHERE tab_id = ?1 AND owner_id = ?2 AND ended_at IS NULL ORDER BY started_at DESC LIMIT 1",
        params![tab, owner],
        row,
    )
    .optional()
}

/// Every open learn task of `owner`, oldest first.
pub fn of_owner(c: &Connection, owner: &str) -> rusqlite::Result<Vec<Task>> {
    let mut stmt = c.prepare(
        "SELECT task_id, tab_id, owner_id, domain, started_at FROM lcj_learn_tasks
         WHERE owner_id = ?1 AND ended_at IS NULL ORDER BY started_at",
    )?;
    stmt.query_map([owner], row)?.collect()
}

/// Begins a learn task of `owner` on `tab` (or returns the open one).
pub fn begin(
    c: &Connection,
    tab: &str,
    owner: &str,
    domain: &str,
    keywords: &[String],
    now: i64,
) -> rusqlite::Result<Task> {
    if let Some(t) = active(c, tab, owner)? {
        return Ok(t);
    }
    let id = format!("learn_{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
    c.execute(
        "INSERT INTO lcj_learn_tasks (task_id, tab_id, owner_id, domain, keywords, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![id, tab, owner, domain, serde_json::to_string(keywords).ok(), now],
    )?;
    Ok(Task { id, tab: tab.to_owned(), owner: owner.to_owned(), domain: domain.to_owned(), started_at: now })
}

/// What the journal holds of `t` so far.
pub fn progress(c: &Connection, t: &Task) -> rusqlite::Result<Progress> {
    let visited_surfaces = c.query_row(
        "SELECT COUNT(DISTINCT fingerprint_hash) FROM lcj_observations
         WHERE kind = 'perceive_signature' AND tab_id = ?1 AND owner_id = ?2 AND created_at >= ?3",
        params![t.tab, t.owner, t.started_at],
        |r| r.get(0),
    )?;
    let tools = super::ingest::ACTIONS
        .iter()
        .chain(OTHER_INTERACTIONS)
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let meaningful_interactions = c.query_row(
        &format!(
            "SELECT COUNT(*) FROM lcj_tool_events WHERE tab_id = ?1 AND owner_id = ?2 AND created_at >= ?3
               AND success = 1 AND tool_name IN ({tools})"
        ),
        params![t.tab, t.owner, t.started_at],
        |r| r.get(0),
    )?;
    Ok(Progress { visited_surfaces, meaningful_interactions })
}

/// Ends `t` (`complete` or `coverage_exhausted`, with the agent's reason).
pub fn end(c: &Connection, t: &Task, how: &str, reason: Option<&str>, now: i64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE lcj_learn_tasks SET ended_at = ?2, ended_how = ?3, ended_reason = ?4 WHERE task_id = ?1",
        params![t.id, now, how, reason],
    )?;
    Ok(())
}

/// `t` and its progress as agents read them.
pub fn shown(t: &Task, p: &Progress) -> Value {
    json!({
        "taskId": t.id, "targetId": t.tab, "domain": t.domain, "learnModeActive": true,
        "visitedSurfaces": p.visited_surfaces, "meaningfulInteractions": p.meaningful_interactions,
        "floorsMet": p.floors_met(),
    })
}

/// The floors and how far `p` is from them.
pub fn shortfall(p: &Progress) -> Value {
    json!({
        "required": {"minVisitedSurfaces": MIN_VISITED_SURFACES, "minMeaningfulInteractions": MIN_MEANINGFUL_INTERACTIONS},
        "current": {"visitedSurfaces": p.visited_surfaces, "meaningfulInteractions": p.meaningful_interactions},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_counts_distinct_pages_and_successful_actions_since_it_began() {
        let dir = tempfile::tempdir().expect("tmp");
        let c = crate::store::open(&dir.path().join("n.db")).expect("open");
        let t = begin(&c, "t1", "ada", "a.org", &[], 100).expect("begin");
        assert_eq!(
            begin(&c, "t1", "ada", "a.org", &[], 200).expect("again"),
            t,
            "one open task per tab and agent"
        );
        let obs = |hash: &str, at: i64| {
            c.execute(
                "INSERT INTO lcj_observations (kind, outcome, severity, context_host, tab_id, owner_id, activity_session_id,
                     tool_name, fingerprint_hash, throttle_key, created_at)
                 VALUES ('perceive_signature', 0, 0, 'a.org', 't1', 'ada', 's', 'nova.perceive', ?1, 'k', ?2)",
                params![hash, at],
            )
            .expect("obs");
        };
        obs("p1", 50);
        obs("p1", 150);
        obs("p1", 160);
        obs("p2", 170);
        let event = |tool: &str, ok: bool| {
            c.execute(
                "INSERT INTO lcj_tool_events (tab_id, owner_id, tool_name, success, duration_ms, activity_session_id, created_at)
                 VALUES ('t1', 'ada', ?1, ?2, 1, 's', 180)",
                params![tool, ok],
            )
            .expect("event");
        };
        event("nova.click_selector", true);
        event("nova.click_selector", false);
        event("nova.perceive", true);
        let p = progress(&c, &t).expect("progress");
        assert_eq!(p, Progress { visited_surfaces: 2, meaningful_interactions: 1 });
        assert!(!p.floors_met());
        end(&c, &t, "coverage_exhausted", Some("login needed"), 300).expect("end");
        assert!(active(&c, "t1", "ada").expect("a").is_none());
    }
}
