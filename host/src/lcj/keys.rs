//! The journal's identifiers (docs/learning.md, "Journal"): candidate keys `lcj_ck_<sha256>`,
//! fingerprint hashes `sha256:<hex>`, stable ids `lcj_sid_<hash>`, and selectors as compared.

use sha2::{Digest, Sha256};

fn hex(parts: &[&str]) -> String {
    let digest = Sha256::digest(parts.join("\u{1f}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The candidate key of what `parts` name (`["pks", host, stable_id]`, `["diag", tool, tab]`).
pub fn candidate_key(parts: &[&str]) -> String {
    format!("lcj_ck_{}", hex(parts))
}

/// The fingerprint hash of a candidate's component and claim.
pub fn fingerprint_hash(component: &str, claim: &str) -> String {
    format!("sha256:{}", hex(&[component, claim]))
}

/// The stable id a candidate (and an entry generated from it) carries: short, from its key.
pub fn stable_id(candidate_key: &str) -> String {
    format!("lcj_sid_{}", &hex(&[candidate_key])[..12])
}

/// The candidate key of a stored phenomenon of `host` without one of its own: what its writes
/// and uses raise.
pub fn of_entry(host: &str, stable_id: &str) -> String {
    candidate_key(&["pks", host, &stable_id.to_ascii_lowercase()])
}

/// A selector as the journal compares it: trimmed, runs of white space made one space.
pub fn selector_norm(selector: &str) -> String {
    selector.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` cut to `max` characters.
pub fn cut(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_and_shaped() {
        let k = candidate_key(&["pks", "example.org", "banner"]);
        assert!(k.starts_with("lcj_ck_") && k.len() == 7 + 64, "{k}");
        assert_eq!(k, of_entry("example.org", "BANNER"));
        assert!(stable_id(&k).starts_with("lcj_sid_") && stable_id(&k).len() == 20);
        assert!(fingerprint_hash("a", "b").starts_with("sha256:"));
        assert_ne!(candidate_key(&["a", "bc"]), candidate_key(&["ab", "c"]));
        assert_eq!(selector_norm("  #a   >  .b "), "#a > .b");
        assert_eq!(cut("héllo", 2), "hé");
    }
}
