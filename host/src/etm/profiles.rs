//! Task profiles: upsert, get, list, search and match (docs/tasks.md, "Task profiles").

use rusqlite::{Connection, OptionalExtension as _, params};
use serde_json::{Value, json};

use super::args::*;
use super::context::Tasks;
use super::matching;
use crate::call::{CallError, CallRecord, ToolReply};
use crate::time::now_ms;
use crate::url as normalize;

use super::instance::{count_at, load_instance};
use super::{hex32, ok, soft};

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

pub(crate) fn kind_from_str(s: &str) -> Option<TaskKind> {
    serde_json::from_value(json!(s)).ok()
}

impl Tasks<'_> {
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
        crate::call::check_range("limit", a.limit, (1, 500, 100))?;
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
        crate::call::check_range("limit", a.limit, (1, 50, 10))?;
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
pub(crate) fn tune_confidence(c: &Connection, profile: &str) -> rusqlite::Result<()> {
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
    fn heuristics_tighten_kinds() {
        assert_eq!(heuristic_kind("Rechtschreibprüfung aller Seiten"), Some(TaskKind::ContentAudit));
        assert_eq!(heuristic_kind("Check the impressum"), Some(TaskKind::Legal));
        assert_eq!(heuristic_kind("smoke test the checkout"), Some(TaskKind::UiSmoke));
        assert_eq!(heuristic_kind("buy milk"), None);
    }
}
