//! A PKS scope is a site: the host a URL or name is on, lower-cased, with a non-default port,
//! internationalised names in punycode (so that a look-alike such as `pаypal.com` with a
//! Cyrillic `а` is a different scope from `paypal.com`, and shows as one), no `www.`.

use crate::call::CallError;

/// Longest scope accepted.
pub const MAX_SCOPE_CHARS: usize = 253;

/// The scope `input` names (a host, `host:port` or a URL); the error says why it is not one.
pub fn normalize(input: &str) -> Result<String, CallError> {
    let raw = input.trim();
    let bad = |why: &str| CallError::invalid("scope", format!("`scope` {why}: got {raw:?}"));
    if raw.is_empty() {
        return Err(bad("must name a site (a host such as example.org, or a URL)"));
    }
    let rest = match raw.split_once("://") {
        Some((scheme, rest)) => {
            let scheme = scheme.to_ascii_lowercase();
            if scheme != "http" && scheme != "https" {
                return Err(bad("must be an http(s) site"));
            }
            rest
        }
        None => raw,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let (host, port) = match host_port.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && p.chars().all(|c| c.is_ascii_digit()) => (h, Some(p)),
        _ => (host_port, None),
    };
    let ascii = idna::domain_to_ascii(host).map_err(|_| bad("is not a valid host name"))?;
    let ascii = ascii.strip_prefix("www.").unwrap_or(&ascii).to_owned();
    // A colon left in the host is a page that is not on a site (`about:blank`, `data:,x`).
    if ascii.is_empty() || ascii.contains(['/', ' ', ':']) {
        return Err(bad("is not a valid host name"));
    }
    let default_port = match raw.split_once("://").map(|(s, _)| s.to_ascii_lowercase()) {
        Some(s) if s == "https" => Some("443"),
        Some(_) => Some("80"),
        None => None,
    };
    let scope = match port.filter(|p| Some(*p) != default_port && !p.is_empty()) {
        Some(p) => format!("{ascii}:{p}"),
        None => ascii,
    };
    if scope.len() > MAX_SCOPE_CHARS {
        return Err(bad(&format!("is longer than {MAX_SCOPE_CHARS} characters")));
    }
    Ok(scope)
}

/// Whether a tab of the browser shows the site `scope` (knowledge is written only then).
pub fn open_in_a_tab(bridge: &crate::bridge::Bridge, scope: &str) -> bool {
    bridge.state().tabs.iter().any(|t| normalize(&t.url).is_ok_and(|s| s == scope))
}

/// The soft refusal of a write for a site no tab shows.
pub fn not_open(scope: &str) -> crate::call::ToolReply {
    crate::call::ToolReply::ok(serde_json::json!({
        "ok": false, "status": "rejected", "reasonCode": "pks.scope_not_open", "retryable": true, "scope": scope,
        "message": format!("no tab shows {scope}: open the site, look at it, then change what Nova knows of it"),
    }))
}

/// The site a tool works on in a tab showing `tab_url`: `given` (already normalised), which must
/// be what the tab shows, or else the tab's own; otherwise the [`not_open`] reply.
pub fn of_tab(given: Option<&str>, tab_url: &str) -> Result<String, Box<crate::call::ToolReply>> {
    match (given, normalize(tab_url).ok()) {
        (Some(g), Some(shown)) if g == shown => Ok(shown),
        (None, Some(shown)) => Ok(shown),
        _ => Err(Box::new(not_open(given.unwrap_or(tab_url)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_works_on_the_site_its_tab_shows() {
        let tab = "https://www.shop.example/cart";
        assert_eq!(of_tab(None, tab).ok(), Some("shop.example".to_owned()));
        assert_eq!(of_tab(Some("shop.example"), tab).ok(), Some("shop.example".to_owned()));
        let scope_of = |r: Result<String, Box<crate::call::ToolReply>>| {
            let reply = r.expect_err("refused").structured;
            (reply["reasonCode"].clone(), reply["scope"].clone())
        };
        assert_eq!(
            scope_of(of_tab(Some("other.example"), tab)),
            (serde_json::json!("pks.scope_not_open"), serde_json::json!("other.example"))
        );
        assert_eq!(
            scope_of(of_tab(None, "about:blank")),
            (serde_json::json!("pks.scope_not_open"), serde_json::json!("about:blank"))
        );
    }

    #[test]
    fn urls_and_names_become_one_scope_each() {
        for (input, want) in [
            ("example.org", "example.org"),
            ("https://www.Example.org/path?q=1#x", "example.org"),
            ("http://example.org:80/", "example.org"),
            ("https://example.org:443", "example.org"),
            ("http://127.0.0.1:8080/ok/dashboard.html", "127.0.0.1:8080"),
            ("example.org:8443", "example.org:8443"),
            ("https://bücher.de/", "xn--bcher-kva.de"),
            ("https://user:pw@shop.example/", "shop.example"),
        ] {
            assert_eq!(normalize(input).expect(input), want, "{input}");
        }
        // A Cyrillic look-alike is its own scope, visibly.
        let lookalike = normalize("p\u{430}ypal.com").expect("idn");
        assert!(lookalike.starts_with("xn--"), "{lookalike}");
        assert_ne!(lookalike, "paypal.com");
        for bad in ["", "  ", "ftp://example.org", "file:///tmp/x", "about:blank", "data:text/html,x"] {
            let e = normalize(bad).expect_err(bad).to_string();
            assert!(e.contains("`scope`"), "{bad}: {e}");
        }
    }
}
