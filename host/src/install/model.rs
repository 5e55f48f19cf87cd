//! What installing is about, shared by the decisions (the parent module) and the per-OS tables
//! (`linux`, `macos`, `windows`): browsers, variants, the environment, targets, where a manifest
//! goes, and the errors.

use std::path::{Path, PathBuf};

use nova_shared::NATIVE_HOST_NAME;

/// Browsers Nova can register with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Browser {
    /// Chromium.
    Chromium,
    /// Google Chrome.
    Chrome,
    /// Microsoft Edge.
    Edge,
    /// Brave.
    Brave,
    /// Firefox.
    Firefox,
}

impl Browser {
    /// All browsers.
    pub const ALL: [Browser; 5] = [Self::Chromium, Self::Chrome, Self::Edge, Self::Brave, Self::Firefox];

    /// Lower-case name (as `--browser` takes it).
    pub fn name(self) -> &'static str {
        match self {
            Self::Chromium => "chromium",
            Self::Chrome => "chrome",
            Self::Edge => "edge",
            Self::Brave => "brave",
            Self::Firefox => "firefox",
        }
    }

    /// Whether this browser uses Firefox's manifest format.
    pub fn is_firefox(self) -> bool {
        self == Self::Firefox
    }
}

/// The operating systems Nova registers on; each has its own table module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux (XDG config dirs, Flatpak, Snap).
    Linux,
    /// macOS (`~/Library/Application Support`).
    Macos,
    /// Windows (manifest files named by HKCU registry keys).
    Windows,
}

impl Os {
    /// The OS this process runs on, if Nova supports it.
    pub fn current() -> Option<Os> {
        Self::from_name(std::env::consts::OS)
    }

    /// The OS named like [`std::env::consts::OS`] names it.
    pub fn from_name(name: &str) -> Option<Os> {
        match name {
            "linux" => Some(Self::Linux),
            "macos" => Some(Self::Macos),
            "windows" => Some(Self::Windows),
            _ => None,
        }
    }
}

/// How a browser is packaged; sandboxed packages read manifests from their own directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The browser's own package (distribution package, vendor installer, `.app`).
    Native,
    /// A Flatpak (Linux).
    Flatpak,
    /// A Snap (Linux).
    Snap,
}

impl Variant {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Flatpak => "flatpak",
            Self::Snap => "snap",
        }
    }
}

/// The environment facts the per-OS tables read. [`Env::from_process`] fills it in; tests
/// build it by hand to describe any OS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    /// Which table applies.
    pub os: Os,
    /// The user's home directory.
    pub home: PathBuf,
    /// `XDG_CONFIG_HOME` (Linux; ignored unless absolute, as the XDG spec says).
    pub xdg_config_home: Option<PathBuf>,
    /// `%LOCALAPPDATA%` (Windows; default `<home>\AppData\Local`).
    pub local_app_data: Option<PathBuf>,
    /// `%APPDATA%` (Windows; default `<home>\AppData\Roaming`).
    pub app_data: Option<PathBuf>,
    /// `%ProgramFiles%`, `%ProgramFiles(x86)%` and `%ProgramW6432%` (Windows: where browsers
    /// are installed for every user).
    pub program_files: Vec<PathBuf>,
}

impl Env {
    /// The facts of this process: its OS and environment variables.
    pub fn from_process() -> Result<Env, Error> {
        let os = Os::current().ok_or_else(|| Error::UnsupportedOs(std::env::consts::OS.to_owned()))?;
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        // Windows shells such as Git Bash set HOME too; the profile directory is what browsers use.
        let home = match os {
            Os::Windows => var("USERPROFILE").or_else(|| var("HOME")),
            Os::Linux | Os::Macos => var("HOME"),
        }
        .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()))
        .ok_or(Error::NoHome)?;
        Ok(Env {
            os,
            home,
            xdg_config_home: var("XDG_CONFIG_HOME"),
            local_app_data: var("LOCALAPPDATA"),
            app_data: var("APPDATA"),
            program_files: ["ProgramFiles", "ProgramFiles(x86)", "ProgramW6432"]
                .into_iter()
                .filter_map(var)
                .fold(Vec::new(), |mut all, p| {
                    if !all.contains(&p) {
                        all.push(p);
                    }
                    all
                }),
        })
    }
}

/// Where one manifest goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Which browser (Chromium format for a custom profile).
    pub browser: Browser,
    /// Which package of it.
    pub variant: Variant,
    /// The manifest file path.
    pub manifest: PathBuf,
    /// Windows: the `HKEY_CURRENT_USER` subkey whose default value names `manifest` (browsers
    /// there find manifests only through the registry).
    pub registry_key: Option<String>,
}

impl Target {
    /// `chromium`, or `chromium (flatpak)` for a sandboxed variant.
    pub fn label(&self) -> String {
        match self.variant {
            Variant::Native => self.browser.name().to_owned(),
            v => format!("{} ({})", self.browser.name(), v.name()),
        }
    }
}

/// Something that shows a browser variant is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sign {
    /// This file or directory exists (an app bundle, a profile or config directory).
    Exists(PathBuf),
    /// A program of this name is on `PATH`.
    OnPath(&'static str),
}

/// A [`Target`] and the signs that its browser variant is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Where the manifest goes.
    pub target: Target,
    /// Any one of these means the variant is installed.
    pub signs: Vec<Sign>,
}

/// How the selection looks at the system: the real filesystem and `PATH`, or fakes in tests.
pub struct Probe<'a> {
    /// Whether a path exists.
    pub exists: Box<dyn Fn(&Path) -> bool + 'a>,
    /// Whether a program is on `PATH`.
    pub on_path: Box<dyn Fn(&str) -> bool + 'a>,
}

impl Probe<'static> {
    /// The real filesystem and this process's `PATH`.
    pub fn system() -> Self {
        Probe {
            exists: Box::new(|p: &Path| p.exists()),
            on_path: Box::new(|name: &str| {
                std::env::var_os("PATH")
                    .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
            }),
        }
    }
}

impl Probe<'_> {
    /// Whether any of `signs` is seen.
    pub fn sees_any(&self, signs: &[Sign]) -> bool {
        signs.iter().any(|s| match s {
            Sign::Exists(p) => (self.exists)(p),
            Sign::OnPath(name) => (self.on_path)(name),
        })
    }
}

/// Why installing, uninstalling or looking up the environment failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Not Linux, macOS or Windows.
    #[error("nova install supports Linux, macOS and Windows, not {0}")]
    UnsupportedOs(String),
    /// Neither HOME (USERPROFILE on Windows) nor the OS names a home directory.
    #[error("no home directory: set HOME")]
    NoHome,
    /// A manifest file or its directory could not be written or removed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// reg.exe failed, or was asked for off Windows.
    #[error("registry key {key}: {message}")]
    Registry {
        /// The key, with its hive (`HKCU\...`).
        key: String,
        /// What failed.
        message: String,
    },
}

/// `io.nova.host.json`: browsers on Linux and macOS look the manifest up by this name.
pub fn manifest_file() -> String {
    format!("{NATIVE_HOST_NAME}.json")
}

/// `base` joined with `parts` one component at a time, so that the tables of every OS build
/// the same paths whichever OS runs them.
pub fn under(base: &Path, parts: &[&str]) -> PathBuf {
    parts.iter().fold(base.to_path_buf(), |p, part| p.join(part))
}
