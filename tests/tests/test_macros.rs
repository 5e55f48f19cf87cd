//! Guarded macros driven by the generic adapters against the chat fixture in its modes.

use nova_e2e::realapps::{failed_observed, line_with_ref};
use nova_e2e::{Client, Nova};
use serde_json::{Value, json};

async fn send(c: &Client, text: &str, refine: Option<Value>) -> anyhow::Result<Value> {
    let mut args = json!({"text": text});
    if let Some(r) = refine {
        args["transitionContract"] = r;
    }
    let r = c.call("nova.guarded_send_message", args).await?;
    r.structured_content.ok_or_else(|| anyhow::anyhow!("no structured content"))
}

async fn count(c: &Client) -> anyhow::Result<String> {
    let r = c.structured("nova.read_text", json!({"selector": "#sent-count"})).await?;
    Ok(r["text"].as_str().unwrap_or_default().to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn guarded_send_message_verifies_each_kind_of_chat() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let short = json!({"stabilityWindowMs": 1500, "stabilityMs": 200});
    for (mode, expected, reason) in [
        ("works", "verified_success", Value::Null),
        ("editable", "verified_success", Value::Null),
        ("streaming", "verified_success", Value::Null),
        ("error", "verified_fail", json!("guarded_commit.postcondition_failed")),
        ("silent", "indeterminate", json!("guarded_commit.no_signal_yet")),
        ("silent&editable", "indeterminate", json!("guarded_commit.no_signal_yet")),
        ("unanswered", "indeterminate", json!("guarded_commit.no_signal_yet")),
    ] {
        c.structured("nova.navigate", json!({"url": nova.url(&format!("chat.html?mode={mode}"))})).await?;
        let r = send(&c, "hello there", Some(short.clone())).await?;
        assert_eq!(r["guardedCommit"]["verificationStatus"], expected, "{mode}: {r}");
        assert_eq!(r["reasonCode"], reason, "{mode}: {r}");
        assert_eq!(r["actionDispatched"], true, "{mode}");
        assert_eq!(r["adapter"], "generic");
        if mode == "error" {
            let said = failed_observed(&r, "chat.errorBanner");
            assert_eq!(said, &json!("Message could not be sent"), "without its hide link: {r}");
        }
        let said = r["message"].as_str().unwrap_or_default();
        if expected == "indeterminate" {
            assert!(said.contains("within the 1500 ms window"), "{said}");
            assert!(said.contains("assistant's reply") && said.contains("postconditions.success"), "{said}");
        }
        // Whether the page took a message nothing answered is told from its composer.
        let ignored = mode.starts_with("silent");
        assert_eq!(said.contains("The composer still holds the message"), ignored, "{mode}: {said}");
        assert_eq!(said.contains("The composer was emptied"), mode == "unanswered", "{mode}: {said}");
        assert_eq!(count(&c).await?, if ignored { "0" } else { "1" }, "{mode}: sent exactly once");
    }

    // A refinement that cannot hold makes success unreachable: the caller's contract is used.
    c.structured("nova.navigate", json!({"url": nova.url("chat.html?mode=works")})).await?;
    let strict = json!({"postconditions": {"success": {"all": [{"factKey": "dom.exists(#never)", "operator": "eq", "expected": true}]}},
                        "stabilityWindowMs": 1000});
    let r = send(&c, "again", Some(strict)).await?;
    assert_eq!(r["reasonCode"], "guarded_commit.no_signal_yet", "{r}");
    let said = r["message"].as_str().unwrap_or_default();
    assert!(said.contains("within the 1000 ms window"), "{said}");
    assert!(!said.contains("postconditions.success"), "a caller naming its success is not told to: {said}");
    let empty = c.call_err("nova.guarded_send_message", json!({"text": "  "})).await?;
    assert!(empty.message.contains("text"));
    Ok(())
}

/// A chat built of web components, all of it inside shadow roots: its composer is the text box
/// the read found, and its replies are judged by the generic conventions looked for inside the
/// page's shadow roots, a reply drawn in a component added after the send too (nothing in the
/// document changes when its words appear).
#[tokio::test(flavor = "multi_thread")]
async fn a_chat_built_of_web_components_is_sent_and_judged_inside_its_shadow_roots() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("chat-shadow.html")})).await?;
    for (n, text) in [(1, "hello there"), (2, "and again")] {
        let r = send(&c, text, Some(json!({"stabilityWindowMs": 3000}))).await?;
        assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{text}: {r}");
        assert_eq!(count(&c).await?, n.to_string(), "sent once: {text}");
    }
    let read = c.structured("nova.read_text", json!({})).await?;
    let said = read["text"].as_str().unwrap_or_default();
    assert!(said.contains("Reply to: and again"), "{said}");

    c.structured("nova.navigate", json!({"url": nova.url("chat-shadow.html?mode=error")})).await?;
    let r = send(&c, "hello there", Some(json!({"stabilityWindowMs": 3000}))).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_fail", "{r}");
    assert_eq!(r["reasonCode"], "guarded_commit.postcondition_failed", "{r}");
    assert!(r.to_string().contains("The model could not answer"), "the error note is the evidence: {r}");
    assert_eq!(count(&c).await?, "1", "sent once");
    Ok(())
}

