//! Acting on pages: navigate, click and type in real Chromium.

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use serde_json::{Value, json};

async fn text_of(c: &nova_e2e::Client, selector: &str) -> anyhow::Result<String> {
    let r = c.structured("nova.read_text", json!({"selector": selector})).await?;
    Ok(r["text"].as_str().unwrap_or_default().to_owned())
}

/// Whether a call's timings say the page made it wait (for motion to end, or a young page's
/// first screen).
fn waited(timings: &Value) -> bool {
    timings["browser"].as_array().into_iter().flatten().any(|r| r.get("settleMs").is_some())
}

/// Runs `attempt` (each time on a fresh page) until the timings it returns say the call waited,
/// four times at most, and fails with every timing seen if it never did: on a loaded machine a
/// call can come after what it should wait for has already ended, and then has nothing to wait
/// for. Whatever else `attempt` asserts holds on every try.
async fn until_it_waits<F, Fut>(what: &str, mut attempt: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Value>>,
{
    let mut unwaited = Vec::new();
    for _ in 0..4 {
        let timings = attempt().await?;
        if waited(&timings) {
            return Ok(());
        }
        unwaited.push(timings);
    }
    panic!("{what}: {unwaited:?}")
}

#[tokio::test(flavor = "multi_thread")]
async fn navigate_reports_urls_and_failures() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let first = c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    assert!(first["ok"] == true, "{first}");
    assert_eq!(first["title"], "Basic fixture");
    let second = c.structured("nova.navigate", json!({"url": nova.url("page2.html")})).await?;
    assert_eq!(second["status"], "ok");
    assert_eq!(second["title"], "Second page");
    assert!(second["urlBefore"].as_str().unwrap_or_default().ends_with("/basic.html"));
    assert!(second["url"].as_str().unwrap_or_default().ends_with("/page2.html"));
    assert!(second["navEpoch"].as_u64() > first["navEpoch"].as_u64());

    // Nothing listens on a port just freed (port 9 would be refused by Firefox's port blocklist
    // before any load starts).
    let closed = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let failed = c.call("nova.navigate", json!({"url": format!("http://127.0.0.1:{closed}/")})).await?;
    assert_eq!(failed.is_error, Some(true), "{:?}", failed.structured_content);
    assert_eq!(failed.structured_content.unwrap_or_default()["reasonCode"], "navigation_failed");
    Ok(())
}

