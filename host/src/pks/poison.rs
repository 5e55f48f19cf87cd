//! What `nova.pks_upsert` refuses, so that stored knowledge cannot be turned against the person
//! (docs/pks.md, "What is refused"): each rule has a name, and a violation is a `-32602` error
//! naming the rule and the field.
//!
//! - `pks.poison.missing_polarity`: every action that changes the page declares what it means
//!   for the person's choices.
//! - `pks.poison.broad_selector`: selectors are exact: no `*`, no partial class or id matches
//!   (`[class*=…]`, `[id^=…]`), and the element itself named by more than a tag or a role
//!   (`[role=dialog]`, `button`).
//! - `pks.poison.text_polarity`: the visible text of the target agrees with the polarity: a
//!   reject (or manage, navigate, noop) action labelled "Accept all" is refused, and so is an
//!   accept action labelled "Reject all".
//! - `pks.poison.vendor_api`: a vendor API call is on the allowlist and agrees with the polarity.
//! - `pks.poison.shape`: the limits of the shapes (fallbacks only for click and type, at most 5;
//!   at most 64 signals, 20 actions, 20 verify steps; `minConfidence` and `threshold` within 0-1;
//!   an `absent` check names its selector).

use super::model::{Action, ActionType, MaxScope, Phenomenon, Polarity, VerifyType};
use super::model::{MAX_FALLBACKS, MAX_SIGNALS, MAX_STEPS};
use crate::call::CallError;

/// Vendor API calls a playbook may make, and what each means.
pub const VENDOR_API_ALLOWLIST: &[(&str, Polarity)] = &[
    ("__tcfapi.postRejectAll", Polarity::Reject),
    ("OneTrust.RejectAll", Polarity::Reject),
    ("OneTrust.AllowAll", Polarity::Accept),
    ("OneTrust.ToggleInfoDisplay", Polarity::Manage),
    ("Cookiebot.submitCustomConsent.reject", Polarity::Reject),
    ("Cookiebot.withdraw", Polarity::Reject),
    ("Cookiebot.show", Polarity::Manage),
    ("Didomi.setUserDisagreeToAll", Polarity::Reject),
    ("Didomi.setUserAgreeToAll", Polarity::Accept),
    ("Didomi.preferences.show", Polarity::Manage),
    ("UC_UI.denyAllConsents", Polarity::Reject),
    ("UC_UI.acceptAllConsents", Polarity::Accept),
    ("UC_UI.showSecondLayer", Polarity::Manage),
    ("__ucCmp.denyAllConsents", Polarity::Reject),
    ("__ucCmp.acceptAllConsents", Polarity::Accept),
    ("_iub.cs.api.rejectAll", Polarity::Reject),
    ("_sp_.gdpr.loadPrivacyManagerModal", Polarity::Manage),
];

/// Phrases that decline (checked first: "do not accept" declines).
const REJECT_WORDS: &[&str] = &[
    "reject",
    "decline",
    "deny",
    "refuse",
    "disagree",
    "do not accept",
    "don't accept",
    "don't allow",
    "do not allow",
    "necessary only",
    "only necessary",
    "essential only",
    "only essential",
    "continue without",
    "ablehnen",
    "nur notwendige",
    "nur erforderliche",
    "refuser",
    "tout refuser",
    "continuer sans accepter",
    "rechazar",
    "rifiuta",
    "weigeren",
    "odrzuć",
];

/// Phrases that agree.
const ACCEPT_WORDS: &[&str] = &[
    "accept",
    "agree",
    "allow",
    "consent",
    "got it",
    "akzeptieren",
    "zustimmen",
    "einverstanden",
    "alle erlauben",
    "accepter",
    "j'accepte",
    "aceptar",
    "accetta",
    "accepteren",
    "akceptuj",
];

