//! Whether a person can see the text of an element, beyond what `checkVisibility` answers
//! (docs/perceive.md, "What a person sees"). Text that is there for machines only is the
//! classic carrier of prompt injection, so the page walk leaves it out:
//! - words drawn as an icon: a ligature icon font (Google's Material Icons and Material
//!   Symbols, [`icon_font`]) draws `arrow_drop_down` as one arrow, which a person does not read
//!   as words;
//! - a zero-size font (`font-size: 0`) or a fully transparent colour (the glyphs' colour is
//!   their fill, `-webkit-text-fill-color`, the text colour unless set apart; an outline, a
//!   text stroke with a width or a text shadow, draws them too; a background clipped to the
//!   text, `background-clip: text`, paints them whatever it is);
//! - a colour the same as the background behind it (the nearest ancestor's opaque background
//!   colour, else the canvas: white unless the page asks for a dark scheme; a background image
//!   or a dark canvas makes the colour unknowable, and the text counts as seen);
//! - an element or ancestor clipped away entirely by `clip-path` (`inset()` of half or more from
//!   both sides, a circle or ellipse of radius 0);
//! - nearly transparent: the colour's alpha times the `opacity` (and a `filter`'s `opacity()`)
//!   of the element and of every ancestor under 5 % (`opacity: 0` itself is `checkVisibility`'s);
//! - moved out of its own box to where nobody can scroll (a negative `text-indent`, the old
//!   image-replacement trick) or drawn at no size (`transform: scale(0)` on it or an ancestor):
//!   judged by the box of the element's contents (a `Range`), read only when the element's
//!   indent is negative or its own box is a point;
//! - an element wholly outside a box around it that hides its overflow ([`overflow`]; past a
//!   box that scrolls, that box is compared), and the lines of its text that such a box cuts
//!   away ([`Layers::rows`], [`crate::shown`]);
//! - covered by another element: in the viewport by the browser's hit tests ([`covered`]);
//!   under a box hit tests pass through, or outside the viewport, by the order CSS paints in
//!   ([`stacking`]): the walk notes every box with an opaque background colour as it leaves
//!   it, and judges the text again once it has seen them all ([`Layers::covered_later`]).
//!
//! Costs: computed style is read only for elements that hold text directly, and each ancestor's
//! background and `overflow` once per walk ([`Layers`] keeps them as the walk descends); background images
//! only when the colours alone would hide the text (an image under it makes it seen). A value
//! is compared inside the page with the last few of its property before it is copied into Rust
//! and parsed ([`Recent`]): pages use few font sizes and colours.

use js_sys::JsString;
use wasm_bindgen::prelude::*;
use web_sys::{CssStyleDeclaration, Element};

use crate::colour::{Rgba, colours_in, opacity, parse_colour, same_colour};
use crate::covered::{self, Rect};
use crate::dom;
use crate::drawing;
use crate::overflow::{self, Axis};
use crate::stacking::{self, Cover};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(extends = CssStyleDeclaration)]
    type Computed;

    /// `getPropertyValue`, left a JavaScript string: compared with values already read
    /// ([`Recent`]) before it is copied into Rust and parsed.
    #[wasm_bindgen(method, js_name = getPropertyValue)]
    fn value(this: &Computed, name: &str) -> JsString;
}

/// The last few distinct values of one property and what they parsed to: a page has few font
/// sizes and colours, so most reads end in one comparison inside the page instead of a copy.
struct Recent<T> {
    values: Vec<(JsString, T)>,
}

impl<T: Copy> Recent<T> {
    /// How many values are kept.
    const KEPT: usize = 4;

    fn new() -> Self {
        Self { values: Vec::with_capacity(Self::KEPT) }
    }

    /// The parsed value of `name` in `style`.
    fn read(&mut self, style: &CssStyleDeclaration, name: &str, parse: impl FnOnce(&str) -> T) -> T {
        let js = style.unchecked_ref::<Computed>().value(name);
        if let Some(i) = self.values.iter().position(|(v, _)| *v == js) {
            let hit = self.values.remove(i);
            let parsed = hit.1;
            self.values.insert(0, hit);
            return parsed;
        }
        let parsed = parse(&String::from(&js));
        self.values.truncate(Self::KEPT - 1);
        self.values.insert(0, (js, parsed));
        parsed
    }
}

impl<T: Copy> Default for Recent<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The values read while judging, kept for the walk ([`Recent`] per property).
#[derive(Default)]
struct Reads {
    font_size: Recent<Option<f64>>,
    icon_font: Recent<bool>,
    fill: Recent<Option<Rgba>>,
    colour: Recent<Option<Rgba>>,
    background: Recent<Option<Rgba>>,
    clip_path: Recent<bool>,
    /// One per [`LAYER`] factor.
    layer: [Recent<f64>; LAYER.len()],
    text_indent: Recent<f64>,
    positioned: Recent<bool>,
    passes_hits: Recent<bool>,
    generated: Recent<bool>,
    overflow: Recent<[Axis; 2]>,
}

impl Reads {
    fn font_size(&mut self, style: &CssStyleDeclaration) -> Option<f64> {
        self.font_size.read(style, "font-size", dom::px)
    }

    /// Whether the text is drawn in a ligature icon font ([`icon_font`]).
    fn icon_font(&mut self, style: &CssStyleDeclaration) -> bool {
        self.icon_font.read(style, "font-family", icon_font)
    }

    /// The glyphs' colour: their fill, else (a browser that does not say) the text colour.
    fn ink(&mut self, style: &CssStyleDeclaration) -> Option<Rgba> {
        self.fill
            .read(style, "-webkit-text-fill-color", parse_colour)
            .or_else(|| self.colour.read(style, "color", parse_colour))
    }

    /// The opaque background colour; `None` when (partly) transparent.
    fn background(&mut self, style: &CssStyleDeclaration) -> Option<Rgba> {
        self.background.read(style, "background-color", opaque_colour)
    }

    /// Whether `clip-path` is set at all (`none` almost everywhere).
    fn has_clip_path(&mut self, style: &CssStyleDeclaration) -> bool {
        self.clip_path.read(style, "clip-path", |c| c != "none" && !c.is_empty())
    }

    /// What a layer leaves of its contents: the product of its [`LAYER`] factors.
    fn opacity(&mut self, style: &CssStyleDeclaration) -> f64 {
        self.layer
            .iter_mut()
            .zip(LAYER)
            .map(|(recent, (name, parse))| recent.read(style, name, parse))
            .product()
    }

