//! Learn Mode (docs/learning.md, "Learn Mode"): `nova.get_instructions {mode: learn}` starts a
//! learn task on the agent's tab (or on every tab it holds), answers with the guidance and the
//! `PLATFORM_PLAYBOOK` deliverable, and reports `learnMode.progress` against the coverage
//! floors; releasing the tab (`nova.tab_release`) or completing its task run
//! (`nova.task_instance_complete`) ends the learn task, and is refused below them ([`judge`], [`finish`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::call::{CallError, check_chars};
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

/// How a learn task may end, once judged.
#[derive(Debug, Clone)]
pub struct Ending {
    task: learn::Task,
    progress: learn::Progress,
    how: &'static str,
    reason: Option<String>,
}

/// Judges whether the learn task of `owner` on `tab` (if there is one) may end as the tab is
/// released or its task run completed: at or above the floors it ends `complete`; below them
/// only with `coverageExhausted` and a reason (`coverage_exhausted`), else the call fails with
/// -32041 `learn.coverage_not_met` naming the floors and the counts. Nothing is written until
/// [`finish`].
pub async fn judge(
    lcj: &lcj::Journal,
    tab: &str,
    owner: &str,
    (exhausted, reason): (bool, Option<&str>),
) -> Result<Option<Ending>, CallError> {
    let reason = reason.map(str::trim).filter(|r| !r.is_empty());
    check_chars("coverageExhaustedReason", reason.unwrap_or_default(), 500)?;
    let Some(task) = lcj.with(|c| learn::active(c, tab, owner))? else { return Ok(None) };
    let complete = lcj.flush_within(lcj::FLUSH_MAX).await;
    let progress = lcj.with(|c| learn::progress(c, &task))?;
    let how = match (progress.floors_met(), exhausted, reason) {
        (true, _, _) => "complete",
        (false, true, Some(_)) => "coverage_exhausted",
        (false, true, None) => {
            return Err(CallError::invalid(
                "coverageExhaustedReason",
                "`coverageExhaustedReason` is required with `coverageExhausted: true` below the Learn Mode floors: \
                 say what blocks further coverage",
            ));
        }
        (false, false, _) => {
            let mut data = learn::shortfall(&progress);
            data["taskId"] = json!(task.id);
            data["targetId"] = json!(tab);
            data["ingestionComplete"] = json!(complete);
            return Err(CallError::Coverage {
                message: format!(
                    "Learn Mode task {} on tab {tab} is below its coverage floors ({} of {} pages read, {} of {} \
                     actions taken): keep exploring, or finish with coverageExhausted: true and a \
                     coverageExhaustedReason when further coverage is genuinely blocked",
                    task.id,
                    progress.visited_surfaces,
                    learn::MIN_VISITED_SURFACES,
                    progress.meaningful_interactions,
                    learn::MIN_MEANINGFUL_INTERACTIONS
                ),
                data,
            });
        }
    };
    Ok(Some(Ending { task, progress, how, reason: reason.map(str::to_owned) }))
}

/// Ends a judged learn task; returns it as it ended.
pub fn finish(lcj: &lcj::Journal, e: &Ending) -> Result<Value, CallError> {
    let now = crate::clock::now_ms();
    lcj.with(|c| learn::end(c, &e.task, e.how, e.reason.as_deref(), now))?;
    let mut shown = learn::shown(&e.task, &e.progress);
    shown["learnModeActive"] = json!(false);
    shown["ended"] = json!(e.how);
    Ok(shown)
}
