//! Page texts that decide `pageState`: bot-challenge interstitials and geo blocks.

use crate::dom;

/// Titles and texts of bot-challenge interstitials (Cloudflare, hCaptcha, PerimeterX, ...).
const CHALLENGE_PHRASES: &[&str] = &[
    "checking your browser",
    "checking if the site connection is secure",
    "verify you are human",
    "verifying you are human",
    "verify that you are human",
    "please complete the security check",
    "are you a robot",
    "press & hold",
    "press and hold to confirm",
    "ddos protection by",
    "bestätigen sie, dass sie ein mensch sind",
    "überprüfen, ob sie ein mensch sind",
];
/// Titles only challenge pages have.
const CHALLENGE_TITLES: &[&str] = &["just a moment", "attention required", "robot check"];
/// A challenge page is short: a phrase deep in a long article is not one.
pub const CHALLENGE_MAX_TEXT: usize = 5000;

/// Whether a page's title and visible text read like a bot challenge.
pub fn challenge_text(title: &str, head: &str, text_total: usize) -> bool {
    let title = title.to_lowercase();
    let head = head.to_lowercase();
    CHALLENGE_TITLES.iter().any(|t| title.contains(t))
        || CHALLENGE_PHRASES.iter().any(|p| title.contains(p))
        || (text_total <= CHALLENGE_MAX_TEXT && CHALLENGE_PHRASES.iter().any(|p| head.contains(p)))
}

/// Texts of pages withheld by region or law (HTTP 451 and its kin).
const GEO_PHRASES: &[&str] = &[
    "not available in your country",
    "not available in your region",
    "not available in your location",
    "isn't available in your country",
    "isn't available in your region",
    "is unavailable in your country",
    "is unavailable in your region",
    "video available in your country",
    "unavailable for legal reasons",
    "in deinem land nicht verfügbar",
    "in ihrem land nicht verfügbar",
    "nicht in deinem land verfügbar",
    "nicht in ihrem land verfügbar",
    "n'est pas disponible dans votre pays",
    "no está disponible en tu país",
    "no está disponible en su país",
    "non è disponibile nel tuo paese",
];

/// Whether a page's title and visible text say it is withheld in this country or region.
pub fn geo_blocked_text(title: &str, head: &str) -> bool {
    let title = title.to_lowercase();
    let head = dom::collapse(&head.to_lowercase()).replace('’', "'");
    title.starts_with("451") || GEO_PHRASES.iter().any(|p| title.contains(p) || head.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_and_geo_texts_are_recognised() {
        assert!(challenge_text("Just a moment...", "", 100_000));
        assert!(challenge_text("Shop", "Verify you are human by completing the action below.", 200));
        assert!(!challenge_text("Blog", "how to verify you are human: an essay", CHALLENGE_MAX_TEXT + 1));
        assert!(!challenge_text("Shop", "Welcome", 50));
        assert!(geo_blocked_text("Video", "Sorry, this content is not available in your country."));
        assert!(geo_blocked_text("Video", "Dieser Inhalt ist in deinem Land nicht verfügbar."));
        assert!(geo_blocked_text("451 Unavailable For Legal Reasons", ""));
        assert!(geo_blocked_text("Video", "This video isn’t available in your country"));
        assert!(!geo_blocked_text("Shop", "Available in your country soon? Free shipping."));
    }
}
