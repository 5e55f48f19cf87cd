//! Native messaging against the real hub binary: bad frames are rejected without crashing it.

mod common;

use std::time::Duration;

use common::Hub;
use serde_json::json;

fn ping(hub: &mut Hub, n: u32) {
    let req = json!({"v": 1, "id": n, "kind": "req", "method": "ping", "params": {"n": n}});
    hub.write_frame(req.to_string().as_bytes());
    let reply = hub.read_frame();
    assert_eq!(reply["id"], n);
    assert_eq!(reply["result"], json!({"n": n}));
}

#[test]
fn malformed_non_utf8_and_unknown_frames_do_not_stop_the_hub() {
    let mut hub = Hub::start();
    hub.record();
    ping(&mut hub, 1);
    hub.write_frame(b"{not json");
    hub.write_frame(&[0xff, 0xfe, 0xfd]);
    hub.write_frame(br#"{"v":1,"id":2,"kind":"req","method":"ping","unexpected":true}"#);
    hub.write_frame(br#"{"v":1,"id":3,"kind":"req","method":"no.such.method"}"#);
    let unknown = hub.read_frame();
    assert_eq!(
        (unknown["id"].clone(), unknown["error"]["code"].clone()),
        (json!(3), json!("unknown_method"))
    );
    ping(&mut hub, 4);
}

#[test]
fn oversized_frame_is_skipped_and_the_stream_stays_in_sync() {
    let mut hub = Hub::start();
    hub.record();
    let len = nova_shared::protocol::BROWSER_TO_HOST_MAX_FRAME + 1;
    hub.write_raw(&(len as u32).to_ne_bytes());
    let chunk = vec![b'x'; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len());
        hub.write_raw(&chunk[..n]);
        left -= n;
    }
    ping(&mut hub, 7);
}

#[test]
fn a_truncated_frame_ends_the_session_cleanly_and_unregisters() {
    let mut hub = Hub::start();
    let record = hub.record();
    ping(&mut hub, 1);
    hub.write_raw(&100u32.to_ne_bytes());
    hub.write_raw(b"{\"v\":1");
    drop(hub.stdin.take());
    assert_eq!(hub.wait_exit(Duration::from_secs(10)), Some(true), "hub exits with success");
    assert!(!hub.data_path().join("hubs/chromium.json").exists(), "registration removed");
    assert!(!std::path::Path::new(record["socket"].as_str().unwrap_or_default()).exists());
}

#[test]
fn a_huge_announced_length_is_refused_before_allocation() {
    // 4 GiB announced and the stream closed: the hub must neither allocate nor hang.
    let mut hub = Hub::start();
    hub.record();
    hub.write_raw(&u32::MAX.to_ne_bytes());
    hub.write_raw(b"abc");
    drop(hub.stdin.take());
    assert_eq!(hub.wait_exit(Duration::from_secs(10)), Some(true));
}