/// A page that sends the tab elsewhere by script, to a server slow to answer: the agent's
/// navigation replaces that load, and the browser reporting the replaced load as aborted
/// (Chromium's `net::ERR_ABORTED`) is not the agent's navigation failing.
#[tokio::test(flavor = "multi_thread")]
async fn a_navigation_that_replaces_a_load_under_way_is_not_failed_by_its_abort() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    for _ in 0..3 {
        let leaving = c.structured("nova.navigate", json!({"url": nova.url("leaving.html")})).await?;
        assert_eq!(leaving["title"], "Leaving", "{leaving}");
        // The page's own load of `/slow` is under way (it answers after five seconds).
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let r = c.call("nova.navigate", json!({"url": nova.url("page2.html")})).await?;
        let v = r.structured_content.unwrap_or_default();
        assert_eq!(r.is_error, Some(false), "{v}");
        assert_eq!(v["title"], "Second page", "{v}");
        assert!(v["url"].as_str().unwrap_or_default().ends_with("/page2.html"), "{v}");
    }
    // A click on a link there replaces that load the same way, and its reply follows the link.
    c.structured("nova.navigate", json!({"url": nova.url("leaving.html")})).await?;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let click = c.structured("nova.click_selector", json!({"selector": "#next"})).await?;
    assert_eq!(click["navigated"], true, "{click}");
    assert!(click["urlAfter"].as_str().unwrap_or_default().ends_with("/page2.html"), "{click}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn click_dispatches_only_on_visible_enabled_uncovered_elements() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;

    let ok = c.structured("nova.click_selector", json!({"selector": "#counter"})).await?;
    assert_eq!((ok["ok"].clone(), ok["actionDispatched"].clone()), (json!(true), json!(true)));
    assert_eq!(ok["element"], "button \"Clicked 0\"");
    assert_eq!(text_of(&c, "#counter").await?, "Clicked 1");

    for (selector, reason) in
        [("#disabled", "element_disabled"), ("#covered", "element_covered"), ("#nope", "element_not_found")]
    {
        let r = c.call("nova.click_selector", json!({"selector": selector})).await?;
        let s = r.structured_content.unwrap_or_default();
        assert_eq!(r.is_error, Some(true), "{selector}");
        assert_eq!(s["reasonCode"], reason, "{selector}: {s}");
        assert_eq!(s["actionDispatched"], false, "{selector}: refused before dispatch");
    }
    assert_eq!(text_of(&c, "#status").await?, "idle", "the covered button never received the click");

    c.structured("nova.click_selector", json!({"selector": "shadow-card >>> #add"})).await?;
    assert_eq!(text_of(&c, "shadow-card >>> #added").await?, "1");
    c.structured("nova.click_selector", json!({"selector": "iframe#frame >>> #frame-btn"})).await?;
    assert_eq!(text_of(&c, "iframe#frame >>> #frame-btn").await?, "Frame clicked");

    let link = c.structured("nova.click_selector", json!({"selector": "nav a"})).await?;
    assert_eq!(link["actionDispatched"], true);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let page = c.structured("nova.perceive", json!({})).await;
        if page.as_ref().is_ok_and(|p| p["title"] == "Second page") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "link click did not navigate: {page:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_double_click_presses_twice_as_a_hand_does_and_never_on_a_commit_point() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("double.html")})).await?;

    // One click selects and opens nothing; its events count one press, as a mouse's do.
    let one = c.structured("nova.click_selector", json!({"selector": "#report"})).await?;
    assert_eq!(one["method"], "click", "{one}");
    assert_eq!(text_of(&c, "#log").await?, "mousedown:1 mouseup:1 click:1");
    assert_eq!(text_of(&c, "#opened").await?, "Nothing open");

    // The page times the presses itself: they come apart, the second counting two, then dblclick.
    c.structured("nova.click_selector", json!({"selector": "#notes"})).await?;
    let two =
        c.structured("nova.click_selector", json!({"selector": "#report", "doubleClick": true})).await?;
    assert_eq!(
        (two["actionDispatched"].clone(), two["method"].clone()),
        (json!(true), json!("dblclick")),
        "{two}"
    );
    assert_eq!(text_of(&c, "#opened").await?, "Opened report.txt");
    let log = text_of(&c, "#log").await?;
    assert!(log.ends_with("mousedown:1 mouseup:1 click:1 mousedown:2 mouseup:2 click:2 dblclick:2"), "{log}");

    // The browser's own dblclick event, guarded by a contract that sees what it did.
    let contract = json!({
        "actionKind": "custom",
        "postconditions": {"success": {"all": [
            {"factKey": "dom.text(#title)", "operator": "contains", "expected": "Renamed (detail 2)"}]}},
        "stabilityWindowMs": 3000,
        "stabilityMs": 200
    });
    let r = c
        .call(
            "nova.click_selector",
            json!({"selector": "#title", "doubleClick": true, "transitionContract": contract}),
        )
        .await?;
    let r = r.structured_content.unwrap_or_default();
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");

    // A commit point pressed twice could commit twice: refused, whether guarded or not.
    let r = c.call("nova.click_selector", json!({"selector": "#delete", "doubleClick": true})).await?;
    let s = r.structured_content.unwrap_or_default();
    assert_eq!(r.is_error, Some(true), "{s}");
    assert_eq!(
        (s["reasonCode"].clone(), s["actionDispatched"].clone()),
        (json!("double_click_commit_point"), json!(false)),
        "{s}"
    );
    assert_eq!(text_of(&c, "#deleted").await?, "0", "nothing was pressed");
    Ok(())
}

/// Bit of `observations.signal_flags`: a navigation committed.
const NAVIGATION_COMMITTED: i64 = 1 << 5;

