//! The part of a text node that a box hiding its overflow lets show (docs/perceive.md, "What a
//! person sees"): a paragraph in a one-line window, or clamped to its first line, shows that
//! line; the lines it wraps or breaks onto below are cut away from a person as surely as a
//! paragraph pushed wholly below the window ([`crate::overflow`]), and so is a line scrolled up
//! out of it.
//!
//! Only whole lines are cut, and only on the vertical axis: a line the window cuts in part (a
//! title ending in an ellipsis) shows its start, and is kept whole. Lines follow the text's
//! order, so what shows is one run of it: found by halving, with the box of a `Range` over the
//! text before or after a place (the union of its characters' boxes, white space that draws
//! nothing left out): the whole text's box first, then a search only on a side where it reaches
//! beyond the window, each probe moving one end of the range and reading one edge of its box.

use std::ops::Range;

use web_sys::Node;

/// The part of `text`, the data of the text node `node`, drawn on lines that reach into `rows`
/// (the top and bottom of the window, px in its document's viewport), as a range of `text`'s
/// bytes with white space at either end left out; `None` when no line does. A line whose
/// characters' boxes lie wholly above or below the window is cut; a range the browser cannot
/// measure keeps the text.
pub fn part(node: &Node, text: &str, rows: (f64, f64)) -> Option<Range<usize>> {
    let (from, to) = rows;
    // Where each character starts, in UTF-16 units (a range's offsets) and in bytes, then the
    // end: listed only for text that is not all ASCII (where the three places agree).
    let ascii = text.is_ascii();
    let mut starts: Vec<(u32, usize)> = Vec::new();
    if !ascii {
        let mut unit = 0u32;
        for (byte, c) in text.char_indices() {
            starts.push((unit, byte));
            unit += c.len_utf16() as u32;
        }
        starts.push((unit, text.len()));
    }
    let at = |k: usize| if ascii { (k as u32, k) } else { starts[k] };
    let count = if ascii { text.len() } else { starts.len() - 1 };
    let first = text.chars().position(|c| !c.is_whitespace())?;
    let last = count - text.chars().rev().position(|c| !c.is_whitespace())?;
    let whole = first..last;
    let kept = Some(at(first).1..at(last).1);
    let Some(range) = node.owner_document().and_then(|d| d.create_range().ok()) else { return kept };
    if range.set_start(node, at(first).0).is_err() || range.set_end(node, at(last).0).is_err() {
        return kept;
    }
    // The whole text first: a search is needed only on a side where it reaches beyond the rows.
    let all = range.get_bounding_client_rect();
    let (top, bottom) = (all.top(), all.bottom());
    if all.width() <= 0.0 && all.height() <= 0.0 {
        return kept;
    }
    // The characters before `start` lie on lines wholly above the window, those from `end` on
    // wholly below it. Each probe moves one end of the range (the other stays put) and reads
    // one edge of its box: the text from `first` up to a place, or from a place to `last`,
    // never empty, so its box is its characters'.
    let start = match top < from {
        true => last_where(whole.clone(), |k| {
            range.set_end(node, at(k).0).is_ok() && range.get_bounding_client_rect().bottom() <= from
        }),
        false => first,
    };
    let end = match bottom > to {
        true => {
            let _ = range.set_start(node, at(first).0);
            if range.set_end(node, at(last).0).is_err() {
                return kept;
            }
            first_where(whole, |k| {
                range.set_start(node, at(k).0).is_ok() && range.get_bounding_client_rect().top() >= to
            })
        }
        false => last,
    };
    (start < end).then(|| at(start).1..at(end).1)
}

/// The last `k` in `range` (both ends included) where `holds` is true, when it is true up to
/// some place and false after it, and true at the start.
fn last_where(range: Range<usize>, holds: impl Fn(usize) -> bool) -> usize {
    let (mut yes, mut no) = (range.start, range.end + 1);
    while no - yes > 1 {
        let mid = yes + (no - yes) / 2;
        if holds(mid) {
            yes = mid;
        } else {
            no = mid;
        }
    }
    yes
}

/// The first `k` in `range` (both ends included) where `holds` is true, when it is false up to
/// some place and true after it, and true at the end.
fn first_where(range: Range<usize>, holds: impl Fn(usize) -> bool) -> usize {
    let (mut no, mut yes) = (range.start as isize - 1, range.end as isize);
    while yes - no > 1 {
        let mid = no + (yes - no) / 2;
        if holds(mid as usize) {
            yes = mid;
        } else {
            no = mid;
        }
    }
    yes as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_finds_the_edge_of_a_run() {
        for edge in 0..=10 {
            assert_eq!(last_where(0..10, |k| k <= edge), edge.min(10));
            assert_eq!(first_where(0..10, |k| k >= edge), edge);
        }
        assert_eq!(last_where(3..7, |_| true), 7);
        assert_eq!(first_where(3..7, |_| true), 3);
        assert_eq!(last_where(3..7, |k| k == 3), 3);
        assert_eq!(first_where(3..7, |k| k == 7), 7);
    }
}
