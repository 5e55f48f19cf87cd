//! MediaWiki, from Debian's packages: the `mediawiki` package's files (unpacked, not installed,
//! so no web server is set up system-wide), PHP from Debian, a wiki made by MediaWiki's own
//! installer with SQLite, served by PHP's built-in server on loopback. Nothing of the
//! application is ours: the tests only drive its pages and read its database.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;
use serde_json::json;

use super::{Judge, Step, install_once, refused_without_contract, run, tools_dir};
use crate::agent::Agent;

/// The administrator's name.
pub const ADMIN_USER: &str = "Admin";
/// The administrator's password (a throwaway, local to the test's data directory).
pub const ADMIN_PASSWORD: &str = "correct-horse-battery-staple";
/// The PHP packages MediaWiki needs (Debian names).
const PHP_PACKAGES: &[&str] = &["php-cli", "php-sqlite3", "php-intl", "php-mbstring", "php-xml"];

/// PHP with the extensions MediaWiki needs, installed from Debian's packages when missing.
fn ensure_php() -> anyhow::Result<()> {
    let has = |m: &str| {
        Command::new("php").arg("-m").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(m))
    };
    if ["pdo_sqlite", "intl", "mbstring", "xml"].iter().all(|m| has(m)) {
        return Ok(());
    }
    apt_update()?;
    run(Command::new("apt-get")
        .args(["install", "-y", "--no-install-recommends"])
        .args(PHP_PACKAGES)
        .env("DEBIAN_FRONTEND", "noninteractive"))
    .with_context(|| {
        format!(
            "installing PHP for MediaWiki (needs root; or run `sudo apt-get install -y {}`)",
            PHP_PACKAGES.join(" ")
        )
    })?;
    Ok(())
}

/// Fresh package lists (a new machine may have none).
fn apt_update() -> anyhow::Result<()> {
    run(Command::new("apt-get").arg("update").env("DEBIAN_FRONTEND", "noninteractive"))
        .context("apt-get update (needs root)")
        .map(|_| ())
}

/// MediaWiki's files, unpacked once from Debian's package.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    ensure_php()?;
    let dir = tools_dir().join("mediawiki-debian");
    install_once(&dir, |tmp| {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "==> unpacking MediaWiki from Debian's packages into {}",
            dir.display()
        );
        let download = || {
            run(Command::new("apt-get").args(["download", "mediawiki", "mediawiki-classes"]).current_dir(tmp))
        };
        if download().is_err() {
            apt_update()?;
            download()?;
        }
        let unpacked = tmp.join("root");
        for deb in std::fs::read_dir(tmp)?.flatten().map(|e| e.path()) {
            if deb.extension().is_some_and(|e| e == "deb") {
                run(Command::new("dpkg").arg("-x").arg(&deb).arg(&unpacked))?;
                std::fs::remove_file(&deb)?;
            }
        }
        let mw = unpacked.join("usr/share/mediawiki");
        // The package points these at /var/lib/mediawiki and /etc; a wiki of ours brings its own
        // settings file (MW_CONFIG_FILE) and uses the bundled extensions.
        for link in ["LocalSettings.php", "extensions", "images", "config"] {
            std::fs::remove_file(mw.join(link)).with_context(|| format!("{link} in the package"))?;
        }
        std::os::unix::fs::symlink("extensions-core", mw.join("extensions"))?;
        std::fs::create_dir_all(mw.join("images"))?;
        std::fs::create_dir_all(mw.join("config"))?;
        std::fs::rename(&mw, tmp.join("mediawiki"))?;
        std::fs::remove_dir_all(&unpacked)?;
        Ok(())
    })?;
    Ok(dir.join("mediawiki"))
}

/// A running wiki with its own settings and database.
pub struct MediaWiki {
    served: super::Served,
}