#[tokio::test(flavor = "multi_thread")]
async fn a_raw_click_or_keystroke_that_leaves_the_page_reports_and_stores_where_it_landed()
-> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let start = nova.url("leave.html");
    let second = nova.url("page2.html");

    // A link through a server redirect: the reply comes once the landing page is loaded.
    c.structured("nova.navigate", json!({"url": start})).await?;
    let r = c.structured("nova.click_selector", json!({"selector": "#via-redirect"})).await?;
    assert_eq!((r["urlBefore"].clone(), r["urlAfter"].clone()), (json!(start), json!(second)), "{r}");
    assert_eq!((r["navigated"].clone(), r["loadComplete"].clone()), (json!(true), json!(true)), "{r}");
    let page = c.structured("nova.perceive", json!({})).await?;
    assert_eq!(page["title"], "Second page", "the next read sees the landing page at once: {page}");
    let rows = nova.tool_rows("nova.click_selector", 1)?;
    let row = &rows[0];
    assert_eq!((row["url_before"].clone(), row["url_after"].clone()), (json!(start), json!(second)), "{row}");
    assert_ne!(row["signal_flags"].as_i64().unwrap_or(0) & NAVIGATION_COMMITTED, 0, "{row}");
    assert!(row["nav_epoch_after"].as_i64() > row["nav_epoch_before"].as_i64(), "{row}");

    // A script that sets location from the click handler.
    c.structured("nova.navigate", json!({"url": start})).await?;
    let r = c.structured("nova.click_selector", json!({"selector": "#scripted"})).await?;
    assert_eq!(r["urlAfter"], json!(format!("{second}?from=script")), "{r}");
    assert_eq!(r["navigated"], true, "{r}");

    // Enter in a field whose keydown handler navigates (no form: not a commit point).
    c.structured("nova.navigate", json!({"url": start})).await?;
    let r = c
        .structured("nova.type_selector", json!({"selector": "#jump", "text": "ten", "pressEnter": true}))
        .await?;
    assert_eq!(r["urlAfter"], json!(format!("{second}?q=ten")), "{r}");
    assert_eq!(r["navigated"], true, "{r}");
    let typed = nova.tool_rows("nova.type_selector", 1)?;
    assert_eq!(typed[0]["url_after"], json!(format!("{second}?q=ten")), "{}", typed[0]);

    // Staying on the document: a fragment link and a plain button.
    c.structured("nova.navigate", json!({"url": start})).await?;
    // The document stays; Firefox moves to the fragment after the reply (docs/browsers.md).
    let same_document = |r: &serde_json::Value| {
        r["urlAfter"].as_str().is_some_and(|u| u.split('#').next() == Some(start.as_str()))
    };
    let r = c.structured("nova.click_selector", json!({"selector": "#hash"})).await?;
    assert!(same_document(&r), "{r}");
    assert!(r.get("navigated").is_none() && r.get("navigationStarted").is_none(), "{r}");
    let r = c.structured("nova.click_selector", json!({"selector": "#stay"})).await?;
    assert_eq!(r["urlAfter"], json!(format!("{start}#below")), "{r}");
    assert!(r.get("navigated").is_none(), "{r}");
    let rows = nova.tool_rows("nova.click_selector", 4)?;
    let last = rows.last().cloned().unwrap_or_default();
    assert_eq!(last["signal_flags"].as_i64().unwrap_or(0) & NAVIGATION_COMMITTED, 0, "{last}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn typing_works_in_plain_controlled_and_contenteditable_fields() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;

    let plain = c.structured("nova.type_selector", json!({"selector": "#plain", "text": "hello"})).await?;
    assert_eq!((plain["readback"].clone(), plain["actionDispatched"].clone()), (json!("hello"), json!(true)));
    let appended = c
        .structured("nova.type_selector", json!({"selector": "#plain", "text": " world", "clear": false}))
        .await?;
    assert_eq!(appended["readback"], "hello world");

    let controlled =
        c.structured("nova.type_selector", json!({"selector": "#controlled", "text": "react me"})).await?;
    assert_eq!(controlled["ok"], true);
    assert_eq!(text_of(&c, "#mirror").await?, "react me", "the framework saw real input events");

    let editor =
        c.structured("nova.type_selector", json!({"selector": "#editor", "text": "rich text"})).await?;
    assert_eq!(editor["method"], "contenteditable");
    assert_eq!(text_of(&c, "#editor").await?, "rich text");
    assert_ne!(text_of(&c, "#editor-events").await?, "0", "the editor saw input events");

    let framed = c
        .structured("nova.type_selector", json!({"selector": "iframe#frame >>> input", "text": "a@b.c"}))
        .await?;
    assert_eq!(framed["readback"], "a@b.c");

    let short = c.structured("nova.type_selector", json!({"selector": "#short", "text": "abcdef"})).await?;
    assert_eq!(short["readback"], "abc");
    assert!(
        short["warnings"].as_array().is_some_and(|w| !w.is_empty()),
        "maxlength truncation is reported: {short}"
    );

    let readonly = c.call("nova.type_selector", json!({"selector": "#counter", "text": "x"})).await?;
    assert_eq!(readonly.structured_content.unwrap_or_default()["reasonCode"], "element_not_editable");
    Ok(())
}