    /// How the box treats what overflows it, horizontally and vertically.
    fn overflow(&mut self, style: &CssStyleDeclaration) -> [Axis; 2] {
        self.overflow.read(style, "overflow", overflow::parse)
    }

    /// Whether `position` takes the element out of the static flow (not `static`).
    fn positioned(&mut self, style: &CssStyleDeclaration) -> bool {
        self.positioned.read(style, "position", |p| p != "static")
    }

    /// Whether hit tests pass through the element (`pointer-events: none`).
    fn passes_hits(&mut self, style: &CssStyleDeclaration) -> bool {
        self.passes_hits.read(style, "pointer-events", |p| p == "none")
    }

    /// Whether a pseudo-element's `content` generates it (not `none` or `normal`).
    fn generated(&mut self, style: &CssStyleDeclaration) -> bool {
        self.generated.read(style, "content", |c| c != "none" && c != "normal")
    }

    /// `text-indent` in px; a value in other units (a percentage) counts as 0 and is not judged.
    fn text_indent(&mut self, style: &CssStyleDeclaration) -> f64 {
        self.text_indent.read(style, "text-indent", |t| dom::px(t).unwrap_or(0.0))
    }
}

/// What an ancestor contributes to the text inside it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Backdrop {
    /// Its opaque background colour; `None` when transparent.
    colour: Option<Rgba>,
    /// A background image (colour behind text unknown); read for the walk root's ancestors,
    /// and for the walk's own layers only when needed ([`Layers`]).
    image: bool,
    /// Clipped away entirely.
    clipped: bool,
    /// Its `opacity` (for [`Layers::outer`], the product over the walk root's ancestors).
    opacity: f64,
    /// What it lets show of what overflows it, on each axis it clips ([`overflow::window`]);
    /// read for the walk's own layers.
    window: [Option<(f64, f64)>; 2],
    /// Whether a person scrolls to what overflows it, on each axis (`auto`, `scroll`); read for
    /// the walk's own layers.
    scrolls: [bool; 2],
}

/// An element the walk is inside.
struct Layer {
    el: Element,
    /// Its own box, as the walk read it (`None` for `display: contents`).
    rect: Option<Rect>,
    /// What it puts behind its text, once read.
    backdrop: Option<Backdrop>,
    /// Whether its own text is seen, once judged.
    seen: Option<bool>,
    /// Its computed style, once read (judging its text, or a text inside it).
    style: Option<CssStyleDeclaration>,
    /// When the walk entered it (a count of elements entered).
    at: usize,
    /// Where it is in [`Layers::later`]: its text was found seen, and is judged again once the
    /// walk has noted every cover.
    later: Option<usize>,
    /// What its `position` says, once read ([`Layers::place`]); if it is positioned, the boxes
    /// its `::before` and `::after` draw over what it holds ([`covered::drawn_boxes`]), once
    /// read.
    place: Option<Place>,
    drawn: Option<Vec<covered::Drawn>>,
    /// How many documents deep it is (an element in a same-origin iframe is one deeper).
    depth: usize,
    /// When its own text was found seen and its box reaches beyond the rows that boxes hiding
    /// their overflow (its own among them) let show: those rows, top and bottom
    /// ([`crate::shown`]).
    rows: Option<(f64, f64)>,
    /// Whether it is part of an SVG drawing: its text is painted by `fill` and `stroke`, and
    /// may lie on a shape ([`crate::drawing`]).
    drawing: bool,
    /// How far it and the boxes around it in its document have scrolled what they hold (x, y),
    /// added up, once asked ([`Layers::scrolled`]).
    scrolled: Option<(f64, f64)>,
}

/// What an element's `position` says, as the judgements use it.
#[derive(Clone, Copy, Default)]
struct Place {
    /// Positioned (not `static`): what it places absolutely, its pseudo-elements among them,
    /// it holds.
    positioned: bool,
    /// Out of the flow of the boxes around it ([`overflow::escapes`]).
    escapes: bool,
}

/// An element whose text was found seen, judged again against the covers once the walk is done
/// ([`stacking`]).
struct Later {
    el: Element,
    /// Its box.
    rect: Rect,
    /// When the walk entered it.
    at: usize,
    /// Whether the hit tests judged it (in the viewport): only covers they pass through remain.
    hit_tested: bool,
    /// Outside the viewport, the boxes the pseudo-elements of the positioned element nearest
    /// around it (or itself) draw over what it holds.
    drawn: Vec<Rect>,
}

/// The elements the walk is inside, innermost last, with what each contributes once read.
#[derive(Default)]
pub struct Layers {
    stack: Vec<Layer>,
    /// What lies above the walk's root (read once, for `read_text` on a selector).
    outer: Option<Backdrop>,
    /// The windows of the documents the walk is in (a same-origin iframe's innermost), so
    /// that reading an element's style costs one call, not three; with their viewports' size.
    views: Vec<(web_sys::Window, (f64, f64))>,
    reads: Reads,
    /// How many elements the walk has entered.
    entered: usize,
    /// The boxes with an opaque background colour the walk has left ([`stacking`]).
    covers: Vec<Cover>,
    /// The elements whose text was found seen, to be judged against [`Layers::covers`].
    later: Vec<Later>,
    /// Where their text lies: from the top of the highest to the bottom of the lowest.
    judged: Option<(f64, f64)>,
    /// The shapes of the last drawing whose text needed to know what lies under it.
    shapes: Option<drawing::Shapes>,
}

impl Layers {
    /// Enters `el`, whose box the walk has read (`None` when it has none of its own);
    /// `drawing`: it is part of an SVG drawing.
    pub fn push(&mut self, el: &Element, rect: Option<Rect>, drawing: bool) {
        let at = self.entered;
        self.entered += 1;
        self.stack.push(Layer {
            el: el.clone(),
            rect,
            backdrop: None,
            seen: None,
            style: None,
            at,
            later: None,
            place: None,
            drawn: None,
            depth: self.views.len(),
            rows: None,
            scrolled: None,
            drawing,
        });
    }

