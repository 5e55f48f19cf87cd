//! `nativeDialogWarning`: inline handlers calling alert / confirm / prompt and an inline
//! `onbeforeunload`. Native dialogs are answered by the person outside the page, and the page
//! (content scripts included) stops answering while one is open.

use nova_shared::page::NativeDialogWarning;
use web_sys::{Document, Element};

use super::query::{all, ref_of};
use crate::dom;

/// Whether inline handler code calls `alert(`, `confirm(` or `prompt(` (as a function, not as
/// part of a longer name such as `myalert(`).
pub fn calls_native_dialog(code: &str) -> bool {
    let lower = code.to_ascii_lowercase();
    ["alert", "confirm", "prompt"].iter().any(|f| {
        lower.match_indices(f).any(|(i, _)| {
            let before = lower[..i].chars().next_back();
            let after = lower[i + f.len()..].trim_start();
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
                && after.starts_with('(')
        })
    })
}

/// Inline handlers that run on clicks, typing and submits.
const HANDLERS: &[&str] = &[
    "onclick",
    "ondblclick",
    "onmousedown",
    "onmouseup",
    "onpointerdown",
    "onpointerup",
    "onsubmit",
    "onchange",
    "oninput",
    "onkeydown",
    "onkeyup",
    "onkeypress",
    "onfocus",
    "onblur",
];
/// Most element refs listed in the perceive warning.
const MAX_DIALOG_ELEMENTS: usize = 5;

/// Elements with any inline handler (rare on modern pages); the code is checked after.
fn handlers_selector() -> String {
    HANDLERS.iter().map(|h| format!("[{h}]")).collect::<Vec<_>>().join(", ")
}

/// The inline handler on `el` that opens a native dialog, as `onclick`.
fn dialog_handler(el: &Element) -> Option<&'static str> {
    HANDLERS.iter().copied().find(|h| el.get_attribute(h).is_some_and(|code| calls_native_dialog(&code)))
}

fn before_unload(doc: &Document) -> bool {
    doc.body().is_some_and(|b| b.get_attribute("onbeforeunload").is_some_and(|c| !c.trim().is_empty()))
}

/// `nativeDialogWarning` on perceive.
pub fn native_dialogs(doc: &Document) -> Option<NativeDialogWarning> {
    let elements: Vec<String> = all(doc, &handlers_selector())
        .iter()
        .filter(|el| dialog_handler(el).is_some() && dom::is_visible(el))
        .take(MAX_DIALOG_ELEMENTS)
        .map(ref_of)
        .collect();
    let before_unload = before_unload(doc);
    if elements.is_empty() && !before_unload {
        return None;
    }
    let mut message = String::new();
    if !elements.is_empty() {
        message.push_str("Inline handlers on these elements open alert / confirm / prompt. ");
    }
    if before_unload {
        message.push_str("The page has an inline onbeforeunload: leaving it may ask the person to confirm. ");
    }
    message.push_str("Native dialogs are answered by the person outside MCP visibility, and the page stops responding while one is open: ask the person, or take a path that avoids them.");
    Some(NativeDialogWarning { message, before_unload, elements })
}

/// `nativeDialogWarning` for an action on `el`: an inline dialog handler on it or an ancestor,
/// or (`link_leaves`) a link on a page with an inline `onbeforeunload`.
pub fn native_dialog_risk(el: &Element, link_leaves: bool) -> Option<String> {
    let mut cur = Some(el.clone());
    while let Some(e) = cur {
        if let Some(h) = dialog_handler(&e) {
            let whose = if &e == el { "its".to_owned() } else { format!("{}'s", dom::describe(&e)) };
            return Some(format!(
                "{whose} inline {h} handler calls alert / confirm / prompt: a native dialog may now be waiting for the person, outside MCP visibility; the page does not respond until it is answered"
            ));
        }
        cur = e.parent_element();
    }
    let doc = el.owner_document()?;
    (link_leaves && before_unload(&doc) && el.closest("a[href]").ok().flatten().is_some()).then(|| {
        "the page has an inline onbeforeunload and this link leaves it: a native \"Leave site?\" dialog may be waiting for the person, outside MCP visibility".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialog_calls_are_told_from_look_alike_names() {
        assert!(calls_native_dialog("return confirm('Delete?')"));
        assert!(calls_native_dialog("window.alert (1)"));
        assert!(calls_native_dialog("x = prompt('name')"));
        assert!(!calls_native_dialog("myalert('x')"));
        assert!(!calls_native_dialog("confirmed = true"));
        assert!(!calls_native_dialog("showPrompt()"));
    }
}
