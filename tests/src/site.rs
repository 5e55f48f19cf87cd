//! The multi-page fixture site under `/site/` (generated, 60 pages): 40 English pages (every
//! fifth one with a strict CSP header), 16 German and 4 French pages with deliberate
//! misspellings, an index that links every page, and a sitemap. Pages under `/site/special/`
//! make a registered scan fail each trust check for real, and are not linked.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The CSP header sent with `*.csp.html` fixtures and the pages of the site.
pub const STRICT_CSP: &str = "script-src 'self'";

/// English pages.
pub const EN_PAGES: usize = 40;
/// German pages.
pub const DE_PAGES: usize = 16;
/// French pages.
pub const FR_PAGES: usize = 4;

/// Misspelt words planted in German page `n` (1-based): one per page, in the second paragraph.
pub fn german_typo(n: usize) -> &'static str {
    ["Fehlre", "Strasse", "habne", "Wohnugn"][(n - 1) % 4]
}

/// The paths of the 60 pages, in sitemap order.
pub fn page_paths() -> Vec<String> {
    let mut out = Vec::new();
    out.extend((1..=EN_PAGES).map(|n| format!("site/en/page-{n:02}.html")));
    out.extend((1..=DE_PAGES).map(|n| format!("site/de/seite-{n:02}.html")));
    out.extend((1..=FR_PAGES).map(|n| format!("site/fr/page-{n:02}.html")));
    out
}

fn html(lang: &str, title: &str, body: &str) -> String {
    let (home, footer) = match lang {
        "de" => ("Startseite", "Beispielseite"),
        "fr" => ("Accueil", "Site d'exemple"),
        _ => ("Home", "Example site"),
    };
    format!(
        "<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><header><nav><a href=\"/site/\">{home}</a></nav></header><main><h1>{title}</h1>{body}</main>\
         <footer><p>{footer}</p></footer></body></html>"
    )
}

fn english(n: usize) -> String {
    let body = format!(
        "<p>This is page {n} of the English part of the site. It describes a product, its price and how to \
         order it.</p><p>Every page has a short text so that reading it takes a moment, and a link to the \
         next page.</p><p lang=\"de\">Dieser Absatz ist auf Deutsch geschrieben.</p>\
         <div lang=\"fr\" hidden>Ce texte est cach\u{e9}.</div><a href=\"page-{:02}.html\">Next page</a>",
        n % EN_PAGES + 1
    );
    html("en", &format!("English page {n}"), &body)
}

fn german(n: usize) -> String {
    let body = format!(
        "<p>Dies ist die Seite {n} des deutschen Teils. Das Haus ist gro\u{df} und der Garten ist sch\u{f6}n.</p>\
         <p>Wir haben hier einen {} versteckt, den die Pr\u{fc}fung finden soll.</p>\
         <a href=\"seite-{:02}.html\">Weiter</a>",
        german_typo(n),
        n % DE_PAGES + 1
    );
    html("de", &format!("Deutsche Seite {n}"), &body)
}

fn french(n: usize) -> String {
    let body = format!(
        "<p>Ceci est la page {n} de la partie fran\u{e7}aise. La maison est grande.</p>\
         <a href=\"page-{:02}.html\">Suivant</a>",
        n % FR_PAGES + 1
    );
    html("fr", &format!("Page fran\u{e7}aise {n}"), &body)
}

fn index() -> String {
    let links: String = page_paths().iter().map(|p| format!("<li><a href=\"/{p}\">{p}</a></li>")).collect();
    html("en", "Fixture site", &format!("<ul>{links}</ul>"))
}

fn sitemap(origin: &str) -> String {
    let urls: String = page_paths().iter().map(|p| format!("<url><loc>{origin}/{p}</loc></url>")).collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"
    )
}

/// Pages that make a real scan fail a trust check.
fn special(name: &str) -> Option<String> {
    Some(match name {
        // Nothing to extract: scan_returned_null_or_empty.
        "empty.html" => "<!doctype html><html lang=\"en\"><head><title></title></head><body></body></html>".into(),
        // The route changes while the scan waits for the page to settle: effective_url_mismatch.
        // The page keeps changing for six seconds and takes a new route every 1.5 s, so a scan
        // that starts late on a loaded machine still sees the route change under it.
        "spa.html" => "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>SPA</title></head><body>\
            <main id=\"app\"><p>Loading the app</p></main><script>\
            let n = 0; const t = setInterval(() => { n += 1; document.getElementById('app').append(` ${n}`);\
            if (n % 15 === 0) { history.pushState({}, '', `spa-step-${n / 15}.html`); }\
            if (n === 60) { clearInterval(t); } }, 100);\
            </script></body></html>"
            .into(),
        // Most text lives in shadow trees, which the rendered-text measure does not count:
        // claimed_text_exceeds_measured.
        "shadow.html" => "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Shadow</title></head><body>\
            <p>Short.</p><div id=\"host\"></div><script>\
            const root = document.getElementById('host').attachShadow({mode: 'open'});\
            root.innerHTML = '<p>' + 'This paragraph is rendered inside a shadow tree. '.repeat(20) + '</p>';\
            </script></body></html>"
            .into(),
        _ => return None,
    })
}

/// A page of 2,000 words in 100 paragraphs (the coverage-scan benchmark).
fn words_2000() -> String {
    let words =
        ["order", "price", "product", "garden", "house", "window", "reader", "simple", "green", "river"];
    let paras: String = (0..100)
        .map(|p| {
            let text: Vec<&str> = (0..20).map(|w| words[(p * 7 + w * 3) % words.len()]).collect();
            format!("<p>{}.</p>", text.join(" "))
        })
        .collect();
    html("en", "Two thousand words", &paras)
}

/// A page so large that the scan's output is cut: scan_result_not_json.
fn huge() -> String {
    let para = "<p>This page is enormous and its text goes on and on for many megabytes of words.</p>";
    let count = nova_shared::protocol::scan::MAX_RAW_BYTES / (para.len() - 7) + 100;
    html("en", "Huge page", &para.repeat(count))
}

fn ok(body: String, mime: &'static str, csp: bool) -> Response {
    let mut r = (StatusCode::OK, body).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    if csp {
        r.headers_mut().insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(STRICT_CSP));
    }
    r
}

const HTML: &str = "text/html; charset=utf-8";

/// Serves `/site/{path}`; `origin` is the server's own origin (for the sitemap).
pub fn serve(path: &str, origin: &str) -> Response {
    let num = |prefix: &str, max: usize| {
        path.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(".html"))
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| (1..=max).contains(n))
    };
    if path.is_empty() || path == "index.html" {
        return ok(index(), HTML, false);
    }
    if path == "sitemap.xml" {
        return ok(sitemap(origin), "application/xml", false);
    }
    if let Some(n) = num("en/page-", EN_PAGES) {
        return ok(english(n), HTML, n % 5 == 0);
    }
    if let Some(n) = num("de/seite-", DE_PAGES) {
        return ok(german(n), HTML, false);
    }
    if let Some(n) = num("fr/page-", FR_PAGES) {
        return ok(french(n), HTML, false);
    }
    if path == "special/words-2000.html" {
        return ok(words_2000(), HTML, false);
    }
    if path == "special/huge.html" {
        return ok(huge(), HTML, false);
    }
    if let Some(body) = path.strip_prefix("special/").and_then(special) {
        return ok(body, HTML, false);
    }
    (StatusCode::NOT_FOUND, format!("no site page {path}")).into_response()
}
