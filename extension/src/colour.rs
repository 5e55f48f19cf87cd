//! Colours as computed styles give them, and when a person cannot tell two apart (the seen-text
//! judgement's colours: [`crate::seen`], [`crate::drawing`]).

/// An RGBA colour, channels 0-255, alpha 0-1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rgba(pub f64, pub f64, pub f64, pub f64);

/// A computed colour: `rgb(r, g, b)`, `rgba(r, g, b, a)`, `rgb(r g b / a)` or `transparent`.
pub fn parse_colour(s: &str) -> Option<Rgba> {
    let s = s.trim();
    if s == "transparent" {
        return Some(Rgba(0.0, 0.0, 0.0, 0.0));
    }
    let inner = s.strip_prefix("rgba(").or_else(|| s.strip_prefix("rgb("))?.strip_suffix(')')?;
    let parts: Vec<f64> = inner
        .split([',', ' ', '/'])
        .filter(|p| !p.is_empty())
        .map(|p| match p.strip_suffix('%') {
            Some(pct) => pct.parse::<f64>().map(|v| v / 100.0),
            None => p.parse::<f64>(),
        })
        .collect::<Result<_, _>>()
        .ok()?;
    match parts[..] {
        [r, g, b] => Some(Rgba(r, g, b, 1.0)),
        [r, g, b, a] => Some(Rgba(r, g, b, a)),
        _ => None,
    }
}

/// Two colours a person cannot tell apart as text on background (each channel within 8).
pub fn same_colour(a: Rgba, b: Rgba) -> bool {
    (a.0 - b.0).abs() <= 8.0 && (a.1 - b.1).abs() <= 8.0 && (a.2 - b.2).abs() <= 8.0
}

/// Every `rgb()` / `rgba()` colour in a computed value (a list of text shadows, say).
pub fn colours_in(value: &str) -> Vec<Rgba> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("rgb") {
        let Some(len) = rest[start..].find(')') else { break };
        out.extend(parse_colour(&rest[start..=start + len]));
        rest = &rest[start + len + 1..];
    }
    out
}

/// A computed opacity (`opacity`, `fill-opacity`), a number or a percentage, within 0-1 (1 when
/// unreadable).
pub fn opacity(value: &str) -> f64 {
    let v = value.trim();
    let f = match v.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
        None => v.parse::<f64>(),
    };
    f.unwrap_or(1.0).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHITE: Rgba = Rgba(255.0, 255.0, 255.0, 1.0);

    #[test]
    fn colours_parse_in_every_computed_form() {
        assert_eq!(parse_colour("rgb(255, 255, 255)"), Some(WHITE));
        assert_eq!(parse_colour("rgba(0, 0, 0, 0)"), Some(Rgba(0.0, 0.0, 0.0, 0.0)));
        assert_eq!(parse_colour("rgb(10 20 30 / 0.5)"), Some(Rgba(10.0, 20.0, 30.0, 0.5)));
        assert_eq!(parse_colour("transparent").map(|c| c.3), Some(0.0));
        assert_eq!(parse_colour("color(srgb 1 1 1)"), None);
        assert!(same_colour(Rgba(250.0, 252.0, 255.0, 1.0), WHITE));
        assert!(!same_colour(Rgba(200.0, 200.0, 200.0, 1.0), WHITE));
    }
}