/// A chat that keeps its error messages in the conversation: each failed reply is judged by its
/// own error message, not taken for a success because an older one was already showing.
#[tokio::test(flavor = "multi_thread")]
async fn each_error_message_kept_in_a_conversation_is_news_once() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("chat.html?mode=transcript")})).await?;
    for (text, expected) in [
        ("please fail", "verified_fail"),
        ("hello there", "verified_success"),
        ("fail again", "verified_fail"),
    ] {
        let r = send(&c, text, None).await?;
        assert_eq!(r["guardedCommit"]["verificationStatus"], expected, "{text}: {r}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn guarded_login_tells_a_wrong_password_from_a_right_one() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    // A page with a text box and no sign-in form: refused before anything is typed.
    c.structured("nova.navigate", json!({"url": nova.url("signup.html")})).await?;
    let nowhere = json!({"username": "ada-lovelace-77", "password": "correct-horse"});
    let nowhere = c.call("nova.guarded_login", nowhere).await?.structured_content.unwrap_or_default();
    assert_eq!(nowhere["reasonCode"], "element_not_found", "{nowhere}");
    assert_eq!(nowhere["actionDispatched"], false, "{nowhere}");
    assert!(nowhere["message"].as_str().is_some_and(|m| m.contains("nothing was typed")), "{nowhere}");
    let page = c.structured("nova.perceive", json!({})).await?;
    assert!(!page["elements"].to_string().contains("ada-lovelace-77"), "{}", page["elements"]);

    c.structured("nova.navigate", json!({"url": nova.url("login.html")})).await?;
    // No user name where the page asks for one: refused, naming the argument (a user name is
    // left out only where the page asks for a password alone, see test_realapps' sqlite-web).
    let alone = c.call_err("nova.guarded_login", json!({"password": "correct-horse"})).await?;
    assert_eq!(alone.code.0, -32602);
    assert!(alone.message.contains("username") && alone.message.contains("nothing was typed"), "{alone:?}");
    let wrong =
        c.call("nova.guarded_login", json!({"username": "ada", "password": "Wr0ng-Secret-zz"})).await?;
    let wrong = wrong.structured_content.unwrap_or_default();
    assert_eq!(wrong["guardedCommit"]["verificationStatus"], "verified_fail", "{wrong}");
    assert_eq!(wrong["reasonCode"], "guarded_commit.postcondition_failed");

    let right =
        c.structured("nova.guarded_login", json!({"username": "ada", "password": "correct-horse"})).await?;
    assert_eq!(right["guardedCommit"]["verificationStatus"], "verified_success", "{right}");
    let page = c.structured("nova.read_text", json!({"selector": "#welcome"})).await?;
    assert_eq!(page["text"], "Welcome back, Ada");
    // Proven by the page's "Log out", known by its name (its address says nothing of signing out).
    let proof = &right["guardedCommit"]["heldAssertions"];
    let signed_in = json!({"factKey": "core.login_state", "op": "eq", "expected": "logged_in",
        "observed": "logged_in", "passed": true, "error": null});
    assert!(proof.as_array().is_some_and(|p| p.contains(&signed_in)), "{proof}");

    // A search box and a "Log in" button in the header before a sign-in form whose account field
    // says nothing of users: the user name goes into the form that asks for the password, and that
    // form's own button signs in (the header's leads to a page with no password field, which would
    // have passed for a sign-in).
    c.structured("nova.navigate", json!({"url": nova.url("login-search.html")})).await?;
    let right =
        c.structured("nova.guarded_login", json!({"username": "ada", "password": "correct-horse"})).await?;
    assert_eq!(right["guardedCommit"]["verificationStatus"], "verified_success", "{right}");
    assert!(right["urlAfter"].as_str().is_some_and(|u| u.ends_with("/account.html")), "{right}");

    // A sign-in with no <form>, after a header "Log in" and a "Sign in with Google": the button
    // under the fields, in the card around them.
    c.structured("nova.navigate", json!({"url": nova.url("login-card.html")})).await?;
    let card = json!({"username": "ada@example.org", "password": "correct-horse"});
    let right = c.structured("nova.guarded_login", card).await?;
    assert_eq!(right["guardedCommit"]["verificationStatus"], "verified_success", "{right}");
    assert!(right["urlAfter"].as_str().is_some_and(|u| u.ends_with("/account.html")), "{right}");

    drop(c);
    let rows = nova.observations(4)?;
    let login = rows.iter().find(|r| r["tool"] == "nova.guarded_login").expect("recorded");
    assert!(login["args_json"].as_str().unwrap_or_default().contains("<redacted"));
    for secret in ["Wr0ng-Secret-zz", "correct-horse"] {
        assert!(!nova.data_holds(secret)?, "{secret} found in the data dir");
    }
    Ok(())
}

/// A password the site takes before asking to approve the sign-in on a phone: the password field
/// is gone, and nothing shows a signed-in page. The sign-in is likely, not verified: the agent is
/// told to read the page, support staff see the caveat, and OK files the sign-in as likely.
/// A page whose sign-out sits in a closed menu stays verified (test_ok).
#[tokio::test]
async fn a_sign_in_waiting_for_approval_elsewhere_is_only_likely() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("login.html?to=approve.html")})).await?;
    let r =
        c.structured("nova.guarded_login", json!({"username": "ada", "password": "correct-horse"})).await?;
    assert_eq!(
        (r["guardedCommit"]["verificationStatus"].clone(), r["verifyState"].clone()),
        (json!("verified_success"), json!("likely")),
        "{r}"
    );
    let said = r["message"].as_str().unwrap_or_default();
    assert!(said.contains("approved on another device") && said.contains("approve.html"), "{said}");
    let call = logged(&nova, "guarded_login", &r["guardedCommit"]["transitionId"])?;
    assert_eq!(call["reason"], "sign_in_unconfirmed", "{call}");
    let filed = rusqlite::Connection::open(nova.store_path())?.query_row(
        "SELECT certainty_level FROM ok_facts WHERE fact_key = 'core.login_state' AND valid_to IS NULL",
        [],
        |row| row.get::<_, String>(0),
    )?;
    assert_eq!(filed, "likely");
    let page = c.structured("nova.read_text", json!({"selector": "#approve"})).await?;
    assert_eq!(page["text"], "Approve sign-in request");
    Ok(())
}

