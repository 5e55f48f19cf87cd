//! URL normaliser, version 1 (docs/tasks.md, "URL normalisation"): http(s) only; tracking
//! parameters stripped; query keys sorted (case-insensitive, stable); needless percent-encoding
//! decoded (and a `%` that starts no escape, or a raw blank, encoded); host lowercased; trailing
//! slash dropped; fragment dropped. A normalised URL normalises to itself. The hash is the first 8
//! bytes of SHA-256 as 16 hex digits (`url:{hash}` is the unit key of a URL unit).

use sha2::{Digest, Sha256};

/// Version stamped on every normalised row.
pub const NORMALIZER_VERSION: u32 = 1;

/// Query parameters that only track the visitor.
const TRACKING: &[&str] = &[
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_term",
    "utm_content",
    "gclid",
    "fbclid",
    "msclkid",
    "mc_eid",
    "ref",
    "source",
];

/// A URL split into what the normaliser needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    /// `http` or `https`.
    pub scheme: String,
    /// Lowercased host with a non-default port.
    pub host: String,
    /// Path (`/` when empty), as written.
    pub path: String,
    /// Query without `?`.
    pub query: Option<String>,
}

/// Splits an absolute http(s) URL; `None` for anything else.
pub fn parts(url: &str) -> Option<Parts> {
    let url = url.trim();
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let rest = rest.split('#').next().unwrap_or_default();
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let host_port = authority.rsplit('@').next().unwrap_or_default().to_ascii_lowercase();
    let default_port = if scheme == "http" { ":80" } else { ":443" };
    // Every default port goes (`x:80:80` too) and no blank around the host stays, so that the
    // host of a normalised URL is its own host.
    let mut host = host_port.trim();
    while let Some(h) = host.strip_suffix(default_port) {
        host = h.trim();
    }
    if host.is_empty() {
        return None;
    }
    let host = host.to_owned();
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q.to_owned())),
        None => (tail, None),
    };
    let path = if path.is_empty() { "/".to_owned() } else { path.to_owned() };
    Some(Parts { scheme, host, path, query })
}

/// Decodes `%XX` escapes of unreserved characters (ALPHA / DIGIT / `-._~`), keeps the rest,
/// and uppercases the hex of what stays encoded.
fn decode_unreserved(s: &str) -> String {
    unescape(s, false)
}

/// A path or query component as [`normalize`] writes it: [`decode_unreserved`], and a `%`
/// that starts no escape and blanks (no URL a browser sends has them raw) escaped, so that
/// the result is its own normal form (`%%34%31` is `%2541`, never `%41`, which is `A`).
fn canonical(s: &str) -> String {
    unescape(s, true)
}

fn unescape(s: &str, escape_stray: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            let c = (h << 4 | l) as char;
            if c.is_ascii_alphanumeric() || "-._~".contains(c) {
                out.push(c);
            } else {
                out.push('%');
                out.push(bytes[i + 1].to_ascii_uppercase() as char);
                out.push(bytes[i + 2].to_ascii_uppercase() as char);
            }
            i += 3;
            continue;
        }
        // Multi-byte UTF-8 is copied whole.
        let ch = s[i..].chars().next().unwrap_or('\u{fffd}');
        if escape_stray && (ch == '%' || ch.is_whitespace()) {
            for b in ch.encode_utf8(&mut [0; 4]).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(ch);
        }
        i += ch.len_utf8().max(1);
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The normalised form of `url`, or `None` when it is not http(s).
pub fn normalize(url: &str) -> Option<String> {
    let p = parts(url)?;
    let mut path = canonical(&p.path);
    while path.len() > 1 && path.ends_with('/') {
        path.pop();
    }
    let mut pairs: Vec<(String, String)> = p
        .query
        .as_deref()
        .unwrap_or_default()
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (canonical(k), canonical(v))
        })
        // A bare `=` is no parameter, as an empty `&&` piece is none.
        .filter(|(k, v)| !(k.is_empty() && v.is_empty()))
        .filter(|(k, _)| !TRACKING.contains(&k.to_ascii_lowercase().as_str()))
        .collect();
    // Stable: duplicate keys keep their relative order.
    pairs.sort_by_key(|(k, _)| k.to_ascii_lowercase());
    let query: Vec<String> =
        pairs.into_iter().map(|(k, v)| if v.is_empty() { k } else { format!("{k}={v}") }).collect();
    let mut out = format!("{}://{}{}", p.scheme, p.host, if path == "/" { "" } else { &path });
    if !query.is_empty() {
        out.push('?');
        out.push_str(&query.join("&"));
    }
    Some(out)
}

/// `normalize` without the query: the canonical route URL TOB matches pages on.
pub fn route_url(url: &str) -> Option<String> {
    let n = normalize(url)?;
    Some(n.split('?').next().unwrap_or_default().to_owned())
}

/// The route key of a path or URL: trimmed, lowercase, slashes stripped at both ends.
pub fn route_key(path_or_url: &str) -> String {
    let path = match parts(path_or_url) {
        Some(p) => decode_unreserved(&p.path),
        None => path_or_url.trim().split(['?', '#']).next().unwrap_or_default().to_owned(),
    };
    path.trim().trim_matches('/').to_lowercase()
}

