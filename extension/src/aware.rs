//! Awareness signals (AAG seed, agent-facing fields): what on a page belongs to the person or
//! happens outside the page DOM, where MCP tools cannot see it.
//!
//! - Overlays: sign-in (SSO), payment, consent and modal sign-in dialogs
//!   (`identityOverlayWarning`), which feed the `safety.identity_overlay` gate on the host.
//! - Fields the browser's password manager or autofill decorates (`autofillWarning`,
//!   `autofillPopupWarning`).
//! - Native dialogs: inline handlers calling alert / confirm / prompt and an inline
//!   `onbeforeunload` (`nativeDialogWarning`).
//! - Front-end frameworks by their DOM markers (`frameworkHints`).
//! - Clicks that would open a native file chooser (`fileInputRisk`).
//! - Page texts of bot challenges and geo blocks (for `pageState`).
//!
//! Perceive's cost is its one walk over the page; these checks add a few `querySelectorAll`
//! calls and a handful of point probes, never a second walk. A content script runs in an
//! isolated world and cannot see page JavaScript, so everything rests on the DOM. The rules
//! themselves (URLs, autocomplete tokens, phrases) are pure functions with native unit tests.

use nova_shared::page::{
    AutofillField, AutofillWarning, FrameworkHint, IdentityOverlayWarning, NativeDialogWarning, OverlayItem,
};
use nova_shared::selector::format_ref;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element};

use crate::dom;

// ---------------------------------------------------------------------------------------------
// Pure rules

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

/// Autocomplete tokens that only qualify the field name.
const AUTOCOMPLETE_QUALIFIERS: &[&str] =
    &["shipping", "billing", "home", "work", "mobile", "fax", "pager", "webauthn"];

/// The autofill role of a field, from its `autocomplete` attribute, type and name/id:
/// `login_identifier`, `password`, `new_password`, `one_time_code`, `cc_number`, `cc_exp`,
/// `cc_csc` or `address`. `with_password` says whether a password field shares its form, which
/// makes an e-mail or user-name field a login identifier.
pub fn autofill_role(
    autocomplete: &str,
    input_type: &str,
    name: &str,
    with_password: bool,
) -> Option<&'static str> {
    let ac = autocomplete.to_ascii_lowercase();
    let field = ac
        .split_whitespace()
        .rfind(|t| !t.starts_with("section-") && !AUTOCOMPLETE_QUALIFIERS.contains(t))
        .unwrap_or("");
    let by_autocomplete = match field {
        "current-password" => Some("password"),
        "new-password" => Some("new_password"),
        "username" => Some("login_identifier"),
        "email" | "tel" if with_password => Some("login_identifier"),
        "one-time-code" => Some("one_time_code"),
        "cc-number" => Some("cc_number"),
        "cc-exp" | "cc-exp-month" | "cc-exp-year" => Some("cc_exp"),
        "cc-csc" => Some("cc_csc"),
        "street-address" | "address-line1" | "address-line2" | "address-line3" | "address-level1"
        | "address-level2" | "address-level3" | "address-level4" | "postal-code" | "country"
        | "country-name" => Some("address"),
        _ => None,
    };
    if by_autocomplete.is_some() {
        return by_autocomplete;
    }
    let name = name.to_ascii_lowercase();
    let tokens: Vec<&str> =
        name.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()).collect();
    let joined: String = tokens.concat();
    let has = |words: &[&str]| words.iter().any(|w| joined.contains(w));
    let token = |words: &[&str]| tokens.iter().any(|t| words.contains(t));
    let ty = input_type.to_ascii_lowercase();
    if ty == "password" {
        return Some(if has(&["new", "confirm", "repeat", "retype"]) { "new_password" } else { "password" });
    }
    if !matches!(ty.as_str(), "text" | "email" | "tel" | "number" | "") {
        return None;
    }
    if has(&["cardnumber", "ccnumber", "ccnum", "cardnum", "creditcard"]) {
        Some("cc_number")
    } else if has(&["cvc", "cvv", "securitycode"]) || token(&["csc"]) {
        Some("cc_csc")
    } else if has(&["ccexp", "cardexp", "expiry", "expdate", "expiration"]) {
        Some("cc_exp")
    } else if has(&["onetimecode", "totp", "verificationcode", "mfacode", "2facode"]) || token(&["otp"]) {
        Some("one_time_code")
    } else if with_password
        && (ty == "email"
            || token(&["user", "username", "login", "email", "mail", "userid", "account", "identifier"]))
    {
        Some("login_identifier")
    } else {
        None
    }
}

