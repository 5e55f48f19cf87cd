//! What a person sees of a page, measured with the browser's own layout and style APIs, to hold
//! Nova's reads against: `nova.perceive` and `nova.read_text` must leave out what a person cannot
//! see (docs/perceive.md) and must lose nothing a person can.
//!
//! The measure is deliberately simple and independent of the extension's walk: a text counts as
//! seen when its element passes `checkVisibility` (with opacity and `visibility`), its own box is
//! at least 2 px each way and not left or above the page, its font is larger than 0 (and a font
//! under 4 px is drawn more than 4 px tall), and no
//! ancestor cuts it away (`overflow` other than visible on a box of 1 px or less, `overflow`
//! `hidden` or `clip` on a box (not an inline) the text lies wholly outside of on that axis, a `clip` rect,
//! any `clip-path` or mask: text under a clip path or a mask is left out of the measure, neither
//! seen nor unseen, as is text placed absolutely outside such a box, which escapes it),
//! and only the characters of a text drawn inside every box that hides its overflow vertically
//! and cuts its box (its own element's or one around it: a paragraph clamped to one line shows
//! that line), and its colour is not transparent nor within 8 per channel of the first background behind it
//! (a background image counts as a contrast; no background at all is white), nor nearly
//! transparent (the colour's alpha times every layer's `opacity` and `filter: opacity()` under
//! 5 %). The colour is the
//! glyphs' fill (`-webkit-text-fill-color`), an outline (a text stroke with a width, a text
//! shadow) draws them too, and a background clipped to the text (`background-clip: text`) paints
//! them whatever it is. In a drawing (SVG) the glyphs are painted by `fill` (with `fill-opacity`;
//! a gradient counts as unknown, so not seen) and outlined by `stroke`, and an `<svg>` cuts what
//! overflows its viewport, inline or not; what the drawing paints behind the text is not judged,
//! and text outside a `<text>` or in what a drawing defines or describes (`<defs>`, `<title>`)
//! is not drawn.
//! Text drawn in a ligature icon font (Google's Material Icons and Material Symbols: the words
//! `arrow_drop_down` drawn as one arrow) is an icon, not words a person reads.
//! Form controls' own text (`<option>`, `<textarea>`) and scripts, styles and templates are not
//! page text. Text under something else (every point sampled across its lines in the viewport
//! hits an element that is neither its own nor around it) is left out, neither seen nor unseen:
//! whether that element hides it (opaque, fixed to the viewport, a menu) is not judged here.

use serde_json::json;

use crate::agent::Agent;
use crate::ui;

/// The page-side test of a ligature icon font (Google's Material Icons and Material Symbols, the
/// first family of a computed `font-family`), a JavaScript regular expression.
macro_rules! icon_font {
    () => {
        r#"/^\s*["']?material (icons|symbols)/i"#
    };
}

