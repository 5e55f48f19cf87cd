//! `identityOverlayWarning`: visible sign-in (SSO), payment, consent and modal sign-in overlays.
//!
//! Candidates come from one query (dialog semantics, consent platforms, cookie banners), provider
//! frames in fixed or large layers, and fixed layers under a few viewport points; the outermost
//! of overlapping candidates is classified by its strongest evidence: a provider origin in a
//! frame, form or link (0.9), a consent platform (0.9), card fields (0.8), a "Sign in with"
//! control (0.7), a password field in a modal dialog (0.7), a cookie banner (0.6).

use nova_shared::page::{IdentityOverlayWarning, OverlayItem};
use web_sys::{Document, Element};

use super::query::{CONTROLS, PASSWORD, all, all_in, first_in};
use crate::dom;
use crate::dom::clip;

/// Host (lower case) and path of an absolute http(s) or protocol-relative URL.
pub fn host_path(url: &str) -> Option<(String, String)> {
    let lower = url.trim().to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
        .or_else(|| lower.strip_prefix("//"))?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = rest[..end].rsplit('@').next()?.split(':').next()?;
    if host.is_empty() {
        return None;
    }
    Some((host.to_owned(), rest[end..].to_owned()))
}

/// What a known provider runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// Sign-in.
    Sso,
    /// Payment.
    Payment,
}

/// Known sign-in and payment origins: host (itself or any subdomain), a path prefix (empty:
/// any path), the provider's name, and what it does.
const PROVIDERS: &[(&str, &str, &str, ProviderKind)] = &[
    ("accounts.google.com", "", "Google", ProviderKind::Sso),
    ("login.microsoftonline.com", "", "Microsoft", ProviderKind::Sso),
    ("login.microsoft.com", "", "Microsoft", ProviderKind::Sso),
    ("login.live.com", "", "Microsoft", ProviderKind::Sso),
    ("appleid.apple.com", "", "Apple", ProviderKind::Sso),
    ("okta.com", "", "Okta", ProviderKind::Sso),
    ("oktapreview.com", "", "Okta", ProviderKind::Sso),
    ("auth0.com", "", "Auth0", ProviderKind::Sso),
    ("onelogin.com", "", "OneLogin", ProviderKind::Sso),
    ("github.com", "/login", "GitHub", ProviderKind::Sso),
    ("facebook.com", "/login", "Facebook", ProviderKind::Sso),
    ("facebook.com", "/dialog/oauth", "Facebook", ProviderKind::Sso),
    ("facebook.com", "/v", "Facebook", ProviderKind::Sso),
    ("api.twitter.com", "/oauth", "X", ProviderKind::Sso),
    ("twitter.com", "/i/oauth2", "X", ProviderKind::Sso),
    ("x.com", "/i/oauth2", "X", ProviderKind::Sso),
    ("linkedin.com", "/oauth", "LinkedIn", ProviderKind::Sso),
    ("login.yahoo.com", "", "Yahoo", ProviderKind::Sso),
    ("amazon.com", "/ap/oa", "Amazon", ProviderKind::Sso),
    ("js.stripe.com", "", "Stripe", ProviderKind::Payment),
    ("checkout.stripe.com", "", "Stripe", ProviderKind::Payment),
    ("hooks.stripe.com", "", "Stripe", ProviderKind::Payment),
    ("paypal.com", "", "PayPal", ProviderKind::Payment),
    ("pay.google.com", "", "Google Pay", ProviderKind::Payment),
    ("adyen.com", "", "Adyen", ProviderKind::Payment),
    ("braintreegateway.com", "", "Braintree", ProviderKind::Payment),
    ("braintree-api.com", "", "Braintree", ProviderKind::Payment),
    ("klarna.com", "", "Klarna", ProviderKind::Payment),
    ("squareup.com", "", "Square", ProviderKind::Payment),
    ("squarecdn.com", "", "Square", ProviderKind::Payment),
    ("checkout.com", "", "Checkout.com", ProviderKind::Payment),
];

/// A sign-in or payment provider the URL points at: (kind, name, origin).
pub fn provider_of(url: &str) -> Option<(ProviderKind, &'static str, String)> {
    let (host, path) = host_path(url)?;
    let (_, _, name, kind) = PROVIDERS.iter().find(|(h, p, _, _)| {
        (host == *h || host.ends_with(&format!(".{h}")))
            && (p.is_empty() || path.starts_with(p))
            // Facebook's versioned endpoints: only its OAuth dialog.
            && (*p != "/v" || path.contains("/dialog/oauth"))
    })?;
    Some((*kind, name, format!("https://{host}")))
}

