//! URL unit sources `site_urls` and `crawler` (docs/tasks.md, "URL coverage (TUC)"): the URLs
//! reachable on the open site, read through the extension with the user's session. `site_urls`
//! takes the sitemap (`/sitemap.xml`, sitemap indexes followed) and the links of the start page;
//! `crawler` follows same-site links breadth-first. Both stop at 1,000 URLs, and the result is
//! kept in the `site_urls` index per scope domain.

use std::collections::{BTreeSet, VecDeque};

use nova_shared::protocol::{FetchParams, FetchResult, method};

use crate::bridge::Bridge;
use crate::bridge::DEFAULT_TIMEOUT;
use crate::etm::Etm;
use crate::etm::MAX_SEEDED_URLS;
use crate::time::now_ms;
use crate::url as normalize;

/// Largest page or sitemap read, bytes.
const MAX_FETCH_BYTES: u32 = 4 * 1024 * 1024;
/// Most pages the crawler fetches.
const MAX_CRAWL_PAGES: usize = 300;

/// `href` / `src` values of `<a>` and `<area>` elements, and `<loc>` entries of sitemaps.
pub fn extract_links(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lower = body.to_ascii_lowercase();
    let mut i = 0;
    while let Some(pos) = lower[i..].find("href") {
        let start = i + pos + 4;
        i = start;
        let rest = &body[start..];
        let rest = rest.trim_start();
        let Some(rest) = rest.strip_prefix('=') else { continue };
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or_default(),
            _ => rest.split(|c: char| c.is_whitespace() || c == '>').next().unwrap_or_default(),
        };
        if !value.is_empty() {
            out.push(html_unescape(value));
        }
    }
    let mut j = 0;
    while let Some(pos) = lower[j..].find("<loc>") {
        let start = j + pos + 5;
        let end = lower[start..].find("</loc>").map_or(body.len(), |e| start + e);
        out.push(html_unescape(body[start..end].trim()));
        j = end;
    }
    out
}

