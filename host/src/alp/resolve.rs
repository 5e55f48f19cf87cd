//! `nova.learn_resolve_opportunity` (docs/learning.md, "Semantic learning"): the agent's verdict
//! on a semantic learning opportunity. `defer` leaves it quiet for a day; the others close it.
//! Unknown fields are refused, as for every tool.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::call::{CallError, CallRecord, ToolReply, check_chars};
use crate::lcj::{self, opportunities};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// Longest reason, characters.
pub const MAX_REASON: usize = 500;

/// A verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The agent stored (or will store) the entry.
    Upsert,
    /// The situation is not what the prompt thought.
    NotApplicable,
    /// Storing it would be unsafe.
    Unsafe,
    /// Nova already knows it.
    AlreadyKnown,
    /// Later (asked again after a day).
    Defer,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Self::Upsert => "upsert",
            Self::NotApplicable => "not_applicable",
            Self::Unsafe => "unsafe",
            Self::AlreadyKnown => "already_known",
            Self::Defer => "defer",
        }
    }
}

/// Arguments of `nova.learn_resolve_opportunity`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResolveArgs {
    /// The opportunity (`opportunityId` of a `pksSemanticLearning` prompt).
    pub opportunity_id: String,
    /// `upsert`, `not_applicable`, `unsafe`, `already_known`, `defer`.
    pub verdict: Verdict,
    /// Why (at most 500 characters).
    #[serde(default)]
    pub reason: Option<String>,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// What the tool reaches.
pub struct Resolver<'h> {
    /// The journal.
    pub lcj: &'h lcj::Journal,
}

impl<'h> From<&'h crate::hub::Hub> for Resolver<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { lcj: &hub.lcj }
    }
}

crate::tool! {
    /// `nova.learn_resolve_opportunity` in the tool registry.
    pub static LEARN_RESOLVE_OPPORTUNITY = ToolDef::new(
        "nova.learn_resolve_opportunity",
        "Close a semantic learning prompt (pksSemanticLearning) with a verdict: upsert, \
         not_applicable, unsafe, already_known, or defer (asked again after a day).",
        registry::schema::<ResolveArgs>,
        crate::handler!(Resolver::learn_resolve_opportunity),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::None);
}

/// Retires the autonomous candidates (`L0`, `auto_learning`) of the opportunity's site that
/// the agent's own entry replaces: of its kind (a risky repeat: those holding its selector).
fn supersede(c: &rusqlite::Connection, o: &opportunities::Opportunity, now: i64) -> rusqlite::Result<usize> {
    let selector = o.evidence["selector"].as_str().map(crate::lcj::keys::selector_norm);
    let mut n = 0;
    for e in crate::pks::records::entries(c, &o.origin)? {
        let auto = e.origin == "auto_learning" && e.level == "L0" && e.deprecated.is_none();
        let same = match o.kind.as_str() {
            "risky_repeat" => {
                selector.as_ref().is_some_and(|s| crate::lcj::attribution::selectors(&e).contains(s))
            }
            kind => e.kind == kind,
        };
        if auto
            && same
            && crate::pks::records::deprecate(c, &o.origin, &e.id, &format!("superseded by {}", o.id), now)?
        {
            n += 1;
        }
    }
    Ok(n)
}

impl Resolver<'_> {
    /// `nova.learn_resolve_opportunity`.
    pub async fn learn_resolve_opportunity(
        &self,
        rec: &mut CallRecord,
        a: ResolveArgs,
    ) -> Result<ToolReply, CallError> {
        let id = a.opportunity_id.trim().to_owned();
        if id.is_empty() {
            return Err(CallError::invalid(
                "opportunityId",
                "`opportunityId` must name an opportunity (sem:...)",
            ));
        }
        let reason = a.reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
        check_chars("reason", reason.unwrap_or_default(), MAX_REASON)?;
        let now = crate::clock::now_ms();
        let verdict = a.verdict.as_str();
        let (before, superseded) = self.lcj.with(|c| {
            let tx = crate::store::write_tx(c)?;
            let before = opportunities::resolve(&tx, &id, verdict, reason, "learn_resolve_opportunity", now)?;
            let superseded = match &before {
                Some(o) if matches!(a.verdict, Verdict::Upsert | Verdict::AlreadyKnown) => {
                    supersede(&tx, o, now)?
                }
                _ => 0,
            };
            tx.commit()?;
            Ok((before, superseded))
        })?;
        rec.executed();
        let Some(before) = before else {
            return Ok(ToolReply::failure(
                "lcj.opportunity_not_found",
                format!(
                    "no learning opportunity `{id}`: use the opportunityId of a pksSemanticLearning prompt"
                ),
                false,
            ));
        };
        Ok(ToolReply::ok(json!({
            "ok": true, "opportunityId": id, "verdict": verdict, "reason": reason,
            "priorState": before.state, "resolvedState": if verdict == "defer" { "deferred" } else { "resolved" },
            "resolvedAtUtc": crate::time::iso(now),
            "fr1CandidatesSuperseded": superseded,
        })))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::pks::model::Phenomenon;

    #[test]
    fn the_agents_own_entry_retires_the_autonomous_candidates_of_its_kind() {
        let dir = tempfile::tempdir().expect("tmp");
        let c = crate::store::open(&dir.path().join("n.db")).expect("open");
        let ph = |kind: &str, sel: &str| -> Phenomenon {
            serde_json::from_value(json!({"type": kind, "fingerprint": {"signals": [{"kind": "dom", "match": sel}]},
                "playbook": {"policy": "dismiss", "actions": [{"type": "click", "selector": sel, "declaredPolarity": "reject"}]}}))
            .expect("phenomenon")
        };
        let up = |id: &str, kind: &str, sel: &str, origin: &str| {
            crate::pks::records::upsert(&c, "a.org", id, &ph(kind, sel), ("L0", origin), 1).expect("upsert");
        };
        up("auto_learning:1", "consent_cmp", "#cookie-no", "auto_learning");
        up("auto_learning:2", "modal", "#close", "auto_learning");
        up("mine", "consent_cmp", "#cookie-x", "manual");
        let o = opportunities::Opportunity::new(
            "consent_cmp",
            "a.org",
            "f",
            0.7,
            "r".into(),
            json!({}),
            json!({}),
        );
        assert_eq!(supersede(&c, &o, 2).expect("supersede"), 1);
        let retired: Vec<String> = crate::pks::records::entries(&c, "a.org")
            .expect("entries")
            .into_iter()
            .filter(|e| e.deprecated.is_some())
            .map(|e| e.id)
            .collect();
        assert_eq!(retired, ["auto_learning:1"], "the agent's own entry and other kinds stay");
    }
}
