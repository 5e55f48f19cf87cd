//! `nova.learn_suggest` (docs/learning.md, "Suggestions"): ranked learning opportunities from
//! the journal's observation clusters and from the site's stored entries.
//!
//! A cluster is the observations of one site under one key (the candidate key, else the
//! phenomenon they are attributed to, else the selector, else `tool|unknown`), kept with support
//! of at least 2. Its score is `round(log2(support), 2) + (2.0 with ≥ 2 sessions) +
//! round(successes / (successes + failures) · 2.0, 2)`. Entries that fail are checked by two
//! drift gates: A (`silent_verify_drift`, ≥ 2 failures in a row and staleness ≥ 0.5) and B
//! (`active_failure_drift`, ≥ 5 attempts and a 30-day success rate below 0.5), scored
//! `2.0 + min(2.0, failures in a row · 0.5) + component` (A: staleness; B: max(0.5, 1 − rate)).

use std::collections::{BTreeMap, HashSet};

use rusqlite::Connection;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::call::{CallError, CallRecord, ToolReply, check_range};
use crate::lcj::rows::{self, Seen};
use crate::lcj::{self, evidence, keys};
use crate::observation::ActionKind;
use crate::pks::records::{self, Entry};
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// `limit` bounds and default.
pub const LIMIT: (u32, u32, u32) = (1, 20, 5);
/// How far back clusters look, ms.
pub const WINDOW_MS: i64 = 30 * 86_400_000;
/// Least support of a cluster.
pub const MIN_SUPPORT: i64 = 2;

/// Arguments of `nova.learn_suggest`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SuggestArgs {
    /// The site, or `*` for every site (default).
    #[serde(default)]
    pub scope: Option<String>,
    /// Most opportunities (1 to 20, default 5).
    #[serde(default = "limit")]
    pub limit: u32,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

fn limit() -> u32 {
    LIMIT.2
}

/// Observations of one site under one key.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// The site.
    pub host: String,
    /// The key they share.
    pub candidate_key: String,
    /// The phenomenon they are attributed to.
    pub target: Option<String>,
    /// The selector they used (when the key is a selector).
    pub selector: Option<String>,
    /// The tool most of them came from.
    pub tool: String,
    /// Their most common kind.
    pub dominant_kind: String,
    /// How many.
    pub support: i64,
    /// Successes, failures, distinct activity sessions.
    pub successes: i64,
    /// Failures.
    pub failures: i64,
    /// Distinct sessions.
    pub sessions: i64,
    /// What they carried (the first payload with text).
    pub payload: Value,
    /// The newest (ms).
    pub last_at: i64,
}

impl Cluster {
    /// Its score and the parts of it.
    pub fn score(&self) -> (f64, Value) {
        let r2 = |x: f64| (x * 100.0).round() / 100.0;
        let support = r2((self.support.max(1) as f64).log2());
        let sessions = if self.sessions >= 2 { 2.0 } else { 0.0 };
        let decided = self.successes + self.failures;
        let ratio = if decided > 0 { r2(self.successes as f64 / decided as f64 * 2.0) } else { 0.0 };
        let total = r2(support + sessions + ratio);
        (
            total,
            json!({"supportLog2": support, "sessionsBonus": sessions, "successRatio": ratio, "total": total}),
        )
    }
}

/// The key a cluster of `o` is counted under.
pub fn cluster_key(host: &str, o: &Seen) -> (String, Option<String>, Option<String>) {
    if let Some(k) = &o.candidate_key {
        return (k.clone(), o.target.clone(), o.selector.clone());
    }
    if let Some(t) = &o.target {
        return (keys::of_entry(host, t), Some(t.clone()), None);
    }
    if let Some(s) = &o.selector {
        return (keys::candidate_key(&["selector", host, s]), None, Some(s.clone()));
    }
    (keys::candidate_key(&["tool", host, &o.tool, "unknown"]), None, None)
}

/// The clusters of `host`'s observations (newest first), support ≥ 2, perceive signatures left
/// out (every visit makes one).
pub fn clusters(host: &str, seen: &[Seen]) -> Vec<Cluster> {
    let mut groups: BTreeMap<String, Vec<&Seen>> = BTreeMap::new();
    let mut heads: BTreeMap<String, (Option<String>, Option<String>)> = BTreeMap::new();
    for o in seen.iter().filter(|o| o.kind != "perceive_signature") {
        let (key, target, selector) = cluster_key(host, o);
        heads.entry(key.clone()).or_insert((target, selector));
        groups.entry(key).or_default().push(o);
    }
    let mut out = Vec::new();
    for (key, obs) in groups {
        let support = obs.len() as i64;
        if support < MIN_SUPPORT {
            continue;
        }
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
        for o in &obs {
            *kinds.entry(o.kind.as_str()).or_default() += 1;
            *tools.entry(o.tool.as_str()).or_default() += 1;
        }
        let top = |m: BTreeMap<&str, usize>| m.into_iter().max_by_key(|(_, n)| *n).map(|(k, _)| k.to_owned());
        let (successes, _) = evidence::successes(obs.iter().copied());
        let all_sessions: HashSet<&str> = obs.iter().map(|o| o.session.as_str()).collect();
        let (target, selector) = heads.remove(&key).unwrap_or_default();
        out.push(Cluster {
            host: host.to_owned(),
            candidate_key: key,
            target,
            selector,
            tool: top(tools).unwrap_or_default(),
            dominant_kind: top(kinds).unwrap_or_default(),
            support,
            successes,
            failures: obs.iter().filter(|o| o.outcome < 0).count() as i64,
            sessions: all_sessions.len() as i64,
            payload: obs
                .iter()
                .find(|o| o.payload["text"].is_string())
                .map_or(Value::Null, |o| o.payload.clone()),
            last_at: obs.iter().map(|o| o.at).max().unwrap_or(0),
        });
    }
    out
}

