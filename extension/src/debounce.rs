//! The pause a page declares, in a field's markup, before it answers typing (docs/perceive.md,
//! "A page that is still moving"). Libraries that answer typing after a pause say how long in
//! an attribute of the field: htmx's `hx-trigger="input changed delay:500ms"` (Canaille's
//! sign-in checks each field this way), Alpine's `x-on:input.debounce.500ms` (or
//! `@input.debounce`), Livewire's `wire:model.live.debounce.500ms`. An action after typing
//! waits that long rather than the usual pause ([`crate::settle`]), so that the page's answer
//! is sent before the form is: sent after it, the answer of an earlier state can undo what the
//! form's own request did (Canaille's check of the user name, answered after the press that
//! went on to the password page, dropped the account from the session).

use web_sys::Element;

/// What Alpine and Livewire wait when `.debounce` names no time (ms).
const DEFAULT_DEBOUNCE_MS: f64 = 250.0;

/// The longest pause `el` declares before the page answers typing into it (ms); `None` when
/// it declares none.
pub fn declared_ms(el: &Element) -> Option<f64> {
    if !el.has_attributes() {
        return None;
    }
    el.get_attribute_names()
        .iter()
        .filter_map(|n| n.as_string())
        .filter_map(|name| {
            let value = el.get_attribute(&name).unwrap_or_default();
            pause_of(&name.to_ascii_lowercase(), &value)
        })
        .reduce(f64::max)
}

/// The pause one attribute declares (ms): an htmx trigger's `delay:` or `throttle:`, or an
/// Alpine or Livewire `.debounce` / `.throttle` modifier, with or without its time.
pub fn pause_of(name: &str, value: &str) -> Option<f64> {
    if matches!(name, "hx-trigger" | "data-hx-trigger") {
        return value
            .split([',', ' '])
            .filter_map(|word| word.strip_prefix("delay:").or_else(|| word.strip_prefix("throttle:")))
            .filter_map(duration_ms)
            .reduce(f64::max);
    }
    let mut modifiers = name.split('.').skip(1);
    while let Some(m) = modifiers.next() {
        if m == "debounce" || m == "throttle" {
            return Some(modifiers.next().and_then(duration_ms).unwrap_or(DEFAULT_DEBOUNCE_MS));
        }
    }
    None
}

/// `500ms`, `1s`, `1.5s` or a bare `500` (milliseconds) in ms; `None` for anything else.
fn duration_ms(text: &str) -> Option<f64> {
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1000.0)
    } else {
        (text, 1.0)
    };
    number.parse::<f64>().ok().filter(|n| n.is_finite() && *n >= 0.0).map(|n| n * scale)
}

#[cfg(test)]
mod tests {
    use super::pause_of;

    #[test]
    fn htmx_triggers_declare_their_delay() {
        assert_eq!(pause_of("hx-trigger", "input changed delay:500ms"), Some(500.0));
        assert_eq!(pause_of("data-hx-trigger", "keyup changed delay:1s, search"), Some(1000.0));
        assert_eq!(pause_of("hx-trigger", "input throttle:750ms,change delay:200"), Some(750.0));
        assert_eq!(pause_of("hx-trigger", "change"), None);
        assert_eq!(pause_of("hx-trigger", "input delay:soon"), None);
        assert_eq!(pause_of("hx-post", "delay:500ms"), None);
    }

    #[test]
    fn alpine_and_livewire_modifiers_declare_theirs() {
        assert_eq!(pause_of("x-on:input.debounce.500ms", "search()"), Some(500.0));
        assert_eq!(pause_of("@input.debounce", "search()"), Some(250.0));
        assert_eq!(pause_of("wire:model.live.debounce.800ms", "title"), Some(800.0));
        assert_eq!(pause_of("@keyup.throttle.300ms", "f()"), Some(300.0));
        assert_eq!(pause_of("x-on:input", "f()"), None);
        assert_eq!(pause_of("class", "debounce.500ms"), None);
    }
}
