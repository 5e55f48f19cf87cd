//! Whether the data dir and the store can be used at all, checked before a hub opens them and
//! whenever no hub answers an agent: a data dir Nova cannot write, or a store that is damaged or
//! from a newer Nova, is refused with what to do about it. Nothing here changes or deletes the
//! store file; the fix is the person's (docs/support.md, "When Nova will not start").

use crate::paths::DataDir;

/// The data dir cannot be written (read-only file system, permissions).
pub const DATA_DIR_UNWRITABLE: &str = "data_dir_unwritable";
/// The store file fails its integrity check or cannot be read as a store.
pub const STORE_DAMAGED: &str = "store_damaged";
/// The store was written by a newer Nova.
pub const STORE_TOO_NEW: &str = "store_too_new";

/// Why Nova cannot start on this data dir, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// One of the codes above.
    pub code: &'static str,
    /// What is wrong and what to do, in one message.
    pub message: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// Checks the data dir can be written and an existing store is sound. Read-only: the store is
/// opened read-only and only a probe file (removed at once) is written.
pub fn check(data: &DataDir) -> Result<(), Refusal> {
    writable(data)?;
    store(data)
}

fn writable(data: &DataDir) -> Result<(), Refusal> {
    let root = data.root();
    let probe = root.join(format!(".write-probe-{}", std::process::id()));
    let tried = std::fs::create_dir_all(root).and_then(|()| std::fs::write(&probe, b"nova"));
    let _ = std::fs::remove_file(&probe);
    tried.map_err(|e| Refusal {
        code: DATA_DIR_UNWRITABLE,
        message: format!(
            "the Nova data dir {} cannot be written ({e}). Make it writable (for example `chmod u+w {}`, \
             or remount its file system read-write), or point NOVA_HOME at a writable directory, then \
             restart the browser. Nothing was changed.",
            root.display(),
            root.display()
        ),
    })
}

fn store(data: &DataDir) -> Result<(), Refusal> {
    let db = data.db();
    if !db.exists() {
        return Ok(());
    }
    let damaged = |detail: String| Refusal {
        code: STORE_DAMAGED,
        message: format!(
            "the Nova store {} is damaged ({detail}). Nova has not touched it. Keep a copy for support \
             (`nova bundle` reads what it can), then move it aside (`mv {} {}.damaged`) and restart the \
             browser: Nova starts a fresh store. `nova store check` shows the damage.",
            db.display(),
            db.display(),
            db.display()
        ),
    };
    let conn = crate::store::open_read_only(&db).map_err(|e| damaged(e.to_string()))?;
    crate::store::check_integrity(&conn).map_err(|e| damaged(e.to_string()))?;
    let version = crate::store::schema_version(&conn).map_err(|e| damaged(e.to_string()))?;
    if version > crate::store::SCHEMA_VERSION {
        return Err(Refusal {
            code: STORE_TOO_NEW,
            message: format!(
                "the Nova store {} was written by a newer Nova (schema v{version}, this one knows \
                 v{}). Install the newer Nova again, or move the store aside to start fresh.",
                db.display(),
                crate::store::SCHEMA_VERSION
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_or_sound_data_dir_passes() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = DataDir::at(&dir.path().join("data"));
        assert_eq!(check(&data), Ok(()));
        drop(crate::store::open(&data.db()).expect("store"));
        assert_eq!(check(&data), Ok(()));
        let left: Vec<_> =
            std::fs::read_dir(data.root()).expect("dir").flatten().map(|e| e.file_name()).collect();
        assert!(left.iter().all(|n| !n.to_string_lossy().starts_with(".write-probe")), "{left:?}");
    }

    #[test]
    fn a_damaged_store_is_refused_with_the_fix_and_left_as_it_was() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = DataDir::at(dir.path());
        let mut bytes = b"SQLite format 3\0".to_vec();
        bytes.extend(std::iter::repeat_n(0x5a, 8192));
        std::fs::write(data.db(), &bytes).expect("write");
        let r = check(&data).expect_err("damaged");
        assert_eq!(r.code, STORE_DAMAGED);
        assert!(r.message.contains("move it aside") && r.message.contains("nova.db"), "{r}");
        assert_eq!(std::fs::read(data.db()).expect("read"), bytes);
    }

    #[test]
    fn a_newer_store_is_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = DataDir::at(dir.path());
        rusqlite::Connection::open(data.db())
            .expect("c")
            .pragma_update(None, "user_version", 999)
            .expect("v");
        assert_eq!(check(&data).map_err(|r| r.code), Err(STORE_TOO_NEW));
    }
}