/// An editor that reads an EditContext (CodeMirror 6 in Chromium: Prefect's JSON fields) hears
/// neither editing commands nor its element's text changing: what was typed showed on the page
/// while the editor held nothing, and its form refused it.
#[tokio::test(flavor = "multi_thread")]
async fn typing_reaches_an_editor_that_reads_an_edit_context() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("edit-context.html")})).await?;
    let method =
        if text_of(&c, "#through").await? == "EditContext" { "edit_context" } else { "contenteditable" };

    let typed =
        c.structured("nova.type_selector", json!({"selector": "#editor", "text": "{\"retries\": 3"})).await?;
    assert_eq!(typed["method"], method, "{typed}");
    assert_eq!(text_of(&c, "#held").await?, "{\"retries\": 3", "the editor holds what was typed");
    let more = json!({"selector": "#editor", "text": "}", "clear": false});
    c.structured("nova.type_selector", more).await?;
    assert_eq!(text_of(&c, "#held").await?, "{\"retries\": 3}", "appended at its end");
    c.structured("nova.type_selector", json!({"selector": "#editor", "text": "7"})).await?;
    assert_eq!(text_of(&c, "#held").await?, "7", "cleared first");

    let r = c.structured("nova.guarded_submit_form", json!({"fields": {"#editor": "42"}})).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    assert_eq!(text_of(&c, "#alerts").await?, "Saved 42.");
    Ok(())
}

