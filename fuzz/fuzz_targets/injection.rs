//! The prompt-injection scan (`nova_shared::injection::scan`) over page text and element lines,
//! which come straight from the pages an agent visits.
//!
//! Input: the page's visible text on the first line, one element per further line
//! (`e12 button "..."`).
//!
//! Checks: nothing panics (page text is any UTF-8); at most 8 matches; each phrase is what the
//! page says (in its text or in an element), is in its snippet, and is listed once in
//! `phrases`; refs come from the element lines.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nova_shared::injection::{self, MESSAGE};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let (text, elements) = input.split_once('\n').unwrap_or((input, ""));
    let elements: Vec<&str> = elements.lines().collect();
    let Some(w) = injection::scan(text, elements.iter().copied()) else { return };
    assert!(!w.matches.is_empty() && w.matches.len() <= 8, "{} matches", w.matches.len());
    assert_eq!(w.message, MESSAGE);
    let collapse = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let sources: Vec<String> = std::iter::once(text).chain(elements.iter().copied()).map(collapse).collect();
    for m in &w.matches {
        assert!(!m.phrase.is_empty(), "{m:?}");
        assert!(sources.iter().any(|s| s.contains(&m.phrase)), "{m:?} is not in the page");
        assert!(m.snippet.contains(&m.phrase), "{m:?}");
        assert!(m.kind == "override" || m.kind == "address", "{m:?}");
        assert_eq!(w.phrases.iter().filter(|p| p.eq_ignore_ascii_case(&m.phrase)).count(), 1, "{w:?}");
        if let Some(r) = &m.r#ref {
            assert!(elements.iter().any(|e| e.split(' ').next() == Some(r.as_str())), "{m:?}");
        }
    }
});