/// A page expression listing the texts a person sees, each with its white space collapsed.
pub const VISIBLE_TEXTS: &str = concat!(
    r#"(() => {
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'TEXTAREA', 'OPTION', 'SELECT', 'TITLE']);
  const hides = (v) => v === 'hidden' || v === 'clip';
  const scrolls = (v) => v === 'auto' || v === 'scroll';
  // Cut away by a box around it that hides its overflow. A box on the way that scrolls brings
  // what it holds into view: past it, its own box is what an outer box may cut.
  const cut = (el, r) => {
    let [rx, ry] = [r, r];
    for (let a = el; a && a !== document.documentElement; a = a.parentElement) {
      const s = getComputedStyle(a);
      // A drawing's viewport (an <svg>) hides what overflows it, inline or not.
      if (a !== el && a !== document.body && (s.display !== 'inline' || a instanceof SVGSVGElement)) {
        const b = a.getBoundingClientRect();
        if (hides(s.overflowX) && (rx.right <= b.left || rx.left >= b.right)) return true;
        if (hides(s.overflowY) && (ry.bottom <= b.top || ry.top >= b.bottom)) return true;
        if (scrolls(s.overflowX)) rx = b;
        if (scrolls(s.overflowY)) ry = b;
      }
      if (s.clipPath && s.clipPath !== 'none') return true;
      const mask = s.maskImage || s.webkitMaskImage;
      if (mask && mask !== 'none') return true;
      if (s.clip && s.clip.startsWith('rect(')) return true;
      // `overflow` does not apply to an inline (whose client size is 0 whatever it holds).
      if (s.overflow !== 'visible' && s.display !== 'inline' && (a.clientWidth <= 1 || a.clientHeight <= 1)) return true;
    }
    return false;
  };
  const rgba = (c) => (c.match(/[\d.]+/g) || []).map(Number);
  // The glyphs' colour: their fill, which is the text colour unless set apart; in a drawing
  // (SVG) the `fill`, with its `fill-opacity` (none paints nothing).
  const svgPaint = (paint, opacity) => {
    if (paint === 'none') return [0, 0, 0, 0];
    const c = rgba(paint);
    if (!paint.startsWith('rgb') || c.length < 3) return [];
    return [c[0], c[1], c[2], (c.length === 4 ? c[3] : 1) * parseFloat(opacity)];
  };
  const ink = (el) => {
    const s = getComputedStyle(el);
    if (el instanceof SVGElement) return svgPaint(s.fill, s.fillOpacity);
    return rgba(s.webkitTextFillColor || s.color);
  };
  // A background clipped to the text (gradient headings) paints the glyphs whatever their colour.
  const paintedThrough = (el) => {
    for (let a = el; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      const clip = `${s.backgroundClip} ${s.webkitBackgroundClip}`;
      if (clip.includes('text') && (s.backgroundImage !== 'none' || rgba(s.backgroundColor)[3] !== 0)) return true;
    }
    return false;
  };
  const alphaOf = (c) => (c.length === 4 ? c[3] : 1);
  // What draws the glyphs: their fill, and an outline (a stroke with a width, text shadows).
  const inks = (el) => {
    const s = getComputedStyle(el);
    const out = [ink(el)];
    if (el instanceof SVGElement) {
      if (parseFloat(s.strokeWidth) > 0) out.push(svgPaint(s.stroke, s.strokeOpacity));
      return out.filter((c) => c.length >= 3 && alphaOf(c) >= 0.05);
    }
    if (parseFloat(s.webkitTextStrokeWidth) > 0) out.push(rgba(s.webkitTextStrokeColor));
    if (s.textShadow && s.textShadow !== 'none') {
      for (const m of s.textShadow.matchAll(/rgba?\([^)]*\)/g)) out.push(rgba(m[0]));
    }
    return out.filter((c) => c.length >= 3 && alphaOf(c) >= 0.05);
  };
  const onItsGround = (el) => {
    if (paintedThrough(el)) return false;
    const drawn = inks(el);
    if (!drawn.length) return true;
    const same = (bg) => drawn.every((fg) => [0, 1, 2].every((i) => Math.abs(bg[i] - fg[i]) <= 8));
    for (let a = el; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.backgroundImage && s.backgroundImage !== 'none') return false;
      const bg = rgba(s.backgroundColor);
      if (bg.length >= 3 && !(bg.length === 4 && bg[3] === 0)) return same(bg);
    }
    return same([255, 255, 255]) && drawn.every((fg) => fg[0] >= 247 && fg[1] >= 247 && fg[2] >= 247);
  };
  // Nearly transparent: the text colour's alpha times every layer's opacity under 5 %.
  const faint = (el) => {
    let alpha = paintedThrough(el) ? 1 : Math.max(0, ...inks(el).map(alphaOf));
    const filtered = (f) => [...f.matchAll(/opacity\(([\d.]+)(%?)\)/g)]
      .reduce((left, m) => left * Math.min(1, parseFloat(m[1]) / (m[2] ? 100 : 1)), 1);
    for (let a = el; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      alpha *= parseFloat(s.opacity) * filtered(s.filter || '');
    }
    return alpha < 0.05;
  };
  // Under something else: five points across each of the text's lines, all in the viewport's
  // hit by an element that is neither the text's own nor around it (one inside it, hit on the
  // text's own line, lies over the text).
  const underSomething = (el, range) => {
    let sampled = 0;
    for (const r of range.getClientRects()) {
      for (let i = 0; i < 5; i++) {
        const x = r.left + (r.width * (i + 0.5)) / 5;
        const y = r.top + r.height / 2;
        if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
        const hit = document.elementFromPoint(x, y);
        if (!hit || hit.contains(el)) return false;
        sampled++;
      }
    }
    return sampled > 0;
  };
  // The characters of text node `n` (whose box is `r`) a person sees when a box that hides its
  // overflow vertically (its own element or one around it, not an inline, not the body, inside
  // the first box around it that scrolls) cuts it: those whose box reaches into every such box;
  // the others become spaces.
  const shownText = (n, r) => {
    const cutting = [];
    for (let a = n.parentElement; a && a !== document.documentElement; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (scrolls(s.overflowY)) break;
      if (a === document.body || s.display === 'inline' || !hides(s.overflowY)) continue;
      const b = a.getBoundingClientRect();
      if (r.top < b.top || r.bottom > b.bottom) cutting.push(b);
    }
    if (!cutting.length) return n.data;
    const range = document.createRange();
    let kept = '';
    let i = 0;
    for (const c of n.data) {
      range.setStart(n, i);
      range.setEnd(n, i + c.length);
      i += c.length;
      const b = range.getBoundingClientRect();
      const shows = /\s/.test(c) || cutting.every((w) => b.bottom > w.top && b.top < w.bottom);
      kept += shows ? c : ' ';
    }
    return kept;
  };
  // How far the boxes around `el` (itself included) have scrolled what they hold; the page's
  // own scroll is scrollX and scrollY.
  const scrolledAround = (el) => {
    let x = 0, y = 0;
    for (let a = el; a; a = a.parentElement) {
      if (a === document.scrollingElement) continue;
      x += a.scrollLeft;
      y += a.scrollTop;
    }
    return [x, y];
  };
  const NOT_DRAWN = 'defs, symbol, clipPath, mask, pattern, marker, linearGradient, radialGradient, filter, title, desc, metadata';
  const seen = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const text = n.data.replace(/\s+/g, ' ').trim();
    const el = n.parentElement;
    if (!text || !el || el.closest('script, style, noscript, template, textarea, select') || skip.has(el.tagName)) continue;
    // A drawing (SVG) draws text only inside a <text>, never in what it defines or describes.
    if (el instanceof SVGElement && (!el.closest('text') || el.closest(NOT_DRAWN))) continue;
    if (!el.checkVisibility({opacityProperty: true, visibilityProperty: true})) continue;
    if (parseFloat(getComputedStyle(el).fontSize) <= 0) continue;
    if ("#,
    icon_font!(),
    r#".test(getComputedStyle(el).fontFamily)) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    // Before the page's start, once the scrolls of the boxes around it are undone: placed off
    // the page (a box scrolled there, a chat's earlier messages, is a scroll away).
    const [sx, sy] = scrolledAround(el);
    if (r.width < 2 || r.height < 2 || r.right + scrollX + sx <= 0 || r.bottom + scrollY + sy <= 0) continue;
    // Type under 4 px drawn 4 px tall or less is a line of dots.
    if (parseFloat(getComputedStyle(el).fontSize) < 4 && r.height <= 4) continue;
    if (cut(el, r) || onItsGround(el) || faint(el) || underSomething(el, range)) continue;
    const shown = shownText(n, r).replace(/\s+/g, ' ').trim();
    if (shown) seen.push(shown);
  }
  return seen;
})()"#
);

