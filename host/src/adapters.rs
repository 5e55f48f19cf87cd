//! Site adapters in the data dir (`<data dir>/adapters/*.json`, shared/adapters/README.md):
//! the folder is listed on every use, so a new, changed or removed file takes effect without a
//! restart; the files are parsed again (and a bad one reported again) only when the listing
//! (names, sizes, modification times) changed since the last use. The guarded macros read
//! pages through them (`cls::engine`), OK learns the services they name (`ok::service`), and
//! `nova doctor` reports the files it could not read.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use nova_shared::adapter::{self, Adapter};

use crate::paths::DataDir;

/// The adapters: the generic one (compiled in) and every `*.json` in `dir`, in name order.
/// Files that cannot be read or parsed are skipped and reported as `path: error`.
pub fn load(dir: &Path) -> (Vec<Adapter>, Vec<String>) {
    let mut all = vec![adapter::generic()];
    let mut errors = Vec::new();
    for (path, ..) in listing(dir) {
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<Adapter>(&text).map_err(|e| e.to_string()));
        match parsed {
            Ok(a) if a.url_contains.is_empty() => {
                errors.push(format!("{}: `urlContains` must not be empty in a site adapter", path.display()));
            }
            Ok(a) if a.service.as_deref().is_some_and(|s| !service_key_ok(s)) => errors.push(format!(
                "{}: `service` must be 1 to 64 lower-case letters, digits, `-`, `_` or `.`",
                path.display()
            )),
            Ok(a) => all.push(a),
            Err(e) => errors.push(format!("{}: {e}", path.display())),
        }
    }
    (all, errors)
}

/// What the folder held when it was last parsed: each `*.json` file's path, size and
/// modification time, in name order.
type Listing = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// The last folder parsed, its listing and its adapters.
static PARSED: Mutex<Option<(PathBuf, Listing, Vec<Adapter>)>> = Mutex::new(None);

/// The folder's `*.json` files in name order, with their sizes and modification times.
fn listing(dir: &Path) -> Listing {
    let mut files: Listing = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| (e.path(), e.metadata().ok()))
                .filter(|(p, _)| p.extension().is_some_and(|x| x == "json"))
                .map(|(p, meta)| {
                    (p, meta.as_ref().map_or(0, |m| m.len()), meta.and_then(|m| m.modified().ok()))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// The adapters of `data`, with unreadable files logged (once per change of the folder) and
/// skipped.
pub fn site(data: &DataDir) -> Vec<Adapter> {
    cached(&data.adapters())
}

fn cached(dir: &Path) -> Vec<Adapter> {
    let now = listing(dir);
    let mut parsed = PARSED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((d, l, all)) = parsed.as_ref()
        && d == dir
        && *l == now
    {
        return all.clone();
    }
    let (all, errors) = load(dir);
    for e in errors {
        tracing::warn!(error = %e, "adapter file skipped");
    }
    *parsed = Some((dir.to_path_buf(), now, all.clone()));
    all
}

/// The adapter for a page: a site adapter from the data dir matching `url`, completed by the
/// generic one.
pub fn for_url(data: &DataDir, url: &str) -> Adapter {
    adapter::choose(&site(data), url)
}

/// Whether `s` is a service key an adapter may name.
pub fn service_key_ok(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_adapters_are_read_in_name_order_and_bad_files_reported() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("b.json"), r#"{"name": "b", "urlContains": "b.example"}"#).expect("w");
        std::fs::write(
            dir.path().join("a.json"),
            r#"{"name": "a", "urlContains": "a.example", "service": "acme"}"#,
        )
        .expect("w");
        std::fs::write(dir.path().join("c.json"), r#"{"name": "c", "urlContains": ""}"#).expect("w");
        std::fs::write(
            dir.path().join("d.json"),
            r#"{"name": "d", "urlContains": "d", "service": "Bad Name"}"#,
        )
        .expect("w");
        std::fs::write(dir.path().join("e.json"), r#"{"name": "e", "urlContains": "e", "servce": "x"}"#)
            .expect("w");
        std::fs::write(dir.path().join("notes.txt"), "not an adapter").expect("w");
        let (all, errors) = load(dir.path());
        let names: Vec<_> = all.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["generic", "a", "b"]);
        assert_eq!(all[1].service.as_deref(), Some("acme"));
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("urlContains"), "{errors:?}");
        assert!(errors[1].contains("`service` must be"), "{errors:?}");
        assert!(errors[2].contains("unknown field `servce`"), "{errors:?}");
        let (only, none) = load(&dir.path().join("missing"));
        assert_eq!((only.len(), none.len()), (1, 0), "a missing folder is the generic adapter alone");
    }

    #[test]
    fn a_new_changed_or_removed_file_takes_effect_on_the_next_use() {
        let dir = tempfile::tempdir().expect("tmp");
        let names = |all: Vec<Adapter>| all.into_iter().map(|a| a.name).collect::<Vec<_>>();
        assert_eq!(names(cached(dir.path())), ["generic"]);
        std::fs::write(dir.path().join("a.json"), r#"{"name": "a", "urlContains": "a.example"}"#).expect("w");
        assert_eq!(names(cached(dir.path())), ["generic", "a"], "a new file");
        assert_eq!(names(cached(dir.path())), ["generic", "a"], "unchanged");
        std::fs::write(dir.path().join("a.json"), r#"{"name": "a2", "urlContains": "a.example"}"#)
            .expect("w");
        assert_eq!(names(cached(dir.path())), ["generic", "a2"], "a changed file (another size)");
        std::fs::remove_file(dir.path().join("a.json")).expect("rm");
        assert_eq!(names(cached(dir.path())), ["generic"], "a removed file");
    }
}
