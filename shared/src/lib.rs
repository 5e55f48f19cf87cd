//! Types and pure logic shared by the Nova host (`nova`) and the Nova extension (WASM).
//!
//! # Layout
//! - [`protocol`]: the versioned envelope spoken over native messaging, its size limits, and the
//!   method names with their typed parameters and results.
//! - [`page`]: what page-side code returns: the compact page model of `nova.perceive`, text reads,
//!   click and type reports.
//! - [`selector`]: the `>>>` combinator grammar used by every selector (CSS plus descent into open
//!   shadow roots and same-origin iframes) and perceive refs.
//! - [`adapter`]: selector sets per kind of page (chat, form, ...), chosen by URL.
//! - [`cls`]: transition contracts, assertions and the evaluator (same code in page and host).
//! - [`facts`]: the fact-key grammar (`page.*`, `dom.*(SEL)`, collector namespaces).
//! - [`csp`]: whether a page's Content-Security-Policy forbids WebAssembly.
//! - [`injection`]: `promptInjectionWarning`, page text that addresses AI agents with orders.
//! - [`invisible`]: characters a browser draws as nothing (tag characters that smuggle text),
//!   taken out of what an agent reads.
//! - [`reason`]: reason codes that cross the host/extension boundary.
//! - [`sign_in`]: the browser's own sign-in dialog for HTTP authentication, which no page sees.
//! - [`ui`]: what the extension's popup, options and prompt pages and the hub say to each other.
//!
//! Nothing here does I/O: the crate compiles for the host and for `wasm32-unknown-unknown`.

#![warn(missing_docs)]

/// A frame id as the browser numbers them: 0 is the top frame; Chromium's fit in 32 bits,
/// Firefox's (process-qualified window ids) need more, and stay below 2^53 like every JS number.
pub type FrameId = i64;

pub mod adapter;
pub mod cls;
pub mod csp;
pub mod facts;
pub mod injection;
pub mod invisible;
pub mod page;
pub mod protocol;
pub mod reason;
pub mod selector;
pub mod sign_in;
pub mod ui;

/// Name of the native-messaging host, as registered with browsers.
pub const NATIVE_HOST_NAME: &str = "io.nova.host";

/// The Chromium extension id, pinned by the public key in `manifest/manifest.json`.
pub const CHROMIUM_EXTENSION_ID: &str = "cgmdkmgjapdamdnabcalmdadhdclnpgm";

/// The Firefox add-on id (`browser_specific_settings.gecko.id`).
pub const FIREFOX_ADDON_ID: &str = "nova@nova.io";
