//! `cargo xtask bench --only realapps`: how long a verdict takes on real applications nobody on the
//! team wrote (the Django admin, django-two-factor-auth, Canaille, I Hate Money, sqlite-web,
//! Radicale, MLflow, Prefect, Fava, Wagtail, Trac, Gradio's chat interface and Streamlit, Chainlit, NiceGUI and Shiny
//! chats from PyPI, MediaWiki from Debian, Jingo, TiddlyWiki and Deep Chat from npm;
//! `nova_e2e::realapps`), per kind of step:
//! the time from dispatch to verdict (`guardedCommit.durationMs`), median and worst over the runs,
//! at the product's default settings, in each browser. Every run checks its verdicts and the
//! application's database as the end-to-end test does, so a wrong verdict fails the bench.

use std::collections::BTreeMap;

use nova_e2e::agent::Agent;
use nova_e2e::realapps::Step;
use nova_e2e::realapps::canaille::{self, Canaille};
use nova_e2e::realapps::chat::Picker;
use nova_e2e::realapps::django::{self, Django};
use nova_e2e::realapps::fava::{self, Fava};
use nova_e2e::realapps::ihatemoney::{self, IHateMoney};
use nova_e2e::realapps::jingo::{self, Jingo};
use nova_e2e::realapps::jupyterlab::{self, JupyterLab};
use nova_e2e::realapps::mediawiki::{self, MediaWiki};
use nova_e2e::realapps::mlflow::{self, Mlflow};
use nova_e2e::realapps::node_red::{self, NodeRed};
use nova_e2e::realapps::prefect::{self, Prefect};
use nova_e2e::realapps::radicale::{self, Radicale};
use nova_e2e::realapps::sqlite_web::{self, SqliteWeb};
use nova_e2e::realapps::tiddlywiki::{self, TiddlyWiki};
use nova_e2e::realapps::trac::{self, Trac};
use nova_e2e::realapps::two_factor::{self, TwoFactor};
use nova_e2e::realapps::wagtail::{self, Wagtail};
use nova_e2e::realapps::{chainlit, chat, deep_chat, gradio, nicegui, shiny, streamlit};
use nova_e2e::ui::Page;
use nova_e2e::{BrowserKind, Nova};
use serde_json::{Value, json};

use crate::measure::round;

