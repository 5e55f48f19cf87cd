//! The instance tools: create, get, progress, verify, complete and abort (docs/tasks.md, "Task runs").

use rusqlite::params;
use serde_json::{Map, Value, json};

use super::context::Tasks;
use crate::call::{CallError, CallRecord, ToolReply};
use crate::settings::{GateMode, Settings};
use crate::time::{iso, now_ms};
use crate::tuc;
use crate::tuc::args::UnitSourceKind;
use crate::url as normalize;

use super::args::*;
use super::grading::{
    assess, awareness, current_state, instance_json, summary_json, unreachable_pair, url_coverage,
    url_gate_payload, verification_results,
};
use super::instance::{
    discovery_move_ok, insert_unit, load_instance, log_event, merge, patch_list, replay, resolve_unit_key,
    unit_move_ok, url_counts,
};
use super::profiles::{heuristic_kind, kind_from_str, profile_json, tune_confidence};
use super::{MAX_SEEDED_URLS, agent, hex32, ok, sha256_hex, soft};

impl Tasks<'_> {
    /// Goal-close enforcement (docs/tasks.md, "Completion"): a goal linked to a task instance
    /// closes as completed only once that instance is completed, and, under the TUC Block mode,
    /// has no open URL units.
    pub fn linked_task_refusal(&self, goal_id: &str) -> Result<Option<ToolReply>, CallError> {
        let Some(instance) = self.cls.goals.linked(goal_id) else { return Ok(None) };
        let settings = Settings::load(self.data);
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

    /// `nova.task_instance_create`.
    pub async fn task_instance_create(
        &self,
        rec: &mut CallRecord,
        a: CreateArgs,
    ) -> Result<ToolReply, CallError> {
        let agent = agent(rec);
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
            Some(t) => self.tabs.resolve(t).await.ok(),
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
                        self.bridge,
                        self.etm,
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
        let settings = Settings::load(self.data);
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
        crate::call::check_range(
            "discoveredUnitsPreviewLimit",
            a.discovered_units_preview_limit,
            (1, 200, 20),
        )?;
        crate::call::check_range("recentEventLimit", a.recent_event_limit, (1, 100, 10))?;
        rec.executed();
        // Flush barrier: everything recorded so far is in the table before correlation.
        let complete = self.recorder.flush_within(crate::tob::FLUSH_MAX).await;
        let settings = Settings::load(self.data);
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
        let agent = agent(rec);
        let settings = Settings::load(self.data);
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
        let settings = Settings::load(self.data);
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
        let agent = agent(rec);
        let settings = Settings::load(self.data);
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
        // A learn task on the run's tab ends with it, and not below its floors unexplained.
        let learning = match &inst.target_id {
            Some(tab) => {
                let exhausted = (a.coverage_exhausted, a.coverage_exhausted_reason.as_deref());
                crate::alp::learn_mode::judge(self.lcj, tab, &agent, exhausted).await?
            }
            None => None,
        };
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
            Ok(mut reply) => {
                if let Some(s) = &inst.scope_id {
                    self.scopes.begin_closing(s, complete);
                }
                if let Some(e) = &learning {
                    reply.structured["learnMode"] = crate::alp::learn_mode::finish(self.lcj, e)?;
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
        let agent = agent(rec);
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
