//! Guarded macros driven by the generic adapters against the chat fixture in its modes.

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
    ] {
        c.structured("nova.navigate", json!({"url": nova.url(&format!("chat.html?mode={mode}"))})).await?;
        let r = send(&c, "hello there", Some(short.clone())).await?;
        assert_eq!(r["guardedCommit"]["verificationStatus"], expected, "{mode}: {r}");
        assert_eq!(r["reasonCode"], reason, "{mode}: {r}");
        assert_eq!(r["actionDispatched"], true, "{mode}");
        assert_eq!(r["adapter"], "generic-chat");
        if mode != "silent" {
            assert_eq!(count(&c).await?, "1", "{mode}: sent exactly once");
        }
    }

    // A refinement that cannot hold makes success unreachable: the caller's contract is used.
    c.structured("nova.navigate", json!({"url": nova.url("chat.html?mode=works")})).await?;
    let strict = json!({"postconditions": {"success": {"all": [{"factKey": "dom.exists(#never)", "operator": "eq", "expected": true}]}},
                        "stabilityWindowMs": 1000});
    let r = send(&c, "again", Some(strict)).await?;
    assert_ne!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    let empty = c.call_err("nova.guarded_send_message", json!({"text": "  "})).await?;
    assert!(empty.message.contains("text"));
    Ok(())
}
