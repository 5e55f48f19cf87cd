//! `cargo xtask bench --only stages`: where the time of a page read and of a click goes, stage by
//! stage, from the calls' own timings (`_meta["io.nova/timing"]`, docs/performance.md): the MCP
//! relay, the hub's gates, the tool, the work after the call and the evidence write, native
//! messaging, the background worker, the message to the tab, and the page's own work (the
//! floor the rest is measured against) with its parts; and, beside each read, what the
//! browser itself charges for the DOM reads the walk has to make, measured in plain JavaScript
//! in the page and again from a content script's realm ([`DOM_READS`]). Medians of each stage on
//! its own.

use serde_json::{Value, json};

use nova_e2e::{BrowserKind, Nova};

use crate::measure::{BENCH_SETTINGS, WHOLE_PAGE, p50};

/// What is measured: (label, fixture, tool, arguments).
const CASES: [(&str, &str, &str, &str); 4] = [
    ("perceive list", "bench.html", "nova.perceive", WHOLE_PAGE),
    ("perceive article", "article.html", "nova.perceive", WHOLE_PAGE),
    ("perceive app", "app.html", "nova.perceive", WHOLE_PAGE),
    ("click", "bench.html", "nova.click_selector", r##"{"selector": "#bench-btn"}"##),
];

/// The reads a page walk makes, done in plain JavaScript on the same page: for every element,
/// `checkVisibility` with opacity and visibility; for each one seen, its box and the computed
/// style a seen-text judgement reads (background colour and `clip-path`; font size and colour
/// when it holds text). The browser's own cost of them, with no WebAssembly, no crossing and no
/// answer: the part of `pageMs` no walk can go below (docs/performance.md).
const DOM_READS: &str = r#"(() => {
  const t = performance.now();
  const seen = {opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: false};
  for (const e of document.body.querySelectorAll('*')) {
    if (!e.checkVisibility(seen)) continue;
    const r = e.getBoundingClientRect();
    if (r.width + r.height + r.left + r.top < -1e9) continue;
    const s = getComputedStyle(e);
    for (let n = e.firstChild; n; n = n.nextSibling) {
      if (n.nodeType === 3 && n.data.trim()) {
        s.getPropertyValue('font-size');
        s.getPropertyValue('color');
        break;
      }
    }
    s.getPropertyValue('background-color');
    s.getPropertyValue('clip-path');
  }
  return performance.now() - t;
})()"#;

/// The rows of [`DOM_READS`]' medians, beside the stages: run by the page's own script, and by
/// a content script (Nova's world in Chromium; in Firefox a sandbox, which sees the page through
/// the same Xray wrappers as a content script: each DOM call costs more there).
const DOM_READS_ROWS: [&str; 2] =
    ["page's DOM reads alone, in plain JS", "the same from a content script's realm"];

/// How a stage is computed from one call's timings.
type Of = fn(&Value) -> f64;

/// The stages, in the order a call passes them, each computed from one call's timings; the
/// browser's stages are those of the tool's longest request (the others overlap it).
const STAGES: [(&str, Of); 17] = [
    ("whole call (client)", |t| f(t, "/clientMs")),
    ("MCP relay and transport", |t| f(t, "/clientMs") - f(t, "/hubMs")),
    ("hub: gates", |t| f(t, "/stages/gatesMs")),
    ("hub: tool, outside the browser", |t| f(t, "/stages/toolMs") - main(t, "roundTripMs")),
    ("hub: after the call", |t| f(t, "/stages/afterCallMs")),
    ("hub: evidence write", |t| f(t, "/stages/evidenceMs")),
    ("native messaging, both ways", |t| {
        main(t, "roundTripMs") - main(t, "backgroundMs") - main(t, "hubDecodeMs")
    }),
    ("  of which: hub decodes", |t| main(t, "hubDecodeMs")),
    ("background worker", |t| {
        main(t, "backgroundMs") - main(t, "tabMs") - main(t, "readyMs") - main(t, "decodeMs")
    }),
    ("  of which: decodes the page's answer", |t| main(t, "decodeMs")),
    ("script ready check (actions)", |t| main(t, "readyMs")),
    ("message to the tab and back", |t| main(t, "tabMs") - main(t, "settleMs") - main(t, "pageMs")),
    ("waiting for the page to stop moving", |t| main(t, "settleMs")),
    ("page's own work (the floor)", |t| main(t, "pageMs")),
    ("  walk / signals", |t| main(t, "walkMs") + main(t, "signalsMs")),
    ("  encode the answer", |t| main(t, "encodeMs")),
    ("tool's other requests (overlapped)", |t| {
        tool_requests(t).map(|r| r["roundTripMs"].as_f64().unwrap_or(0.0)).sum::<f64>()
            - main(t, "roundTripMs")
    }),
];

