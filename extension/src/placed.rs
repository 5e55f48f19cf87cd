//! Boxes a page renders where nobody sees them: placed off the page (`left: -9999px` and the
//! like), or given no room while hiding their overflow (the screen-reader-only pattern, a
//! collapsed panel). The page walk skips them ([`crate::perceive`]); the first-screen wait
//! does not count them as something the page shows ([`crate::drawn`]). A box of no room that
//! hides its overflow and holds nothing that overflows it is not skipped: what it holds is
//! placed by a box further out (JupyterLab's toasts, fixed to the viewport in a portal of no
//! height that hides its overflow), and shows.
//!
//! A box before the page's start only because a box around it that scrolls has scrolled it
//! there (the earlier messages of a chat whose pane is scrolled to its end) is a scroll away,
//! not placed off the page: where it starts is judged with the scrolls of the boxes around it
//! undone. Those are read only for a box found before the page's start.

use web_sys::Element;

use crate::covered::Rect;
use crate::dom;

/// How far the page is scrolled (x, y), px.
pub fn scroll() -> (f64, f64) {
    crate::dom::window()
        .map(|w| (w.scroll_x().unwrap_or(0.0), w.scroll_y().unwrap_or(0.0)))
        .unwrap_or((0.0, 0.0))
}

/// Whether `el`, whose box in the viewport is `r` while the page is scrolled by `scroll`, is
/// placed where nobody sees it. `around`: how far the boxes around `el` have scrolled what
/// they hold ([`scrolled_around`]), asked only for a box before the page's start.
/// `flat_counts`: whether a box with no room that hides its overflow counts (not for a `<br>`,
/// which has no room and shows a line break).
pub fn away(
    el: &Element,
    r: &Rect,
    scroll: (f64, f64),
    around: impl FnOnce() -> (f64, f64),
    flat_counts: bool,
) -> bool {
    let before = |by: (f64, f64)| {
        off_the_page(r.left + scroll.0 + by.0, r.width) || off_the_page(r.top + scroll.1 + by.1, r.height)
    };
    if before((0.0, 0.0)) && before(around()) {
        return true;
    }
    flat_counts && (r.width <= 1.0 || r.height <= 1.0) && clips(el)
}

/// How far `el` has scrolled what it holds (x, y), px; none for its document's scrolling
/// element, whose scroll is the page's ([`scroll`]). A box scrolled right to left counts
/// negative, so adding it undoes the scroll either way.
pub fn own_scroll(el: &Element) -> (f64, f64) {
    let by = (f64::from(el.scroll_left()), f64::from(el.scroll_top()));
    if by == (0.0, 0.0) {
        return by;
    }
    let page = el.owner_document().and_then(|d| d.scrolling_element());
    if page.as_ref() == Some(el) { (0.0, 0.0) } else { by }
}

/// How far the boxes around `el` (its ancestors in its document, through the hosts of shadow
/// roots) have scrolled what they hold, added up ([`own_scroll`]).
pub fn scrolled_around(el: &Element) -> (f64, f64) {
    let mut by = (0.0, 0.0);
    let mut next = dom::around(el);
    while let Some(a) = next {
        let own = own_scroll(&a);
        by = (by.0 + own.0, by.1 + own.1);
        next = dom::around(&a);
    }
    by
}

/// Whether a box that starts at `start` on the page, `size` long, lies wholly before the page's
/// start on that axis. A box of no size at the very start is on the page: an application's root
/// whose content is all positioned (`position: fixed` or `absolute`) has no height of its own.
fn off_the_page(start: f64, size: f64) -> bool {
    start < 0.0 && start + size <= 0.0
}

/// Whether a box cuts what it holds: it has a `clip`, or it hides what overflows it
/// (`overflow` other than visible, unless it is the viewport's
/// ([`crate::overflow::propagated`])) and something does. What a box further out places (a
/// layer fixed to the viewport, or placed absolutely in a box outside it) is not its overflow.
fn clips(el: &Element) -> bool {
    let clip = crate::dom::computed(el, "clip").unwrap_or_default();
    if !clip.is_empty() && clip != "auto" {
        return true;
    }
    let overflow = crate::overflow::parse(&crate::dom::computed(el, "overflow").unwrap_or_default());
    overflow.iter().any(|a| a.clips())
        && !crate::overflow::propagated(el)
        && (el.scroll_height() > el.client_height() || el.scroll_width() > el.client_width())
}
