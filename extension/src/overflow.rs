//! Whether an element lies wholly outside a box around it that hides its overflow
//! (docs/perceive.md, "What a person sees"): a paragraph pushed below a 20 px window with
//! `overflow: hidden` is cut away from a person as surely as one in a box of no size.
//!
//! A box clips an axis when its `overflow` there is `hidden`, or `clip` (widened by
//! `overflow-clip-margin`); `auto` and `scroll` let a person scroll to what lies beyond, and
//! keep it. The box compared is the ancestor's border box as the walk read it (its padding box,
//! where the clip lies, is inside it: the judgement never claims more than is cut). Only what
//! the box holds in its flow is cut: an element positioned `absolute` or `fixed` on the way
//! from the text up to the box may be placed by a box further out, and escapes it. A box on
//! the way that scrolls brings what it holds into view: past it, its own box is compared (the
//! shell of a web application hides its overflow around a pane that scrolls).
//!
//! The root element's `overflow` is the viewport's, and so is the body's when the root's is
//! `visible` (CSS Overflow 3, "overflow viewport propagation"): such an element cuts nothing of
//! what it holds ([`propagated`]). Node-RED's editor hides the overflow of a body of no height
//! around an application placed over the whole viewport.

use wasm_bindgen::JsCast;
use web_sys::{CssStyleDeclaration, Element};

use crate::covered::Rect;

/// How a box treats what overflows it on one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Shows it (`visible`).
    Open,
    /// Lets a person scroll to it (`auto`, `scroll`).
    Scroll,
    /// Cuts it at the padding box (`hidden`).
    Hidden,
    /// Cuts it at the padding box widened by `overflow-clip-margin` (`clip`).
    Clip,
}

/// A computed `overflow` (one value for both axes, or horizontal then vertical).
pub fn parse(overflow: &str) -> [Axis; 2] {
    let axis = |v: &str| match v {
        "auto" | "scroll" => Axis::Scroll,
        "hidden" => Axis::Hidden,
        "clip" => Axis::Clip,
        _ => Axis::Open,
    };
    let mut values = overflow.split_whitespace();
    let x = axis(values.next().unwrap_or_default());
    let y = values.next().map_or(x, axis);
    [x, y]
}

/// The part of the page a box with this `overflow` and border box `at` lets show, on each axis
/// it clips (`None`: not clipped there). `style` is read only for a `clip` (its margin); an
/// unreadable margin leaves that axis open.
pub fn window(axes: [Axis; 2], at: Rect, style: &CssStyleDeclaration) -> [Option<(f64, f64)>; 2] {
    let margin = || style.get_property_value("overflow-clip-margin").ok().and_then(|m| crate::dom::px(&m));
    let span = |axis: Axis, start: f64, length: f64| match axis {
        Axis::Open | Axis::Scroll => None,
        Axis::Hidden => Some((start, start + length)),
        Axis::Clip => margin().map(|m| (start - m, start + length + m)),
    };
    [span(axes[0], at.left, at.width), span(axes[1], at.top, at.height)]
}

impl Axis {
    /// Whether what overflows is cut away (`hidden`, `clip`).
    pub fn clips(self) -> bool {
        matches!(self, Self::Hidden | Self::Clip)
    }
}

/// Whether the box `r` lies wholly outside `window` on an axis it clips.
pub fn outside(r: Rect, window: [Option<(f64, f64)>; 2]) -> bool {
    let beyond = |span: Option<(f64, f64)>, start: f64, length: f64| {
        span.is_some_and(|(from, to)| start + length <= from || start >= to)
    };
    beyond(window[0], r.left, r.width) || beyond(window[1], r.top, r.height)
}

/// Whether `el`'s `overflow` is the viewport's rather than its own: the root element's, and
/// the body's while the root's is `visible` on both axes. It then cuts nothing of what `el`
/// holds (the viewport is scrolled, or kept from scrolling, instead).
pub fn propagated(el: &Element) -> bool {
    let Some(doc) = el.owner_document() else { return false };
    let Some(root) = doc.document_element() else { return false };
    if &root == el {
        return true;
    }
    // `document.body` is the root's first `<body>` (or `<frameset>`) child.
    let body =
        doc.body().is_some_and(|b| b.unchecked_ref::<Element>() == el) && crate::dom::tag(el) == "body";
    body && parse(&crate::dom::computed(&root, "overflow").unwrap_or_default()) == [Axis::Open; 2]
}

/// Whether `overflow` applies to a box with this computed `display`: block, flex and grid
/// containers and table cells, not an inline, a table row or a group of rows or columns.
pub fn applies(display: &str) -> bool {
    let outer = display.split_whitespace().next().unwrap_or_default();
    let inline = outer == "inline" && !display.contains("flow-root");
    !(inline
        || display.starts_with("table-row")
        || display.ends_with("-group")
        || matches!(outer, "contents" | "none"))
}

/// Whether a `position` takes an element out of the flow of the boxes around it.
pub fn escapes(position: &str) -> bool {
    position == "absolute" || position == "fixed"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_is_read_per_axis() {
        assert_eq!(parse("hidden"), [Axis::Hidden, Axis::Hidden]);
        assert_eq!(parse("hidden auto"), [Axis::Hidden, Axis::Scroll]);
        assert_eq!(parse("visible clip"), [Axis::Open, Axis::Clip]);
        assert_eq!(parse("scroll"), [Axis::Scroll, Axis::Scroll]);
        assert_eq!(parse(""), [Axis::Open, Axis::Open]);
    }

    #[test]
    fn overflow_applies_to_containers_only() {
        for d in
            ["block", "flex", "grid", "inline-block", "inline-flex", "table-cell", "flow-root", "list-item"]
        {
            assert!(applies(d), "{d}");
        }
        for d in ["inline", "table-row", "table-row-group", "table-header-group", "contents"] {
            assert!(!applies(d), "{d}");
        }
    }

    #[test]
    fn a_box_is_outside_only_when_wholly_beyond_a_clipped_axis() {
        let window = [None, Some((100.0, 120.0))];
        let r = |top: f64, height: f64| Rect { left: 0.0, top, width: 50.0, height };
        assert!(outside(r(120.0, 18.0), window));
        assert!(outside(r(60.0, 40.0), window));
        assert!(!outside(r(110.0, 18.0), window));
        assert!(!outside(r(60.0, 41.0), window));
        assert!(!outside(Rect { left: -500.0, top: 100.0, width: 10.0, height: 10.0 }, window));
    }
}
