//! The readback of text a rich text editor took, once it drew it (README, `nova.type_selector`).
//!
//! An editor that takes the announced text ([`crate::taken`]) applies it to its model and draws
//! its element again when its framework renders: in a microtask (React 18, Lexical), or a task
//! later. The reply waits for that, a few short waits at most ([`read_back`]), so that its
//! readback shows what the editor holds; an editor slower than that keeps the warning that the
//! readback is early ([`NOT_DRAWN_YET`]).

use nova_shared::page::ActionReport;
use nova_shared::protocol::TypeParams;
use web_sys::HtmlElement;

use crate::dom;

/// The warning of a readback taken before the editor drew the text it took.
pub const NOT_DRAWN_YET: &str = "the editor took the text itself and did not show it yet when read back: read \
                                 the page to see what it holds before typing again";

/// How long each wait for the editor to draw lasts, in ms.
const WAIT_MS: f64 = 25.0;
/// How many waits, at most.
const WAITS: u32 = 4;

/// Whether the editable region `e` shows `text` (white space collapsed).
pub fn shows(e: &HtmlElement, text: &str) -> bool {
    dom::collapse(&e.inner_text()).contains(&dom::collapse(text))
}

/// Whether `report`'s readback was taken before the editor drew the text it took.
pub fn pending(report: &ActionReport) -> bool {
    report.warnings.iter().any(|w| w == NOT_DRAWN_YET)
}

/// Waits for the editor `p` typed into to draw the text it took, then reads it back again:
/// `report` with what the editor shows, and without the warning, once it shows the text.
pub async fn read_back(p: &TypeParams, mut report: ActionReport) -> ActionReport {
    for _ in 0..WAITS {
        crate::settle::sleep(WAIT_MS).await;
        let Ok(el) = dom::resolve(&p.selector) else { break };
        let Some(e) = dom::as_html(&el) else { break };
        if shows(e, &p.text) {
            report.readback = Some(e.inner_text());
            report.warnings.retain(|w| w != NOT_DRAWN_YET);
            break;
        }
    }
    report
}
