//! Jingo, from npm: a wiki on Node.js and Express that keeps its pages as Markdown files in a
//! git repository, with a local account, served by its own server on loopback. Nothing of the
//! application is ours: the tests only drive its pages and read its repository, which is its
//! database (a page is a file; each change is a commit).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::{Judge, Step, refused_without_contract, run, with_person};
use crate::agent::Agent;

/// The Jingo release installed (the last of the 1.x line).
pub const VERSION: &str = "1.9.7";
/// The local account's name.
pub const ADMIN_USER: &str = "admin";
/// The local account's password (a throwaway, local to the test's data directory).
pub const ADMIN_PASSWORD: &str = "correct-horse-battery-staple";

/// Jingo and its dependencies, installed once with npm.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::npm_install_once("Jingo", "jingo", VERSION, "jingo")
}

/// The identity Jingo's git commits carry (the server commits on the person's behalf).
const GIT_IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "Jingo test"),
    ("GIT_AUTHOR_EMAIL", "jingo@example.org"),
    ("GIT_COMMITTER_NAME", "Jingo test"),
    ("GIT_COMMITTER_EMAIL", "jingo@example.org"),
];

/// Jingo's settings: a local account, its CodeMirror editor (the only one it has since 1.8; the
/// agent types into CodeMirror's own input), no avatars from the network, loopback only.
fn config(repo: &Path, port: u16, hash: &str) -> String {
    let repo = repo.display();
    format!(
        r#"application:
  title: Nova Test Wiki
  repository: '{repo}'
  docSubdir: ''
  remote: ''
  secret: a-local-test-secret
  git: git
  skipGitCheck: false
  loggingMode: 1
  pedanticMarkdown: true
  gfmBreaks: true
  proxyPath: ''
  allowHtml: false
authentication:
  google:
    enabled: false
  github:
    enabled: false
  ldap:
    enabled: false
  local:
    enabled: true
    accounts:
      - username: '{ADMIN_USER}'
        passwordHash: '{hash}'
        email: 'admin@example.org'
features:
  markitup: false
  codemirror: true
  gravatar: false
server:
  hostname: 127.0.0.1
  port: {port}
  localOnly: true
  baseUrl: ''
  CORS:
    enabled: false
authorization:
  anonRead: true
  validMatches: .+
  emptyEmailMatches: false
pages:
  index: Home
  title:
    fromFilename: true
    fromContent: false
    asciiOnly: false
    lowercase: false
  itemsPerPage: 10
"#
    )
}

/// A running Jingo with its own repository.
pub struct Jingo {
    served: super::Served,
}

