//! `loop.detected`: the same call making no progress.
//!
//! A call repeats an earlier one when it is the same tool with the same arguments (`_meta`
//! aside) on the same [`Scene`]: for a call on a tab, the same tab, URL, navigation epoch and
//! document revision (the page's count of noticeable changes: DOM content and form values);
//! for other calls, the same count of the session's successful writes. So a read on a page that
//! navigated or changed since the last identical read is progress, not a repeat, while the
//! same read on an unchanged page trips the gate at [`LOOP_REPEATS`] within [`LOOP_WINDOW_MS`].
//!
//! Only calls that ran are remembered: a blocked call does not extend the block, so waiting
//! `retryAfterMs` (when the oldest repeat leaves the window) always frees the call.

use std::collections::VecDeque;

use nova_shared::protocol::FrameId;
use serde_json::{Value, json};

/// Identical calls on an unchanged scene within [`LOOP_WINDOW_MS`] that make a loop (this
/// one included).
pub const LOOP_REPEATS: usize = 5;
/// The sliding window of loop detection.
pub const LOOP_WINDOW_MS: i64 = 60_000;
/// Calls remembered (the window rarely holds more).
const MEMORY: usize = 64;

/// What a call found: the page it worked on, or the session's state for calls on no page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scene {
    /// A document in a tab.
    Page {
        /// The tab.
        target: String,
        /// The frame the call named (0: top).
        frame: FrameId,
        /// The tab's navigation epoch.
        epoch: u32,
        /// The tab's URL.
        url: String,
        /// The document's revision, when that document has answered Nova.
        rev: Option<u32>,
    },
    /// No page: the count of successful writes the session had made.
    Session {
        /// Successful non-read calls of the session so far.
        writes: u64,
    },
}

impl Scene {
    /// The scene as the agent is told it.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Page { target, frame, epoch, url, rev } => json!({
                "targetId": target, "frameId": frame, "pageUrl": url, "navEpoch": epoch, "docRev": rev,
            }),
            Self::Session { writes } => json!({"sessionWrites": writes}),
        }
    }
}

/// One call that ran, with the scene it left behind.
#[derive(Debug, Clone)]
struct Ran {
    tool: String,
    key: String,
    scene: Scene,
    at_ms: i64,
}

/// A loop: how many identical calls on this scene the window holds (this one included), and
/// when the oldest that must leave for the call to be free again does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    /// Identical calls on the same scene within the window, this one included.
    pub repeats: usize,
    /// Milliseconds until this call would no longer be a loop if nothing changes.
    pub retry_after_ms: u64,
}

/// The calls a session ran recently.
#[derive(Debug, Default, Clone)]
pub struct LoopMemory {
    ran: VecDeque<Ran>,
}

impl LoopMemory {
    /// Whether `tool` with `key` on `scene` at `now_ms` is a loop.
    pub fn judge(&self, tool: &str, key: &str, scene: &Scene, now_ms: i64) -> Option<Repeat> {
        let times: Vec<i64> = self
            .ran
            .iter()
            .filter(|r| {
                now_ms - r.at_ms <= LOOP_WINDOW_MS && r.tool == tool && r.key == key && r.scene == *scene
            })
            .map(|r| r.at_ms)
            .collect();
        let repeats = times.len() + 1;
        if repeats < LOOP_REPEATS {
            return None;
        }
        // Free again once fewer than LOOP_REPEATS - 1 earlier calls remain in the window.
        let must_leave = times[times.len() - (LOOP_REPEATS - 1)];
        let retry_after_ms = u64::try_from(must_leave + LOOP_WINDOW_MS + 1 - now_ms).unwrap_or(0);
        Some(Repeat { repeats, retry_after_ms })
    }

    /// Remembers a call that ran, with the scene it left behind.
    pub fn record(&mut self, tool: &str, key: String, scene: Scene, at_ms: i64) {
        self.ran.retain(|r| at_ms - r.at_ms <= LOOP_WINDOW_MS);
        self.ran.push_back(Ran { tool: tool.to_owned(), key, scene, at_ms });
        if self.ran.len() > MEMORY {
            self.ran.pop_front();
        }
    }
}

/// The part of a call's arguments that makes it the same call (`_meta` is for the gates).
pub fn call_key(args: &serde_json::Map<String, Value>) -> String {
    let mut a = args.clone();
    a.remove("_meta");
    Value::Object(a).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(epoch: u32, rev: Option<u32>) -> Scene {
        Scene::Page { target: "7".into(), frame: 0, epoch, url: "https://a.test/".into(), rev }
    }

    #[test]
    fn the_fifth_identical_call_on_an_unchanged_page_is_a_loop_and_the_window_slides() {
        let mut m = LoopMemory::default();
        let s = page(1, Some(3));
        for i in 0..4 {
            assert_eq!(m.judge("nova.read_text", "a", &s, i * 1_000), None, "call {i}");
            m.record("nova.read_text", "a".into(), s.clone(), i * 1_000);
        }
        let hit = m.judge("nova.read_text", "a", &s, 4_000).expect("loop");
        assert_eq!(hit, Repeat { repeats: LOOP_REPEATS, retry_after_ms: 56_001 });
        assert_eq!(m.judge("nova.read_text", "b", &s, 4_000), None, "other arguments are another call");
        assert_eq!(m.judge("nova.perceive", "a", &s, 4_000), None, "another tool is another call");
        assert_eq!(m.judge("nova.read_text", "a", &s, 4_000 + 56_001), None, "free after retryAfterMs");
        assert_eq!(m.judge("nova.read_text", "a", &s, 10 * LOOP_WINDOW_MS), None, "a quiet minute clears it");
    }

    #[test]
    fn a_changed_or_navigated_page_is_progress() {
        let mut m = LoopMemory::default();
        for i in 0..10 {
            // Each read finds the page changed (a chat answer streaming in) or a new document.
            let s = if i % 2 == 0 { page(1, Some(i)) } else { page(i, None) };
            assert_eq!(m.judge("nova.perceive", "{}", &s, i64::from(i) * 100), None, "read {i}");
            m.record("nova.perceive", "{}".into(), s, i64::from(i) * 100);
        }
    }

    #[test]
    fn session_scenes_count_writes() {
        let mut m = LoopMemory::default();
        for writes in 0..8 {
            let s = Scene::Session { writes };
            assert_eq!(m.judge("nova.task_instance_get", "x", &s, 0), None);
            m.record("nova.task_instance_get", "x".into(), s, 0);
        }
        let still = Scene::Session { writes: 7 };
        for _ in 0..3 {
            m.record("nova.task_instance_get", "x".into(), still.clone(), 0);
        }
        assert!(m.judge("nova.task_instance_get", "x", &still, 0).is_some(), "nothing written in between");
    }

    #[test]
    fn retry_after_counts_from_the_repeat_that_must_leave() {
        let mut m = LoopMemory::default();
        let s = page(2, None);
        for at in [0, 10_000, 20_000, 30_000, 40_000, 50_000] {
            m.record("nova.click_selector", "k".into(), s.clone(), at);
        }
        // Six earlier repeats: those at 0, 10 and 20 s must leave (with four left it still loops).
        let hit = m.judge("nova.click_selector", "k", &s, 55_000).expect("loop");
        assert_eq!(hit, Repeat { repeats: 7, retry_after_ms: 25_001 });
        assert!(m.judge("nova.click_selector", "k", &s, 55_000 + 25_000).is_some(), "a millisecond early");
        assert_eq!(m.judge("nova.click_selector", "k", &s, 55_000 + 25_001), None);
    }
}