/// `guarded_login`'s verification status and where the call ended.
fn landed(r: &Value) -> (&str, &str) {
    let status = r["guardedCommit"]["verificationStatus"].as_str().unwrap_or_default();
    let url = r["urlAfter"].as_str().unwrap_or_default();
    (status, url.rsplit('/').next().unwrap_or_default().split('?').next().unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_identifier_first_sign_in_asks_the_account_then_types_the_password_on_its_own_page()
-> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let ada = |password: &str| json!({"username": "ada@example.org", "password": password});

    // An account the site does not know: the first page says so, and no password is typed.
    c.structured("nova.navigate", json!({"url": nova.url("login-id.html")})).await?;
    let r = c
        .structured(
            "nova.guarded_login",
            json!({"username": "bob@example.org", "password": "Wr0ng-Secret-zz"}),
        )
        .await?;
    assert_eq!(landed(&r), ("verified_fail", "login-id.html"), "{r}");
    assert_eq!(r["userNameStep"]["verificationStatus"], "verified_fail", "{r}");
    assert!(r["message"].as_str().is_some_and(|m| m.contains("the password was not typed")), "{r}");

    // The account, then a wrong password: the first step is proven, the sign-in failed on the
    // password page.
    let r = c.structured("nova.guarded_login", ada("Wr0ng-Secret-zz")).await?;
    assert_eq!(landed(&r), ("verified_fail", "login-pw.html"), "{r}");
    assert_eq!(r["userNameStep"]["verificationStatus"], "verified_success", "{r}");
    assert_ne!(r["userNameStep"]["transitionId"], r["guardedCommit"]["transitionId"], "{r}");

    // Called again on the password page, which shows the account: only the password is typed.
    let r = c.structured("nova.guarded_login", ada("correct-horse")).await?;
    assert_eq!(landed(&r), ("verified_success", "account.html"), "{r}");
    assert!(r.get("userNameStep").is_none(), "{r}");

    // From the first page in one call.
    c.structured("nova.navigate", json!({"url": nova.url("login-id.html")})).await?;
    let r = c.structured("nova.guarded_login", ada("correct-horse")).await?;
    assert_eq!(landed(&r), ("verified_success", "account.html"), "{r}");
    assert_eq!(r["userNameStep"]["verificationStatus"], "verified_success", "{r}");
    assert!(r["userNameStep"]["urlAfter"].as_str().is_some_and(|u| u.contains("login-pw.html")), "{r}");
    let signed_in = nova.ok_facts("core.login_state")?;
    assert!(signed_in.iter().any(|(v, _)| v == "logged_in"), "{signed_in:?}");

    // A password page for another account: refused, the password field left empty; also when
    // the page keeps an off-screen copy of the account for the password manager.
    for copy in ["", "&copy=1"] {
        let bob = nova.url(&format!("login-pw.html?identifier=bob%40example.org{copy}"));
        c.structured("nova.navigate", json!({"url": bob})).await?;
        let r =
            c.call("nova.guarded_login", ada("correct-horse")).await?.structured_content.unwrap_or_default();
        assert_eq!(r["reasonCode"], "element_not_found", "{copy}: {r}");
        assert_eq!(r["actionDispatched"], false, "{copy}: {r}");
        assert!(r["message"].as_str().is_some_and(|m| m.contains("another account")), "{copy}: {r}");
        let page = c.structured("nova.perceive", json!({})).await?;
        assert!(!page["elements"].to_string().contains("password filled"), "{}", page["elements"]);
        // The refusal names the page's own way back to choosing the account.
        let switch = r["switchAccount"].as_str().unwrap_or_default();
        let line = line_with_ref(&page, switch);
        assert!(line.is_some_and(|l| l.contains("\"Not you?\"")), "{copy}: {switch}: {r}");
        assert!(
            r["message"].as_str().is_some_and(|m| m.contains(&format!("\"Not you?\" ({switch})"))),
            "{copy}: {r}"
        );
    }
    // Pressing it leads back to the page that asks for the account, where the sign-in works.
    let r = c.call("nova.guarded_login", ada("correct-horse")).await?.structured_content.unwrap_or_default();
    c.structured("nova.click_selector", json!({"selector": r["switchAccount"]})).await?;
    let r = c.structured("nova.guarded_login", ada("correct-horse")).await?;
    assert_eq!(landed(&r), ("verified_success", "account.html"), "{r}");
    assert_eq!(r["userNameStep"]["verificationStatus"], "verified_success", "{r}");
    // The account's own password page with such a copy: the password is typed, not the copy.
    let own = nova.url("login-pw.html?identifier=ada%40example.org&copy=1");
    c.structured("nova.navigate", json!({"url": own})).await?;
    let r = c.structured("nova.guarded_login", ada("correct-horse")).await?;
    assert_eq!(landed(&r), ("verified_success", "account.html"), "{r}");

    // A text box with no password field whose button is not a sign-in's next step (a newsletter's
    // "Subscribe"): refused before anything is typed, even with the field named.
    c.structured("nova.navigate", json!({"url": nova.url("signup.html")})).await?;
    let named =
        json!({"username": "ada-lovelace-77", "password": "correct-horse", "usernameSelector": "#email"});
    let r = c.call("nova.guarded_login", named).await?.structured_content.unwrap_or_default();
    assert_eq!(r["reasonCode"], "element_not_found", "{r}");
    assert_eq!(r["actionDispatched"], false, "{r}");
    assert!(r["message"].as_str().is_some_and(|m| m.contains("\"Subscribe\"")), "{r}");
    let page = c.structured("nova.perceive", json!({})).await?;
    assert!(!page["elements"].to_string().contains("ada-lovelace-77"), "{}", page["elements"]);

    // Both steps in one document, with no <form>, the password step shown after a pause.
    c.structured("nova.navigate", json!({"url": nova.url("login-steps.html")})).await?;
    let r = c.structured("nova.guarded_login", ada("correct-horse")).await?;
    assert_eq!(landed(&r), ("verified_success", "account.html"), "{r}");
    assert_eq!(r["userNameStep"]["verificationStatus"], "verified_success", "{r}");
    c.structured("nova.navigate", json!({"url": nova.url("login-steps.html")})).await?;
    let r = c.structured("nova.guarded_login", ada("Wr0ng-Secret-zz")).await?;
    assert_eq!(landed(&r), ("verified_fail", "login-steps.html"), "{r}");

    drop(c);
    for secret in ["Wr0ng-Secret-zz", "correct-horse"] {
        assert!(!nova.data_holds(secret)?, "{secret} found in the data dir");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_that_asks_for_a_one_time_code_is_not_called_done() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("login-code.html")})).await?;
    // The password is taken and the next page asks for a code: the password field is gone, which
    // alone would pass for a sign-in.
    let r =
        c.structured("nova.guarded_login", json!({"username": "ada", "password": "correct-horse"})).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "indeterminate", "{r}");
    assert_eq!(r["reasonCode"], "guarded_commit.ambiguous_signal", "{r}");
    assert_eq!(r["actionDispatched"], true, "{r}");
    assert_eq!(r["retryAdvice"], "check_postcondition_first", "{r}");
    let said = r["message"].as_str().unwrap_or_default();
    assert!(
        said.contains("one-time code") && said.contains("not finished") && !said.contains("  "),
        "{said}"
    );
    assert!(r["urlAfter"].as_str().is_some_and(|u| u.ends_with("/code.html")), "{r}");
    let signed_in = nova.ok_facts("core.login_state")?;
    assert!(!signed_in.iter().any(|(v, _)| v == "logged_in"), "{signed_in:?}");

    // With the person's code the sign-in finishes, and is proven.
    c.structured("nova.perceive", json!({})).await?;
    let code = json!({"fields": {"input[autocomplete=one-time-code]": "246810"}});
    let done = c.structured("nova.guarded_submit_form", code).await?;
    assert_eq!(done["guardedCommit"]["verificationStatus"], "verified_success", "{done}");
    let page = c.structured("nova.read_text", json!({"selector": "#welcome"})).await?;
    assert_eq!(page["text"], "Welcome back, Ada");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn guarded_submit_form_reports_inline_validation_and_follows_the_thank_you_page() -> anyhow::Result<()>
{
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("signup.html")})).await?;
    let bad = c
        .call("nova.guarded_submit_form", json!({"fields": {"#name": "Ada", "#email": "not-an-email"}, "transitionContract": {"stabilityWindowMs": 2000}}))
        .await?;
    let bad = bad.structured_content.unwrap_or_default();
    assert_eq!(bad["guardedCommit"]["verificationStatus"], "verified_fail", "{bad}");
    let failed = &bad["guardedCommit"]["failedAssertions"][0];
    assert_eq!(failed["factKey"], "form.validationErrors");

    // A form's values may be secrets (a password, a card number): they are never stored.
    let private = "ada-private-7Qx@example.com";
    let good = c.structured("nova.guarded_submit_form", json!({"fields": {"#email": private}})).await?;
    assert_eq!(good["guardedCommit"]["verificationStatus"], "verified_success", "{good}");
    let thanks = c.structured("nova.read_text", json!({"selector": "#thanks"})).await?;
    assert_eq!(thanks["text"], "Thank you for your order");
    drop(c);
    let rows = nova.tool_rows("nova.guarded_submit_form", 2)?;
    assert!(rows[1]["args_json"].as_str().is_some_and(|a| a.contains("\"#email\":\"<redacted")), "{rows:?}");
    assert!(!nova.data_holds(private)?, "a form's value found in the data dir");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_form_is_filled_top_to_bottom_whatever_the_selectors_are_called() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("delivery.html")})).await?;
    // Named so that their alphabetical order is the page's upside down: the city is disabled until
    // a country is chosen, and the district is not on the page until the city has a name.
    let fields = json!({"#area": "Sakyo", "#city": "Kyoto", "#country": "Japan"});
    let r = c.structured("nova.guarded_submit_form", json!({"fields": fields})).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    let url = r["urlAfter"].as_str().unwrap_or_default();
    assert!(url.contains("thanks.html?country=Japan&city=Kyoto&area=Sakyo"), "{r}");

    // More fields than the bound: refused, naming the field and the bound, before anything is typed.
    c.structured("nova.navigate", json!({"url": nova.url("delivery.html")})).await?;
    let mut many: serde_json::Map<String, Value> = (0..200).map(|i| (format!("#f{i}"), json!("x"))).collect();
    many.insert("#country".into(), json!("France"));
    let err = c.call_err("nova.guarded_submit_form", json!({"fields": many})).await?;
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("fields") && err.message.contains("at most 200"), "{}", err.message);
    // No country was chosen, so the city is still closed.
    let city = c.structured("nova.type_selector", json!({"selector": "#city", "text": "Lyon"})).await?;
    assert_eq!(city["reasonCode"], "element_disabled", "{city}");

    // Fields in a shadow root and in a same-origin frame take their place in the page by the
    // elements that hold them (here the alphabetical order is a9, floor, z, code).
    c.structured("nova.navigate", json!({"url": nova.url("delivery-deep.html")})).await?;
    let fields = json!({"#a-note": "Leave at the door", "#floor-frame >>> #floor": "3",
        "#z-name": "Ada", "door-code >>> #code": "1234"});
    let saved = json!({"postconditions": {"success": {"any": [
        {"factKey": "dom.exists(#saved:visible)", "operator": "eq", "expected": true}]}}});
    let r = c
        .structured("nova.guarded_submit_form", json!({"fields": fields, "transitionContract": saved}))
        .await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    let typed = c.structured("nova.read_text", json!({"selector": "#typed"})).await?;
    assert_eq!(typed["text"], "z-name code floor a-note", "{typed}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_form_is_sent_once_the_page_has_answered_the_typing() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    // The address is made from the title 200 ms after it is typed; it is required.
    c.structured("nova.navigate", json!({"url": nova.url("slugged.html")})).await?;
    let r = c.structured("nova.guarded_submit_form", json!({"fields": {"#title": "Opening hours"}})).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    let url = r["urlAfter"].as_str().unwrap_or_default();
    assert!(url.ends_with("thanks.html?title=Opening+hours&slug=opening-hours"), "{r}");
    Ok(())
}