/// A rich text editor that keeps its own model of the text (Draft.js: Wagtail's Draftail) takes
/// typed text from `textInput` and draws its element again from the model: typed with the
/// editing command alone it never heard the text, and the fallback that sets its element's text
/// was drawn over (Wagtail saved an empty body). The text is announced, its line breaks in it; a
/// plain editable region gets its lines from the browser's editing commands. The
/// editor is named by the label of the hidden field it stands for (not by a field a person
/// sees beside it), and its line shows what it holds as its value, not as its name. The reply
/// waits for such an editor to draw the text, so its readback is what the editor holds; one
/// that draws later than that is said to be early.
#[tokio::test(flavor = "multi_thread")]
async fn a_rich_text_editor_with_a_model_of_its_own_gets_each_line_once() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("model-editor.html")})).await?;
    let lines = |page: &Value| -> Vec<String> {
        page["elements"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| l.as_str().map(str::to_owned))
            .collect()
    };
    let page = c.structured("nova.perceive", json!({})).await?;
    assert!(lines(&page).iter().any(|l| l.ends_with(r#" textbox "Notes""#)), "{page}");
    // Beside a text area a person sees, an editor is named by its placeholder.
    assert!(lines(&page).iter().any(|l| l.ends_with(r#" textbox "Jot something down""#)), "{page}");
    assert_eq!(lines(&page).iter().filter(|l| l.contains(r#""Reply""#)).count(), 1, "{page}");

    let typed = json!({"selector": "#rich", "text": "Open daily from 9 to 5.\nClosed on Sundays."});
    let r = c.structured("nova.type_selector", typed).await?;
    assert_eq!(r["method"], "contenteditable", "{r}");
    // It draws a moment later: the reply waits for it.
    let early = |r: &Value| r["warnings"].to_string().contains("did not show it yet");
    assert!(!early(&r), "{r}");
    assert_eq!(r["readback"], "Open daily from 9 to 5.\nClosed on Sundays.", "{r}");
    assert_eq!(text_of(&c, "#held").await?, r#"["Open daily from 9 to 5.","Closed on Sundays."]"#);
    let more = json!({"selector": "#rich", "text": "\nHolidays 10 to 2.", "clear": false});
    c.structured("nova.type_selector", more).await?;
    let held = r#"["Open daily from 9 to 5.","Closed on Sundays.","Holidays 10 to 2."]"#;
    assert_eq!(text_of(&c, "#held").await?, held, "appended on a new line");
    let page = c.structured("nova.perceive", json!({})).await?;
    let shown = r#" textbox "Notes" value="Open daily from 9 to 5. Closed on Sundays. Holidays 10 to 2.""#;
    assert!(lines(&page).iter().any(|l| l.ends_with(shown)), "the editor draws what it holds: {page}");

    let r =
        c.structured("nova.type_selector", json!({"selector": "#plain", "text": "first\nsecond"})).await?;
    assert_eq!(r["method"], "contenteditable", "{r}");
    assert!(!early(&r), "{r}");
    let page = c.structured("nova.perceive", json!({})).await?;
    assert!(
        lines(&page).iter().any(|l| l.ends_with(r#" textbox "Scratch" value="first second""#)),
        "a plain editable region holds both lines: {page}"
    );
    let r = c.structured("nova.read_text", json!({"selector": "#plain"})).await?;
    assert_eq!(r["text"].as_str().map(|t| t.lines().count()), Some(2), "on two lines: {r}");

    // Guarded, too: the watch is armed and the report waits for the editor to draw.
    let contract = json!({"postconditions": {"success": {"all": [
        {"factKey": "dom.text(#held)", "operator": "contains", "expected": "Weekends"}]}}});
    let typed = json!({"selector": "#rich", "text": "\nWeekends closed.", "clear": false, "transitionContract": contract});
    let r = c.structured("nova.type_selector", typed).await?;
    assert!(!early(&r) && r["readback"].as_str().is_some_and(|t| t.ends_with("\nWeekends closed.")), "{r}");

    // An editor that draws later than the reply waits: the readback is told to be early.
    let r = c.structured("nova.type_selector", json!({"selector": "#slow", "text": "Bakery"})).await?;
    assert!(early(&r) && !r["readback"].to_string().contains("Bakery"), "{r}");
    Ok(())
}

/// A form in a modal dialog whose fields keep what was typed only once they are left (Fava's
/// Svelte comboboxes): in a window without the focus (headless), moving the focus on announced
/// nothing to the field left, and the entry was saved without them. A selector that also
/// matches the page's own field behind the dialog means the dialog's: the page behind is inert,
/// and Nova typed into it (a person cannot); it is refused when only that field matches.
#[tokio::test(flavor = "multi_thread")]
async fn a_modal_form_gets_what_was_typed_into_fields_that_keep_it_once_left() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("modal-entry.html")})).await?;
    let fields =
        json!({"input[placeholder=\"Payee\"]": "Bakery", "input[placeholder=\"Narration\"]": "Bread"});
    // Only the page's filter matches: refused, as a person cannot reach it.
    let behind = c.call("nova.type_selector", json!({"selector": "#filter", "text": "Bakery"})).await?;
    let behind = behind.structured_content.unwrap_or_default();
    assert_eq!(behind["reasonCode"], "element_covered", "{behind}");
    assert!(behind["message"].as_str().is_some_and(|m| m.contains("behind the modal dialog")), "{behind}");

    let r = c.structured("nova.guarded_submit_form", json!({"fields": fields})).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    assert_eq!(text_of(&c, "#stored").await?, "Bakery: Bread", "what the fields kept");
    assert_eq!(text_of(&c, "#filtered").await?, "nobody", "the filter behind the dialog is untouched");
    Ok(())
}

/// A page's own modal dialog (marked `aria-modal`, drawn over a backdrop; the page behind it is
/// not inert): a selector that also matches the page's field behind it means the dialog's. The
/// field behind stays reachable once the dialog closes, and is refused while the backdrop
/// covers it, for the backdrop and not for the mark.
#[tokio::test(flavor = "multi_thread")]
async fn a_selector_means_the_match_inside_a_dialog_marked_modal() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("modal-marked.html")})).await?;
    let r = c
        .structured(
            "nova.type_selector",
            json!({"selector": "input[placeholder=\"Payee\"]", "text": "Bakery"}),
        )
        .await?;
    assert_eq!(r["readback"], "Bakery", "{r}");
    assert_eq!(text_of(&c, "#stored").await?, "Bakery", "the dialog's field");
    assert_eq!(text_of(&c, "#filtered").await?, "nobody", "the filter behind the dialog is untouched");

    let behind = c.call("nova.type_selector", json!({"selector": "#filter", "text": "Bakery"})).await?;
    let behind = behind.structured_content.unwrap_or_default();
    assert_eq!(behind["reasonCode"], "element_covered", "{behind}");
    assert!(!behind["message"].as_str().unwrap_or_default().contains("behind the modal"), "{behind}");

    c.structured("nova.click_selector", json!({"selector": "#close"})).await?;
    let r = c
        .structured("nova.type_selector", json!({"selector": "input[placeholder=\"Payee\"]", "text": "Cafe"}))
        .await?;
    assert_eq!(r["readback"], "Cafe", "{r}");
    assert_eq!(text_of(&c, "#filtered").await?, "Cafe", "the filter, once the dialog closed");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn typing_into_a_select_chooses_the_option_it_names() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("choose.html")})).await?;
    let choose = |text: &str| json!({"selector": "#size", "text": text});

    let r = c.structured("nova.type_selector", choose("medium")).await?;
    assert_eq!((r["readback"].clone(), r["method"].clone()), (json!("Medium"), json!("select")), "{r}");
    assert_eq!(text_of(&c, "#seen").await?, "input 1, change 1: m", "the page saw a person's choice");
    let r = c.structured("nova.type_selector", choose("extra")).await?;
    assert_eq!(r["readback"], "Extra large", "{r}");

    // Refused before anything changes: a disabled option, one that is not there, Enter.
    for (text, enter, reason) in [
        ("Large", false, "element_disabled"),
        ("Huge", false, "element_not_found"),
        ("Small", true, "element_not_editable"),
    ] {
        let mut args = choose(text);
        args["pressEnter"] = json!(enter);
        let r = c.call("nova.type_selector", args).await?.structured_content.unwrap_or_default();
        assert_eq!(
            (r["reasonCode"].clone(), r["actionDispatched"].clone()),
            (json!(reason), json!(false)),
            "{text}: {r}"
        );
    }
    assert_eq!(text_of(&c, "#seen").await?, "input 2, change 2: xl");
    let page = c.structured("nova.perceive", json!({})).await?;
    assert!(page["elements"].to_string().contains("value=\\\"Extra large\\\""), "{}", page["elements"]);

    // A choice that navigates is followed, as a click's navigation is.
    let r = c.structured("nova.type_selector", json!({"selector": "#per-page", "text": "50"})).await?;
    assert_eq!(r["navigated"], true, "{r}");
    assert!(r["urlAfter"].as_str().is_some_and(|u| u.ends_with("choose.html?per=50")), "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_control_covered_only_in_its_middle_takes_the_part_that_shows() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("partly.html")})).await?;
    let r = c.structured("nova.click_selector", json!({"selector": "#tipped"})).await?;
    assert_eq!(r["actionDispatched"], true, "{r}");
    assert_eq!(text_of(&c, "#tipped").await?, "Tipped 1", "the click reached the button");
    let r = c.structured("nova.type_selector", json!({"selector": "#payer", "text": "Bob"})).await?;
    assert_eq!(r["readback"], "Bob", "{r}");
    // Covered all over: still refused, naming what covers it.
    let r = c.call("nova.click_selector", json!({"selector": "#shielded"})).await?;
    let r = r.structured_content.unwrap_or_default();
    assert_eq!(
        (r["reasonCode"].clone(), r["actionDispatched"].clone()),
        (json!("element_covered"), json!(false)),
        "{r}"
    );
    assert!(r["message"].as_str().is_some_and(|m| m.contains("span")), "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn password_values_are_never_reported_stored_or_logged() -> anyhow::Result<()> {
    let secret = "S3cret-Pa55word-xyzzy";
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    let r = c.structured("nova.type_selector", json!({"selector": "#pw", "text": secret})).await?;
    assert_eq!(r["sensitive"], true);
    assert!(r.get("readback").is_none_or(Value::is_null));
    assert!(!r.to_string().contains(secret));
    let page = c.structured("nova.perceive", json!({})).await?;
    assert!(!page.to_string().contains(secret));
    assert!(page["elements"].to_string().contains("password filled"));

    let rows = nova.observations(3)?;
    let typed = rows.iter().find(|r| r["tool"] == "nova.type_selector").expect("type observation");
    assert!(typed["args_json"].as_str().unwrap_or_default().contains("<redacted"));
    drop(c);
    let mut haystack = Vec::new();
    for entry in walk(&nova.data) {
        haystack.extend(std::fs::read(entry).unwrap_or_default());
    }
    assert!(!haystack.windows(secret.len()).any(|w| w == secret.as_bytes()), "secret found in the data dir");
    Ok(())
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "chromium-profile") {
                out.extend(walk(&p));
            }
        } else {
            out.push(p);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn screenshot_returns_an_image_and_saves_it() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    let r = c.call("nova.capture_screenshot", json!({})).await?;
    let s = r.structured_content.clone().unwrap_or_default();
    assert_eq!(s["mimeType"], "image/png", "{s}");
    assert!(s["width"].as_u64().unwrap_or(0) > 100 && s["height"].as_u64().unwrap_or(0) > 100, "{s}");
    let path = s["screenshotFilePath"].as_str().unwrap_or_default();
    let bytes = std::fs::read(path)?;
    assert!(bytes.starts_with(b"\x89PNG"));
    assert_eq!(s["bytes"].as_u64(), Some(bytes.len() as u64));
    let has_image = r.content.iter().any(|c| serde_json::to_value(c).is_ok_and(|v| v["type"] == "image"));
    assert!(has_image, "image content block present");
    let jpeg = c.structured("nova.capture_screenshot", json!({"format": "jpeg", "quality": 50})).await?;
    assert_eq!(jpeg["mimeType"], "image/jpeg");
    Ok(())
}

/// A click that slides something in, as applications open a drawer: a read or an action that
/// comes while it still moves waits until it settles (the drawer's text is read, its field takes
/// the keys), and says so in its timings (`settleMs`); a page where something only turns for ever
/// (a spinner), is held still (a paused animation) or ends long after (a slow progress bar) is
/// not waited for.
#[tokio::test(flavor = "multi_thread")]
async fn reads_and_actions_wait_for_what_a_click_slides_in() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let url = nova.url("moving.html");
    let text = |r: rmcp::model::CallToolResult| {
        r.structured_content.unwrap_or_default()["text"].as_str().unwrap_or_default().to_owned()
    };

    c.structured("nova.navigate", json!({"url": url})).await?;
    let (r, t) = c.call_timed("nova.perceive", json!({})).await?;
    let closed = text(r);
    assert!(closed.contains("What follows the drawer.") && !closed.contains("Drawer text"), "{closed}");
    assert!(!waited(&t), "a spinner, a paused or a slow animation is not waited for: {t}");

    // The read and the action must come while the drawer still moves (three quarters of a
    // second from the click).
    until_it_waits("the read says it waited", || async {
        c.structured("nova.navigate", json!({"url": url})).await?;
        c.structured("nova.click_selector", json!({"selector": "#open"})).await?;
        let (r, t) = c.call_timed("nova.perceive", json!({})).await?;
        let open = text(r);
        assert!(
            open.contains("Drawer text shown once it settles."),
            "the read waited for the drawer: {open}"
        );
        assert!(open.contains("Then a line fades in."), "and for what its end started: {open}");
        Ok(t)
    })
    .await?;
    until_it_waits("the action says it waited", || async {
        c.structured("nova.navigate", json!({"url": url})).await?;
        c.structured("nova.click_selector", json!({"selector": "#open"})).await?;
        let (r, t) =
            c.call_timed("nova.type_selector", json!({"selector": "#note", "text": "hello"})).await?;
        let typed = r.structured_content.unwrap_or_default();
        assert_eq!(
            (typed["readback"].clone(), typed["actionDispatched"].clone()),
            (json!("hello"), json!(true)),
            "{typed}"
        );
        Ok(t)
    })
    .await?;
    Ok(())
}

