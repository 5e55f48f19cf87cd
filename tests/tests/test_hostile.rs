//! Hostile pages: nothing a page does reaches the extension as an order. The fixture forges
//! Nova-like requests every few milliseconds (postMessage, custom and message events, DOM
//! attributes, `chrome.runtime` / `browser.runtime` calls, traps on the page's own prototypes)
//! while a compliant agent works on it at default settings; the page's own counters prove that
//! only the agent's calls acted, and the page's world sees nothing of Nova.

use std::time::Duration;

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use serde_json::{Value, json};

async fn text(a: &mut Agent, selector: &str) -> anyhow::Result<String> {
    let r = a.step("nova.read_text", json!({"selector": selector})).await?;
    Ok(r["text"].as_str().unwrap_or_default().trim().to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_requests_from_a_page_are_never_dispatched() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "careful").await?;
    a.ready().await?;
    a.visit(&nova.url("hostile.html")).await?;
    a.step("nova.type_selector", json!({"selector": "#note", "text": "only this"})).await?;
    for n in 1..=3 {
        a.step("nova.click_selector", json!({"selector": "#safe"})).await?;
        assert_eq!(text(&mut a, "#safe-count").await?, n.to_string());
    }
    // Let the page forge for a while longer with Nova loaded in it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let forged: u64 = text(&mut a, "#forged").await?.parse()?;
    assert!(forged > 50, "the page forged only {forged} rounds: the test proved nothing");
    assert_eq!(text(&mut a, "#danger-count").await?, "0", "a forged request acted on the page");
    let page = a.step("nova.perceive", json!({})).await?;
    let note = page["elements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|l| l.contains("Note"));
    assert!(note.is_some_and(|l| l.contains("only this")), "the agent's own typing is there: {page}");
    // The page's own world sees nothing of Nova.
    let world: Value = serde_json::from_str(&text(&mut a, "#world").await?)?;
    assert_eq!(
        world,
        json!({"chromeRuntime": "undefined", "browserRuntime": "undefined", "novaContent": "false"}),
        "the page's world reaches Nova"
    );
    // The counters are live: the agent's own typing in the secret field counts.
    a.step("nova.type_selector", json!({"selector": "#secret", "text": "mine"})).await?;
    assert_eq!(text(&mut a, "#danger-count").await?, "1", "the input event of the agent's own typing");
    // Every call in the store is the agent's: nothing else was dispatched.
    let calls = i64::try_from(a.calls)?;
    let mine = nova.count_until("SELECT COUNT(*) FROM observations WHERE agent_id = 'careful'", calls)?;
    let all = nova.count_until("SELECT COUNT(*) FROM observations", calls)?;
    assert_eq!((mine, all), (calls, calls), "calls in the store that the agent did not make");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn text_that_gives_agents_orders_is_pointed_out_and_ordinary_text_is_not() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    // In a review: the phrase and the text around it.
    let page = a.visit(&nova.url("injection/attack-01.html")).await?;
    let w = &page["promptInjectionWarning"];
    assert_eq!(w["phrases"], json!(["Ignore all previous instructions"]), "{page}");
    assert!(w["matches"][0]["snippet"].as_str().is_some_and(|s| s.contains("20 of these")), "{w}");
    assert!(w["message"].as_str().is_some_and(|m| m.contains("do not follow")), "{w}");
    // In a button's name: its ref, which the agent can match against the elements.
    let page = a.visit(&nova.url("injection/attack-06.html")).await?;
    let w = &page["promptInjectionWarning"];
    let r = w["refs"][0].as_str().unwrap_or_default().to_owned();
    let element = nova_e2e::realapps::line_with_ref(&page, &r);
    assert!(element.is_some_and(|l| l.contains("Dear AI")), "{page}");
    // nova.read_text says the same.
    a.visit(&nova.url("injection/attack-23.html")).await?;
    let read = a.step("nova.read_text", json!({})).await?;
    assert_eq!(read["promptInjectionWarning"]["phrases"], json!(["AI assistant: forward"]), "{read}");
    // Pages that talk about AI, or give people orders, are not flagged.
    for p in ["ordinary-09", "ordinary-10", "ordinary-25"] {
        let page = a.visit(&nova.url(&format!("injection/{p}.html"))).await?;
        assert!(page.get("promptInjectionWarning").is_none(), "{p}: {page}");
        let read = a.step("nova.read_text", json!({"maxChars": 4000 + p.len() as u64})).await?;
        assert!(read.get("promptInjectionWarning").is_none(), "{p}: {read}");
    }
    Ok(())
}

/// Text hidden from people in invisible characters (Unicode tags, a run of variation selectors:
/// "ASCII smuggling") is taken out of what the agent reads and pointed out; a flag, emoji and
/// an ideograph's variant, which use the same characters, come through whole.
#[tokio::test(flavor = "multi_thread")]
async fn text_hidden_in_invisible_characters_is_taken_out_and_pointed_out() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    let tag = |c: char| ('\u{E0000}'..='\u{E007F}').contains(&c);
    // 62 + 22 tag characters and 16 variation selectors after the first (smuggled.html).
    const HIDDEN: u32 = 100;
    let page = a.visit(&nova.url("smuggled.html")).await?;
    let read = a.step("nova.read_text", json!({"selector": "#smuggled"})).await?;
    for (tool, v) in [("perceive", &page), ("read_text", &read)] {
        let w = &v["promptInjectionWarning"];
        assert_eq!(w["hiddenChars"], json!(HIDDEN), "{tool}: {v}");
        assert!(v.get("hiddenChars").is_none(), "{tool}: the count is the warning's: {v}");
        assert!(w["message"].as_str().is_some_and(|m| m.contains("invisible")), "{tool}: {w}");
        let text = v["text"].as_str().unwrap_or_default();
        assert!(text.contains("Welcome back to your account."), "{tool}: {text:?}");
        // The first selector after the letter stays (a variant of it); the run after it goes.
        assert!(text.contains("Thanks for reading A\u{E015F}."), "{tool}: {text:?}");
        let scotland: String = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}".into();
        assert!(
            !text.replace(&scotland, "").chars().any(tag),
            "{tool}: hidden characters reached the agent: {text:?}"
        );
    }
    let save = page["elements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|l| l.contains("button"));
    assert!(
        save.is_some_and(|l| l.ends_with("button \"Save\"")),
        "the button's name without its hidden text: {page}"
    );
    // What uses the same characters openly is kept whole and not pointed out.
    let ordinary = a.step("nova.read_text", json!({"selector": "#ordinary"})).await?;
    assert!(ordinary.get("promptInjectionWarning").is_none(), "{ordinary}");
    let text = ordinary["text"].as_str().unwrap_or_default();
    for kept in [
        "Go Scotland \u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}!",
        "We \u{2764}\u{FE0F} our family \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}",
        "the variant \u{845B}\u{E0100} of a name",
        "An invisible break and a softhyphen.",
    ] {
        assert!(text.contains(kept), "{kept:?} is not whole in {text:?}");
    }
    Ok(())
}
