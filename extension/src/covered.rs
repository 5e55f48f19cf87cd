//! Whether the text of an element is covered by another element painted over it (docs/perceive.md,
//! "What a person sees"): an opaque box laid over a paragraph hides it from a person as surely
//! as a transparent colour does.
//!
//! Judged with the browser's hit tests, so only for elements whose box is in the viewport (the
//! rest, and boxes hit tests pass through, are judged by the painting order after the walk:
//! [`crate::stacking`]), at five points across the middle of a box ([`SAMPLED`]: the middle, near
//! either edge, a quarter in from each): the element's, then, found covered there, each line of its
//! own text (`seen::Layers::covered_in_view`: a box across the middle of a tall element may leave
//! its text at the top showing). The text is covered when at each point another element, or a box
//! drawn by a `::before` or `::after`, lies over it (found above the element by the hit test; one
//! inside the element counts only when taken out of its flow, `position: absolute`, since a box in
//! the flow lies beside the text) and:
//! - its own box holds the point (for a pseudo-element, the box its style places in the element
//!   that draws it: [`drawn_boxes`]);
//! - it paints over what is under it ([`Paint`]: an opaque background colour, or for a shape of
//!   an SVG drawing an opaque `fill`, and its layers leave at least 95 %);
//! - it moves with the page: a bar fixed to the viewport (`position: fixed` or `sticky`, itself
//!   or an ancestor up to the one they share) hides text only until the person scrolls, and an
//!   open menu, list box, dialog, tooltip or popover only until it closes; both keep the text.
//!
//! A hit test names the element that draws a pseudo-element, so when the text's own element or
//! one around it is on top, its `::before` and `::after` are what may cover the text: boxes
//! placed absolutely, not below the text (`z-index` not negative; around the text, the elements
//! between hold it in the flow, and a `::before` at `z-index` `auto` or 0 is painted before a
//! layer of its own among them, so under the text it holds), not moved or scaled by a transform.
//!
//! Text that lets hit tests through (`pointer-events: none`, floating labels over a field) is
//! never found under another element and counts as seen, as does text scrolled out of an inner
//! scrolling box (hit tests stop at its edge). Costs: one `elementFromPoint` per element holding
//! text whose box is in the viewport, and when the element on top is positioned, the `content`
//! of its two pseudo-elements; the list of everything at the point, the cover's style and its
//! ancestors only when something other than the element is on top.

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
    /// The computed style of `el`'s pseudo-element `pseudo` (`::before`, `::after`) when it is
    /// generated (`content` not `none`).
    fn drawn_style_of(&mut self, el: &Element, pseudo: &str) -> Option<CssStyleDeclaration>;
    /// Whether a style positions its element (`position` not `static`).
    fn positioned(&mut self, style: &CssStyleDeclaration) -> bool;
    /// Whether a style paints an opaque background colour.
    fn opaque(&mut self, style: &CssStyleDeclaration) -> bool;
    /// Whether `el`, with this style, is a shape of an SVG drawing that paints its inside opaque
    /// (`fill` a colour, `fill-opacity` at least [`SOLID`]).
    fn filled(&mut self, el: &Element, style: &CssStyleDeclaration) -> bool;
    /// What a layer with this style leaves of what it paints (1 = all of it).
    fn layer_opacity(&mut self, style: &CssStyleDeclaration) -> f64;
    /// How an element that is not positioned, with this style, is painted among the positioned
    /// boxes around it: in the flow (`false`), or as a layer of its own at `z-index` 0, in
    /// document order (`true`); `None` when that is not certain (a `z-index`, which counts only
    /// in a flex or grid container).
    fn lifted(&mut self, style: &CssStyleDeclaration) -> Option<bool>;
}

/// A box a `::before` or `::after` paints over what its element holds ([`drawn_boxes`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drawn {
    /// The box.
    pub rect: Rect,
    /// Whether it is painted before the layers of their own in the element's flow: a `::before`
    /// at `z-index` `auto` or 0 is painted with them, in document order, so first (text in such
    /// a layer is painted over it).
    pub first: bool,
}