    /// How far the boxes the walk is inside, and those around the walk's root, have scrolled
    /// what they hold (x, y), added up ([`crate::placed::own_scroll`]): what the next element's
    /// box needs to be placed where it lies unscrolled. Each box is read once, and only when
    /// asked (for a box found before the page's start); a same-origin iframe's document starts
    /// again from its own.
    pub fn scrolled(&mut self) -> (f64, f64) {
        let Some(top) = self.stack.len().checked_sub(1) else { return (0.0, 0.0) };
        // Down to the deepest layer already added up, or to where a document starts.
        let mut from = top;
        while self.stack[from].scrolled.is_none()
            && from > 0
            && self.stack[from - 1].depth == self.stack[from].depth
        {
            from -= 1;
        }
        let mut sum = match self.stack[from].scrolled {
            Some(known) => {
                from += 1;
                known
            }
            None if from == 0 => crate::placed::scrolled_around(&self.stack[0].el),
            None => (0.0, 0.0),
        };
        for layer in &mut self.stack[from..=top] {
            let own = crate::placed::own_scroll(&layer.el);
            sum = (sum.0 + own.0, sum.1 + own.1);
            layer.scrolled = Some(sum);
        }
        sum
    }

    /// Leaves the innermost element. Its box is noted as a possible cover ([`stacking`]) unless
    /// its text's judgement found its background colour transparent; once no more text is
    /// judged (`past_the_cut`), only if it reaches where the text judged lies (a box later in
    /// the document may lie over the last text returned). No read here: what is not known is
    /// read only for a box found near some text.
    pub fn pop(&mut self, past_the_cut: bool) {
        let Some(layer) = self.stack.pop() else { return };
        let reaches = |r: &Rect| {
            !past_the_cut
                || self.judged.is_some_and(|(top, bottom)| r.top <= bottom && r.top + r.height >= top)
        };
        let Some(rect) = layer.rect.filter(|r| r.width > 1.0 && r.height > 1.0 && reaches(r)) else { return };
        let opaque = layer.backdrop.map(|b| b.colour.is_some());
        if opaque != Some(false) {
            let span = (layer.at, self.entered);
            self.covers.push(Cover { el: layer.el, rect, span, opaque, passes_hits: None });
        }
    }

    /// The computed style of the layer at `i`, read once.
    fn layer_style(&mut self, i: usize) -> Option<CssStyleDeclaration> {
        if let Some(s) = &self.stack[i].style {
            return Some(s.clone());
        }
        let s = self.style(&self.stack[i].el);
        self.stack[i].style.clone_from(&s);
        s
    }

    /// What the `position` of the layer at `i` says, read once (nothing, when its style cannot
    /// be read).
    fn place(&mut self, i: usize) -> Place {
        if let Some(place) = self.stack[i].place {
            return place;
        }
        let position = self.layer_style(i).and_then(|s| prop(&s, "position"));
        let place = position.map_or_else(Place::default, |p| Place {
            positioned: p != "static",
            escapes: overflow::escapes(&p),
        });
        self.stack[i].place = Some(place);
        place
    }

    /// The rows the innermost element's text is shown in when a box hiding its overflow cuts
    /// its box ([`Layer::rows`]): only its lines there are seen. Asked after
    /// [`Layers::text_seen`].
    pub fn rows(&self) -> Option<(f64, f64)> {
        self.stack.last().and_then(|l| l.rows)
    }

    /// Where the innermost element is in [`Layers::later`], if its text was found seen:
    /// [`Layers::covered_later`] may yet find it covered.
    pub fn later(&self) -> Option<usize> {
        self.stack.last().and_then(|l| l.later)
    }

    /// For each element of [`Layers::later`], whether a cover the walk noted turns out to be
    /// painted over its text ([`stacking::Over`] at each point of [`covered::points`]): in the
    /// viewport, a cover hit tests pass through, where the hit tests found nothing; outside it,
    /// any cover with an opaque background colour, across every line of the element's own text
    /// ([`text_lines`], read only for an element with a cover near). Empty when there is no text
    /// to judge.
    pub fn covered_later(&mut self) -> Vec<bool> {
        let later = std::mem::take(&mut self.later);
        let mut covers = std::mem::take(&mut self.covers);
        // The walk is done: each element's style is read through its own document's window.
        self.views.clear();
        let Some((top, bottom)) = self.judged.take() else { return Vec::new() };
        let index = stacking::Near::new(covers.iter().map(|c| c.rect), top, bottom);
        later
            .iter()
            .map(|l| {
                let mut near = Vec::new();
                for i in index.of(l.rect) {
                    if covers[i].near(l.at, l.rect)
                        && self.opaque(&mut covers[i])
                        && (!l.hit_tested || self.passes_hits(&mut covers[i]))
                    {
                        near.push(i);
                    }
                }
                // Each pair is judged once, at the first point its cover's box holds.
                let mut over: Vec<Option<Option<stacking::Over>>> = near.iter().map(|_| None).collect();
                let mut under = |paint: &mut Self, x: f64, y: f64| {
                    l.drawn.iter().any(|b| b.holds(x, y))
                        || near.iter().zip(&mut over).any(|(&i, over)| {
                            let rect = covers[i].rect;
                            rect.holds(x, y)
                                && over
                                    .get_or_insert_with(|| stacking::Over::of(&covers[i], &l.el, paint))
                                    .as_ref()
                                    .is_some_and(|o| o.at(rect, x, y))
                        })
                };
                if near.is_empty() && l.drawn.is_empty() {
                    false
                } else if l.hit_tested {
                    self.covered_in_view(&l.el, l.rect, under)
                } else {
                    // Outside the viewport, where its text is: every line of its own text.
                    let lines = text_lines(&l.el);
                    !lines.is_empty()
                        && lines
                            .iter()
                            .all(|&line| covered::points(line).iter().all(|&(x, y)| under(self, x, y)))
                }
            })
            .collect()
    }

    /// Whether hit tests (and `unseen`: [`covered::covered`]) find the own text of `el`, whose box
    /// is `rect`, covered: across the middle of its box first (one hit test settles text under
    /// nothing), then, found covered there, across each line of its own text ([`text_lines`]):
    /// a box across the middle of a tall element may leave its text at the top showing.
    fn covered_in_view(
        &mut self,
        el: &Element,
        rect: Rect,
        mut unseen: impl FnMut(&mut Self, f64, f64) -> bool,
    ) -> bool {
        covered::covered(el, &covered::points(rect), self, &mut unseen) && {
            let lines = text_lines(el);
            !lines.is_empty()
                && lines.iter().all(|&line| covered::covered(el, &covered::points(line), self, &mut unseen))
        }
    }

