//! Evidence grading (docs/tasks.md, "Visit windows and grades"): observations bound to a scope are
//! merged into visit windows per page (a new window on a page change or after 2.5 s without a
//! call), and every unit the agent claimed checked gets a grade, strong / weak / none / unknown,
//! with reason codes. Pure and linear in units + observations.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::observation::flags;
use crate::url as normalize;

/// Idle gap that ends a visit window.
pub const WINDOW_IDLE_MS: i64 = 2500;
/// Dwell a window needs for strong evidence.
pub const STRONG_DWELL_MS: i64 = 1000;

/// One observation as grading sees it.
#[derive(Debug, Clone, Default)]
pub struct Obs {
    /// dispatch_seq.
    pub seq: i64,
    /// Effective URL.
    pub url: Option<String>,
    /// Signal flags.
    pub flags: i64,
    /// Selector touched.
    pub selector: Option<String>,
    /// Start.
    pub started_at_ms: i64,
    /// Duration.
    pub duration_ms: i64,
}

impl Obs {
    fn read_like(&self) -> bool {
        self.flags & (flags::CONTENT_EXPOSED | flags::DOM_EXPOSED) != 0
    }
}

/// A visit window.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Window {
    /// `route_url` of the page.
    pub page_url_norm: String,
    /// Route key of the page.
    pub route_key_norm: String,
    /// First call's start.
    pub started_at_ms: i64,
    /// Last call's end minus the start.
    pub dwell_time_ms: i64,
    /// Calls in the window.
    pub observation_count: u32,
    /// Read-like calls in the window.
    pub read_count: u32,
    /// OR of the calls' flags.
    pub union_signal_flags: i64,
}

/// Builds the visit windows of `obs` (sorted by seq).
pub fn windows(obs: &[Obs]) -> Vec<Window> {
    let mut out: Vec<Window> = Vec::new();
    let mut last_end = i64::MIN;
    // Consecutive calls mostly share a URL: normalise each distinct one once.
    let mut last_raw: Option<&str> = None;
    let mut last_page: Option<String> = None;
    for o in obs {
        let Some(raw) = o.url.as_deref() else { continue };
        if last_raw != Some(raw) {
            last_raw = Some(raw);
            last_page = normalize::route_url(raw);
        }
        let Some(page) = last_page.as_deref() else { continue };
        let end = o.started_at_ms + o.duration_ms.max(0);
        let extend = out.last().is_some_and(|w| {
            w.page_url_norm == page && o.started_at_ms.saturating_sub(last_end) <= WINDOW_IDLE_MS
        });
        if !extend {
            out.push(Window {
                route_key_norm: normalize::route_key(page),
                page_url_norm: page.to_owned(),
                started_at_ms: o.started_at_ms,
                dwell_time_ms: 0,
                observation_count: 0,
                read_count: 0,
                union_signal_flags: 0,
            });
        }
        if let Some(w) = out.last_mut() {
            w.observation_count += 1;
            w.read_count += u32::from(o.read_like());
            w.union_signal_flags |= o.flags;
            w.dwell_time_ms = w.dwell_time_ms.max(end - w.started_at_ms);
        }
        last_end = last_end.max(end);
    }
    out
}

/// Evidence grade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Grade {
    /// Read within a sustained visit of exactly this page.
    Strong,
    /// Something matched, not enough for strong.
    Weak,
    /// Nothing matched although it could have.
    None,
    /// Cannot be judged.
    Unknown,
}

/// How a unit is located in observations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Locator {
    /// Canonical route URL (strong ceiling).
    UrlExact(String),
    /// `scheme-less host + path` for domain-like keys (strong ceiling).
    HostPath(String),
    /// Route key (strong ceiling).
    RouteKey(String),
    /// SHA-256 of the normalised selector (weak ceiling).
    Selector(String),
    /// A document name (weak ceiling).
    Document(String),
}

