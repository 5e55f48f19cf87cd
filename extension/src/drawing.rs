//! SVG drawings in a page walk (docs/perceive.md, "Drawings"): a chart's labels, a diagram's
//! names and a flow editor's nodes are text a person reads, drawn in SVG.
//! - Text is drawn only inside a `<text>` (and its `<tspan>`, `<textPath>`, `<a>`): text
//!   anywhere else in a drawing is not drawn. A `<foreignObject>` holds a page again
//!   ([`Within`], [`step`]).
//! - Definitions (`<defs>`, `<symbol>`, gradients, patterns, markers, clip paths, masks,
//!   filters), the tooltip `<title>`, `<desc>` and `<metadata>` are never drawn where they
//!   stand: the walk skips them unread.
//! - Shapes hold no text: the walk enters one only when it acts ([`acts`]: a role, a place in
//!   the tab order, a click handler in markup), and otherwise spends one call on it.
//! - Glyphs are painted by `fill` and `stroke`, not by the text colour, and what lies behind
//!   SVG text may be a shape drawn before it ([`Shapes`]); a shape drawn after it with an
//!   opaque fill covers it ([`is_shape`]). Those judgements are `seen`'s and `covered`'s.

use wasm_bindgen::JsCast;
use web_sys::{CssStyleDeclaration, Element};

use crate::attrs::Attrs;
use crate::colour::{Rgba, opacity, parse_colour};
use crate::covered::Rect;
use crate::dom;

/// Where the walk is: in a page, in a drawing's graphics (where text is not drawn), or in a
/// drawing's `<text>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Within {
    /// HTML (outside any `<svg>`, or inside a `<foreignObject>`).
    #[default]
    Page,
    /// An `<svg>`'s graphics.
    Drawing,
    /// A `<text>` in a drawing.
    Text,
}

impl Within {
    /// Whether a text node here is drawn.
    pub fn draws_text(self) -> bool {
        self != Within::Drawing
    }

    /// Whether an element here is part of a drawing (its text is painted by `fill`).
    pub fn in_drawing(self) -> bool {
        self != Within::Page
    }

    /// Where the walk is inside `root`, an element it starts at (a selector's match may lie in
    /// a drawing; only then is its namespace read).
    pub fn of_root(root: &Element, tag: &str) -> Self {
        if tag == "svg" || root.namespace_uri().as_deref() != Some(SVG) {
            return Within::Page;
        }
        match root.closest("text") {
            Ok(Some(_)) => Within::Text,
            _ => Within::Drawing,
        }
    }
}

/// What the walk does with an element, known by its tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Never drawn where it stands: not read.
    Skip,
    /// A shape: read only when it [`acts`].
    Shape,
    /// Entered; inside it the walk is here.
    Enter(Within),
}

/// What the walk does with an element tagged `tag` (lower case) found `within`.
pub fn step(within: Within, tag: &str) -> Step {
    match within {
        Within::Page => Step::Enter(if tag == "svg" { Within::Drawing } else { Within::Page }),
        _ if tag == "foreignobject" => Step::Enter(Within::Page),
        _ if NOT_DRAWN.contains(&tag) => Step::Skip,
        _ if SHAPES.contains(&tag) => Step::Shape,
        Within::Drawing if tag == "text" => Step::Enter(Within::Text),
        w => Step::Enter(w),
    }
}

/// Whether the drawing `svg` holds anything the walk reads: a text, a link, a page in a
/// `<foreignObject>`, a shape that [`acts`]. An icon holds none (a path or two): one query
/// instead of a visit to each of its elements.
pub fn holds_anything(svg: &Element) -> bool {
    svg.query_selector(READ_IN_A_DRAWING).ok().flatten().is_some()
}

/// What [`holds_anything`] looks for (an SVG element's name is matched as written).
const READ_IN_A_DRAWING: &str = "text, a, foreignObject, [tabindex], [role], [onclick]";

/// Whether a `<text>` starts here: a label of its own, on its own line.
pub fn starts_label(within: Within, tag: &str) -> bool {
    within == Within::Drawing && tag == "text"
}

