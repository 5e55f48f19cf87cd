//! Stage timings of one request in the extension, sent back on its response
//! (`Envelope::timing`) for the hub's stage timings (docs/performance.md): a clock, and the
//! parts of the page's answer noted while it is built.

use std::cell::RefCell;
use std::collections::BTreeMap;

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: in windows and workers alike.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Milliseconds on the context's monotonic clock.
pub fn now() -> f64 {
    performance_now()
}

thread_local! {
    /// The parts of the answer being built (a page answers one request at a time).
    static PARTS: RefCell<BTreeMap<String, f64>> = const { RefCell::new(BTreeMap::new()) };
}

/// Runs `f`, noting its time as the part `name` of the current answer.
pub fn part<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let t = now();
    let out = f();
    let ms = now() - t;
    PARTS.with(|p| *p.borrow_mut().entry(name.to_owned()).or_default() += ms);
    out
}

/// The parts noted since the last call.
pub fn take_parts() -> BTreeMap<String, f64> {
    PARTS.with(|p| std::mem::take(&mut *p.borrow_mut()))
}