impl MediaWiki {
    /// Installs MediaWiki if needed, makes a wiki with an administrator, and serves it.
    pub async fn start() -> anyhow::Result<Self> {
        let mw = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data)?;
        let port = super::free_port()?;
        run(Command::new("php")
            .arg(mw.join("maintenance/install.php"))
            .args(["--dbtype=sqlite", "--dbname=wiki", "--lang=en", "--scriptpath="])
            .arg(format!("--dbpath={}", data.display()))
            .arg(format!("--server=http://127.0.0.1:{port}"))
            .arg(format!("--pass={ADMIN_PASSWORD}"))
            .arg(format!("--confpath={}", dir.path().display()))
            .args(["Nova Test Wiki", ADMIN_USER]))?;
        let mut serve = Command::new("php");
        serve
            .args(["-S", &format!("127.0.0.1:{port}"), "-t"])
            .arg(&mw)
            .env("MW_CONFIG_FILE", dir.path().join("LocalSettings.php"))
            // Browsers open spare connections; a single worker would wait on them.
            .env("PHP_CLI_SERVER_WORKERS", "4");
        Ok(Self { served: super::Served::spawn(dir, port, &mut serve, "MediaWiki (PHP's server)").await? })
    }

    /// The URL of the page `title` (`Special:UserLogin`), with `query` (`&action=delete`) after it.
    pub fn page(&self, title: &str, query: &str) -> String {
        format!("{}/index.php?title={title}{query}", self.served.origin)
    }

    /// The URL of the article `title` as the wiki links it (`/index.php/Main_Page`).
    pub fn article(&self, title: &str) -> String {
        format!("{}/index.php/{title}", self.served.origin)
    }

    /// One integer from the wiki's database.
    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        self.served.count("data/wiki.sqlite", sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// The wiki journey of a compliant agent (who has loaded its bundle): sign-in wrong and right,
/// an account form with a validation error (passwords that differ), a name already taken, a
/// valid account, and the deletion of a page, refused without a contract and confirmed with
/// one. Every verdict, `urlAfter` and the database after each step are checked here; `after`
/// sees each guarded step too (the store, timings).
pub async fn journey(
    wiki: &MediaWiki,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    let mut judge = Judge { after, log: &|| wiki.log(), count: &|sql| wiki.count(sql) };
    let agents = "SELECT COUNT(*) FROM user WHERE user_name = 'Nova Agent'";
    let admins = "SELECT COUNT(*) FROM user WHERE user_name = 'Admin'";
    let main_page = "SELECT COUNT(*) FROM page WHERE page_namespace = 0 AND page_title = 'Main_Page'";

    a.visit(&wiki.page("Special:UserLogin", "")).await?;
    let posted = wiki.article("Special:UserLogin");
    let landings = (posted, wiki.article("Main_Page"));
    judge.sign_in(a, (Some(ADMIN_USER), ADMIN_PASSWORD), landings, (agents, (0, 0))).await?;

    let create = wiki.page("Special:CreateAccount", "");
    let posted = wiki.article("Special:CreateAccount");
    let submit = json!("#wpCreateaccount");
    let account = |name: &str, retype: &str| {
        json!({"fields": {"#wpName2": name, "#wpPassword2": "Nova-agent-pass-1", "#wpRetype": retype,
                          "#wpReason": "made by a test"}, "submitSelector": submit})
    };
    a.visit(&create).await?;
    let r = a.call(SUBMIT, account("Nova Agent", "Another-pass-2")).await?;
    judge.step(
        ("submit_invalid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        posted.clone(),
        (agents, 0),
    )?;
    a.visit(&create).await?;
    let r = a.call(SUBMIT, account(ADMIN_USER, "Nova-agent-pass-1")).await?;
    judge.step(
        ("submit_duplicate", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        posted.clone(),
        (admins, 1),
    )?;
    a.visit(&create).await?;
    let r = a.call(SUBMIT, account("Nova Agent", "Nova-agent-pass-1")).await?;
    judge.step(("submit_valid", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", posted, (agents, 1))?;

    let delete = wiki.page("Main_Page", "&action=delete");
    a.visit(&delete).await?;
    refused_without_contract(
        &a.call("nova.click_selector", json!({"selector": "#wpConfirmB"})).await?,
        "a delete",
    )?;
    anyhow::ensure!(wiki.count(main_page)? == 1, "nothing deleted yet");
    let r = a.call(SUBMIT, json!({"submitSelector": "#wpConfirmB"})).await?;
    judge.step(("delete_confirm", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", delete, (main_page, 0))
}
