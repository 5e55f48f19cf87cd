//! The times `--since` and `--until` take: a duration back from now (`90s`, `10m`, `2h`, `3d`,
//! `1w`), a date or a timestamp in UTC (`2026-11-25`, `2026-11-25 14:30`,
//! `2026-11-25T14:30:05Z`), `today`, `yesterday`, or milliseconds since the epoch.

const DAY_MS: i64 = 86_400_000;

/// `spec` as ms since the epoch; the error says what the flag takes.
pub fn parse(flag: &str, spec: &str, now_ms: i64) -> Result<i64, String> {
    let s = spec.trim();
    let bad = || {
        format!(
            "{flag} `{spec}` is not a time: give a duration back from now (90s, 10m, 2h, 3d, 1w), \
             a UTC date or time (2026-11-25, 2026-11-25 14:30, 2026-11-25T14:30:05Z), today or yesterday"
        )
    };
    match s {
        "now" => return Ok(now_ms),
        "today" => return Ok(now_ms.div_euclid(DAY_MS) * DAY_MS),
        "yesterday" => return Ok(now_ms.div_euclid(DAY_MS) * DAY_MS - DAY_MS),
        _ => {}
    }
    if let Some(ms) = duration_ms(s) {
        return Ok(now_ms - ms.ok_or_else(bad)?);
    }
    if s.len() >= 12 && s.chars().all(|c| c.is_ascii_digit()) {
        return s.parse().map_err(|_| bad());
    }
    let iso = match s.len() {
        10 => format!("{s}T00:00:00Z"),
        _ => s.replacen(' ', "T", 1),
    };
    // Only the shapes named above: the date part must be YYYY-MM-DD.
    let date_ok = iso.len() >= 16
        && iso.as_bytes()[4] == b'-'
        && iso.as_bytes()[7] == b'-'
        && iso.as_bytes()[10] == b'T';
    if !date_ok {
        return Err(bad());
    }
    crate::time::parse_time(&serde_json::Value::String(iso)).ok_or_else(bad)
}

/// `Some(Some(ms))` for a well-formed duration, `Some(None)` for a number with an unknown unit,
/// `None` when `s` does not start with a digit followed by letters.
fn duration_ms(s: &str) -> Option<Option<i64>> {
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = s.split_at(split);
    if n.is_empty() || !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let n: i64 = match n.parse() {
        Ok(n) => n,
        Err(_) => return Some(None),
    };
    let per = match unit {
        "ms" => 1,
        "s" | "sec" => 1000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "d" => DAY_MS,
        "w" => 7 * DAY_MS,
        _ => return Some(None),
    };
    Some(n.checked_mul(per))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_795_315_951_257; // 2026-11-22T02:52:31.257Z

    #[test]
    fn durations_dates_and_words_are_read() {
        assert_eq!(parse("--since", "10m", NOW), Ok(NOW - 600_000));
        assert_eq!(parse("--since", "2h", NOW), Ok(NOW - 7_200_000));
        assert_eq!(parse("--since", "1w", NOW), Ok(NOW - 7 * DAY_MS));
        assert_eq!(parse("--since", "2026-11-22", NOW), Ok(1_795_305_600_000));
        assert_eq!(parse("--since", "2026-11-22 02:00", NOW), Ok(1_795_305_600_000 + 7_200_000));
        assert_eq!(parse("--until", "2026-11-22T02:52:31.257Z", NOW), Ok(NOW));
        assert_eq!(parse("--since", "today", NOW), Ok(1_795_305_600_000));
        assert_eq!(parse("--since", "yesterday", NOW), Ok(1_795_305_600_000 - DAY_MS));
        assert_eq!(parse("--since", "1795315951257", NOW), Ok(NOW));
    }

    #[test]
    fn anything_else_is_refused_with_the_shapes_it_takes() {
        for bad in ["10 parsecs", "10y", "last tuesday", "2026/11/22", ""] {
            let e = parse("--since", bad, NOW).expect_err(bad);
            assert!(e.starts_with("--since") && e.contains("10m"), "{e}");
        }
    }
}