/// Runs each application's journey `runs` times in `kind`; per application and step kind, the
/// verdict latency.
pub async fn verdicts(kind: BrowserKind, runs: usize) -> anyhow::Result<Value> {
    let mut samples: BTreeMap<(&'static str, &'static str), Vec<f64>> = BTreeMap::new();
    for _ in 0..runs {
        let app = Django::start().await?;
        let mut a = agent(kind).await?;
        django::journey(&app, &mut a.1, |step| record(&mut samples, "django", step)).await?;
        drop((app, a));
        let app = TwoFactor::start().await?;
        let mut a = agent(kind).await?;
        two_factor::journey(&app, &mut a.1, |step| record(&mut samples, "two-factor", step)).await?;
        drop((app, a));
        let app = Canaille::start().await?;
        let mut a = agent(kind).await?;
        canaille::journey(&app, &mut a.1, |step| record(&mut samples, "canaille", step)).await?;
        drop((app, a));
        let app = gradio::start().await?;
        let mut a = agent(kind).await?;
        chat::journey(&app, &mut a.1, Picker::Shown, |step| record(&mut samples, "gradio", step)).await?;
        drop((app, a));
        let app = streamlit::start().await?;
        let mut a = agent(kind).await?;
        chat::journey(&app, &mut a.1, Picker::Shown, |step| record(&mut samples, "streamlit", step)).await?;
        drop((app, a));
        let app = chainlit::start().await?;
        let mut a = agent(kind).await?;
        let settings = Picker::InDialog(&chainlit::SETTINGS);
        chat::journey(&app, &mut a.1, settings, |step| record(&mut samples, "chainlit", step)).await?;
        drop((app, a));
        let app = nicegui::start().await?;
        let mut a = agent(kind).await?;
        chat::journey(&app, &mut a.1, Picker::Shown, |step| record(&mut samples, "nicegui", step)).await?;
        drop((app, a));
        let app = deep_chat::start().await?;
        let mut a = agent(kind).await?;
        chat::journey(&app, &mut a.1, Picker::Shown, |step| record(&mut samples, "deep-chat", step)).await?;
        drop((app, a));
        let app = shiny::start().await?;
        let mut a = agent(kind).await?;
        chat::journey(&app, &mut a.1, Picker::Shown, |step| record(&mut samples, "shiny", step)).await?;
        drop((app, a));
        let wiki = MediaWiki::start().await?;
        let mut a = agent(kind).await?;
        mediawiki::journey(&wiki, &mut a.1, |step| record(&mut samples, "mediawiki", step)).await?;
        drop((wiki, a));
        let app = IHateMoney::start().await?;
        let mut a = agent(kind).await?;
        ihatemoney::journey(&app, &mut a.1, |step| record(&mut samples, "ihatemoney", step)).await?;
        drop((app, a));
        let app = SqliteWeb::start().await?;
        let mut a = agent(kind).await?;
        sqlite_web::journey(&app, &mut a.1, |step| record(&mut samples, "sqlite-web", step)).await?;
        drop((app, a));
        let app = Radicale::start().await?;
        let mut a = agent(kind).await?;
        radicale::journey(&app, (&mut a.1, kind), |step| record(&mut samples, "radicale", step)).await?;
        drop((app, a));
        let app = Mlflow::start().await?;
        let mut a = agent(kind).await?;
        mlflow::journey(&app, &mut a.1, |step| record(&mut samples, "mlflow", step)).await?;
        drop((app, a));
        let app = Prefect::start().await?;
        let mut a = agent(kind).await?;
        prefect::journey(&app, &mut a.1, |step| record(&mut samples, "prefect", step)).await?;
        drop((app, a));
        let app = Fava::start().await?;
        let mut a = agent(kind).await?;
        fava::journey(&app, &mut a.1, |step| record(&mut samples, "fava", step)).await?;
        drop((app, a));
        let app = NodeRed::start().await?;
        let mut a = agent(kind).await?;
        node_red::journey(&app, &mut a.1, |step| record(&mut samples, "node_red", step)).await?;
        drop((app, a));
        let app = JupyterLab::start().await?;
        let mut a = agent(kind).await?;
        jupyterlab::journey(&app, &mut a.1, |step| record(&mut samples, "jupyterlab", step)).await?;
        drop((app, a));
        let app = Trac::start().await?;
        let mut a = agent(kind).await?;
        trac::journey(&app, &mut a.1, |step| record(&mut samples, "trac", step)).await?;
        drop((app, a));
        let app = Wagtail::start().await?;
        let mut a = agent(kind).await?;
        wagtail::journey(&app, &mut a.1, |step| record(&mut samples, "wagtail", step)).await?;
        drop((app, a));
        let app = Jingo::start().await?;
        watched(kind, &app.url("/login"), async |a, tab| {
            let person = async || tab.accept_dialog().await;
            jingo::journey(&app, a, |step| record(&mut samples, "jingo", step), person).await
        })
        .await?;
        let app = TiddlyWiki::start().await?;
        watched(kind, &app.home(), async |a, tab| {
            let person = async || tab.accept_dialog().await;
            tiddlywiki::journey(&app, a, |step| record(&mut samples, "tiddlywiki", step), person).await
        })
        .await?;
    }
    let mut out = json!({});
    for ((app, step), mut v) in samples {
        v.sort_by(f64::total_cmp);
        let median = v[v.len() / 2];
        let worst = v.last().copied().unwrap_or(f64::NAN);
        out[app][step] = json!({"median": round(median), "worst": round(worst), "n": v.len()});
    }
    Ok(out)
}

/// Runs `journey` with a fresh Nova that has the person's view and a compliant agent on it, at
/// `home`, with the person's view of the agent's tab watching for native dialogs (the person
/// answers the applications' confirmation dialogs, as in the end-to-end tests).
async fn watched(
    kind: BrowserKind,
    home: &str,
    journey: impl AsyncFnOnce(&mut Agent, &Page<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let nova = Nova::start_with_ui_in(kind).await?;
    let mut a = Agent::new(&nova, "bench-agent").await?;
    a.ready().await?;
    a.visit(home).await?;
    let ui = nova.ui().await?;
    let tab = ui.wait_window(home, std::time::Duration::from_secs(10)).await?;
    tab.watch_dialogs().await?;
    journey(&mut a, &tab).await
}

/// A fresh Nova at the product's defaults and a compliant agent on it.
async fn agent(kind: BrowserKind) -> anyhow::Result<(Nova, Agent)> {
    let nova = Nova::start_with_default_gates_in(kind).await?;
    let mut a = Agent::new(&nova, "bench-agent").await?;
    a.ready().await?;
    Ok((nova, a))
}

fn record(
    samples: &mut BTreeMap<(&'static str, &'static str), Vec<f64>>,
    app: &'static str,
    step: &Step,
) -> anyhow::Result<()> {
    let ms = step.verdict_ms().ok_or_else(|| anyhow::anyhow!("{app} {}: no verdict time", step.kind))?;
    samples.entry((app, step.kind)).or_default().push(ms);
    Ok(())
}

/// The lines `cargo xtask bench` prints for [`verdicts`] (`label` names the browser).
pub fn render(r: &Value, label: &str) -> String {
    let mut s = String::new();
    for (app, steps) in r.as_object().into_iter().flatten() {
        for (step, v) in steps.as_object().into_iter().flatten() {
            s += &format!(
                "{:<50} median {:>7} ms   worst {:>7} ms\n",
                format!("verdict, {app} {step}{label}"),
                v["median"],
                v["worst"]
            );
        }
    }
    s
}
