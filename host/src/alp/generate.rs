//! `nova.learn_generate` (docs/learning.md, "Generating"): turns a site's repeated, successful
//! patterns into proposals and writes them as review knowledge (L0 candidates, hints, patches),
//! never guessing what the evidence does not show. Heuristics, in order:
//!
//! 1. consent decline: a repeated click or dismissal on a consent surface (Sourcepoint's message
//!    first, then other platforms), whose selector or text reads as a decline; a consent that
//!    reads as agreeing is never learned;
//! 2. overlay dismiss: a repeated dismissal of a dialog or overlay, or a click on a close control;
//! 3. selector replacement: an entry whose selector keeps failing while another selector
//!    succeeds in the same sessions: a patch (the new selector first, the old one as fallback),
//!    and the entry goes back to shadow to earn its level again;
//! 4. result item: a repeated successful click on an item of a list: a navigation hint.
//!
//! A proposal at least 0.92 similar to a stored entry is dropped as a duplicate; at least 0.88
//! makes it a patch of that entry; below, a new phenomenon. Every write passes the same rules as
//! `nova.pks_upsert` and needs the site open in a tab.

use std::collections::HashSet;

use rusqlite::Connection;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::suggest::{self, Cluster};
use crate::call::{CallError, CallRecord, ToolReply, check_range};
use crate::lcj::{self, attribution, keys, rows};
use crate::observation::ActionKind;
use crate::pks::model::{Phenomenon, Polarity};
use crate::pks::records::{self, Entry};
use crate::pks::{poison, scope};
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// `limit` bounds and default.
pub const LIMIT: (u32, u32, u32) = (1, 20, 5);
/// Similarity at which a proposal is a duplicate.
pub const DUPLICATE: f64 = 0.92;
/// Similarity at which a proposal patches the entry it resembles.
pub const PATCH: f64 = 0.88;

/// Words that put a selector or text on a consent surface.
const CONSENT_WORDS: &[&str] = &[
    "cookie",
    "consent",
    "gdpr",
    "privacy",
    "cmp",
    "onetrust",
    "didomi",
    "sp_message",
    "sourcepoint",
    "usercentrics",
    "truste",
    "quantcast",
    "cookiebot",
    "tcf",
];
/// Words that make a control a close control.
const CLOSE_WORDS: &[&str] = &["close", "dismiss", "no thanks", "not now", "skip", "×", "escape"];
/// Words that make a selector an item of a list of results.
const ITEM_WORDS: &[&str] = &["result", "item", "card", ":nth-child", ":nth-of-type", "li"];

/// Arguments of `nova.learn_generate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GenerateArgs {
    /// The site (required; it must be open in a tab).
    pub scope: String,
    /// Most proposals (1 to 20, default 5).
    #[serde(default = "limit")]
    pub limit: u32,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

fn limit() -> u32 {
    LIMIT.2
}

/// What `nova.learn_generate` reaches.
pub struct Generator<'h> {
    /// The PKS tables (entries are written there).
    pub pks: &'h crate::pks::Pks,
    /// The journal.
    pub lcj: &'h lcj::Journal,
    /// The browser's tabs (a write needs its site open in one).
    pub bridge: &'h crate::bridge::Bridge,
}

impl<'h> From<&'h crate::hub::Hub> for Generator<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { pks: &hub.pks, lcj: &hub.lcj, bridge: &hub.bridge }
    }
}

crate::tool! {
    /// `nova.learn_generate` in the tool registry.
    pub static LEARN_GENERATE = ToolDef::new(
        "nova.learn_generate",
        "Turn a site's repeated, successful patterns (from the learning journal) into review \
         knowledge: L0 candidate phenomena (consent decline, overlay dismiss), patches of failing \
         selectors, and hints; duplicates of stored entries are dropped. The site must be open in \
         a tab; nothing generated is active until nova.learn_promote's gates pass.",
        registry::schema::<GenerateArgs>,
        crate::handler!(Generator::learn_generate),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::None);
}

fn has(text: &str, words: &[&str]) -> bool {
    let t = text.to_lowercase();
    words.iter().any(|w| {
        if w.len() <= 2 {
            // Short words match whole tokens only (`li`, not `link`).
            t.split(|c: char| !c.is_alphanumeric()).any(|tok| tok == *w)
        } else {
            t.contains(w)
        }
    })
}

