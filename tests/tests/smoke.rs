use nova_e2e::Nova;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn smoke_navigate_and_perceive() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let nav = c
        .structured("nova.navigate", json!({"url": nova.url("basic.html")}))
        .await?;
    eprintln!("{nav:#}");
    let p = c.call("nova.perceive", json!({})).await?;
    eprintln!("{:#?}", p);
    Ok(())
}
