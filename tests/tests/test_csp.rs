//! Pages whose CSP forbids WebAssembly (`script-src 'self'`), by header and by meta tag.

use nova_e2e::Nova;
use serde_json::json;

async fn works_without_tripping_csp(page: &str) -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url(page)})).await?;
    let model = c.structured("nova.perceive", json!({})).await?;
    assert!(model["text"].as_str().unwrap_or_default().contains("Strict CSP"), "{model}");
    c.structured("nova.type_selector", json!({"selector": "#field", "text": "typed"})).await?;
    c.structured("nova.click_selector", json!({"selector": "#go"})).await?;
    let result = c.structured("nova.read_text", json!({"selector": "#result"})).await?;
    assert_eq!(result["text"], "clicked typed");
    let violations = c.structured("nova.read_text", json!({"selector": "#violations"})).await?;
    assert_eq!(violations["text"], "0", "the page saw a CSP violation caused by Nova");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn strict_csp_header_page_works() -> anyhow::Result<()> {
    works_without_tripping_csp("strict.csp.html").await
}

#[tokio::test(flavor = "multi_thread")]
async fn strict_csp_meta_page_works() -> anyhow::Result<()> {
    works_without_tripping_csp("strict-meta.html").await
}

/// The JavaScript build grows its memory while reading a large page; reads after growth must
/// see the new memory (wasm2js leaves the old buffer attached unless the build patches it).
#[tokio::test(flavor = "multi_thread")]
async fn js_build_reads_correctly_after_memory_growth() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("strict-big.csp.html")})).await?;
    let read = c.structured("nova.read_text", json!({"maxChars": 1_000_000})).await?;
    let text = read["text"].as_str().unwrap_or_default();
    assert!(text.len() > 300_000, "read {} bytes: {read}", text.len());
    assert!(text.contains("Paragraph 3999 of the large page"));
    assert!(text.ends_with("END-OF-LARGE-PAGE"), "tail: {:?}", &text[text.len().saturating_sub(80)..]);
    let page = c.structured("nova.perceive", json!({"maxTextChars": 200000})).await?;
    assert_eq!(page["truncated"]["any"], true);
    Ok(())
}