/// SHA-256 hex of a whitespace-normalised selector.
pub fn selector_hash(selector: &str) -> String {
    let norm: String = selector.split_whitespace().collect::<Vec<_>>().join(" ");
    Sha256::digest(norm.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn host_path(url: &str) -> Option<String> {
    let p = normalize::parts(url)?;
    let path = p.path.trim_end_matches('/').to_lowercase();
    Some(format!("{}{}", p.host, path))
}

/// Infers the locator of a unit (docs/tasks.md, "Locators"). `url` is a TUC unit's URL, if any.
pub fn locator(unit_key: &str, unit_kind: &str, url: Option<&str>) -> Option<Locator> {
    if let Some(u) = url.and_then(normalize::route_url) {
        return Some(Locator::UrlExact(u));
    }
    let key = unit_key.trim();
    let key = key.strip_prefix("url:").filter(|k| k.contains('/') || k.contains('.')).unwrap_or(key);
    match unit_kind {
        "selector" => return Some(Locator::Selector(selector_hash(key))),
        "document" | "pdf" => return (!key.is_empty()).then(|| Locator::Document(key.to_owned())),
        _ => {}
    }
    if key.starts_with("http://") || key.starts_with("https://") {
        return normalize::route_url(key).map(Locator::UrlExact);
    }
    if key.starts_with(['#', '.', '[']) || key.contains(['>', '+', '~']) {
        return Some(Locator::Selector(selector_hash(key)));
    }
    if key.starts_with('/') {
        return Some(Locator::RouteKey(normalize::route_key(key)));
    }
    if key.contains('.') && !key.contains(char::is_whitespace) {
        return host_path(&format!("https://{key}")).map(Locator::HostPath);
    }
    None
}

/// One graded unit.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitGrade {
    /// The unit.
    pub unit_key: String,
    /// Its grade.
    pub evidence_grade: Grade,
    /// Why (empty for strong).
    pub reason_codes: Vec<&'static str>,
}

/// A unit to grade.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Key.
    pub key: String,
    /// Kind.
    pub kind: String,
    /// URL of a URL unit.
    pub url: Option<String>,
}

/// Counts of a grading run.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GradeCounts {
    /// Claimed checked units.
    pub claimed_checked_units: u64,
    /// Strong + weak.
    pub observed_checked_units: u64,
    /// Strong.
    pub strong: u64,
    /// Weak.
    pub weak: u64,
    /// None.
    pub none: u64,
    /// Unknown.
    pub unknown: u64,
}

struct Index<'a> {
    by_url: HashMap<&'a str, Vec<&'a Window>>,
    by_route: HashMap<&'a str, Vec<&'a Window>>,
    by_host_path: HashMap<String, Vec<&'a Window>>,
    selectors: HashSet<String>,
    urls: Vec<&'a str>,
}

/// Grades `units` against the scope's observations. `scoped` is false when the instance has no
/// evidence scope; `complete` when ingestion and projection reached the barrier.
pub fn grade(units: &[Unit], obs: &[Obs], scoped: bool, complete: bool) -> (Vec<UnitGrade>, GradeCounts) {
    let wins = windows(obs);
    // Locators first, so that only the indexes some unit needs are built.
    let locators: Vec<Option<Locator>> =
        units.iter().map(|u| locator(&u.key, &u.kind, u.url.as_deref())).collect();
    let needs = |f: fn(&Locator) -> bool| locators.iter().flatten().any(f);
    let mut idx = Index {
        by_url: HashMap::new(),
        by_route: HashMap::new(),
        by_host_path: HashMap::new(),
        selectors: HashSet::new(),
        urls: Vec::new(),
    };
    if needs(|l| matches!(l, Locator::Selector(_))) {
        idx.selectors = obs.iter().filter_map(|o| o.selector.as_deref()).map(selector_hash).collect();
    }
    if needs(|l| matches!(l, Locator::Document(_))) {
        idx.urls = obs.iter().filter_map(|o| o.url.as_deref()).collect();
    }
    let (routes, host_paths) =
        (needs(|l| matches!(l, Locator::RouteKey(_))), needs(|l| matches!(l, Locator::HostPath(_))));
    for w in &wins {
        idx.by_url.entry(w.page_url_norm.as_str()).or_default().push(w);
        if routes {
            idx.by_route.entry(w.route_key_norm.as_str()).or_default().push(w);
        }
        if host_paths && let Some(hp) = host_path(&w.page_url_norm) {
            idx.by_host_path.entry(hp).or_default().push(w);
        }
    }
    let mut counts = GradeCounts { claimed_checked_units: units.len() as u64, ..Default::default() };
    let graded: Vec<UnitGrade> = units
        .iter()
        .zip(locators)
        .map(|(u, loc)| {
            let (grade, reasons) = grade_one(loc, &idx, scoped, complete);
            match grade {
                Grade::Strong => counts.strong += 1,
                Grade::Weak => counts.weak += 1,
                Grade::None => counts.none += 1,
                Grade::Unknown => counts.unknown += 1,
            }
            UnitGrade { unit_key: u.key.clone(), evidence_grade: grade, reason_codes: reasons }
        })
        .collect();
    counts.observed_checked_units = counts.strong + counts.weak;
    (graded, counts)
}

