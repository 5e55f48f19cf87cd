//! Attribution of action calls to a phenomenon (docs/learning.md, "Journal"). Action tools take
//! no phenomenon id: a call counts for a phenomenon when its selector is one of the selectors
//! (primary or fallback) of exactly one of the site's entries that is not retired.

use serde_json::Value;

use super::keys::selector_norm;
use crate::pks::records::Entry;

/// The selectors an entry's playbook acts on, as the journal compares them; a selector that
/// reaches into a frame (`iframe >>> button`) also counts by its part inside the frame.
pub fn selectors(e: &Entry) -> Vec<String> {
    let mut out = Vec::new();
    for action in e.playbook["actions"].as_array().into_iter().flatten() {
        let primary = action["selector"].as_str().into_iter();
        let fallbacks =
            action["fallbackSelectors"].as_array().into_iter().flatten().filter_map(Value::as_str);
        for s in primary.chain(fallbacks) {
            out.push(selector_norm(s));
            if let Some((_, inner)) = s.rsplit_once(">>>") {
                out.push(selector_norm(inner));
            }
        }
    }
    out.retain(|s| !s.is_empty());
    out.dedup();
    out
}

/// The one entry of `entries` (a site's) that `selector` belongs to, if exactly one does.
pub fn attribute<'e>(entries: &'e [Entry], selector: &str) -> Option<&'e Entry> {
    let norm = selector_norm(selector);
    let mut hits = entries.iter().filter(|e| e.deprecated.is_none() && selectors(e).contains(&norm));
    let first = hits.next()?;
    hits.next().is_none().then_some(first)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(id: &str, playbook: Value, retired: bool) -> Entry {
        Entry { playbook, deprecated: retired.then(String::new), ..Entry::sample(id, "consent_cmp", "L1") }
    }

    #[test]
    fn a_selector_counts_for_the_one_entry_it_belongs_to() {
        let a = entry(
            "a",
            json!({"actions": [{"type": "click", "selector": "#reject",
                                                "fallbackSelectors": ["button.no"]}]}),
            false,
        );
        let b =
            entry("b", json!({"actions": [{"type": "click", "selector": "iframe#m >>> button.x"}]}), false);
        let c = entry("c", json!({"actions": [{"type": "click", "selector": "#shared"}]}), false);
        let d = entry("d", json!({"actions": [{"type": "click", "selector": "#shared"}]}), false);
        let gone = entry("e", json!({"actions": [{"type": "click", "selector": "#old"}]}), true);
        let all = [a, b, c, d, gone];
        assert_eq!(attribute(&all, " #reject ").map(|e| e.id.as_str()), Some("a"));
        assert_eq!(attribute(&all, "button.no").map(|e| e.id.as_str()), Some("a"));
        assert_eq!(attribute(&all, "button.x").map(|e| e.id.as_str()), Some("b"), "inside its frame");
        assert!(attribute(&all, "#shared").is_none(), "two entries: not unique");
        assert!(attribute(&all, "#old").is_none(), "retired");
        assert!(attribute(&all, "#nothing").is_none());
    }
}
