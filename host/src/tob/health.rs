//! Whether the evidence store accepts writes. The TOB writer sets it when a batch of rows cannot
//! be written for a reason of the disk (full, read-only, I/O error) and clears it once the kept
//! rows are written; the `safety.store_unwritable` gate reads it and refuses work meanwhile
//! (docs/gates.md), so nothing is done that Nova could not prove afterwards.

use std::sync::Mutex;

/// What is wrong with writing the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trouble {
    /// When the first failed write happened (ms since the epoch).
    pub since_ms: i64,
    /// SQLite's error of the last failed write.
    pub error: String,
    /// Rows kept in memory, written as soon as the store takes them again.
    pub waiting: usize,
    /// Rows given up because more than [`super::MAX_KEPT`] were waiting.
    pub dropped: u64,
}

/// The store's write health, shared by the writer and the gates.
#[derive(Debug, Default)]
pub struct Health {
    trouble: Mutex<Option<Trouble>>,
}

impl Health {
    /// The trouble while the store cannot be written; `None` when it can.
    pub fn trouble(&self) -> Option<Trouble> {
        self.trouble.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// A write failed: keeps the first failure's time.
    pub(super) fn failed(&self, error: String, waiting: usize, dropped: u64, now_ms: i64) {
        let mut t = self.trouble.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let since_ms = t.as_ref().map_or(now_ms, |t| t.since_ms);
        *t = Some(Trouble { since_ms, error, waiting, dropped });
    }

    /// Everything kept was written; returns the trouble that ended, if any.
    pub(super) fn recovered(&self) -> Option<Trouble> {
        self.trouble.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}

/// Whether a failed write is the disk's doing (worth keeping the rows and trying again) rather
/// than the rows' own (a constraint: trying again cannot help).
pub fn disk_fault(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{
        CannotOpen, DatabaseBusy, DatabaseLocked, DiskFull, ReadOnly, SystemIoFailure,
    };
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, DiskFull | SystemIoFailure | ReadOnly | CannotOpen | DatabaseBusy | DatabaseLocked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trouble_keeps_its_start_and_ends_on_recovery() {
        let h = Health::default();
        assert_eq!(h.trouble(), None);
        h.failed("disk full".into(), 3, 0, 100);
        h.failed("disk full again".into(), 5, 1, 200);
        let t = h.trouble().expect("trouble");
        assert_eq!((t.since_ms, t.error.as_str(), t.waiting, t.dropped), (100, "disk full again", 5, 1));
        assert_eq!(h.recovered().map(|t| t.waiting), Some(5));
        assert_eq!(h.trouble(), None);
    }

    #[test]
    fn disk_errors_are_told_from_row_errors() {
        let full =
            rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL), None);
        let unique =
            rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT), None);
        assert!(disk_fault(&full));
        assert!(!disk_fault(&unique));
    }
}