    /// Whether a cover's background colour is opaque (read once, if its text's judgement did not).
    fn opaque(&mut self, cover: &mut Cover) -> bool {
        if cover.opaque.is_none() {
            let style = self.style(&cover.el);
            cover.opaque = Some(style.is_some_and(|s| self.reads.background(&s).is_some()));
        }
        cover.opaque == Some(true)
    }

    /// Whether hit tests pass through a cover (read once).
    fn passes_hits(&mut self, cover: &mut Cover) -> bool {
        if cover.passes_hits.is_none() {
            let style = self.style(&cover.el);
            cover.passes_hits = Some(style.is_some_and(|s| self.reads.passes_hits(&s)));
        }
        cover.passes_hits == Some(true)
    }

    /// Enters a document (the walk's own, or a same-origin iframe's) whose window is `view`;
    /// answers the size of its viewport (width, height, CSS px), read once per document.
    pub fn enter_document(&mut self, view: web_sys::Window) -> (f64, f64) {
        let size = |v: Result<JsValue, JsValue>| v.ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
        let viewport = (size(view.inner_width()), size(view.inner_height()));
        self.views.push((view, viewport));
        viewport
    }

    /// Leaves the innermost document.
    pub fn leave_document(&mut self) {
        self.views.pop();
    }

    fn style(&self, el: &Element) -> Option<CssStyleDeclaration> {
        match self.views.last() {
            Some((view, _)) => view.get_computed_style(el).ok().flatten(),
            None => style(el),
        }
    }

    /// Whether the text held directly by the innermost element is seen (judged once per
    /// element).
    pub fn text_seen(&mut self) -> bool {
        let Some(last) = self.stack.last() else { return true };
        if let Some(seen) = last.seen {
            return seen;
        }
        let seen = self.judge();
        if let Some(last) = self.stack.last_mut() {
            last.seen = Some(seen);
        }
        seen
    }

    /// The text's paint and its layers ([`Layers::painted`]), then whether anything is painted
    /// over it ([`covered`]).
    fn judge(&mut self) -> bool {
        if !self.painted() {
            return false;
        }
        let Some((el, Some(rect))) = self.stack.last().map(|l| (l.el.clone(), l.rect)) else { return true };
        let viewport = self.views.last().map_or((0.0, 0.0), |(_, v)| *v);
        let hit_tested = covered::judged(rect, viewport);
        if hit_tested && self.covered_in_view(&el, rect, |_, _, _| false) {
            return false;
        }
        let drawn = if hit_tested { Vec::new() } else { self.drawn_around() };
        let (low, high) = self.judged.unwrap_or((rect.top, rect.top + rect.height));
        self.judged = Some((low.min(rect.top), high.max(rect.top + rect.height)));
        let top = self.stack.len() - 1;
        self.stack[top].later = Some(self.later.len());
        self.later.push(Later { el, rect, at: self.stack[top].at, hit_tested, drawn });
        true
    }

    /// The boxes the `::before` and `::after` of the positioned element nearest around the
    /// innermost element's text (or that element itself) draw over what it holds
    /// ([`covered::drawn_boxes`]): placed absolutely in it, they are painted over its flow, where
    /// the text is; but not those painted first ([`covered::Drawn::first`]) when an element
    /// between is a layer of its own, and none when how one is painted is not certain
    /// ([`covered::Paint::lifted`], read only then). Only in the text's own document (what
    /// another draws is placed in its viewport, not this one). Each layer's `position`, and a
    /// positioned one's pseudo-elements, read once per walk.
    fn drawn_around(&mut self) -> Vec<Rect> {
        let Some(depth) = self.stack.last().map(|l| l.depth) else { return Vec::new() };
        let first = self.stack.iter().rposition(|l| l.depth != depth).map_or(0, |i| i + 1);
        for i in (first..self.stack.len()).rev() {
            if !self.place(i).positioned {
                continue;
            }
            let drawn = match &self.stack[i].drawn {
                Some(drawn) => drawn.clone(),
                None => {
                    let el = self.stack[i].el.clone();
                    let drawn = covered::drawn_boxes(&el, self);
                    self.stack[i].drawn = Some(drawn.clone());
                    drawn
                }
            };
            let lifts = (i + 1..self.stack.len())
                .map(|j| self.layer_style(j).and_then(|s| covered::Paint::lifted(self, &s)));
            return covered::over_layers(drawn, lifts).into_iter().map(|d| d.rect).collect();
        }
        Vec::new()
    }

    /// Whether the innermost element's text is drawn so a person can read it: its font, its
    /// colour against its background, its layers' clipping and opacity.
    fn painted(&mut self) -> bool {
        let Some((el, rect)) = self.stack.last().map(|l| (l.el.clone(), l.rect)) else { return true };
        let point = rect.is_some_and(|r| r.width <= 1.0 && r.height <= 1.0);
        let top = self.stack.len() - 1;
        let Some(own) = self.layer_style(top) else { return true };
        let font = self.reads.font_size(&own);
        if font.is_some_and(|f| f < 1.0) {
            return false;
        }
        if self.reads.icon_font(&own) {
            return false;
        }
        let tiny = font.is_some_and(|f| f < UNREADABLE);
        let drawing = self.stack[top].drawing;
        let ink = if drawing { drawing::paint(&own, "fill", "fill-opacity") } else { self.reads.ink(&own) };
        let Some(fill) = ink else { return true };
        let filled = fill.3 >= FAINT;
        // Rare: glyphs with a transparent fill show only a background clipped to them, or
        // their outline.
        let painted = !filled && !drawing && self.painted_through();
        let outline = if filled || painted { Vec::new() } else { outline_inks(&own, drawing) };
        if !filled && !painted && outline.is_empty() {
            return false;
        }
        if (point || tiny || self.reads.text_indent(&own) < 0.0) && contents_out_of_sight(&el) {
            return false;
        }
        self.stack[top].backdrop = Some(self.backdrop(&el, rect, &own));
        // Any clipped layer hides the text; the nearest opaque colour is what it is read on;
        // the layers' opacities multiply.
        let mut coloured = None;
        let mut alpha = match (painted, filled) {
            (true, _) => 1.0,
            (false, true) => fill.3,
            (false, false) => outline.iter().map(|c| c.3).fold(0.0, f64::max),
        };
        for i in (0..self.stack.len()).rev() {
            let b = match self.stack[i].backdrop {
                Some(b) => b,
                None => {
                    let (layer, at) = (self.stack[i].el.clone(), self.stack[i].rect);
                    let b = self.layer_style(i).map_or(CLEAR, |s| self.backdrop(&layer, at, &s));
                    self.stack[i].backdrop = Some(b);
                    b
                }
            };
            if b.clipped {
                return false;
            }
            alpha *= b.opacity;
            if coloured.is_none() && b.colour.is_some() {
                coloured = Some(i);
            }
        }
        if self.cut_by_overflow() {
            return false;
        }
        let outer = match self.outer {
            Some(o) => o,
            None => {
                let o = self.stack.first().map_or(CLEAR, |l| outer_backdrop(&l.el));
                self.outer = Some(o);
                o
            }
        };
        if outer.clipped || alpha * outer.opacity < FAINT {
            return false;
        }
        if painted {
            return true;
        }
        let background = match coloured {
            Some(i) => self.stack[i].backdrop.and_then(|b| b.colour),
            None if outer.image => return true,
            None => outer.colour,
        };
        let Some(bg) = background else { return true };
        let differs = |c: &Rgba| !same_colour(*c, bg);
        if (filled && differs(&fill)) || outline.iter().any(differs) {
            return true;
        }
        // The same colour as the background: an outline (read only now) or a background image
        // on that layer or nearer the text shows it after all. Both rare: read only now.
        if filled && outline_inks(&own, drawing).iter().any(differs) {
            return true;
        }
        // In a drawing, a shape drawn under the text may show it (white labels on coloured
        // bars); looked for only now, as it reads the drawing's shapes.
        if drawing {
            let mut inks = outline_inks(&own, true);
            inks.extend(Some(fill).filter(|_| filled));
            if let Some(shown) = self.shown_by_a_shape(&el, rect, &inks) {
                return shown;
            }
        }
        let nearest = coloured.unwrap_or(0);
        (nearest..self.stack.len()).rev().any(|i| {
            let layer = self.stack[i].el.clone();
            self.style(&layer).is_some_and(|s| has_image(&s))
        })
    }