/// What is laid over a page for a moment: a dialog, a popover, an element whose role is a
/// menu, list box, dialog or tooltip.
pub const PASSING: &str = "dialog, [popover], [role~=\"menu\"], [role~=\"listbox\"], [role~=\"dialog\"], \
     [role~=\"alertdialog\"], [role~=\"tooltip\"]";

/// Where across the middle line of an element's box the hit tests are made, as fractions of its
/// width: the middle first (text under nothing is settled by one), then near either edge and
/// between, so that a line left showing at an edge or a quarter in is seen.
const SAMPLED: [f64; 5] = [0.5, 0.02, 0.98, 0.25, 0.75];

/// Below this much left of a cover's paint, what is under it shows through.
pub const SOLID: f64 = 0.95;

/// Whether the text of an element whose box is `rect` is judged for covers in a viewport of
/// `viewport` (width, height): the middle of its box is in it.
pub fn judged(rect: Rect, viewport: (f64, f64)) -> bool {
    let (mid, y) = points(rect)[0];
    (0.0..viewport.1).contains(&y) && (0.0..viewport.0).contains(&mid)
}

/// The points across the middle of a box where covers are looked for ([`SAMPLED`]).
pub fn points(rect: Rect) -> [(f64, f64); 5] {
    let y = rect.top + rect.height / 2.0;
    SAMPLED.map(|f| (rect.left + rect.width * f, y))
}