/// Sign-in providers named on buttons ("Continue with Google"), with their sign-in origin.
const SSO_NAMES: &[(&str, &str, &str)] = &[
    ("google", "Google", "https://accounts.google.com"),
    ("apple", "Apple", "https://appleid.apple.com"),
    ("microsoft", "Microsoft", "https://login.microsoftonline.com"),
    ("facebook", "Facebook", "https://www.facebook.com"),
    ("github", "GitHub", "https://github.com"),
    ("linkedin", "LinkedIn", "https://www.linkedin.com"),
    ("okta", "Okta", "https://okta.com"),
    ("amazon", "Amazon", "https://www.amazon.com"),
    ("twitter", "X", "https://x.com"),
    ("x", "X", "https://x.com"),
];
const SSO_LEADS: &[&str] = &[
    "sign in with",
    "sign up with",
    "log in with",
    "login with",
    "continue with",
    "anmelden mit",
    "weiter mit",
    "fortfahren mit",
    "se connecter avec",
    "continuer avec",
];

/// The provider a control's text offers to sign in with (`Sign in with Google`).
pub fn sso_text(text: &str) -> Option<(&'static str, &'static str)> {
    let t = dom::collapse(&text.to_lowercase());
    SSO_LEADS.iter().find_map(|lead| {
        let after = t.split_once(lead)?.1.trim_start();
        let word: String = after.chars().take_while(|c| c.is_alphanumeric()).collect();
        SSO_NAMES.iter().find(|(w, _, _)| *w == word).map(|(_, name, origin)| (*name, *origin))
    })
}

fn position(el: &Element) -> String {
    el.owner_document()
        .and_then(|d| d.default_view())
        .and_then(|v| v.get_computed_style(el).ok().flatten())
        .and_then(|s| s.get_property_value("position").ok())
        .unwrap_or_default()
}

/// Whether the element shows something: its own box, or (for a host whose box is empty, as
/// consent platforms mounting into shadow roots have) a visible element in its shadow root.
fn shows(el: &Element) -> bool {
    if dom::is_visible(el) {
        return true;
    }
    el.shadow_root().is_some_and(|s| {
        s.query_selector_all("div, dialog, section, button")
            .map(|l| {
                (0..l.length().min(50))
                    .filter_map(|i| l.item(i))
                    .filter_map(|n| dom::as_element(&n).cloned())
                    .any(|e| dom::is_visible(&e))
            })
            .unwrap_or(false)
    })
}

fn page_origin(doc: &Document) -> String {
    doc.location().and_then(|l| l.origin().ok()).unwrap_or_default()
}

/// Dialog semantics.
const DIALOGS: &str = "dialog[open], [role=\"dialog\"], [role=\"alertdialog\"], [aria-modal=\"true\"]";
/// Consent management platforms by their root element.
const CMPS: &[(&str, &str)] = &[
    ("#onetrust-banner-sdk, #onetrust-pc-sdk", "OneTrust"),
    ("#CybotCookiebotDialog", "Cookiebot"),
    ("#didomi-host, #didomi-notice", "Didomi"),
    ("#usercentrics-root, #usercentrics-cmp-ui", "Usercentrics"),
    (".fc-consent-root", "Google Funding Choices"),
    ("#qc-cmp2-container, .qc-cmp2-container", "Quantcast"),
    ("#truste-consent-track, #truste-consent-content", "TrustArc"),
    ("[id^=\"sp_message_container\"]", "Sourcepoint"),
    ("#cmpbox", "consentmanager"),
    ("#iubenda-cs-banner", "iubenda"),
];
/// Site-made consent and cookie banners.
const CONSENT: &str = "[id*=\"consent\" i], [class*=\"consent\" i], [id*=\"cookie\" i], [class*=\"cookie-banner\" i], [class*=\"cookie-consent\" i], [class*=\"cookiebanner\" i], [aria-label*=\"cookie\" i]";
/// Buttons that answer a banner (a row of footer links is not a banner).
const BUTTONS: &str = "button, [role=\"button\"], input[type=\"button\"], input[type=\"submit\"]";
/// What a page's own layout holds and an overlay does not.
const PAGE_FRAME: &str = "main, [role=\"main\"], nav, [role=\"navigation\"]";
/// Fixed layers at least this share of the viewport are overlays.
const OVERLAY_AREA: f64 = 0.3;
/// Generic banners with more text than this are page sections, not banners.
const BANNER_MAX_TEXT: usize = 3000;