/// What a proposal is.
#[derive(Debug, Clone, PartialEq)]
pub enum Draft {
    /// A new phenomenon.
    Phenomenon(Value),
    /// A new selector for an entry.
    Patch {
        /// The entry.
        entry: String,
        /// Its new first selector.
        selector: String,
    },
    /// A hint.
    Hint {
        /// The hint's kind.
        kind: &'static str,
        /// What it says.
        text: String,
    },
}

/// A proposal before it is checked against the store.
#[derive(Debug, Clone)]
pub struct Proposal {
    /// Which heuristic.
    pub heuristic: &'static str,
    /// The cluster's key.
    pub candidate_key: String,
    /// 0 to 1.
    pub confidence: f64,
    /// Why, in a sentence.
    pub reason: String,
    /// What.
    pub draft: Draft,
}

/// The confidence of a cluster's proposal.
pub fn confidence(cl: &Cluster) -> f64 {
    let decided = (cl.successes + cl.failures).max(1) as f64;
    let c = (0.55 + 0.1 * cl.successes.min(3) as f64) * (cl.successes as f64 / decided);
    (c.min(0.9) * 100.0).round() / 100.0
}

fn click_phenomenon(
    kind: &str,
    cl: &Cluster,
    selector: &str,
    polarity: Polarity,
    vendor: Option<&str>,
) -> Value {
    let mut signals = Vec::new();
    if let Some(v) = vendor {
        signals.push(json!({"kind": "vendor", "match": v}));
    }
    signals.push(json!({"kind": "dom", "match": selector}));
    if let Some(t) = cl.payload["text"].as_str().map(|t| keys::cut(t.trim(), 60)).filter(|t| t.len() >= 8) {
        signals.push(json!({"kind": "text", "match": t}));
    }
    json!({
        "id": keys::stable_id(&cl.candidate_key), "type": kind,
        "fingerprint": {"signals": signals, "minConfidence": 0.6},
        "playbook": {
            "policy": if polarity == Polarity::Reject { "reject_preferred" } else { "dismiss" },
            "actions": [{"type": "click", "selector": selector,
                         "declaredPolarity": serde_json::to_value(polarity).unwrap_or(Value::Null)}],
            "verify": [{"type": "absent", "selector": selector, "timeoutMs": 3000}],
        },
        "context": {"routes": ["*"]},
    })
}

