//! Whether a box is painted over an element's text, judged by the order CSS paints in, without a
//! hit test (docs/perceive.md, "What a person sees"). [`crate::covered`] asks the browser's hit
//! tests, which cannot answer in two cases: a box with `pointer-events: none` is painted like any
//! other but hit tests pass through it, and hit tests see only the viewport, while an agent reads
//! the whole page. So the walk notes every box as it leaves it ([`Cover`]: no read, its
//! background colour is known when its text was judged), and once it has seen the whole
//! document, the text it found seen is judged again against the boxes whose box meets the text's
//! own and that are not around it ([`Near`]), their colour read then if not known: in the
//! viewport the boxes hit tests pass through, at the points the hit tests are made; outside it
//! all of them, at five points across each line of the element's own text ([`Over`]).
//!
//! Nothing tells which box the browser painted last, so the answer comes from the CSS painting
//! order, and only where it is certain. Below the element around both, each of the cover and the
//! text is painted at a step ([`Step`]): with the boxes in the flow, with the positioned boxes
//! and the layers of their own at `z-index` 0 or `auto` (`position` `relative` or `absolute`,
//! `opacity`, `transform`, `filter`, `isolation`, `will-change`, containment: what makes a
//! stacking context), in document order, or above them at a positive `z-index`; the outermost
//! layer of its own on the way up decides, else whether any element there is positioned. `cover`
//! is over the text of `el` when:
//! - it is painted later: at a later step, or at the same step (not the flow's: there a block's
//!   background is painted before the text of blocks before it) and later in the document; and
//!   its step is certain: nothing on either way up is `fixed` or `sticky` (they move on
//!   scrolling, and keep the text), has a negative `z-index`, a `z-index` without being
//!   positioned (it counts only in a flex or grid container), or a transform other than a
//!   translation;
//! - no box around the text and not around the cover clips it at the point (text scrolled out
//!   of a box is not under what lies where it is now);
//! - the cover's own box holds the point with square corners (an inline element on one line
//!   only: broken over lines, its box holds more than it paints), its background colour is painted
//!   to its edges (`background-clip: border-box`), its layers leave at least 95 % of it and do
//!   not blend it into what is under it, it is not moved other than by a translation, nor
//!   clipped or masked, no box around it and not around the text that clips its overflow
//!   (`hidden`, `clip`, `auto`, `scroll`: what is scrolled away is not painted either) cuts the
//!   point away, and it is not a menu, dialog or popover that closes.
//!
//! Anything else keeps the text: a miss, never a false verdict.

use web_sys::{CssStyleDeclaration, Element};

use crate::covered::{PASSING, Paint, Rect, SOLID};

/// A box the walk left that may be painted over text.
#[derive(Debug, Clone)]
pub struct Cover {
    /// The element.
    pub el: Element,
    /// Its box in its document's viewport.
    pub rect: Rect,
    /// Where the walk entered and left it (a count of elements entered): an element the walk
    /// entered in between is inside it.
    pub span: (usize, usize),
    /// Whether its background colour is opaque, once known.
    pub opaque: Option<bool>,
    /// Whether hit tests pass through it (`pointer-events: none`), once read.
    pub passes_hits: Option<bool>,
}

impl Cover {
    /// Whether it may lie over the text of an element the walk entered as `at`, whose box is
    /// `rect`: its box meets that box, and it is not that element or around it.
    pub fn near(&self, at: usize, rect: Rect) -> bool {
        let (a, b) = (self.rect, rect);
        !(self.span.0..self.span.1).contains(&at)
            && a.left < b.left + b.width
            && b.left < a.left + a.width
            && a.top < b.top + b.height
            && b.top < a.top + a.height
    }
}

/// Boxes by where they lie, in rows of the page at least [`Near::ROW`] px tall, so that the
/// covers near a text are found without looking at every one.
pub struct Near {
    /// Where the first row starts, and how tall each is.
    top: f64,
    height: f64,
    /// For each row, the boxes that reach into it, by their place in the list.
    rows: Vec<Vec<usize>>,
}

