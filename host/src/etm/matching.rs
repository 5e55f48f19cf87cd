//! Profile matching for `nova.task_match` / `nova.task_search` (docs/tasks.md, "Matching"):
//! German and English stop words removed, German compounds split on known parts, then
//! `text = 0.45 displayName + 0.35 goal + 0.10 taskType + 0.10 guidance` and
//! `final = 0.55 text + 0.20 domain + 0.20 platform + 0.10 fuzzy` (the platform weight is
//! spread over the others when no platform is given). Acceptance threshold 0.45, +0.07 with a
//! domain, +0.04 with a platform, +0.02 more with both (at most 0.58); a leader just below it
//! (within 0.05) is accepted when it leads the second by >= 0.10 with strong keyword overlap.

use std::collections::HashSet;

const STOP: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from", "is", "are",
    "be", "this", "that", "it", "as", "all", "every", "each", "my", "our", "your", "please", "check", "der",
    "die", "das", "und", "oder", "ein", "eine", "einen", "von", "zu", "im", "in", "auf", "für", "mit", "bei",
    "aus", "ist", "sind", "alle", "jede", "jeden", "den", "dem", "des", "bitte", "seite", "seiten",
];

/// German word parts a compound is split on (Rechnungsprüfung -> rechnung, prüfung).
const PARTS: &[&str] = &[
    "rechnung",
    "prüfung",
    "rechtschreib",
    "fehler",
    "übersetzung",
    "seite",
    "inhalt",
    "daten",
    "schutz",
    "barriere",
    "freiheit",
    "kontrolle",
    "bericht",
    "link",
    "bild",
    "text",
    "preis",
    "produkt",
    "katalog",
];

/// Lowercased tokens without stop words, compounds split.
pub fn tokens(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for word in text.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 1) {
        if STOP.contains(&word) {
            continue;
        }
        let parts: Vec<&&str> = PARTS.iter().filter(|p| word.contains(**p) && word.len() > p.len()).collect();
        for p in &parts {
            out.insert((**p).to_owned());
        }
        out.insert(word.trim_end_matches('s').to_owned());
    }
    out
}

fn same_word(a: &str, b: &str) -> bool {
    a == b || (a.len() > 4 && b.len() > 4 && (a.starts_with(b) || b.starts_with(a)))
}

/// How well `query` and `field` cover each other (0-1): the harmonic mean of the share of query
/// words found in the field and the share of field words found in the query.
fn overlap(query: &HashSet<String>, field: &str) -> f64 {
    let f = tokens(field);
    if query.is_empty() || f.is_empty() {
        return 0.0;
    }
    let recall =
        query.iter().filter(|q| f.iter().any(|t| same_word(q, t))).count() as f64 / query.len() as f64;
    let precision =
        f.iter().filter(|t| query.iter().any(|q| same_word(q, t))).count() as f64 / f.len() as f64;
    if recall + precision == 0.0 { 0.0 } else { 2.0 * recall * precision / (recall + precision) }
}

fn trigrams(s: &str) -> HashSet<String> {
    let chars: Vec<char> = format!("  {}  ", s.to_lowercase()).chars().collect();
    chars.windows(3).map(|w| w.iter().collect()).collect()
}

/// Trigram Jaccard similarity.
fn fuzzy(a: &str, b: &str) -> f64 {
    let (x, y) = (trigrams(a), trigrams(b));
    let union = x.union(&y).count();
    if union == 0 { 0.0 } else { x.intersection(&y).count() as f64 / union as f64 }
}

/// What a profile offers to matching.
#[derive(Debug, Clone, Default)]
pub struct Candidate {
    /// Name.
    pub display_name: String,
    /// Goal.
    pub goal: String,
    /// Type.
    pub task_type: String,
    /// Guidance text.
    pub guidance: String,
    /// Domain.
    pub domain: Option<String>,
    /// Platform.
    pub platform: Option<String>,
}

/// A scored candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    /// Final score 0-1.
    pub final_score: f64,
    /// 0.45 displayName part.
    pub display_name_score: f64,
    /// Goal part.
    pub goal_score: f64,
    /// Type part.
    pub task_type_score: f64,
    /// Domain contribution.
    pub domain_contribution: f64,
    /// Platform contribution.
    pub platform_contribution: f64,
    /// Fuzzy part.
    pub fuzzy: f64,
    /// Keyword overlap of the query with name + goal.
    pub keyword_raw: f64,
    /// D(omain) / P(latform) / K(eyword) evidence.
    pub evidence_mask: String,
}

