//! The keyboard events typing announces. Text goes in through the browser's editing commands
//! ([`crate::actions`]), which fire `beforeinput` and `input` but no key events; pages that
//! judge a field on `keyup` (Node-RED's import dialog enables its Import button there, as many
//! jQuery-era forms do) would never hear a person had typed. So once the text is in, the last
//! character typed is released (`keyup`), as a person's last key is; Enter is pressed in full
//! (`keydown`, `keypress`, `keyup`) when asked for.

use web_sys::{Element, KeyboardEvent, KeyboardEventInit};

/// A key as its events name it: `key`, `code` and the legacy `keyCode`/`which`.
struct Key {
    key: String,
    code: String,
    legacy: u32,
}

impl Key {
    fn enter() -> Self {
        Self { key: "Enter".into(), code: "Enter".into(), legacy: 13 }
    }

    /// The key that types `c` on a US layout: letters and digits name their key; any other
    /// character only itself (no `code`, `keyCode` 0).
    fn typing(c: char) -> Self {
        let (code, legacy) = match c {
            'a'..='z' | 'A'..='Z' => {
                (format!("Key{}", c.to_ascii_uppercase()), u32::from(c.to_ascii_uppercase()))
            }
            '0'..='9' => (format!("Digit{c}"), u32::from(c)),
            ' ' => ("Space".into(), 32),
            _ => (String::new(), 0),
        };
        Self { key: c.to_string(), code, legacy }
    }

    /// Dispatches its `kind` event (`keydown`, `keypress`, `keyup`) at `el`; whether the page
    /// let it proceed (it did not cancel it).
    fn dispatch(&self, el: &Element, kind: &str) -> bool {
        let init = KeyboardEventInit::new();
        init.set_bubbles(true);
        init.set_cancelable(true);
        init.set_composed(true);
        init.set_key(&self.key);
        init.set_code(&self.code);
        init.set_key_code(self.legacy);
        init.set_which(self.legacy);
        KeyboardEvent::new_with_keyboard_event_init_dict(kind, &init)
            .map(|e| el.dispatch_event(&e).unwrap_or(true))
            .unwrap_or(true)
    }
}

/// Announces Enter's `kind` event at `el`; whether the page let it proceed.
pub fn enter(el: &Element, kind: &str) -> bool {
    Key::enter().dispatch(el, kind)
}

/// Announces the release of the last key that typed `text` at `el` (its last character that
/// is not a line break: releasing Enter could send a chat's message). Nothing for text of line
/// breaks alone.
pub fn released(el: &Element, text: &str) {
    if let Some(c) = text.chars().rev().find(|c| !matches!(c, '\n' | '\r')) {
        Key::typing(c).dispatch(el, "keyup");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_names_its_key_as_a_us_layout_does() {
        let a = Key::typing('a');
        assert_eq!((a.key.as_str(), a.code.as_str(), a.legacy), ("a", "KeyA", 65));
        let seven = Key::typing('7');
        assert_eq!((seven.key.as_str(), seven.code.as_str(), seven.legacy), ("7", "Digit7", 55));
        let bracket = Key::typing(']');
        assert_eq!((bracket.key.as_str(), bracket.code.as_str(), bracket.legacy), ("]", "", 0));
    }
}