/// Whether inline handler code calls `alert(`, `confirm(` or `prompt(` (as a function, not as
/// part of a longer name such as `myalert(`).
pub fn calls_native_dialog(code: &str) -> bool {
    let lower = code.to_ascii_lowercase();
    ["alert", "confirm", "prompt"].iter().any(|f| {
        lower.match_indices(f).any(|(i, _)| {
            let before = lower[..i].chars().next_back();
            let after = lower[i + f.len()..].trim_start();
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
                && after.starts_with('(')
        })
    })
}

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

// ---------------------------------------------------------------------------------------------
// DOM helpers

fn all(root: &Document, css: &str) -> Vec<Element> {
    root.query_selector_all(css)
        .map(|l| {
            (0..l.length()).filter_map(|i| l.item(i)).filter_map(|n| dom::as_element(&n).cloned()).collect()
        })
        .unwrap_or_default()
}

fn all_in(root: &Element, css: &str) -> Vec<Element> {
    root.query_selector_all(css)
        .map(|l| {
            (0..l.length()).filter_map(|i| l.item(i)).filter_map(|n| dom::as_element(&n).cloned()).collect()
        })
        .unwrap_or_default()
}

fn first_in(root: &Element, css: &str) -> Option<Element> {
    root.query_selector(css).ok().flatten()
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

fn ref_of(el: &Element) -> String {
    format_ref(dom::ref_for(el))
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

fn page_origin(doc: &Document) -> String {
    doc.location().and_then(|l| l.origin().ok()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Overlays

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
/// Controls inside an overlay.
const CONTROLS: &str = "button, [role=\"button\"], a[href], input[type=\"button\"], input[type=\"submit\"]";
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

// ---------------------------------------------------------------------------------------------
// Autofill

/// Inputs that can take typed text (other types never get autofill suggestions).
const TEXT_INPUTS: &str = "input:not([type=\"hidden\" i]):not([type=\"submit\" i]):not([type=\"button\" i]):not([type=\"checkbox\" i]):not([type=\"radio\" i]):not([type=\"file\" i]):not([type=\"image\" i]):not([type=\"reset\" i]):not([type=\"range\" i]):not([type=\"color\" i])";
/// Most fields listed in `autofillWarning`.
const MAX_AUTOFILL_FIELDS: usize = 20;

const PASSWORD: &str = "input[type=\"password\" i]";

/// Whether a password field shares the input's form (or dialog, or, outside both, the page:
/// `page_password`, computed once per perceive, else looked up).
fn with_password(el: &Element, page_password: Option<bool>) -> bool {
    match el.closest("form, [role=\"dialog\"], dialog").ok().flatten() {
        Some(scope) => first_in(&scope, PASSWORD).is_some(),
        None => page_password.unwrap_or_else(|| {
            el.owner_document().and_then(|d| d.query_selector(PASSWORD).ok().flatten()).is_some()
        }),
    }
}

/// The autofill role of an input matching [`TEXT_INPUTS`].
fn text_input_role(el: &Element, page_password: Option<bool>) -> Option<&'static str> {
    let attr = |a: &str| el.get_attribute(a).unwrap_or_default();
    let name = format!("{} {}", attr("name"), attr("id"));
    autofill_role(&attr("autocomplete"), &dom::input_type(el), &name, with_password(el, page_password))
}

/// The autofill role of an element, if it is an autofill-sensitive input.
pub fn field_role(el: &Element) -> Option<&'static str> {
    if !el.matches(TEXT_INPUTS).unwrap_or(false) {
        return None;
    }
    text_input_role(el, None)
}

/// `autofillWarning`: visible fields the browser may fill or decorate.
pub fn autofill_fields(doc: &Document) -> Option<AutofillWarning> {
    let inputs = all(doc, TEXT_INPUTS);
    if inputs.is_empty() {
        return None;
    }
    // Once per perceive: a page of many form-less inputs would otherwise search it per input.
    let page_password = Some(doc.query_selector(PASSWORD).ok().flatten().is_some());
    let fields: Vec<AutofillField> = inputs
        .iter()
        .filter_map(|el| text_input_role(el, page_password).map(|role| (el, role)))
        .filter(|(el, _)| dom::is_visible(el))
        .map(|(el, role)| AutofillField { selector: ref_of(el), autofill_field_role: role.into() })
        .take(MAX_AUTOFILL_FIELDS)
        .collect();
    (!fields.is_empty()).then(|| AutofillWarning {
        fields,
        message: "The browser's password manager or autofill may fill these fields or show suggestion popups next to them; popups are outside the page DOM and invisible to MCP tools, and autofilled values may stay unreadable to page scripts until the person interacts. Re-read fields after typing, press Escape if a popup covers the page, and never type credentials the person did not give you.".into(),
    })
}

/// `autofillPopupWarning` and `autofillFieldRole` for an input being clicked or typed into.
pub fn autofill_popup(el: &Element) -> Option<(String, &'static str)> {
    let role = field_role(el)?;
    Some((
        format!(
            "{} is a {role} field: the browser may have opened an autofill or password-manager suggestion popup next to it, outside the page DOM and invisible to MCP tools; it can cover what is below it. Press Escape or click elsewhere if the page seems covered, and re-read the value.",
            dom::describe(el)
        ),
        role,
    ))
}

// ---------------------------------------------------------------------------------------------
// Native dialogs

/// Inline handlers that run on clicks, typing and submits.
const HANDLERS: &[&str] = &[
    "onclick",
    "ondblclick",
    "onmousedown",
    "onmouseup",
    "onpointerdown",
    "onpointerup",
    "onsubmit",
    "onchange",
    "oninput",
    "onkeydown",
    "onkeyup",
    "onkeypress",
    "onfocus",
    "onblur",
];
/// Most element refs listed in the perceive warning.
const MAX_DIALOG_ELEMENTS: usize = 5;

/// Elements with any inline handler (rare on modern pages); the code is checked after.
fn handlers_selector() -> String {
    HANDLERS.iter().map(|h| format!("[{h}]")).collect::<Vec<_>>().join(", ")
}

/// The inline handler on `el` that opens a native dialog, as `onclick`.
fn dialog_handler(el: &Element) -> Option<&'static str> {
    HANDLERS.iter().copied().find(|h| el.get_attribute(h).is_some_and(|code| calls_native_dialog(&code)))
}

fn before_unload(doc: &Document) -> bool {
    doc.body().is_some_and(|b| b.get_attribute("onbeforeunload").is_some_and(|c| !c.trim().is_empty()))
}

/// `nativeDialogWarning` on perceive.
pub fn native_dialogs(doc: &Document) -> Option<NativeDialogWarning> {
    let elements: Vec<String> = all(doc, &handlers_selector())
        .iter()
        .filter(|el| dialog_handler(el).is_some() && dom::is_visible(el))
        .take(MAX_DIALOG_ELEMENTS)
        .map(ref_of)
        .collect();
    let before_unload = before_unload(doc);
    if elements.is_empty() && !before_unload {
        return None;
    }
    let mut message = String::new();
    if !elements.is_empty() {
        message.push_str("Inline handlers on these elements open alert / confirm / prompt. ");
    }
    if before_unload {
        message.push_str("The page has an inline onbeforeunload: leaving it may ask the person to confirm. ");
    }
    message.push_str("Native dialogs are answered by the person outside MCP visibility, and the page stops responding while one is open: ask the person, or take a path that avoids them.");
    Some(NativeDialogWarning { message, before_unload, elements })
}

/// `nativeDialogWarning` for an action on `el`: an inline dialog handler on it or an ancestor,
/// or (`link_leaves`) a link on a page with an inline `onbeforeunload`.
pub fn native_dialog_risk(el: &Element, link_leaves: bool) -> Option<String> {
    let mut cur = Some(el.clone());
    while let Some(e) = cur {
        if let Some(h) = dialog_handler(&e) {
            let whose = if &e == el { "its".to_owned() } else { format!("{}'s", dom::describe(&e)) };
            return Some(format!(
                "{whose} inline {h} handler calls alert / confirm / prompt: a native dialog may now be waiting for the person, outside MCP visibility; the page does not respond until it is answered"
            ));
        }
        cur = e.parent_element();
    }
    let doc = el.owner_document()?;
    (link_leaves && before_unload(&doc) && el.closest("a[href]").ok().flatten().is_some()).then(|| {
        "the page has an inline onbeforeunload and this link leaves it: a native \"Leave site?\" dialog may be waiting for the person, outside MCP visibility".to_owned()
    })
}

// ---------------------------------------------------------------------------------------------
// File inputs

/// How likely a click opens a native file chooser.
pub struct FileRisk {
    /// `high`: a file input or its label (refused); else `medium`.
    pub high: bool,
    /// Why.
    pub reason: String,
    /// A selector for the file input, for `nova.file_upload`.
    pub hint: String,
}

fn is_file_input(el: &Element) -> bool {
    dom::as_input(el).is_some() && dom::input_type(el) == "file"
}

/// A selector for `input` that works from the top document: `#id` or a `name` match when the
/// input lives there, else its ref (refs reach shadow roots and frames too).
pub fn upload_selector(input: &Element) -> String {
    let plain = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit() || c == '-')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let top = dom::document().ok();
    let in_top = top.as_ref().is_some_and(|d| {
        input.get_root_node().node_type() == web_sys::Node::DOCUMENT_NODE
            && input.owner_document().as_ref() == Some(d)
    });
    if in_top {
        let id = input.id();
        if plain(&id)
            && top
                .as_ref()
                .and_then(|d| d.query_selector_all(&format!("#{id}")).ok())
                .is_some_and(|l| l.length() == 1)
        {
            return format!("#{id}");
        }
        if let Some(name) = input.get_attribute("name").filter(|n| plain(n)) {
            let css = format!("input[type=\"file\"][name=\"{name}\"]");
            if top.as_ref().and_then(|d| d.query_selector_all(&css).ok()).is_some_and(|l| l.length() == 1) {
                return css;
            }
        }
    }
    ref_of(input)
}

