//! Boxes a page renders where nobody sees them: placed off the page (`left: -9999px` and the
//! like), or given no room while hiding their overflow (the screen-reader-only pattern, a
//! collapsed panel). The page walk skips them ([`crate::perceive`]); the first-screen wait
//! does not count them as something the page shows ([`crate::drawn`]).

use web_sys::Element;

use crate::covered::Rect;

/// How far the page is scrolled (x, y), px.
pub fn scroll() -> (f64, f64) {
    crate::dom::window()
        .map(|w| (w.scroll_x().unwrap_or(0.0), w.scroll_y().unwrap_or(0.0)))
        .unwrap_or((0.0, 0.0))
}

/// Whether `el`, whose box in the viewport is `r` while the page is scrolled by `scroll`, is
/// placed where nobody sees it. `flat_counts`: whether a box with no room that hides its
/// overflow counts (not for a `<br>`, which has no room and shows a line break).
pub fn away(el: &Element, r: &Rect, scroll: (f64, f64), flat_counts: bool) -> bool {
    if off_the_page(r.left + scroll.0, r.width) || off_the_page(r.top + scroll.1, r.height) {
        return true;
    }
    flat_counts && (r.width <= 1.0 || r.height <= 1.0) && clips(el)
}

/// Whether a box that starts at `start` on the page, `size` long, lies wholly before the page's
/// start on that axis. A box of no size at the very start is on the page: an application's root
/// whose content is all positioned (`position: fixed` or `absolute`) has no height of its own.
fn off_the_page(start: f64, size: f64) -> bool {
    start < 0.0 && start + size <= 0.0
}

/// Whether a box hides what overflows it (`overflow` other than visible, or a `clip`).
fn clips(el: &Element) -> bool {
    let overflow = crate::overflow::parse(&crate::dom::computed(el, "overflow").unwrap_or_default());
    let clip = crate::dom::computed(el, "clip").unwrap_or_default();
    overflow.iter().any(|a| a.clips()) || (!clip.is_empty() && clip != "auto")
}