fn grade_one(
    loc: Option<Locator>,
    idx: &Index<'_>,
    scoped: bool,
    complete: bool,
) -> (Grade, Vec<&'static str>) {
    if !scoped {
        return (Grade::Unknown, vec!["scope_binding_missing"]);
    }
    let Some(loc) = loc else {
        return (Grade::Unknown, vec!["no_locator"]);
    };
    let missing = || {
        if complete {
            (Grade::None, vec!["no_matching_observation"])
        } else {
            (Grade::Unknown, vec!["projection_incomplete"])
        }
    };
    let wins: Option<&Vec<&Window>> = match &loc {
        Locator::UrlExact(u) => idx.by_url.get(u.as_str()),
        Locator::RouteKey(k) => idx.by_route.get(k.as_str()),
        Locator::HostPath(hp) => idx.by_host_path.get(hp),
        Locator::Selector(h) => {
            return if idx.selectors.contains(h) {
                (Grade::Weak, vec!["visit_window_missing"])
            } else {
                missing()
            };
        }
        Locator::Document(d) => {
            return if idx.urls.iter().any(|u| u.contains(d.as_str())) {
                (Grade::Weak, vec!["visit_window_missing"])
            } else {
                missing()
            };
        }
    };
    let Some(wins) = wins.filter(|w| !w.is_empty()) else { return missing() };
    if wins.iter().any(|w| w.read_count > 0 && w.dwell_time_ms >= STRONG_DWELL_MS) {
        (Grade::Strong, Vec::new())
    } else if wins.iter().any(|w| w.read_count > 0) {
        (Grade::Weak, vec!["visit_window_missing"])
    } else {
        (Grade::Weak, vec!["no_read_like_observation"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(seq: i64, url: &str, flags: i64, at: i64, dur: i64) -> Obs {
        Obs { seq, url: Some(url.into()), flags, selector: None, started_at_ms: at, duration_ms: dur }
    }

    const READ: i64 = flags::CONTENT_EXPOSED | flags::DOM_EXPOSED;
    const NAV: i64 = flags::NAVIGATION_INTENT;

    #[test]
    fn windows_split_on_page_change_and_idle() {
        let o = [
            obs(1, "http://x.test/a", NAV, 0, 100),
            obs(2, "http://x.test/a?q=1", READ, 200, 50),
            obs(3, "http://x.test/a", READ, 1300, 10),
            obs(4, "http://x.test/b", NAV, 1400, 10),
            obs(5, "http://x.test/b", READ, 5000, 10),
        ];
        let w = windows(&o);
        assert_eq!(w.len(), 3);
        assert_eq!((w[0].observation_count, w[0].read_count, w[0].dwell_time_ms), (3, 2, 1310));
        assert_eq!(w[1].read_count, 0, "b's navigation");
        assert_eq!(w[2].read_count, 1, "a new window after 2.5 s idle");
    }

    #[test]
    fn grades_follow_the_table() {
        let o = [
            obs(1, "http://x.test/strong", NAV, 0, 100),
            obs(2, "http://x.test/strong", READ, 1000, 100),
            obs(3, "http://x.test/quick", READ, 2000, 100),
            obs(4, "http://x.test/nav-only", NAV, 3000, 100),
            Obs {
                seq: 5,
                selector: Some("#buy  .now".into()),
                ..obs(5, "http://x.test/nav-only", flags::SELECTOR_TOUCHED, 3200, 10)
            },
        ];
        let unit = |k: &str, kind: &str| Unit { key: k.into(), kind: kind.into(), url: None };
        let units = [
            unit("http://x.test/strong/", "url"),
            unit("/quick", "page"),
            unit("x.test/nav-only", "page"),
            unit("http://x.test/never", "url"),
            unit("#buy .now", "selector"),
            unit("item-42", "item"),
        ];
        let (g, counts) = grade(&units, &o, true, true);
        let grades: Vec<Grade> = g.iter().map(|u| u.evidence_grade).collect();
        assert_eq!(
            grades,
            [Grade::Strong, Grade::Weak, Grade::Weak, Grade::None, Grade::Weak, Grade::Unknown]
        );
        assert_eq!(g[1].reason_codes, ["visit_window_missing"]);
        assert_eq!(g[2].reason_codes, ["no_read_like_observation"]);
        assert_eq!(g[3].reason_codes, ["no_matching_observation"]);
        assert_eq!(g[5].reason_codes, ["no_locator"]);
        assert_eq!((counts.claimed_checked_units, counts.observed_checked_units), (6, 4));
        let (g, _) = grade(&units[3..4], &o, true, false);
        assert_eq!(
            (g[0].evidence_grade, g[0].reason_codes.clone()),
            (Grade::Unknown, vec!["projection_incomplete"])
        );
        let (g, _) = grade(&units[..1], &o, false, true);
        assert_eq!(g[0].reason_codes, ["scope_binding_missing"]);
    }
}