/// The proposals the heuristics make from `clusters` and the site's `entries`, in order.
pub fn propose(clusters: &[Cluster], entries: &[Entry]) -> Vec<Proposal> {
    let mut out = Vec::new();
    let new: Vec<&Cluster> =
        clusters.iter().filter(|c| c.target.is_none() && c.successes >= 1 && c.selector.is_some()).collect();
    let text_of = |c: &Cluster| {
        format!(
            "{} {}",
            c.selector.as_deref().unwrap_or_default(),
            c.payload["text"].as_str().unwrap_or_default()
        )
    };
    // 1. Consent decline, Sourcepoint first.
    let mut consent: Vec<&&Cluster> =
        new.iter().filter(|c| has(&text_of(c), CONSENT_WORDS) || c.payload["kind"] == "consent").collect();
    consent.sort_by_key(|c| !has(&text_of(c), &["sp_message", "sourcepoint"]));
    let mut used = HashSet::new();
    for cl in consent {
        let selector = cl.selector.clone().unwrap_or_default();
        let reads = poison::reads_as(&text_of(cl)).or_else(|| poison::reads_as(&selector));
        if reads != Some(Polarity::Reject) {
            continue;
        }
        let vendor = has(&text_of(cl), &["sp_message", "sourcepoint"]).then_some("sourcepoint");
        used.insert(cl.candidate_key.clone());
        out.push(Proposal {
            heuristic: "consent_decline",
            candidate_key: cl.candidate_key.clone(),
            confidence: confidence(cl),
            reason: format!(
                "`{selector}` declined a consent request {} time(s) in {} session(s)",
                cl.successes, cl.sessions
            ),
            draft: Draft::Phenomenon(click_phenomenon(
                "consent_cmp",
                cl,
                &selector,
                Polarity::Reject,
                vendor,
            )),
        });
    }
    // 2. Overlay dismiss.
    for cl in &new {
        if used.contains(&cl.candidate_key) {
            continue;
        }
        let dismissal = cl.dominant_kind == "blocker_dismissed" && cl.payload["kind"] != "consent";
        if !dismissal && !has(&text_of(cl), CLOSE_WORDS) {
            continue;
        }
        if poison::reads_as(&text_of(cl)) == Some(Polarity::Accept) {
            continue;
        }
        let selector = cl.selector.clone().unwrap_or_default();
        used.insert(cl.candidate_key.clone());
        out.push(Proposal {
            heuristic: "overlay_dismiss",
            candidate_key: cl.candidate_key.clone(),
            confidence: confidence(cl),
            reason: format!(
                "`{selector}` closed an overlay {} time(s) in {} session(s)",
                cl.successes, cl.sessions
            ),
            draft: Draft::Phenomenon(click_phenomenon("modal", cl, &selector, Polarity::Noop, None)),
        });
    }
    // 3. Selector replacement.
    for e in entries.iter().filter(|e| e.deprecated.is_none()) {
        let failing = clusters
            .iter()
            .find(|c| c.target.as_deref().is_some_and(|t| t.eq_ignore_ascii_case(&e.id)) && c.failures >= 2);
        let Some(failing) = failing else { continue };
        let replacement = new
            .iter()
            .filter(|c| !used.contains(&c.candidate_key) && c.successes >= 2 && c.failures == 0)
            .find(|c| !attribution::selectors(e).contains(c.selector.as_ref().unwrap_or(&String::new())));
        if let Some(r) = replacement {
            let selector = r.selector.clone().unwrap_or_default();
            used.insert(r.candidate_key.clone());
            out.push(Proposal {
                heuristic: "selector_replacement",
                candidate_key: r.candidate_key.clone(),
                confidence: confidence(r),
                reason: format!(
                    "{} failed {} time(s) while `{selector}` succeeded {} time(s)",
                    e.id, failing.failures, r.successes
                ),
                draft: Draft::Patch { entry: e.id.clone(), selector },
            });
        }
    }
    // 4. Result item.
    for cl in new.iter().filter(|c| !used.contains(&c.candidate_key) && c.successes >= 2) {
        let selector = cl.selector.clone().unwrap_or_default();
        if cl.dominant_kind != "action_success" || !has(&selector, ITEM_WORDS) {
            continue;
        }
        out.push(Proposal {
            heuristic: "result_item",
            candidate_key: cl.candidate_key.clone(),
            confidence: confidence(cl),
            reason: format!("`{selector}` opened a result {} time(s)", cl.successes),
            draft: Draft::Hint { kind: "navigation", text: format!("Results open with `{selector}`") },
        });
    }
    out
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    a.intersection(b).count() as f64 / a.union(b).count().max(1) as f64
}

fn signals_of(fp: &Value) -> HashSet<String> {
    fp["signals"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            format!(
                "{}:{}",
                s["kind"].as_str().unwrap_or_default(),
                s["match"].as_str().unwrap_or_default().to_lowercase()
            )
        })
        .collect()
}

/// How alike a drafted phenomenon and a stored entry are: 0.6 of their selectors' overlap and
/// 0.4 of their signals', 0 for another type.
pub fn similarity(draft: &Value, e: &Entry) -> f64 {
    if draft["type"].as_str() != Some(e.kind.as_str()) {
        return 0.0;
    }
    let probe = Entry { playbook: draft["playbook"].clone(), ..e.clone() };
    let mine: HashSet<String> = attribution::selectors(&probe).into_iter().collect();
    let theirs: HashSet<String> = attribution::selectors(e).into_iter().collect();
    0.6 * jaccard(&mine, &theirs)
        + 0.4 * jaccard(&signals_of(&draft["fingerprint"]), &signals_of(&e.fingerprint))
}