    /// Whether a shape drawn under the text of `el`, a drawing's `<text>` whose box is `rect`,
    /// shows its glyphs (`inks`: their fill and outline): at the middle of its box, the topmost
    /// shape drawn before it ([`drawing::Shapes`], read once per drawing) decides, one that
    /// paints nothing there is looked through; a shape whose box alone is known to hold the
    /// point shows the text if its colour differs, and is looked through if not. Unknown paint
    /// (a gradient, partly transparent, too many shapes to read) shows it. Asked only of text the
    /// colour of the page behind the drawing: `None` when no shape lies under it.
    fn shown_by_a_shape(&mut self, el: &Element, rect: Option<Rect>, inks: &[Rgba]) -> Option<bool> {
        let rect = rect?;
        // The drawing: the outermost `<svg>` the walk is in, or, for a walk that starts inside
        // one (`read_text` of a selector), the nearest around it.
        let first = self.stack.iter().find(|l| l.drawing)?.el.clone();
        let svg = if dom::tag(&first) == "svg" { first } else { first.closest("svg").ok().flatten()? };
        if !self.shapes.as_ref().is_some_and(|s| s.of_drawing(&svg)) {
            let views = self.views.last().map(|(v, _)| v.clone());
            self.shapes = Some(drawing::Shapes::of(&svg, |e| match &views {
                Some(view) => view.get_computed_style(e).ok().flatten(),
                None => style(e),
            }));
        }
        let (x, y) = covered::points(rect)[0];
        let Some(under) = self.shapes.as_ref().and_then(|s| s.under(el, x, y)) else { return Some(true) };
        for shape in under {
            let Some(fill) = shape.fill.filter(|f| f.3 < FAINT || f.3 >= covered::SOLID) else {
                return Some(true);
            };
            if fill.3 < FAINT {
                continue;
            }
            let shows = inks.iter().any(|c| !same_colour(*c, fill));
            if shape.exact || shows {
                return Some(shows);
            }
        }
        None
    }

    /// Whether the innermost element or a layer around it has a background clipped to its
    /// text (`background-clip: text`) that paints the glyphs: an image, or a colour.
    fn painted_through(&self) -> bool {
        self.stack.iter().rev().any(|layer| {
            self.style(&layer.el).is_some_and(|s| {
                let clip = |p: &str| prop(&s, p).is_some_and(|c| c.contains("text"));
                (clip("background-clip") || clip("-webkit-background-clip"))
                    && (has_image(&s)
                        || prop(&s, "background-color")
                            .and_then(|c| parse_colour(&c))
                            .is_some_and(|c| c.3 > 0.0))
            })
        })
    }

    /// What a layer of the walk, whose box is `at`, puts behind its text (its background image
    /// is read only when needed, in [`Layers::judge`]).
    fn backdrop(&mut self, el: &Element, at: Option<Rect>, style: &CssStyleDeclaration) -> Backdrop {
        let colour = self.reads.background(style);
        let clipped = self.reads.has_clip_path(style) && clipped_away(el, style);
        let opacity = self.reads.opacity(style);
        let axes = self.reads.overflow(style);
        let window = match at {
            Some(at) if axes.iter().any(|a| a.clips()) => overflow::window(axes, at, style),
            _ => [None; 2],
        };
        let scrolls = axes.map(|a| a == Axis::Scroll);
        Backdrop { colour, image: false, clipped, opacity, window, scrolls }
    }

    /// Whether a layer around the innermost element hides its overflow and holds the element's
    /// box wholly outside what it lets show ([`overflow`], [`Layers::cuts`]). A box between
    /// them that a person scrolls brings what it holds into view: past it, on each axis it
    /// scrolls, its own box is what is compared. When none does, notes the rows such boxes
    /// (the element's own too: it hides its own text's overflow) let show where the element's
    /// box reaches beyond them, up to the first box that scrolls vertically ([`Layer::rows`]).
    fn cut_by_overflow(&mut self) -> bool {
        let top = self.stack.len() - 1;
        let Some(mut r) = self.stack[top].rect else { return false };
        let mut rows: Option<(f64, f64)> = None;
        let mut scrolled = false;
        for i in (0..=top).rev() {
            let Some(b) = self.stack[i].backdrop else { continue };
            let outside = overflow::outside(r, b.window);
            // The element's own box holds its lines unless they overflow it (read only then).
            let beyond = b.window[1].filter(|&(from, to)| match i == top {
                true => {
                    let el = &self.stack[top].el;
                    el.scroll_height() > el.client_height()
                }
                false => !scrolled && (r.top < from || r.top + r.height > to),
            });
            if (outside || beyond.is_some()) && self.cuts(i) {
                if outside {
                    return true;
                }
                if let Some((from, to)) = beyond {
                    rows = Some(rows.map_or((from, to), |(a, b)| (a.max(from), b.min(to))));
                }
            }
            if let Some(at) = self.stack[i].rect.filter(|_| i < top) {
                if b.scrolls[0] {
                    (r.left, r.width) = (at.left, at.width);
                }
                if b.scrolls[1] {
                    (r.top, r.height) = (at.top, at.height);
                    scrolled = true;
                }
            }
        }
        self.stack[top].rows = rows;
        false
    }

