//! ETM, episodic task memory (docs/tasks.md, "Task runs"): reusable task profiles, concrete
//! instances with work units, and completion judged by the host against observed evidence (TOB),
//! never by the agent's own report. Every instance mutation is compare-and-set on `instanceRev` and
//! idempotent on `clientEventId` (a replay returns the stored result and writes nothing).

pub mod args;
pub mod completion;
pub mod guidance;
pub mod matching;
pub mod tools;

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension as _, params};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use self::args::*;
use self::completion::{CompletionCondition, Counts, Decision, Evidence, Input};
use crate::dispatch::{CallError, CallRecord, Hub, ToolReply};
use crate::settings::{GateMode, Settings};
use crate::store::{self, StoreError};
use crate::time::{iso, now_ms};
use crate::tob::evidence::{self as tob_evidence, GradeCounts, Obs, Unit};
use crate::tuc;
use crate::tuc::args::UnitSourceKind;
use crate::url as normalize;

/// Units a `site_urls` / `crawler` source copies at most.
pub const MAX_SEEDED_URLS: usize = 1000;

/// ETM state of a hub: its own connection to the store.
pub struct Etm {
    conn: Mutex<Connection>,
}

impl Etm {
    /// Opens the task tables.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        Ok(Self { conn: Mutex::new(store::open(db)?) })
    }

    /// Runs `f` on the connection.
    pub fn with<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, CallError> {
        let mut c = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut c).map_err(|e| CallError::Store(e.to_string()))
    }
}

fn hex32() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A soft rejection: a normal result with `ok:false` and a reason (docs/tasks.md, "Refusals").
pub fn soft(reason: &str, message: impl Into<String>, extra: Value) -> ToolReply {
    let mut body = json!({
        "ok": false, "status": "rejected", "reason": reason, "reasonCode": reason,
        "retryable": false, "message": message.into(),
    });
    if let (Some(b), Value::Object(e)) = (body.as_object_mut(), extra) {
        b.extend(e);
    }
    ToolReply { structured: body, is_error: false, text: None, image: None, meta: Map::new() }
}

fn ok(mut body: Value) -> ToolReply {
    body["ok"] = json!(true);
    if body.get("status").is_none() {
        body["status"] = json!("ok");
    }
    ToolReply::ok(body)
}

/// An instance row.
#[derive(Debug, Clone)]
pub struct Instance {
    /// Id.
    pub instance_id: String,
    /// Profile.
    pub profile_id: Option<String>,
    /// Profile revision applied.
    pub profile_rev_applied: Option<i64>,
    /// Revision.
    pub rev: i64,
    /// Context hash.
    pub context_hash: String,
    /// Effective context.
    pub context: Value,
    /// Status.
    pub status: String,
    /// Discovery state.
    pub discovery: String,
    /// Owner agent.
    pub agent_id: String,
    /// Target URL.
    pub target_url: Option<String>,
    /// Bound tab.
    pub target_id: Option<String>,
    /// Effective task kind.
    pub task_kind: String,
    /// 1 legacy, 2 with a unit source.
    pub coverage_schema: i64,
    /// Resume state.
    pub resume_state: Value,
    /// Mandatory-check states.
    pub checks_state: Value,
    /// TOB scope.
    pub scope_id: Option<String>,
    /// Why there is no scope.
    pub scope_reason: Option<String>,
    /// Started.
    pub started_at_ms: i64,
    /// Last activity.
    pub last_activity_at_ms: i64,
    /// Completed.
    pub completed_at_ms: Option<i64>,
}

impl Instance {
    fn terminal(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "aborted" | "failed")
    }

    fn condition(&self) -> Option<CompletionCondition> {
        serde_json::from_value(self.context.get("completionCondition")?.clone()).ok()
    }

    fn mandatory_checks(&self) -> Vec<MandatoryCheck> {
        self.context
            .get("mandatoryChecks")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }

    fn verification(&self) -> Option<VerificationContract> {
        serde_json::from_value(self.context.get("verificationContract")?.clone()).ok()
    }

    fn pending_checks(&self) -> Vec<String> {
        self.mandatory_checks()
            .into_iter()
            .filter(|c| c.required)
            .filter(|c| {
                !matches!(
                    self.checks_state.get(&c.check_id).and_then(Value::as_str),
                    Some("satisfied" | "waived" | "not_applicable")
                )
            })
            .map(|c| c.check_id)
            .collect()
    }
}

const INSTANCE_COLUMNS: &str =
    "instance_id, profile_id, profile_rev_applied, instance_rev, effective_context_hash,
    effective_context_json, status, discovery_state, agent_id, target_url, target_id, effective_task_kind,
    coverage_schema_version, resume_state, mandatory_checks_state, evidence_scope_id, evidence_scope_reason,
    started_at_ms, last_activity_at_ms, completed_at_ms";

fn instance_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Instance> {
    let parse = |s: String| serde_json::from_str(&s).unwrap_or(Value::Null);
    Ok(Instance {
        instance_id: r.get(0)?,
        profile_id: r.get(1)?,
        profile_rev_applied: r.get(2)?,
        rev: r.get(3)?,
        context_hash: r.get(4)?,
        context: parse(r.get(5)?),
        status: r.get(6)?,
        discovery: r.get(7)?,
        agent_id: r.get(8)?,
        target_url: r.get(9)?,
        target_id: r.get(10)?,
        task_kind: r.get(11)?,
        coverage_schema: r.get(12)?,
        resume_state: parse(r.get(13)?),
        checks_state: parse(r.get(14)?),
        scope_id: r.get(15)?,
        scope_reason: r.get(16)?,
        started_at_ms: r.get(17)?,
        last_activity_at_ms: r.get(18)?,
        completed_at_ms: r.get(19)?,
    })
}

/// Loads an instance.
pub fn load_instance(c: &Connection, id: &str) -> rusqlite::Result<Option<Instance>> {
    c.query_row(
        &format!("SELECT {INSTANCE_COLUMNS} FROM task_instances WHERE instance_id = ?1"),
        [id],
        instance_from,
    )
    .optional()
}

/// A non-negative count column.
pub fn count_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<u64> {
    Ok(u64::try_from(r.get::<_, i64>(i)?).unwrap_or(0))
}

/// Unit counts of an instance.
pub fn counts(c: &Connection, id: &str) -> rusqlite::Result<Counts> {
    let mut out = Counts::default();
    let mut stmt =
        c.prepare_cached("SELECT status, COUNT(*) FROM task_units WHERE instance_id = ?1 GROUP BY status")?;
    for row in stmt.query_map([id], |r| Ok((r.get::<_, String>(0)?, count_at(r, 1)?)))? {
        let (status, n) = row?;
        out.total_units += n;
        match status.as_str() {
            "checked" => out.checked_units += n,
            "excluded" => out.excluded_units += n,
            "blocked" => out.blocked_units += n,
            "failed" => out.failed_units += n,
            _ => out.remaining_units += n,
        }
    }
    out.distinct_findings =
        c.query_row("SELECT COUNT(*) FROM task_findings WHERE instance_id = ?1", [id], |r| count_at(r, 0))?;
    Ok(out)
}

/// URL-unit counts: (total, checked, excluded, remaining, groups).
pub fn url_counts(c: &Connection, id: &str) -> rusqlite::Result<(u64, u64, u64, u64, u64)> {
    c.query_row(
        "SELECT COUNT(*), COALESCE(SUM(status = 'checked'), 0), COALESCE(SUM(status = 'excluded'), 0),
                COUNT(DISTINCT group_id)
         FROM task_units WHERE instance_id = ?1 AND url_hash IS NOT NULL",
        [id],
        |r| {
            let (t, ch, ex, g) = (count_at(r, 0)?, count_at(r, 1)?, count_at(r, 2)?, count_at(r, 3)?);
            Ok((t, ch, ex, t - ch - ex, g))
        },
    )
}

