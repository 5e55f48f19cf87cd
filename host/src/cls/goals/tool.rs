//! `nova.goal_register`: create, query, close and annotate closed-loop goals (the store and
//! the step logic are in [`super`]).

use nova_shared::cls::{AssertionSet, TransitionContract, Verdict};
use nova_shared::protocol::{CheckParams, CheckResult, method};
use rusqlite::OptionalExtension as _;
use serde_json::{Value, json};

use super::{EVENTS_LIMIT, GoalArgs, GoalOp, LEASE_MS, MAX_STEPS, NewGoal, pick};
use crate::bridge::DEFAULT_TIMEOUT;
use crate::call::check_range;
use crate::call::{CallError, CallRecord, ToolReply};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, ToolDef};

/// What the goal tool reaches.
pub struct GoalTool<'h> {
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// Task runs (ETM).
    pub tasks: crate::etm::context::Tasks<'h>,
    /// Guarded transitions.
    pub cls: &'h crate::cls::Cls,
    /// Task memory.
    pub etm: &'h crate::etm::Etm,
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
}

impl<'h> From<&'h crate::hub::Hub> for GoalTool<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self {
            tabs: hub.tabs(),
            tasks: crate::etm::context::Tasks::from(hub),
            cls: &hub.cls,
            etm: &hub.etm,
            bridge: &hub.bridge,
        }
    }
}

fn invalid(field: &str) -> impl Fn(String) -> CallError + '_ {
    move |m| CallError::invalid(field, m)
}

fn parse_json<T: serde::de::DeserializeOwned>(
    field: &str,
    text: Option<String>,
) -> Result<Option<T>, CallError> {
    text.map(|t| {
        serde_json::from_str(&t)
            .map_err(|e| CallError::invalid(field, format!("`{field}` is not valid: {e}")))
    })
    .transpose()
}

fn answer(op: &str, goal: Option<Value>) -> ToolReply {
    ToolReply::ok(json!({"op": op, "ok": true, "status": "ok", "goal": goal}))
}

crate::tool! {
    /// `nova.goal_register` in the tool registry.
    pub static GOAL_REGISTER = ToolDef::new(
        "nova.goal_register",
        "Create, query, close or annotate a closed-loop goal: a durable objective on a tab with an \
                     ordered step plan whose verified outcomes advance it; nova.perceive shows it as goalContext.",
        registry::schema::<GoalArgs>,
        crate::handler!(GoalTool::goal_register),
    )
    .bundles(&[Bundle::TaskMemory, Bundle::BrowserAutomation])
    .tob(ActionKind::Write, "none", 0);
}

