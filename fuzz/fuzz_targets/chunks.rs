//! The chunk reassembler (`nova_shared::protocol::Reassembler`, run by the extension on
//! host-to-browser frames above 1 MiB).
//!
//! Input: one byte choosing a piece size, then text. Each line of the text is read as a frame
//! and its chunks pushed as the extension pushes them, in any order and with any `seq`, `total`
//! and `id`; then, when the whole text parses as an envelope, that envelope is cut into pieces
//! of the chosen size and pushed through the same reassembler.
//!
//! Checks: pushing never panics whatever came before; a reassembled envelope round-trips; an
//! envelope cut into in-order pieces comes back whole and equal, only after its last piece,
//! whatever state the reassembler was left in.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nova_fuzz::assert_round_trip;
use nova_shared::protocol::{Chunk, Envelope, Kind, Reassembler};

fuzz_target!(|data: &[u8]| {
    let Some((&size, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let mut r = Reassembler::default();
    for line in text.lines() {
        let Ok(env) = serde_json::from_str::<Envelope>(line) else { continue };
        let (Kind::Chunk, Some(chunk)) = (env.kind, env.chunk) else { continue };
        if let Some(Ok(whole)) = r.push(env.id, chunk) {
            assert_round_trip(&whole, "a reassembled envelope");
        }
    }
    let Ok(env) = serde_json::from_str::<Envelope>(text) else { return };
    let json = serde_json::to_string(&env).expect("serialise");
    // What the receiver should get: the envelope the pieces' text parses to.
    let sent: Envelope = serde_json::from_str(&json).expect("an envelope we wrote parses");
    let pieces = split(&json, usize::from(size % 64) + 1);
    let total = u32::try_from(pieces.len()).expect("few pieces");
    for (seq, data) in pieces.iter().enumerate() {
        let seq = u32::try_from(seq).expect("few pieces");
        let got = r.push(env.id, Chunk { seq, total, data: (*data).to_owned() });
        if seq + 1 < total {
            assert!(got.is_none(), "piece {seq} of {total} completed an envelope: {got:?}");
        } else {
            assert_eq!(got.expect("the last piece completes it").expect("valid"), sent);
        }
    }
});

/// `s` in pieces of about `size` bytes, cut at character boundaries.
fn split(s: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < s.len() {
        let mut end = (start + size).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        out.push(&s[start..end]);
        start = end;
    }
    out
}