impl Jingo {
    /// Installs Jingo if needed, makes a repository and an account, and serves it.
    pub async fn start() -> anyhow::Result<Self> {
        let jingo = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let repo = dir.path().join("wiki");
        std::fs::create_dir_all(&repo)?;
        let git = |args: &[&str]| run(Command::new("git").args(args).current_dir(&repo).envs(GIT_IDENTITY));
        git(&["init", "--quiet"])?;
        git(&["commit", "--quiet", "--allow-empty", "-m", "An empty wiki"])?;
        let hash = run(Command::new("node").arg(&jingo).args(["-#", ADMIN_PASSWORD]))?;
        let port = super::free_port()?;
        let settings = dir.path().join("config.yaml");
        std::fs::write(&settings, config(&repo, port, hash.trim()))?;
        let mut serve = Command::new("node");
        serve.arg(&jingo).arg("-c").arg(&settings).current_dir(dir.path()).envs(GIT_IDENTITY);
        Ok(Self { served: super::Served::spawn(dir, port, &mut serve, "the Jingo server").await? })
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.served.origin)
    }

    /// What the repository says about a page file: `added:F` counts the commits that added `F`
    /// (a page made twice would show two), `present:F` is 1 while `F` is in the wiki.
    pub fn count(&self, query: &str) -> anyhow::Result<i64> {
        let repo = self.served.path("wiki");
        let git = |args: &[&str]| run(Command::new("git").arg("-C").arg(&repo).args(args));
        let lines = |s: String| s.lines().filter(|l| !l.trim().is_empty()).count() as i64;
        match query.split_once(':') {
            Some(("added", file)) => Ok(lines(git(&["log", "--diff-filter=A", "--format=%H", "--", file])?)),
            Some(("present", file)) => Ok(lines(git(&["ls-tree", "--name-only", "HEAD", "--", file])?)),
            _ => anyhow::bail!("unknown repository query `{query}` (added:FILE or present:FILE)"),
        }
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// The wiki journey of a compliant agent (who has loaded its bundle): sign-in wrong and right, a
/// new page without content (the application's validation error) and with it, a rename onto a page
/// that exists (the application refuses the duplicate), and the deletion of a page, refused without
/// a contract and, with one, confirmed by the person in the browser's own dialog (`person` accepts
/// a native dialog when one shows, and says whether it did). Every verdict, `urlAfter` and the
/// repository after each step are checked here; `after` sees each guarded step too (the store,
/// timings).
pub async fn journey(
    app: &Jingo,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
    person: impl AsyncFn() -> bool,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    let mut judge = Judge { after, log: &|| app.log(), count: &|q| app.count(q) };
    let editors = "added:Editors.md";

    let login = app.url("/login");
    a.visit(&login).await?;
    // Signed in, Jingo goes home; the wiki has no home page yet, so it offers to write one.
    let landings = (login.clone(), app.url("/pages/new/Home"));
    judge.sign_in(a, (Some(ADMIN_USER), ADMIN_PASSWORD), landings, (editors, (0, 0))).await?;

    let save = json!("input[type=submit][value=Save]");
    let page = |title: &str, content: &str| json!({"fields": {"#js--pageTitle": title, ".CodeMirror textarea": content}, "submitSelector": save});
    a.visit(&app.url("/pages/new")).await?;
    let r = a.call(SUBMIT, page("Editors", "")).await?;
    judge.step(
        ("submit_invalid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        app.url("/pages/new/Editors?e=1"),
        (editors, 0),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, page("Editors", "Who edits what.")).await?;
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/wiki/Editors"),
        (editors, 1),
    )?;
    a.visit(&app.url("/pages/new")).await?;
    let r = a.call(SUBMIT, page("Drafts", "Pages in the making.")).await?;
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/wiki/Drafts"),
        ("present:Drafts.md", 1),
    )?;

    // Renaming Drafts to Editors would make a second Editors page: Jingo refuses it.
    a.visit(&app.url("/pages/Drafts/edit")).await?;
    let r = a.call(SUBMIT, page("Editors", "Pages in the making.")).await?;
    judge.step(
        ("submit_duplicate", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        app.url("/pages/Drafts/edit?e=1"),
        (editors, 1),
    )?;
    anyhow::ensure!(app.count("present:Drafts.md")? == 1, "Drafts must still be there");

    a.visit(&app.url("/pages/Editors/edit")).await?;
    let delete = "input.confirm-delete-page";
    refused_without_contract(&a.call("nova.click_selector", json!({"selector": delete})).await?, "a delete")?;
    anyhow::ensure!(app.count("present:Editors.md")? == 1, "nothing deleted yet");
    // Jingo keeps its page tools behind the menu bar until the pointer is over their handle.
    // They slide down; while they do, the button is still covered and Nova says it is safe to
    // try again, as an agent does.
    a.step("nova.click_selector", json!({"selector": "li.tools-handle"})).await?;
    // Jingo asks "Do you really want to delete this page?" with the browser's own dialog, which
    // only the person can answer: `person` does, as soon as it shows.
    let mut r = with_person(a.call(SUBMIT, json!({"submitSelector": delete})), &person).await?;
    for _ in 0..20 {
        if r.0["pageReasonCode"] != "element_covered" || r.0["retryAdvice"] != "safe_to_retry" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        r = with_person(a.call(SUBMIT, json!({"submitSelector": delete})), &person).await?;
    }
    judge.step(
        ("delete_confirm", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/pages/new/Home"),
        ("present:Editors.md", 0),
    )
}