/// Whether a `<tspan>` or `<textPath>` keeps its words apart from the text around it: each is
/// usually placed on its own (a line of a label, a label along a path), so the walk does not
/// measure whether the texts touch.
pub fn apart(within: Within, tag: &str) -> bool {
    within == Within::Text && matches!(tag, "tspan" | "textpath")
}

/// Whether a shape acts, so that an agent may act on it: it carries a role, a `tabindex`, or
/// a click handler in markup (an accessible chart's focusable points, a drawn button).
pub fn acts(attrs: &Attrs) -> bool {
    attrs.has("role") || attrs.has("tabindex") || attrs.has("onclick")
}

/// Whether `el` is an SVG shape (its paint is its `fill`): two reads, made only for an element
/// found over or under some text.
pub fn is_shape(el: &Element) -> bool {
    SHAPES.contains(&dom::tag(el).as_str()) && el.namespace_uri().as_deref() == Some(SVG)
}

/// What a drawing paints with `paint` (`fill` or `stroke`) in computed style `style`: a colour,
/// nothing (`none`), or `None` when not known (a gradient, a pattern); its alpha times the
/// property `alpha` (`fill-opacity`, `stroke-opacity`: [`opacity`]).
pub fn paint(style: &CssStyleDeclaration, paint: &str, alpha: &str) -> Option<Rgba> {
    let value = style.get_property_value(paint).ok()?;
    let colour = match value.trim() {
        "none" => Rgba(0.0, 0.0, 0.0, 0.0),
        v => parse_colour(v)?,
    };
    let left = style.get_property_value(alpha).ok().map_or(1.0, |o| opacity(&o));
    Some(Rgba(colour.0, colour.1, colour.2, colour.3 * left))
}

/// The width of a drawing's outline (`stroke-width`) in px; 0 when in other units.
pub fn stroke_width(style: &CssStyleDeclaration) -> f64 {
    let w = style.get_property_value("stroke-width").unwrap_or_default();
    dom::px(&w).unwrap_or(0.0)
}

/// The shapes of one drawing with what they paint, in the order they are painted: read once per
/// walk, the first time a text of the drawing needs to know what lies under it. Found by their
/// boxes, so no hit test is made (one costs about 150 µs in a drawing) and text outside the
/// viewport is judged the same way.
pub struct Shapes {
    /// The drawing (its outermost `<svg>`).
    svg: Element,
    /// Its shapes in document order; empty past [`MAX_SHAPES`] (`crowded`).
    shapes: Vec<Shape>,
    /// More than [`MAX_SHAPES`] shapes: what lies under a text is not known.
    crowded: bool,
}

/// One shape of a drawing, as [`Shapes`] read it.
struct Shape {
    el: Element,
    rect: Rect,
    /// What it paints inside: [`paint`] of its `fill` times its own `opacity`.
    fill: Option<Rgba>,
    /// Its box is exactly what it paints (a `rect`); for other shapes the box is larger.
    exact: bool,
}

/// A shape under a text ([`Shapes::under`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Under {
    /// What it paints inside (`None`: not known).
    pub fill: Option<Rgba>,
    /// Whether it certainly lies under the point (else only its box does).
    pub exact: bool,
}

impl Shapes {
    /// Reads the shapes of the drawing `svg`, each one's style through `style`.
    pub fn of(svg: &Element, style: impl Fn(&Element) -> Option<CssStyleDeclaration>) -> Self {
        let mut shapes = Vec::new();
        let found = svg.query_selector_all(SHAPES_CSS).ok();
        let count = found.as_ref().map_or(0, |l| l.length());
        let crowded = count as usize > MAX_SHAPES;
        for i in (0..count).filter(|_| !crowded) {
            let Some(el) = found.as_ref().and_then(|l| l.item(i)).and_then(|n| n.dyn_into::<Element>().ok())
            else {
                continue;
            };
            let rect = Rect::of(&el.get_bounding_client_rect());
            if rect.width <= 0.0 || rect.height <= 0.0 {
                continue;
            }
            let fill = style(&el).and_then(|s| {
                let own = opacity(&s.get_property_value("opacity").unwrap_or_default());
                paint(&s, "fill", "fill-opacity").map(|c| Rgba(c.0, c.1, c.2, c.3 * own))
            });
            let exact = dom::tag(&el) == "rect";
            shapes.push(Shape { el, rect, fill, exact });
        }
        Self { svg: svg.clone(), shapes, crowded }
    }

