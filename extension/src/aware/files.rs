//! `fileInputRisk`: clicks that would open a native file chooser, which MCP tools can neither see
//! nor operate. `nova.file_upload` puts files into the input instead.

use wasm_bindgen::JsCast;
use web_sys::Element;

use super::query::{CONTROLS, first_in, ref_of};
use crate::dom;

/// How likely a click opens a native file chooser.
pub struct FileRisk {
    /// `high`: a file input, its label, or what it lies over transparent (refused); else
    /// `medium`.
    pub high: bool,
    /// Why.
    pub reason: String,
    /// A selector for the file input, for `nova.file_upload`.
    pub hint: String,
}

fn is_file_input(el: &Element) -> bool {
    dom::as_input(el).is_some() && dom::input_type(el) == "file"
}

/// A selector for `input` that works from the top document: `#id` or a `name` match when the
/// input lives there, else its ref (refs reach shadow roots and frames too).
pub fn upload_selector(input: &Element) -> String {
    let plain = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit() || c == '-')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let top = dom::document().ok();
    let in_top = top.as_ref().is_some_and(|d| {
        input.get_root_node().node_type() == web_sys::Node::DOCUMENT_NODE
            && input.owner_document().as_ref() == Some(d)
    });
    if in_top {
        let id = input.id();
        if plain(&id)
            && top
                .as_ref()
                .and_then(|d| d.query_selector_all(&format!("#{id}")).ok())
                .is_some_and(|l| l.length() == 1)
        {
            return format!("#{id}");
        }
        if let Some(name) = input.get_attribute("name").filter(|n| plain(n)) {
            let css = format!("input[type=\"file\"][name=\"{name}\"]");
            if top.as_ref().and_then(|d| d.query_selector_all(&css).ok()).is_some_and(|l| l.length() == 1) {
                return css;
            }
        }
    }
    ref_of(input)
}

/// Words on controls that stand in for a hidden file input.
const UPLOAD_WORDS: &[&str] =
    &["upload", "choose file", "select file", "browse", "attach", "hochladen", "datei auswählen", "importer"];
/// How far up a wrapper shared with a hidden file input may be.
const FILE_WRAPPER_DEPTH: usize = 3;

/// Whether clicking `el` may open a native file chooser: `high` for a file input, (a part of)
/// its label, or an element beside one laid transparent over it; `medium` for an element
/// containing one, naming one in `aria-controls`, or a button sharing a small wrapper with a
/// hidden one.
pub fn file_input_risk(el: &Element) -> Option<FileRisk> {
    let what = dom::describe(el);
    if is_file_input(el) {
        return Some(FileRisk { high: true, reason: "is a file input".into(), hint: upload_selector(el) });
    }
    if let Some(label) = el.closest("label").ok().flatten() {
        let control = label.unchecked_ref::<web_sys::HtmlLabelElement>().control();
        if let Some(input) = control.map(Element::from).filter(is_file_input) {
            let reason = if &label == el {
                "is the label of a file input"
            } else {
                "is inside the label of a file input"
            };
            return Some(FileRisk { high: true, reason: reason.into(), hint: upload_selector(&input) });
        }
    }
    if let Some(input) = first_in(el, "input[type=\"file\" i]") {
        return Some(FileRisk {
            high: false,
            reason: format!("{what} contains a file input; the click may open a native file chooser"),
            hint: upload_selector(&input),
        });
    }
    let doc = el.owner_document()?;
    for id in el.get_attribute("aria-controls").unwrap_or_default().split_whitespace() {
        if let Some(input) = doc.get_element_by_id(id).filter(is_file_input) {
            return Some(FileRisk {
                high: false,
                reason: format!(
                    "{what} controls a file input (aria-controls); the click may open a native file chooser"
                ),
                hint: upload_selector(&input),
            });
        }
    }
    let button_like = el.matches(CONTROLS).unwrap_or(false);
    let name = dom::name(el).to_lowercase();
    let upload_named = UPLOAD_WORDS.iter().any(|w| name.contains(w));
    let mut wrapper = el.parent_element();
    for _ in 0..FILE_WRAPPER_DEPTH {
        let Some(w) = wrapper else { break };
        if matches!(dom::tag(&w).as_str(), "body" | "html") {
            break;
        }
        if let Some(input) = first_in(&w, "input[type=\"file\" i]") {
            // Pages lay the real input, transparent, over a styled button: a person's click
            // on the button opens the input's chooser.
            if crate::proxied::covers(&input, el) {
                return Some(FileRisk {
                    high: true,
                    reason: "lies under a transparent file input that takes a click on it".into(),
                    hint: upload_selector(&input),
                });
            }
            // Pages hide the real input and click it from a styled button.
            if (button_like && !dom::is_visible(&input)) || upload_named {
                return Some(FileRisk {
                    high: false,
                    reason: format!(
                        "{what} sits next to a hidden file input in the same wrapper; page scripts usually open its file chooser from here"
                    ),
                    hint: upload_selector(&input),
                });
            }
            break;
        }
        wrapper = w.parent_element();
    }
    None
}
