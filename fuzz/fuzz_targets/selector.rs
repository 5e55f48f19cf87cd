//! The selector grammar (`nova_shared::selector`): CSS, `>>>` into shadow roots and same-origin
//! frames, and perceive refs (`e12`). Every selector an agent sends and every fact key argument
//! goes through it, in the host and in the page. (`:visible`, Nova's own suffix, is plain text
//! to this grammar and is resolved in the page, `extension/src/dom.rs`.)
//!
//! Checks: nothing panics; a ref writes back to a selector that parses to the same ref; a chain
//! has 1 to 16 trimmed, non-empty segments, and joining them with ` >>> ` parses to the same
//! chain; a trailing `:visible` stays on the last segment.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nova_shared::selector::{self, MAX_SEGMENTS, Selector};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let Ok(parsed) = selector::parse(input) else { return };
    match &parsed {
        Selector::Ref(n) => {
            assert_eq!(selector::parse_ref(input.trim()), Some(*n));
            assert_eq!(selector::parse(&selector::format_ref(*n)), Ok(parsed.clone()));
        }
        Selector::Chain(segments) => {
            assert!((1..=MAX_SEGMENTS).contains(&segments.len()), "{segments:?}");
            for s in segments {
                assert!(!s.is_empty() && s.trim() == s, "segment {s:?}");
            }
            let joined = segments.join(" >>> ");
            assert_eq!(selector::parse(&joined), Ok(parsed.clone()), "written back as {joined:?}");
            if input.trim().ends_with(":visible") {
                assert!(segments.last().is_some_and(|s| s.ends_with(":visible")), "{segments:?}");
            }
        }
    }
});