    /// Whether the layer at `i`, which hides its overflow, cuts what the innermost element
    /// holds: a box `overflow` applies to, whose overflow is its own and not the viewport's
    /// ([`overflow::propagated`]), in the same document, and with nothing on the way from the
    /// element up to it positioned `absolute` or `fixed`.
    fn cuts(&mut self, i: usize) -> bool {
        let top = self.stack.len() - 1;
        let (around, el) = (self.stack[i].el.clone(), self.stack[top].el.clone());
        if around.owner_document() != el.owner_document() || overflow::propagated(&around) {
            return false;
        }
        // `overflow` applies to block, flex and grid containers: not an inline or a table row;
        // and to a drawing's viewport (an `<svg>`), inline or not.
        let display = self.layer_style(i).and_then(|s| prop(&s, "display")).unwrap_or_default();
        let viewport = self.stack[i].drawing && dom::tag(&around) == "svg";
        (viewport || overflow::applies(&display)) && !(i + 1..=top).any(|j| self.place(j).escapes)
    }
}

impl covered::Paint for Layers {
    fn style_of(&mut self, el: &Element) -> Option<CssStyleDeclaration> {
        match self.stack.last() {
            Some(Layer { el: last, style: Some(style), .. }) if last == el => Some(style.clone()),
            _ => self.style(el),
        }
    }

    fn drawn_style_of(&mut self, el: &Element, pseudo: &str) -> Option<CssStyleDeclaration> {
        let style = match self.views.last() {
            Some((view, _)) => view.get_computed_style_with_pseudo_elt(el, pseudo),
            None => el.owner_document()?.default_view()?.get_computed_style_with_pseudo_elt(el, pseudo),
        };
        style.ok().flatten().filter(|s| self.reads.generated(s))
    }

    fn positioned(&mut self, style: &CssStyleDeclaration) -> bool {
        self.reads.positioned(style)
    }

    fn opaque(&mut self, style: &CssStyleDeclaration) -> bool {
        self.reads.background(style).is_some()
    }

    fn filled(&mut self, el: &Element, style: &CssStyleDeclaration) -> bool {
        drawing::is_shape(el)
            && drawing::paint(style, "fill", "fill-opacity").is_some_and(|c| c.3 >= covered::SOLID)
    }

    fn layer_opacity(&mut self, style: &CssStyleDeclaration) -> f64 {
        self.reads.opacity(style)
    }

    fn lifted(&mut self, style: &CssStyleDeclaration) -> Option<bool> {
        let opacity = self.reads.opacity(style);
        stacking::lifted(style, opacity)
    }
}

const WHITE: Rgba = Rgba(255.0, 255.0, 255.0, 1.0);
const CLEAR: Backdrop = Backdrop {
    colour: None,
    image: false,
    clipped: false,
    opacity: 1.0,
    window: [None; 2],
    scrolls: [false; 2],
};
/// Below this much of its colour left (alpha times opacities), text is not seen.
const FAINT: f64 = 0.05;
/// Type set smaller than this (px) is read only where it is drawn taller than this: a 3 px font
/// draws lines 4 px tall, which are a line of dots to a person.
const UNREADABLE: f64 = 4.0;

/// The colours an outline draws the glyphs in: the text stroke when it has a width, and each
/// text shadow (in a drawing, `stroke` when it has a width); those not (nearly) transparent.
/// Read only when the fill alone would hide them.
fn outline_inks(style: &CssStyleDeclaration, drawing: bool) -> Vec<Rgba> {
    let mut inks = Vec::new();
    if drawing {
        let width = drawing::stroke_width(style);
        inks.extend(drawing::paint(style, "stroke", "stroke-opacity").filter(|_| width > 0.0));
        inks.retain(|c| c.3 >= FAINT);
        return inks;
    }
    let stroke = prop(style, "-webkit-text-stroke-width").and_then(|w| dom::px(&w)).unwrap_or(0.0);
    if stroke > 0.0 {
        inks.extend(prop(style, "-webkit-text-stroke-color").and_then(|c| parse_colour(&c)));
    }
    if let Some(shadows) = prop(style, "text-shadow") {
        inks.extend(colours_in(&shadows));
    }
    inks.retain(|c| c.3 >= FAINT);
    inks
}

/// What makes a layer's opacity, each a computed property and what it leaves of the layer's
/// contents (1 when unreadable): `opacity`, the `opacity()` of `filter`, what the mask lets
/// through. A layer leaves their product.
const LAYER: [Factor; 3] = [("opacity", opacity), ("filter", filter_opacity), ("mask-image", mask_opacity)];

