//! The Django admin, from PyPI: a stock project (`django-admin startproject`) with SQLite, a
//! superuser, served by Django's own development server on loopback. Nothing of the
//! application is ours: the tests only drive its admin pages and read its database.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::Context;

use super::{install_once, run, tools_dir};

/// The Django release installed (5.2 is the long-term support line).
pub const VERSION: &str = "5.2.19";
/// The superuser's name.
pub const ADMIN_USER: &str = "admin";
/// The superuser's password (a throwaway, local to the test's data directory).
pub const ADMIN_PASSWORD: &str = "correct-horse-battery-staple";

/// The virtualenv with Django, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    let dir = tools_dir().join(format!("django-{VERSION}"));
    install_once(&dir, |tmp| {
        // Progress for whoever watches a first run (the install takes a while).
        let _ =
            writeln!(std::io::stderr(), "==> installing Django {VERSION} from PyPI into {}", dir.display());
        run(Command::new("python3").args(["-m", "venv"]).arg(tmp))
            .context("python3 -m venv (Debian/Ubuntu: apt-get install -y python3-venv)")?;
        run(Command::new(tmp.join("bin/pip")).args(["install", "--quiet", &format!("Django=={VERSION}")]))?;
        Ok(())
    })?;
    // The venv's scripts name the directory they were made in; call the interpreter directly.
    Ok(dir)
}

/// A running Django admin with its own project directory and database.
pub struct Django {
    child: Child,
    dir: tempfile::TempDir,
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
}

impl Django {
    /// Installs Django if needed, makes a project with a superuser, and serves it.
    pub async fn start() -> anyhow::Result<Self> {
        let venv = ensure_installed()?;
        let python = python_in(&venv)?;
        let dir = tempfile::tempdir()?;
        let project = dir.path();
        run(Command::new(&python).args(["-m", "django", "startproject", "demo", "."]).current_dir(project))?;
        run(Command::new(&python).args(["manage.py", "migrate", "--noinput"]).current_dir(project))?;
        run(Command::new(&python)
            .args([
                "manage.py",
                "createsuperuser",
                "--noinput",
                "--username",
                ADMIN_USER,
                "--email",
                "admin@example.org",
            ])
            .env("DJANGO_SUPERUSER_PASSWORD", ADMIN_PASSWORD)
            .current_dir(project))?;
        let port = super::free_port()?;
        let log = std::fs::File::create(project.join("server.log"))?;
        let child = Command::new(&python)
            .args(["manage.py", "runserver", "--noreload"])
            .arg(format!("127.0.0.1:{port}"))
            .current_dir(project)
            .stdout(Stdio::from(log.try_clone()?))
            .stderr(Stdio::from(log))
            .spawn()
            .context("starting the Django server")?;
        let me = Self { child, dir, origin: format!("http://127.0.0.1:{port}") };
        super::wait_listening(port, 60, "the Django server").await?;
        Ok(me)
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    /// The application's own database.
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("db.sqlite3")
    }

    /// One integer from the application's database.
    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        crate::store::query_i64(&self.db(), sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }
}

impl Drop for Django {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python_in(venv: &Path) -> anyhow::Result<PathBuf> {
    let p = venv.join("bin/python3");
    p.is_file().then_some(p).with_context(|| format!("no python3 in {}", venv.display()))
}
