//! Whether a text node's words go on the word the text before it ended with: a code editor
//! colours each token in an element of its own (`sum` `(` `range` `(`), and a word split
//! across inline elements (`<b>bold</b>ly`) is one word a person reads. The walk reads each
//! text node's words apart ([`crate::perceive`]); a text that starts inside a word, after one
//! that ended inside a word, is joined to it when the two are drawn touching: the last
//! character of the one and the first of the other on the same line, less than a sixth of the
//! line's height apart. A space, a margin, padding, a flex gap or a line break between them
//! keeps them apart, as React's menus of links with nothing between them are drawn apart. A
//! text node of white space alone between them keeps them apart without measuring (the walk
//! forgets the open end: a paragraph's link after a space is the common case), and so does the
//! edge of a table cell, a button, a form control or an image (the walk's boxed tags).

use web_sys::{DomRect, Node};

/// A text node whose shown text ends inside a word (no white space after its last character).
pub struct End {
    node: Node,
    /// Where its last character starts and ends, in UTF-16 units (a range's offsets).
    last: (u32, u32),
}

impl End {
    /// The end of `text`, the data of `node`, when the walk read it to its end and it ends
    /// inside a word.
    pub fn of(node: &Node, text: &str, read_to: usize) -> Option<Self> {
        let c = text.chars().next_back().filter(|c| !c.is_whitespace() && read_to == text.len())?;
        let end = if text.is_ascii() { text.len() as u32 } else { text.encode_utf16().count() as u32 };
        Some(Self { node: node.clone(), last: (end - c.len_utf16() as u32, end) })
    }

    /// Whether `text`, the data of `node`, read from its start, goes on this end's word: it
    /// starts inside a word and its first character is drawn touching this end's last.
    pub fn goes_on(&self, node: &Node, text: &str, read_from: usize) -> bool {
        let Some(c) = text.chars().next().filter(|c| !c.is_whitespace() && read_from == 0) else {
            return false;
        };
        match (box_of(&self.node, self.last), box_of(node, (0, c.len_utf16() as u32))) {
            (Some(a), Some(b)) => touching(&a, &b),
            _ => false,
        }
    }
}

/// The box of the characters of `node` between two UTF-16 offsets; none when it cannot be
/// measured or draws nothing.
fn box_of(node: &Node, (from, to): (u32, u32)) -> Option<DomRect> {
    let range = node.owner_document()?.create_range().ok()?;
    range.set_start(node, from).ok()?;
    range.set_end(node, to).ok()?;
    let r = range.get_bounding_client_rect();
    (r.width() > 0.0 && r.height() > 0.0).then_some(r)
}

/// Whether two characters' boxes sit side by side on one line with no room between them, in
/// either direction of writing.
fn touching(a: &DomRect, b: &DomRect) -> bool {
    let height = a.height().min(b.height());
    let overlap = a.bottom().min(b.bottom()) - a.top().max(b.top());
    let gap = (b.left() - a.right()).abs().min((a.left() - b.right()).abs());
    overlap > height / 2.0 && gap < height / 6.0
}
