//! MLflow, from PyPI: the tracking server of a machine-learning platform, whose interface is one
//! React page that draws its views by the address's fragment (`/#/experiments`). Creating an
//! experiment happens in a dialog (a form with no submit button of its own: the dialog's footer
//! holds Create), saved in the background, after which the page shows the new experiment's view;
//! a name taken is refused in the dialog. Every view carries `role="status"` badges ("Beta",
//! "New"), which say nothing about what an action did. Nothing of the application is ours: the
//! tests only drive its page and read its SQLite store.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use super::{Judge, Step};
use crate::agent::Agent;

/// The MLflow release installed.
pub const VERSION: &str = "3.17.2";

/// The interpreter of the virtualenv with MLflow, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("MLflow", "mlflow", VERSION)
}

/// A running MLflow tracking server on a fresh SQLite store (its one experiment is `Default`).
pub struct Mlflow {
    served: super::Served,
}

impl Mlflow {
    /// Installs MLflow if needed and serves a fresh store on loopback, telemetry off.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let store = format!("sqlite:///{}", dir.path().join("mlflow.db").display());
        let port = super::free_port()?;
        let mut serve = Command::new(&python);
        serve
            .args(["-m", "mlflow", "server", "--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--workers", "1", "--backend-store-uri", &store])
            .arg("--default-artifact-root")
            .arg(dir.path().join("artifacts"))
            .env("MLFLOW_DISABLE_TELEMETRY", "true")
            .env("DO_NOT_TRACK", "true")
            .current_dir(dir.path());
        Ok(Self { served: super::Served::spawn(dir, port, &mut serve, "the MLflow server").await? })
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.served.origin)
    }

    /// One integer from its store.
    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        self.served.count("mlflow.db", sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// Opens the create dialog on the experiments view.
async fn open_create(app: &Mlflow, a: &mut Agent) -> anyhow::Result<()> {
    super::open_dialog(a, &app.url("/#/experiments"), "button \"Create\"", "textbox \"Experiment Name\"")
        .await
}

/// The journey of a compliant agent (who has loaded its bundle): an experiment created from the
/// dialog with no contract (the page shows the new experiment's view and no message, and its
/// badges prove nothing: not proven), one created with the agent's contract naming the view it
/// lands on, and the same name again, refused in the dialog. Every verdict, `urlAfter` and the
/// store after each step are checked here; `after` sees each guarded step too.
pub async fn journey(
    app: &Mlflow,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    let mut judge = Judge { after, log: &|| app.log(), count: &|sql| app.count(sql) };
    let named = |name: &str| format!("SELECT COUNT(*) FROM experiments WHERE name = '{name}'");
    let name_field = "input[placeholder=\"Input an experiment name\"]";

    open_create(app, a).await?;
    let r = a.call(SUBMIT, json!({"fields": {name_field: "churn"}})).await?;
    let churn = app.url("/#/experiments/1/overview/usage?workflowType=genai");
    judge.step(
        ("submit_unproven", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "indeterminate",
        churn,
        (&named("churn"), 1),
    )?;

    // Named as the unproven reply says, in `success.any`: the view the page lands on (the badges
    // showed before, so only what did not hold then counts).
    let landed = json!({"actionKind": "submit_form", "postconditions": {"success": {"any": [
        {"factKey": "page.url", "operator": "contains", "expected": "/overview"}]}}});
    let create = json!({"fields": {name_field: "retention"}, "transitionContract": landed});
    open_create(app, a).await?;
    let r = a.call(SUBMIT, create.clone()).await?;
    let retention = app.url("/#/experiments/2/overview/usage?workflowType=genai");
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        retention,
        (&named("retention"), 1),
    )?;

    open_create(app, a).await?;
    let r = a.call(SUBMIT, create).await?;
    let said = super::failed_observed(&r.0, "chat.errorBanner");
    anyhow::ensure!(
        said.as_str().is_some_and(|s| s.contains("Experiment \"retention\" already exists.")),
        "the dialog's refusal: {}",
        r.0
    );
    let experiments = app.url("/#/experiments");
    judge.step(
        ("submit_duplicate", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        experiments,
        (&named("retention"), 1),
    )
}
