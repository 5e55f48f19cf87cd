//! `cargo xtask bench --only reads`: the tokens an agent spends reading pages over a 20-step
//! flow (8 chat messages, 6 pages of a list, 6 form fields; a read after every step), with full
//! reads and with incremental ones (`nova.perceive {since}`, docs/perceive.md), and, in
//! Chromium, the same steps through each peer ([`crate::peer`]) reading its snapshot, counted
//! with the same tokenizer as `tools/list` ([`crate::bench_tools::count_tokens`]) on the answer
//! an agent gets (Nova's structured answer, the peers' text). Every read is kept in
//! `target/bench/reads-<mode or peer>-<browser>.json`.

use serde_json::{Value, json};

use nova_e2e::agent::Agent;

use crate::peer::{PEERS, Peer, Session, Target};
use nova_e2e::{BrowserKind, Nova};

/// What the agent reads after each step.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Full,
    Incremental,
}

/// Runs the flow once in `mode`; returns every read's structured answer.
async fn flow(nova: &Nova, mode: Mode) -> anyhow::Result<Vec<String>> {
    let mut a = Agent::new(nova, if mode == Mode::Full { "full" } else { "incremental" }).await?;
    a.ready().await?;
    let mut reads = Vec::new();
    let mut last: Option<Value> = None;
    let mut read = async |a: &mut Agent, last: &mut Option<Value>| -> anyhow::Result<()> {
        let args = match (mode, last.as_ref()) {
            (Mode::Incremental, Some(l)) => json!({"since": l["perceptionId"]}),
            _ => json!({}),
        };
        let r = a.step("nova.perceive", args).await?;
        reads.push(serde_json::to_string(&r)?);
        *last = Some(r);
        Ok(())
    };
    a.step("nova.navigate", json!({"url": nova.url("chat.html?mode=works")})).await?;
    read(&mut a, &mut last).await?;
    for n in 1..=8 {
        let contract = json!({"stabilityWindowMs": 1500, "stabilityMs": 200});
        a.step(
            "nova.guarded_send_message",
            json!({"text": format!("step {n}"), "transitionContract": contract}),
        )
        .await?;
        read(&mut a, &mut last).await?;
    }
    a.step("nova.navigate", json!({"url": nova.url("paging.html")})).await?;
    read(&mut a, &mut last).await?;
    for _ in 0..6 {
        a.step("nova.click_selector", json!({"selector": "#next"})).await?;
        read(&mut a, &mut last).await?;
    }
    a.step("nova.navigate", json!({"url": nova.url("signup.html")})).await?;
    read(&mut a, &mut last).await?;
    for n in 1..=6 {
        let (field, text) = if n % 2 == 1 {
            ("#name", format!("Ann {n}"))
        } else {
            ("#email", format!("ann{n}@example.com"))
        };
        a.step("nova.type_selector", json!({"selector": field, "text": text})).await?;
        read(&mut a, &mut last).await?;
    }
    Ok(reads)
}

/// The same flow through a peer ([`crate::peer`]), reading its snapshot after every step.
async fn peer_flow(nova: &Nova, peer: &'static Peer) -> anyhow::Result<Vec<String>> {
    let chromium = nova_e2e::chromium::find_binary()?;
    let mut s = Session::start(peer, &chromium).await?;
    let mut reads = Vec::new();
    s.navigate(&nova.url("chat.html?mode=works")).await?;
    reads.push(s.snapshot().await?.1);
    let composer = Target { selector: "#composer", role: "textbox", name: "Message" };
    let send = Target { selector: "#send", role: "button", name: "Send" };
    for n in 1..=8 {
        s.fill(composer, &format!("step {n}")).await?;
        s.click(send).await?;
        reads.push(s.snapshot().await?.1);
    }
    s.navigate(&nova.url("paging.html")).await?;
    reads.push(s.snapshot().await?.1);
    for _ in 0..6 {
        s.click(Target { selector: "#next", role: "button", name: "Next page" }).await?;
        reads.push(s.snapshot().await?.1);
    }
    s.navigate(&nova.url("signup.html")).await?;
    reads.push(s.snapshot().await?.1);
    for n in 1..=6 {
        let (field, text) = if n % 2 == 1 {
            (Target { selector: "#name", role: "textbox", name: "Name" }, format!("Ann {n}"))
        } else {
            (Target { selector: "#email", role: "textbox", name: "Email" }, format!("ann{n}@example.com"))
        };
        s.fill(field, &text).await?;
        reads.push(s.snapshot().await?.1);
    }
    s.stop().await;
    Ok(reads)
}

/// Tokens and bytes of the reads with full and incremental reads, in `kind`, and (in Chromium)
/// of every peer's snapshots.
pub async fn tokens(kind: BrowserKind) -> anyhow::Result<Value> {
    let mut out = serde_json::Map::new();
    let mut runs =
        vec![("full".to_owned(), Some(Mode::Full)), ("incremental".to_owned(), Some(Mode::Incremental))];
    if kind == BrowserKind::Chromium {
        runs.extend(PEERS.iter().map(|p| (p.name.to_owned(), None)));
    }
    for (name, mode) in runs {
        let nova = Nova::start_with_default_gates_in(kind).await?;
        let reads = match mode {
            Some(mode) => flow(&nova, mode).await?,
            None => peer_flow(&nova, PEERS.iter().find(|p| p.name == name).expect("a peer")).await?,
        };
        let dir = crate::cmd::target_dir().join("bench");
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join(format!("reads-{}-{}.json", name.replace(' ', "-").to_lowercase(), kind.name())),
            serde_json::to_string_pretty(
                &reads
                    .iter()
                    .map(|r| serde_json::from_str(r).unwrap_or_else(|_| json!(r)))
                    .collect::<Vec<Value>>(),
            )?,
        )?;
        let tokens: u64 = crate::bench_tools::count_tokens(&reads)?.iter().sum();
        let bytes: usize = reads.iter().map(String::len).sum();
        out.insert(name, json!({"reads": reads.len(), "tokens": tokens, "bytes": bytes}));
    }
    Ok(Value::Object(out))
}

/// The lines `cargo xtask bench` prints.
pub fn render(r: &Value, label: &str) -> String {
    if r.is_null() {
        return String::new();
    }
    let full = r["full"]["tokens"].as_u64().unwrap_or_default();
    let mut s = format!("page reads over a 20-step flow (chat, list pages, form){label}:\n");
    let names = ["full", "incremental"].into_iter().chain(PEERS.iter().map(|p| p.name));
    for name in names.filter(|n| r.get(n).is_some()) {
        let t = r[name]["tokens"].as_u64().unwrap_or_default();
        #[allow(clippy::cast_precision_loss)]
        let ratio = if full > 0 { t as f64 / full as f64 } else { f64::NAN };
        s += &format!(
            "  {name:<20} {:>3} reads {:>8} bytes {:>7} tokens  {ratio:.2} of full\n",
            r[name]["reads"].as_u64().unwrap_or_default(),
            r[name]["bytes"].as_u64().unwrap_or_default(),
            t
        );
    }
    s
}
