//! What tells apart a control that has no name: the icon it shows, its id, its test id
//! (docs/perceive.md, what an element's line holds).
//!
//! Modern applications draw many controls as a bare icon (settings, copy, new chat, send) with
//! no label a screen reader could give. Their line would be `e9 button`, which tells an agent
//! nothing; the icon's name from the icon set's own markup, or an id a developer chose, does:
//! `e9 button id="chat-settings-open-modal"`, `e3 button icon="copy"`.

use web_sys::Element;

use crate::attrs::Attrs;

/// The icon sets whose class names carry the icon's name after a prefix: Lucide
/// (`lucide-copy`), Font Awesome (`fa-gear`), Bootstrap Icons (`bi-trash`), Tabler
/// (`icon-tabler-x`, `tabler-icon-x`, `ti-x`), Material Design Icons (`mdi-send`), Feather,
/// Octicons, Glyphicons, Remix Icon (`ri-settings-3-line`).
const PREFIXES: [&str; 11] = [
    "lucide-",
    "fa-",
    "bi-",
    "icon-tabler-",
    "tabler-icon-",
    "ti-",
    "mdi-",
    "feather-",
    "octicon-",
    "glyphicon-",
    "ri-",
];

/// Class names after those prefixes that style an icon rather than name it (Font Awesome's
/// families and sizes, Material Design Icons' sizes).
const STYLES: [&str; 24] = [
    "solid", "regular", "light", "thin", "duotone", "brands", "sharp", "fw", "xs", "2xs", "sm", "lg", "xl",
    "2xl", "spin", "pulse", "border", "inverse", "beat", "fade", "bounce", "shake", "ul", "li",
];

/// The descendants that may be a control's icon.
const ICONS: &str = "svg, i, [data-icon], span[class*='icon'], span[class*='fa-'], span[class*='bi-']";

/// ` icon="NAME" id="ID"` (or ` testid="ID"` when it has no id): the hints of a control with no
/// name, each only when there is one; empty when nothing tells it apart.
pub fn of_nameless(el: &Element, attrs: &Attrs) -> String {
    let mut hints = String::new();
    if let Some(icon) = icon(el) {
        hints.push_str(&format!(" icon=\"{icon}\""));
    }
    let chosen = |name: &str| attrs.get(el, name).filter(|v| chosen_by_hand(v));
    if let Some(id) = chosen("id") {
        hints.push_str(&format!(" id=\"{id}\""));
    } else if let Some(id) = chosen("data-testid") {
        hints.push_str(&format!(" testid=\"{id}\""));
    }
    hints
}

/// The name of the icon `el` shows, from the icon set's markup: `data-icon` (Font Awesome's
/// SVGs), a `data-testid` ending in `Icon` (Material UI: `SettingsIcon` -> `settings`), a
/// class name after an icon set's prefix, a sprite's fragment (`<use href="#icon-gear">`).
fn icon(el: &Element) -> Option<String> {
    let found = el.query_selector(ICONS).ok().flatten()?;
    if let Some(name) = found.get_attribute("data-icon").filter(|n| plain(n)) {
        return Some(name);
    }
    if let Some(id) = found.get_attribute("data-testid")
        && let Some(name) = id.strip_suffix("Icon").filter(|n| plain(n))
    {
        return Some(kebab(name));
    }
    let class = found.get_attribute("class").unwrap_or_default();
    if let Some(name) = class.split_whitespace().find_map(named_by_class) {
        return Some(name.to_owned());
    }
    let sprite = found.query_selector("use").ok().flatten()?;
    let href = sprite.get_attribute("href").or_else(|| sprite.get_attribute("xlink:href"))?;
    let fragment = href.rsplit_once('#')?.1;
    let name = fragment.strip_prefix("icon-").unwrap_or(fragment);
    plain(name).then(|| name.to_owned())
}

/// The icon's name in one class name (`lucide-copy` -> `copy`), unless it only styles the icon.
fn named_by_class(class: &str) -> Option<&str> {
    let name = PREFIXES.iter().find_map(|p| class.strip_prefix(p))?;
    let styling = STYLES.contains(&name)
        || name.strip_suffix('x').is_some_and(|n| n.parse::<u8>().is_ok())
        || name.ends_with("px")
        || ["rotate-", "flip", "stack", "pull-", "spin-"].iter().any(|s| name.starts_with(s));
    (plain(name) && !styling).then_some(name)
}

/// Whether an id looks chosen by a person rather than generated: no framework's counter
/// (React's `:r1:` and `«r1»`, `ember123`, `mui-4821`) and no hash or UUID.
fn chosen_by_hand(id: &str) -> bool {
    let digits_in_a_row = id.as_bytes().split(|b| !b.is_ascii_digit()).map(<[u8]>::len).max().unwrap_or(0);
    let hexish = id.len() >= 16 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    plain(id) && id.chars().any(|c| c.is_ascii_alphabetic()) && digits_in_a_row < 3 && !hexish
}

/// A short name of letters, digits, `-` and `_`.
fn plain(name: &str) -> bool {
    (1..=60).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `ContentCopy` -> `content-copy`.
fn kebab(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{chosen_by_hand, kebab, named_by_class};

    #[test]
    fn an_icon_set_s_class_names_the_icon_and_its_styles_do_not() {
        for (class, name) in [
            ("lucide-copy", Some("copy")),
            ("fa-gear", Some("gear")),
            ("fa-solid", None),
            ("fa-2x", None),
            ("fa-rotate-90", None),
            ("bi-trash3", Some("trash3")),
            ("icon-tabler-settings", Some("settings")),
            ("mdi-send", Some("send")),
            ("mdi-24px", None),
            ("ri-settings-3-line", Some("settings-3-line")),
            ("lucide", None),
            ("h-4", None),
            ("fa-", None),
        ] {
            assert_eq!(named_by_class(class), name, "{class}");
        }
    }

    #[test]
    fn a_generated_id_is_no_hint() {
        for id in ["chat-settings-open-modal", "new-chat-button", "submit", "menu-button-2"] {
            assert!(chosen_by_hand(id), "{id}");
        }
        for id in [":r1:", "«r1»", "ember123", "mui-4821", "0f3a9c2e-41d2-4c1e-9a57-2b0c", "42", "", "a b"]
        {
            assert!(!chosen_by_hand(id), "{id}");
        }
        assert_eq!(kebab("ContentCopy"), "content-copy");
        assert_eq!(kebab("Settings"), "settings");
    }
}
