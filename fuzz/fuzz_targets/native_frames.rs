//! The native-messaging decoder: any byte stream a browser (or anything else) writes to the
//! hub's stdin, read frame by frame as the bridge reads it (`nova_host::bridge::codec`), each
//! frame parsed as an envelope, and event payloads as the hub's types.
//!
//! Checks: the reader never panics and never loops; a frame it returns re-encodes to exactly
//! the bytes it consumed; an oversized or non-UTF-8 frame is consumed whole (the stream stays
//! in sync); an envelope that parses serialises and parses back to itself.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nova_fuzz::assert_round_trip;
use nova_host::bridge::codec::{FrameError, read_frame, write_frame};
use nova_shared::protocol::{Envelope, Hello, Kind, PageStamp, TabInfo, method};
use serde_json::Value;

/// A small limit, so fuzzed streams reach the oversized-frame path.
const MAX: usize = 512;

fuzz_target!(|data: &[u8]| {
    let mut rest: &[u8] = data;
    // Each frame consumes at least its 4-byte header, so this bounds the loop.
    for _ in 0..=data.len() / 4 {
        let before = rest;
        let read = futures::executor::block_on(read_frame(&mut rest, MAX));
        let consumed = &before[..before.len() - rest.len()];
        match read {
            Ok(None) => {
                assert!(consumed.is_empty() && before.is_empty(), "clean end only at the end");
                return;
            }
            Ok(Some(text)) => {
                assert!(text.len() <= MAX);
                let mut again = Vec::new();
                futures::executor::block_on(write_frame(&mut again, &text, MAX)).expect("re-encode");
                assert_eq!(again, consumed, "a decoded frame re-encodes to the bytes it came from");
                envelope(&text);
            }
            Err(e @ (FrameError::Oversized { .. } | FrameError::NotUtf8)) => {
                assert!(e.is_recoverable());
                let len = u32::from_ne_bytes(consumed[..4].try_into().expect("header")) as usize;
                assert_eq!(consumed.len(), 4 + len, "a rejected frame is consumed whole: {e}");
            }
            Err(FrameError::Truncated) => {
                assert!(rest.is_empty(), "truncation is reported at the end of the stream");
                return;
            }
            Err(e) => panic!("a byte slice cannot fail with {e}"),
        }
    }
    panic!("the reader did not make progress");
});

/// What the bridge does with one frame's text (`Bridge::handle_frame`).
fn envelope(text: &str) {
    let Ok(env) = serde_json::from_str::<Envelope>(text) else { return };
    assert_round_trip(&env, "an envelope");
    if env.kind == Kind::Evt {
        let params = env.params.clone().unwrap_or(Value::Null);
        match env.method.as_deref() {
            Some(method::HELLO) => event::<Hello>(params),
            Some(method::TABS_CHANGED) => event::<Vec<TabInfo>>(params),
            Some(method::PAGE_STAMP) => event::<PageStamp>(params),
            _ => {}
        }
    }
}

/// An event's payload, parsed as the bridge parses it.
fn event<T: serde::de::DeserializeOwned + serde::Serialize>(params: Value) {
    if let Ok(v) = serde_json::from_value::<T>(params) {
        assert_round_trip(&v, "an event payload");
    }
}
