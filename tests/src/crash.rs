//! What the crash tests share (`test_cls_crash.rs`, `test_soak.rs`): counts from the
//! environment, a seeded generator so that a failing kill sequence can be replayed, and waiting
//! for the hub the browser brings up by itself after a kill.

use std::time::{Duration, Instant};

use crate::Nova;

/// A number from the environment, or `default`.
pub fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A small deterministic generator, so a failing sequence can be replayed from its seed.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number below `below`.
    pub fn next(&mut self, below: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

/// Waits (up to 30 s) for a registered, reachable hub other than `old`; returns its pid.
pub fn wait_for_new_hub(nova: &Nova, old: i32) -> anyhow::Result<i32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Some(p) = nova.hub_pid().filter(|p| *p != old)
            && crate::wait_for_hub(&nova.data, Duration::from_secs(2)).is_ok()
        {
            return Ok(p);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    anyhow::bail!("no new hub after killing {old}")
}