/// Why an element is an overlay candidate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    Dialog,
    Cmp(&'static str),
    Consent,
    Fixed,
    Iframe,
}

struct Candidate {
    el: Element,
    why: Origin,
    /// Dialog semantics on it or on a merged inner candidate.
    dialog: bool,
}

/// The fixed or sticky layer under a viewport point (outermost below `body`), if it is large
/// or spans the viewport's width (a banner).
fn fixed_layer_at(doc: &Document, x: f32, y: f32, vw: f64, vh: f64) -> Option<Element> {
    let mut el = doc.element_from_point(x, y);
    let mut layer = None;
    while let Some(e) = el {
        if matches!(dom::tag(&e).as_str(), "body" | "html") {
            break;
        }
        if matches!(position(&e).as_str(), "fixed" | "sticky") {
            layer = Some(e.clone());
        }
        el = e.parent_element();
    }
    let layer = layer?;
    let r = layer.get_bounding_client_rect();
    let area = r.width().min(vw) * r.height().min(vh);
    (area >= OVERLAY_AREA * vw * vh || r.width() >= 0.6 * vw).then_some(layer)
}

/// Whether a provider iframe sits in an overlay: itself or an ancestor fixed, or large.
fn iframe_overlays(frame: &Element, vw: f64, vh: f64) -> bool {
    let r = frame.get_bounding_client_rect();
    if r.width() * r.height() >= OVERLAY_AREA * vw * vh {
        return true;
    }
    let mut el = Some(frame.clone());
    while let Some(e) = el {
        if matches!(dom::tag(&e).as_str(), "body" | "html") {
            return false;
        }
        if position(&e) == "fixed" {
            return true;
        }
        el = e.parent_element();
    }
    false
}

fn gather(doc: &Document, vw: f64, vh: f64) -> Vec<Candidate> {
    let mut found: Vec<(Element, Origin)> = Vec::new();
    // One pass over the document for every selector; each match is sorted out after.
    let cmps: Vec<&str> = CMPS.iter().map(|(css, _)| *css).collect();
    for el in all(doc, &format!("{DIALOGS}, {}, {CONSENT}", cmps.join(", "))) {
        let why = match CMPS.iter().find(|(css, _)| el.matches(css).unwrap_or(false)) {
            Some((_, name)) => Origin::Cmp(name),
            None if el.matches(DIALOGS).unwrap_or(false) => Origin::Dialog,
            None => Origin::Consent,
        };
        found.push((el, why));
    }
    for frame in all(doc, "iframe[src]") {
        let src = frame.get_attribute("src").unwrap_or_default();
        if provider_of(&src).is_some() && iframe_overlays(&frame, vw, vh) {
            found.push((frame, Origin::Iframe));
        }
    }
    let (w, h) = (vw as f32, vh as f32);
    for (x, y) in [(0.5, 0.5), (0.5, 0.25), (0.5, 0.75)] {
        if let Some(layer) = fixed_layer_at(doc, w * x, h * y, vw, vh) {
            found.push((layer, Origin::Fixed));
        }
    }
    if let Some(layer) = fixed_layer_at(doc, w * 0.5, (h - 12.0).max(0.0), vw, vh) {
        found.push((layer, Origin::Fixed));
    }

    let mut out: Vec<Candidate> = Vec::new();
    for (el, why) in found {
        if matches!(dom::tag(&el).as_str(), "body" | "html" | "main") || !shows(&el) {
            continue;
        }
        if why == Origin::Consent {
            // A generic match must look like a banner: short, with a control to answer it.
            let text = el.text_content().unwrap_or_default();
            if text.trim().is_empty() || text.len() > BANNER_MAX_TEXT || first_in(&el, BUTTONS).is_none() {
                continue;
            }
        }
        // A fixed app shell or sticky header holds the page itself.
        if why == Origin::Fixed && first_in(&el, PAGE_FRAME).is_some() {
            continue;
        }
        let dialog = why == Origin::Dialog;
        if let Some(outer) = out.iter_mut().find(|c| c.el == el || c.el.contains(Some(&el))) {
            outer.dialog |= dialog;
            // A named platform is better evidence than the generic shape that found it first.
            if matches!(why, Origin::Cmp(_)) && matches!(outer.why, Origin::Consent | Origin::Fixed) {
                outer.why = why;
            }
            continue;
        }
        let inner: Vec<usize> =
            out.iter().enumerate().filter(|(_, c)| el.contains(Some(&c.el))).map(|(i, _)| i).collect();
        let mut merged = Candidate { el, why, dialog };
        for i in inner.into_iter().rev() {
            let c = out.remove(i);
            merged.dialog |= c.dialog;
            if matches!(c.why, Origin::Cmp(_) | Origin::Iframe) || merged.why == Origin::Fixed {
                merged.why = c.why;
            }
        }
        out.push(merged);
    }
    out
}