/// Writes `p` for `host` (new entries with `origin`: `learned`, `auto_learning`); returns what
/// the proposal says about itself.
pub fn write(
    c: &Connection,
    host: &str,
    p: &Proposal,
    (owner, origin): (&str, &str),
    now: i64,
) -> Result<Value, CallError> {
    let store = |e: rusqlite::Error| CallError::Store(e.to_string());
    let entries = records::entries(c, host).map_err(store)?;
    let mut out = json!({
        "heuristic": p.heuristic, "contextHost": host, "candidateKey": p.candidate_key,
        "confidence": p.confidence, "reason": p.reason,
    });
    let remember = |claim: &str, component: &str| {
        let n = rows::NewCandidate {
            owner_id: owner,
            context_host: host,
            tab_id: None,
            task_id: None,
            component,
            claim,
            status: "verified",
            confidence: p.confidence,
            origin: "generated",
            candidate_key: &p.candidate_key,
            source_event_id: None,
            at: now,
        };
        rows::merge_candidate(c, &n).map(|_| ()).map_err(store)
    };
    match &p.draft {
        Draft::Phenomenon(doc) => {
            out["kind"] = json!("phenomenon");
            out["phenomenonType"] = doc["type"].clone();
            let best = entries.iter().map(|e| (similarity(doc, e), e)).max_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((sim, e)) = best.filter(|(s, _)| *s >= PATCH) {
                out["similarity"] = json!((sim * 1000.0).round() / 1000.0);
                out["targetStableId"] = json!(e.id);
                if sim >= DUPLICATE {
                    out["written"] = json!(false);
                    out["dropped"] = json!("duplicate");
                    return Ok(out);
                }
                out["kind"] = json!("patch");
            }
            let target = out["targetStableId"].as_str().map(str::to_owned);
            let mut ph: Phenomenon = serde_json::from_value(doc.clone())
                .map_err(|e| CallError::Store(format!("a generated phenomenon does not parse: {e}")))?;
            if let Some(t) = &target {
                ph.id = Some(t.clone());
            }
            poison::check(&ph)?;
            let id = ph.id.clone().unwrap_or_else(|| records::stable_id(&ph));
            let level = if target.is_some() { "L1" } else { "L0" };
            records::upsert(c, host, &id, &ph, (level, origin), now).map_err(store)?;
            if target.is_some() {
                records::set_level(c, host, &id, "L1", "patched by nova.learn_generate", now)
                    .map_err(store)?;
            } else {
                records::set_candidate_key(c, host, &id, &p.candidate_key).map_err(store)?;
            }
            remember(&p.reason, &id)?;
            out["targetStableId"] = json!(id);
            out["written"] = json!(true);
        }
        Draft::Patch { entry, selector } => {
            out["kind"] = json!("patch");
            out["targetStableId"] = json!(entry);
            let Some(e) = entries.iter().find(|x| x.id.eq_ignore_ascii_case(entry)) else {
                out["written"] = json!(false);
                return Ok(out);
            };
            let mut doc = json!({"id": e.id, "type": e.kind, "fingerprint": e.fingerprint, "playbook": e.playbook,
                                 "context": e.context});
            if let Some(first) = doc["playbook"]["actions"].get_mut(0) {
                let old = first["selector"].as_str().map(str::to_owned);
                first["selector"] = json!(selector);
                let mut fallbacks: Vec<Value> = old.into_iter().map(Value::from).collect();
                fallbacks.extend(first["fallbackSelectors"].as_array().cloned().unwrap_or_default());
                fallbacks.retain(|f| f.as_str() != Some(selector.as_str()));
                fallbacks.truncate(5);
                first["fallbackSelectors"] = json!(fallbacks);
            }
            let ph: Phenomenon = serde_json::from_value(doc).map_err(|err| {
                CallError::Store(format!("stored phenomenon {} does not parse: {err}", e.id))
            })?;
            poison::check(&ph)?;
            records::upsert(c, host, &e.id, &ph, ("L1", "learned"), now).map_err(store)?;
            if e.level == "L2" {
                records::set_level(c, host, &e.id, "L1", "patched by nova.learn_generate", now)
                    .map_err(store)?;
            }
            remember(&p.reason, &e.id)?;
            out["written"] = json!(true);
        }
        Draft::Hint { kind, text } => {
            out["kind"] = json!("hint");
            out["hintKind"] = json!("result_item");
            let key = format!("result_item_{}", &keys::candidate_key(&[text])[7..15]);
            let fresh =
                records::upsert_hint(c, host, &(key.clone(), (*kind).to_owned(), text.clone(), None), now)
                    .map_err(store)?;
            remember(text, "hint")?;
            out["hintKey"] = json!(key);
            out["written"] = json!(fresh);
            if !fresh {
                out["dropped"] = json!("duplicate");
            }
        }
    }
    Ok(out)
}