/// A page expression listing the words the page draws as icons: the texts in a ligature icon
/// font (Material Icons, Material Symbols) that pass `checkVisibility`.
pub const ICON_WORDS: &str = concat!(
    r#"(() => {
  const words = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    const text = n.data.trim();
    if (!text || !el || !el.checkVisibility({opacityProperty: true, visibilityProperty: true})) continue;
    if ("#,
    icon_font!(),
    r#".test(getComputedStyle(el).fontFamily)) words.push(...text.split(/\s+/));
  }
  return words;
})()"#
);

/// How many times `word` stands alone in `text` (between characters that are not letters,
/// digits or `_`).
fn occurrences(text: &str, word: &str) -> usize {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| *w == word).count()
}

/// Collapses white space (no-break spaces too) the way [`VISIBLE_TEXTS`] does.
pub fn collapse(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c == '\u{a0}')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The texts a person sees on `page` now ([`VISIBLE_TEXTS`], white space collapsed).
pub async fn seen(page: &ui::Page<'_>) -> anyhow::Result<Vec<String>> {
    let seen = page.eval(VISIBLE_TEXTS).await?;
    Ok(seen.as_array().into_iter().flatten().filter_map(|t| t.as_str()).map(collapse).collect())
}

/// Reads the page `page` shows with `nova.perceive` and `nova.read_text` (bounds wide enough
/// for any page) and fails naming each text a person sees that a read lost. A text counts when
/// the measure sees it both before and after the reads, so widgets a page renders late are not
/// held against the read that came before them. Fails too when a read holds a word the page
/// draws as an icon ([`ICON_WORDS`]) more often than the text a person sees holds it.
pub async fn reads_lose_nothing(a: &mut Agent, page: &ui::Page<'_>, label: &str) -> anyhow::Result<()> {
    let before = seen(page).await?;
    let icons = page.eval(ICON_WORDS).await?;
    let icons: Vec<&str> = icons.as_array().into_iter().flatten().filter_map(|w| w.as_str()).collect();
    let mut reads = Vec::new();
    for (tool, args) in
        [("nova.perceive", json!({"maxTextChars": 200000})), ("nova.read_text", json!({"maxChars": 1000000}))]
    {
        let read = a.step(tool, args).await?;
        reads.push((tool, collapse(read["text"].as_str().unwrap_or_default())));
    }
    let after = seen(page).await?;
    for (tool, read) in reads {
        let missing: Vec<&String> =
            before.iter().filter(|t| after.contains(t) && !read.contains(t.as_str())).collect();
        anyhow::ensure!(missing.is_empty(), "{label}: {tool} lost visible text {missing:?}");
        let words = before.join(" ");
        let read_as_words: Vec<&&str> =
            icons.iter().filter(|w| occurrences(&read, w) > occurrences(&words, w)).collect();
        anyhow::ensure!(
            read_as_words.is_empty(),
            "{label}: {tool} read the words of icons {read_as_words:?} in {read:?}"
        );
    }
    Ok(())
}
