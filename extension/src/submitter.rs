//! `page.submitter`: the button that submits the form a field belongs to, so a macro that filled
//! a form presses that form's button, not the first button on the page with a likely name (a
//! header's "Log in", a newsletter's "Subscribe"; docs/cls.md, the guarded macros).

use js_sys::Reflect;
use nova_shared::protocol::{SubmitterParams, SubmitterResult};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, HtmlCollection, Node};

use crate::dom::{self, Failure};

/// The ref of the default button of `field`'s form, if the field names something that has one.
pub fn submitter(p: &SubmitterParams) -> Result<SubmitterResult, Failure> {
    let Ok(field) = dom::resolve(&p.field) else {
        return Ok(SubmitterResult { submitter: None, name: None, in_form: false });
    };
    let form = form_of(&field);
    // A form with no submit button of its own is sent by a button its page draws beside it (a
    // dialog's footer), which may stay disabled until the form is filled.
    let button = match &form {
        Some(form) => default_button(form).or_else(|| named_near(&field, &p.words, Disabled::Taken)),
        None => named_near(&field, &p.words, Disabled::Skipped),
    };
    Ok(SubmitterResult {
        name: button.as_ref().map(|el| dom::collapse(&dom::name(el))),
        submitter: button.map(|el| format!("e{}", dom::ref_for(&el))),
        in_form: form.is_some(),
    })
}

/// Whether [`named_near`] takes a disabled button.
#[derive(Clone, Copy, PartialEq)]
enum Disabled {
    /// A button its page enables once the form is filled still counts.
    Taken,
    /// Only a button a person can press now counts.
    Skipped,
}

/// Most ancestors climbed from a field in no form looking for its button.
const MAX_CLIMB: usize = 12;

/// For a field in no form (a page that submits with script), or in a form with no button: a
/// visible button named with one of `words` inside the field's nearest ancestor that holds one
/// (the first after the field, else the first), so the card around a sign-in's fields wins over
/// a header's "Log in", and a dialog's footer over another form's button.
fn named_near(field: &Element, words: &[String], disabled: Disabled) -> Option<Element> {
    if words.is_empty() {
        return None;
    }
    let words: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let named = |el: &Element| {
        let name = dom::name(el).to_lowercase();
        words.iter().any(|w| name.contains(w.as_str()))
            && dom::is_visible(el)
            && (disabled == Disabled::Taken || !dom::is_disabled(el))
    };
    let mut at = field.parent_element();
    for _ in 0..MAX_CLIMB {
        let here = at?;
        let buttons = here.query_selector_all("button, [role=\"button\"], input[type=\"submit\"]").ok()?;
        let found: Vec<Element> = (0..buttons.length())
            .filter_map(|i| buttons.item(i))
            .filter_map(|n| dom::as_element(&n).cloned())
            .filter(|el| named(el))
            .collect();
        // The first after the field, as a person reads down a form ("Sign in with Google" above
        // the fields is another way in); else the first.
        let after =
            |el: &&Element| field.compare_document_position(el) & Node::DOCUMENT_POSITION_FOLLOWING != 0;
        if let Some(el) = found.iter().find(after).or(found.first()) {
            return Some(el.clone());
        }
        at = here.parent_element();
    }
    None
}

/// The field's form owner (its `form` attribute honoured, as the browser resolves it).
fn form_of(field: &Element) -> Option<Element> {
    let form = Reflect::get(field, &"form".into()).ok().filter(JsValue::is_object)?;
    dom::as_element(form.unchecked_ref()).filter(|el| dom::tag(el) == "form").cloned()
}

/// The button Enter in one of the form's fields presses (its first submit button in tree order),
/// when a person can see it; when it is hidden, the first visible submit button that sends what it
/// sends (the same `name` and `value`, both usually none). Pages hide the default button on
/// purpose: a multi-step form puts an invisible "next" first so that Enter does not press the
/// visible "Back" (`name=wizard_goto_step`) that comes before "Next" (django-two-factor-auth).
fn default_button(form: &Element) -> Option<Element> {
    let elements: HtmlCollection = Reflect::get(form, &"elements".into()).ok()?.unchecked_into();
    let mut buttons = (0..elements.length()).filter_map(|i| elements.item(i)).filter(submits);
    let first = buttons.next()?;
    if dom::is_visible(&first) {
        return Some(first);
    }
    // A button without a name (or with an empty one) sends nothing of its own.
    let sends =
        |el: &Element| (el.get_attribute("name").filter(|n| !n.is_empty()), el.get_attribute("value"));
    let wanted = sends(&first);
    let same = |el: &Element| {
        let (name, value) = sends(el);
        name == wanted.0 && (name.is_none() || value == wanted.1)
    };
    buttons.find(|el| same(el) && dom::is_visible(el))
}

/// Whether the control submits its form when pressed: a `<button>` whose type is not `button`
/// or `reset` (a missing or unknown type is `submit`), an `<input type=submit>` or `image`.
fn submits(el: &Element) -> bool {
    if dom::as_html(el).is_none() {
        return false;
    }
    let kind = el.get_attribute("type").map(|t| t.trim().to_ascii_lowercase());
    match dom::tag(el).as_str() {
        "button" => !matches!(kind.as_deref(), Some("button" | "reset")),
        "input" => matches!(kind.as_deref(), Some("submit" | "image")),
        _ => false,
    }
}