/// Checks every rule; the first violation, naming the rule and the field.
pub fn check(p: &Phenomenon) -> Result<(), CallError> {
    let fp = &p.fingerprint;
    if fp.signals.is_empty() || fp.signals.len() > MAX_SIGNALS {
        return Err(shape(
            "phenomenon.fingerprint.signals",
            &format!("a fingerprint holds 1 to {MAX_SIGNALS} signals, got {}", fp.signals.len()),
        ));
    }
    if !(0.0..=1.0).contains(&fp.min_confidence) {
        return Err(shape("phenomenon.fingerprint.minConfidence", "minConfidence must be between 0 and 1"));
    }
    let book = &p.playbook;
    for (name, n) in [("actions", book.actions.len()), ("verify", book.verify.len())] {
        if n > MAX_STEPS {
            return Err(shape(
                &format!("phenomenon.playbook.{name}"),
                &format!("a playbook holds at most {MAX_STEPS} {name}, got {n}"),
            ));
        }
    }
    for (i, a) in book.actions.iter().enumerate() {
        action(p, i, a)?;
    }
    for (i, v) in book.verify.iter().enumerate() {
        let field = format!("phenomenon.playbook.verify[{i}]");
        if v.kind == VerifyType::Absent && v.selector.as_deref().is_none_or(|s| s.trim().is_empty()) {
            return Err(shape(
                &format!("{field}.selector"),
                "an `absent` check names the element that must be gone",
            ));
        }
        if let Some(s) = &v.selector
            && let Some(why) = broad(s)
        {
            return Err(rule(
                "pks.poison.broad_selector",
                &format!("{field}.selector"),
                &format!("`{s}` {why}"),
            ));
        }
        if v.threshold.is_some_and(|t| !(0.0..=1.0).contains(&t)) {
            return Err(shape(&format!("{field}.threshold"), "threshold must be between 0 and 1"));
        }
    }
    Ok(())
}