impl Near {
    /// How tall a row is at least, px.
    const ROW: f64 = 256.0;
    /// How many rows there are at most (a page taller than that has taller rows).
    const ROWS: f64 = 4096.0;

    /// The rows of `boxes` between `top` and `bottom` (px; the texts judged lie there).
    pub fn new(boxes: impl Iterator<Item = Rect>, top: f64, bottom: f64) -> Self {
        let height = ((bottom - top) / Self::ROWS).max(Self::ROW);
        let count = ((bottom - top) / height).floor().max(0.0) as usize + 1;
        let mut near = Self { top, height, rows: vec![Vec::new(); count] };
        for (i, r) in boxes.enumerate() {
            if r.top > bottom || r.top + r.height < top {
                continue; // no text lies there
            }
            let (first, last) = (near.row(r.top), near.row(r.top + r.height));
            for row in &mut near.rows[first..=last] {
                row.push(i);
            }
        }
        near
    }

    /// The row `y` falls in; above or below them all, the first or the last.
    fn row(&self, y: f64) -> usize {
        let last = self.rows.len().saturating_sub(1);
        // `as` saturates: a negative or absurd place lands in the first or last row.
        (((y - self.top) / self.height).floor().max(0.0) as usize).min(last)
    }

    /// The boxes in the rows `rect` reaches into, by their place in the list, each once: every
    /// box that meets `rect`, and some that do not.
    pub fn of(&self, rect: Rect) -> Vec<usize> {
        let mut found: Vec<usize> = (self.row(rect.top)..=self.row(rect.top + rect.height))
            .flat_map(|row| &self.rows[row])
            .copied()
            .collect();
        found.sort_unstable();
        found.dedup();
        found
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
    ("view-transition-name", "none"),
];

/// Whether a cover is painted over a text, judged once for the pair (see the module's rules):
/// everything but the point, and the boxes whose clipping decides it at each point.
#[derive(Debug)]
pub struct Over {
    /// Boxes around the cover and not the text, or around the text and not the cover, that
    /// clip what overflows them: at a point one of them cuts away, the cover is not over the
    /// text there.
    clips: Vec<Clip>,
}

impl Over {
    /// How `cover` is painted against the text of `el`: `None` when it is not certainly over it
    /// anywhere.
    pub fn of(cover: &Cover, el: &Element, paint: &mut impl Paint) -> Option<Self> {
        let cover = &cover.el;
        if cover.contains(Some(el)) || cover.get_root_node() != el.get_root_node() {
            return None;
        }
        // Its background colour is opaque (the walk's judgement asks no other). An inline element
        // broken over lines is drawn in pieces: its box holds more than they paint.
        let own = paint.style_of(cover)?;
        let inline = own.get_property_value("display").unwrap_or_default() == "inline";
        if !square(&own) || !to_the_edges(&own) || inline && cover.get_client_rects().length() != 1 {
            return None;
        }
        let mut clips = Vec::new();
        // The cover and the elements around it, up to the one around the text too.
        let (mut left, mut cover_rank) = (1.0, Rank::default());
        let mut a = cover.clone();
        let shared = loop {
            if a.contains(Some(el)) {
                break a;
            }
            let s = paint.style_of(&a)?;
            let v = |name: &str| s.get_property_value(name).unwrap_or_default();
            if a.matches(PASSING).unwrap_or(false)
                || v("clip-path") != "none"
                || v("mask-image") != "none"
                || !matches!(v("mix-blend-mode").as_str(), "" | "normal")
            {
                return None;
            }
            let opacity = paint.layer_opacity(&s);
            cover_rank.up(&s, opacity)?;
            // A box around the cover that clips it and not the text (one around both clips both:
            // what it hides of the text, or scrolls away, it hides with the cover over it).
            if a != *cover {
                clips.extend(Clip::of(&a, &s));
            }
            left *= opacity;
            a = a.parent_element()?;
        };
        if left < SOLID {
            return None;
        }
        // The text and the elements around it, up to that element.
        let mut text_rank = Rank::default();
        let mut e = el.clone();
        while e != shared {
            let s = paint.style_of(&e)?;
            text_rank.up(&s, paint.layer_opacity(&s))?;
            // Text a box around it scrolls away (or clips) is not where the cover is.
            if e != *el {
                clips.extend(Clip::of(&e, &s));
            }
            e = e.parent_element()?;
        }
        // Painted later: a step further up, or the same step and later in the document.
        let (c, t) = (cover_rank.step(), text_rank.step());
        let later = c > t
            || c == t
                && c != Step::InFlow
                && el.compare_document_position(cover) & web_sys::Node::DOCUMENT_POSITION_FOLLOWING != 0;
        if !later {
            return None;
        }
        Some(Self { clips })
    }

