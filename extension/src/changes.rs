//! When the document last changed: a `MutationObserver` over the whole document (nodes added or
//! removed, text and attributes changed), for the waits that look for a page that has stopped
//! changing (a scan's hydration, a page's first screen). It stops observing when dropped.

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Document, MutationObserver, MutationObserverInit};

use crate::timing;

/// Watches a document for changes from the moment it is made.
pub struct Changes {
    last: Rc<Cell<f64>>,
    observer: Option<MutationObserver>,
    _seen: Closure<dyn FnMut()>,
}

impl Changes {
    /// Starts watching `doc` (its last change counts as now).
    pub fn watch(doc: &Document) -> Self {
        let last = Rc::new(Cell::new(timing::now()));
        let at = last.clone();
        let seen = Closure::<dyn FnMut()>::new(move || at.set(timing::now()));
        let observer = MutationObserver::new(seen.as_ref().unchecked_ref()).ok();
        if let Some(o) = &observer {
            let init = MutationObserverInit::new();
            init.set_child_list(true);
            init.set_subtree(true);
            init.set_character_data(true);
            init.set_attributes(true);
            let _ = o.observe_with_options(doc, &init);
        }
        Self { last, observer, _seen: seen }
    }

    /// How long the document has not changed (ms).
    pub fn quiet_ms(&self) -> f64 {
        timing::now() - self.last.get()
    }
}

impl Drop for Changes {
    fn drop(&mut self) {
        if let Some(o) = &self.observer {
            o.disconnect();
        }
    }
}