fn action(p: &Phenomenon, i: usize, a: &Action) -> Result<(), CallError> {
    let field = format!("phenomenon.playbook.actions[{i}]");
    if !a.fallback_selectors.is_empty() && !matches!(a.kind, ActionType::Click | ActionType::Type) {
        return Err(shape(
            &format!("{field}.fallbackSelectors"),
            "only click and type actions take fallback selectors",
        ));
    }
    if a.fallback_selectors.len() > MAX_FALLBACKS {
        return Err(shape(
            &format!("{field}.fallbackSelectors"),
            &format!("at most {MAX_FALLBACKS} fallback selectors, got {}", a.fallback_selectors.len()),
        ));
    }
    let Some(polarity) = a.declared_polarity else {
        if a.kind.mutates() {
            return Err(rule(
                "pks.poison.missing_polarity",
                &format!("{field}.declaredPolarity"),
                "every action that changes the page declares its polarity (reject, accept, manage, navigate, noop)",
            ));
        }
        return Ok(());
    };
    for (j, s) in a.selector.iter().chain(&a.fallback_selectors).enumerate() {
        let which = if j == 0 && a.selector.is_some() {
            format!("{field}.selector")
        } else {
            format!("{field}.fallbackSelectors[{}]", j - usize::from(a.selector.is_some()))
        };
        if let Some(why) = broad(s) {
            return Err(rule("pks.poison.broad_selector", &which, &format!("`{s}` {why}")));
        }
    }
    if let Some(text) = &a.target_visible_text {
        let says = reads_as(text);
        let clash = match (polarity, says) {
            (Polarity::Accept, Some(Polarity::Reject)) => true,
            (Polarity::Accept, _) => false,
            (_, Some(Polarity::Accept)) => true,
            _ => false,
        };
        if clash {
            return Err(rule(
                "pks.poison.text_polarity",
                &format!("{field}.targetVisibleText"),
                &format!(
                    "a `{}` action cannot target an element labelled \"{text}\"",
                    polarity_name(polarity)
                ),
            ));
        }
    }
    if let Some(call) = &a.vendor_api_call {
        match VENDOR_API_ALLOWLIST.iter().find(|(name, _)| name == call) {
            None => {
                return Err(rule(
                    "pks.poison.vendor_api",
                    &format!("{field}.vendorApiCall"),
                    &format!(
                        "`{call}` is not an allowed vendor API call; allowed: {}",
                        VENDOR_API_ALLOWLIST.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            Some((_, means)) if *means != polarity => {
                return Err(rule(
                    "pks.poison.vendor_api",
                    &format!("{field}.vendorApiCall"),
                    &format!(
                        "`{call}` means {}, but the action declares {}",
                        polarity_name(*means),
                        polarity_name(polarity)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    // Consent actions stay on the consent surface unless they say otherwise.
    if p.kind == super::model::Kind::ConsentCmp
        && a.max_scope.is_some_and(|m| m == MaxScope::ScopedToTopFrame)
    {
        return Err(rule(
            "pks.poison.max_scope",
            &format!("{field}.maxScope"),
            "a consent action may reach the consent surface or its frame, not the whole page",
        ));
    }
    Ok(())
}

/// What visible text says: declines, agrees, or neither.
pub fn reads_as(text: &str) -> Option<Polarity> {
    let t = text.to_lowercase();
    if REJECT_WORDS.iter().any(|w| t.contains(w)) {
        Some(Polarity::Reject)
    } else if ACCEPT_WORDS.iter().any(|w| t.contains(w)) {
        Some(Polarity::Accept)
    } else {
        None
    }
}

/// Why `sel` is too broad to store, or `None` when it is exact.
pub fn broad(sel: &str) -> Option<&'static str> {
    for alt in nova_shared::selector::alternatives(sel) {
        if alt.is_empty() {
            return Some("has an empty alternative");
        }
        // Attribute selectors apart, a `*` is the universal selector.
        let mut outside = String::new();
        let mut depth = 0;
        for c in alt.chars() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ if depth == 0 => outside.push(c),
                _ => {}
            }
        }
        if outside.contains('*') {
            return Some("uses the universal selector `*`");
        }
        let lower = alt.to_lowercase().replace(' ', "");
        for partial in ["[class*=", "[class^=", "[class$=", "[id*=", "[id^=", "[id$="] {
            if lower.contains(partial) {
                return Some("matches a class or id in part");
            }
        }
        // The element itself: the last compound, after the last combinator outside brackets.
        let last = last_compound(alt);
        let attrs: Vec<&str> = last.split('[').skip(1).collect();
        let named = last.contains('#')
            || last.contains('.')
            || attrs.iter().any(|a| !a.trim_start().to_lowercase().starts_with("role"));
        if !named {
            return Some("names the element by a tag or a role only (such as `[role=dialog]`)");
        }
    }
    None
}

/// The last compound selector of `alt` (`button[aria-label="Reject all"]` of
/// `#cmp > button[aria-label="Reject all"]`).
fn last_compound(alt: &str) -> &str {
    let (mut depth, mut quote, mut start) = (0, None, 0);
    for (i, c) in alt.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            (_, Some(_)) => {}
            ('[' | '(', None) => depth += 1,
            (']' | ')', None) => depth -= 1,
            (' ' | '>' | '+' | '~', None) if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    &alt[start..]
}

fn polarity_name(p: Polarity) -> &'static str {
    match p {
        Polarity::Reject => "reject",
        Polarity::Accept => "accept",
        Polarity::Manage => "manage",
        Polarity::Navigate => "navigate",
        Polarity::Noop => "noop",
    }
}

fn rule(name: &str, field: &str, why: &str) -> CallError {
    CallError::invalid(field, format!("{name}: {field}: {why}"))
}

fn shape(field: &str, why: &str) -> CallError {
    rule("pks.poison.shape", field, why)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn phenomenon(action: serde_json::Value) -> Phenomenon {
        serde_json::from_value(json!({
            "type": "consent_cmp",
            "fingerprint": {"signals": [{"kind": "dom", "match": "#onetrust-banner-sdk"}], "minConfidence": 0.6},
            "playbook": {"policy": "reject_preferred", "actions": [action],
                         "verify": [{"type": "absent", "selector": "#onetrust-banner-sdk", "timeoutMs": 3000}]}
        }))
        .expect("phenomenon")
    }

    fn refused(action: serde_json::Value) -> String {
        check(&phenomenon(action)).expect_err("refused").to_string()
    }

    #[test]
    fn a_sound_decline_passes() {
        let ok = json!({"type": "click", "selector": "#onetrust-reject-all-handler", "declaredPolarity": "reject",
                        "targetVisibleText": "Reject All", "maxScope": "scoped_to_cmp_surface",
                        "vendorApiCall": "OneTrust.RejectAll", "fallbackSelectors": ["button[aria-label=\"Reject all\"]"]});
        assert!(check(&phenomenon(ok)).is_ok());
        let wait = json!({"type": "wait", "timeoutMs": 200});
        assert!(check(&phenomenon(wait)).is_ok(), "waiting changes nothing and needs no polarity");
    }

    #[test]
    fn every_rule_is_named_when_broken() {
        let e = refused(json!({"type": "click", "selector": "#reject"}));
        assert!(e.contains("pks.poison.missing_polarity") && e.contains("declaredPolarity"), "{e}");
        for sel in [
            "*",
            "* span",
            "div > *",
            "[class*=reject]",
            "div[id^=cmp]",
            "[role=dialog]",
            "button",
            "[role=\"dialog\"] button",
        ] {
            let e = refused(json!({"type": "click", "selector": sel, "declaredPolarity": "reject"}));
            assert!(
                e.contains("pks.poison.broad_selector") && e.contains("actions[0].selector"),
                "{sel}: {e}"
            );
        }
        let e = refused(
            json!({"type": "click", "selector": "#x", "fallbackSelectors": ["#y", "*"], "declaredPolarity": "reject"}),
        );
        assert!(e.contains("fallbackSelectors[1]"), "{e}");
        let e = refused(
            json!({"type": "click", "selector": "#x", "declaredPolarity": "reject", "targetVisibleText": "Accept all"}),
        );
        assert!(e.contains("pks.poison.text_polarity") && e.contains("targetVisibleText"), "{e}");
        let e = refused(
            json!({"type": "click", "selector": "#x", "declaredPolarity": "manage", "targetVisibleText": "Alle akzeptieren"}),
        );
        assert!(e.contains("pks.poison.text_polarity"), "{e}");
        let e = refused(
            json!({"type": "click", "selector": "#x", "declaredPolarity": "accept", "targetVisibleText": "Reject all"}),
        );
        assert!(e.contains("pks.poison.text_polarity"), "{e}");
        let e = refused(
            json!({"type": "click", "selector": "#x", "declaredPolarity": "reject", "vendorApiCall": "OneTrust.AllowAll"}),
        );
        assert!(e.contains("pks.poison.vendor_api") && e.contains("means accept"), "{e}");
        let e = refused(
            json!({"type": "click", "selector": "#x", "declaredPolarity": "reject", "vendorApiCall": "window.eval"}),
        );
        assert!(e.contains("pks.poison.vendor_api") && e.contains("not an allowed"), "{e}");
        let e = refused(
            json!({"type": "click", "selector": "#x", "declaredPolarity": "reject", "maxScope": "scoped_to_top_frame"}),
        );
        assert!(e.contains("pks.poison.max_scope"), "{e}");
        let e = refused(
            json!({"type": "press_key", "key": "Escape", "declaredPolarity": "noop", "fallbackSelectors": ["#a"]}),
        );
        assert!(e.contains("pks.poison.shape"), "{e}");
        let six: Vec<String> = (0..6).map(|i| format!("#f{i}")).collect();
        let e = refused(
            json!({"type": "click", "selector": "#x", "declaredPolarity": "reject", "fallbackSelectors": six}),
        );
        assert!(e.contains("at most 5"), "{e}");
    }

    #[test]
    fn declining_text_is_told_from_agreeing_text() {
        for t in [
            "Reject all",
            "Nur notwendige Cookies",
            "Do not accept",
            "Continue without accepting",
            "Tout refuser",
        ] {
            assert_eq!(reads_as(t), Some(Polarity::Reject), "{t}");
        }
        for t in ["Accept all", "I agree", "Alle akzeptieren", "Allow cookies", "Got it"] {
            assert_eq!(reads_as(t), Some(Polarity::Accept), "{t}");
        }
        assert_eq!(reads_as("Cookie settings"), None);
        assert_eq!(broad("#cmp > button[aria-label=\"Reject all\"]"), None);
        assert_eq!(broad(".banner .reject"), None);
        assert!(broad("div.banner button").is_some(), "any button in the banner is not one control");
        assert_eq!(last_compound("#a > b[x=\"1 2\"]"), "b[x=\"1 2\"]");
    }
}
