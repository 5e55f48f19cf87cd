//! The text of a note the page shows (an error note, an error banner, an overlay) without the
//! note's own dismiss control: Trac's warning box begins with a link reading "close" (titled
//! "Hide this warning"), which is how a person hides the note, not what the page says.

use wasm_bindgen::JsCast;
use web_sys::Element;

use crate::dom;

/// What a control that hides its note says (its text, else its `aria-label`, else its
/// `title`): the whole of it, or its first word before more ("Hide this warning").
const HIDING: &[&str] = &["close", "dismiss", "hide", "×", "✕", "✖", "x", "schließen", "fermer", "cerrar"];

/// The controls a note may hold.
const CONTROLS: &str = "button, a, [role=\"button\"], input[type=\"button\"]";

/// Whether `el`, a control inside a note, hides the note: Bootstrap's `data-dismiss` /
/// `data-bs-dismiss`, or a control whose words are one of [`HIDING`] or begin with one.
fn hides(el: &Element) -> bool {
    if el.has_attribute("data-dismiss") || el.has_attribute("data-bs-dismiss") {
        return true;
    }
    let text = dom::collapse(&el.text_content().unwrap_or_default());
    let said = [Some(text), el.get_attribute("aria-label"), el.get_attribute("title")]
        .into_iter()
        .flatten()
        .map(|s| dom::collapse(&s).to_lowercase())
        .find(|s| !s.is_empty())
        .unwrap_or_default();
    HIDING.iter().any(|w| said == *w || (w.len() > 2 && said.starts_with(&format!("{w} "))))
}

/// The collapsed text of `note`, leaving out the controls in it that hide it.
pub fn text(note: &Element) -> String {
    let whole = || dom::collapse(&note.text_content().unwrap_or_default());
    let Ok(controls) = note.query_selector_all(CONTROLS) else { return whole() };
    let hiding: Vec<usize> = (0..controls.length())
        .filter(|&i| controls.item(i).and_then(|n| n.dyn_into::<Element>().ok()).is_some_and(|c| hides(&c)))
        .map(|i| i as usize)
        .collect();
    if hiding.is_empty() {
        return whole();
    }
    // The note is left as the page drew it: its copy loses the controls, in the same order.
    let Ok(copy) = note.clone_node_with_deep(true) else { return whole() };
    let Some(copy) = copy.dyn_ref::<Element>() else { return whole() };
    let Ok(copied) = copy.query_selector_all(CONTROLS) else { return whole() };
    for i in hiding {
        if let Some(c) = copied.item(i as u32).and_then(|n| n.dyn_into::<Element>().ok()) {
            c.remove();
        }
    }
    dom::collapse(&copy.text_content().unwrap_or_default())
}
