//! The real applications' installs (`nova_e2e::realapps::installs`), started in the background
//! while `cargo xtask test` checks and builds, so their downloads overlap the compiler's work
//! instead of holding up the end-to-end tests; waited for before the tests start.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::cmd::step;

/// Installs running in the background.
pub struct Prefetch(JoinHandle<anyhow::Result<Duration>>);

/// Starts installing every real application that is not installed yet.
pub fn start() -> Prefetch {
    step("installing the real applications in the background (target/tools/realapps, kept between runs)");
    Prefetch(std::thread::spawn(|| {
        let started = Instant::now();
        nova_e2e::realapps::installs::ensure_all_installed()?;
        Ok(started.elapsed())
    }))
}

impl Prefetch {
    /// Waits for the installs. A failure is told, not fatal: each test installs what it needs
    /// again when it is missing, and fails with the installer's error if that fails too.
    pub fn finish(self) {
        let waited = Instant::now();
        match self.0.join() {
            Ok(Ok(took)) => step(&format!(
                "the real applications are installed ({} s in the background, {} s waited for)",
                took.as_secs(),
                waited.elapsed().as_secs()
            )),
            Ok(Err(e)) => step(&format!("the background installs stopped ({e:#}); the tests install again")),
            Err(_) => step("the background installs panicked; the tests install again"),
        }
    }
}