/// A drift gate that fires for an entry: its id, score and what it saw.
pub fn drift(e: &Entry, ev: &evidence::Evidence, now: i64) -> Option<(&'static str, f64, Value)> {
    let run = ev.consecutive_failures;
    let attempts = ev.successes_30d + ev.failures_30d;
    let rate = if attempts > 0 { ev.successes_30d as f64 / attempts as f64 } else { 1.0 };
    // Staleness: how far the site drifted from the entry, or how long since it last worked.
    let since_success = e
        .last
        .1
        .filter(|_| e.last.0.as_deref() == Some("success"))
        .map_or(1.0, |at| ((now - at).max(0) as f64 / (14.0 * 86_400_000.0)).min(1.0));
    let staleness = e.drift_debt.max(since_success);
    let base = 2.0 + (run as f64 * 0.5).min(2.0);
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    if run >= 2 && staleness >= 0.5 {
        return Some((
            "silent_verify_drift",
            r3(base + staleness),
            json!({"consecutiveFailures": run, "staleness": r3(staleness)}),
        ));
    }
    if attempts >= 5 && rate < 0.5 {
        let component = (1.0 - rate).max(0.5);
        return Some((
            "active_failure_drift",
            r3(base + component),
            json!({"attempts": attempts, "successRate30d": r3(rate)}),
        ));
    }
    None
}

/// The opportunities of `host` at `now`, best first.
pub fn opportunities(c: &Connection, host: &str, now: i64) -> rusqlite::Result<Vec<Value>> {
    let seen = rows::observations(c, host, now - WINDOW_MS)?;
    let entries = records::entries(c, host)?;
    let mut out = Vec::new();
    for cl in clusters(host, &seen) {
        let (score, breakdown) = cl.score();
        let entry = cl.target.as_ref().and_then(|t| entries.iter().find(|e| e.id.eq_ignore_ascii_case(t)));
        let mut o = json!({
            "contextHost": cl.host, "candidateKey": cl.candidate_key, "dominantKind": cl.dominant_kind,
            "supportCount": cl.support, "successCount": cl.successes, "failureCount": cl.failures,
            "distinctSessions": cl.sessions, "score": score, "scoreBreakdown": breakdown,
            "targetStableId": cl.target, "selector": cl.selector, "tool": cl.tool,
            "lastSeenUtc": crate::time::iso(cl.last_at),
        });
        match entry {
            None if cl.successes >= 1 => {
                o["suggestion"] = json!("learn_generate");
                o["reason"] = json!("a repeated, successful pattern that no stored phenomenon covers yet");
            }
            None => {
                o["suggestion"] = json!("investigate");
                o["reason"] = json!("a repeated pattern without a success: nothing to learn from yet");
            }
            Some(e) => {
                let ev = evidence::of_entry(c, host, e, now)?;
                if let Some((gate, drift_score, saw)) = drift(e, &ev, now) {
                    o["suggestion"] = json!("revalidate");
                    o["driftGate"] = json!(gate);
                    o["driftScore"] = json!(drift_score);
                    o["drift"] = saw;
                    o["score"] = json!(score.max(drift_score));
                    o["reason"] = json!(format!(
                        "{} is failing: check it with nova.revalidate, repair or retire it",
                        e.id
                    ));
                } else {
                    let next = super::gates::next(e);
                    let ready = super::gates::decide(next, e, &ev).is_ok();
                    o["suggestion"] = json!(if ready { "learn_promote" } else { "keep_observing" });
                    o["nextTransition"] = json!(next.name());
                    o["reason"] = json!(if ready {
                        format!("{} passes the gates of {}: nova.learn_promote", e.id, next.name())
                    } else {
                        format!("{} is gathering evidence; nova.explain says what it lacks", e.id)
                    });
                }
            }
        }
        out.push(o);
    }
    // Stored candidates nothing has confirmed for 14 days: stale review knowledge.
    for e in entries.iter().filter(|e| e.deprecated.is_none() && e.level == "L0") {
        let ev = evidence::of_entry(c, host, e, now)?;
        if ev.support_14d == 0 && out.iter().all(|o| o["targetStableId"] != json!(e.id)) {
            out.push(json!({
                "contextHost": host, "candidateKey": ev.candidate_key, "dominantKind": "stale_candidate",
                "supportCount": 0, "successCount": 0, "failureCount": 0, "distinctSessions": 0, "score": 0.0,
                "scoreBreakdown": {"supportLog2": 0.0, "sessionsBonus": 0.0, "successRatio": 0.0, "total": 0.0},
                "targetStableId": e.id, "suggestion": "revalidate",
                "reason": format!("{} is a candidate nothing has used in 14 days: use it, revalidate it or retire it", e.id),
            }));
        }
    }
    out.sort_by(|a, b| {
        let s = |v: &Value| v["score"].as_f64().unwrap_or(0.0);
        s(b).total_cmp(&s(a)).then_with(|| a["candidateKey"].as_str().cmp(&b["candidateKey"].as_str()))
    });
    Ok(out)
}