fn same(a: Option<&str>, b: Option<&str>) -> Option<bool> {
    Some(a?.trim().eq_ignore_ascii_case(b?.trim()))
}

/// Scores one candidate for a query.
pub fn score(query: &str, domain: Option<&str>, platform: Option<&str>, c: &Candidate) -> Score {
    let q = tokens(query);
    let name = overlap(&q, &c.display_name);
    let goal = overlap(&q, &c.goal);
    let kind = overlap(&q, &c.task_type.replace('_', " "));
    let guidance = overlap(&q, &c.guidance);
    let text = 0.45 * name + 0.35 * goal + 0.10 * kind + 0.10 * guidance;
    let fz = fuzzy(query, &c.display_name);
    let d = match same(domain, c.domain.as_deref()) {
        Some(true) => 1.0,
        _ => 0.0,
    };
    let p = match same(platform, c.platform.as_deref()) {
        Some(true) => 1.0,
        _ => 0.0,
    };
    let (wt, wd, wp, wf) =
        if platform.is_some() { (0.55, 0.20, 0.20, 0.10) } else { (0.55, 0.20, 0.0, 0.10) };
    // Normalise so that a perfect match scores 1 (the published weights sum to 1.05).
    let sum: f64 = wt + wd + wp + wf;
    let sum = if domain.is_none() { sum - wd } else { sum };
    let raw = wt * text + if domain.is_some() { wd * d } else { 0.0 } + wp * p + wf * fz;
    let keyword_raw = overlap(&q, &format!("{} {}", c.display_name, c.goal));
    let mut mask = Vec::new();
    if d > 0.0 {
        mask.push("D");
    }
    if p > 0.0 {
        mask.push("P");
    }
    if keyword_raw > 0.0 {
        mask.push("K");
    }
    Score {
        final_score: round(raw / sum),
        display_name_score: round(name),
        goal_score: round(goal),
        task_type_score: round(kind),
        domain_contribution: round(wd * d / sum),
        platform_contribution: round(wp * p / sum),
        fuzzy: round(fz),
        keyword_raw: round(keyword_raw),
        evidence_mask: mask.join("+"),
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The acceptance threshold.
pub fn threshold(domain: bool, platform: bool) -> f64 {
    let mut t: f64 = 0.45;
    if domain {
        t += 0.07;
    }
    if platform {
        t += 0.04;
    }
    if domain && platform {
        t += 0.02;
    }
    round(t.min(0.58))
}

/// Which of the sorted scores are accepted (the gap boost may accept a leader just below).
pub fn accepted(sorted: &[&Score], threshold: f64) -> Vec<bool> {
    let mut out: Vec<bool> = sorted.iter().map(|s| s.final_score >= threshold).collect();
    if let (Some(first), Some(flag)) = (sorted.first(), out.first_mut()) {
        let second = sorted.get(1).map_or(0.0, |s| s.final_score);
        if !*flag
            && first.final_score >= threshold - 0.05
            && first.final_score - second >= 0.10
            && first.keyword_raw >= 0.6
        {
            *flag = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audit() -> Candidate {
        Candidate {
            display_name: "Spelling review of the docs site".into(),
            goal: "Find spelling mistakes on every documentation page".into(),
            task_type: "language_quality_review".into(),
            domain: Some("docs.example.test".into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_close_description_beats_an_unrelated_one() {
        let other = Candidate {
            display_name: "Invoice reconciliation".into(),
            goal: "Match invoices to payments".into(),
            task_type: "reconciliation".into(),
            ..Default::default()
        };
        let q = "review spelling on the documentation pages";
        let good = score(q, Some("docs.example.test"), None, &audit());
        let bad = score(q, Some("docs.example.test"), None, &other);
        assert!(good.final_score > threshold(true, false), "{good:?}");
        assert!(bad.final_score < 0.3, "{bad:?}");
        assert_eq!(good.evidence_mask, "D+K");
    }

    #[test]
    fn german_compounds_and_stop_words() {
        let t = tokens("Die Rechnungsprüfung für alle Seiten");
        assert!(t.contains("rechnung") && t.contains("prüfung") && !t.contains("die"), "{t:?}");
        assert_eq!(threshold(true, true), 0.58);
        assert_eq!(threshold(false, false), 0.45);
    }
}