/// A page that saves in the background and keeps the success note of what was done before:
/// a new success message is the outcome, the note that was already there is not; a new one
/// saying what the older one still showing beside it says is the outcome too.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_success_message_beside_an_older_one_is_the_outcome() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let update = json!({"fields": {"#title": "Storefront"}, "submitSelector": "#update"});
    c.structured("nova.navigate", json!({"url": nova.url("saved-again.html")})).await?;
    let r = c.structured("nova.guarded_submit_form", update.clone()).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    let said = c.structured("nova.read_text", json!({"selector": "#messages"})).await?;
    assert_eq!(said["text"], "Image \"Storefront\" updated.");
    // Updated again, the page adds the same message beside the first, which still shows.
    c.structured("nova.navigate", json!({"url": nova.url("saved-again.html?same")})).await?;
    for n in 1..=2 {
        let r = c.structured("nova.guarded_submit_form", update.clone()).await?;
        assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "update {n}: {r}");
        let shown = c.structured("nova.read_text", json!({"selector": "#messages"})).await?;
        let said = shown["text"].as_str().unwrap_or_default();
        assert_eq!(said.matches("Image updated.").count(), n, "{shown}");
    }
    // Sent, and nothing new shows: the older note proves nothing.
    c.structured("nova.navigate", json!({"url": nova.url("saved-again.html?quiet")})).await?;
    let mut quiet = update;
    quiet["transitionContract"] = json!({"stabilityWindowMs": 1500});
    let r = c.structured("nova.guarded_submit_form", quiet).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "indeterminate", "{r}");
    let sent = c.structured("nova.read_text", json!({"selector": "#sent"})).await?;
    assert_eq!(sent["text"], "1", "sent once");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spinner_saying_the_form_is_saving_is_not_its_success_message() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    // The button shows Bootstrap's spinner, "Loading..." (or "Saving...") marked role="status",
    // longer than a success must hold, then the page refuses the title: a failure (read
    // verified_success before, on the spinner).
    for word in ["Loading", "Saving"] {
        c.structured("nova.navigate", json!({"url": nova.url(&format!("saving.html?word={word}"))})).await?;
        let r = c.structured("nova.guarded_submit_form", json!({"fields": {"#title": "Taken"}})).await?;
        assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_fail", "{word}: {r}");
        let sent = c.structured("nova.read_text", json!({"selector": "#sent"})).await?;
        assert_eq!(sent["text"], "1", "sent once");
    }
    // Saved, the success message proves it.
    c.structured("nova.navigate", json!({"url": nova.url("saving.html")})).await?;
    let r = c.structured("nova.guarded_submit_form", json!({"fields": {"#title": "Roadmap"}})).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    // Called once the message shows, not on the spinner before it.
    let said = c.structured("nova.read_text", json!({"selector": "#alerts"})).await?;
    assert_eq!(said["text"], "Page saved.", "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_form_waits_for_the_pause_a_field_declares_and_the_check_it_sends() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    // The field declares its check 600 ms after typing (htmx's `delay:600ms`); the check takes
    // 400 ms more, marked `htmx-request`, and hands the form the name it checked.
    c.structured("nova.navigate", json!({"url": nova.url("validated.html")})).await?;
    let r = c.structured("nova.guarded_submit_form", json!({"fields": {"#user": "alice"}})).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    let url = r["urlAfter"].as_str().unwrap_or_default();
    assert!(url.ends_with("thanks.html?user=alice&checked=alice"), "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_guarded_submit_that_sees_nothing_says_what_success_to_name() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("facts.html")})).await?;
    // A control outside any form that changes the page without a navigation or a success message.
    let args = |contract: Value| json!({"submitSelector": "#noop", "transitionContract": contract});
    let r = c.structured("nova.guarded_submit_form", args(json!({"stabilityWindowMs": 1500}))).await?;
    assert_eq!(r["reasonCode"], "guarded_commit.no_signal_yet", "{r}");
    assert_eq!(r["actionDispatched"], true, "{r}");
    assert_eq!(r["retryAdvice"], "check_postcondition_first", "{r}");
    let said = r["message"].as_str().unwrap_or_default();
    assert!(said.contains("within the 1500 ms window"), "{said}");
    assert!(said.contains("a navigation to a new page or a success message"), "{said}");
    assert!(said.contains("transitionContract.postconditions.success.any"), "{said}");
    let clicks = c.structured("nova.read_text", json!({"selector": "#noop"})).await?;
    assert_eq!(clicks["text"], "Nothing");

    // Named as the message says, the change proves the action.
    let named = json!({"stabilityWindowMs": 1500, "postconditions": {"success": {"any": [
        {"factKey": "dom.attr(#noop|data-n)", "operator": "eq", "expected": "2"}]}}});
    let r = c.structured("nova.guarded_submit_form", args(named)).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    assert!(r["message"].is_null(), "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn switching_model_and_workspace_is_verified_and_plan_gated_options_fail() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("picker.html")})).await?;
    let short = json!({"stabilityWindowMs": 2000, "stabilityMs": 200});

    let smart = c
        .structured("nova.guarded_switch_model", json!({"option": "Smart", "transitionContract": short}))
        .await?;
    assert_eq!(smart["guardedCommit"]["verificationStatus"], "verified_success", "{smart}");
    let shown = c.structured("nova.read_text", json!({"selector": "#model-btn"})).await?;
    assert_eq!(shown["text"], "Model: Smart");

    let pro =
        c.call("nova.guarded_switch_model", json!({"option": "Genius", "transitionContract": short})).await?;
    let pro = pro.structured_content.unwrap_or_default();
    assert_eq!(
        pro["guardedCommit"]["verificationStatus"], "verified_fail",
        "the upgrade dialog refuses it: {pro}"
    );
    assert_eq!(pro["guardedCommit"]["retryAdvice"], "safe_to_retry", "switching is idempotent");
    // While the upgrade dialog covers the page, a contract that wants no overlay blocks.
    let covered = c
        .structured(
            "nova.click_selector",
            json!({"selector": "#model-btn", "transitionContract": {
                "preconditions": {"all": [{"factKey": "overlay.present", "operator": "eq", "expected": false}]}}}),
        )
        .await?;
    assert_eq!(covered["reasonCode"], "guarded_commit.precondition_failed", "{covered}");
    assert_eq!(covered["guardedCommit"]["failedAssertions"][0]["observed"], true);
    c.structured("nova.click_selector", json!({"selector": "#close-upgrade"})).await?;

    let team = c
        .structured("nova.guarded_switch_sandbox", json!({"option": "Team", "transitionContract": short}))
        .await?;
    assert_eq!(team["guardedCommit"]["verificationStatus"], "verified_success", "{team}");
    let locked = c
        .call("nova.guarded_switch_sandbox", json!({"option": "Enterprise", "transitionContract": short}))
        .await?;
    let locked = locked.structured_content.unwrap_or_default();
    assert_eq!(locked["guardedCommit"]["verificationStatus"], "verified_fail", "{locked}");
    let missing = c
        .call("nova.guarded_switch_model", json!({"option": "Nonexistent", "transitionContract": short}))
        .await?;
    let missing = missing.structured_content.unwrap_or_default();
    assert_eq!(
        (missing["reasonCode"].clone(), missing["actionDispatched"].clone()),
        (json!("guarded_commit.dispatch_prepare_rejected"), json!(false)),
        "{missing}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_picker_whose_list_shows_a_moment_later_is_waited_for_and_read_by_its_value()
-> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("picker-late.html")})).await?;
    let switches = async || -> anyhow::Result<Value> {
        Ok(c.structured("nova.read_text", json!({"selector": "#switches"})).await?["text"].clone())
    };
    // The input combobox's list is built 120 ms after the click: the option is waited for,
    // chosen once, and the choice is proven by the input's value (it has no text).
    let smart = c.structured("nova.guarded_switch_model", json!({"option": "Smart"})).await?;
    assert_eq!(smart["guardedCommit"]["verificationStatus"], "verified_success", "{smart}");
    assert_eq!(smart["element"], "combobox \"Model\" -> option \"Smart\"", "{smart}");
    assert_eq!(switches().await?, "1");
    // An option the list does not have: nothing is chosen, and the reply says how long it looked.
    let missing = c.call("nova.guarded_switch_model", json!({"option": "Genius"})).await?;
    let missing = missing.structured_content.unwrap_or_default();
    assert_eq!(
        (missing["reasonCode"].clone(), missing["actionDispatched"].clone()),
        (json!("guarded_commit.dispatch_prepare_rejected"), json!(false)),
        "{missing}"
    );
    let said = missing["message"].as_str().unwrap_or_default();
    assert!(said.contains("no visible option \"Genius\" within 1500 ms"), "{said}");
    assert_eq!(switches().await?, "1");
    Ok(())
}

