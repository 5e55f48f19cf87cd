//! The clock OK judges freshness by: the system clock, moved forward by the number of
//! milliseconds written in the file `NOVA_OK_CLOCK_SHIFT_FILE` names, when that variable is
//! set. Tests use it to age facts past the freshness window without waiting (the browser passes
//! its environment to the host it starts); nothing else sets it.

/// The variable naming the shift file.
pub const SHIFT_ENV: &str = "NOVA_OK_CLOCK_SHIFT_FILE";

/// Now, in ms since the unix epoch, as OK sees it.
pub fn now_ms() -> i64 {
    crate::time::now_ms().saturating_add(shift_ms())
}

fn shift_ms() -> i64 {
    let Some(path) = std::env::var_os(SHIFT_ENV) else { return 0 };
    std::fs::read_to_string(path).ok().and_then(|t| t.trim().parse::<i64>().ok()).unwrap_or(0)
}
