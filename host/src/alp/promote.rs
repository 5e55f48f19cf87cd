//! `nova.learn_promote` (docs/learning.md, "Promotion gates"): moves a site's phenomena between
//! learning levels only when the journal's evidence passes the gates of the transition; a dry
//! run says what would be approved. Every applied transition is written to the audit
//! (`nova.learn_feedback` reads it) in the same transaction as the level.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::gates::{self, Transition};
use crate::call::{CallError, CallRecord, ToolReply};
use crate::lcj::{self, evidence, rows};
use crate::observation::ActionKind;
use crate::pks::{records, scope};
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// Arguments of `nova.learn_promote`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PromoteArgs {
    /// The site (required).
    pub scope: String,
    /// The phenomena: concrete ids, or `["all"]`; absent means all of the site's. An empty list
    /// is refused.
    #[serde(default)]
    pub stable_ids: Option<Vec<String>>,
    /// `l0_to_l1`, `l1_to_l2`, `demotion`, `deprecation`, `revive`; absent or null: every
    /// transition that starts where each entry is.
    #[serde(default)]
    pub transition: Option<Transition>,
    /// Only say what would be approved (a JSON boolean; default false). Otherwise the site must
    /// be open in a tab.
    #[serde(default)]
    pub dry_run: bool,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// What `nova.learn_promote` reaches.
pub struct Promoter<'h> {
    /// The PKS tables (levels are written there).
    pub pks: &'h crate::pks::Pks,
    /// The journal (its barrier is waited on before the evidence is read).
    pub lcj: &'h lcj::Journal,
    /// The browser's tabs (a write needs its site open in one).
    pub bridge: &'h crate::bridge::Bridge,
}

impl<'h> From<&'h crate::hub::Hub> for Promoter<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { pks: &hub.pks, lcj: &hub.lcj, bridge: &hub.bridge }
    }
}

crate::tool! {
    /// `nova.learn_promote` in the tool registry.
    pub static LEARN_PROMOTE = ToolDef::new(
        "nova.learn_promote",
        "Move a site's phenomena between learning levels (l0_to_l1, l1_to_l2, demotion, \
         deprecation, revive, or every applicable one): each is approved only when the learning \
         journal's evidence passes its gates; dryRun says what would be, and every applied change \
         is audited.",
        registry::schema::<PromoteArgs>,
        crate::handler!(Promoter::learn_promote),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::None);
}

/// A level as a number (`L0` 0, `L1` 1, `L2` 2, retired -1).
pub fn level_number(level: &str) -> i64 {
    match level {
        "L0" => 0,
        "L1" => 1,
        "L2" => 2,
        _ => -1,
    }
}

