//! The journey pages (`tests/fixtures/journey.html?n=N`) as a compliant agent works them: open
//! a page, perceive it, read it, type a note and save it with a transition contract whose
//! verdict must be `verified_success`. The journeys and the load test walk them.

use serde_json::{Value, json};

use crate::Nova;
use crate::agent::Agent;

/// What the journey pages ask of an agent.
#[allow(async_fn_in_trait)]
pub trait Journey {
    /// Opens page `n` of the journey (in a new tab for the first call of a second agent).
    async fn open(&mut self, nova: &Nova, n: u32, new_tab: bool) -> anyhow::Result<()>;
    /// Perceive, read, write a note and save it with a contract: the verdict must be
    /// verified_success.
    async fn work(&mut self, n: u32) -> anyhow::Result<()>;
    /// Saves with a contract: the status must come to show `note`.
    async fn save(&mut self, note: &str) -> anyhow::Result<Value>;
}

impl Journey for Agent {
    async fn open(&mut self, nova: &Nova, n: u32, new_tab: bool) -> anyhow::Result<()> {
        let url = nova.url(&format!("journey.html?n={n}"));
        let args = if new_tab { json!({"url": url, "newTab": true}) } else { json!({"url": url}) };
        self.step("nova.navigate", args).await.map(|_| ())
    }

    async fn work(&mut self, n: u32) -> anyhow::Result<()> {
        let page = self.step("nova.perceive", json!({})).await?;
        anyhow::ensure!(page["title"] == format!("Journey page {n}"), "perceived another page: {page}");
        let read = self.step("nova.read_text", json!({"maxChars": 400})).await?;
        anyhow::ensure!(
            read["text"].as_str().unwrap_or_default().contains(&format!("Page {n} of")),
            "{read}"
        );
        self.step("nova.type_selector", json!({"selector": "#note", "text": format!("note {n}")})).await?;
        let saved = self.save(&format!("note {n}")).await?;
        anyhow::ensure!(saved["guardedCommit"]["verificationStatus"] == "verified_success", "{saved}");
        Ok(())
    }

    async fn save(&mut self, note: &str) -> anyhow::Result<Value> {
        let contract = json!({
            "actionKind": "custom",
            "postconditions": {"success": {"all": [
                {"factKey": "dom.text(#status)", "operator": "contains", "expected": format!("Saved: {note}")}
            ]}},
        });
        self.step("nova.click_selector", json!({"selector": "#save", "transitionContract": contract})).await
    }
}
