//! Site adapters in the data dir (`<data dir>/adapters/*.json`, shared/adapters/README.md):
//! read on every use, so a new file takes effect without a restart. The guarded macros read
//! pages through them (`cls::engine`), OK learns the services they name (`ok::service`), and
//! `nova doctor` reports the files it could not read.

use std::path::Path;

use nova_shared::adapter::{self, Adapter};

use crate::paths::DataDir;

/// The adapters: the generic one (compiled in) and every `*.json` in `dir`, in name order.
/// Files that cannot be read or parsed are skipped and reported as `path: error`.
pub fn load(dir: &Path) -> (Vec<Adapter>, Vec<String>) {
    let mut all = vec![adapter::generic()];
    let mut errors = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    for path in files {
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

/// The adapters of `data`, with unreadable files logged and skipped.
pub fn site(data: &DataDir) -> Vec<Adapter> {
    let (all, errors) = load(&data.adapters());
    for e in errors {
        tracing::warn!(error = %e, "adapter file skipped");
    }
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
}