impl Generator<'_> {
    /// `nova.learn_generate`.
    pub async fn learn_generate(
        &self,
        rec: &mut CallRecord,
        a: GenerateArgs,
    ) -> Result<ToolReply, CallError> {
        check_range("limit", a.limit, LIMIT)?;
        if a.scope.trim().is_empty() || a.scope.trim() == "*" {
            return Err(CallError::invalid(
                "scope",
                "`scope` must name one site (example.org), not empty or `*`",
            ));
        }
        let site = scope::normalize(&a.scope)?;
        if !scope::open_in_a_tab(self.bridge, &site) {
            return Ok(scope::not_open(&site));
        }
        let complete = self.lcj.flush_within(lcj::FLUSH_MAX).await;
        let now = crate::clock::now_ms();
        let owner = rec.obs.agent_id.clone();
        let proposals = self.pks.with(|c| {
            let seen = rows::observations(c, &site, now - suggest::WINDOW_MS)?;
            let entries = records::entries(c, &site)?;
            Ok(propose(&suggest::clusters(&site, &seen), &entries))
        })?;
        let mut done = Vec::new();
        for p in proposals.iter().take(a.limit as usize) {
            let r = self.pks.with(|c| {
                let tx = crate::store::write_tx(c)?;
                let r = write(&tx, &site, p, (&owner, "learned"), now);
                if r.is_ok() {
                    tx.commit()?;
                }
                Ok(r)
            })?;
            done.push(match r {
                Ok(v) => v,
                Err(e) => json!({"heuristic": p.heuristic, "candidateKey": p.candidate_key, "written": false,
                                 "dropped": "refused", "reason": p.reason, "refusal": e.to_string()}),
            });
        }
        rec.executed();
        let generated = done.iter().filter(|d| d["written"] == true).count();
        Ok(ToolReply::ok(json!({
            "ok": true, "scope": site, "limit": a.limit, "generated": generated, "proposed": done.len(),
            "proposals": done, "ingestionComplete": complete,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(selector: &str, kind: &str, successes: i64, failures: i64, text: &str) -> Cluster {
        Cluster {
            host: "a.org".into(),
            candidate_key: keys::candidate_key(&["selector", "a.org", selector]),
            target: None,
            selector: Some(selector.into()),
            tool: "nova.click_selector".into(),
            dominant_kind: kind.into(),
            support: successes + failures,
            successes,
            failures,
            sessions: 2,
            payload: if text.is_empty() { Value::Null } else { json!({"text": text}) },
            last_at: 0,
        }
    }

    #[test]
    fn heuristics_run_in_order_and_never_learn_to_accept() {
        let cls = [
            cluster("#cookie-accept", "action_success", 3, 0, ""),
            cluster("#cookie-reject", "action_success", 2, 0, ""),
            cluster("iframe[id^=sp_message] >>> button.reject", "action_success", 2, 0, ""),
            cluster("#newsletter .close", "action_success", 2, 0, ""),
            cluster("ul.results li:nth-child(2) a", "action_success", 2, 0, ""),
        ];
        let p = propose(&cls, &[]);
        let names: Vec<&str> = p.iter().map(|p| p.heuristic).collect();
        assert_eq!(names, ["consent_decline", "consent_decline", "overlay_dismiss", "result_item"]);
        let Draft::Phenomenon(first) = &p[0].draft else { panic!("{p:?}") };
        assert_eq!(
            first["fingerprint"]["signals"][0],
            json!({"kind": "vendor", "match": "sourcepoint"}),
            "Sourcepoint first"
        );
        assert!(p.iter().all(|p| !p.reason.contains("accept")), "{p:?}");
        let Draft::Phenomenon(doc) = &p[1].draft else { panic!() };
        let ph: Phenomenon = serde_json::from_value(doc.clone()).expect("parses");
        poison::check(&ph).expect("a generated phenomenon passes the upsert rules");
    }

    #[test]
    fn similar_drafts_are_duplicates_or_patches() {
        let cl = cluster("#cookie-reject", "action_success", 2, 0, "We use cookies to improve");
        let doc = click_phenomenon("consent_cmp", &cl, "#cookie-reject", Polarity::Reject, None);
        let e = Entry {
            fingerprint: doc["fingerprint"].clone(),
            playbook: doc["playbook"].clone(),
            ..Entry::sample("x", "consent_cmp", "L1")
        };
        assert!(similarity(&doc, &e) >= DUPLICATE);
        let other = Entry { kind: "modal".into(), ..e.clone() };
        assert_eq!(similarity(&doc, &other), 0.0);
        let moved =
            Entry { fingerprint: json!({"signals": [{"kind": "dom", "match": "#cookie-reject"}]}), ..e };
        let s = similarity(&doc, &moved);
        assert!((0.7..DUPLICATE).contains(&s), "{s}");
        assert!(
            (0.5..0.6).contains(&confidence(&cluster("#a", "x", 1, 1, "")))
                || confidence(&cluster("#a", "x", 1, 1, "")) < 0.6
        );
    }
}
