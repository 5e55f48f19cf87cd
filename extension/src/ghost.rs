//! Covers the browser's hit tests do not see (docs/perceive.md, "What a person sees"): a box
//! with `pointer-events: none` is painted like any other, but hit tests pass through it, so
//! [`crate::covered`] never finds it over the text. The walk notes such boxes in the viewport
//! (opaque background colour, `pointer-events: none`) as it enters them; once it has seen the
//! whole document, the text of each element in the viewport whose box meets one is judged again
//! with them ([`over`] at each point the hit tests would have found nothing).
//!
//! Nothing asks the browser what it painted on top, so the answer comes from the CSS painting
//! order, and only where it is certain. `cover` is over the text of `el` when, below the element
//! around both:
//! - the cover or an element around it is positioned (`relative` or `absolute`; `fixed` and
//!   `sticky` go away on scrolling and keep the text), none with a negative `z-index`: it is
//!   painted with the positioned boxes, after every box in the flow;
//! - the text is in that flow: nothing from `el` up is positioned or paints as a layer of its
//!   own (`z-index`, `opacity`, `transform`, `filter` and the other properties that make a
//!   stacking context), so nothing lifts it over the cover;
//! - the cover's own box holds the point with square corners, its layers leave at least 95 % of
//!   its opaque background, it is not moved other than by a translation, nor clipped by
//!   `clip-path`, and no box around it that hides its overflow cuts the point away; it is not a
//!   menu, dialog or popover that closes.
//!
//! Anything else keeps the text: a miss, never a false verdict.

use web_sys::{CssStyleDeclaration, Element};

use crate::covered::{PASSING, Paint, Rect, SOLID};
use crate::overflow::{self, Axis};

/// A box hit tests pass through, in the viewport, with an opaque background colour, as the walk
/// found it.
#[derive(Debug, Clone)]
pub struct Ghost {
    /// The element.
    pub el: Element,
    /// Its box in its document's viewport.
    pub rect: Rect,
}

impl Ghost {
    /// Whether its box meets `rect` (of an element in the same document).
    pub fn meets(&self, rect: Rect) -> bool {
        let (a, b) = (self.rect, rect);
        a.left < b.left + b.width
            && b.left < a.left + a.width
            && a.top < b.top + b.height
            && b.top < a.top + a.height
    }
}

/// Properties that make an element paint as a layer of its own (a stacking context), with the
/// value each has when it does not.
const OWN_LAYER: [(&str, &str); 13] = [
    ("z-index", "auto"),
    ("transform", "none"),
    ("translate", "none"),
    ("rotate", "none"),
    ("scale", "none"),
    ("filter", "none"),
    ("backdrop-filter", "none"),
    ("perspective", "none"),
    ("clip-path", "none"),
    ("mask-image", "none"),
    ("isolation", "auto"),
    ("mix-blend-mode", "normal"),
    ("will-change", "auto"),
];

/// Whether `cover`, which lets hit tests through, is painted over the text of `el` at
/// (`x`, `y`) (see the module's rules).
pub fn over(cover: &Element, el: &Element, x: f64, y: f64, paint: &mut impl Paint) -> bool {
    if cover.contains(Some(el)) || cover.get_root_node() != el.get_root_node() {
        return false;
    }
    if !Rect::of(&cover.get_bounding_client_rect()).holds(x, y) {
        return false;
    }
    // Its background is opaque: the walk notes no other ([`Ghost`]).
    if !paint.style_of(cover).is_some_and(|own| square(&own)) {
        return false;
    }
    // The cover and the elements around it, up to the one around the text too.
    let (mut left, mut lifted) = (1.0, false);
    let mut a = cover.clone();
    let shared = loop {
        if a.contains(Some(el)) {
            break a;
        }
        let Some(s) = paint.style_of(&a) else { return false };
        let v = |name: &str| s.get_property_value(name).unwrap_or_default();
        let position = v("position");
        if position == "fixed" || position == "sticky" || a.matches(PASSING).unwrap_or(false) {
            return false;
        }
        if v("z-index").starts_with('-') || !translated_only(&s) || v("clip-path") != "none" {
            return false;
        }
        lifted |= position == "relative" || position == "absolute";
        left *= paint.layer_opacity(&s);
        match a.parent_element() {
            Some(p) => a = p,
            None => return false,
        }
    };
    if !lifted || left < SOLID {
        return false;
    }
    // The text, in the flow up to that element.
    let mut e = el.clone();
    while e != shared {
        let Some(s) = paint.style_of(&e) else { return false };
        if paint.positioned(&s) || own_layer(&s) || paint.layer_opacity(&s) < 1.0 {
            return false;
        }
        match e.parent_element() {
            Some(p) => e = p,
            None => return false,
        }
    }
    // No box around the cover cuts the point away.
    let mut up = cover.parent_element();
    while let Some(a) = up {
        let Some(s) = paint.style_of(&a) else { return false };
        let axes = overflow::parse(&s.get_property_value("overflow").unwrap_or_default());
        if axes != [Axis::Open; 2] {
            let r = Rect::of(&a.get_bounding_client_rect());
            let cut_x = axes[0] != Axis::Open && !(r.left..r.left + r.width).contains(&x);
            let cut_y = axes[1] != Axis::Open && !(r.top..r.top + r.height).contains(&y);
            if cut_x || cut_y {
                return false;
            }
        }
        up = a.parent_element();
    }
    true
}

/// Whether a style paints its element as a layer of its own ([`OWN_LAYER`], and containment).
fn own_layer(style: &CssStyleDeclaration) -> bool {
    let v = |name: &str| style.get_property_value(name).unwrap_or_default();
    OWN_LAYER.iter().any(|(name, plain)| {
        let value = v(name);
        !value.is_empty() && value != *plain
    }) || !matches!(v("contain").as_str(), "" | "none" | "style")
        || !matches!(v("container-type").as_str(), "" | "normal")
}

/// Whether a style moves its element only by a translation (its box as measured is where it is
/// drawn).
fn translated_only(style: &CssStyleDeclaration) -> bool {
    let v = |name: &str| style.get_property_value(name).unwrap_or_default();
    let transform = v("transform");
    (transform == "none" || transform.starts_with("matrix(1, 0, 0, 1,"))
        && ["rotate", "scale"].iter().all(|p| matches!(v(p).as_str(), "" | "none"))
}

/// Whether a style draws its box with square corners.
fn square(style: &CssStyleDeclaration) -> bool {
    [
        "border-top-left-radius",
        "border-top-right-radius",
        "border-bottom-right-radius",
        "border-bottom-left-radius",
    ]
    .iter()
    .all(|p| matches!(style.get_property_value(p).unwrap_or_default().as_str(), "" | "0px"))
}
