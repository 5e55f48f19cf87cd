//! nova.route, nova.file_upload, nova.dismiss_blockers and nova.run_sequence in real Chromium,
//! each recorded as evidence.

use nova_e2e::Nova;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn route_changes_the_view_without_reloading_and_stays_on_its_origin() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("spa.html")})).await?;
    let r = c.structured("nova.route", json!({"path": "/spa.html?view=settings"})).await?;
    assert_eq!(r["method"], "history_push", "{r}");
    assert!(r["urlAfter"].as_str().is_some_and(|u| u.ends_with("/spa.html?view=settings")), "{r}");
    let view = c.structured("nova.read_text", json!({"selector": "#route"})).await?;
    assert_eq!(view["text"], "Settings page");
    let loads = c.structured("nova.read_text", json!({"selector": "#loads"})).await?;
    assert_eq!(loads["text"], "1", "the document was not reloaded");
    let relative = c.structured("nova.route", json!({"path": "?view=profile", "replace": true})).await?;
    assert_eq!(relative["method"], "history_replace");
    assert_eq!(c.structured("nova.read_text", json!({"selector": "#route"})).await?["text"], "Your profile");

    let away = c.call("nova.route", json!({"path": "https://example.org/"})).await?;
    let body = away.structured_content.unwrap_or_default();
    assert_eq!(body["reasonCode"], "route_cross_origin", "{body}");

    let routes = nova.tool_rows("nova.route", 3)?;
    assert_eq!(routes.len(), 3);
    assert!(routes.iter().all(|o| o["action_kind"] == "navigate"));
    assert!(routes[0]["url_after"].as_str().is_some_and(|u| u.contains("view=settings")));
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn files_reach_the_page_including_one_larger_than_a_native_messaging_frame() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("upload.html")})).await?;
    // 3 MB on disk: 4 MB of base64, sent to the browser in chunked frames (1 MiB limit each).
    let big = nova.data.join("scan-3mb.txt");
    let content: String = "Nova upload test line.\n".repeat(3 * 1024 * 1024 / 23 + 1);
    std::fs::write(&big, &content)?;
    let r = c
        .structured("nova.file_upload", json!({"selector": "#doc", "paths": [big.to_string_lossy()]}))
        .await?;
    assert_eq!((r["ok"].clone(), r["actionDispatched"].clone()), (json!(true), json!(true)), "{r}");
    let photos = c
        .structured(
            "nova.file_upload",
            json!({"selector": "#photos", "files": [
                {"name": "a.txt", "mimeType": "text/plain", "contentBase64": "aGVsbG8gd29ybGQ="},
                {"name": "b.png", "contentBase64": "iVBORw0KGgo="}
            ]}),
        )
        .await?;
    assert!(photos["readback"].as_str().is_some_and(|t| t.starts_with("2 file(s)")), "{photos}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let received = c.structured("nova.read_text", json!({"selector": "#received"})).await?;
    let text = received["text"].as_str().unwrap_or_default();
    assert!(
        text.contains(&format!("doc: scan-3mb.txt {} text/plain Nova upload test", content.len())),
        "{text}"
    );
    assert!(text.contains("photos: a.txt 11 text/plain hello world"), "{text}");
    assert!(text.contains("photos: b.png 8 image/png"), "{text}");

    let not_file = c
        .call("nova.file_upload", json!({"selector": "#name", "files": [{"name": "x", "contentBase64": ""}]}))
        .await?;
    assert_eq!(not_file.structured_content.unwrap_or_default()["reasonCode"], "element_not_file_input");
    let two = c
        .call(
            "nova.file_upload",
            json!({"selector": "#doc", "files": [{"name": "a", "contentBase64": ""}, {"name": "b", "contentBase64": ""}]}),
        )
        .await?;
    assert_eq!(two.structured_content.unwrap_or_default()["actionDispatched"], false);
    let relative =
        c.call_err("nova.file_upload", json!({"selector": "#doc", "paths": ["notes.txt"]})).await?;
    assert!(relative.message.contains("absolute"), "{}", relative.message);
    let upload_rows = nova.tool_rows("nova.file_upload", 5)?;
    assert_eq!(upload_rows.len(), 5, "every upload call is evidence, refused ones included");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn blockers_are_declined_and_closed_never_accepted() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("blockers.html")})).await?;
    let covered = c.call("nova.click_selector", json!({"selector": "#read"})).await?;
    assert_eq!(covered.structured_content.unwrap_or_default()["reasonCode"], "element_covered");
    let r = c.structured("nova.dismiss_blockers", json!({})).await?;
    let controls: Vec<&str> =
        r["dismissed"].as_array().into_iter().flatten().filter_map(|d| d["control"].as_str()).collect();
    assert_eq!(controls.len(), 2, "{r}");
    assert!(
        controls.iter().any(|c| c.contains("Reject all")) && controls.iter().any(|c| c.contains("No thanks")),
        "{r}"
    );
    assert_eq!(r["remaining"], 0, "{r}");
    assert_eq!(
        c.structured("nova.read_text", json!({"selector": "#state"})).await?["text"],
        "consent: rejected"
    );
    let read = c.structured("nova.click_selector", json!({"selector": "#read"})).await?;
    assert_eq!(read["actionDispatched"], true, "{read}");
    let none = c.structured("nova.dismiss_blockers", json!({})).await?;
    assert_eq!(
        (none["dismissed"].as_array().map(Vec::len), none["actionDispatched"].clone()),
        (Some(0), json!(false))
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sequence_runs_in_order_records_each_step_and_stops_at_the_first_failure() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let r = c
        .call(
            "nova.run_sequence",
            json!({"steps": [
                {"tool": "nova.navigate", "args": {"url": nova.url("basic.html")}},
                {"tool": "nova.type_selector", "args": {"selector": "#plain", "text": "Ada-7Kq-private"}},
                {"tool": "nova.click_selector", "args": {"selector": "#does-not-exist"}},
                {"tool": "nova.read_text", "args": {}}
            ]}),
        )
        .await?;
    let body = r.structured_content.unwrap_or_default();
    assert_eq!(
        (body["ok"].clone(), body["stoppedAt"].clone(), body["stepsRun"].clone()),
        (json!(false), json!(2), json!(3)),
        "{body}"
    );
    assert_eq!(body["steps"][2]["result"]["reasonCode"], "element_not_found");
    let outer = nova.tool_rows("nova.run_sequence", 1)?;
    let rows = nova.observations(0)?;
    let seq = |tool: &str| rows.iter().find(|o| o["tool"] == tool).and_then(|o| o["seq"].as_i64());
    let (nav, typed, click, outer_seq) = (
        seq("nova.navigate"),
        seq("nova.type_selector"),
        seq("nova.click_selector"),
        outer[0]["seq"].as_i64(),
    );
    assert!(outer_seq < nav && nav < typed && typed < click, "each step is its own observation, in order");
    assert!(!rows.iter().any(|o| o["tool"] == "nova.read_text"), "the step after the failure never ran");
    // Typed text is kept out of the sequence's own record as it is out of the step's.
    assert!(!rows.iter().any(|o| o.to_string().contains("Ada-7Kq")), "{rows:?}");
    let nested = c.call_err("nova.run_sequence", json!({"steps": [{"tool": "nova.run_sequence"}]})).await?;
    assert!(nested.message.contains("steps[0].tool"), "{}", nested.message);
    Ok(())
}
