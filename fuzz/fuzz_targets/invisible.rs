//! Characters drawn as nothing (`nova_shared::invisible::visible`), taken out of every text an
//! agent reads from a page.
//!
//! Input: any page text.
//!
//! Checks: nothing panics; what comes back is the input with characters taken out, in order;
//! no tag character survives outside a subdivision flag (the black flag, 2 to 6 tag letters or
//! digits, the cancel tag); no two variation selectors follow each other; the count of hidden
//! characters is at most what was taken out; text with nothing to take out is borrowed with a
//! count of 0, and a second pass takes out nothing more.

#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use nova_shared::invisible::visible;

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

fn is_selector(c: char) -> bool {
    ('\u{FE00}'..='\u{FE0F}').contains(&c) || ('\u{E0100}'..='\u{E01EF}').contains(&c)
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let (shown, hidden) = visible(input);
    let taken = input.chars().count() - shown.chars().count();
    assert!(hidden <= taken, "{hidden} hidden, {taken} taken out");
    // A subsequence of the input.
    let mut rest = input.chars();
    for c in shown.chars() {
        assert!(rest.any(|i| i == c), "{c:?} is not from the input, in order");
    }
    let chars: Vec<char> = shown.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\u{1F3F4}' {
            let run = chars[i + 1..].iter().take_while(|&&c| is_tag(c)).count();
            if run > 0 {
                let tags = &chars[i + 1..i + 1 + run];
                assert!((3..=7).contains(&run) && tags.last() == Some(&'\u{E007F}'), "a flag of {run} tags");
                i += run;
            }
        } else {
            assert!(!is_tag(chars[i]), "a tag outside a flag survived");
        }
        if i > 0 {
            assert!(!(is_selector(chars[i]) && is_selector(chars[i - 1])), "two selectors in a row");
        }
        i += 1;
    }
    if let Cow::Borrowed(b) = &shown {
        assert_eq!((*b, hidden), (input, 0));
    }
    assert!(matches!(visible(&shown), (Cow::Borrowed(_), 0)), "a second pass took out more");
});