/// The shell of a single-page application, empty when the page has loaded and drawn by its
/// script later, in two steps: a read right after the navigation waits for the screen (not the
/// empty shell, not its "Loading..." step) and says so in its timings; an action right after the
/// navigation finds its field, and on a screen drawn in parts waits for its field to be drawn.
/// A page that stays empty is read as empty, once it is no longer young.
#[tokio::test(flavor = "multi_thread")]
async fn reads_and_actions_right_after_a_navigation_wait_for_the_first_screen() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let url = nova.url("drawn-late.html");

    // The read must come before the screen is drawn (0.7 s after load, finished 0.6 s later).
    until_it_waits("the read says it waited", || async {
        c.structured("nova.navigate", json!({"url": url})).await?;
        let (r, t) = c.call_timed("nova.perceive", json!({})).await?;
        let page = r.structured_content.unwrap_or_default();
        let text = page["text"].as_str().unwrap_or_default();
        assert!(text.contains("Inbox") && !text.contains("Loading"), "the drawn screen is read: {page}");
        assert!(page["elements"].to_string().contains("textbox \\\"Message\\\""), "{page}");
        Ok(t)
    })
    .await?;

    c.structured("nova.navigate", json!({"url": url})).await?;
    let typed = c.structured("nova.type_selector", json!({"selector": "#message", "text": "hello"})).await?;
    assert_eq!(typed["readback"], "hello", "{typed}");
    let click = c.structured("nova.click_selector", json!({"selector": "#preview"})).await?;
    let shown = c.structured("nova.read_text", json!({"selector": "#shown"})).await?;
    assert_eq!(shown["text"], "Preview: hello", "{click}");

    // A screen drawn in parts: the heading at once, the message box later. An action waits
    // for its target on the young page.
    c.structured("nova.navigate", json!({"url": format!("{url}?parts=1")})).await?;
    let typed = c.structured("nova.type_selector", json!({"selector": "#message", "text": "parts"})).await?;
    assert_eq!(typed["readback"], "parts", "{typed}");

    c.structured("nova.navigate", json!({"url": format!("{url}?never=1")})).await?;
    let empty = c.structured("nova.perceive", json!({})).await?;
    assert_eq!((empty["text"].clone(), empty["elements"].clone()), (json!(""), json!([])), "{empty}");
    Ok(())
}

