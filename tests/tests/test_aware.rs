//! Awareness signals (the README's "Awareness signals") in real Chromium: identity, payment and
//! consent overlays, autofill fields, native dialogs, frameworks, file-chooser clicks, typing
//! truncation and page states, and the `safety.identity_overlay` gate they feed.

use nova_e2e::{Client, Nova};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

fn aag(r: &CallToolResult) -> Value {
    r.meta.as_ref().and_then(|m| m.0.get("io.nova/aag").cloned()).unwrap_or(Value::Null)
}

fn structured(r: &CallToolResult) -> Value {
    r.structured_content.clone().unwrap_or_default()
}

fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

/// The ref of the element line containing `needle` (`e12 button "Send"` -> `e12`).
fn ref_of(page: &Value, needle: &str) -> String {
    page["elements"]
        .as_array()
        .and_then(|a| a.iter().filter_map(Value::as_str).find(|l| l.contains(needle)))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("no element line with {needle:?} in {}", page["elements"]))
        .to_owned()
}

async fn perceive(c: &Client, nova: &Nova, path: &str) -> anyhow::Result<Value> {
    let nav = c.structured("nova.navigate", json!({"url": nova.url(path)})).await?;
    anyhow::ensure!(nav["ok"] == json!(true), "{nav}");
    c.structured("nova.perceive", json!({})).await
}