/// What `nova.learn_suggest` reaches.
pub struct Suggester<'h> {
    /// The journal.
    pub lcj: &'h lcj::Journal,
}

impl<'h> From<&'h crate::hub::Hub> for Suggester<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { lcj: &hub.lcj }
    }
}

crate::tool! {
    /// `nova.learn_suggest` in the tool registry.
    pub static LEARN_SUGGEST = ToolDef::new(
        "nova.learn_suggest",
        "Ranked learning opportunities from the learning journal: repeated patterns on a site \
         (support, successes, failures, sessions, score and its breakdown), entries ready for \
         promotion, and failing or stale ones (drift gates). Evidence to review, never permission \
         to act.",
        registry::schema::<SuggestArgs>,
        crate::handler!(Suggester::learn_suggest),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::None)
    .read_only();
}

impl Suggester<'_> {
    /// `nova.learn_suggest`.
    pub async fn learn_suggest(&self, rec: &mut CallRecord, a: SuggestArgs) -> Result<ToolReply, CallError> {
        check_range("limit", a.limit, LIMIT)?;
        let site = match a.scope.as_deref().map(str::trim) {
            None | Some("*") => None,
            Some(s) => Some(crate::pks::scope::normalize(s)?),
        };
        let complete = self.lcj.flush_within(lcj::FLUSH_MAX).await;
        let now = crate::clock::now_ms();
        let mut all = self.lcj.with(|c| {
            let hosts: Vec<String> = match &site {
                Some(s) => vec![s.clone()],
                None => {
                    let mut stmt = c.prepare(
                        "SELECT DISTINCT context_host FROM lcj_observations WHERE created_at >= ?1
                         UNION SELECT scope FROM pks_domains",
                    )?;
                    stmt.query_map([now - WINDOW_MS], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
                }
            };
            let mut out = Vec::new();
            for h in hosts {
                out.extend(opportunities(c, &h, now)?);
            }
            Ok(out)
        })?;
        all.sort_by(|a, b| b["score"].as_f64().unwrap_or(0.0).total_cmp(&a["score"].as_f64().unwrap_or(0.0)));
        all.truncate(a.limit as usize);
        rec.executed();
        Ok(ToolReply::ok(json!({
            "ok": true, "scope": site.unwrap_or_else(|| "*".to_owned()), "limit": a.limit, "count": all.len(),
            "opportunities": all, "ingestionComplete": complete,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(kind: &str, outcome: i64, session: &str, selector: Option<&str>) -> Seen {
        Seen {
            kind: kind.into(),
            outcome,
            severity: 0,
            session: session.into(),
            tool: "nova.click_selector".into(),
            target: None,
            candidate_key: None,
            selector: selector.map(str::to_owned),
            payload: Value::Null,
            at: 5,
        }
    }

    #[test]
    fn clusters_need_support_two_and_score_by_the_formula() {
        let obs = [
            seen("action_success", 1, "s1", Some("#reject")),
            seen("action_success", 1, "s2", Some("#reject")),
            seen("action_failure", -1, "s2", Some("#reject")),
            seen("action_success", 1, "s1", Some("#once")),
            seen("perceive_signature", 0, "s1", None),
            seen("perceive_signature", 0, "s2", None),
        ];
        let cl = clusters("a.org", &obs);
        assert_eq!(cl.len(), 1, "one lucky run is no cluster, visits are none: {cl:?}");
        let c = &cl[0];
        assert_eq!((c.support, c.successes, c.failures, c.sessions), (3, 2, 1, 2));
        assert_eq!(c.selector.as_deref(), Some("#reject"));
        // log2(3) = 1.58, two sessions 2.0, 2/3·2 = 1.33
        let (score, parts) = c.score();
        assert_eq!(score, 4.91);
        assert_eq!(parts["successRatio"], 1.33);
    }
}
