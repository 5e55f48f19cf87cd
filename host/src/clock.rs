//! The clock Nova's memory judges time by (OK freshness, the learning journal's throttle,
//! activity sessions and promotion windows): the system clock, moved forward by the number of
//! milliseconds written in the file `NOVA_CLOCK_SHIFT_FILE` names, when that variable is set.
//! Tests use it to age facts and evidence without waiting (the browser passes its environment
//! to the host it starts); nothing else sets it.

/// The variable naming the shift file.
pub const SHIFT_ENV: &str = "NOVA_CLOCK_SHIFT_FILE";

/// Now, in ms since the unix epoch, as the memory sees it.
pub fn now_ms() -> i64 {
    crate::time::now_ms().saturating_add(shift_ms())
}

fn shift_ms() -> i64 {
    let Some(path) = std::env::var_os(SHIFT_ENV) else { return 0 };
    std::fs::read_to_string(path).ok().and_then(|t| t.trim().parse::<i64>().ok()).unwrap_or(0)
}
