//! Redaction for support output (`nova_host::support::redact::Redactor`): logs, reports and
//! bundles people send to support, built from whatever the store and the pages held.
//!
//! Input: a known secret value on the first line (as the MCP token is known), the text after
//! it; without a newline, the whole input is the text and no secret is known.
//!
//! Checks: nothing panics (any UTF-8, cuts stay on character boundaries); a known secret never
//! survives; redacting twice changes nothing more; text with no credential in it is returned
//! as it was; JSON cells stay valid JSON.

#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use nova_host::support::redact::{MARK, Redactor};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let (secret, text) = input.split_once('\n').unwrap_or(("", input));
    let secret = secret.trim();
    // A secret that is part of the mark, or holds a bracket of it, can meet its own mark.
    let plain_secret = secret.len() >= 6 && !MARK.contains(secret) && !secret.contains(['[', ']']);
    let r = Redactor::new([secret.to_owned()]);
    let once = r.text(text);
    if plain_secret {
        assert!(!once.contains(secret), "a known secret survived: {once:?}");
    }
    if secret.len() < 6 || plain_secret {
        assert_eq!(r.text(&once), once, "redacting twice changes more");
    }
    let plain = Redactor::default();
    if let Cow::Borrowed(same) = plain.text(text) {
        assert_eq!(same, text);
    }
    let cell = plain.cell(text);
    if serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.is_object() || v.is_array()) {
        serde_json::from_str::<serde_json::Value>(&cell).expect("a JSON cell stays JSON");
    }
});
