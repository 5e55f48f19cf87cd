//! Select2, the jQuery picker Django's admin draws every autocomplete field with (and many
//! server-rendered sites use) (docs/perceive.md, what an element's line holds). It hides the
//! `<select>` (a clipped pixel, `aria-hidden`) and draws right after it a box with the role
//! combobox, holding the chosen items and, for several choices, a text box that filters the
//! options; its list of options is drawn when the box opens. Its ARIA names the box by nothing
//! (several choices, the text box unnamed too) or by its choice (one): the agent would read an
//! empty `combobox` beside a hidden `listbox "Groups:"`. Nova reads the box as the picker of
//! the `<select>` it stands for: named as that select is (by its label, `dom::name`), its value
//! the select's chosen options; the select itself is not listed, and its text boxes are named
//! as the select is. Below `dom`, which names elements by it: nothing here asks `dom`.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlOptionElement, HtmlSelectElement};

/// The class Select2 gives the `<select>` it hides.
const HIDDEN: &str = "select2-hidden-accessible";
/// The class of the box Select2 draws (role combobox).
const BOX: &str = "select2-selection";
/// The class of a picker's text box: in its box (several choices) or its opened list (one).
const TEXT_BOX: &str = "select2-search__field";
/// The class of what a picker of one choice shows as its choice (role textbox, read-only).
const RENDERED: &str = "select2-selection__rendered";

/// Whether `el`, a `<select>`, is hidden by Select2, which draws its box in its place.
pub fn is_hidden_select(el: &Element) -> bool {
    el.class_list().contains(HIDDEN)
}

/// Whether `el` is the choice a picker of one choice shows inside its box: part of the box,
/// not a text box of its own.
pub fn is_shown_choice(el: &Element) -> bool {
    el.class_list().contains(RENDERED)
}

/// The `<select>` a Select2 picker stands for, when `el` is its box or one of its text boxes:
/// the box lies right after the select, and so does the text box of a picker of several
/// choices; a picker of one has its text box in the list it opens at the end of the page,
/// naming the list it filters, whose id is the select's inside Select2's own
/// (`select2-id_content_type-results`).
pub fn select_of(el: &Element) -> Option<HtmlSelectElement> {
    let classes = el.class_list();
    if !classes.contains(BOX) && !classes.contains(TEXT_BOX) {
        return None;
    }
    let beside = el.closest(".select2-container").ok().flatten().and_then(|c| c.previous_element_sibling());
    let filtered = || {
        let list = el.get_attribute("aria-controls")?;
        let id = list.strip_prefix("select2-")?.strip_suffix("-results")?;
        el.owner_document()?.get_element_by_id(id)
    };
    // By tag, not `instanceof`: a frame's elements are of its realm.
    let hidden = |s: &Element| s.local_name() == "select" && is_hidden_select(s);
    beside.filter(hidden).or_else(|| filtered().filter(hidden)).map(JsCast::unchecked_into)
}

/// The value of a Select2 box: the options chosen in its select, joined by `, ` (empty when
/// none is); `None` when `el` is no such box (its search boxes hold the filter typed).
pub fn value(el: &Element) -> Option<String> {
    if !el.class_list().contains(BOX) {
        return None;
    }
    select_of(el).map(|s| choice(&s))
}

/// The options chosen in `select`, by their text (as the option gives it, its white space
/// collapsed), joined by `, `.
fn choice(select: &HtmlSelectElement) -> String {
    let chosen = select.selected_options();
    let texts: Vec<String> = (0..chosen.length())
        .filter_map(|i| chosen.item(i))
        .map(|o| o.unchecked_into::<HtmlOptionElement>().text())
        .filter(|t| !t.is_empty())
        .collect();
    texts.join(", ")
}
