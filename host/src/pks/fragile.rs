//! Selectors that break when a site is rebuilt (docs/pks.md, "Fragile selectors"): class names a
//! build tool generated (`css-1q2w3e`, `sc-bdVaJa`, `emotion-…`, `styled-…`, CSS-module
//! `Button__primary___2Xk9a`, a short prefix and a hash, a bare hex hash) and positions
//! (`nth-child`). Ids, `data-testid`, `aria-label` and `name` are what lasts.

/// Why `sel` is fragile, or `None`.
pub fn why(sel: &str) -> Option<&'static str> {
    if sel.contains(":nth-child") || sel.contains(":nth-of-type") {
        return Some("depends on the element's position (nth-child)");
    }
    let names = sel.split(['.', '#']).skip(1).map(|s| {
        s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')).next().unwrap_or_default()
    });
    for name in names {
        if generated(name) {
            return Some("uses a class or id a build tool generated");
        }
    }
    None
}

fn generated(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if ["css-", "sc-", "emotion-", "styled-", "jsx-"].iter().any(|p| lower.starts_with(p)) {
        return true;
    }
    // CSS modules: `Block__element___hash` or `name_hash_1`.
    if let Some((_, tail)) = name.rsplit_once("__")
        && tail.trim_start_matches('_').len() >= 5
        && tail.chars().any(|c| c.is_ascii_digit())
    {
        return true;
    }
    let hexish = |s: &str| {
        s.len() >= 7 && s.chars().all(|c| c.is_ascii_hexdigit()) && s.chars().any(|c| c.is_ascii_digit())
    };
    if hexish(name) {
        return true;
    }
    // A short prefix and a hash: `a-3f9k2x`, `x1_9fj3k2`.
    if let Some((prefix, hash)) = name.split_once(['-', '_'])
        && prefix.len() <= 3
        && hash.len() >= 5
        && hash.chars().any(|c| c.is_ascii_digit())
        && hash.chars().any(|c| c.is_ascii_alphabetic())
        && !hash.contains(['-', '_'])
    {
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_and_positions_are_fragile() {
        for sel in [
            ".css-1q2w3e",
            "button.sc-bdVaJa",
            ".emotion-0",
            "div.styled-Button",
            ".Button__primary___2Xk9a",
            ".a3f9e2c1",
            ".x1-9fj3k2",
            "ul > li:nth-child(3)",
        ] {
            assert!(why(sel).is_some(), "{sel}");
        }
        for sel in [
            "#onetrust-reject-all-handler",
            "[data-testid=\"reject\"]",
            "button[aria-label=\"Reject all\"]",
            "input[name=email]",
            ".cookie-banner .reject-all",
            "#CybotCookiebotDialogBodyButtonDecline",
            ".qc-cmp2-summary-buttons",
        ] {
            assert_eq!(why(sel), None, "{sel}");
        }
    }
}
