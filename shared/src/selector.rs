//! Selector grammar: CSS, plus `>>>` to descend into an open shadow root or a same-origin
//! iframe's document, plus refs handed out by `nova.perceive` (`e12`).
//!
//! `product-card >>> #add` means: find `product-card`, enter its shadow root (or, for an
//! `iframe`, its document), then find `#add` there. The split honours quotes and brackets so a
//! `>>>` inside an attribute value is not a combinator.

/// A parsed selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// A perceive ref such as `e12`.
    Ref(u32),
    /// CSS segments separated by `>>>`; each segment is plain CSS for one document or shadow root.
    Chain(Vec<String>),
}

/// Why a selector could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectorError(pub String);

impl std::fmt::Display for SelectorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Most segments in one chain; deeper nesting is almost surely a mistake.
pub const MAX_SEGMENTS: usize = 16;

/// Parses a selector string.
pub fn parse(input: &str) -> Result<Selector, SelectorError> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(SelectorError("selector is empty".into()));
    }
    if let Some(n) = parse_ref(trimmed) {
        return Ok(Selector::Ref(n));
    }
    let segments = split_chain(trimmed);
    if segments.len() > MAX_SEGMENTS {
        return Err(SelectorError(format!(
            "selector has {} `>>>` segments; at most {MAX_SEGMENTS} are allowed",
            segments.len()
        )));
    }
    if segments.iter().any(|s| s.is_empty()) {
        return Err(SelectorError(format!("`>>>` needs a CSS selector on both sides in `{trimmed}`")));
    }
    Ok(Selector::Chain(segments))
}

/// `e12` -> 12. Refs are `e` followed by digits and nothing else.
pub fn parse_ref(s: &str) -> Option<u32> {
    let digits = s.strip_prefix('e')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Formats a ref id as its selector text.
pub fn format_ref(n: u32) -> String {
    format!("e{n}")
}

fn split_chain(s: &str) -> Vec<String> {
    split_outside(s, ">>>").into_iter().map(|seg| seg.trim().to_owned()).collect()
}

/// The alternatives of a selector list (`a, b:visible`), trimmed: split at the commas outside
/// quotes, brackets and parentheses, so `input:is([type=text], :not([type]))` is one.
pub fn alternatives(list: &str) -> Vec<&str> {
    split_outside(list, ",").into_iter().map(str::trim).collect()
}

/// `s` split at each `sep` outside quotes, `[...]` and `(...)`.
fn split_outside<'a>(s: &'a str, sep: &str) -> Vec<&'a str> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut quote: Option<u8> = None;
    let mut depth = 0usize;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == b'\\' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None => match b {
                b'"' | b'\'' => quote = Some(b),
                b'\\' => i += 1,
                b'[' | b'(' => depth += 1,
                b']' | b')' => depth = depth.saturating_sub(1),
                _ if depth == 0 && bytes[i..].starts_with(sep.as_bytes()) => {
                    out.push(&s[start..i]);
                    i += sep.len();
                    start = i;
                    continue;
                }
                _ => {}
            },
        }
        i += 1;
    }
    out.push(&s[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(parts: &[&str]) -> Selector {
        Selector::Chain(parts.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn plain_css_is_one_segment() {
        assert_eq!(parse("form > input[name=q]").expect("ok"), chain(&["form > input[name=q]"]));
    }

    #[test]
    fn deep_combinator_splits_segments() {
        assert_eq!(parse("product-card >>> #add").expect("ok"), chain(&["product-card", "#add"]));
        assert_eq!(
            parse("iframe#n>>>x-a >>> input[name=email]").expect("ok"),
            chain(&["iframe#n", "x-a", "input[name=email]"])
        );
    }

    #[test]
    fn combinator_inside_quotes_or_brackets_is_text() {
        assert_eq!(parse(r#"a[title=">>>"]"#).expect("ok"), chain(&[r#"a[title=">>>"]"#]));
        assert_eq!(parse(":is(a >>> b)").expect("ok"), chain(&[":is(a >>> b)"]));
    }

    #[test]
    fn a_list_splits_only_at_its_own_commas() {
        assert_eq!(
            alternatives(
                r#"a:visible, form:has(b) input:is([type="text"], :not([type])):visible , [title="x,y"]"#
            ),
            vec![
                "a:visible",
                r#"form:has(b) input:is([type="text"], :not([type])):visible"#,
                r#"[title="x,y"]"#
            ]
        );
        assert_eq!(alternatives("one"), vec!["one"]);
    }

    #[test]
    fn refs_are_recognised_and_only_exactly() {
        assert_eq!(parse("e12").expect("ok"), Selector::Ref(12));
        assert_eq!(parse(" e3 ").expect("ok"), Selector::Ref(3));
        assert_eq!(parse("e").expect("ok"), chain(&["e"]));
        assert_eq!(parse("e1x").expect("ok"), chain(&["e1x"]));
        assert_eq!(format_ref(7), "e7");
    }

    #[test]
    fn dangling_combinator_and_empty_input_are_errors() {
        assert!(parse("").is_err());
        assert!(parse("a >>>").expect_err("dangling").0.contains(">>>"));
        assert!(parse(">>> a").is_err());
        let deep = vec!["a"; MAX_SEGMENTS + 1].join(">>>");
        assert!(parse(&deep).expect_err("too deep").0.contains("at most"));
    }
}