/// A computed property and how to read what it leaves of a layer.
type Factor = (&'static str, fn(&str) -> f64);

/// Whether a computed `font-family` draws its text as icons: its first family is one of
/// Google's ligature icon fonts (`Material Icons`, `Material Icons Outlined`, `Material Symbols
/// Rounded`, ...), which turn an icon's name (`arrow_drop_down`, `send`) into its glyph.
pub fn icon_font(family: &str) -> bool {
    let first = family.split(',').next().unwrap_or_default().trim().trim_matches(['"', '\'']);
    let lower = first.to_ascii_lowercase();
    lower.starts_with("material icons") || lower.starts_with("material symbols")
}

/// A background colour that hides what is behind it (alpha at least 95 %); `None` otherwise.
fn opaque_colour(colour: &str) -> Option<Rgba> {
    parse_colour(colour).filter(|c| c.3 >= 0.95)
}

/// What the `opacity()` functions of a computed `filter` leave of a layer (1 for `none`): a
/// number or a percentage each, multiplied.
pub fn filter_opacity(filter: &str) -> f64 {
    let mut left = 1.0;
    let mut rest = filter;
    while let Some(start) = rest.find("opacity(") {
        let args = &rest[start + "opacity(".len()..];
        let Some(end) = args.find(')') else { break };
        let v = args[..end].trim();
        let amount = match v.strip_suffix('%') {
            Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
            None => v.parse::<f64>(),
        };
        left *= amount.unwrap_or(1.0).clamp(0.0, 1.0);
        rest = &args[end + 1..];
    }
    left
}

/// What a computed `mask-image` lets through at most: for a mask made of gradients only, the
/// highest alpha among their colours (0 for `linear-gradient(transparent, transparent)`); 1
/// for no mask, an image, or anything else (not judged).
pub fn mask_opacity(mask: &str) -> f64 {
    let images = ["url(", "image(", "image-set(", "cross-fade(", "element(", "paint(", "none"];
    if !mask.contains("gradient(") || images.iter().any(|i| mask.contains(i)) {
        return 1.0;
    }
    let colours = colours_in(mask);
    if colours.is_empty() { 1.0 } else { colours.iter().map(|c| c.3).fold(0.0, f64::max) }
}

/// Whether the box of everything `el` holds is a point, is drawn [`UNREADABLE`] px tall or less,
/// or lies left of or above the page where nobody can scroll: text moved out by a negative
/// indent, scaled to nothing, or set in a type too small to read (a 1 px font; a small font a
/// transform enlarges stays).
fn contents_out_of_sight(el: &Element) -> bool {
    let Some(doc) = el.owner_document() else { return false };
    let Ok(range) = doc.create_range() else { return false };
    if range.select_node_contents(el).is_err() {
        return false;
    }
    let r = range.get_bounding_client_rect();
    let (right, bottom, width, height) = (r.right(), r.bottom(), r.width(), r.height());
    let view = doc.default_view();
    let (x, y) = view.map_or((0.0, 0.0), |v| (v.scroll_x().unwrap_or(0.0), v.scroll_y().unwrap_or(0.0)));
    (width <= 1.0 && height <= 1.0) || height <= UNREADABLE || right + x <= 0.0 || bottom + y <= 0.0
}

/// The boxes of the lines of `el`'s own text (its text nodes, not its children's), in its
/// document's viewport.
fn text_lines(el: &Element) -> Vec<Rect> {
    let Some(doc) = el.owner_document() else { return Vec::new() };
    let Ok(range) = doc.create_range() else { return Vec::new() };
    let mut lines = Vec::new();
    let mut next = el.first_child();
    while let Some(node) = next {
        if node.node_type() == web_sys::Node::TEXT_NODE
            && node.text_content().is_some_and(|t| !t.trim().is_empty())
            && range.select_node_contents(&node).is_ok()
            && let Some(rects) = range.get_client_rects()
        {
            lines.extend((0..rects.length()).filter_map(|i| rects.get(i)).map(|r| Rect::of(&r)));
        }
        next = node.next_sibling();
    }
    lines.retain(|r| r.width > 0.0 && r.height > 0.0);
    lines
}

fn style(el: &Element) -> Option<CssStyleDeclaration> {
    el.owner_document()?.default_view()?.get_computed_style(el).ok().flatten()
}

fn prop(style: &CssStyleDeclaration, name: &str) -> Option<String> {
    style.get_property_value(name).ok()
}

/// What an ancestor of the walk's root puts behind the text, background image included (the
/// walk's own layers read theirs only when needed: [`Layers::backdrop`]).
fn backdrop_of(el: &Element, style: &CssStyleDeclaration) -> Backdrop {
    let colour = prop(style, "background-color").and_then(|c| opaque_colour(&c));
    let image = has_image(style);
    let clipped = clipped_away(el, style);
    let opacity = LAYER.iter().map(|(name, parse)| prop(style, name).map_or(1.0, |v| parse(&v))).product();
    Backdrop { colour, image, clipped, opacity, window: [None; 2], scrolls: [false; 2] }
}

/// Whether `el`'s `clip-path` leaves nothing of its box.
fn clipped_away(el: &Element, style: &CssStyleDeclaration) -> bool {
    prop(style, "clip-path").is_some_and(|c| {
        c != "none" && !c.is_empty() && {
            let r = el.get_bounding_client_rect();
            clips_away(&c, r.width(), r.height())
        }
    })
}

fn has_image(style: &CssStyleDeclaration) -> bool {
    prop(style, "background-image").is_some_and(|i| i != "none" && !i.is_empty())
}

/// The backdrop of the walk root's ancestors: the nearest opaque background, any clipping.
/// With no background anywhere the canvas shows: white unless the page asks for a dark colour
/// scheme, which leaves the colour unknown (counted as an image: text is seen).
fn outer_backdrop(root: &Element) -> Backdrop {
    let mut out = CLEAR;
    let mut next = root.parent_element();
    while let Some(el) = next {
        if let Some(s) = style(&el) {
            let b = backdrop_of(&el, &s);
            out.clipped |= b.clipped;
            out.opacity *= b.opacity;
            if out.colour.is_none() && !out.image && (b.image || b.colour.is_some()) {
                out.colour = b.colour;
                out.image = b.image;
            }
        }
        next = el.parent_element();
    }
    if out.colour.is_none() && !out.image {
        let html = root.owner_document().and_then(|d| d.document_element());
        let scheme = html.and_then(|h| style(&h)).and_then(|s| prop(&s, "color-scheme")).unwrap_or_default();
        if scheme.contains("dark") {
            out.image = true;
        } else {
            out.colour = Some(WHITE);
        }
    }
    out
}

/// Whether a computed `clip-path` leaves nothing of a `width` x `height` box: `inset()` whose
/// opposite sides meet, or a `circle()` / `ellipse()` of radius 0.
pub fn clips_away(clip_path: &str, width: f64, height: f64) -> bool {
    let c = clip_path.trim();
    if let Some(args) = c.strip_prefix("circle(").or_else(|| c.strip_prefix("ellipse(")) {
        let radii: Vec<&str> = args.split(" at ").next().unwrap_or_default().split_whitespace().collect();
        return !radii.is_empty()
            && radii
                .iter()
                .any(|r| length(r.trim_end_matches(')'), width.max(height)).is_some_and(|v| v <= 0.0));
    }
    if let Some(args) = c.strip_prefix("polygon(") {
        return polygon_of_no_area(args.trim_end_matches(')'), width, height);
    }
    let Some(args) = c.strip_prefix("inset(").and_then(|a| a.split(" round ").next()) else { return false };
    let v: Vec<&str> = args.trim_end_matches(')').split_whitespace().collect();
    let (top, right, bottom, left) = match v[..] {
        [a] => (a, a, a, a),
        [a, b] => (a, b, a, b),
        [a, b, c] => (a, b, c, b),
        [a, b, c, d] => (a, b, c, d),
        _ => return false,
    };
    let (Some(t), Some(b)) = (length(top, height), length(bottom, height)) else { return false };
    let (Some(l), Some(r)) = (length(left, width), length(right, width)) else { return false };
    t + b >= height || l + r >= width
}

/// Whether the points of a computed `polygon()` (`[fill rule,] x y, x y, ...`) all lie within
/// 1 px of one line: a polygon with no room inside shows nothing. Any other polygon, or one
/// whose points are not plain lengths (`calc()`), is not judged.
fn polygon_of_no_area(args: &str, width: f64, height: f64) -> bool {
    let mut points = Vec::new();
    for part in args.split(',').map(str::trim) {
        if matches!(part, "nonzero" | "evenodd") {
            continue;
        }
        let xy: Vec<&str> = part.split_whitespace().collect();
        let [x, y] = xy[..] else { return false };
        let (Some(x), Some(y)) = (length(x, width), length(y, height)) else { return false };
        points.push((x, y));
    }
    let Some(&(x0, y0)) = points.first() else { return false };
    // The line through the first point and the point farthest from it.
    let Some((dx, dy)) = points
        .iter()
        .map(|&(x, y)| (x - x0, y - y0))
        .max_by(|a, b| a.0.hypot(a.1).total_cmp(&b.0.hypot(b.1)))
    else {
        return false;
    };
    let span = dx.hypot(dy);
    span <= 1.0 || points.iter().all(|&(x, y)| ((x - x0) * dy - (y - y0) * dx).abs() / span <= 1.0)
}

/// A length in px, or a percentage of `of`.
fn length(v: &str, of: f64) -> Option<f64> {
    if let Some(p) = v.strip_suffix('%') {
        return p.parse::<f64>().ok().map(|p| p / 100.0 * of);
    }
    v.strip_suffix("px").unwrap_or(v).parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_ligature_icon_font_drawn_first_draws_icons() {
        assert!(icon_font("\"Material Icons\""));
        assert!(icon_font("\"Material Symbols Rounded\", sans-serif"));
        assert!(icon_font("'Material Icons Outlined'"));
        assert!(!icon_font("Roboto, \"Material Icons\""));
        assert!(!icon_font("\"Material Design Icons\""));
        assert!(!icon_font("system-ui, sans-serif"));
        assert!(!icon_font(""));
    }

    #[test]
    fn a_polygon_clips_away_only_when_it_has_no_room_inside() {
        assert!(clips_away("polygon(0px 0px, 0px 0px, 0px 0px)", 200.0, 20.0));
        assert!(clips_away("polygon(0% 50%, 100% 50%, 50% 50%)", 200.0, 20.0));
        assert!(clips_away("polygon(evenodd, 0px 0px, 100px 100px, 50px 50.5px)", 200.0, 20.0));
        assert!(!clips_away("polygon(0% 0%, 100% 0%, 100% 100%, 0% 100%)", 200.0, 20.0));
        assert!(!clips_away("polygon(0px 0px, 100px 0px, 50px 3px)", 200.0, 20.0));
        // A bow tie: its signed areas cancel, but it shows two triangles.
        assert!(!clips_away("polygon(0px 0px, 100px 20px, 100px 0px, 0px 20px)", 200.0, 20.0));
        assert!(!clips_away("polygon(calc(50% + 1px) 0px, 0px 0px, 0px 0px)", 200.0, 20.0));
    }

    #[test]
    fn what_a_mask_lets_through() {
        assert_eq!(mask_opacity("none"), 1.0);
        assert_eq!(mask_opacity("linear-gradient(rgba(0, 0, 0, 0), rgba(0, 0, 0, 0))"), 0.0);
        assert_eq!(mask_opacity("linear-gradient(rgb(0, 0, 0), rgba(0, 0, 0, 0))"), 1.0);
        assert_eq!(
            mask_opacity(
                "radial-gradient(rgba(0, 0, 0, 0.02) 0%, rgba(0, 0, 0, 0) 100%), linear-gradient(rgba(0, 0, 0, 0), rgba(0, 0, 0, 0))"
            ),
            0.02
        );
        assert_eq!(
            mask_opacity("url(\"mask.svg\"), linear-gradient(rgba(0, 0, 0, 0), rgba(0, 0, 0, 0))"),
            1.0
        );
    }

    #[test]
    fn what_a_filter_leaves() {
        assert_eq!(filter_opacity("none"), 1.0);
        assert_eq!(filter_opacity("opacity(0)"), 0.0);
        assert_eq!(filter_opacity("blur(2px) opacity(0.5) opacity(50%)"), 0.25);
        assert_eq!(filter_opacity("opacity(3)"), 1.0);
        assert_eq!(filter_opacity("opacity(0.5"), 1.0);
    }

    #[test]
    fn every_colour_of_a_shadow_list() {
        let shadows = "rgb(0, 0, 0) 0px 0px 2px, rgba(51, 51, 51, 0.5) 1px 1px 0px";
        assert_eq!(colours_in(shadows), vec![Rgba(0.0, 0.0, 0.0, 1.0), Rgba(51.0, 51.0, 51.0, 0.5)]);
        assert_eq!(colours_in("none"), vec![]);
        assert_eq!(colours_in("rgb(1, 2"), vec![]);
    }

    #[test]
    fn clip_paths_that_leave_nothing() {
        assert!(clips_away("inset(50%)", 100.0, 20.0));
        assert!(clips_away("inset(0px 0px 100% 0px)", 100.0, 20.0));
        assert!(clips_away("inset(10px 60px 10px 60px)", 100.0, 40.0));
        assert!(clips_away("circle(0px at 50% 50%)", 100.0, 20.0));
        assert!(clips_away("ellipse(0px 0px at 50% 50%)", 100.0, 20.0));
        assert!(!clips_away("inset(10%)", 100.0, 20.0));
        assert!(!clips_away("circle(40% at 50% 50%)", 100.0, 20.0));
        assert!(!clips_away("none", 100.0, 20.0));
        assert!(!clips_away("url(\"#shape\")", 100.0, 20.0));
    }
}