/// The strongest evidence in an overlay.
fn classify(c: &Candidate, origin: &str) -> Option<OverlayItem> {
    let item = |kind: &str, provider: &str, origin: &str, confidence: f64, evidence: String| OverlayItem {
        kind: kind.into(),
        provider: provider.into(),
        origin: origin.into(),
        confidence,
        blocking: false,
        evidence,
    };
    let kind_of = |k: ProviderKind| match k {
        ProviderKind::Sso => "sso",
        ProviderKind::Payment => "payment",
    };
    // 1. A known provider's origin: the overlay itself, or a frame, form or link inside it.
    let mut sources: Vec<(String, &str)> = Vec::new();
    if let Some(src) = c.el.get_attribute("src").filter(|_| dom::tag(&c.el) == "iframe") {
        sources.push((src, "iframe src"));
    }
    for el in all_in(&c.el, "iframe[src], form[action], a[href]") {
        let (attr, what) = match dom::tag(&el).as_str() {
            "iframe" => ("src", "iframe src"),
            "form" => ("action", "form action"),
            _ => ("href", "link"),
        };
        if let Some(v) = el.get_attribute(attr) {
            sources.push((v, what));
        }
    }
    for (url, what) in &sources {
        if let Some((kind, name, provider_origin)) = provider_of(url) {
            let (host, path) = host_path(url).unwrap_or_default();
            let path = path.split(['?', '#']).next().unwrap_or_default();
            let evidence = format!("{what} {}", clip(&format!("{host}{path}"), 60));
            return Some(item(kind_of(kind), name, &provider_origin, 0.9, evidence));
        }
    }
    // 2. A consent platform by its root.
    if let Origin::Cmp(name) = c.why {
        return Some(item("consent", name, origin, 0.9, format!("{name} consent banner")));
    }
    let modal = c.dialog || c.why == Origin::Fixed;
    // 3. Card fields.
    if let Some(cc) = all_in(&c.el, "input[autocomplete*=\"cc-\" i]").into_iter().find(|i| {
        dom::is_visible(i)
            && i.get_attribute("autocomplete")
                .is_some_and(|a| a.contains("cc-number") || a.contains("cc-csc"))
    }) {
        let ac = cc.get_attribute("autocomplete").unwrap_or_default();
        return Some(item("payment", "site", origin, 0.8, format!("input autocomplete={}", clip(&ac, 30))));
    }
    // 4. A "Sign in with ..." control in a modal layer.
    if modal {
        for control in all_in(&c.el, CONTROLS) {
            let text = dom::name(&control);
            if let Some((name, provider_origin)) = sso_text(&text)
                && dom::is_visible(&control)
            {
                let evidence = format!("{} \"{}\"", dom::role(&control), clip(&text, 40));
                return Some(item("sso", name, provider_origin, 0.7, evidence));
            }
        }
    }
    // 5. A modal sign-in dialog of the site's own.
    if c.dialog && all_in(&c.el, PASSWORD).iter().any(dom::is_visible) {
        return Some(item("identity", "site", origin, 0.7, "password field in a modal dialog".into()));
    }
    // 6. A site-made consent or cookie banner.
    let text = c.el.text_content().unwrap_or_default().to_lowercase();
    let about_consent = text.contains("cookie") || text.contains("consent") || text.contains("einwillig");
    if (c.why == Origin::Consent || (modal && about_consent)) && first_in(&c.el, BUTTONS).is_some() {
        return Some(item("consent", "site", origin, 0.6, "cookie or consent banner".into()));
    }
    None
}