impl Promoter<'_> {
    /// `nova.learn_promote`.
    pub async fn learn_promote(&self, rec: &mut CallRecord, a: PromoteArgs) -> Result<ToolReply, CallError> {
        if a.scope.trim().is_empty() || a.scope.trim() == "*" {
            return Err(CallError::invalid(
                "scope",
                "`scope` must name one site (example.org), not empty or `*`",
            ));
        }
        let site = scope::normalize(&a.scope)?;
        if let Some(ids) = &a.stable_ids {
            if ids.is_empty() {
                return Err(CallError::invalid(
                    "stableIds",
                    "`stableIds` must not be empty: omit it or send [\"all\"] for every entry, or name entries",
                ));
            }
            if let Some(i) = ids.iter().position(|s| s.trim().is_empty()) {
                return Err(CallError::invalid(
                    &format!("stableIds[{i}]"),
                    format!("`stableIds[{i}]` is empty"),
                ));
            }
        }
        if !a.dry_run && !scope::open_in_a_tab(self.bridge, &site) {
            return Ok(scope::not_open(&site));
        }
        let complete = self.lcj.flush_within(lcj::FLUSH_MAX).await;
        let all = a.stable_ids.as_ref().is_none_or(|ids| ids.iter().any(|i| i.eq_ignore_ascii_case("all")));
        let now = crate::clock::now_ms();
        let owner = rec.obs.agent_id.clone();
        let decisions = self.pks.with(|c| {
            let tx = crate::store::write_tx(c)?;
            let mut out = Vec::new();
            for e in records::entries(&tx, &site)? {
                let wanted = all || a.stable_ids.iter().flatten().any(|i| i.eq_ignore_ascii_case(&e.id));
                if !wanted {
                    continue;
                }
                let ev = evidence::of_entry(&tx, &site, &e, now)?;
                let transitions: Vec<Transition> = match a.transition {
                    Some(t) => vec![t],
                    None => Transition::ALL.into_iter().filter(|t| t.starts_at(&e)).collect(),
                };
                let mut applied_one = false;
                for t in transitions {
                    let (list, _) = gates::gates(t, &e, &ev);
                    let decision = gates::decide(t, &e, &ev);
                    let from = gates::shown(&e);
                    let (approved, to, why) = match &decision {
                        Ok(to) => (true, Some(*to), None),
                        Err(why) => (false, None, Some(why.clone())),
                    };
                    let mut write_error = None;
                    let mut applied = false;
                    if let Some(to) = to.filter(|_| !a.dry_run && !applied_one) {
                        let reason = json!({"gates": list, "evidence": evidence_json(&ev)});
                        let audit = rows::Audit {
                            stable_id: &e.id,
                            host: &site,
                            levels: (&from, if to == "deprecated" { "retired" } else { to }),
                            reason_kind: t.name(),
                            reason: &reason,
                            owner: &owner,
                            at: now,
                        };
                        let why = format!("{} by nova.learn_promote", t.name());
                        match records::set_level(&tx, &site, &e.id, to, &why, now)
                            .and_then(|()| rows::insert_audit(&tx, &audit))
                        {
                            Ok(()) => applied = true,
                            Err(err) => write_error = Some(err.to_string()),
                        }
                        applied_one |= applied;
                    }
                    let skipped = if a.dry_run {
                        Some("dry_run")
                    } else if !approved {
                        Some("not_approved")
                    } else if write_error.is_some() {
                        Some("write_failed")
                    } else if !applied {
                        Some("another_transition_applied")
                    } else {
                        None
                    };
                    let to_shown = to.map(|t| if t == "deprecated" { "retired" } else { t });
                    out.push(json!({
                        "stableId": e.id, "approved": approved, "applied": applied, "skippedBecause": skipped,
                        "writeError": write_error, "reasonKind": t.name(),
                        "fromLevel": level_number(&from), "toLevel": to_shown.map(level_number),
                        "fromState": from, "toState": to_shown, "rejectionReason": why,
                    }));
                }
            }
            tx.commit()?;
            Ok(out)
        })?;
        rec.executed();
        let count = |k: &str| decisions.iter().filter(|d| d[k] == true).count();
        let write_failed = decisions.iter().filter(|d| d["skippedBecause"] == "write_failed").count();
        Ok(ToolReply::ok(json!({
            "ok": write_failed == 0, "status": if write_failed == 0 { "ok" } else { "error" }, "scope": site,
            "dryRun": a.dry_run, "transition": a.transition.map(Transition::name),
            "approved": count("approved"), "rejected": decisions.len() - count("approved"),
            "applied": count("applied"), "writeFailed": write_failed, "total": decisions.len(),
            "decisions": decisions, "ingestionComplete": complete,
        })))
    }
}

/// The evidence as the audit and `nova.explain` show it.
pub fn evidence_json(ev: &evidence::Evidence) -> Value {
    json!({
        "candidateKey": ev.candidate_key,
        "candidate": ev.candidate.as_ref().map(|c| json!({"candidateId": c.id, "status": c.status,
            "confidence": c.confidence, "origin": c.origin, "stableId": c.stable_id})),
        "support14d": ev.support_14d, "successes14d": ev.successes_14d, "l0Score": gates::l0_score(ev),
        "successes30d": ev.successes_30d, "successSessions30d": ev.success_sessions_30d,
        "failures30d": ev.failures_30d, "drift7d": ev.drift_7d, "hardDrift24h": ev.hard_drift_24h,
        "consecutiveFailures": ev.consecutive_failures,
        "successesSinceRetired": ev.revive_successes, "sessionsSinceRetired": ev.revive_sessions,
    })
}
