//! Support tooling (docs/support.md): what support staff and the person use to see what really
//! happened, and to share it without leaking a secret. Reads the store; never changes it.
//!
//! - [`calls`]: the calls as support sees them, and the filters of `nova log`; [`when`]: the
//!   times `--since` / `--until` take.
//! - [`log`]: `nova log` (table, JSON, JSON lines, `--follow`); [`show`]: `nova log show`, one
//!   call in full.
//! - [`timeline`]: the report's data; [`report`]: the self-contained HTML page.
//! - [`redact`]: what never leaves in a report or bundle; [`export`]: the store as JSON lines;
//!   [`bundle`]: `nova bundle`, the support archive.
//! - [`check`]: `nova store check` and `nova store backup`.

pub mod bundle;
pub mod calls;
pub mod check;
pub mod export;
pub mod log;
pub mod redact;
pub mod report;
pub mod show;
pub mod timeline;
pub mod when;