/// The 16-hex-digit hash of a normalised URL.
pub fn url_hash(normalized: &str) -> String {
    let digest = Sha256::digest(normalized.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// `scheme://host` of a URL.
pub fn origin(url: &str) -> Option<String> {
    parts(url).map(|p| format!("{}://{}", p.scheme, p.host))
}

/// Wildcard class of a path segment (docs/tasks.md, "Reporting groups").
fn segment_class(seg: &str) -> u8 {
    if seg.is_empty() {
        return 0;
    }
    let digits = seg.chars().all(|c| c.is_ascii_digit());
    let hex = seg.chars().all(|c| c.is_ascii_hexdigit());
    let uuid = seg.len() == 36 && seg.chars().filter(|c| *c == '-').count() == 4;
    if uuid
        || (seg.len() == 24 && hex)
        || (seg.len() > 16 && seg.chars().any(|c| c.is_ascii_digit()) && seg.chars().any(char::is_alphabetic))
    {
        4
    } else if digits && (seg.len() <= 3 || seg.len() >= 5) {
        3
    } else {
        0
    }
}

/// The reporting group of a normalised URL: its path with id-like segments as `{id}`.
pub fn pattern(normalized: &str) -> String {
    let Some(p) = parts(normalized) else { return normalized.to_owned() };
    let path: Vec<String> = p
        .path
        .split('/')
        .map(|s| if segment_class(s) >= 3 { "{id}".to_owned() } else { s.to_owned() })
        .collect();
    format!("{}://{}{}", p.scheme, p.host, path.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_replace_id_segments() {
        assert_eq!(pattern("https://x.test/products/12345/reviews"), "https://x.test/products/{id}/reviews");
        assert_eq!(
            pattern("https://x.test/blog/2024/post"),
            "https://x.test/blog/2024/post",
            "years are protected"
        );
        assert_eq!(pattern("https://x.test/u/550e8400-e29b-41d4-a716-446655440000"), "https://x.test/u/{id}");
    }

    #[test]
    fn normalisation_follows_the_five_rules() {
        assert_eq!(normalize("ftp://x.test/a"), None);
        assert_eq!(normalize("mailto:a@b.c"), None);
        assert_eq!(
            normalize("HTTPS://Shop.Example.COM:443/a/b/?utm_source=x&b=2&A=1&ref=home#top").as_deref(),
            Some("https://shop.example.com/a/b?A=1&b=2")
        );
        assert_eq!(normalize("http://x.test/").as_deref(), Some("http://x.test"));
        assert_eq!(
            normalize("http://x.test:8080/p/%7Euser/%2Fa").as_deref(),
            Some("http://x.test:8080/p/~user/%2Fa")
        );
        assert_eq!(normalize("http://x.test/?b=1&a=2&b=0").as_deref(), Some("http://x.test?a=2&b=1&b=0"));
        assert_eq!(normalize("https://x.test/über").as_deref(), Some("https://x.test/über"));
    }

    #[test]
    fn a_normalised_url_is_its_own_normal_form() {
        // Found by fuzzing (fuzz/fuzz_targets/url.rs): each of these normalised to a URL that
        // normalised to yet another, so the unit of a URL was not found by its normalised form.
        for (url, normal) in [
            ("http://x.test/?=", Some("http://x.test")),
            ("http://x.test/?b=1&=&a=2", Some("http://x.test?a=2&b=1")),
            ("http://x.test:80:80/", Some("http://x.test")),
            ("http://:80/", None),
            ("http://x.test /", Some("http://x.test")),
            ("http://x.test/a /", Some("http://x.test/a%20")),
            ("http://x.test/a b?q=a b&r= #f", Some("http://x.test/a%20b?q=a%20b&r=%20")),
            ("http://x.test/%%34%31", Some("http://x.test/%2541")),
            ("http://x.test/100%", Some("http://x.test/100%25")),
        ] {
            let got = normalize(url);
            assert_eq!(got.as_deref(), normal, "{url}");
            if let Some(n) = got {
                assert_eq!(normalize(&n), Some(n.clone()), "{url} -> {n}");
            }
        }
    }

    #[test]
    fn hashes_are_16_hex_and_stable() {
        let h = url_hash("https://x.test/a");
        assert_eq!(h.len(), 16);
        assert!(h.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(h, url_hash("https://x.test/a"));
        assert_ne!(h, url_hash("https://x.test/b"));
    }

    #[test]
    fn route_urls_and_keys() {
        assert_eq!(route_url("https://x.test/a/?q=1#f").as_deref(), Some("https://x.test/a"));
        assert_eq!(route_key("/Docs/Intro/"), "docs/intro");
        assert_eq!(route_key("https://x.test/Docs/Intro?x=1"), "docs/intro");
        assert_eq!(origin("http://127.0.0.1:9/x").as_deref(), Some("http://127.0.0.1:9"));
    }
}