impl GoalTool<'_> {
    /// `nova.goal_register`.
    pub async fn goal_register(&self, rec: &mut CallRecord, a: GoalArgs) -> Result<ToolReply, CallError> {
        let agent = rec.obs.agent_id.clone();
        if let Some(l) = a.events_limit {
            check_range("eventsLimit", l, EVENTS_LIMIT)?;
        }
        let include_steps = a.include_steps.unwrap_or(true);
        let events = a.include_events.unwrap_or(false).then_some(a.events_limit.unwrap_or(EVENTS_LIMIT.2));
        let goals = &self.cls.goals;
        match a.op {
            GoalOp::Create => {
                let summary = a
                    .summary
                    .filter(|s| !s.trim().is_empty())
                    .ok_or_else(|| CallError::invalid("summary", "`summary` is required for create"))?;
                let owner = pick(a.owner_agent_id, a.owner_agent, ("ownerAgentId", "ownerAgent"))
                    .map_err(invalid("ownerAgentId"))?;
                if owner.as_deref().is_some_and(|o| o != agent) {
                    return Err(CallError::invalid(
                        "ownerAgentId",
                        "`ownerAgentId` must equal the calling agentId",
                    ));
                }
                let session =
                    pick(a.sidecar_session_id, a.owner_session, ("sidecarSessionId", "ownerSession"))
                        .map_err(invalid("sidecarSessionId"))?;
                let lease = pick(a.lease_ms, a.lease_timeout_ms, ("leaseMs", "leaseTimeoutMs"))
                    .map_err(invalid("leaseMs"))?
                    .unwrap_or(LEASE_MS.2);
                check_range("leaseMs", lease, LEASE_MS)?;
                let legacy_pre: Option<AssertionSet> = parse_json("preconditionsJson", a.preconditions_json)?;
                let pre = pick(a.preconditions, legacy_pre, ("preconditions", "preconditionsJson"))
                    .map_err(invalid("preconditions"))?;
                let steps = a.steps.unwrap_or_default();
                if steps.len() > MAX_STEPS {
                    return Err(CallError::invalid(
                        "steps",
                        format!("`steps` has {} entries; at most {MAX_STEPS} are allowed", steps.len()),
                    ));
                }
                let structured = steps.iter().any(|s| s.contract.is_some());
                let legacy = steps.iter().any(|s| s.contract_json.is_some());
                if structured && legacy {
                    return Err(CallError::invalid(
                        "steps",
                        "steps mix `contract` and the legacy `contractJson`; use one form",
                    ));
                }
                let mut plan = Vec::new();
                for (i, step) in steps.into_iter().enumerate() {
                    if step.action_desc.trim().is_empty() {
                        return Err(CallError::invalid(
                            "steps",
                            format!("steps[{i}].actionDesc is required"),
                        ));
                    }
                    let legacy: Option<TransitionContract> = parse_json("contractJson", step.contract_json)?;
                    let contract = step.contract.or(legacy);
                    if let Some(c) = &contract {
                        c.validate(false)
                            .map_err(|m| CallError::invalid("steps", format!("steps[{i}]: {m}")))?;
                    }
                    plan.push((step.action_desc, contract));
                }
                let tab = match self.tabs.resolve(a.target_id.as_deref().unwrap_or("active")).await {
                    Ok(t) => t,
                    Err(reply) => return Ok(reply),
                };
                rec.obs.target_id = Some(tab.target_id.clone());
                if let Some(set) = pre.as_ref().filter(|p| !p.is_empty()) {
                    let params = CheckParams {
                        target: tab.target_id.clone(),
                        frame_id: None,
                        set: set.clone(),
                        adapter: None,
                        nav_epoch: 0,
                    };
                    let checked =
                        self.bridge.call::<CheckResult>(method::CHECK, params, DEFAULT_TIMEOUT).await;
                    match checked {
                        Ok(r) if r.verdict == Verdict::Satisfied => {}
                        Ok(r) => {
                            let mut reply = ToolReply::failure(
                                "goal.precondition_failed",
                                "the goal's preconditions do not hold; the goal was not created",
                                true,
                            );
                            reply.structured["failedAssertions"] = json!(r.failed_assertions);
                            return Ok(reply);
                        }
                        Err(e) => return Ok(ToolReply::bridge_failure(&e)),
                    }
                }
                let new = NewGoal {
                    target_id: tab.target_id.clone(),
                    summary,
                    mode: a.mode.unwrap_or_default(),
                    owner,
                    session,
                    lease_ms: lease,
                    preconditions: pre,
                    steps: plan,
                };
                match goals.create(&new) {
                    Ok(id) => {
                        // The goal belongs to the task run its agent has open on this tab.
                        let agent = rec.obs.agent_id.clone();
                        let linked = self.etm.with(|c| {
                            c.query_row(
                                "SELECT instance_id FROM task_instances WHERE agent_id = ?1 AND status IN ('pending', 'active')
                                   AND (target_id = ?2 OR target_id IS NULL) ORDER BY last_activity_at_ms DESC LIMIT 1",
                                rusqlite::params![agent, tab.target_id],
                                |r| r.get::<_, String>(0),
                            )
                            .optional()
                        })?;
                        if let Some(instance) = &linked {
                            goals.link(&id, instance);
                        }
                        Ok(answer("create", goals.describe(&id, include_steps, events)))
                    }
                    Err(m) => Ok(ToolReply::failure("goal.active_exists", m, false)),
                }
            }
            GoalOp::Query => {
                let id = match a.goal_id {
                    Some(id) => Some(id),
                    None => {
                        let tab = match self.tabs.resolve(a.target_id.as_deref().unwrap_or("active")).await {
                            Ok(t) => t,
                            Err(reply) => return Ok(reply),
                        };
                        goals.active(&tab.target_id).map(|g| g.goal_id)
                    }
                };
                match id {
                    Some(id) => match goals.describe(&id, include_steps, events) {
                        Some(g) => Ok(answer("query", Some(g))),
                        None => Ok(ToolReply::failure("not_found", format!("no goal {id}"), false)),
                    },
                    None => Ok(answer("query", None)),
                }
            }
            GoalOp::Close => {
                let id = a
                    .goal_id
                    .ok_or_else(|| CallError::invalid("goalId", "`goalId` is required for close"))?;
                let state = a.state.ok_or_else(|| {
                    CallError::invalid("state", "`state` (completed, failed, aborted) is required for close")
                })?;
                if state == crate::cls::goals::CloseState::Completed
                    && let Some(refusal) = self.tasks.linked_task_refusal(&id)?
                {
                    return Ok(refusal);
                }
                match goals.close(&id, state) {
                    Ok(()) => Ok(answer("close", goals.describe(&id, include_steps, events))),
                    Err(m) => Ok(ToolReply::failure("goal.not_active", m, false)),
                }
            }
            GoalOp::Annotate => {
                let id = a
                    .goal_id
                    .ok_or_else(|| CallError::invalid("goalId", "`goalId` is required for annotate"))?;
                let content = a
                    .content
                    .filter(|c| !c.trim().is_empty())
                    .ok_or_else(|| CallError::invalid("content", "`content` is required for annotate"))?;
                match goals.annotate(&id, &content, a.source.as_deref().unwrap_or("agent")) {
                    Ok(()) => Ok(answer("annotate", goals.describe(&id, include_steps, events))),
                    Err(m) => Ok(ToolReply::failure("not_found", m, false)),
                }
            }
        }
    }
}
