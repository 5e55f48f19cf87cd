//! The document's revision: a counter of the changes a person could notice, kept from the
//! moment the page module first answers in a document.
//!
//! The hub uses it to tell a loop (the same call on an unchanged page) from progress (the same
//! read on a page that changed, such as a chat answer streaming in). What counts:
//! - DOM mutations (nodes added or removed, text changed, attributes changed) except inline
//!   `style`, which animations rewrite many times a second without changing what a page says;
//! - form values that really changed (`input` / `change` events whose element now holds another
//!   value than the last one seen), which are not DOM mutations.
//!
//! Counting is cheap (one increment per observer batch); the hub reads the counter from every
//! reply ([`current`]), and asks for it alone (`page.rev`) only when a call looks like a loop.

use std::cell::{Cell, RefCell};

use js_sys::{Array, WeakMap};
use wasm_bindgen::JsCast as _;
use wasm_bindgen::prelude::*;
use web_sys::{MutationObserver, MutationObserverInit, MutationRecord};

use crate::dom;

thread_local! {
    static REV: Cell<u32> = const { Cell::new(0) };
    static OBSERVER: RefCell<Option<MutationObserver>> = const { RefCell::new(None) };
    /// Element -> the value it held when last seen (form values are not DOM mutations).
    static VALUES: WeakMap = WeakMap::new();
}

/// Starts counting in this document (once; later calls do nothing).
pub fn start() {
    if OBSERVER.with(|o| o.borrow().is_some()) {
        return;
    }
    let Ok(doc) = dom::document() else { return };
    let on_mutations = Closure::<dyn FnMut(Array)>::new(|records: Array| note(&records));
    let Ok(observer) = MutationObserver::new(on_mutations.as_ref().unchecked_ref()) else { return };
    let init = MutationObserverInit::new();
    init.set_child_list(true);
    init.set_subtree(true);
    init.set_character_data(true);
    init.set_attributes(true);
    if observer.observe_with_options(&doc, &init).is_err() {
        return;
    }
    // Both live as long as the document.
    on_mutations.forget();
    let on_value = Closure::<dyn FnMut(web_sys::Event)>::new(|e: web_sys::Event| value_changed(&e));
    for kind in ["input", "change"] {
        let _ = doc.add_event_listener_with_callback_and_bool(kind, on_value.as_ref().unchecked_ref(), true);
    }
    on_value.forget();
    OBSERVER.with(|o| *o.borrow_mut() = Some(observer));
}

/// The revision now, including mutations the observer has not been told of yet (a click
/// handler that changed the page in the same task).
pub fn current() -> u32 {
    start();
    OBSERVER.with(|o| {
        if let Some(observer) = o.borrow().as_ref() {
            note(&observer.take_records());
        }
    });
    REV.with(Cell::get)
}

/// Counts one batch of records if any of them is a change a person could notice.
fn note(records: &Array) {
    let noticeable = records.iter().any(|r| {
        r.dyn_into::<MutationRecord>()
            .is_ok_and(|r| !(r.type_() == "attributes" && r.attribute_name().as_deref() == Some("style")))
    });
    if noticeable {
        bump();
    }
}

fn bump() {
    REV.with(|r| r.set(r.get().wrapping_add(1)));
}

/// An `input` or `change` event: counts when the element's value differs from the last one
/// seen (typing the same text again into the same field is no change).
fn value_changed(e: &web_sys::Event) {
    let Some(el) = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
    let value = if let Some(i) = el.dyn_ref::<web_sys::HtmlInputElement>() {
        match i.type_().as_str() {
            "checkbox" | "radio" => i.checked().to_string(),
            _ => i.value(),
        }
    } else if let Some(t) = el.dyn_ref::<web_sys::HtmlTextAreaElement>() {
        t.value()
    } else if let Some(s) = el.dyn_ref::<web_sys::HtmlSelectElement>() {
        s.value()
    } else {
        // Editable content changes the DOM itself: the observer counts it.
        return;
    };
    let value = JsValue::from_str(&value);
    let changed = VALUES.with(|m| {
        let before = m.get(&el);
        m.set(&el, &value);
        before != value
    });
    if changed {
        bump();
    }
}