const ACME: &str = r##"{
  "name": "acme-chat",
  "urlContains": "acme-chat.html",
  "chat": {"send": "#acme-go", "messages": ".acme-turn", "assistant": ".acme-turn.bot"},
  "login": {"loggedIn": ".acme-logout"},
  "picker": {"model": "#acme-model", "modelSelected": "#acme-model", "modelOptions": "#acme-model option"},
  "account": {"displayName": ".acme-user", "email": ".acme-mail", "plan": ".acme-plan"}
}"##;

#[tokio::test(flavor = "multi_thread")]
async fn a_site_adapter_file_teaches_nova_a_chat_and_its_core_signals() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let short = json!({"stabilityWindowMs": 1500, "stabilityMs": 100});
    c.structured("nova.navigate", json!({"url": nova.url("acme-chat.html")})).await?;

    // The generic heuristics find the composer and the send button but not the replies.
    let generic = send(&c, "hallo", Some(short.clone())).await?;
    assert_eq!(generic["adapter"], "generic");
    assert_eq!(generic["guardedCommit"]["verificationStatus"], "indeterminate", "{generic}");

    // A data file in the data dir, picked up without a restart.
    let dir = nova.data.join("adapters");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("acme.json"), ACME)?;
    let taught = send(&c, "hallo", Some(short.clone())).await?;
    assert_eq!(taught["adapter"], "acme-chat");
    assert_eq!(taught["guardedCommit"]["verificationStatus"], "verified_success", "{taught}");

    // core.* signals are collected in the page through the adapter; preconditions read them.
    let core =
        |key: &str, op: &str, expected: Value| json!({"factKey": key, "operator": op, "expected": expected});
    let all = vec![
        core("core.account.display_name", "eq", json!("Ada Lovelace")),
        core("core.account.email", "eq", json!("ada@example.test")),
        core("core.plan.label", "eq", json!("Pro plan")),
        core("core.plan.tier", "eq", json!("pro")),
        core("core.subscription.active", "eq", json!(true)),
        core("core.login_state", "eq", json!("logged_in")),
        core("core.page.type", "eq", json!("chat")),
        core("core.ui.language", "eq", json!("de")),
        core("core.ui.theme", "eq", json!("dark")),
        core("core.model.active", "eq", json!("Turbo")),
        core("core.models.available", "contains", json!("Classic")),
    ];
    let contract = |pre: Vec<Value>| {
        json!({
            "preconditions": {"all": pre},
            "postconditions": {"success": {"all": [
                {"factKey": "dom.attr(#noop|data-done)", "operator": "eq", "expected": "1"}]}},
            "stabilityWindowMs": 1500, "stabilityMs": 0
        })
    };
    let ok = c
        .structured("nova.click_selector", json!({"selector": "#noop", "transitionContract": contract(all)}))
        .await?;
    assert_eq!(ok["guardedCommit"]["preconditionVerdict"], "satisfied", "{ok}");
    assert_eq!(ok["guardedCommit"]["verificationStatus"], "verified_success", "{ok}");

    let wrong = c
        .structured(
            "nova.click_selector",
            json!({"selector": "#noop", "transitionContract": contract(vec![core("core.plan.tier", "eq", json!("team"))])}),
        )
        .await?;
    assert_eq!(wrong["reasonCode"], "guarded_commit.precondition_failed", "{wrong}");
    let failed = &wrong["guardedCommit"]["failedAssertions"][0];
    assert_eq!(
        (failed["factKey"].clone(), failed["observed"].clone()),
        (json!("core.plan.tier"), json!("pro"))
    );

    // Unknown core keys fail fast, before anything reaches the page.
    let unknown = c
        .call_err(
            "nova.click_selector",
            json!({"selector": "#noop", "transitionContract": contract(vec![core("core.mood", "eq", json!("happy"))])}),
        )
        .await?;
    assert_eq!(unknown.code.0, -32602);
    assert!(unknown.message.contains("core.mood"), "{}", unknown.message);

    // The model picker from the adapter: a <select>, verified by its value.
    let switched = c.structured("nova.guarded_switch_model", json!({"option": "Classic"})).await?;
    assert_eq!(switched["guardedCommit"]["verificationStatus"], "verified_success", "{switched}");
    let bad = c
        .structured(
            "nova.guarded_switch_model",
            json!({"option": "Nonexistent", "transitionContract": {"stabilityWindowMs": 800}}),
        )
        .await?;
    assert_ne!(bad["guardedCommit"]["verificationStatus"], "verified_success", "{bad}");
    Ok(())
}

