//! Where Nova keeps its files. Everything Nova writes lives under one data dir:
//! `--data-dir`, else `NOVA_HOME`, else the platform data directory.
//!
//! ```text
//! nova.db            the store (SQLite, WAL)
//! mcp-token          bearer token for the HTTP endpoint (mode 0600)
//! hubs/<browser>.json  registration of a running hub (pid, socket, HTTP URL)
//! hubs/<browser>.sock  unix socket `nova mcp` relays connect to
//! logs/              hub logs
//! screenshots/       captures saved by `nova.capture_screenshot`
//! ```

use std::io;
use std::path::{Path, PathBuf};

/// Environment variable naming the data dir. A browser passes its environment to the host it
/// spawns, so a browser started with `NOVA_HOME` gives its hub that data dir.
pub const NOVA_HOME_ENV: &str = "NOVA_HOME";

/// The resolved data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// Site-specific adapter files (`*.json`, see shared/adapters/README.md).
    pub fn adapters(&self) -> PathBuf {
        self.root.join("adapters")
    }

    /// Resolves the data dir: explicit path, then `NOVA_HOME`, then the platform default.
    pub fn resolve(explicit: Option<&Path>) -> io::Result<Self> {
        if let Some(p) = explicit {
            return Ok(Self::at(p));
        }
        if let Some(p) = std::env::var_os(NOVA_HOME_ENV).filter(|v| !v.is_empty()) {
            return Ok(Self::at(Path::new(&p)));
        }
        let dirs = directories::ProjectDirs::from("io", "nova", "nova").ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, "no home directory to put the Nova data dir in")
        })?;
        Ok(Self::at(dirs.data_dir()))
    }

    /// A data dir at `root` (made absolute against the current directory).
    pub fn at(root: &Path) -> Self {
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        Self { root }
    }

    /// Creates the directory tree with owner-only permissions.
    pub fn ensure(&self) -> io::Result<()> {
        for dir in [self.root.clone(), self.hubs(), self.logs(), self.screenshots()] {
            std::fs::create_dir_all(&dir)?;
            set_mode(&dir, 0o700)?;
        }
        Ok(())
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The SQLite store.
    pub fn db(&self) -> PathBuf {
        self.root.join("nova.db")
    }

    /// Hub registrations and sockets.
    pub fn hubs(&self) -> PathBuf {
        self.root.join("hubs")
    }

    /// The HTTP bearer token file.
    pub fn token_file(&self) -> PathBuf {
        self.root.join("mcp-token")
    }

    /// Log files.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// Saved screenshots.
    pub fn screenshots(&self) -> PathBuf {
        self.root.join("screenshots")
    }

    /// The socket of the hub for `browser`.
    pub fn hub_socket(&self, browser: &str) -> PathBuf {
        self.hubs().join(format!("{browser}.sock"))
    }

    /// The registration file of the hub for `browser`.
    pub fn hub_file(&self, browser: &str) -> PathBuf {
        self.hubs().join(format!("{browser}.json"))
    }
}

/// Sets unix permissions; a no-op elsewhere.
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_dir_wins_and_lays_out_files() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let d = DataDir::resolve(Some(tmp.path())).expect("resolve");
        d.ensure().expect("ensure");
        assert_eq!(d.db(), tmp.path().join("nova.db"));
        assert_eq!(d.hub_socket("chromium"), tmp.path().join("hubs/chromium.sock"));
        assert!(d.hubs().is_dir() && d.logs().is_dir());
    }
}
