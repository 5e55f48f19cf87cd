//! Prefect, from PyPI: a workflow orchestration server whose interface (its "V2 UI") is one React
//! page built with shadcn/ui. A variable is created in a dialog saved in the background: the
//! page confirms it only in a Sonner toast ("Variable created") that leaves after four seconds,
//! and a name taken is refused in the dialog's own line (shadcn's form message, marked by no
//! role). Nothing of the application is ours: the tests only drive its page and read its SQLite
//! store.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use super::{Judge, Step};
use crate::agent::Agent;

/// The Prefect release installed.
pub const VERSION: &str = "3.9.1";

/// The interpreter of the virtualenv with Prefect, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Prefect", "prefect", VERSION)
}

/// A running Prefect server on a fresh SQLite store, with no variables.
pub struct Prefect {
    served: super::Served,
}

impl Prefect {
    /// Installs Prefect if needed and serves a fresh store on loopback, analytics off. The server
    /// listens before it has made its store; this returns once its API says it is healthy.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let port = super::free_port()?;
        let mut serve = Command::new(&python);
        serve
            .args(["-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", &port.to_string()])
            .env("PREFECT_HOME", dir.path())
            // The page asks the API at this address (by default port 4200's).
            .env("PREFECT_UI_API_URL", format!("http://127.0.0.1:{port}/api"))
            .env("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
            .env("DO_NOT_TRACK", "1")
            .current_dir(dir.path());
        let served = super::Served::spawn(dir, port, &mut serve, "the Prefect server").await?;
        served.until_ok("/api/health", "the Prefect server's store").await?;
        Ok(Self { served })
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.served.origin)
    }

    /// One integer from its store.
    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        self.served.count("prefect.db", sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// Opens the new-variable dialog on the variables view.
async fn open_create(app: &Prefect, a: &mut Agent) -> anyhow::Result<()> {
    super::open_dialog(a, &app.url("/v2/variables"), "button \"Add variable\"", "textbox \"Name\"").await
}

/// The journey of a compliant agent (who has loaded its bundle), with no contract of its own: a
/// variable created from the dialog (the toast proves it), and the same name again, refused in
/// the dialog. Every verdict, `urlAfter` and the store after each step are checked here; `after`
/// sees each guarded step too.
pub async fn journey(
    app: &Prefect,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    let mut judge = Judge { after, log: &|| app.log(), count: &|sql| app.count(sql) };
    let named = |name: &str| format!("SELECT COUNT(*) FROM variable WHERE name = '{name}'");
    // The value is JSON, typed into the dialog's code editor (CodeMirror 6: through its
    // EditContext in Chromium).
    let create = json!({"fields": {"input[name=\"name\"]": "retries", ".cm-content": "3"}});
    // The page writes its list's paging into the address.
    let variables = app.url("/v2/variables?offset=0&sort=CREATED_DESC&limit=10");

    open_create(app, a).await?;
    let r = a.call(SUBMIT, create.clone()).await?;
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        variables.clone(),
        (&named("retries"), 1),
    )?;

    open_create(app, a).await?;
    let r = a.call(SUBMIT, create).await?;
    let said = super::failed_observed(&r.0, "form.errorNote");
    anyhow::ensure!(
        said.as_str().is_some_and(|s| s.contains("already exists")),
        "the dialog's refusal: {}",
        r.0
    );
    judge.step(
        ("submit_duplicate", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        variables,
        (&named("retries"), 1),
    )
}