/// Whether an overlay blocks the page: `aria-modal`, a modal `<dialog>`, or it covers the
/// viewport centre.
fn blocking(c: &Candidate, doc: &Document, vw: f64, vh: f64) -> bool {
    for css in ["[aria-modal=\"true\" i]", "dialog:modal"] {
        if c.el.matches(css).unwrap_or(false) || first_in(&c.el, css).is_some() {
            return true;
        }
    }
    doc.element_from_point((vw / 2.0) as f32, (vh / 2.0) as f32).is_some_and(|hit| c.el.contains(Some(&hit)))
}

/// `identityOverlayWarning`: visible sign-in, payment, consent and modal sign-in overlays.
pub fn identity_overlays(doc: &Document, vw: f64, vh: f64) -> Option<IdentityOverlayWarning> {
    let origin = page_origin(doc);
    let mut items: Vec<OverlayItem> = gather(doc, vw, vh)
        .iter()
        .filter_map(|c| {
            classify(c, &origin).map(|mut item| {
                item.blocking = blocking(c, doc, vw, vh);
                item
            })
        })
        .collect();
    if items.is_empty() {
        return None;
    }
    let rank = |k: &str| match k {
        "payment" => 0,
        "sso" => 1,
        "identity" => 2,
        _ => 3,
    };
    items.sort_by(|a, b| {
        rank(&a.kind)
            .cmp(&rank(&b.kind))
            .then(b.confidence.partial_cmp(&a.confidence).unwrap_or(std::cmp::Ordering::Equal))
    });
    let ask = items.iter().any(|i| i.kind != "consent");
    let (action, message) = if ask {
        (
            "ask_user",
            "A sign-in, payment or identity overlay is showing: it is the person's to complete. Ask them (nova.permission_prompt) before acting on this page; safety.identity_overlay holds clicks and typing until a perceive no longer sees it.",
        )
    } else {
        (
            "dismiss_or_ask",
            "A consent banner is showing: decline it with nova.dismiss_blockers (it never accepts unless allowed) or ask the person.",
        )
    };
    Some(IdentityOverlayWarning { items, recommended_action: action.into(), message: message.into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_origins_are_matched_by_host_and_path() {
        let g = provider_of("https://accounts.google.com/o/oauth2/auth?client_id=1").expect("google");
        assert_eq!((g.0, g.1, g.2.as_str()), (ProviderKind::Sso, "Google", "https://accounts.google.com"));
        assert_eq!(provider_of("https://acme.okta.com/login").map(|p| p.1), Some("Okta"));
        assert_eq!(
            provider_of("//js.stripe.com/v3/elements-inner-card.html").map(|p| p.0),
            Some(ProviderKind::Payment)
        );
        assert_eq!(provider_of("https://github.com/login/oauth/authorize").map(|p| p.1), Some("GitHub"));
        assert_eq!(provider_of("https://github.com/acme/repo"), None, "GitHub itself is not a sign-in");
        assert_eq!(
            provider_of("https://www.facebook.com/v18.0/dialog/oauth?x").map(|p| p.1),
            Some("Facebook")
        );
        assert_eq!(provider_of("https://www.facebook.com/video/123"), None);
        assert_eq!(provider_of("https://notaccounts.google.com.evil.test/"), None);
        assert_eq!(provider_of("https://evilokta.com/"), None, "a suffix must start at a dot");
        assert_eq!(provider_of("/accounts.google.com"), None, "relative URLs are the page's own");
        assert_eq!(
            host_path("HTTPS://user@Login.Live.com:443/x?y"),
            Some(("login.live.com".into(), "/x?y".into()))
        );
    }

    #[test]
    fn sign_in_buttons_name_their_provider() {
        assert_eq!(sso_text("Continue with Google"), Some(("Google", "https://accounts.google.com")));
        assert_eq!(sso_text("  Sign in with  Apple "), Some(("Apple", "https://appleid.apple.com")));
        assert_eq!(sso_text("Mit Google anmelden"), None);
        assert_eq!(
            sso_text("Anmelden mit Microsoft"),
            Some(("Microsoft", "https://login.microsoftonline.com"))
        );
        assert_eq!(sso_text("Continue with email"), None);
        assert_eq!(sso_text("Continue with Googlers"), None);
    }
}