    /// Whether the cover, whose box is `rect`, is over the text at (`x`, `y`).
    pub fn at(&self, rect: Rect, x: f64, y: f64) -> bool {
        rect.holds(x, y) && !self.clips.iter().any(|c| c.cuts_away(x, y))
    }
}

/// Where the element around both a cover and a text paints one of them (CSS painting order,
/// lowest first): with the boxes in its flow, with the positioned boxes and the layers of their
/// own at `z-index` 0 or `auto` (in document order), or above them at a positive `z-index`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
enum Step {
    InFlow,
    Positioned,
    Raised(i32),
}

/// The step of a cover or a text, built from the elements on the way up to the element around
/// both: the outermost that paints as a layer of its own decides; with none, whether any is
/// positioned.
#[derive(Debug, Default)]
struct Rank {
    layer: Option<i32>,
    positioned: bool,
}

impl Rank {
    /// Takes in the next element up, whose style is `style` and whose layers leave `opacity` of
    /// it (half-transparent, it is a layer of its own too); `None` when where it paints is not
    /// certain: fixed or sticky (they move on scrolling), a negative `z-index` (below the
    /// flow), a `z-index` on an element not positioned (it counts only in a flex or grid
    /// container), or moved other than by a translation (its box is not where it paints).
    fn up(&mut self, style: &CssStyleDeclaration, opacity: f64) -> Option<()> {
        let position = style.get_property_value("position").unwrap_or_default();
        if position == "fixed" || position == "sticky" || !translated_only(style) {
            return None;
        }
        let positioned = !matches!(position.as_str(), "" | "static");
        let z = match style.get_property_value("z-index").unwrap_or_default().as_str() {
            "" | "auto" => None,
            z => Some(z.parse::<i32>().ok().filter(|&z| z >= 0 && positioned)?),
        };
        if z.is_some() || layered(style, opacity) {
            self.layer = Some(z.unwrap_or(0));
        }
        self.positioned |= positioned;
        Some(())
    }

    fn step(&self) -> Step {
        match self.layer {
            Some(z) if z > 0 => Step::Raised(z),
            Some(_) => Step::Positioned,
            None if self.positioned => Step::Positioned,
            None => Step::InFlow,
        }
    }
}

/// A box that clips what overflows it (`overflow` other than `visible` on an axis: hidden,
/// clipped, or scrolled away): its padding box on each axis it clips.
#[derive(Debug)]
struct Clip {
    x: Option<(f64, f64)>,
    y: Option<(f64, f64)>,
}

impl Clip {
    /// The clip of `el`, with style `style`; `None` when it clips on neither axis.
    fn of(el: &Element, style: &CssStyleDeclaration) -> Option<Self> {
        let overflow = style.get_property_value("overflow").unwrap_or_default();
        let mut values = overflow.split_whitespace();
        let clips_x = values.next().is_some_and(|v| v != "visible");
        let clips_y = values.next().map_or(clips_x, |v| v != "visible");
        if !clips_x && !clips_y {
            return None;
        }
        let r = el.get_bounding_client_rect();
        let (left, top) = (r.left() + f64::from(el.client_left()), r.top() + f64::from(el.client_top()));
        let (width, height) = (f64::from(el.client_width()), f64::from(el.client_height()));
        Some(Self { x: clips_x.then_some((left, left + width)), y: clips_y.then_some((top, top + height)) })
    }