fn html_unescape(s: &str) -> String {
    s.replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

/// Resolves `link` against `base` (absolute, root-relative, relative; fragments dropped).
pub fn resolve(base: &str, link: &str) -> Option<String> {
    let link = link.split('#').next().unwrap_or_default().trim();
    if link.is_empty()
        || link.starts_with("javascript:")
        || link.starts_with("mailto:")
        || link.starts_with("tel:")
    {
        return None;
    }
    if link.starts_with("http://") || link.starts_with("https://") {
        return Some(link.to_owned());
    }
    let p = normalize::parts(base)?;
    if let Some(rest) = link.strip_prefix("//") {
        return Some(format!("{}://{rest}", p.scheme));
    }
    if link.starts_with('/') {
        return Some(format!("{}://{}{link}", p.scheme, p.host));
    }
    if link.starts_with('?') {
        return Some(format!("{}://{}{}{link}", p.scheme, p.host, p.path));
    }
    let dir = match p.path.rfind('/') {
        Some(i) => &p.path[..=i],
        None => "/",
    };
    let mut segments: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for part in link.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    let trailing = if link.ends_with('/') { "/" } else { "" };
    Some(format!("{}://{}/{}{trailing}", p.scheme, p.host, segments.join("/")))
}

/// The origin a scope domain names: an origin URL as is; `host[:port]` with the scheme of
/// `hint` when it is on that host, else https.
pub fn scope_origin(domain: &str, hint: Option<&str>) -> Option<String> {
    let d = domain.trim().trim_end_matches('/');
    if d.starts_with("http://") || d.starts_with("https://") {
        return normalize::origin(d);
    }
    let scheme = hint
        .and_then(normalize::parts)
        .filter(|p| p.host.eq_ignore_ascii_case(d))
        .map_or("https".to_owned(), |p| p.scheme);
    normalize::origin(&format!("{scheme}://{d}"))
}

fn same_site(url: &str, origin: &str) -> bool {
    normalize::origin(url).is_some_and(|o| o == origin)
}

fn looks_like_page(url: &str) -> bool {
    let path = normalize::parts(url).map(|p| p.path.to_lowercase()).unwrap_or_default();
    ![
        ".png", ".jpg", ".jpeg", ".gif", ".svg", ".css", ".js", ".ico", ".pdf", ".zip", ".webp", ".woff",
        ".woff2", ".xml",
    ]
    .iter()
    .any(|ext| path.ends_with(ext))
}

async fn get(bridge: &Bridge, url: &str) -> Result<FetchResult, String> {
    bridge
        .call::<FetchResult>(
            method::FETCH,
            FetchParams { url: url.to_owned(), max_bytes: MAX_FETCH_BYTES },
            DEFAULT_TIMEOUT,
        )
        .await
        .map_err(|e| format!("cannot fetch {url}: {e}"))
}

/// The URLs of the site at `domain`, deduplicated by normalised form, at most 1,000.
pub async fn site_urls(
    bridge: &Bridge,
    etm: &Etm,
    domain: &str,
    target_url: Option<&str>,
    crawl: bool,
) -> Result<Vec<String>, String> {
    let origin =
        scope_origin(domain, target_url).ok_or_else(|| format!("`{domain}` is not a host or an origin"))?;
    let start =
        target_url.filter(|u| same_site(u, &origin)).map_or_else(|| format!("{origin}/"), str::to_owned);
    let mut seen = BTreeSet::new();
    let mut urls = Vec::new();
    let mut add = |u: String, urls: &mut Vec<String>| {
        if urls.len() < MAX_SEEDED_URLS
            && same_site(&u, &origin)
            && looks_like_page(&u)
            && let Some(n) = normalize::normalize(&u)
            && seen.insert(n)
        {
            urls.push(u);
            return true;
        }
        false
    };
    // Sitemaps (an index is followed one level).
    let mut sitemaps = VecDeque::from([format!("{origin}/sitemap.xml")]);
    let mut read = 0;
    while let Some(sm) = sitemaps.pop_front() {
        read += 1;
        if read > 20 {
            break;
        }
        let Ok(r) = get(bridge, &sm).await else { continue };
        if r.status != 200 {
            continue;
        }
        for link in extract_links(&r.body) {
            if link.ends_with(".xml") && same_site(&link, &origin) {
                sitemaps.push_back(link);
            } else {
                add(link, &mut urls);
            }
        }
    }
    // The start page and, for the crawler, everything reachable from it.
    let mut queue = VecDeque::from([start.clone()]);
    let mut fetched = BTreeSet::new();
    add(start, &mut urls);
    while let Some(page) = queue.pop_front() {
        if fetched.len() >= if crawl { MAX_CRAWL_PAGES } else { 1 } || urls.len() >= MAX_SEEDED_URLS {
            break;
        }
        let Some(key) = normalize::normalize(&page) else { continue };
        if !fetched.insert(key) {
            continue;
        }
        let r = match get(bridge, &page).await {
            Ok(r) => r,
            Err(e) if fetched.len() == 1 && urls.len() <= 1 => return Err(e),
            Err(_) => continue,
        };
        if r.status >= 400 || !r.content_type.contains("html") {
            continue;
        }
        for link in extract_links(&r.body) {
            if let Some(abs) = resolve(&r.final_url, &link)
                && add(abs.clone(), &mut urls)
                && crawl
            {
                queue.push_back(abs);
            }
        }
    }
    // Keep the index (the persistent site-URL list of the scope domain).
    let source = if crawl { "crawler" } else { "site_urls" };
    let rows: Vec<(String, String)> = urls
        .iter()
        .filter_map(|u| normalize::normalize(u).map(|n| (u.clone(), normalize::url_hash(&n))))
        .collect();
    let now = now_ms();
    let _ = etm.with(|c| {
        let tx = crate::store::write_tx(c)?;
        for (u, h) in &rows {
            tx.execute(
                "INSERT OR IGNORE INTO site_urls (scope_domain, url, url_hash, source, discovered_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![origin, u, h, source, now],
            )?;
        }
        tx.commit()
    });
    Ok(urls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_sitemap_locations_are_found() {
        let html = r#"<a href="/a">A</a> <A HREF='b.html'>B</A> <a href=c?x=1&amp;y=2>C</a>
                      <loc> http://x.test/d </loc>"#;
        assert_eq!(extract_links(html), ["/a", "b.html", "c?x=1&y=2", "http://x.test/d"]);
    }

    #[test]
    fn relative_links_resolve() {
        let base = "http://x.test/site/en/page-01.html";
        assert_eq!(resolve(base, "page-02.html").as_deref(), Some("http://x.test/site/en/page-02.html"));
        assert_eq!(resolve(base, "../de/seite.html").as_deref(), Some("http://x.test/site/de/seite.html"));
        assert_eq!(resolve(base, "/top#x").as_deref(), Some("http://x.test/top"));
        assert_eq!(resolve(base, "mailto:a@b.c"), None);
        assert_eq!(
            scope_origin("127.0.0.1:9", Some("http://127.0.0.1:9/x")).as_deref(),
            Some("http://127.0.0.1:9")
        );
        assert_eq!(scope_origin("example.test", None).as_deref(), Some("https://example.test"));
    }
}
