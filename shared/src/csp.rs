//! Content-Security-Policy reading, just enough to know whether a page lets a content script
//! compile WebAssembly (Chromium applies the page's CSP to it). Used by the background to pick
//! the JavaScript build of the page module without trying, since a failed try fires a
//! `securitypolicyviolation` event the page can see.

/// Whether `policy` (one header value; several policies may be comma-separated) forbids
/// compiling WebAssembly: its `script-src` (else `default-src`) lacks both
/// `'wasm-unsafe-eval'` and `'unsafe-eval'`.
pub fn forbids_wasm(policy: &str) -> bool {
    policy.split(',').any(|one| {
        let directives: Vec<(String, Vec<String>)> = one
            .split(';')
            .filter_map(|d| {
                let mut parts = d.split_whitespace();
                let name = parts.next()?.to_ascii_lowercase();
                Some((name, parts.map(|s| s.to_ascii_lowercase()).collect()))
            })
            .collect();
        let governing = directives
            .iter()
            .find(|(n, _)| n == "script-src")
            .or_else(|| directives.iter().find(|(n, _)| n == "default-src"));
        governing.is_some_and(|(_, sources)| {
            !sources.iter().any(|s| s == "'wasm-unsafe-eval'" || s == "'unsafe-eval'")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_src_without_eval_forbids_wasm() {
        assert!(forbids_wasm("script-src 'self'"));
        assert!(forbids_wasm("default-src 'self'; img-src *"));
        assert!(forbids_wasm("img-src *, script-src 'self' https://cdn.example"));
    }

    #[test]
    fn eval_sources_or_no_script_policy_allow_wasm() {
        assert!(!forbids_wasm("script-src 'self' 'wasm-unsafe-eval'"));
        assert!(!forbids_wasm("default-src 'self' 'unsafe-eval'"));
        assert!(!forbids_wasm("img-src *; style-src 'self'"));
        assert!(!forbids_wasm("script-src 'self' 'WASM-UNSAFE-EVAL'; default-src 'none'"));
        assert!(!forbids_wasm(""));
    }
}
