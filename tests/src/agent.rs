//! A scripted compliant agent: it loads a bundle, passes an explicit `targetId` once it knows
//! its tab, perceives after every navigation before touching the page, and acts with a transition
//! contract when an action changes state. Any gate block it meets fails the test, printed whole.

use serde_json::{Value, json};

use crate::{Client, Nova};

/// An agent that fails the test on any gate block.
pub struct Agent {
    /// Its MCP client.
    pub client: Client,
    /// Its `agentId`.
    pub name: &'static str,
    /// Its tab, once it has one.
    pub tab: Option<String>,
    /// Calls made so far.
    pub calls: usize,
    /// Calls made so far, per tool.
    per_tool: std::collections::HashMap<String, usize>,
    /// How long each call took, from the request to the answer, per tool.
    pub durations: std::collections::BTreeMap<String, Vec<std::time::Duration>>,
}

impl Agent {
    /// A new agent with its own MCP client.
    pub async fn new(nova: &Nova, name: &'static str) -> anyhow::Result<Self> {
        Ok(Self::with_client(nova.client().await?, name))
    }

    /// An agent on a client made elsewhere (over HTTP, for example).
    pub fn with_client(client: Client, name: &'static str) -> Self {
        Self {
            client,
            name,
            tab: None,
            calls: 0,
            per_tool: Default::default(),
            durations: Default::default(),
        }
    }

    /// Loads the browser-automation bundle, as a compliant agent does first.
    pub async fn ready(&mut self) -> anyhow::Result<()> {
        self.step("nova.tools_bundle", json!({"bundle": "browser_automation"})).await.map(|_| ())
    }

    /// One call: any block fails the journey, printed whole; any other failure too.
    pub async fn step(&mut self, tool: &str, args: Value) -> anyhow::Result<Value> {
        let (s, is_error) = self.call(tool, args.clone()).await?;
        anyhow::ensure!(!is_error, "`{}`: {tool} {args} failed: {s}", self.name);
        Ok(s)
    }

    /// One call that may fail (a refusal the test expects); a gate block still fails the test.
    /// Returns the structured reply and whether it is an error.
    pub async fn call(&mut self, tool: &str, mut args: Value) -> anyhow::Result<(Value, bool)> {
        args["agentId"] = json!(self.name);
        // It passes its tab to the tools that take one.
        let takes_a_tab = crate::tools_taking_a_tab().contains(tool);
        if let Some(tab) = &self.tab
            && args.get("targetId").is_none()
            && takes_a_tab
        {
            args["targetId"] = json!(tab);
        }
        self.calls += 1;
        *self.per_tool.entry(tool.to_owned()).or_default() += 1;
        let started = std::time::Instant::now();
        let r = self.client.call(tool, args.clone()).await?;
        self.durations.entry(tool.to_owned()).or_default().push(started.elapsed());
        let s = r.structured_content.clone().unwrap_or_default();
        if let Some(block) = r.meta.as_ref().and_then(|m| m.0.get("io.nova/aag")) {
            anyhow::bail!(
                "compliant agent `{}` was blocked on call {} ({tool} {args}):\n{}",
                self.name,
                self.calls,
                serde_json::to_string_pretty(block)?
            );
        }
        if let Some(g) = s.get("_aagGates").and_then(|g| g.get("loopDetected")) {
            anyhow::bail!("`{}`: {tool} {args} was taken for a loop: {g}", self.name);
        }
        if tool == "nova.navigate" && self.tab.is_none() {
            self.tab = s["targetId"].as_str().map(str::to_owned);
        }
        Ok((s, r.is_error == Some(true)))
    }

    /// How many calls of `tool` it made (the store has as many rows of that tool).
    pub fn calls_of(&self, tool: &str) -> usize {
        self.per_tool.get(tool).copied().unwrap_or(0)
    }

    /// Navigates its tab to `url` and perceives the page.
    pub async fn visit(&mut self, url: &str) -> anyhow::Result<Value> {
        self.step("nova.navigate", json!({"url": url})).await?;
        self.step("nova.perceive", json!({})).await
    }
}
