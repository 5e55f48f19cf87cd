//! `cargo xtask bench --peer`: Nova, Playwright MCP and chrome-devtools-mcp ([`crate::peer`])
//! side by side on the same headless Chromium binary and the same three kinds of page (a
//! 5,000-node list, an article, a small web app): navigate, read the whole page (Nova's
//! `nova.perceive` of every element and all text, the peers' snapshots) with its size in tokens
//! of the agent's text, and click;
//! medians, and each figure as a ratio of Nova to the peer measured in the same run.

use std::time::Instant;

use serde_json::{Value, json};

use nova_e2e::Nova;

use crate::measure::{BENCH_SETTINGS, p50, whole_page};
use crate::peer::{PEERS, Session, Target, text_of};

/// The pages: (kind, fixture).
/// The three kinds of page every read is measured on: a name and the test site's page.
pub const PAGES: [(&str, &str); 3] =
    [("list", "bench.html"), ("article", "article.html"), ("app", "app.html")];

/// The clicked button of the list page.
const BUTTON: Target<'static> = Target { selector: "#bench-btn", role: "button", name: "Bench click" };

/// What the comparison asks of Nova and of each peer, in ms.
trait Contender {
    async fn navigate(&mut self, url: &str) -> anyhow::Result<f64>;
    /// The time and the text of a read of the whole page.
    async fn read(&mut self) -> anyhow::Result<(f64, String)>;
    async fn click(&mut self) -> anyhow::Result<f64>;
}

/// Nova through `nova mcp`, as an agent.
struct NovaAgent(nova_e2e::Client);

impl Contender for NovaAgent {
    async fn navigate(&mut self, url: &str) -> anyhow::Result<f64> {
        let start = Instant::now();
        self.0.structured("nova.navigate", json!({"url": url})).await?;
        Ok(start.elapsed().as_secs_f64() * 1000.0)
    }

    async fn read(&mut self) -> anyhow::Result<(f64, String)> {
        let start = Instant::now();
        let r = self.0.call("nova.perceive", whole_page()).await?;
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        anyhow::ensure!(r.is_error != Some(true), "nova.perceive failed: {}", text_of(&r));
        Ok((ms, text_of(&r)))
    }

    async fn click(&mut self) -> anyhow::Result<f64> {
        let start = Instant::now();
        self.0.structured("nova.click_selector", json!({"selector": BUTTON.selector})).await?;
        Ok(start.elapsed().as_secs_f64() * 1000.0)
    }
}

impl Contender for Session {
    async fn navigate(&mut self, url: &str) -> anyhow::Result<f64> {
        Session::navigate(self, url).await
    }

    async fn read(&mut self) -> anyhow::Result<(f64, String)> {
        self.snapshot().await
    }

    async fn click(&mut self) -> anyhow::Result<f64> {
        Session::click(self, BUTTON).await
    }
}

/// One contender's figures: per page `{navigateMs, readMs}` and `clickMs`; and the text of
/// its last read of each page.
async fn measure(
    c: &mut impl Contender,
    nova: &Nova,
    iterations: usize,
) -> anyhow::Result<(Value, Vec<String>)> {
    let mut pages = serde_json::Map::new();
    let mut texts = Vec::new();
    for (kind, fixture) in PAGES {
        let url = nova.url(fixture);
        let mut nav = Vec::new();
        for _ in 0..iterations.min(10) {
            nav.push(c.navigate(&url).await?);
        }
        let (mut read, mut text) = (Vec::new(), String::new());
        for _ in 0..iterations {
            let (ms, t) = c.read().await?;
            read.push(ms);
            text = t;
        }
        texts.push(text);
        pages.insert(kind.into(), json!({"navigateMs": p50(nav), "readMs": p50(read)}));
    }
    c.navigate(&nova.url("bench.html")).await?;
    c.read().await?;
    let mut click = Vec::new();
    for _ in 0..iterations {
        click.push(c.click().await?);
    }
    Ok((json!({"pages": pages, "clickMs": p50(click)}), texts))
}

/// Runs Nova and every peer; `{contenders: [{name, pages, clickMs}], machine}`.
pub async fn compare(iterations: usize) -> anyhow::Result<Value> {
    let chromium = nova_e2e::chromium::find_binary()?;
    let nova = Nova::start_in(nova_e2e::BrowserKind::Chromium).await?;
    std::fs::write(nova.data.join("settings.json"), BENCH_SETTINGS)?;
    let mut contenders = Vec::new();
    let (mut figures, texts) = measure(&mut NovaAgent(nova.client().await?), &nova, iterations).await?;
    figures["name"] = json!("Nova");
    contenders.push((figures, texts));
    for peer in &PEERS {
        let mut s = Session::start(peer, &chromium).await?;
        let (mut figures, texts) = measure(&mut s, &nova, iterations).await?;
        s.stop().await;
        figures["name"] = json!(peer.name);
        contenders.push((figures, texts));
    }
    let all_texts: Vec<String> = contenders.iter().flat_map(|(_, t)| t.clone()).collect();
    let tokens = crate::bench_tools::count_tokens(&all_texts)?;
    let mut out = Vec::new();
    for (i, (mut figures, _)) in contenders.into_iter().enumerate() {
        for (j, (kind, _)) in PAGES.iter().enumerate() {
            figures["pages"][kind]["readTokens"] = json!(tokens[i * PAGES.len() + j]);
        }
        out.push(figures);
    }
    Ok(json!({
        "contenders": out,
        "peers": PEERS.iter().map(|p| p.package).collect::<Vec<_>>(),
        "machine": crate::measure::machine(),
    }))
}

/// The side-by-side table: each figure for every contender, and Nova's ratio to each peer.
pub fn render(p: &Value) -> String {
    let Some(all) = p["contenders"].as_array() else { return String::new() };
    let mut s = format!(
        "\nNova and its peers ({}), same Chromium, same pages, medians; machine: {}\n",
        p["peers"].as_array().into_iter().flatten().filter_map(Value::as_str).collect::<Vec<_>>().join(", "),
        p["machine"].as_str().unwrap_or("?")
    );
    s += &format!("{:<26}", "");
    for c in all {
        s += &format!("{:>22}", c["name"].as_str().unwrap_or("?"));
    }
    s += "\n";
    let mut row = |label: &str, pick: &dyn Fn(&Value) -> f64| {
        let nova = pick(&all[0]);
        s += &format!("{label:<26}");
        for (i, c) in all.iter().enumerate() {
            let v = pick(c);
            s += &if i == 0 { format!("{v:>22.1}") } else { format!("{v:>12.1} ({:>5.2}x)", nova / v) };
        }
        s += "\n";
    };
    for (kind, _) in PAGES {
        row(&format!("{kind}: read p50, ms"), &|c| c["pages"][kind]["readMs"].as_f64().unwrap_or(f64::NAN));
        row(&format!("{kind}: read, tokens"), &|c| {
            c["pages"][kind]["readTokens"].as_f64().unwrap_or(f64::NAN)
        });
        row(&format!("{kind}: navigate p50, ms"), &|c| {
            c["pages"][kind]["navigateMs"].as_f64().unwrap_or(f64::NAN)
        });
    }
    row("list: click p50, ms", &|c| c["clickMs"].as_f64().unwrap_or(f64::NAN));
    s += "(x = Nova's figure divided by the peer's: below 1 Nova is faster or smaller)\n";
    s
}