    /// Whether these are the shapes of the drawing `svg`.
    pub fn of_drawing(&self, svg: &Element) -> bool {
        self.svg == *svg
    }

    /// The shapes drawn before `text` (so under it) whose box holds (`x`, `y`), topmost first;
    /// `None` when the drawing has too many shapes to read.
    pub fn under(&self, text: &Element, x: f64, y: f64) -> Option<Vec<Under>> {
        if self.crowded {
            return None;
        }
        let found = self
            .shapes
            .iter()
            .rev()
            .filter(|s| s.rect.holds(x, y) && drawn_before(&s.el, text))
            .map(|s| Under { fill: s.fill, exact: s.exact })
            .collect();
        Some(found)
    }
}

/// Whether `a` is drawn before `b`: in a drawing, what comes first in the document is painted
/// first (SVG has no `z-index`).
fn drawn_before(a: &Element, b: &Element) -> bool {
    a.compare_document_position(b.unchecked_ref()) & web_sys::Node::DOCUMENT_POSITION_FOLLOWING != 0
}

/// The SVG namespace.
const SVG: &str = "http://www.w3.org/2000/svg";

/// Elements of a drawing never drawn where they stand (tags lower case).
const NOT_DRAWN: &[&str] = &[
    "defs",
    "symbol",
    "lineargradient",
    "radialgradient",
    "pattern",
    "marker",
    "clippath",
    "mask",
    "filter",
    "title",
    "desc",
    "metadata",
    "style",
    "script",
    "animate",
    "animatemotion",
    "animatetransform",
    "set",
];

/// The shapes (tags lower case): drawn, holding no text.
const SHAPES: &[&str] = &["path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "image", "use"];

/// The most shapes a drawing's [`Shapes`] are read for (a scatter plot of thousands of points
/// is not read through for a label).
const MAX_SHAPES: usize = 2000;

/// [`SHAPES`] as a selector.
const SHAPES_CSS: &str = "path, rect, circle, ellipse, line, polyline, polygon, image, use";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_drawn_only_in_a_page_or_a_drawings_text() {
        assert_eq!(step(Within::Page, "svg"), Step::Enter(Within::Drawing));
        assert_eq!(step(Within::Page, "text"), Step::Enter(Within::Page));
        assert_eq!(step(Within::Page, "path"), Step::Enter(Within::Page));
        assert_eq!(step(Within::Drawing, "g"), Step::Enter(Within::Drawing));
        assert_eq!(step(Within::Drawing, "text"), Step::Enter(Within::Text));
        assert_eq!(step(Within::Text, "tspan"), Step::Enter(Within::Text));
        assert_eq!(step(Within::Text, "a"), Step::Enter(Within::Text));
        assert_eq!(step(Within::Drawing, "foreignobject"), Step::Enter(Within::Page));
        for skipped in ["defs", "symbol", "title", "clippath", "lineargradient", "style"] {
            assert_eq!(step(Within::Drawing, skipped), Step::Skip, "{skipped}");
        }
        for shape in ["path", "rect", "circle", "use", "image"] {
            assert_eq!(step(Within::Drawing, shape), Step::Shape, "{shape}");
        }
        assert!(Within::Page.draws_text() && Within::Text.draws_text() && !Within::Drawing.draws_text());
        assert!(starts_label(Within::Drawing, "text") && !starts_label(Within::Text, "tspan"));
        assert_eq!(SHAPES.join(", "), SHAPES_CSS);
    }
}