/// Loads the checked units and the scope's observations and grades them.
fn grade_instance(
    c: &Connection,
    inst: &Instance,
    complete: bool,
) -> rusqlite::Result<(GradeCounts, Vec<Value>)> {
    let units: Vec<Unit> = c
        .prepare_cached("SELECT unit_key, unit_kind, url FROM task_units WHERE instance_id = ?1 AND status = 'checked' ORDER BY position")?
        .query_map([&inst.instance_id], |r| Ok(Unit { key: r.get(0)?, kind: r.get(1)?, url: r.get(2)? }))?
        .collect::<Result<_, _>>()?;
    let obs: Vec<Obs> = match &inst.scope_id {
        Some(scope) => c
            .prepare_cached(
                "SELECT seq, url_effective, signal_flags, selector, started_at_ms, duration_ms FROM observations
                 WHERE workflow_scope_id = ?1 AND executed = 1 ORDER BY seq",
            )?
            .query_map([scope], |r| {
                Ok(Obs {
                    seq: r.get(0)?,
                    url: r.get(1)?,
                    flags: r.get(2)?,
                    selector: r.get(3)?,
                    started_at_ms: r.get(4)?,
                    duration_ms: r.get(5)?,
                })
            })?
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let (grades, counts) = tob_evidence::grade(&units, &obs, inst.scope_id.is_some(), complete);
    let exceptions: Vec<Value> =
        grades.iter().filter(|g| g.evidence_grade != tob_evidence::Grade::Strong).map(|g| json!(g)).collect();
    Ok((counts, exceptions))
}

/// Correlates an instance's checked units with its scope's observations (what completion and
/// `task_instance_get` do after the flush barrier).
pub fn correlate(c: &Connection, instance_id: &str) -> rusqlite::Result<Option<GradeCounts>> {
    let Some(inst) = load_instance(c, instance_id)? else { return Ok(None) };
    grade_instance(c, &inst, true).map(|(g, _)| Some(g))
}

fn evidence_of(g: &GradeCounts) -> Evidence {
    Evidence {
        claimed: g.claimed_checked_units,
        strong: g.strong,
        weak: g.weak,
        none: g.none,
        unknown: g.unknown,
    }
}

fn summary_json(g: &GradeCounts, complete: bool) -> Value {
    json!({
        "claimedCheckedUnits": g.claimed_checked_units, "observedCheckedUnits": g.observed_checked_units,
        "strong": g.strong, "weak": g.weak, "none": g.none, "unknown": g.unknown,
        "ingestionComplete": complete,
    })
}

/// Everything the evaluator and the snapshots need, gathered in one place.
struct Assessment {
    complete: bool,
    counts: Counts,
    url: (u64, u64, u64, u64, u64),
    grades: Option<(GradeCounts, Vec<Value>)>,
    decision: Decision,
    url_gate: GateMode,
}

fn assess(
    c: &Connection,
    inst: &Instance,
    settings: &Settings,
    complete: bool,
    failed_steps: Vec<String>,
) -> rusqlite::Result<Assessment> {
    let counts = counts(c, &inst.instance_id)?;
    let url = url_counts(c, &inst.instance_id)?;
    let grades = if counts.checked_units > 0 { Some(grade_instance(c, inst, complete)?) } else { None };
    let condition = inst.condition();
    let url_gate = settings.task_url_coverage_gate_mode;
    let input = Input {
        condition: condition.as_ref(),
        counts,
        discovery_frozen: inst.discovery == "frozen",
        pending_checks: inst.pending_checks(),
        url_units_remaining: url.3,
        url_gate_blocks: url_gate == GateMode::Block && inst.coverage_schema >= 2,
        failed_required_steps: failed_steps,
        evidence: grades.as_ref().map(|(g, _)| evidence_of(g)),
    };
    Ok(Assessment { complete, counts, url, grades, decision: completion::evaluate(&input), url_gate })
}

fn guidance_summary(inst: &Instance) -> Value {
    let guidance = inst.context.get("stableGuidance").and_then(Value::as_array).map_or(0, Vec::len);
    json!({"count": guidance, "mandatoryChecks": inst.mandatory_checks().len()})
}

fn awareness(inst: &Instance, a: &Assessment) -> Value {
    json!({
        "source": "instance", "instanceId": inst.instance_id, "status": inst.status,
        "discoveryState": inst.discovery,
        "progress": {
            "totalUnits": a.counts.total_units, "checkedUnits": a.counts.checked_units,
            "remainingUnits": a.counts.remaining_units,
            "percentComplete": a.counts.progress()["percentComplete"],
        },
        "completionAllowed": a.decision.allowed && !inst.terminal(),
        "completionBlockedBy": a.decision.reason,
        "guidanceSummary": guidance_summary(inst),
    })
}

fn current_state(inst: &Instance, a: &Assessment) -> Value {
    json!({
        "status": inst.status, "discoveryState": inst.discovery,
        "totalUnits": a.counts.total_units, "checkedUnits": a.counts.checked_units,
        "remainingUnits": a.counts.remaining_units, "blockedUnits": a.counts.blocked_units,
        "failedUnits": a.counts.failed_units, "urlUnitsRemaining": a.url.3,
        "pendingMandatoryChecks": inst.pending_checks(),
    })
}

fn url_coverage(c: &Connection, inst: &Instance, a: &Assessment) -> rusqlite::Result<Option<Value>> {
    let (total, checked, excluded, remaining, groups) = a.url;
    if total == 0 {
        return Ok(None);
    }
    let (obs_total, trusted, last_obs): (u64, u64, Option<i64>) = c.query_row(
        "SELECT COUNT(*), COALESCE(SUM(evidence_trusted), 0), MAX(created_at_ms) FROM tuc_observations WHERE instance_id = ?1",
        [&inst.instance_id],
        |r| Ok((count_at(r, 0)?, count_at(r, 1)?, r.get(2)?)),
    )?;
    let last_reconcile: Option<i64> = c.query_row(
        "SELECT MAX(at_ms) FROM tuc_reconcile_runs WHERE instance_id = ?1",
        [&inst.instance_id],
        |r| r.get(0),
    )?;
    let percent = if total == 0 { 0.0 } else { ((checked as f64) * 1000.0 / total as f64).round() / 10.0 };
    Ok(Some(json!({
        "coverageSchemaVersion": inst.coverage_schema,
        "urlUnitsTotal": total, "urlUnitsChecked": checked, "urlUnitsExcluded": excluded,
        "urlUnitsRemaining": remaining, "percentChecked": percent, "reportingGroupsTotal": groups,
        "observationsTotal": obs_total, "trustedObservationsTotal": trusted,
        "lastObservationAt": last_obs, "lastReconcileAt": last_reconcile,
    })))
}

fn url_gate_payload(
    c: &Connection,
    inst: &Instance,
    a: &Assessment,
    status: &str,
) -> rusqlite::Result<Value> {
    let cov = url_coverage(c, inst, a)?.unwrap_or(Value::Null);
    Ok(json!({
        "gateId": "etm.task_url_coverage", "instanceId": inst.instance_id, "status": status,
        "coverageSchemaVersion": inst.coverage_schema,
        "urlUnits": {
            "total": cov["urlUnitsTotal"], "checked": cov["urlUnitsChecked"], "excluded": cov["urlUnitsExcluded"],
            "remaining": cov["urlUnitsRemaining"], "percentChecked": cov["percentChecked"],
        },
        "reportingGroupsTotal": cov["reportingGroupsTotal"],
        "evidence": {
            "observationsTotal": cov["observationsTotal"], "trustedObservationsTotal": cov["trustedObservationsTotal"],
            "lastObservationAt": cov["lastObservationAt"], "lastReconcileAt": cov["lastReconcileAt"],
        },
        "resolution": {
            "options": ["inspect_remaining_urls_via_coverage_scan", "accept_exclusion_via_progress_unit_update", "reconcile_dry_run"],
            "recommendedTool": "nova.coverage_scan",
        },
    }))
}

/// Looks up a stored result for `(instance, clientEventId)`.
fn replay(c: &Connection, instance: &str, client_event_id: &str) -> rusqlite::Result<Option<Value>> {
    let stored: Option<Option<String>> = c
        .query_row(
            "SELECT result_json FROM task_events WHERE instance_id = ?1 AND client_event_id = ?2",
            params![instance, client_event_id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(stored.flatten().and_then(|s| serde_json::from_str::<Value>(&s).ok()).map(|mut v| {
        v["duplicate"] = json!(true);
        v
    }))
}

#[allow(clippy::too_many_arguments)]
fn log_event(
    c: &Connection,
    instance: &str,
    client_event_id: Option<&str>,
    kind: &str,
    rev_before: i64,
    rev_after: i64,
    delta: &Value,
    result: Option<&Value>,
    agent: &str,
) -> rusqlite::Result<()> {
    c.execute(
        "INSERT INTO task_events (instance_id, client_event_id, kind, rev_before, rev_after, delta_json, result_json, agent_id, at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            instance,
            client_event_id,
            kind,
            rev_before,
            rev_after,
            delta.to_string(),
            result.map(Value::to_string),
            agent,
            now_ms()
        ],
    )?;
    Ok(())
}

/// Deep-merges `patch` into `base` (objects merge, everything else replaces).
fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// Applies a collection patch `{include: [...], exclude: [...]}` (or a plain list) to a list.
fn patch_list(list: &mut Vec<Value>, patch: &Value) {
    match patch {
        Value::Array(items) => *list = items.clone(),
        Value::Object(p) => {
            if let Some(Value::Array(ex)) = p.get("exclude") {
                list.retain(|v| !ex.contains(v));
            }
            if let Some(Value::Array(inc)) = p.get("include") {
                for v in inc {
                    if !list.contains(v) {
                        list.push(v.clone());
                    }
                }
            }
        }
        _ => {}
    }
}

/// Task kinds implied by the words of a goal (docs/tasks.md, "Task kinds").
pub fn heuristic_kind(text: &str) -> Option<TaskKind> {
    let t = text.to_lowercase();
    let strict = [
        "rechtschreib",
        "schreibfehler",
        "tippfehler",
        "übersetzung",
        "übersetzen",
        "i18n",
        "lokalisierung",
        "datenschutz",
        "dsgvo",
        "impressum",
        "agb",
        "spell",
        "typo",
        "translation",
        "localization",
        "gdpr",
        "alle seiten",
        "jede seite",
        "every page",
        "all pages",
        "exhaustive",
    ];
    if ["legal", "recht ", "impressum", "agb"].iter().any(|w| t.contains(w)) {
        return Some(TaskKind::Legal);
    }
    if ["compliance", "dsgvo", "gdpr", "datenschutz"].iter().any(|w| t.contains(w)) {
        return Some(TaskKind::Compliance);
    }
    if ["accessibility", "barrierefreiheit", "wcag"].iter().any(|w| t.contains(w)) {
        return Some(TaskKind::Accessibility);
    }
    if strict.iter().any(|w| t.contains(w)) {
        return Some(TaskKind::ContentAudit);
    }
    if ["smoke", "click-pfad", "click-path", "ui-test", "ui test", "regression"].iter().any(|w| t.contains(w))
    {
        return Some(TaskKind::UiSmoke);
    }
    None
}

fn kind_from_str(s: &str) -> Option<TaskKind> {
    serde_json::from_value(json!(s)).ok()
}

/// A unit key as the agent may write it: the key itself, or the URL of a URL unit.
fn resolve_unit_key(c: &Connection, instance: &str, key: &str) -> rusqlite::Result<Option<String>> {
    let direct: Option<String> = c
        .query_row(
            "SELECT unit_key FROM task_units WHERE instance_id = ?1 AND unit_key = ?2",
            params![instance, key],
            |r| r.get(0),
        )
        .optional()?;
    if direct.is_some() {
        return Ok(direct);
    }
    let Some(norm) = normalize::normalize(key) else { return Ok(None) };
    c.query_row(
        "SELECT unit_key FROM task_units WHERE instance_id = ?1 AND url_hash = ?2",
        params![instance, normalize::url_hash(&norm)],
        |r| r.get(0),
    )
    .optional()
}

/// Inserts a unit unless it exists; returns whether it was new.
fn insert_unit(
    c: &Connection,
    instance: &str,
    key: &str,
    kind: &str,
    source: Option<&str>,
) -> rusqlite::Result<bool> {
    let position: i64 = c.query_row(
        "SELECT COALESCE(MAX(position), 0) + 1 FROM task_units WHERE instance_id = ?1",
        [instance],
        |r| r.get(0),
    )?;
    let url = normalize::normalize(key);
    let (unit_key, coverage_kind, hash, group) = match &url {
        Some(n) => {
            let h = normalize::url_hash(n);
            (format!("url:{h}"), Some("url"), Some(h), Some(tuc::pattern(n)))
        }
        None => (key.to_owned(), None, None, None),
    };
    let n = c.execute(
        "INSERT OR IGNORE INTO task_units (instance_id, unit_key, unit_kind, status, coverage_kind, url, url_normalized,
             url_hash, group_id, source_kind, position, updated_at_ms)
         VALUES (?1, ?2, ?3, 'discovered', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            instance,
            unit_key,
            if url.is_some() { "url" } else { kind },
            coverage_kind,
            url.as_ref().map(|_| key),
            url,
            hash,
            group,
            source,
            position,
            now_ms()
        ],
    )?;
    Ok(n > 0)
}

/// Allowed unit moves (docs/tasks.md, "State machines").
fn unit_move_ok(from: &str, to: UnitStatus) -> bool {
    matches!(
        (from, to),
        ("discovered", _)
            | ("blocked", UnitStatus::Checked | UnitStatus::Excluded)
            | ("failed", UnitStatus::Checked | UnitStatus::Excluded)
    ) || (from == to.as_str())
}

fn discovery_move_ok(from: &str, to: DiscoveryState) -> bool {
    !(from == "frozen" && to != DiscoveryState::Frozen)
}

impl Hub {
    /// Goal-close enforcement (docs/tasks.md, "Completion"): a goal linked to a task instance
    /// closes as completed only once that instance is completed, and, under the TUC Block mode,
    /// has no open URL units.
    pub fn linked_task_refusal(&self, goal_id: &str) -> Result<Option<ToolReply>, CallError> {
        let Some(instance) = self.cls.goals.linked(goal_id) else { return Ok(None) };
        let settings = Settings::load(&self.data);
        self.etm.with(|c| {
            let Some(inst) = load_instance(c, &instance)? else { return Ok(None) };
            let extra =
                json!({"goalId": goal_id, "linkedTaskInstanceId": instance, "taskStatus": inst.status});
            if inst.status != "completed" {
                return Ok(Some(soft(
                    "linked_task_in_progress",
                    "Linked task instance still in progress",
                    extra,
                )));
            }
            let remaining = url_counts(c, &instance)?.3;
            if settings.task_url_coverage_gate_mode == GateMode::Block
                && inst.coverage_schema >= 2
                && remaining > 0
            {
                let mut extra = extra;
                extra["urlUnitsRemaining"] = json!(remaining);
                return Ok(Some(soft(
                    "linked_task_coverage_unsatisfied",
                    "Linked task instance has unsatisfied coverage units",
                    extra,
                )));
            }
            Ok(None)
        })
    }

    fn agent(rec: &CallRecord) -> String {
        rec.obs.agent_id.clone()
    }

    /// `nova.task_profile_upsert`.
    pub async fn task_profile_upsert(
        &self,
        rec: &mut CallRecord,
        a: ProfileUpsertArgs,
    ) -> Result<ToolReply, CallError> {
        if let Some(cond) = &a.completion_condition {
            cond.validate().map_err(|m| CallError::invalid("completionCondition", m))?;
        }
        if let Some(conf) = a.confidence
            && !(0.0..=1.0).contains(&conf)
        {
            return Err(CallError::invalid("confidence", format!("confidence is {conf}; allowed 0-1")));
        }
        for (field, v) in [("taskType", &a.task_type), ("displayName", &a.display_name), ("goal", &a.goal)] {
            if v.trim().is_empty() {
                return Err(CallError::invalid(field, format!("`{field}` must not be empty")));
            }
        }
        rec.executed();
        let now = now_ms();
        self.etm.with(|c| {
            let tx = crate::store::write_tx(c)?;
            let seed: Option<Value> = match &a.source_instance_id {
                Some(id) => load_instance(&tx, id)?.map(|i| i.context),
                None => None,
            };
            let pick = |given: Option<Value>, key: &str, default: Value| {
                given.or_else(|| seed.as_ref().and_then(|s| s.get(key).cloned())).unwrap_or(default)
            };
            let guidance = pick(a.stable_guidance.clone().map(Value::from), "stableGuidance", json!([]));
            let checks = pick(a.mandatory_checks.as_ref().map(|m| json!(m)), "mandatoryChecks", json!([]));
            let cond = pick(a.completion_condition.as_ref().map(|m| json!(m)), "completionCondition", Value::Null);
            let exceptions = pick(a.known_exceptions.clone().map(Value::from), "knownExceptions", json!([]));
            let verification =
                pick(a.verification_contract.as_ref().map(|m| json!(m)), "verificationContract", Value::Null);
            let existing: Option<i64> = match &a.profile_id {
                Some(id) => tx
                    .query_row("SELECT content_rev FROM task_profiles WHERE profile_id = ?1", [id], |r| r.get(0))
                    .optional()?,
                None => None,
            };
            if let (Some(expected), Some(current)) = (a.expected_content_rev, existing)
                && expected != current
            {
                return Ok(soft(
                    "content_rev_conflict",
                    format!("the profile is at contentRev {current}, not {expected}"),
                    json!({"currentContentRev": current, "profileId": a.profile_id}),
                ));
            }
            let cond_text = (!cond.is_null()).then(|| {
                let mut c = cond.clone();
                if !verification.is_null() {
                    c["__verification"] = verification.clone();
                }
                c.to_string()
            });
            let reply = match existing {
                Some(rev) => {
                    let id = a.profile_id.clone().unwrap_or_default();
                    tx.execute(
                        "UPDATE task_profiles SET task_type = ?1, display_name = ?2, goal = ?3, domain = ?4, platform = ?5,
                            stable_guidance = ?6, mandatory_checks = ?7, completion_condition = ?8, known_exceptions = ?9,
                            confidence = COALESCE(?10, confidence), content_rev = ?11, updated_at_ms = ?12
                         WHERE profile_id = ?13",
                        params![
                            a.task_type, a.display_name, a.goal, a.domain, a.platform, guidance.to_string(),
                            checks.to_string(), cond_text, exceptions.to_string(), a.confidence, rev + 1, now, id
                        ],
                    )?;
                    json!({"profileId": id, "contentRev": rev + 1, "action": "updated"})
                }
                None => {
                    let id = a.profile_id.clone().unwrap_or_else(|| format!("tp-{}", hex32()));
                    tx.execute(
                        "INSERT INTO task_profiles (profile_id, task_type, display_name, goal, domain, platform,
                            stable_guidance, mandatory_checks, completion_condition, known_exceptions, confidence,
                            content_rev, created_at_ms, updated_at_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 1, ?12, ?12)",
                        params![
                            id, a.task_type, a.display_name, a.goal, a.domain, a.platform, guidance.to_string(),
                            checks.to_string(), cond_text, exceptions.to_string(), a.confidence.unwrap_or(0.5), now
                        ],
                    )?;
                    json!({"profileId": id, "contentRev": 1, "action": "created"})
                }
            };
            tx.commit()?;
            Ok(ok(reply))
        })
    }

    /// `nova.task_profile_get`.
    pub async fn task_profile_get(
        &self,
        rec: &mut CallRecord,
        a: ProfileGetArgs,
    ) -> Result<ToolReply, CallError> {
        rec.executed();
        self.etm.with(|c| {
            Ok(match profile_json(c, &a.profile_id)? {
                Some(mut p) => {
                    let instances: (u64, u64) = c.query_row(
                        "SELECT COUNT(*), COALESCE(SUM(status = 'completed'), 0) FROM task_instances WHERE profile_id = ?1",
                        [&a.profile_id],
                        |r| Ok((count_at(r, 0)?, count_at(r, 1)?)),
                    )?;
                    p["confidenceTuning"] = json!({
                        "currentConfidence": p["confidence"], "instances": instances.0, "completed": instances.1,
                    });
                    ok(p)
                }
                None => soft("not_found", "Profile not found.", json!({"profileId": a.profile_id})),
            })
        })
    }

    /// `nova.task_profiles`.
    pub async fn task_profiles(&self, rec: &mut CallRecord, a: ProfilesArgs) -> Result<ToolReply, CallError> {
        crate::browse::check_range("limit", a.limit, (1, 500, 100))?;
        rec.executed();
        self.etm.with(|c| {
            let mut stmt = c.prepare(
                "SELECT profile_id FROM task_profiles
                 WHERE (?1 IS NULL OR task_type = ?1) AND (?2 IS NULL OR domain = ?2) AND (?3 IS NULL OR platform = ?3)
                   AND (?4 OR archived = 0)
                 ORDER BY updated_at_ms DESC LIMIT ?5",
            )?;
            let ids: Vec<String> = stmt
                .query_map(params![a.task_type, a.domain, a.platform, a.include_archived, a.limit], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            let mut profiles = Vec::new();
            for id in ids {
                if let Some(p) = profile_json(c, &id)? {
                    profiles.push(json!({
                        "profileId": p["profileId"], "taskType": p["taskType"], "displayName": p["displayName"],
                        "domain": p["domain"], "platform": p["platform"], "goal": p["goal"],
                        "confidence": p["confidence"], "contentRev": p["contentRev"], "usageCount": p["usageCount"],
                        "updatedAt": p["updatedAtUtc"],
                    }));
                }
            }
            Ok(ok(json!({"count": profiles.len(), "profiles": profiles})))
        })
    }

    /// `nova.task_search` and `nova.task_match` share the scorer.
    fn scored(
        &self,
        query: &str,
        domain: Option<&str>,
        platform: Option<&str>,
        task_type: Option<&str>,
    ) -> Result<Vec<(Value, matching::Score)>, CallError> {
        self.etm.with(|c| {
            let ids: Vec<String> = c
                .prepare("SELECT profile_id FROM task_profiles WHERE archived = 0 AND (?1 IS NULL OR task_type = ?1)")?
                .query_map([task_type], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            let mut out = Vec::new();
            for id in ids {
                let Some(p) = profile_json(c, &id)? else { continue };
                let cand = matching::Candidate {
                    display_name: p["displayName"].as_str().unwrap_or_default().to_owned(),
                    goal: p["goal"].as_str().unwrap_or_default().to_owned(),
                    task_type: p["taskType"].as_str().unwrap_or_default().to_owned(),
                    guidance: p["stableGuidance"].to_string(),
                    domain: p["domain"].as_str().map(str::to_owned),
                    platform: p["platform"].as_str().map(str::to_owned),
                };
                let s = matching::score(query, domain, platform, &cand);
                out.push((p, s));
            }
            out.sort_by(|a, b| b.1.final_score.total_cmp(&a.1.final_score));
            Ok(out)
        })
    }

    /// `nova.task_search`.
    pub async fn task_search(&self, rec: &mut CallRecord, a: SearchArgs) -> Result<ToolReply, CallError> {
        crate::browse::check_range("limit", a.limit, (1, 50, 10))?;
        if a.query.trim().is_empty() {
            return Err(CallError::invalid("query", "`query` must not be empty"));
        }
        rec.executed();
        const MIN_SCORE: f64 = 0.3;
        let scored =
            self.scored(&a.query, a.domain.as_deref(), a.platform.as_deref(), a.task_type.as_deref())?;
        let threshold = matching::threshold(a.domain.is_some(), a.platform.is_some());
        let refs: Vec<&matching::Score> = scored.iter().map(|(_, s)| s).collect();
        let accepted = matching::accepted(&refs, threshold);
        let weak = scored.iter().filter(|(_, s)| s.final_score < MIN_SCORE).count();
        let candidates: Vec<Value> = scored
            .iter()
            .zip(accepted)
            .filter(|((_, s), _)| s.final_score >= MIN_SCORE)
            .take(a.limit as usize)
            .map(|((p, s), acc)| {
                json!({
                    "profileId": p["profileId"], "displayName": p["displayName"], "goal": p["goal"],
                    "taskType": p["taskType"], "domain": p["domain"], "score": s.final_score, "accepted": acc,
                    "hasGuidance": p["stableGuidance"].as_array().is_some_and(|g| !g.is_empty()),
                    "usageCount": p["usageCount"],
                })
            })
            .collect();
        let hint = if candidates.is_empty() {
            "No stored task matches; create one with nova.task_instance_create (adHocContext)."
        } else {
            "Use nova.task_instance_create with the profileId of an accepted candidate."
        };
        Ok(ok(json!({
            "count": candidates.len(), "candidates": candidates, "minScore": MIN_SCORE,
            "omittedWeakMatches": weak, "hint": hint,
        })))
    }

    /// `nova.task_match`.
    pub async fn task_match(&self, rec: &mut CallRecord, a: MatchArgs) -> Result<ToolReply, CallError> {
        if a.task_description.trim().is_empty() {
            return Err(CallError::invalid("taskDescription", "`taskDescription` must not be empty"));
        }
        rec.executed();
        let target_url =
            a.target_url.clone().or_else(|| a.current_scope.as_ref().and_then(|s| s.target_url.clone()));
        let domain =
            a.domain.clone().or_else(|| target_url.as_deref().and_then(normalize::parts).map(|p| p.host));
        let scored = self.scored(
            &a.task_description,
            domain.as_deref(),
            a.platform.as_deref(),
            a.task_type.as_deref(),
        )?;
        let threshold = matching::threshold(domain.is_some(), a.platform.is_some());
        let refs: Vec<&matching::Score> = scored.iter().map(|(_, s)| s).collect();
        let accepted = matching::accepted(&refs, threshold);
        let matches: Vec<Value> = scored
            .iter()
            .zip(accepted.iter())
            .take(3)
            .map(|((p, s), acc)| {
                json!({
                    "profileId": p["profileId"], "displayName": p["displayName"], "finalScore": s.final_score,
                    "accepted": acc, "thresholdUsed": threshold,
                    "scoreBreakdown": {
                        "displayNameScore": s.display_name_score, "goalScore": s.goal_score,
                        "taskTypeScore": s.task_type_score, "domainContribution": s.domain_contribution,
                        "platformContribution": s.platform_contribution, "fuzzy": s.fuzzy,
                        "keywordRaw": s.keyword_raw, "thresholdUsed": threshold, "evidenceMask": s.evidence_mask,
                    },
                })
            })
            .collect();
        let best = scored.iter().zip(accepted.iter()).find(|(_, acc)| **acc).map(|((p, _), _)| p.clone());
        let awareness = best.as_ref().map(|p| {
            json!({
                "source": "profile", "profileId": p["profileId"], "taskType": p["taskType"],
                "displayName": p["displayName"], "confidence": p["confidence"], "goal": p["goal"],
                "completionCondition": p["completionCondition"],
                "guidanceSummary": {"count": p["stableGuidance"].as_array().map_or(0, Vec::len)},
                "mandatoryChecksSummary": {"count": p["mandatoryChecks"].as_array().map_or(0, Vec::len)},
                "knownExceptionsCount": p["knownExceptions"].as_array().map_or(0, Vec::len),
            })
        });
        Ok(ok(json!({
            "count": matches.len(), "matches": matches,
            "bestMatch": best.as_ref().map(|p| p["profileId"].clone()),
            "targetUrl": target_url, "currentScope": a.current_scope, "taskAwareness": awareness,
        })))
    }

    /// `nova.task_instance_create`.
    pub async fn task_instance_create(
        &self,
        rec: &mut CallRecord,
        a: CreateArgs,
    ) -> Result<ToolReply, CallError> {
        let agent = Self::agent(rec);
        if a.profile_id.is_none() && a.ad_hoc_context.is_none() {
            return Err(CallError::invalid("profileId", "one of `profileId` or `adHocContext` is required"));
        }
        if let Some(ctx) = &a.ad_hoc_context {
            ctx.completion_condition
                .validate()
                .map_err(|m| CallError::invalid("adHocContext.completionCondition", m))?;
            let mut ids: Vec<&str> = ctx.mandatory_checks.iter().map(|c| c.check_id.as_str()).collect();
            ids.sort_unstable();
            if ids.windows(2).any(|w| w[0] == w[1]) || ids.iter().any(|i| i.trim().is_empty()) {
                return Err(CallError::invalid(
                    "adHocContext.mandatoryChecks",
                    "mandatory checks need distinct, non-empty `checkId`s",
                ));
            }
        }
        if let Some(o) = &a.overrides
            && o.contains_key("mandatoryChecks")
        {
            return Err(CallError::invalid(
                "overrides.mandatoryChecks",
                "`overrides.mandatoryChecks` is reserved",
            ));
        }
        if let Some(src) = &a.unit_source {
            match src.kind {
                UnitSourceKind::Explicit if src.explicit_urls.as_ref().is_none_or(Vec::is_empty) => {
                    return Err(CallError::invalid(
                        "unitSource.explicitUrls",
                        "explicit unit sources need `explicitUrls`",
                    ));
                }
                UnitSourceKind::SiteUrls | UnitSourceKind::Crawler
                    if src.scope_domain.as_deref().is_none_or(|d| d.trim().is_empty()) =>
                {
                    return Err(CallError::invalid(
                        "unitSource.scopeDomain",
                        "site_urls and crawler sources need `scopeDomain`",
                    ));
                }
                _ => {}
            }
        }
        rec.executed();
        // The definition: a profile or the ad-hoc context.
        let (profile_id, profile_rev, mut context) = match (&a.profile_id, &a.ad_hoc_context) {
            (Some(id), _) => {
                let p = self.etm.with(|c| profile_json(c, id))?;
                let Some(p) = p else {
                    return Ok(soft("not_found", "Profile not found.", json!({"profileId": id})));
                };
                if p["archived"] == json!(true) {
                    return Ok(soft(
                        "profile_archived",
                        "The profile is archived.",
                        json!({"profileId": id}),
                    ));
                }
                let mut ctx = json!({
                    "taskType": p["taskType"], "displayName": p["displayName"], "goal": p["goal"],
                    "domain": p["domain"], "platform": p["platform"], "stableGuidance": p["stableGuidance"],
                    "mandatoryChecks": p["mandatoryChecks"], "completionCondition": p["completionCondition"],
                    "knownExceptions": p["knownExceptions"],
                });
                if !p["verificationContract"].is_null() {
                    ctx["verificationContract"] = p["verificationContract"].clone();
                }
                (Some(id.clone()), p["contentRev"].as_i64(), ctx)
            }
            (None, Some(ctx)) => (None, None, json!(ctx)),
            (None, None) => unreachable_pair(),
        };
        if let Some(scope) = &a.current_scope {
            context["currentScope"] = json!(scope);
        }
        if let Some(o) = &a.overrides {
            let mut o = o.clone();
            let patch = o.remove("currentScopePatch").or_else(|| o.remove("scope"));
            if let Some(p) = patch {
                let mut scope = context.get("currentScope").cloned().unwrap_or(json!({}));
                merge(&mut scope, &p);
                context["currentScope"] = scope;
            }
            for key in ["stableGuidance", "knownExceptions", "tags", "sections", "languages"] {
                if let Some(p) = o.remove(key) {
                    let mut list = context.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
                    patch_list(&mut list, &p);
                    context[key] = json!(list);
                }
            }
            if let Some(v) = o.remove("variables") {
                let mut vars = context.get("variables").cloned().unwrap_or(json!({}));
                merge(&mut vars, &v);
                context["variables"] = vars;
            }
            if let Some(k) = o.keys().next() {
                return Err(CallError::invalid(&format!("overrides.{k}"), format!("unknown override `{k}`")));
            }
        }
        let context_text = context.to_string();
        let hash = sha256_hex(&context_text);
        // Task kind: the stricter of declared, profile and heuristic kinds.
        let heuristic = heuristic_kind(&format!(
            "{} {}",
            context["displayName"].as_str().unwrap_or_default(),
            context["goal"].as_str().unwrap_or_default()
        ));
        let profile_kind = context["taskType"].as_str().and_then(kind_from_str);
        let effective = [heuristic, a.declared_task_kind, profile_kind]
            .into_iter()
            .flatten()
            .max_by_key(|k| k.strictness())
            .map_or("default_unknown_kind", TaskKind::as_str);

        // The evidence scope: the tab whose calls count.
        let target = match &a.target_id {
            Some(t) => Some(t.clone()),
            None => self.leases.held_by(&agent).into_iter().next().or_else(|| Some("active".into())),
        };
        let tab = match &target {
            Some(t) => self.resolve_target(t).await.ok(),
            None => None,
        };
        let instance_id = hex32();
        let (scope_id, scope_reason, new_scope) = match &tab {
            Some(t) => match self.scopes.open_instance(&t.target_id, &agent, &instance_id) {
                Ok((id, new)) => (Some(id), None, new),
                Err(_) => (None, Some("evidence_scope_target_busy"), false),
            },
            None => (None, Some("evidence_scope_no_target"), false),
        };
        if let (Some(id), Some(t), true) = (&scope_id, &tab, new_scope) {
            self.recorder.flush().await;
            self.scopes.backfill(id, &t.target_id, &agent);
        }

        // Units from the unit source.
        let mut seed_urls: Vec<(String, &'static str)> = Vec::new();
        let mut skipped = 0usize;
        if let Some(src) = &a.unit_source {
            let urls = match src.kind {
                UnitSourceKind::Explicit => src.explicit_urls.clone().unwrap_or_default(),
                kind => {
                    let domain = src.scope_domain.clone().unwrap_or_default();
                    match tuc::sources::site_urls(
                        self,
                        &domain,
                        a.target_url.as_deref(),
                        kind == UnitSourceKind::Crawler,
                    )
                    .await
                    {
                        Ok(urls) => urls,
                        Err(message) => {
                            return Ok(soft(
                                "unit_source_unavailable",
                                message,
                                json!({"scopeDomain": domain}),
                            ));
                        }
                    }
                }
            };
            let kind = match src.kind {
                UnitSourceKind::Explicit => "explicit",
                UnitSourceKind::SiteUrls => "site_urls",
                UnitSourceKind::Crawler => "crawler",
            };
            for u in urls.into_iter().take(MAX_SEEDED_URLS) {
                if normalize::normalize(&u).is_some() {
                    seed_urls.push((u, kind));
                } else {
                    skipped += 1;
                }
            }
        }
        let now = now_ms();
        let unit_kind = context["completionCondition"]["unitKind"].as_str().unwrap_or("item").to_owned();
        let target_url = a.target_url.clone().or_else(|| tab.as_ref().map(|t| t.url.clone()));
        let freeze = a.unit_source.as_ref().is_some_and(|s| s.freeze_after_populate);
        let schema = if a.unit_source.is_some() { 2 } else { 1 };
        let written = self.etm.with(|c| {
            let tx = crate::store::write_tx(c)?;
            tx.execute(
                "INSERT INTO task_instances (instance_id, profile_id, profile_rev_applied, instance_rev,
                    effective_context_hash, effective_context_json, status, discovery_state, agent_id, target_url,
                    target_id, declared_task_kind, effective_task_kind, coverage_schema_version, evidence_scope_id,
                    evidence_scope_reason, started_at_ms, last_activity_at_ms)
                 VALUES (?1, ?2, ?3, 0, ?4, ?5, 'pending', 'unknown', ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14)",
                params![
                    instance_id,
                    profile_id,
                    profile_rev,
                    hash,
                    context_text,
                    agent,
                    target_url,
                    tab.as_ref().map(|t| t.target_id.clone()),
                    a.declared_task_kind.map(TaskKind::as_str),
                    effective,
                    schema,
                    scope_id,
                    scope_reason,
                    now
                ],
            )?;
            let mut written = 0usize;
            for (u, kind) in &seed_urls {
                if insert_unit(&tx, &instance_id, u, &unit_kind, Some(kind))? {
                    written += 1;
                } else {
                    skipped += 1;
                }
            }
            if freeze && written > 0 {
                tx.execute("UPDATE task_instances SET discovery_state = 'frozen' WHERE instance_id = ?1", [&instance_id])?;
            } else if written > 0 {
                tx.execute("UPDATE task_instances SET discovery_state = 'partial' WHERE instance_id = ?1", [&instance_id])?;
            }
            if let Some(p) = &profile_id {
                tx.execute("UPDATE task_profiles SET usage_count = usage_count + 1 WHERE profile_id = ?1", [p])?;
            }
            log_event(&tx, &instance_id, None, "created", -1, 0, &json!({"unitsWritten": written}), None, &agent)?;
            tx.commit()?;
            Ok(written)
        })?;
        let settings = Settings::load(&self.data);
        self.etm.with(|c| {
            let Some(inst) = load_instance(c, &instance_id)? else {
                return Ok(ToolReply::failure("store_error", "the instance vanished", true));
            };
            let a2 = assess(c, &inst, &settings, true, Vec::new())?;
            let groups = a2.url.4;
            Ok(ok(json!({
                "instanceId": inst.instance_id, "profileId": inst.profile_id,
                "profileRevApplied": inst.profile_rev_applied, "instanceRev": inst.rev,
                "effectiveContextHash": inst.context_hash, "effectiveContextJson": inst.context,
                "status": inst.status, "discoveryState": inst.discovery, "agentId": inst.agent_id,
                "targetId": inst.target_id, "effectiveTaskKind": inst.task_kind,
                "taskAwareness": awareness(&inst, &a2),
                "evidenceScope": scope_reason.map(|r| json!({"reason": r, "tracking": false})),
                "urlCoverage": a.unit_source.as_ref().map(|_| json!({
                    "unitsWritten": written, "urlsSkipped": skipped, "reportingGroups": groups,
                    "coverageSchemaVersion": schema, "persistenceFailed": false,
                })),
            })))
        })
    }

    /// `nova.task_instance_get`.
    pub async fn task_instance_get(&self, rec: &mut CallRecord, a: GetArgs) -> Result<ToolReply, CallError> {
        crate::browse::check_range(
            "discoveredUnitsPreviewLimit",
            a.discovered_units_preview_limit,
            (1, 200, 20),
        )?;
        crate::browse::check_range("recentEventLimit", a.recent_event_limit, (1, 100, 10))?;
        rec.executed();
        // Flush barrier: everything recorded so far is in the table before correlation.
        let complete = self.recorder.flush_within(crate::tob::FLUSH_MAX).await;
        let settings = Settings::load(&self.data);
        self.etm.with(|c| {
            let Some(inst) = load_instance(c, &a.instance_id)? else {
                return Ok(soft("not_found", "Task instance not found.", json!({"instanceId": a.instance_id})));
            };
            let asm = assess(c, &inst, &settings, complete, Vec::new())?;
            let mut body = instance_json(&inst, &asm);
            if let Some(cov) = url_coverage(c, &inst, &asm)? {
                body["urlCoverage"] = cov;
            }
            if a.include_discovered_units_preview {
                let preview: Vec<Value> = c
                    .prepare("SELECT unit_key, unit_kind, url FROM task_units WHERE instance_id = ?1 AND status = 'discovered' ORDER BY position LIMIT ?2")?
                    .query_map(params![inst.instance_id, a.discovered_units_preview_limit], |r| {
                        Ok(json!({"unitKey": r.get::<_, String>(0)?, "unitKind": r.get::<_, String>(1)?, "url": r.get::<_, Option<String>>(2)?}))
                    })?
                    .collect::<Result<_, _>>()?;
                body["discoveredUnitsPreview"] = json!(preview);
            }
            if a.include_recent_events {
                let events: Vec<Value> = c
                    .prepare("SELECT kind, client_event_id, rev_before, rev_after, delta_json, agent_id, at_ms FROM task_events WHERE instance_id = ?1 ORDER BY id DESC LIMIT ?2")?
                    .query_map(params![inst.instance_id, a.recent_event_limit], |r| {
                        Ok(json!({
                            "kind": r.get::<_, String>(0)?, "clientEventId": r.get::<_, Option<String>>(1)?,
                            "revBefore": r.get::<_, Option<i64>>(2)?, "revAfter": r.get::<_, Option<i64>>(3)?,
                            "delta": r.get::<_, Option<String>>(4)?.and_then(|d| serde_json::from_str::<Value>(&d).ok()),
                            "agentId": r.get::<_, Option<String>>(5)?, "atUtc": r.get::<_, i64>(6)?,
                        }))
                    })?
                    .collect::<Result<_, _>>()?;
                body["recentEvents"] = json!(events);
            }
            Ok(ok(body))
        })
    }

    /// `nova.task_instance_progress`.
    pub async fn task_instance_progress(
        &self,
        rec: &mut CallRecord,
        a: ProgressArgs,
    ) -> Result<ToolReply, CallError> {
        if a.client_event_id.trim().is_empty() {
            return Err(CallError::invalid("clientEventId", "`clientEventId` must not be empty"));
        }
        for u in &a.unit_updates {
            if u.status == UnitStatus::Excluded && u.reason.as_deref().is_none_or(|r| r.trim().is_empty()) {
                return Err(CallError::invalid(
                    "unitUpdates.reason",
                    format!("excluding `{}` needs a `reason`", u.unit_key),
                ));
            }
        }
        rec.executed();
        let agent = Self::agent(rec);
        let settings = Settings::load(&self.data);
        self.etm.with(|c| {
            if let Some(stored) = replay(c, &a.instance_id, &a.client_event_id)? {
                return Ok(ok(stored));
            }
            let tx = crate::store::write_tx(c)?;
            let Some(inst) = load_instance(&tx, &a.instance_id)? else {
                return Ok(soft("not_found", "Task instance not found.", json!({"instanceId": a.instance_id})));
            };
            if inst.terminal() {
                return Ok(soft(
                    "terminal_status",
                    format!("the instance is {}", inst.status),
                    json!({"applied": false, "status": inst.status, "instanceRev": inst.rev}),
                ));
            }
            if a.expected_instance_rev != inst.rev {
                return Ok(soft(
                    "rev_conflict",
                    format!("the instance is at rev {}, not {}", inst.rev, a.expected_instance_rev),
                    json!({"applied": false, "currentInstanceRev": inst.rev, "instanceRev": inst.rev}),
                ));
            }
            if let Some(to) = a.set_discovery_state
                && !discovery_move_ok(&inst.discovery, to)
            {
                return Ok(soft(
                    "illegal_discovery_transition",
                    format!("discovery cannot move from {} to {}: unfreezing is not allowed", inst.discovery, to.as_str()),
                    json!({"applied": false, "discoveryState": inst.discovery}),
                ));
            }
            let default_kind = inst.condition().map_or("item".to_owned(), |c| c.unit_kind);
            let mut discovered = 0;
            for u in &a.discovered_units {
                if insert_unit(&tx, &inst.instance_id, &u.unit_key, u.unit_kind.as_deref().unwrap_or(&default_kind), Some("agent"))? {
                    discovered += 1;
                }
            }
            let mut problems = Vec::new();
            let mut moved = 0;
            for u in &a.unit_updates {
                let Some(key) = resolve_unit_key(&tx, &inst.instance_id, &u.unit_key)? else {
                    problems.push(json!({"unitKey": u.unit_key, "problem": "unknown_unit"}));
                    continue;
                };
                let from: String = tx.query_row(
                    "SELECT status FROM task_units WHERE instance_id = ?1 AND unit_key = ?2",
                    params![inst.instance_id, key],
                    |r| r.get(0),
                )?;
                if !unit_move_ok(&from, u.status) {
                    problems.push(json!({"unitKey": u.unit_key, "problem": "illegal_transition", "from": from, "to": u.status.as_str()}));
                    continue;
                }
                let now = now_ms();
                tx.execute(
                    "UPDATE task_units SET status = ?1, reason = ?2, evidence_class = ?3, updated_at_ms = ?4,
                        excluded_at_ms = CASE WHEN ?1 = 'excluded' THEN ?4 ELSE excluded_at_ms END,
                        exclusion_reason = CASE WHEN ?1 = 'excluded' THEN ?2 ELSE exclusion_reason END,
                        exclusion_source = CASE WHEN ?1 = 'excluded' THEN 'agent' ELSE exclusion_source END
                     WHERE instance_id = ?5 AND unit_key = ?6",
                    params![u.status.as_str(), u.reason, u.evidence_class, now, inst.instance_id, key],
                )?;
                moved += 1;
            }
            if !problems.is_empty() {
                // Nothing is written when any update is refused.
                return Ok(soft(
                    "invalid_unit_updates",
                    format!("{} unit update(s) refused; nothing was applied", problems.len()),
                    json!({"applied": false, "problems": problems, "instanceRev": inst.rev}),
                ));
            }
            for f in &a.findings {
                tx.execute(
                    "INSERT OR IGNORE INTO task_findings (instance_id, finding_key, detail, at_ms) VALUES (?1, ?2, ?3, ?4)",
                    params![inst.instance_id, f.finding_key, f.detail, now_ms()],
                )?;
            }
            let known: Vec<String> = inst.mandatory_checks().into_iter().map(|c| c.check_id).collect();
            let mut checks = inst.checks_state.as_object().cloned().unwrap_or_default();
            for u in &a.mandatory_check_updates {
                if !known.contains(&u.check_id) {
                    return Ok(soft(
                        "unknown_mandatory_check",
                        format!("`{}` is not a mandatory check of this task (known: {})", u.check_id, known.join(", ")),
                        json!({"applied": false, "instanceRev": inst.rev}),
                    ));
                }
                checks.insert(u.check_id.clone(), json!(u.state));
            }
            let mut resume = inst.resume_state.clone();
            if !resume.is_object() {
                resume = json!({});
            }
            if let Some(d) = &a.resume_state_delta {
                merge(&mut resume, &json!(d));
            }
            let discovery = match a.set_discovery_state {
                Some(s) => s.as_str().to_owned(),
                None if discovered > 0 && inst.discovery == "unknown" => "partial".to_owned(),
                None => inst.discovery.clone(),
            };
            let rev = inst.rev + 1;
            let now = now_ms();
            tx.execute(
                "UPDATE task_instances SET instance_rev = ?1, status = 'active', discovery_state = ?2, resume_state = ?3,
                    mandatory_checks_state = ?4, last_activity_at_ms = ?5 WHERE instance_id = ?6",
                params![rev, discovery, resume.to_string(), Value::Object(checks).to_string(), now, inst.instance_id],
            )?;
            let updated = load_instance(&tx, &inst.instance_id)?.unwrap_or(inst.clone());
            let asm = assess(&tx, &updated, &settings, false, Vec::new())?;
            let hint = if asm.decision.allowed {
                "Completion policy satisfied. You may call task_instance_complete.".to_owned()
            } else {
                format!("Not complete yet: {}", asm.decision.message)
            };
            let result = json!({
                "ok": true, "status": "ok", "applied": true, "instanceId": updated.instance_id, "instanceRev": rev,
                "progress": asm.counts.progress(), "discoveryState": updated.discovery,
                "unitsDiscovered": discovered, "unitsUpdated": moved,
                "completionAllowed": asm.decision.allowed, "hint": hint,
            });
            let delta = json!({
                "discoveredUnits": a.discovered_units.iter().map(|u| &u.unit_key).collect::<Vec<_>>(),
                "unitUpdates": a.unit_updates.iter().map(|u| json!({"unitKey": u.unit_key, "status": u.status.as_str()})).collect::<Vec<_>>(),
                "findings": a.findings.len(), "note": a.note, "setDiscoveryState": a.set_discovery_state.map(DiscoveryState::as_str),
            });
            log_event(&tx, &updated.instance_id, Some(&a.client_event_id), "progress", inst.rev, rev, &delta, Some(&result), &agent)?;
            for u in a.unit_updates.iter().filter(|u| u.status == UnitStatus::Checked) {
                log_event(&tx, &updated.instance_id, None, "unit_checked", rev, rev, &json!({"unitKey": u.unit_key}), None, &agent)?;
            }
            tx.commit()?;
            Ok(ok(result))
        })
    }

    /// `nova.task_instance_verify`.
    pub async fn task_instance_verify(
        &self,
        rec: &mut CallRecord,
        a: VerifyArgs,
    ) -> Result<ToolReply, CallError> {
        rec.executed();
        let complete = self.recorder.flush_within(crate::tob::FLUSH_MAX).await;
        let settings = Settings::load(&self.data);
        self.etm.with(|c| {
            let Some(inst) = load_instance(c, &a.instance_id)? else {
                return Ok(soft("not_found", "Task instance not found.", json!({"instanceId": a.instance_id})));
            };
            let asm = assess(c, &inst, &settings, complete, Vec::new())?;
            let verification = json!({
                "completionAllowed": asm.decision.allowed, "reasonCode": asm.decision.reason,
                "message": asm.decision.message, "isError": false, "status": inst.status,
                "discoveryState": inst.discovery, "currentState": current_state(&inst, &asm),
            });
            Ok(ok(match inst.verification() {
                Some(vc) if !vc.steps.is_empty() => json!({
                    "hasContract": true, "instanceId": inst.instance_id, "stepCount": vc.steps.len(),
                    "requiredCount": vc.steps.iter().filter(|s| s.required).count(), "steps": vc.steps,
                    "completionVerification": verification,
                    "instructions": "Run each step with its tool and arguments, then pass the results as evidenceReport[] \
                                     ({stepId, state: passed|failed|inconclusive|skipped, toolResult, detail}) to \
                                     nova.task_instance_complete. A required fast-gate step that failed blocks completion.",
                    "taskAwareness": awareness(&inst, &asm),
                }),
                _ => json!({
                    "hasContract": false, "instanceId": inst.instance_id, "reason": "no_contract",
                    "completionVerification": verification, "taskAwareness": awareness(&inst, &asm),
                }),
            }))
        })
    }

    /// `nova.task_instance_complete`.
    pub async fn task_instance_complete(
        &self,
        rec: &mut CallRecord,
        a: CompleteArgs,
    ) -> Result<ToolReply, CallError> {
        if a.client_event_id.trim().is_empty() {
            return Err(CallError::invalid("clientEventId", "`clientEventId` must not be empty"));
        }
        rec.executed();
        let agent = Self::agent(rec);
        let settings = Settings::load(&self.data);
        if let Some(stored) = self.etm.with(|c| replay(c, &a.instance_id, &a.client_event_id))? {
            return Ok(ok(stored));
        }
        let inst = self.etm.with(|c| load_instance(c, &a.instance_id))?;
        let Some(inst) = inst else {
            return Ok(soft("not_found", "Task instance not found.", json!({"instanceId": a.instance_id})));
        };
        if inst.terminal() {
            return Ok(soft(
                "terminal_status",
                format!("the instance is {}", inst.status),
                json!({"completed": false, "status": inst.status}),
            ));
        }
        if a.expected_instance_rev != inst.rev {
            return Ok(soft(
                "rev_conflict",
                format!("the instance is at rev {}, not {}", inst.rev, a.expected_instance_rev),
                json!({"completed": false, "currentInstanceRev": inst.rev}),
            ));
        }
        // Flush barrier: the scope stops binding, every call up to the barrier is committed.
        let barrier = self.recorder.last_seq();
        if let Some(s) = &inst.scope_id {
            self.scopes.flushing(s, barrier);
        }
        let complete = self.recorder.flush_within(crate::tob::FLUSH_MAX).await;
        let verification = verification_results(&inst, &a.evidence_report);
        let failed_steps: Vec<String> =
            verification.as_ref().map(|(_, failed)| failed.clone()).unwrap_or_default();
        let outcome = self.etm.with(|c| {
            let asm = assess(c, &inst, &settings, complete, failed_steps)?;
            let summary = asm.grades.as_ref().map(|(g, _)| summary_json(g, complete));
            let mut gates = Map::new();
            if asm.url.3 > 0 && inst.coverage_schema >= 2 {
                match asm.url_gate {
                    GateMode::Block => {}
                    GateMode::Warn => {
                        gates.insert("taskUrlCoverage".into(), url_gate_payload(c, &inst, &asm, "warned")?);
                    }
                    GateMode::ShadowBlock => {
                        tracing::info!(instance = %inst.instance_id, remaining = asm.url.3, "shadow block: task URL coverage");
                    }
                    GateMode::Off => {}
                }
            }
            if !asm.decision.allowed {
                let reason = asm.decision.reason.unwrap_or("policy_not_satisfied");
                let mut body = json!({
                    "ok": false, "status": "rejected", "completed": false, "instanceId": inst.instance_id,
                    "instanceRev": inst.rev, "reason": reason, "reasonCode": reason,
                    "retryable": matches!(reason, "evidence_gap" | "url_units_remaining"),
                    "message": asm.decision.message, "currentState": current_state(&inst, &asm),
                });
                if let Some(mut s) = summary {
                    if let Some((gap, max, mode)) = asm.decision.gap {
                        s["gapPercent"] = json!(gap);
                        s["maxGapPercent"] = json!(max);
                        s["policyMode"] = json!(mode);
                    }
                    body["evidenceSummary"] = s;
                }
                if let Some(ex) = asm.grades.as_ref().map(|(_, e)| e) {
                    body["perUnitExceptions"] = json!({"itemCount": ex.len(), "items": ex.iter().take(100).collect::<Vec<_>>()});
                }
                if let Some((v, _)) = &verification {
                    body["verificationResults"] = v.clone();
                }
                let mut is_error = false;
                if reason == "url_units_remaining" {
                    gates.insert("taskUrlCoverage".into(), url_gate_payload(c, &inst, &asm, "blocked")?);
                    is_error = true;
                }
                if !gates.is_empty() {
                    body["_aagGates"] = Value::Object(gates);
                }
                return Ok(Err(ToolReply { structured: body, is_error, text: None, image: None, meta: Map::new() }));
            }
            let now = now_ms();
            let rev = inst.rev + 1;
            let snapshot = asm.grades.as_ref().map(|(g, ex)| {
                json!({
                    "schemaVersion": 1, "workflowScopeId": inst.scope_id, "completedAtMs": now,
                    "completeness": {"ingestionComplete": complete, "projectionComplete": complete, "budgetTruncated": false},
                    "counts": g, "perUnitExceptions": {"itemCount": ex.len(), "items": ex},
                })
            });
            let mut body = json!({
                "ok": true, "status": "ok", "completed": true, "instanceId": inst.instance_id, "instanceRev": rev,
                "completedAtUtc": now, "completedAt": iso(now),
            });
            if let Some(s) = summary {
                body["evidenceSummary"] = s;
            }
            if let Some((v, _)) = &verification {
                body["verificationResults"] = v.clone();
            }
            if !gates.is_empty() {
                body["_aagGates"] = Value::Object(gates);
            }
            let tx = crate::store::write_tx(c)?;
            tx.execute(
                "UPDATE task_instances SET status = 'completed', instance_rev = ?1, completed_at_ms = ?2,
                    last_activity_at_ms = ?2, evidence_snapshot = ?3 WHERE instance_id = ?4",
                params![rev, now, snapshot.map(|s| s.to_string()), inst.instance_id],
            )?;
            log_event(&tx, &inst.instance_id, Some(&a.client_event_id), "completed", inst.rev, rev, &json!({"note": a.note}), Some(&body), &agent)?;
            if let Some(p) = &inst.profile_id {
                tune_confidence(&tx, p)?;
            }
            tx.commit()?;
            Ok(Ok(ok(body)))
        })?;
        match outcome {
            Ok(reply) => {
                if let Some(s) = &inst.scope_id {
                    self.scopes.begin_closing(s, complete);
                }
                Ok(reply)
            }
            Err(rejected) => {
                // A rejected completion reopens the scope: the agent works on and retries.
                if let Some(s) = &inst.scope_id {
                    self.scopes.reactivate(s);
                }
                Ok(rejected)
            }
        }
    }

    /// `nova.task_instance_abort`.
    pub async fn task_instance_abort(
        &self,
        rec: &mut CallRecord,
        a: AbortArgs,
    ) -> Result<ToolReply, CallError> {
        if a.reason.trim().is_empty() {
            return Err(CallError::invalid("reason", "`reason` must not be empty"));
        }
        rec.executed();
        let agent = Self::agent(rec);
        let reply = self.etm.with(|c| {
            if let Some(stored) = replay(c, &a.instance_id, &a.client_event_id)? {
                return Ok((ok(stored), None));
            }
            let Some(inst) = load_instance(c, &a.instance_id)? else {
                return Ok((soft("not_found", "Task instance not found.", json!({"instanceId": a.instance_id})), None));
            };
            if inst.terminal() {
                return Ok((soft("terminal_status", format!("the instance is {}", inst.status), json!({"status": inst.status})), None));
            }
            if a.expected_instance_rev != inst.rev {
                return Ok((
                    soft(
                        "rev_conflict",
                        format!("the instance is at rev {}, not {}", inst.rev, a.expected_instance_rev),
                        json!({"currentInstanceRev": inst.rev}),
                    ),
                    None,
                ));
            }
            let status = match a.outcome {
                AbortOutcome::Aborted => "aborted",
                AbortOutcome::Failed => "failed",
            };
            let rev = inst.rev + 1;
            let now = now_ms();
            let body = json!({
                "ok": true, "status": status, "previousStatus": inst.status, "instanceId": inst.instance_id,
                "instanceRev": rev, "evidenceScopeReleased": inst.scope_id.is_some(),
            });
            let tx = crate::store::write_tx(c)?;
            tx.execute(
                "UPDATE task_instances SET status = ?1, instance_rev = ?2, completed_at_ms = ?3, last_activity_at_ms = ?3
                 WHERE instance_id = ?4",
                params![status, rev, now, inst.instance_id],
            )?;
            log_event(&tx, &inst.instance_id, Some(&a.client_event_id), status, inst.rev, rev, &json!({"reason": a.reason}), Some(&body), &agent)?;
            if let Some(p) = &inst.profile_id {
                tune_confidence(&tx, p)?;
            }
            tx.commit()?;
            Ok((ToolReply::ok(body), inst.scope_id.clone()))
        })?;
        if let Some(scope) = reply.1 {
            self.scopes.begin_closing(&scope, false);
        }
        Ok(reply.0)
    }
}

fn unreachable_pair() -> (Option<String>, Option<i64>, Value) {
    (None, None, Value::Null)
}

/// The instance snapshot (task_instance_get).
fn instance_json(inst: &Instance, a: &Assessment) -> Value {
    let mut body = json!({
        "instanceId": inst.instance_id, "profileId": inst.profile_id, "profileRevApplied": inst.profile_rev_applied,
        "instanceRev": inst.rev, "status": inst.status, "discoveryState": inst.discovery,
        "progress": a.counts.progress(), "mandatoryChecksState": mandatory_state(inst),
        "targetUrl": inst.target_url, "targetId": inst.target_id,
        "startedAtUtc": inst.started_at_ms, "lastActivityAtUtc": inst.last_activity_at_ms,
        "completedAtUtc": inst.completed_at_ms, "effectiveContextHash": inst.context_hash,
        "effectiveContextJson": inst.context, "resumeState": inst.resume_state, "agentId": inst.agent_id,
        "effectiveTaskKind": inst.task_kind,
        "evidenceScope": match (&inst.scope_id, &inst.scope_reason) {
            (Some(id), _) => json!({"scopeId": id, "tracking": true}),
            (None, r) => json!({"reason": r, "tracking": false}),
        },
        "evidenceSummary": a.grades.as_ref().map(|(g, _)| summary_json(g, a.complete)),
        "taskAwareness": awareness(inst, a),
    });
    if let Some((_, ex)) = &a.grades
        && !ex.is_empty()
    {
        body["perUnitExceptions"] =
            json!({"itemCount": ex.len(), "items": ex.iter().take(50).collect::<Vec<_>>()});
    }
    body
}

fn mandatory_state(inst: &Instance) -> Value {
    let mut out = Map::new();
    for c in inst.mandatory_checks() {
        let state = inst.checks_state.get(&c.check_id).cloned().unwrap_or(json!("pending"));
        out.insert(c.check_id, state);
    }
    Value::Object(out)
}

/// `verificationResults` for an evidence report, and the required fast steps that failed.
fn verification_results(inst: &Instance, report: &[EvidenceEntry]) -> Option<(Value, Vec<String>)> {
    let contract = inst.verification();
    if report.is_empty() && contract.is_none() {
        return None;
    }
    let steps = contract.map(|c| c.steps).unwrap_or_default();
    let mut ids: Vec<&str> = report.iter().map(|e| e.step_id.as_str()).collect();
    ids.sort_unstable();
    let mut dup: Vec<&str> = ids.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
    dup.dedup();
    let mut failed_required = Vec::new();
    let (mut passed, mut failed, mut inconclusive, mut skipped) = (0, 0, 0, 0);
    let rows: Vec<Value> = steps
        .iter()
        .map(|s| {
            let entry = report.iter().find(|e| e.step_id == s.step_id);
            let state = entry.map_or(StepState::Skipped, |e| e.state);
            match state {
                StepState::Passed => passed += 1,
                StepState::Failed => failed += 1,
                StepState::Inconclusive => inconclusive += 1,
                StepState::Skipped => skipped += 1,
            }
            if state == StepState::Failed && s.required && s.gate == "fast" {
                failed_required.push(s.step_id.clone());
            }
            json!({"stepId": s.step_id, "state": state, "gate": s.gate, "required": s.required,
                   "detail": entry.and_then(|e| e.detail.clone())})
        })
        .collect();
    let v = json!({
        "phase": "completion", "noRequiredFailed": failed_required.is_empty(),
        "summary": {"total": steps.len(), "passed": passed, "failed": failed, "inconclusive": inconclusive,
                    "skipped": skipped, "failedRequired": failed_required.len()},
        "steps": rows, "duplicateStepIds": dup,
    });
    Some((v, failed_required))
}

/// Profile JSON, or None.
pub fn profile_json(c: &Connection, id: &str) -> rusqlite::Result<Option<Value>> {
    c.query_row(
        "SELECT profile_id, task_type, display_name, domain, platform, goal, stable_guidance, mandatory_checks,
                completion_condition, known_exceptions, confidence, content_rev, usage_count, archived,
                created_at_ms, updated_at_ms
         FROM task_profiles WHERE profile_id = ?1",
        [id],
        |r| {
            let parse = |s: Option<String>| s.and_then(|s| serde_json::from_str::<Value>(&s).ok()).unwrap_or(Value::Null);
            let mut cond = parse(r.get(8)?);
            let verification = cond.as_object_mut().and_then(|o| o.remove("__verification")).unwrap_or(Value::Null);
            Ok(json!({
                "profileId": r.get::<_, String>(0)?, "taskType": r.get::<_, String>(1)?,
                "displayName": r.get::<_, String>(2)?, "domain": r.get::<_, Option<String>>(3)?,
                "platform": r.get::<_, Option<String>>(4)?, "goal": r.get::<_, String>(5)?,
                "stableGuidance": parse(r.get(6)?), "mandatoryChecks": parse(r.get(7)?),
                "completionCondition": cond, "verificationContract": verification,
                "knownExceptions": parse(r.get(9)?), "confidence": r.get::<_, f64>(10)?,
                "contentRev": r.get::<_, i64>(11)?, "usageCount": r.get::<_, i64>(12)?,
                "archived": r.get::<_, bool>(13)?, "createdAtUtc": r.get::<_, i64>(14)?,
                "updatedAtUtc": r.get::<_, i64>(15)?,
            }))
        },
    )
    .optional()
}

/// Profile confidence tuning after a completion or terminal failure (docs/tasks.md,
/// "Profile confidence").
fn tune_confidence(c: &Connection, profile: &str) -> rusqlite::Result<()> {
    let (base, instances, completed, failed, last): (f64, f64, f64, f64, i64) = c.query_row(
        "SELECT p.confidence, COUNT(i.instance_id), COALESCE(SUM(i.status = 'completed'), 0),
                COALESCE(SUM(i.status IN ('failed', 'aborted')), 0), p.updated_at_ms
         FROM task_profiles p LEFT JOIN task_instances i ON i.profile_id = p.profile_id
         WHERE p.profile_id = ?1",
        [profile],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    let finished = completed + failed;
    let completion_rate = if finished > 0.0 { completed / finished } else { 0.5 };
    let usage_bonus = ((instances + 1.0).ln() / 51f64.ln()).min(1.0);
    let mut adj = 0.30 * base + 0.35 * completion_rate + 0.20 * 0.5 + 0.15 * usage_bonus;
    let idle_days = (now_ms() - last) as f64 / 86_400_000.0;
    if idle_days > 30.0 {
        adj *= 1.0 - 0.3 * ((idle_days - 30.0) / 335.0).min(1.0);
    }
    let failure_rate = if finished > 0.0 { failed / finished } else { 0.0 };
    if failure_rate > 0.5 {
        adj *= 1.0 - (failure_rate - 0.5) * 0.4;
    }
    c.execute(
        "UPDATE task_profiles SET confidence = ?1 WHERE profile_id = ?2",
        params![adj.clamp(0.10, 0.99), profile],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_and_discovery_moves() {
        assert!(unit_move_ok("discovered", UnitStatus::Checked));
        assert!(unit_move_ok("blocked", UnitStatus::Excluded));
        assert!(!unit_move_ok("checked", UnitStatus::Failed));
        assert!(!unit_move_ok("excluded", UnitStatus::Checked));
        assert!(!discovery_move_ok("frozen", DiscoveryState::Partial));
        assert!(discovery_move_ok("frozen", DiscoveryState::Frozen));
        assert!(discovery_move_ok("unknown", DiscoveryState::Frozen));
    }

    #[test]
    fn heuristics_tighten_kinds() {
        assert_eq!(heuristic_kind("Rechtschreibprüfung aller Seiten"), Some(TaskKind::ContentAudit));
        assert_eq!(heuristic_kind("Check the impressum"), Some(TaskKind::Legal));
        assert_eq!(heuristic_kind("smoke test the checkout"), Some(TaskKind::UiSmoke));
        assert_eq!(heuristic_kind("buy milk"), None);
    }
}
