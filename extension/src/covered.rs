//! Whether the text of an element is covered by another element painted over it (docs/perceive.md,
//! "What a person sees"): an opaque box laid over a paragraph hides it from a person as surely
//! as a transparent colour does.
//!
//! Judged with the browser's hit tests, so only for elements whose box is in the viewport, at
//! three points across the middle of the box (half, a tenth and nine tenths of its width). The
//! text is covered when at each point another element lies over it (found above the element by
//! the hit test; one inside the element counts only when taken out of its flow, `position:
//! absolute`, since a box in the flow lies beside the text) and:
//! - its own box holds the point (not a pseudo-element or overflow reaching over);
//! - it paints over what is under it ([`Paint`]: an opaque background colour, and its layers
//!   leave at least 95 % of it);
//! - it moves with the page: a bar fixed to the viewport (`position: fixed` or `sticky`, itself
//!   or an ancestor up to the one they share) hides text only until the person scrolls, and an
//!   open menu, list box, dialog, tooltip or popover only until it closes; both keep the text.
//!
//! Text that lets hit tests through (`pointer-events: none`, floating labels over a field) is
//! never found under anything and counts as seen, as does text scrolled out of an inner
//! scrolling box (hit tests stop at its edge). Costs: one `elementFromPoint` per element holding
//! text whose box is in the viewport; the list of everything at the point, the cover's style
//! and its ancestors only when something other than the element is on top.

use web_sys::{CssStyleDeclaration, Element};

use crate::dom;

/// An element's box in its document's viewport, as the walk read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Its left edge, px from the viewport's.
    pub left: f64,
    /// Its top edge, px from the viewport's.
    pub top: f64,
    /// Its width, px.
    pub width: f64,
    /// Its height, px.
    pub height: f64,
}

/// What the judgement needs to know of how elements paint (the seen-text judgement's reads).
pub trait Paint {
    /// An element's computed style.
    fn style_of(&mut self, el: &Element) -> Option<CssStyleDeclaration>;
    /// Whether a style paints an opaque background colour.
    fn opaque(&mut self, style: &CssStyleDeclaration) -> bool;
    /// What a layer with this style leaves of what it paints (1 = all of it).
    fn layer_opacity(&mut self, style: &CssStyleDeclaration) -> f64;
}

/// What is laid over a page for a moment: a dialog, a popover, an element whose role is a
/// menu, list box, dialog or tooltip.
const PASSING: &str = "dialog, [popover], [role~=\"menu\"], [role~=\"listbox\"], [role~=\"dialog\"], \
     [role~=\"alertdialog\"], [role~=\"tooltip\"]";

/// Below this much left of a cover's paint, what is under it shows through.
const SOLID: f64 = 0.95;

/// Whether `el`, whose box is `rect` in a viewport of `viewport` (width, height), is covered.
pub fn covered(el: &Element, rect: Rect, viewport: (f64, f64), paint: &mut impl Paint) -> bool {
    let y = rect.top + rect.height / 2.0;
    let mid = rect.left + rect.width / 2.0;
    if !(0.0..viewport.1).contains(&y) || !(0.0..viewport.0).contains(&mid) {
        return false;
    }
    let Some(root) = dom::Root::of(el) else { return false };
    let mut covers: Vec<Element> = Vec::new();
    for x in [mid, rect.left + rect.width * 0.1, rect.left + rect.width * 0.9] {
        let Some(top) = root.element_from_point(x as f32, y as f32) else { return false };
        if top == *el || top.contains(Some(el)) {
            return false;
        }
        if covers.contains(&top) {
            continue;
        }
        // Something inside the element is drawn over its own text, or it is part of it; anything
        // else must be found above the element at the point.
        let cover = if el.contains(Some(&top)) {
            paints_over(&top, el, x, y, paint).then_some(top)
        } else {
            cover_at(&root, el, x, y, paint)
        };
        match cover {
            Some(cover) => covers.push(cover),
            None => return false,
        }
    }
    true
}

/// The element that paints over `el` at (`x`, `y`), if one does.
fn cover_at(root: &dom::Root, el: &Element, x: f64, y: f64, paint: &mut impl Paint) -> Option<Element> {
    let all = root.elements_from_point(x as f32, y as f32);
    let at = all.iter().position(|e| e == el)?;
    all.into_iter().take(at).filter(|c| !c.contains(Some(el))).find(|c| paints_over(c, el, x, y, paint))
}

/// Whether `cover` hides `el` at (`x`, `y`): its own box holds the point, it is opaque, and it
/// moves with the page and stays. One inside `el` must be taken out of its flow (`position:
/// absolute`, on it or an ancestor below `el`): a box in the flow lies beside the text, not on it.
fn paints_over(cover: &Element, el: &Element, x: f64, y: f64, paint: &mut impl Paint) -> bool {
    let r = cover.get_bounding_client_rect();
    if x < r.left() || x >= r.right() || y < r.top() || y >= r.bottom() {
        return false;
    }
    let Some(own) = paint.style_of(cover) else { return false };
    if !paint.opaque(&own) {
        return false;
    }
    // The cover and its ancestors up to the one it shares with the text.
    let mut left = 1.0;
    let mut out_of_flow = false;
    let mut next = Some(cover.clone());
    while let Some(a) = next.filter(|a| !a.contains(Some(el))) {
        let Some(style) = paint.style_of(&a) else { return false };
        let position = style.get_property_value("position").unwrap_or_default();
        if position == "fixed" || position == "sticky" || a.matches(PASSING).unwrap_or(false) {
            return false;
        }
        out_of_flow |= position == "absolute";
        left *= paint.layer_opacity(&style);
        next = a.parent_element();
    }
    left >= SOLID && (out_of_flow || !el.contains(Some(cover)))
}
