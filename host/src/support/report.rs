//! `nova report`: one self-contained HTML file (styles, script, data and screenshots inline; a
//! Content-Security-Policy that forbids every network request) that a browser opens from disk.
//! The page is `host/assets/report.html`; the data is [`super::timeline::collect`]'s.

use serde_json::Value;

use super::calls::Filter;
use crate::paths::DataDir;

/// The page, with a placeholder where the data goes.
const TEMPLATE: &str = include_str!("../../assets/report.html");
const PLACEHOLDER: &str = "/*NOVA_DATA*/";

/// The report of the store in `dir` for `filter`, and how many calls it shows (`nova report`, and
/// the settings page's "Open activity report").
pub fn of_store(dir: &DataDir, filter: &Filter, with_screenshots: bool) -> anyhow::Result<(String, usize)> {
    let conn = crate::store::open_existing(&dir.db())?;
    let redactor = super::redact::Redactor::for_data_dir(dir);
    let data = super::timeline::collect(&conn, dir, filter, &redactor, with_screenshots)?;
    let calls = data["calls"].as_array().map_or(0, Vec::len);
    Ok((render(&data), calls))
}

/// The report page for `data`.
pub fn render(data: &Value) -> String {
    // Inside <script type="application/json">: no `<` may appear, or `</script>` in a page title
    // would end the element. `\u003c` is the same character to JSON.parse.
    let json = data.to_string().replace('<', "\\u003c");
    TEMPLATE.replacen(PLACEHOLDER, &json, 1)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn data_cannot_break_out_of_its_script_element() {
        let page = render(&json!({"calls": [{"url": "https://x.test/</script><script>alert(1)</script>"}]}));
        assert_eq!(page.matches("</script>").count(), TEMPLATE.matches("</script>").count());
        assert!(page.contains("\\u003c/script>"));
        assert!(!page.contains(PLACEHOLDER));
    }

    #[test]
    fn the_page_asks_for_nothing_over_the_network() {
        assert!(TEMPLATE.contains("default-src 'none'"));
        for needle in ["http://", "https://", "src=\"//", "@import", "url("] {
            assert!(!TEMPLATE.contains(needle), "the template references {needle}");
        }
    }
}
