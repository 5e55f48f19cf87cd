//! Which attributes an element carries, read in one call into the page.
//!
//! A page walk asks each interactive element for a dozen attributes (`role`, `aria-label`,
//! `aria-expanded`, `tabindex`, ...) that it almost never has, and every question is a call from
//! WebAssembly into the page. Reading the names once lets the walk ask only for attributes that
//! are there: a link with just `href` costs one read of its names and one of its `href`.

use web_sys::Element;

/// The names of an element's attributes, lower case, as the page had them when read.
pub struct Attrs {
    /// Space-separated names (attribute names never hold spaces); empty for an element with
    /// no attributes.
    names: String,
}

impl Attrs {
    /// The element's attribute names: one call when it has none, three when it has some.
    pub fn of(el: &Element) -> Self {
        if !el.has_attributes() {
            return Self::none();
        }
        Self { names: String::from(el.get_attribute_names().join(" ")).to_ascii_lowercase() }
    }

    /// No attributes: what [`Attrs::of`] gives for an element already known to have none.
    pub fn none() -> Self {
        Self { names: String::new() }
    }

    /// Whether the element has no attributes at all.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether the element carries the attribute `name` (lower case).
    pub fn has(&self, name: &str) -> bool {
        !name.is_empty() && self.names.split(' ').any(|n| n == name)
    }

    /// The attribute's value; no call into the page when the element does not carry it.
    pub fn get(&self, el: &Element, name: &str) -> Option<String> {
        if self.has(name) { el.get_attribute(name) } else { None }
    }
}

#[cfg(test)]
mod tests {
    use super::Attrs;

    #[test]
    fn a_name_is_matched_whole() {
        let a = Attrs { names: "href aria-label data-x".into() };
        assert!(a.has("href") && a.has("aria-label") && a.has("data-x"));
        assert!(!a.has("aria") && !a.has("label") && !a.has("hre") && !a.has(""));
        assert!(Attrs::none().is_empty() && !Attrs::none().has("href") && !Attrs::none().has(""));
    }
}