/// Whether the text of `el` is covered at every point of `at` (in its document's viewport: a
/// point outside it keeps the text). `unseen` says whether a cover the hit tests do not see is
/// over the text at a point ([`crate::stacking`]); it is asked first at each point.
pub fn covered<P: Paint>(
    el: &Element,
    at: &[(f64, f64)],
    paint: &mut P,
    mut unseen: impl FnMut(&mut P, f64, f64) -> bool,
) -> bool {
    let Some(root) = dom::Root::of(el) else { return false };
    let mut covers: Vec<Element> = Vec::new();
    let mut drawn: Vec<(Element, Vec<Drawn>)> = Vec::new();
    for &(x, y) in at {
        if unseen(paint, x, y) {
            continue;
        }
        let Some(top) = root.element_from_point(x as f32, y as f32) else { return false };
        if top == *el || top.contains(Some(el)) {
            // The text, or a box a pseudo-element of it or of an element around it draws.
            let known = drawn.iter().position(|(e, _)| *e == top);
            let at = known.unwrap_or_else(|| {
                let boxes = drawn_over_flow(&top, el, paint);
                drawn.push((top, boxes));
                drawn.len() - 1
            });
            if drawn[at].1.iter().any(|b| b.rect.holds(x, y)) {
                continue;
            }
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

/// Whether `cover` hides `el` at (`x`, `y`): its own box holds the point and is opaque, or a
/// box one of its pseudo-elements draws does ([`drawn_boxes`]); and it moves with the page and
/// stays. One inside `el` must be taken out of its flow (`position: absolute`, on it or an
/// ancestor below `el`, or a pseudo-element's box): a box in the flow lies beside the text, not
/// on it.
fn paints_over(cover: &Element, el: &Element, x: f64, y: f64, paint: &mut impl Paint) -> bool {
    let own = Rect::of(&cover.get_bounding_client_rect()).holds(x, y)
        && paint.style_of(cover).is_some_and(|s| paint.opaque(&s) || paint.filled(cover, &s));
    let drawn = !own && drawn_boxes(cover, paint).iter().any(|b| b.rect.holds(x, y));
    if !own && !drawn {
        return false;
    }
    // The cover and its ancestors up to the one it shares with the text.
    let mut left = 1.0;
    let mut out_of_flow = drawn;
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

/// The boxes `around` (`el` itself, or an element around it) draws over the text of `el`
/// ([`drawn_boxes`]), when that text lies in its flow: no element from `el` up to `around` is
/// positioned, so what `around` places absolutely is painted over the text; but not the boxes
/// painted [`Drawn::first`] when one of those elements is a layer of its own, and none when it
/// is not certain how one is painted ([`Paint::lifted`]). `el` itself may be anything when it is
/// `around`.
fn drawn_over_flow(around: &Element, el: &Element, paint: &mut impl Paint) -> Vec<Drawn> {
    let mut between = Vec::new();
    let mut next = Some(el.clone()).filter(|e| e != around);
    while let Some(e) = next.filter(|e| e != around) {
        match paint.style_of(&e) {
            Some(style) if !paint.positioned(&style) => between.push(style),
            _ => return Vec::new(),
        }
        next = e.parent_element();
    }
    let boxes = drawn_boxes(around, paint);
    over_layers(boxes, between.iter().map(|style| paint.lifted(style)))
}

/// Of the boxes an element draws over what its flow holds, those over the text inside:
/// `lifts` are [`Paint::lifted`] for each element between the text and the one drawing, read
/// only when a box is painted [`Drawn::first`]. Those boxes are painted before an element
/// that is a layer of its own, so not over it: dropped when one is; all boxes are dropped when
/// it is not certain how one is painted.
pub fn over_layers(mut boxes: Vec<Drawn>, lifts: impl IntoIterator<Item = Option<bool>>) -> Vec<Drawn> {
    if boxes.iter().any(|b| b.first) {
        let mut layered = false;
        for lifted in lifts {
            match lifted {
                Some(lifted) => layered |= lifted,
                None => return Vec::new(),
            }
        }
        boxes.retain(|b| !(layered && b.first));
    }
    boxes
}

/// The boxes `el`'s `::before` and `::after` paint opaque over what `el` holds, in the
/// viewport: generated (`content` not `none`), placed absolutely in `el` (positioned, so it
/// holds them, not transformed, and not an inline box broken over lines), not below the text
/// (`z-index` not negative), not moved, scaled or clipped, with an opaque background colour
/// their layers leave at least 95 % of. Each box is its offsets from `el`'s padding box and its
/// used width and height: the border box or inside it, never more.
pub fn drawn_boxes(el: &Element, paint: &mut impl Paint) -> Vec<Drawn> {
    let mut boxes = Vec::new();
    let Some(own) = paint.style_of(el) else { return boxes };
    if !paint.positioned(&own) {
        return boxes;
    }
    for pseudo in ["::before", "::after"] {
        let Some(s) = paint.drawn_style_of(el, pseudo) else { continue };
        let v = |name: &str| s.get_property_value(name).unwrap_or_default();
        if v("position") != "absolute" || v("display") == "none" || v("visibility") != "visible" {
            continue;
        }
        if v("z-index").starts_with('-') || !paint.opaque(&s) || paint.layer_opacity(&s) < SOLID {
            continue;
        }
        if ["transform", "translate", "scale", "clip-path"].iter().any(|p| v(p) != "none") {
            continue;
        }
        // The box is placed in `el`'s padding box: one box (an inline on one line), as drawn.
        let still = |name: &str| own.get_property_value(name).unwrap_or_default();
        if still("transform") != "none" || still("display") == "inline" && el.get_client_rects().length() != 1
        {
            return boxes;
        }
        let px = |name: &str| dom::px(&v(name));
        let (Some(left), Some(top), Some(width), Some(height), Some(ml), Some(mt)) =
            (px("left"), px("top"), px("width"), px("height"), px("margin-left"), px("margin-top"))
        else {
            continue;
        };
        let at = el.get_bounding_client_rect();
        let rect = Rect {
            left: at.left() + f64::from(el.client_left()) + left + ml,
            top: at.top() + f64::from(el.client_top()) + top + mt,
            width,
            height,
        };
        let first = pseudo == "::before" && matches!(v("z-index").as_str(), "auto" | "0");
        boxes.push(Drawn { rect, first });
    }
    boxes
}

impl Rect {
    /// A box the browser measured.
    pub fn of(r: &web_sys::DomRect) -> Self {
        Self { left: r.left(), top: r.top(), width: r.width(), height: r.height() }
    }

    /// Whether the point (`x`, `y`) lies in the box.
    pub fn holds(&self, x: f64, y: f64) -> bool {
        x >= self.left && x < self.left + self.width && y >= self.top && y < self.top + self.height
    }
}
