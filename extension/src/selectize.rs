//! Selectize, the jQuery picker Shiny (for R and Python) draws every `selectInput` with, and
//! many server-rendered sites use (docs/perceive.md, what an element's line holds). It hides
//! the `<select>` and draws a box holding the choice as text beside a narrow text box, which
//! takes the focus and types a filter; its list of options is drawn when the box opens. None
//! of it carries ARIA: the text box would read as an empty `textbox "Model"`. Nova reads the
//! text box as the picker it is, a combobox whose value is the choice the box shows, and knows
//! the options of its list.

use web_sys::Element;

use crate::dom;

/// The class of the box Selectize draws around its choice and its text box.
const BOX: &str = "selectize-input";

/// The options of an opened Selectize list, as a person picks them.
pub const OPTIONS: &str = ".selectize-dropdown [data-selectable]";

/// The box around `el` when `el` is the text box of a Selectize picker.
fn box_of(el: &Element) -> Option<Element> {
    el.parent_element().filter(|p| p.class_list().contains(BOX))
}

/// Whether `el`, an `<input>`, is the text box of a Selectize picker (it lies in the box).
pub fn is_text_box(el: &Element) -> bool {
    box_of(el).is_some()
}

/// The choice the picker whose text box is `el` shows (each chosen item's text, joined by
/// `, `); `None` when `el` is no such text box or nothing is chosen.
pub fn choice(el: &Element) -> Option<String> {
    let items = box_of(el)?.query_selector_all(":scope > .item").ok()?;
    let chosen: Vec<String> = (0..items.length())
        .filter_map(|i| items.item(i))
        .map(|n| dom::collapse(&n.text_content().unwrap_or_default()))
        .filter(|t| !t.is_empty())
        .collect();
    (!chosen.is_empty()).then(|| chosen.join(", "))
}
