//! What the benchmarks share: percentiles, rounding, and the gate modes they run with.

use serde_json::{Value, json};

/// Gate modes of the benchmarks: they repeat the same call on an unchanged page on purpose, which
/// `loop.detected` rightly refuses; every measured call must then run (`ran`).
pub(crate) const BENCH_SETTINGS: &str = r#"{"gateModes": {
    "setup.bootstrap_required": "off", "safety.perceive_first": "off", "loop.detected": "off"
}}"#;

/// Percentile of sorted samples (nearest rank).
fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// p50, p95 and the count of samples, in milliseconds rounded to microseconds.
pub(crate) fn summary(mut samples: Vec<f64>) -> Value {
    samples.sort_by(f64::total_cmp);
    json!({"p50": round(pct(&samples, 50.0)), "p95": round(pct(&samples, 95.0)), "n": samples.len()})
}

/// `nova.perceive` arguments for a read of the whole page (every element and all the text), as
/// the peers' snapshots are; the default read stops at 400 elements and 4,000 characters.
pub(crate) const WHOLE_PAGE: &str = r#"{"maxElements": 5000, "maxTextChars": 200000}"#;

/// [`WHOLE_PAGE`] as a value.
pub(crate) fn whole_page() -> Value {
    serde_json::from_str(WHOLE_PAGE).unwrap_or_default()
}

/// The median (nearest rank) of unsorted samples, NaN for none.
pub(crate) fn p50(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    pct(&samples, 50.0)
}

/// Rounded to three decimals.
pub(crate) fn round(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// The machine the figures were measured on: CPU model, cores, memory and OS, from /proc.
pub(crate) fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|(_, m)| m.trim().to_owned()))
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_gib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:")?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
        .map_or_else(|| "?".to_owned(), |kib| format!("{:.0}", kib as f64 / 1_048_576.0));
    format!("{model}, {cores} cores, {mem_gib} GiB, {}", std::env::consts::OS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let s: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(pct(&s, 50.0), 50.0);
        assert_eq!(pct(&s, 95.0), 95.0);
        assert_eq!(pct(&[3.0], 95.0), 3.0);
        assert!(pct(&[], 50.0).is_nan());
    }
}
