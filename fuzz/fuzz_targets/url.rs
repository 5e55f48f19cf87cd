//! URL normalisation (`nova_host::url`, docs/tasks.md "URL normalisation"): the unit keys of
//! task URL coverage (`url:{hash}` of the normalised URL), TOB's route URLs, reporting groups.
//!
//! Checks: nothing panics; normalising is idempotent (`normalize(normalize(x)) ==
//! normalize(x)`: a unit found by its normalised URL is the unit of the URL it came from);
//! route URLs, origins and groups agree with the normalised URL; hashes are 16 hex digits.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nova_host::url;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let _ = url::route_key(input);
    let _ = url::pattern(input);
    let normalized = url::normalize(input);
    assert_eq!(url::origin(input).is_some(), normalized.is_some(), "{input:?}");
    let Some(n) = normalized else {
        assert_eq!(url::route_url(input), None);
        return;
    };
    assert_eq!(url::normalize(&n).as_ref(), Some(&n), "normalising {input:?} again changes {n:?}");
    assert_eq!(url::route_url(&n), url::route_url(input), "{input:?}");
    assert_eq!(url::origin(&n), url::origin(input), "{input:?}");
    assert_eq!(url::pattern(&url::pattern(&n)), url::pattern(&n), "{input:?}");
    let hash = url::url_hash(&n);
    assert!(hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()), "{hash}");
});