/// Words on controls that stand in for a hidden file input.
const UPLOAD_WORDS: &[&str] =
    &["upload", "choose file", "select file", "browse", "attach", "hochladen", "datei auswählen", "importer"];
/// How far up a wrapper shared with a hidden file input may be.
const FILE_WRAPPER_DEPTH: usize = 3;

/// Whether clicking `el` may open a native file chooser: `high` for a file input or (a part
/// of) its label, `medium` for an element containing one, naming one in `aria-controls`, or a
/// button sharing a small wrapper with a hidden one.
pub fn file_input_risk(el: &Element) -> Option<FileRisk> {
    let what = dom::describe(el);
    if is_file_input(el) {
        return Some(FileRisk { high: true, reason: "is a file input".into(), hint: upload_selector(el) });
    }
    if let Some(label) = el.closest("label").ok().flatten() {
        let control = label.unchecked_ref::<web_sys::HtmlLabelElement>().control();
        if let Some(input) = control.map(Element::from).filter(is_file_input) {
            let reason = if &label == el {
                "is the label of a file input"
            } else {
                "is inside the label of a file input"
            };
            return Some(FileRisk { high: true, reason: reason.into(), hint: upload_selector(&input) });
        }
    }
    if let Some(input) = first_in(el, "input[type=\"file\" i]") {
        return Some(FileRisk {
            high: false,
            reason: format!("{what} contains a file input; the click may open a native file chooser"),
            hint: upload_selector(&input),
        });
    }
    let doc = el.owner_document()?;
    for id in el.get_attribute("aria-controls").unwrap_or_default().split_whitespace() {
        if let Some(input) = doc.get_element_by_id(id).filter(is_file_input) {
            return Some(FileRisk {
                high: false,
                reason: format!(
                    "{what} controls a file input (aria-controls); the click may open a native file chooser"
                ),
                hint: upload_selector(&input),
            });
        }
    }
    let button_like = el.matches(CONTROLS).unwrap_or(false);
    let name = dom::name(el).to_lowercase();
    let upload_named = UPLOAD_WORDS.iter().any(|w| name.contains(w));
    let mut wrapper = el.parent_element();
    for _ in 0..FILE_WRAPPER_DEPTH {
        let Some(w) = wrapper else { break };
        if matches!(dom::tag(&w).as_str(), "body" | "html") {
            break;
        }
        if let Some(input) = first_in(&w, "input[type=\"file\" i]") {
            // Pages hide the real input and click it from a styled button.
            if (button_like && !dom::is_visible(&input)) || upload_named {
                return Some(FileRisk {
                    high: false,
                    reason: format!(
                        "{what} sits next to a hidden file input in the same wrapper; page scripts usually open its file chooser from here"
                    ),
                    hint: upload_selector(&input),
                });
            }
            break;
        }
        wrapper = w.parent_element();
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Frameworks

/// Elements scanned for attribute-name markers (`data-v-*`, `_ngcontent-*`).
const ATTRIBUTE_SCAN: u32 = 120;

fn framework_hint(framework: &str, evidence: String) -> FrameworkHint {
    let name = match framework {
        "react" => "React",
        "next" => "Next.js (React)",
        "vue" => "Vue",
        "nuxt" => "Nuxt (Vue)",
        "angular" => "Angular",
        _ => "Svelte",
    };
    FrameworkHint {
        framework: framework.into(),
        evidence,
        hint: format!(
            "{name} renders this page and controls its inputs: type with nova.type_selector (it sets the value through the native setter and fires input events), do not rely on setting value attributes, and re-read the field after typing; a value the framework did not see is reset on its next render."
        ),
    }
}

/// `frameworkHints[]` from DOM markers a content script can see.
pub fn frameworks(doc: &Document) -> Vec<FrameworkHint> {
    let mut out: Vec<FrameworkHint> = Vec::new();
    let first = |css: &str| doc.query_selector(css).ok().flatten();
    let add = |out: &mut Vec<FrameworkHint>, framework: &str, evidence: String| {
        if !out.iter().any(|h| h.framework == framework) {
            out.push(framework_hint(framework, evidence));
        }
    };
    let simple: &[(&str, &str)] = &[
        ("#__next", "next"),
        ("script#__NEXT_DATA__", "next"),
        ("#__nuxt", "nuxt"),
        ("script#__NUXT_DATA__", "nuxt"),
        ("[data-reactroot]", "react"),
        ("[data-reactid]", "react"),
        ("[data-v-app]", "vue"),
        ("[data-server-rendered]", "vue"),
        ("[ng-app], [data-ng-app], .ng-scope", "angular"),
        ("[data-svelte-h]", "svelte"),
        ("[data-sveltekit-preload-data], [data-sveltekit-hydrate]", "svelte"),
    ];
    const NG_VERSION: &str = "[ng-version]";
    const SVELTE_CLASS: &str = "[class*=\"svelte-\"]";
    // One probe for the common case of none.
    let mut any: Vec<&str> = simple.iter().map(|(css, _)| *css).collect();
    any.extend([NG_VERSION, SVELTE_CLASS]);
    if first(&any.join(", ")).is_some() {
        for (css, framework) in simple {
            if first(css).is_some() {
                add(&mut out, framework, (*css).to_owned());
            }
        }
        if let Some(el) = first(NG_VERSION) {
            let version = el.get_attribute("ng-version").unwrap_or_default();
            add(&mut out, "angular", format!("[ng-version={version}]"));
        }
        if let Some(el) = first(SVELTE_CLASS) {
            let class = el.get_attribute("class").unwrap_or_default();
            let token = class.split_whitespace().find(|c| c.starts_with("svelte-")).unwrap_or("svelte-");
            add(&mut out, "svelte", format!("class {token}"));
        }
    }
    // Scoped-style attributes have per-component names; no selector matches a name prefix.
    let want_vue = !out.iter().any(|h| h.framework == "vue" || h.framework == "nuxt");
    let want_ng = !out.iter().any(|h| h.framework == "angular");
    if (want_vue || want_ng)
        && let Some(body) = doc.body()
    {
        let list = body.get_elements_by_tag_name("*");
        'scan: for i in 0..list.length().min(ATTRIBUTE_SCAN) {
            let Some(el) = list.item(i).filter(Element::has_attributes) else { continue };
            for name in el.get_attribute_names().iter().filter_map(|n| n.as_string()) {
                if want_vue && name.starts_with("data-v-") && name.len() > 7 {
                    add(&mut out, "vue", format!("{name} attribute"));
                    break 'scan;
                }
                if want_ng && (name.starts_with("_ngcontent-") || name.starts_with("_nghost-")) {
                    add(&mut out, "angular", format!("{name} attribute"));
                    break 'scan;
                }
            }
        }
    }
    out
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

    #[test]
    fn autofill_roles_come_from_autocomplete_then_type_and_names() {
        assert_eq!(autofill_role("section-a billing cc-number", "text", "", false), Some("cc_number"));
        assert_eq!(autofill_role("cc-exp-month", "text", "", false), Some("cc_exp"));
        assert_eq!(autofill_role("cc-csc", "text", "", false), Some("cc_csc"));
        assert_eq!(autofill_role("username", "text", "", false), Some("login_identifier"));
        assert_eq!(autofill_role("email", "email", "", true), Some("login_identifier"));
        assert_eq!(
            autofill_role("email", "email", "newsletter", false),
            None,
            "a newsletter e-mail is not a login"
        );
        assert_eq!(autofill_role("new-password", "password", "", false), Some("new_password"));
        assert_eq!(autofill_role("", "password", "confirm_password", false), Some("new_password"));
        assert_eq!(autofill_role("off", "password", "pw", false), Some("password"));
        assert_eq!(autofill_role("one-time-code", "text", "", false), Some("one_time_code"));
        assert_eq!(autofill_role("", "text", "otp", false), Some("one_time_code"));
        assert_eq!(autofill_role("", "text", "footprint", false), None, "`otp` must be a word");
        assert_eq!(autofill_role("shipping postal-code", "text", "", false), Some("address"));
        assert_eq!(autofill_role("", "text", "card-number", false), Some("cc_number"));
        assert_eq!(autofill_role("", "text", "cvv", false), Some("cc_csc"));
        assert_eq!(autofill_role("", "text", "user login", true), Some("login_identifier"));
        assert_eq!(autofill_role("", "text", "user", false), None, "no password, no login");
        assert_eq!(autofill_role("", "search", "q", true), None);
    }

    #[test]
    fn dialog_calls_are_told_from_look_alike_names() {
        assert!(calls_native_dialog("return confirm('Delete?')"));
        assert!(calls_native_dialog("window.alert (1)"));
        assert!(calls_native_dialog("x = prompt('name')"));
        assert!(!calls_native_dialog("myalert('x')"));
        assert!(!calls_native_dialog("confirmed = true"));
        assert!(!calls_native_dialog("showPrompt()"));
    }

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