    /// Whether the point (`x`, `y`) lies outside the padding box on an axis it clips.
    fn cuts_away(&self, x: f64, y: f64) -> bool {
        let outside = |span: Option<(f64, f64)>, v: f64| span.is_some_and(|(a, b)| !(a..b).contains(&v));
        outside(self.x, x) || outside(self.y, y)
    }
}

/// Whether a style paints its background colour to the edges of its box (`background-clip`
/// `border-box`; not only inside its border or padding, nor only in its text's glyphs).
fn to_the_edges(style: &CssStyleDeclaration) -> bool {
    ["background-clip", "-webkit-background-clip"]
        .iter()
        .all(|p| matches!(style.get_property_value(p).unwrap_or_default().as_str(), "" | "border-box"))
}

/// How an element that is not positioned, with style `style` and `opacity`, is painted among
/// the positioned boxes around it ([`crate::covered::Paint::lifted`]): as a layer of its own at
/// `z-index` 0 when it makes one ([`layered`]), else in the flow; not certain with a `z-index`
/// (it counts only in a flex or grid container).
pub fn lifted(style: &CssStyleDeclaration, opacity: f64) -> Option<bool> {
    let z = style.get_property_value("z-index").unwrap_or_default();
    matches!(z.as_str(), "" | "auto").then(|| layered(style, opacity))
}

/// Whether an element with style `style`, whose layers leave `opacity` of it, is painted as a
/// layer of its own: half-transparent, or a property that makes one ([`own_layer`]).
fn layered(style: &CssStyleDeclaration, opacity: f64) -> bool {
    opacity < 1.0 || own_layer(style)
}

/// Whether a style paints its element as a layer of its own ([`OWN_LAYER`]; `will-change`
/// naming one of those properties or `opacity`; layout or paint containment, which a size
/// container has too).
fn own_layer(style: &CssStyleDeclaration) -> bool {
    let v = |name: &str| style.get_property_value(name).unwrap_or_default();
    OWN_LAYER.iter().any(|(name, plain)| {
        let value = v(name);
        !value.is_empty() && value != *plain
    }) || v("will-change").split(',').map(str::trim).any(|p| {
        p == "opacity" || p == "mask" || p != "z-index" && OWN_LAYER.iter().any(|(name, _)| *name == p)
    }) || v("contain").split_whitespace().any(|c| matches!(c, "layout" | "paint" | "strict" | "content"))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(top: f64, height: f64) -> Rect {
        Rect { left: 0.0, top, width: 100.0, height }
    }

    #[test]
    fn the_boxes_near_a_text_are_those_in_its_rows() {
        // Texts between 0 and 2,000 px: a box at the top, one across the whole page, one far
        // below the texts, one above them reaching in.
        let boxes = [rect(10.0, 20.0), rect(0.0, 5000.0), rect(9000.0, 20.0), rect(-500.0, 600.0)];
        let near = Near::new(boxes.into_iter(), 0.0, 2000.0);
        assert_eq!(near.of(rect(15.0, 10.0)), vec![0, 1, 3]);
        assert_eq!(near.of(rect(1500.0, 10.0)), vec![1]);
        // A text across two rows finds each box once.
        assert_eq!(near.of(rect(500.0, 20.0)), vec![1]);
        // Below or above them all: the last or the first row, never out of bounds.
        assert_eq!(near.of(rect(1e12, 10.0)), vec![1]);
        assert_eq!(near.of(rect(-1e12, 10.0)), vec![0, 1, 3]);
    }

    #[test]
    fn a_page_taller_than_its_rows_has_taller_rows() {
        let boxes = [rect(5e7, 10.0), rect(0.0, 10.0)];
        let near = Near::new(boxes.into_iter(), 0.0, 1e8);
        assert!(near.rows.len() <= Near::ROWS as usize + 1, "{} rows", near.rows.len());
        assert_eq!(near.of(rect(5e7, 5.0)), vec![0]);
        assert_eq!(near.of(rect(1.0, 5.0)), vec![1]);
    }
}