/// A server-rendered form that posts back to its own address: the new page alone proves
/// nothing, since a server answers so after saving and after refusing the input. With a success
/// message the save is verified; with none it is only likely, and the reply says what to read.
#[tokio::test(flavor = "multi_thread")]
async fn a_form_posted_back_to_its_own_address_is_verified_only_by_a_success_message() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let url = nova.url("postback");
    c.structured("nova.navigate", json!({"url": url})).await?;
    let refused = c.structured("nova.guarded_submit_form", json!({"fields": {"#name": "taken"}})).await?;
    assert_eq!(refused["guardedCommit"]["verificationStatus"], "verified_success", "{refused}");
    assert_eq!(
        (refused["ok"].clone(), refused["verifyState"].clone()),
        (json!(true), json!("likely")),
        "{refused}"
    );
    assert_eq!(refused["urlAfter"], url.as_str(), "{refused}");
    let said = refused["message"].as_str().unwrap_or_default();
    assert!(said.contains("posted back to the address it is on") && said.contains(&url), "{said}");
    let page = c.structured("nova.read_text", json!({"selector": ".oops"})).await?;
    assert_eq!(page["text"], "That name is taken.");

    let saved = c.structured("nova.guarded_submit_form", json!({"fields": {"#name": "Ada"}})).await?;
    assert_eq!(
        (saved["ok"].clone(), saved["verifyState"].clone()),
        (json!(true), json!("verified")),
        "{saved}"
    );
    assert!(!saved["message"].as_str().unwrap_or_default().contains("posted back"), "{saved}");
    let page = c.structured("nova.read_text", json!({"selector": ".alert-success"})).await?;
    assert_eq!(page["text"], "Saved Ada.");

    // Support staff reading the store see the caveat the agent was told, on that call alone.
    let refused_call = logged(&nova, "guarded_submit_form", &refused["guardedCommit"]["transitionId"])?;
    assert_eq!(
        (refused_call["outcome"].clone(), refused_call["reason"].clone()),
        (json!("verified_success"), json!("post_back_unconfirmed")),
        "{refused_call}"
    );
    let saved_call = logged(&nova, "guarded_submit_form", &saved["guardedCommit"]["transitionId"])?;
    assert_eq!(
        (saved_call["outcome"].clone(), saved_call["reason"].clone()),
        (json!("verified_success"), Value::Null)
    );
    for (call, grade, caveat) in
        [(&refused_call, "likely", json!("post_back_unconfirmed")), (&saved_call, "verified", Value::Null)]
    {
        let id = call["callId"].as_str().unwrap_or_default();
        let out = nova.cli().args(["log", "show", id, "--format", "json"]).output()?;
        anyhow::ensure!(out.status.success(), "nova log show: {}", String::from_utf8_lossy(&out.stderr));
        let shown: Value = serde_json::from_slice(&out.stdout)?;
        assert_eq!(
            (shown["evidence"]["grade"].clone(), shown["transition"]["caveat"].clone()),
            (json!(grade), caveat),
            "{shown}"
        );
    }
    // The activity report carries it too (its table says it in words).
    let dir = tempfile::tempdir()?;
    let report = dir.path().join("report.html");
    let out = nova.cli().args(["report", "--out"]).arg(&report).output()?;
    anyhow::ensure!(out.status.success(), "nova report: {}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&report)?;
    let data =
        html.split(r#"id="nova-data">"#).nth(1).and_then(|d| d.split("</script>").next()).unwrap_or_default();
    let data: Value = serde_json::from_str(data)?;
    let caveats: Vec<(&Value, &Value)> = data["transitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| (&t["transitionId"], &t["caveat"]))
        .collect();
    assert!(
        caveats.contains(&(&refused["guardedCommit"]["transitionId"], &json!("post_back_unconfirmed")))
            && caveats.contains(&(&saved["guardedCommit"]["transitionId"], &Value::Null)),
        "{caveats:?}"
    );
    Ok(())
}

/// The call of `tool` `nova log` lists for the guarded transition `transition` (the row is written as the
/// call ends, so it is waited for).
fn logged(nova: &Nova, tool: &str, transition: &Value) -> anyhow::Result<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let rows = nova.log_rows(&["--tool", tool])?;
        if let Some(row) = rows.iter().find(|r| r.transition_id.as_deref() == transition.as_str()) {
            return Ok(serde_json::to_value(row)?);
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "no call of transition {transition} in {rows:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Each convention of the generic adapter's form section (`shared/adapters/generic.json`), shown
/// in its framework's own markup once a form is sent (`conventions.html`, one sample each), is
/// read as what it is: a success message a success, an error note or a field error a failure
/// naming it.
#[tokio::test(flavor = "multi_thread")]
async fn every_form_convention_is_read_from_its_frameworks_own_markup() -> anyhow::Result<()> {
    let root = nova_e2e::workspace_root();
    let page = std::fs::read_to_string(root.join("tests/fixtures/conventions.html"))?;
    // An attribute's value as the page reads it (the entities a `from` may hold decoded).
    let attr = |tag: &str, name: &str| {
        let after = tag.split(&format!("{name}=\"")).nth(1).unwrap_or_default();
        let raw = after.split('"').next().unwrap_or_default();
        [("&quot;", "\""), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")]
            .iter()
            .fold(raw.to_owned(), |text, (entity, c)| text.replace(entity, c))
    };
    let samples: Vec<(String, String)> =
        page.split("<template ").skip(1).map(|t| (attr(t, "data-kind"), attr(t, "data-from"))).collect();
    let generic: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("shared/adapters/generic.json"))?)?;
    let mut unshown = Vec::new();
    for kind in ["success", "errorNote", "validationError"] {
        for convention in generic["form"][kind].as_array().into_iter().flatten() {
            let from = convention["from"].as_str().unwrap_or_default();
            if !samples.iter().any(|(k, f)| k == kind && f == from) {
                unshown.push(format!("{kind}: {from}"));
            }
        }
    }
    assert!(unshown.is_empty(), "conventions with no sample in conventions.html: {unshown:#?}");

    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let mut misread = Vec::new();
    for (n, (kind, from)) in samples.iter().enumerate() {
        c.structured("nova.navigate", json!({"url": nova.url(&format!("conventions.html?n={n}"))})).await?;
        let r = c.structured("nova.guarded_submit_form", json!({"fields": {"#name": "Ada"}})).await?;
        let status = r["guardedCommit"]["verificationStatus"].as_str().unwrap_or_default().to_owned();
        let failed = r["guardedCommit"]["failedAssertions"].as_array().cloned().unwrap_or_default();
        let names = |key: &str| failed.iter().any(|f| f["factKey"] == key);
        let read_as_it_is = match (status.as_str(), kind.as_str()) {
            ("verified_success", "success") => true,
            ("verified_fail", "errorNote") => names("form.errorNote"),
            ("verified_fail", "validationError") => names("form.validationErrors"),
            _ => false,
        };
        if !read_as_it_is {
            let keys: Vec<&Value> = failed.iter().map(|f| &f["factKey"]).collect();
            misread.push(format!("{kind} sample {n} ({from}): {status} {keys:?}"));
        }
    }
    assert!(misread.is_empty(), "{} of {} samples misread: {misread:#?}", misread.len(), samples.len());
    Ok(())
}

/// A dialog's form sent by a button in the dialog's footer (MLflow's "Create"), beside a search
/// form with a button of its own; badges marked `role="status"` drawn again on the new view.
#[tokio::test(flavor = "multi_thread")]
async fn a_dialog_form_is_sent_by_its_own_footer_button_and_redrawn_badges_or_a_spinner_prove_nothing()
-> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let read = async |selector: &str| -> anyhow::Result<Value> {
        Ok(c.structured("nova.read_text", json!({"selector": selector})).await?["text"].clone())
    };
    // No button near the form is named like one that sends it: refused, naming the way out,
    // before anything is typed (the search form's button was pressed before).
    c.structured("nova.navigate", json!({"url": nova.url("dialog-form.html?nobutton")})).await?;
    let err = c.call_err("nova.guarded_submit_form", json!({"fields": {"#name": "churn"}})).await?;
    assert_eq!(err.code.0, -32602);
    assert!(
        err.message.contains("submitSelector") && err.message.contains("no submit button of its own"),
        "{}",
        err.message
    );
    assert_eq!(read("#searched").await?, "0", "the search form was not sent");
    let typed = c.structured("nova.perceive", json!({})).await?;
    assert!(!typed["elements"].to_string().contains("churn"), "nothing typed: {}", typed["elements"]);

    // The footer's "Create", disabled until the name is typed, sends it. The view drawn again
    // shows the badges again, new elements saying what the old ones did: no success message
    // (read verified_success before), so the outcome is unproven until the agent names it.
    c.structured("nova.navigate", json!({"url": nova.url("dialog-form.html")})).await?;
    let quiet = json!({"fields": {"#name": "churn"}, "transitionContract": {"stabilityWindowMs": 1500}});
    let r = c.structured("nova.guarded_submit_form", quiet).await?;
    assert_eq!(r["element"], "button \"Create\"", "{r}");
    assert_eq!(r["guardedCommit"]["verificationStatus"], "indeterminate", "{r}");
    assert_eq!(read("#list").await?, "churn", "sent once");
    assert_eq!(read("#searched").await?, "0", "the search form was not sent");
    // A spinner marked role="status" while the view loads says the page is at work, not what
    // it did (read verified_success before: new words, held past the success's hold).
    c.structured("nova.navigate", json!({"url": nova.url("dialog-form.html?loading")})).await?;
    let quiet = json!({"fields": {"#name": "churn"}, "transitionContract": {"stabilityWindowMs": 2500}});
    let r = c.structured("nova.guarded_submit_form", quiet).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "indeterminate", "{r}");
    assert_eq!(read("#list").await?, "churn", "sent once");
    // Named as the message says, the saved entry proves it.
    c.structured("nova.navigate", json!({"url": nova.url("dialog-form.html?again")})).await?;
    let named = json!({"fields": {"#name": "retention"}, "transitionContract": {"postconditions": {"success":
        {"any": [{"factKey": "dom.exists(#list li)", "operator": "eq", "expected": true}]}}}});
    let r = c.structured("nova.guarded_submit_form", named).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    // So does any change named that did not hold before, beside the badges that always did
    // (read indeterminate before: the badges made the whole success set stale).
    c.structured("nova.navigate", json!({"url": nova.url("dialog-form.html?counted")})).await?;
    let counted = json!({"fields": {"#name": "retention"}, "transitionContract": {"postconditions": {"success":
        {"any": [{"factKey": "dom.count(#list li)", "operator": "eq", "expected": 1}]}}}});
    let r = c.structured("nova.guarded_submit_form", counted).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    Ok(())
}
