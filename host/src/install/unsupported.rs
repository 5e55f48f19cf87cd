//! Placeholder locations for operating systems Nova does not register on yet (macOS and
//! Windows arrive with the installers issue). Installing there fails with a clear message.

use std::path::{Path, PathBuf};

use super::Browser;

/// No per-user location is known on this OS yet.
pub fn manifest_dir(_browser: Browser, home: &Path) -> PathBuf {
    home.join(".nova-unsupported-os")
}

/// Nothing is detected on this OS yet.
pub fn is_installed(_browser: Browser, _home: &Path) -> bool {
    false
}
