//! Learn Mode (docs/learning.md, "Learn Mode"): `nova.get_instructions {mode: learn}` starts a
//! learn task on the agent's tab (or on every tab it holds), answers with the guidance and the
//! `PLATFORM_PLAYBOOK` deliverable, and reports `learnMode.progress` against the coverage
//! floors; `nova.tab_release` refuses to end a task below them (`crate::lease::tools`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::call::CallError;
use crate::lcj::{self, learn};

/// Which tabs a learn request covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LearnScope {
    /// The tab `targetId` names (default: the active one).
    #[default]
    Target,
    /// Every tab the agent holds a claim on.
    AllOwnerClaims,
}

/// How much guidance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Detail {
    /// Everything (default).
    #[default]
    Full,
    /// The steps and the deliverable's outline only.
    Compact,
}

/// The deliverable's name.
pub const DELIVERABLE: &str = "PLATFORM_PLAYBOOK";

const GUIDANCE: &str =
    "Learn Mode v3: map this platform so that later agents can work on it without rediscovering it.
1. Explore, do not rush: read at least the floors' number of distinct pages (nova.perceive after each
   nova.navigate) and take real, reversible actions (menus, filters, tabs, dialogs, search), never
   purchases, sends or deletions without the person's approval (nova.permission_prompt).
2. Store what recurs as per-site knowledge: consent banners, sign-in walls, modals (nova.pks_upsert with
   exact selectors and the polarity of each action), notes (nova.pks_upsert_hint). Answer every
   pksSemanticLearning prompt (nova.pks_upsert, or nova.learn_resolve_opportunity with a verdict).
3. Review what repeated: nova.learn_suggest, nova.learn_generate for an open site, nova.explain and
   nova.learn_promote (dryRun first). Nothing learned authorises an action: confirm the page each time.
4. Deliver a PLATFORM_PLAYBOOK (below) as your final answer, then release the tab (nova.tab_release).
   Below the coverage floors the release is refused (-32041 learn.coverage_not_met) unless coverage
   is genuinely exhausted: coverageExhausted: true with a coverageExhaustedReason.";

const COMPACT: &str =
    "Learn Mode v3: explore (floors below), store recurring situations with nova.pks_upsert, answer
pksSemanticLearning prompts, review with learn_suggest / learn_generate / learn_promote, deliver a
PLATFORM_PLAYBOOK, release the tab (below the floors: coverageExhausted + coverageExhaustedReason).";

/// The deliverable's outline.
pub fn deliverable() -> Value {
    json!({
        "name": DELIVERABLE,
        "sections": [
            {"key": "platform", "what": "the site(s), what the platform is for, sign-in needs"},
            {"key": "surfaces", "what": "each page or view visited: URL pattern, purpose, landmarks"},
            {"key": "interactions", "what": "each action taken: control (exact selector), effect, how it was verified"},
            {"key": "blockers", "what": "consent banners, walls, modals, and the stored phenomenon ids that handle them"},
            {"key": "stateSignals", "what": "how the page shows being signed in, the plan, errors, success"},
            {"key": "risks", "what": "irreversible actions, fragile selectors, rate limits, what needs the person"},
            {"key": "gaps", "what": "what could not be covered, and why"},
        ],
    })
}

/// The guidance text.
pub fn guidance(detail: Detail) -> String {
    let text = if detail == Detail::Compact { COMPACT } else { GUIDANCE };
    format!(
        "{text}\nFloors: {} distinct pages read and {} successful actions per learn task.",
        learn::MIN_VISITED_SURFACES,
        learn::MIN_MEANINGFUL_INTERACTIONS
    )
}

/// Starts learn tasks on `tabs` for `owner` and reports the progress of every open one.
pub async fn start(
    lcj: &lcj::Journal,
    owner: &str,
    tabs: &[(String, String)],
    keywords: &[String],
) -> Result<Value, CallError> {
    let now = crate::clock::now_ms();
    lcj.with(|c| {
        for (tab, domain) in tabs {
            learn::begin(c, tab, owner, domain, keywords, now)?;
        }
        Ok(())
    })?;
    let complete = lcj.flush_within(lcj::FLUSH_MAX).await;
    let tasks = lcj.with(|c| {
        learn::of_owner(c, owner)?
            .iter()
            .map(|t| learn::progress(c, t).map(|p| (learn::shown(t, &p), p.floors_met())))
            .collect::<rusqlite::Result<Vec<_>>>()
    })?;
    let all = tasks.iter().all(|(_, met)| *met);
    let progress = (!tasks.is_empty()).then(|| {
        json!({
            "tasks": tasks.into_iter().map(|(t, _)| t).collect::<Vec<_>>(),
            "minVisitedSurfaces": learn::MIN_VISITED_SURFACES,
            "minMeaningfulInteractions": learn::MIN_MEANINGFUL_INTERACTIONS,
            "allFloorsMet": all,
        })
    });
    Ok(json!({"active": progress.is_some(), "version": "learn_mode_v3", "deliverable": deliverable(),
              "progress": progress, "ingestionComplete": complete}))
}