/// A form control a person operates through its label (a transparent checkbox whose label draws
/// the box, a select whose focus target is a transparent one-pixel input inside the field's
/// label, as Quasar draws it) is listed, and pressed where its label shows; a hidden field
/// whose label is hidden too is not listed.
#[tokio::test(flavor = "multi_thread")]
async fn a_control_drawn_by_its_label_is_listed_and_pressed_where_the_label_shows() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let mut a = Agent::new(&nova, "labels").await?;
    a.ready().await?;
    a.visit(&nova.url("labelled.html")).await?;
    let lines = async |a: &mut Agent| -> anyhow::Result<Vec<String>> {
        let page = a.step("nova.perceive", json!({})).await?;
        let all = page["elements"].as_array().cloned().unwrap_or_default();
        Ok(all
            .iter()
            .filter_map(|l| l.as_str())
            .map(|l| l.split_once(' ').map_or(l, |(_, r)| r).to_owned())
            .collect())
    };
    let shown = lines(&mut a).await?;
    let expected =
        [r#"checkbox "Remember me""#, r#"checkbox "Email me""#, r#"combobox "Model size" value="Small""#];
    assert_eq!(shown, expected, "{shown:?}");

    // The transparent one takes the click itself; the one that takes no room through its label.
    let page = a.step("nova.perceive", json!({})).await?;
    for (i, name) in [(0, "Remember me"), (1, "Email me")] {
        let check = page["elements"][i].as_str().unwrap_or_default().split(' ').next().unwrap_or_default();
        a.step("nova.click_selector", json!({"selector": check})).await?;
        let shown = lines(&mut a).await?;
        assert_eq!(shown[i], format!(r#"checkbox "{name}" checked"#), "{shown:?}");
    }

    let (r, _) = a.call("nova.guarded_switch_model", json!({"option": "Large"})).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    let shown = lines(&mut a).await?;
    assert_eq!(shown[2], r#"combobox "Model size" value="Large""#, "{shown:?}");
    Ok(())
}
