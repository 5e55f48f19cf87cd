//! Closed-loop goals (`nova.goal_register`, `goalContext`): a durable objective on a target
//! with an ordered step plan. Goals, steps and events live in the store and survive restarts;
//! a goal whose lease expires without progress becomes `orphaned`.

mod tool;

use std::path::Path;
use std::sync::Mutex;

use nova_shared::cls::{AssertionSet, TransitionContract};
use rusqlite::{Connection, OptionalExtension as _, params};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::store::{self, StoreError};
use crate::time::now_ms;

/// `leaseMs` bounds and default: 1000-600000, 120000 (docs/cls.md, "Goals").
pub const LEASE_MS: (u32, u32, u32) = (1_000, 600_000, 120_000);
/// Most steps in a goal: 50.
pub const MAX_STEPS: usize = 50;
/// `eventsLimit` bounds and default: 1-200, 50.
pub const EVENTS_LIMIT: (u32, u32, u32) = (1, 200, 50);

/// `op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GoalOp {
    /// Create a goal.
    Create,
    /// Read a goal.
    Query,
    /// Close a goal with a terminal state.
    Close,
    /// Add an annotation event.
    Annotate,
}

/// `mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GoalMode {
    /// The agent drives every step (default).
    #[default]
    AgentDriven,
    /// The runtime assists.
    RuntimeAssisted,
    /// The runtime runs the plan.
    FullyAutonomous,
}

impl GoalMode {
    fn as_str(self) -> &'static str {
        match self {
            Self::AgentDriven => "agent_driven",
            Self::RuntimeAssisted => "runtime_assisted",
            Self::FullyAutonomous => "fully_autonomous",
        }
    }
}

/// Terminal `state` for close.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CloseState {
    /// Done.
    Completed,
    /// Failed.
    Failed,
    /// Given up.
    Aborted,
}

/// One planned step.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GoalStep {
    /// What the step does.
    pub action_desc: String,
    /// The step's transition contract.
    #[serde(default)]
    pub contract: Option<TransitionContract>,
    /// Legacy: the contract as a JSON string.
    #[serde(default)]
    pub contract_json: Option<String>,
}

crate::tool_args! {
    /// `nova.goal_register` arguments.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct GoalArgs [agent] {
        /// create | query | close | annotate.
        pub op: GoalOp,
        /// Target tab (create defaults to `active`).
        #[serde(default)]
        pub target_id: Option<String>,
        /// The goal (close, annotate, targeted query).
        #[serde(default)]
        pub goal_id: Option<String>,
        /// Required for create.
        #[serde(default)]
        pub summary: Option<String>,
        /// Default `agent_driven`.
        #[serde(default)]
        pub mode: Option<GoalMode>,
        /// Must hold at create, else the goal is not created.
        #[serde(default)]
        pub preconditions: Option<AssertionSet>,
        /// Legacy form of `preconditions` (JSON string).
        #[serde(default)]
        pub preconditions_json: Option<String>,
        /// Owner agent (must equal the calling agent).
        #[serde(default)]
        pub owner_agent_id: Option<String>,
        /// Legacy form of `ownerAgentId`.
        #[serde(default)]
        pub owner_agent: Option<String>,
        /// Sidecar session binding.
        #[serde(default)]
        pub sidecar_session_id: Option<String>,
        /// Legacy form of `sidecarSessionId`.
        #[serde(default)]
        pub owner_session: Option<String>,
        /// Lease without progress, 1000-600000 ms (default 120000).
        #[serde(default)]
        #[schemars(range(min = 1000, max = 600000))]
        pub lease_ms: Option<u32>,
        /// Legacy form of `leaseMs`.
        #[serde(default)]
        pub lease_timeout_ms: Option<u32>,
        /// Ordered plan, at most 50 steps.
        #[serde(default)]
        pub steps: Option<Vec<GoalStep>>,
        /// Include steps in the answer (default true).
        #[serde(default)]
        pub include_steps: Option<bool>,
        /// Include events in the answer (default false).
        #[serde(default)]
        pub include_events: Option<bool>,
        /// Most events, 1-200 (default 50).
        #[serde(default)]
        #[schemars(range(min = 1, max = 200))]
        pub events_limit: Option<u32>,
        /// Terminal state, required for close.
        #[serde(default)]
        pub state: Option<CloseState>,
        /// Annotation text, required for annotate.
        #[serde(default)]
        pub content: Option<String>,
        /// Annotation source (default `agent`).
        #[serde(default)]
        pub source: Option<String>,
    }
}

/// Picks the structured or the legacy form of an argument; both at once is an error.
pub fn pick<T>(structured: Option<T>, legacy: Option<T>, names: (&str, &str)) -> Result<Option<T>, String> {
    match (structured, legacy) {
        (Some(_), Some(_)) => Err(format!("use `{}` or its legacy alias `{}`, not both", names.0, names.1)),
        (s, l) => Ok(s.or(l)),
    }
}