fn f(t: &Value, pointer: &str) -> f64 {
    t.pointer(pointer).and_then(Value::as_f64).unwrap_or(0.0)
}

/// The requests to the browser the tool made.
fn tool_requests(t: &Value) -> impl Iterator<Item = &Value> {
    t["browser"].as_array().into_iter().flatten().filter(|r| r["during"] == "toolMs")
}

/// `key` of the tool's longest request to the browser.
fn main(t: &Value, key: &str) -> f64 {
    tool_requests(t)
        .max_by(|a, b| f(a, "/roundTripMs").total_cmp(&f(b, "/roundTripMs")))
        .and_then(|r| r[key].as_f64())
        .unwrap_or(0.0)
}

/// The stage medians of every case in `kind`: `{case: {stage: ms}}`.
pub async fn stages(kind: BrowserKind, iterations: usize) -> anyhow::Result<Value> {
    // With the browser's driver open: the plain-JavaScript reads run in the page through it.
    let nova = Nova::start_with_ui_in(kind).await?;
    std::fs::write(nova.data.join("settings.json"), BENCH_SETTINGS)?;
    let c = nova.client().await?;
    let ui = nova.ui().await?;
    let mut out = serde_json::Map::new();
    for (label, fixture, tool, args) in CASES {
        c.structured("nova.navigate", json!({"url": nova.url(fixture)})).await?;
        let page = if tool == "nova.perceive" {
            Some(ui.wait_window(fixture, std::time::Duration::from_secs(10)).await?)
        } else {
            None
        };
        let args: Value = serde_json::from_str(args)?;
        let (mut calls, mut reads, mut as_extension) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..iterations {
            let (r, timing) = c.call_timed(tool, args.clone()).await?;
            anyhow::ensure!(r.is_error != Some(true), "{tool} failed on {fixture}");
            calls.push(timing);
            if let Some(p) = &page {
                let ms = p.eval(DOM_READS).await?;
                reads.push(ms.as_f64().ok_or_else(|| anyhow::anyhow!("the DOM reads answered {ms}"))?);
                let ms = p.eval_as_content_script(DOM_READS).await?;
                as_extension.push(ms.as_f64().ok_or_else(|| anyhow::anyhow!("the DOM reads answered {ms}"))?);
            }
        }
        let mut row = serde_json::Map::new();
        for (stage, of) in STAGES {
            row.insert(stage.into(), json!(p50(calls.iter().map(of).collect())));
        }
        for (name, ms) in DOM_READS_ROWS.into_iter().zip([reads, as_extension]) {
            row.insert(name.into(), if ms.is_empty() { Value::Null } else { json!(p50(ms)) });
        }
        out.insert(label.into(), Value::Object(row));
    }
    Ok(Value::Object(out))
}

/// The table `cargo xtask bench` prints.
pub fn render(r: &Value, label: &str) -> String {
    let Some(cases) = r.as_object() else { return String::new() };
    let mut s = format!("where the time goes, p50 ms per stage{label}:\n{:<40}", "");
    for case in cases.keys() {
        s += &format!("{case:>18}");
    }
    s += "\n";
    for stage in STAGES.iter().map(|(stage, _)| *stage).chain(DOM_READS_ROWS) {
        s += &format!("  {stage:<38}");
        for v in cases.values() {
            s += &match v[stage].as_f64() {
                Some(ms) => format!("{ms:>18.2}"),
                None => format!("{:>18}", "-"),
            };
        }
        s += "\n";
    }
    s
}