/// The fixture server's origin, as `location.origin` reports it.
fn origin(nova: &Nova) -> String {
    nova.url("").trim_end_matches('/').to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn sso_payment_and_consent_overlays_are_reported_with_their_evidence() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;

    // An aria-modal dialog whose evidence is a link to the provider (its frame is local).
    let sso = perceive(&c, &nova, "aware/sso.html").await?;
    let w = &sso["identityOverlayWarning"];
    assert_eq!(
        w["items"],
        json!([{"kind": "sso", "provider": "Google", "origin": "https://accounts.google.com", "confidence": 0.9,
                "blocking": true, "evidence": "link accounts.google.com/o/oauth2/auth"}]),
        "{sso}"
    );
    assert_eq!(w["recommendedAction"], "ask_user");
    assert!(w["message"].as_str().is_some_and(|m| m.contains("nova.permission_prompt")), "{w}");
    let rendered = text(&c.call("nova.perceive", json!({})).await?);
    assert!(rendered.contains("overlay: sso Google (blocking) — ask_user"), "{rendered}");

    // A modal <dialog> with card fields.
    let pay = perceive(&c, &nova, "aware/payment.html").await?;
    assert_eq!(
        pay["identityOverlayWarning"]["items"],
        json!([{"kind": "payment", "provider": "site", "origin": origin(&nova), "confidence": 0.8,
                "blocking": true, "evidence": "input autocomplete=cc-number"}]),
        "{pay}"
    );
    let roles: Vec<&str> = pay["autofillWarning"]["fields"]
        .as_array()
        .map(|f| f.iter().filter_map(|f| f["autofillFieldRole"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(roles, ["cc_number", "cc_exp", "cc_csc"], "{pay}");

    // A hosted checkout frame in a full-screen layer without dialog semantics.
    let checkout = perceive(&c, &nova, "aware/checkout.html").await?;
    assert_eq!(
        checkout["identityOverlayWarning"]["items"],
        json!([{"kind": "payment", "provider": "Stripe", "origin": "https://js.stripe.com", "confidence": 0.9,
                "blocking": true, "evidence": "iframe src js.stripe.com/v3/elements-inner-card.html"}]),
        "{checkout}"
    );

    // The site's own sign-in dialog (a password field in a modal), no provider named.
    let modal = perceive(&c, &nova, "aware/signin-modal.html").await?;
    assert_eq!(
        modal["identityOverlayWarning"]["items"],
        json!([{"kind": "identity", "provider": "site", "origin": origin(&nova), "confidence": 0.7,
                "blocking": true, "evidence": "password field in a modal dialog"}]),
        "{modal}"
    );
    assert_eq!(modal["identityOverlayWarning"]["recommendedAction"], "ask_user");

    // A consent platform's banner: dismissable, not blocking, and no gate on the page.
    let consent = perceive(&c, &nova, "aware/consent.html").await?;
    let w = &consent["identityOverlayWarning"];
    assert_eq!(
        w["items"],
        json!([{"kind": "consent", "provider": "OneTrust", "origin": origin(&nova), "confidence": 0.9,
                "blocking": false, "evidence": "OneTrust consent banner"}]),
        "{consent}"
    );
    assert_eq!(
        (w["recommendedAction"].clone(), consent["pageState"].clone()),
        (json!("dismiss_or_ask"), json!("consent_required"))
    );
    let more = c.structured("nova.click_selector", json!({"selector": "#more"})).await?;
    assert_eq!(more["actionDispatched"], true, "consent does not hold clicks: {more}");

    // A site-made cookie banner is consent; a newsletter dialog is nobody's identity.
    let blockers = perceive(&c, &nova, "blockers.html").await?;
    let items = blockers["identityOverlayWarning"]["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        items
            .iter()
            .map(|i| (i["kind"].clone(), i["provider"].clone(), i["confidence"].clone()))
            .collect::<Vec<_>>(),
        [(json!("consent"), json!("site"), json!(0.6))],
        "{blockers}"
    );

    // Nothing to report: every field stays out.
    let plain = perceive(&c, &nova, "aware/plain.html").await?;
    for key in ["identityOverlayWarning", "autofillWarning", "nativeDialogWarning", "frameworkHints"] {
        assert!(plain.get(key).is_none(), "{key} on a plain page: {plain}");
    }
    assert_eq!(plain["pageState"], "ok");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn autofill_fields_carry_perceive_refs_and_actions_on_them_warn_about_popups() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let page = perceive(&c, &nova, "aware/login.html").await?;
    assert_eq!(page["pageState"], "login_required");
    let w = &page["autofillWarning"];
    assert_eq!(
        w["fields"],
        json!([
            {"selector": ref_of(&page, "textbox \"Email\""), "autofillFieldRole": "login_identifier"},
            {"selector": ref_of(&page, "textbox \"Password\""), "autofillFieldRole": "password"},
            {"selector": ref_of(&page, "textbox \"Code from your app\""), "autofillFieldRole": "one_time_code"},
        ]),
        "the newsletter e-mail, the search box and the hidden field are left out: {page}"
    );
    assert!(w["message"].as_str().is_some_and(|m| m.contains("password manager")), "{w}");

    let click = c.structured("nova.click_selector", json!({"selector": "#user"})).await?;
    assert_eq!(click["autofillFieldRole"], "login_identifier", "{click}");
    assert!(
        click["autofillPopupWarning"].as_str().is_some_and(|m| m.contains("outside the page DOM")),
        "{click}"
    );
    let typed = c.structured("nova.type_selector", json!({"selector": "#pw", "text": "hunter22"})).await?;
    assert_eq!(
        (typed["autofillFieldRole"].clone(), typed["sensitive"].clone(), typed.get("readback").cloned()),
        (json!("password"), json!(true), None),
        "{typed}"
    );
    assert!(!typed.to_string().contains("hunter22"), "the password never comes back: {typed}");
    let news =
        c.structured("nova.type_selector", json!({"selector": "#news", "text": "a@b.example"})).await?;
    assert!(news.get("autofillFieldRole").is_none() && news.get("autofillPopupWarning").is_none(), "{news}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn typing_reports_truncation_with_the_field_limit() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    perceive(&c, &nova, "aware/typing.html").await?;
    let voucher =
        c.structured("nova.type_selector", json!({"selector": "#voucher", "text": "123456"})).await?;
    assert_eq!(voucher["readback"], "1234", "{voucher}");
    assert_eq!(voucher["truncationWarning"], json!({"requested": 6, "stored": 4, "maxLength": 4}));
    assert!(voucher["warnings"][0].as_str().is_some_and(|w| w.contains("maxlength")), "{voucher}");
    // Appending counts what was already there.
    let more = c
        .structured("nova.type_selector", json!({"selector": "#note", "text": "abc", "clear": false}))
        .await?;
    assert!(more.get("truncationWarning").is_none(), "{more}");
    let over = c
        .structured("nova.type_selector", json!({"selector": "#note", "text": "defg", "clear": false}))
        .await?;
    assert_eq!(over["truncationWarning"], json!({"requested": 7, "stored": 5, "maxLength": 5}), "{over}");
    // A guarded type reports it too.
    let contract = json!({"postconditions": {"success": {"all": [{"factKey": "dom.exists(#voucher)", "operator": "eq", "expected": true}]}}});
    let guarded = c
        .structured(
            "nova.type_selector",
            json!({"selector": "#voucher", "text": "98765", "transitionContract": contract}),
        )
        .await?;
    assert_eq!(
        guarded["truncationWarning"],
        json!({"requested": 5, "stored": 4, "maxLength": 4}),
        "{guarded}"
    );
    let free = c.structured("nova.type_selector", json!({"selector": "#free", "text": "123456"})).await?;
    assert!(free.get("truncationWarning").is_none() && free.get("warnings").is_none(), "{free}");
    // A password field's lengths are not reported.
    let pin = c.structured("nova.type_selector", json!({"selector": "#pin", "text": "123456"})).await?;
    assert!(pin.get("truncationWarning").is_none() && pin.get("warnings").is_none(), "{pin}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn file_inputs_are_never_clicked_and_point_to_file_upload() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let read = perceive(&c, &nova, "aware/upload.html").await?;
    // A file input laid transparent over a button is what a person's click on the button
    // reaches: it is read (in view or further down), one beneath a button is not.
    let lines: Vec<&str> =
        read["elements"].as_array().into_iter().flatten().filter_map(|l| l.as_str()).collect();
    let files: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_once(' ').map(|(_, l)| l))
        .filter(|l| l.starts_with("file "))
        .collect();
    assert_eq!(
        files,
        [r#"file id="direct""#, r#"file "Choose avatar""#, r#"file "files[]""#, r#"file "documents""#],
        "{lines:?}"
    );
    for (selector, hint) in [
        ("#direct", "#direct"),
        ("#avatar-label", "#avatar"),
        ("#cover", "#files"),
        ("#cover-below", "#documents"),
    ] {
        let r = c.call("nova.click_selector", json!({"selector": selector})).await?;
        let s = structured(&r);
        assert_eq!(r.is_error, Some(true), "{s}");
        assert_eq!(
            (
                s["reasonCode"].clone(),
                s["actionDispatched"].clone(),
                s["fileInputRisk"].clone(),
                s["fileUploadSelectorHint"].clone()
            ),
            (json!("file_input_click"), json!(false), json!("high"), json!(hint)),
            "{s}"
        );
        assert!(s["message"].as_str().is_some_and(|m| m.contains("nova.file_upload")), "{s}");
    }
    // A styled button next to a hidden input: clicked, with the risk reported.
    let pick = c.structured("nova.click_selector", json!({"selector": "#pick"})).await?;
    assert_eq!(
        (
            pick["actionDispatched"].clone(),
            pick["fileInputRisk"].clone(),
            pick["fileUploadSelectorHint"].clone()
        ),
        (json!(true), json!("medium"), json!("input[type=\"file\"][name=\"photo\"]")),
        "{pick}"
    );
    assert!(pick["fileInputRiskReason"].as_str().is_some_and(|r| r.contains("hidden file input")), "{pick}");
    // A button drawn over a transparent input takes the click itself.
    let above = c.structured("nova.click_selector", json!({"selector": "#above"})).await?;
    assert_eq!(
        (above["actionDispatched"].clone(), above["fileInputRisk"].clone()),
        (json!(true), json!("medium")),
        "{above}"
    );
    let plain = c.structured("nova.click_selector", json!({"selector": "#plain"})).await?;
    assert!(plain.get("fileInputRisk").is_none(), "{plain}");
    // A guarded click is refused the same way, before its journal counts a dispatch.
    let contract = json!({"postconditions": {"success": {"all": [{"factKey": "dom.exists(#log li)", "operator": "eq", "expected": true}]}}});
    let guarded =
        c.call("nova.click_selector", json!({"selector": "#direct", "transitionContract": contract})).await?;
    let g = structured(&guarded);
    assert_eq!(
        (
            g["guardedCommit"]["dispatchStatus"].clone(),
            g["pageReasonCode"].clone(),
            g["fileUploadSelectorHint"].clone()
        ),
        (json!("blocked_precondition"), json!("file_input_click"), json!("#direct")),
        "{g}"
    );
    // The hint is what nova.file_upload takes.
    let up = c
        .structured(
            "nova.file_upload",
            json!({"selector": "#direct", "files": [{"name": "a.txt", "mimeType": "text/plain", "contentBase64": "aGk="}]}),
        )
        .await?;
    assert_eq!(up["ok"], true, "{up}");
    // Files given to the button a person would click are refused, naming the input to use.
    let a_txt = json!([{"name": "a.txt", "mimeType": "text/plain", "contentBase64": "aGk="}]);
    let r = c.call("nova.file_upload", json!({"selector": "#cover", "files": a_txt})).await?;
    let s = structured(&r);
    assert_eq!((r.is_error, s["reasonCode"].clone()), (Some(true), json!("element_not_file_input")), "{s}");
    assert!(s["message"].as_str().is_some_and(|m| m.ends_with("its files go to `#files`")), "{s}");
    let log = c.structured("nova.read_text", json!({"selector": "#log"})).await?;
    assert_eq!(
        log["text"], "pick clicked\nclick photo\ndirect: a.txt",
        "the refused clicks never reached the inputs"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn native_dialog_handlers_and_beforeunload_are_pointed_out() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let page = perceive(&c, &nova, "aware/dialogs.html").await?;
    let w = &page["nativeDialogWarning"];
    assert_eq!(w["beforeUnload"], true, "{page}");
    assert_eq!(
        w["elements"],
        json!([
            ref_of(&page, "\"Discard draft\""),
            ref_of(&page, "\"Draft one\""),
            ref_of(&page, "\"Show alert\"")
        ]),
        "visible inline alert/confirm/prompt handlers, the hidden form left out: {page}"
    );

    let discard = c.structured("nova.click_selector", json!({"selector": "#discard"})).await?;
    let m = discard["nativeDialogWarning"].as_str().unwrap_or_default();
    assert!(m.starts_with("its inline onclick handler calls alert / confirm / prompt"), "{discard}");
    let inner = c.structured("nova.click_selector", json!({"selector": "#inner"})).await?;
    let m = inner["nativeDialogWarning"].as_str().unwrap_or_default();
    assert!(m.contains("\"Draft one\"'s inline onclick handler"), "an ancestor's handler counts: {inner}");
    let quiet = c.structured("nova.click_selector", json!({"selector": "#quiet"})).await?;
    assert!(quiet.get("nativeDialogWarning").is_none(), "{quiet}");
    let away = c.structured("nova.click_selector", json!({"selector": "#away"})).await?;
    assert!(
        away["nativeDialogWarning"].as_str().is_some_and(|m| m.contains("onbeforeunload")),
        "a link on a page with an inline onbeforeunload: {away}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn frameworks_are_recognised_by_their_dom_markers() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let pairs = |page: &Value| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = page["frameworkHints"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|h| {
                        (
                            h["framework"].as_str().unwrap_or_default().to_owned(),
                            h["evidence"].as_str().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let react = perceive(&c, &nova, "aware/react.html").await?;
    assert_eq!(
        pairs(&react),
        [("next".to_owned(), "#__next".to_owned()), ("react".to_owned(), "[data-reactroot]".to_owned())]
    );
    let hint = react["frameworkHints"][0]["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("nova.type_selector") && hint.contains("re-read"), "{hint}");
    let mixed = perceive(&c, &nova, "aware/mixed.html").await?;
    assert_eq!(
        pairs(&mixed),
        [
            ("angular".to_owned(), "[ng-version=17.3.0]".to_owned()),
            ("svelte".to_owned(), "class svelte-1x2y3z".to_owned()),
            ("vue".to_owned(), "data-v-7ba5bd90 attribute".to_owned()),
        ],
        "{mixed}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn geo_blocks_and_bot_challenges_set_the_page_state() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    for (path, state) in [
        ("aware/geo.html", "geo_blocked"),
        ("aware/challenge.html", "bot_challenge"),
        ("aware/turnstile.html", "bot_challenge"),
        ("aware/plain.html", "ok"),
    ] {
        let page = perceive(&c, &nova, path).await?;
        assert_eq!(page["pageState"], state, "{path}: {page}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_identity_overlay_blocks_mutations_until_a_perceive_no_longer_sees_it() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let c = nova.client().await?;
    let b = c.structured("nova.tools_bundle", json!({"bundle": "browser_automation"})).await?;
    assert_eq!(b["ok"], true, "{b}");
    c.structured("nova.navigate", json!({"url": nova.url("aware/sso.html")})).await?;
    c.structured("nova.perceive", json!({})).await?;

    let blocked = c.call("nova.click_selector", json!({"selector": "#behind"})).await?;
    let a = aag(&blocked);
    assert_eq!(
        (
            a["gateId"].clone(),
            a["gateMode"].clone(),
            a["reasonCode"].clone(),
            a["forceBypassAvailable"].clone()
        ),
        (json!("safety.identity_overlay"), json!("block"), json!("safety.identity_overlay"), json!(true)),
        "{a}"
    );
    assert_eq!(
        (a["details"]["items"][0]["provider"].clone(), a["details"]["recommendedAction"].clone()),
        (json!("Google"), json!("ask_user")),
        "{a}"
    );
    assert_eq!(structured(&blocked)["actionDispatched"], false);
    let typed = c.call("nova.type_selector", json!({"selector": "#behind", "text": "x"})).await?;
    assert_eq!(aag(&typed)["gateId"], "safety.identity_overlay", "typing is held too");

    // The person's overlay closed (here: a forced click on its close button).
    let closed = c
        .structured("nova.click_selector", json!({"selector": "#close", "_meta": {"forceBypass": true}}))
        .await?;
    assert_eq!(closed["_aagGates"]["identityOverlay"]["status"], "bypassed", "{closed}");
    assert_eq!(closed["actionDispatched"], true, "{closed}");
    // Until a perceive sees the page without it, the gate holds.
    let still = c.call("nova.click_selector", json!({"selector": "#behind"})).await?;
    assert_eq!(aag(&still)["gateId"], "safety.identity_overlay");
    let page = c.structured("nova.perceive", json!({})).await?;
    assert!(page.get("identityOverlayWarning").is_none(), "{page}");
    let open = c.structured("nova.click_selector", json!({"selector": "#behind"})).await?;
    assert_eq!(open["actionDispatched"], true, "{open}");
    let state = c.structured("nova.read_text", json!({"selector": "#state"})).await?;
    assert_eq!(state["text"], "board: open");

    // A navigation leaves the overlay behind with its document.
    c.structured("nova.navigate", json!({"url": nova.url("aware/sso.html")})).await?;
    c.structured("nova.perceive", json!({})).await?;
    let again = c.call("nova.click_selector", json!({"selector": "#behind"})).await?;
    assert_eq!(aag(&again)["gateId"], "safety.identity_overlay");
    c.structured("nova.navigate", json!({"url": nova.url("aware/plain.html")})).await?;
    c.structured("nova.perceive", json!({})).await?;
    let go = c.structured("nova.click_selector", json!({"selector": "#q"})).await?;
    assert_eq!(go["actionDispatched"], true, "{go}");
    Ok(())
}

/// A browser does not dismiss JavaScript dialogs by itself: `alert()` from a handler of a
/// content-script click blocks the page, whose scripts (ours included) answer nothing until the
/// dialog goes; a navigation dismisses it. The same in both browsers (a WebDriver session would
/// dismiss the alert at once; the harness opens none here, as a person's browser has none).
#[tokio::test(flavor = "multi_thread")]
async fn a_click_that_opens_an_alert_times_out_with_a_native_dialog_warning() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    perceive(&c, &nova, "aware/dialogs.html").await?;
    let r = c.call("nova.click_selector", json!({"selector": "#real-alert"})).await?;
    let s = structured(&r);
    assert_eq!(
        (s["reasonCode"].clone(), s["actionDispatched"].clone(), s["nativeDialogWarning"].clone()),
        (
            json!("timeout"),
            Value::Null,
            json!(
                "the page stopped answering after the action; a native dialog (alert, confirm, beforeunload) may be waiting for the person"
            )
        ),
        "{s}"
    );
    let nav = c.structured("nova.navigate", json!({"url": nova.url("aware/plain.html")})).await?;
    assert_eq!(nav["ok"], true, "a navigation takes the dialog away: {nav}");
    let read = c.structured("nova.read_text", json!({"maxChars": 10})).await?;
    assert_eq!(read["text"], "Plain page", "{read}");
    Ok(())
}

/// The browser's own sign-in dialog for HTTP authentication, which no page script sees: a
/// navigation to a page behind one ends at once with who asks (Firefox waits on its dialog and
/// its page answers nothing meanwhile; headless Chromium gives up on it); a request the page's
/// script made that asks is reported on perceive and in a guarded click's `pageAsks`. Going
/// elsewhere leaves nothing behind. A user name and password in the address are the browser's
/// answer: refused, the navigation says who asks; right, the page opens.
#[tokio::test(flavor = "multi_thread")]
async fn the_browsers_own_http_sign_in_is_reported_with_who_asks() -> anyhow::Result<()> {
    let firefox = nova_e2e::BrowserKind::from_env() == nova_e2e::BrowserKind::Firefox;
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let origin = origin(&nova);
    let who = format!("{origin} (\"Nova fixture\")");
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;

    let r = structured(&c.call("nova.navigate", json!({"url": nova.url("private")})).await?);
    assert_eq!(r["reasonCode"], "http_sign_in", "{r}");
    let said = r["message"].as_str().unwrap_or_default();
    assert!(said.contains(&who) && said.contains("never guess"), "{r}");
    if firefox {
        assert!(said.contains("the tab waits on it"), "{r}");
        let read = structured(&c.call("nova.perceive", json!({})).await?);
        assert_eq!(read["reasonCode"], "http_sign_in", "the tab's page answers nothing: {read}");
    } else {
        assert!(said.contains("gave up on it without showing its dialog"), "{r}");
    }

    // Elsewhere, nothing is left of it.
    let read = perceive(&c, &nova, "private-fetch.html").await?;
    assert!(read.get("httpSignIn").is_none(), "{read}");

    assert!(read.get("httpSignIn").is_none(), "{read}");

    // The page's own request asks: the click proves nothing, and says what waits.
    let loaded = json!({
        "actionKind": "custom", "stabilityWindowMs": 1500, "stabilityMs": 100,
        "postconditions": {"success": {"all": [
            {"factKey": "dom.text(#status)", "operator": "contains", "expected": "Loaded"}]}}
    });
    let r = structured(
        &c.call("nova.click_selector", json!({"selector": "#load", "transitionContract": loaded})).await?,
    );
    assert_eq!(r["reasonCode"], "guarded_commit.no_signal_yet", "{r}");
    let asks = r["pageAsks"].as_str().unwrap_or_default();
    assert!(asks.contains(&who) && asks.contains("the page's request waits on it"), "{r}");
    let read = structured(&c.call("nova.perceive", json!({})).await?);
    let expected = json!({"origin": origin, "realm": "Nova fixture", "proxy": false, "document": false});
    assert_eq!(read["httpSignIn"], expected, "{read}");
    assert!(read["text"].as_str().is_some_and(|t| t.contains("Loading")), "{read}");

    let read = perceive(&c, &nova, "basic.html").await?;
    assert!(read.get("httpSignIn").is_none(), "{read}");

    // A link to the page says who asks, in a tab of its own: Firefox stops asking in a tab
    // whose sign-in dialogs were dismissed twice (here, by going elsewhere).
    c.structured("nova.navigate", json!({"url": nova.url("private-fetch.html"), "newTab": true})).await?;
    let r = structured(&c.call("nova.click_selector", json!({"selector": "#private"})).await?);
    let document = json!({"origin": origin, "realm": "Nova fixture", "proxy": false, "document": true});
    assert_eq!((r["httpSignIn"].clone(), r["navigated"].clone()), (document, Value::Null), "{r}");

    // A sign-in in the address that the site refuses: the browser asks (or gave up), and says so.
    let (user, password) = (nova_e2e::fixtures::PRIVATE_USER, nova_e2e::fixtures::PRIVATE_PASSWORD);
    let wrong = nova.url("private").replacen("http://", &format!("http://{user}:not-{password}@"), 1);
    let r = structured(&c.call("nova.navigate", json!({"url": wrong, "newTab": true})).await?);
    assert_eq!(r["reasonCode"], "http_sign_in", "{r}");
    let said = r["message"].as_str().unwrap_or_default();
    assert!(said.contains(&who) && said.contains("in the address were refused"), "{r}");

    // A sign-in the browser answers itself (the person put it in the address): the page opens,
    // however long it takes after the site's first ask, and the password is kept nowhere.
    let with = nova.url("private").replacen("http://", &format!("http://{user}:{password}@"), 1);
    let r = structured(&c.call("nova.navigate", json!({"url": with})).await?);
    assert_eq!((r["ok"].clone(), r["title"].clone()), (json!(true), json!("Private")), "{r}");
    drop(c);
    assert!(!nova.data_holds(password)?, "the password in the address found in the data dir");
    Ok(())
}