/// A resolved create request.
#[derive(Debug, Clone)]
pub struct NewGoal {
    /// Target.
    pub target_id: String,
    /// Summary.
    pub summary: String,
    /// Mode.
    pub mode: GoalMode,
    /// Owner.
    pub owner: Option<String>,
    /// Sidecar session.
    pub session: Option<String>,
    /// Lease.
    pub lease_ms: u32,
    /// Preconditions (already checked).
    pub preconditions: Option<AssertionSet>,
    /// Steps: description and contract.
    pub steps: Vec<(String, Option<TransitionContract>)>,
}

/// The active goal of a target, as goal-aware actions see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Active {
    /// Goal id.
    pub goal_id: String,
    /// Owner agent, if bound.
    pub owner: Option<String>,
    /// 1-based current step (0 when the plan is done or empty).
    pub current_step: u32,
    /// Steps in the plan.
    pub total_steps: u32,
    /// The current step's contract.
    pub step_contract: Option<TransitionContract>,
}

/// The goal store.
pub struct Goals {
    conn: Mutex<Connection>,
}

fn contract_of(json: Option<String>) -> Option<TransitionContract> {
    json.and_then(|j| serde_json::from_str(&j).ok())
}

impl Goals {
    /// Opens the goal tables.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        Ok(Self { conn: Mutex::new(store::open(db)?) })
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&conn)
    }

    fn event(
        c: &Connection,
        goal: &str,
        kind: &str,
        source: &str,
        content: Option<&str>,
    ) -> rusqlite::Result<()> {
        c.execute(
            "INSERT INTO goal_events (goal_id, at_ms, kind, source, content) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![goal, now_ms(), kind, source, content],
        )
        .map(|_| ())
    }

    /// Turns active goals whose lease expired without progress into `orphaned`.
    pub fn sweep(&self) {
        let _ = self.with(|c| {
            let now = now_ms();
            let expired: Vec<String> = c
                .prepare("SELECT goal_id FROM goals WHERE state = 'active' AND lease_expires_at_ms < ?1")?
                .query_map([now], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for id in expired {
                c.execute(
                    "UPDATE goals SET state = 'orphaned', updated_at_ms = ?2 WHERE goal_id = ?1",
                    params![id, now],
                )?;
                Self::event(c, &id, "orphaned", "runtime", Some("lease expired without progress"))?;
            }
            Ok(())
        });
    }

    /// Creates a goal; fails when the target already has an active goal.
    pub fn create(&self, g: &NewGoal) -> Result<String, String> {
        self.sweep();
        let id = format!("goal_{}", uuid::Uuid::new_v4().simple());
        self.with(|c| {
            let existing: Option<String> = c
                .query_row("SELECT goal_id FROM goals WHERE target_id = ?1 AND state = 'active'", [&g.target_id], |r| {
                    r.get(0)
                })
                .optional()?;
            if let Some(e) = existing {
                return Ok(Err(format!("target {} already has the active goal {e}; close it first", g.target_id)));
            }
            let now = now_ms();
            let tx = crate::store::write_tx_shared(c)?;
            tx.execute(
                "INSERT INTO goals (goal_id, target_id, summary, mode, state, owner_agent_id, sidecar_session_id,
                   lease_ms, lease_expires_at_ms, heartbeat_at_ms, current_step, preconditions_json,
                   created_at_ms, updated_at_ms)
                 VALUES (?1, ?2, ?3, ?4, 'active', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?9, ?9)",
                params![
                    id,
                    g.target_id,
                    g.summary,
                    g.mode.as_str(),
                    g.owner,
                    g.session,
                    g.lease_ms,
                    now + i64::from(g.lease_ms),
                    now,
                    u32::from(!g.steps.is_empty()),
                    g.preconditions.as_ref().and_then(|p| serde_json::to_string(p).ok()),
                ],
            )?;
            for (i, (desc, contract)) in g.steps.iter().enumerate() {
                tx.execute(
                    "INSERT INTO goal_steps (goal_id, idx, action_desc, contract_json, status, updated_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        id,
                        u32::try_from(i + 1).unwrap_or(u32::MAX),
                        desc,
                        contract.as_ref().and_then(|c| serde_json::to_string(c).ok()),
                        if i == 0 { "ready" } else { "planned" },
                        now
                    ],
                )?;
            }
            Self::event(&tx, &id, "created", "agent", Some(&g.summary))?;
            tx.commit()?;
            Ok(Ok(id.clone()))
        })
        .map_err(|e| e.to_string())?
    }

    /// The active goal of a target.
    pub fn active(&self, target_id: &str) -> Option<Active> {
        self.sweep();
        self.with(|c| {
            let row = c
                .query_row(
                    "SELECT goal_id, owner_agent_id, current_step, (SELECT COUNT(*) FROM goal_steps s WHERE s.goal_id = g.goal_id)
                     FROM goals g WHERE target_id = ?1 AND state = 'active'",
                    [target_id],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, u32>(2)?, r.get::<_, u32>(3)?)),
                )
                .optional()?;
            let Some((goal_id, owner, current_step, total_steps)) = row else { return Ok(None) };
            let step_contract = c
                .query_row(
                    "SELECT contract_json FROM goal_steps WHERE goal_id = ?1 AND idx = ?2",
                    params![goal_id, current_step],
                    |r| r.get::<_, Option<String>>(0),
                )
                .optional()?
                .flatten();
            Ok(Some(Active { goal_id, owner, current_step, total_steps, step_contract: contract_of(step_contract) }))
        })
        .ok()
        .flatten()
    }

    /// `goalContext` for a target (null when no active goal applies to it and this agent).
    pub fn context(&self, target_id: &str, agent: &str) -> Value {
        let Some(a) = self.active(target_id) else { return Value::Null };
        if a.owner.as_deref().is_some_and(|o| o != agent) {
            return Value::Null;
        }
        self.with(|c| {
            let (summary, mode): (String, String) =
                c.query_row("SELECT summary, mode FROM goals WHERE goal_id = ?1", [&a.goal_id], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
            let step: Option<(String, String)> = c
                .query_row(
                    "SELECT status, action_desc FROM goal_steps WHERE goal_id = ?1 AND idx = ?2",
                    params![a.goal_id, a.current_step],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            Ok(json!({
                "goalId": a.goal_id, "summary": summary, "mode": mode, "state": "active",
                "currentStep": a.current_step, "totalSteps": a.total_steps,
                "stepStatus": step.as_ref().map(|s| s.0.clone()), "stepAction": step.map(|s| s.1),
            }))
        })
        .unwrap_or(Value::Null)
    }

    /// Records a step's progress; `done` advances the plan and renews the lease.
    pub fn step(&self, goal_id: &str, idx: u32, status: &str, transition_id: &str) {
        let _ = self.with(|c| {
            let now = now_ms();
            c.execute(
                "UPDATE goal_steps SET status = ?3, transition_id = ?4, updated_at_ms = ?5 WHERE goal_id = ?1 AND idx = ?2",
                params![goal_id, idx, status, transition_id, now],
            )?;
            c.execute(
                "UPDATE goals SET heartbeat_at_ms = ?2, lease_expires_at_ms = ?2 + lease_ms, updated_at_ms = ?2 WHERE goal_id = ?1",
                params![goal_id, now],
            )?;
            if status == "done" {
                let total: u32 =
                    c.query_row("SELECT COUNT(*) FROM goal_steps WHERE goal_id = ?1", [goal_id], |r| r.get(0))?;
                let next = if idx < total { idx + 1 } else { 0 };
                c.execute("UPDATE goals SET current_step = ?2 WHERE goal_id = ?1", params![goal_id, next])?;
                if next > 0 {
                    c.execute(
                        "UPDATE goal_steps SET status = 'ready', updated_at_ms = ?3 WHERE goal_id = ?1 AND idx = ?2",
                        params![goal_id, next, now],
                    )?;
                }
            }
            Self::event(c, goal_id, &format!("step_{status}"), "runtime", Some(&format!("step {idx} via {transition_id}")))
        });
    }

    /// Links a goal to a task instance.
    pub fn link(&self, goal_id: &str, instance_id: &str) {
        if let Err(e) = self.with(|c| {
            c.execute(
                "UPDATE goals SET linked_task_instance_id = ?2 WHERE goal_id = ?1",
                params![goal_id, instance_id],
            )?;
            Self::event(c, goal_id, "linked", "runtime", Some(instance_id))
        }) {
            tracing::error!(error = %e, "cannot link the goal to its task");
        }
    }

    /// The task instance a goal is linked to.
    pub fn linked(&self, goal_id: &str) -> Option<String> {
        self.with(|c| {
            c.query_row("SELECT linked_task_instance_id FROM goals WHERE goal_id = ?1", [goal_id], |r| {
                r.get(0)
            })
            .optional()
            .map(Option::flatten)
        })
        .ok()
        .flatten()
    }

    /// Closes a goal.
    pub fn close(&self, goal_id: &str, state: CloseState) -> Result<(), String> {
        let s = match state {
            CloseState::Completed => "completed",
            CloseState::Failed => "failed",
            CloseState::Aborted => "aborted",
        };
        self.with(|c| {
            let n = c.execute(
                "UPDATE goals SET state = ?2, updated_at_ms = ?3 WHERE goal_id = ?1 AND state = 'active'",
                params![goal_id, s, now_ms()],
            )?;
            if n == 1 {
                Self::event(c, goal_id, "closed", "agent", Some(s))?;
            }
            Ok(n)
        })
        .map_err(|e| e.to_string())
        .and_then(|n| if n == 1 { Ok(()) } else { Err(format!("goal {goal_id} is not active")) })
    }

    /// Adds an annotation.
    pub fn annotate(&self, goal_id: &str, content: &str, source: &str) -> Result<(), String> {
        self.with(|c| {
            let exists: bool =
                c.query_row("SELECT COUNT(*) > 0 FROM goals WHERE goal_id = ?1", [goal_id], |r| r.get(0))?;
            if exists {
                Self::event(c, goal_id, "annotated", source, Some(content))?;
            }
            Ok(exists)
        })
        .map_err(|e| e.to_string())
        .and_then(|ok| if ok { Ok(()) } else { Err(format!("no goal {goal_id}")) })
    }

    /// A goal as `nova.goal_register` answers it.
    pub fn describe(&self, goal_id: &str, include_steps: bool, events: Option<u32>) -> Option<Value> {
        self.sweep();
        self.with(|c| {
            let goal = c
                .query_row(
                    "SELECT goal_id, target_id, summary, mode, state, current_step, owner_agent_id, sidecar_session_id,
                       lease_ms, lease_expires_at_ms, heartbeat_at_ms, contract_revision, created_at_ms, updated_at_ms,
                       (SELECT COUNT(*) FROM goal_steps s WHERE s.goal_id = g.goal_id), linked_task_instance_id
                     FROM goals g WHERE goal_id = ?1",
                    [goal_id],
                    |r| {
                        Ok(json!({
                            "goalId": r.get::<_, String>(0)?, "targetId": r.get::<_, String>(1)?,
                            "summary": r.get::<_, String>(2)?, "mode": r.get::<_, String>(3)?,
                            "state": r.get::<_, String>(4)?, "currentStep": r.get::<_, u32>(5)?,
                            "ownerAgentId": r.get::<_, Option<String>>(6)?,
                            "sidecarSessionId": r.get::<_, Option<String>>(7)?,
                            "leaseMs": r.get::<_, u32>(8)?, "leaseExpiresAtUtc": r.get::<_, i64>(9)?,
                            "heartbeatAtUtc": r.get::<_, i64>(10)?, "contractRevision": r.get::<_, u32>(11)?,
                            "createdAtUtc": r.get::<_, i64>(12)?, "updatedAtUtc": r.get::<_, i64>(13)?,
                            "totalSteps": r.get::<_, u32>(14)?,
                            "linkedTaskInstanceId": r.get::<_, Option<String>>(15)?,
                        }))
                    },
                )
                .optional()?;
            let Some(mut goal) = goal else { return Ok(None) };
            if include_steps {
                let steps: Vec<Value> = c
                    // A step's transition that has no verdict yet is `pending`.
                    .prepare(
                        "SELECT s.idx, s.action_desc, s.status, s.transition_id, s.contract_json,
                                CASE WHEN t.transition_id IS NULL THEN NULL
                                     ELSE coalesce(t.verification_status, 'pending') END
                         FROM goal_steps s LEFT JOIN transitions t ON t.transition_id = s.transition_id
                         WHERE s.goal_id = ?1 ORDER BY s.idx",
                    )?
                    .query_map([goal_id], |r| {
                        Ok(json!({
                            "index": r.get::<_, u32>(0)?, "actionDesc": r.get::<_, String>(1)?,
                            "status": r.get::<_, String>(2)?, "transitionId": r.get::<_, Option<String>>(3)?,
                            "hasContract": r.get::<_, Option<String>>(4)?.is_some(),
                            "verificationStatus": r.get::<_, Option<String>>(5)?,
                        }))
                    })?
                    .collect::<Result<_, _>>()?;
                goal["steps"] = json!(steps);
            }
            if let Some(limit) = events {
                let events: Vec<Value> = c
                    .prepare("SELECT at_ms, kind, source, content FROM goal_events WHERE goal_id = ?1 ORDER BY id DESC LIMIT ?2")?
                    .query_map(params![goal_id, limit], |r| {
                        Ok(json!({"atUtc": r.get::<_, i64>(0)?, "kind": r.get::<_, String>(1)?,
                                  "source": r.get::<_, String>(2)?, "content": r.get::<_, Option<String>>(3)?}))
                    })?
                    .collect::<Result<_, _>>()?;
                goal["events"] = json!(events);
            }
            Ok(Some(goal))
        })
        .ok()
        .flatten()
    }
}
