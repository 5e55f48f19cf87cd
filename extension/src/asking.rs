//! Dialogs that ask the person something and hold the page until answered: a `<dialog>` opened
//! with `showModal()`, or an element marked as a modal dialog or an alert dialog. A guarded
//! action whose page opened one proves nothing until it is answered, and the reply says what
//! it asks (docs/cls.md, `pageAsks`): JupyterLab asks whether to overwrite a notebook changed
//! on disk, and saves nothing meanwhile.

use wasm_bindgen::JsCast;
use web_sys::Element;

/// The dialogs a person must answer that show in `doc`: `<dialog>`s opened with `showModal()`,
/// and elements marked as modal dialogs or alert dialogs (`aria-modal="true"`,
/// `role="alertdialog"`) that are seen.
pub fn open(doc: &web_sys::Document) -> Vec<Element> {
    let mut found = Vec::new();
    // `:modal` is unknown to browsers before 2022: there, only the marked ones are found.
    for selector in ["dialog:modal", "[aria-modal=\"true\"], [role=\"alertdialog\"]"] {
        let Ok(list) = doc.query_selector_all(selector) else { continue };
        for k in 0..list.length() {
            if let Some(el) = list.item(k).and_then(|n| n.dyn_into::<Element>().ok())
                && !found.contains(&el)
                && crate::dom::is_seen(&el)
            {
                found.push(el);
            }
        }
    }
    found
}

/// Longest question read out of a dialog, in characters.
const QUESTION_MAX_CHARS: usize = 300;

/// What a dialog asks, in its own words: its name (what labels it), else its text, white space
/// run together, at most [`QUESTION_MAX_CHARS`] characters.
pub fn question(dialog: &Element) -> String {
    let name = crate::dom::name(dialog);
    let words = if name.trim().is_empty() { dialog.text_content().unwrap_or_default() } else { name };
    crate::dom::clip(&crate::dom::collapse(&words), QUESTION_MAX_CHARS)
}
