//! How an instance stands: evidence grades from TOB, the assessment, and the instance as the agent reads it
//! (docs/tasks.md, "Completion").

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use super::args::*;
use super::completion;
use super::completion::{Counts, Decision, Evidence, Input};
use crate::settings::{GateMode, Settings};
use crate::tob::evidence::{self as tob_evidence, GradeCounts, Obs, Unit};

use super::instance::{Instance, count_at, counts, load_instance, url_counts};

/// Loads the checked units and the scope's observations and grades them.
pub(crate) fn grade_instance(
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

pub(crate) fn evidence_of(g: &GradeCounts) -> Evidence {
    Evidence {
        claimed: g.claimed_checked_units,
        strong: g.strong,
        weak: g.weak,
        none: g.none,
        unknown: g.unknown,
    }
}

pub(crate) fn summary_json(g: &GradeCounts, complete: bool) -> Value {
    json!({
        "claimedCheckedUnits": g.claimed_checked_units, "observedCheckedUnits": g.observed_checked_units,
        "strong": g.strong, "weak": g.weak, "none": g.none, "unknown": g.unknown,
        "ingestionComplete": complete,
    })
}

/// Everything the evaluator and the snapshots need, gathered in one place.
pub(crate) struct Assessment {
    pub(crate) complete: bool,
    pub(crate) counts: Counts,
    pub(crate) url: (u64, u64, u64, u64, u64),
    pub(crate) grades: Option<(GradeCounts, Vec<Value>)>,
    pub(crate) decision: Decision,
    pub(crate) url_gate: GateMode,
}

pub(crate) fn assess(
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

pub(crate) fn guidance_summary(inst: &Instance) -> Value {
    let guidance = inst.context.get("stableGuidance").and_then(Value::as_array).map_or(0, Vec::len);
    json!({"count": guidance, "mandatoryChecks": inst.mandatory_checks().len()})
}

pub(crate) fn awareness(inst: &Instance, a: &Assessment) -> Value {
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

pub(crate) fn current_state(inst: &Instance, a: &Assessment) -> Value {
    json!({
        "status": inst.status, "discoveryState": inst.discovery,
        "totalUnits": a.counts.total_units, "checkedUnits": a.counts.checked_units,
        "remainingUnits": a.counts.remaining_units, "blockedUnits": a.counts.blocked_units,
        "failedUnits": a.counts.failed_units, "urlUnitsRemaining": a.url.3,
        "pendingMandatoryChecks": inst.pending_checks(),
    })
}

pub(crate) fn url_coverage(
    c: &Connection,
    inst: &Instance,
    a: &Assessment,
) -> rusqlite::Result<Option<Value>> {
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

pub(crate) fn url_gate_payload(
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

pub(crate) fn unreachable_pair() -> (Option<String>, Option<i64>, Value) {
    (None, None, Value::Null)
}

/// The instance snapshot (task_instance_get).
pub(crate) fn instance_json(inst: &Instance, a: &Assessment) -> Value {
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

pub(crate) fn mandatory_state(inst: &Instance) -> Value {
    let mut out = Map::new();
    for c in inst.mandatory_checks() {
        let state = inst.checks_state.get(&c.check_id).cloned().unwrap_or(json!("pending"));
        out.insert(c.check_id, state);
    }
    Value::Object(out)
}

/// `verificationResults` for an evidence report, and the required fast steps that failed.
pub(crate) fn verification_results(
    inst: &Instance,
    report: &[EvidenceEntry],
) -> Option<(Value, Vec<String>)> {
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
