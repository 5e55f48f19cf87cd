//! The Nova extension, compiled to WebAssembly: one module with two entry points.
//!
//! # Layout
//! - [`bindings`]: every `chrome.*` API binding (and the Chromium/Firefox differences).
//! - [`background`]: the service worker: native port to the hub, tabs, navigation, screenshots,
//!   routing page work to content scripts. Entry points `bg_start`, `bg_event`.
//! - [`content`]: the content-script entry point `content_handle`; [`drawn`]: a read or an
//!   action on a young page that shows nothing yet waits for its first screen, and an action
//!   on a young page for its target to be drawn; [`settle`]: a
//!   read or an action waits, briefly, for the page's running animations to end, and an
//!   action for the page's answer to the typing just done; [`debounce`]: the pause a field
//!   declares before the page answers typing into it; [`changes`]:
//!   when the document last changed, for the waits that look for quiet.
//! - [`docrev`]: the document's revision, a counter of noticeable changes (loop detection).
//! - [`dom`]: selectors (`>>>`, refs), roles, names, visibility; [`attrs`]: which attributes an
//!   element carries, read in one call, so a walk asks only for those that are there.
//! - [`perceive`]: the compact page model and visible text; [`hint`]: what tells apart a
//!   control with no name (its icon, its id); [`proxied`]: a form control operated through
//!   what is drawn in its place (its label, or what it lies over, transparent);
//!   [`selectize`]: Selectize's picker (Shiny's), read as the combobox it is; [`select2`]:
//!   Select2's (Django admin's autocomplete), read as the picker of the select it hides;
//!   [`placed`]: boxes rendered where
//!   nobody sees them (off the page, screen-reader-only); [`drawing`]: SVG drawings (where
//!   their text is drawn, what is never drawn, which shapes act); [`seen`]: whether a person can see
//!   an element's text (font size, colour against its background, `clip-path`); [`covered`]:
//!   whether another element is painted over it, by hit tests; [`stacking`]: by the order CSS
//!   paints in (a box hit tests pass through, text outside the viewport); [`overflow`]: whether
//!   it lies outside a box around it that hides its overflow; [`shown`]: which of its lines
//!   such a box lets show; [`glued`]: whether a text goes on the word the text before it
//!   ended with (a code editor's tokens, each in an element of its own).
//! - [`actions`]: click, type and a `<select>`'s choice with pre-dispatch checks;
//!   [`edit_context`]: typing into an editor that reads an EditContext; [`taken`]: whether
//!   a rich text editor with a model of its own took what was typed; [`readback`]: the
//!   readback of what such an editor took, once it drew it; [`keys`]: the key
//!   events typing announces (the last key released, Enter pressed); [`listbox`]:
//!   choosing in a picker (one that is not a `<select>` is opened and its option waited for);
//!   [`leaving`]: whether an action
//!   started a navigation away from its document; [`order`]: selectors in document order (a
//!   form's fields filled top to bottom); [`submitter`]: the button that submits a field's form;
//!   [`modal`]: the modal dialog a person is confined to (a selector means its match there);
//!   [`asking`]: the dialogs that ask the person and hold a page's outcome until answered.
//! - [`tools`]: the page side of route, file upload and blocker dismissal; [`scan`]: a
//!   registered coverage scan of a frame.
//! - [`aware`]: awareness signals: identity / payment / consent overlays, autofill fields,
//!   native dialogs, frameworks, file-chooser clicks, challenge and geo-block texts.
//! - [`pks`]: applying stored site knowledge: probing a fingerprint, one playbook step held
//!   inside its surface, checks that the page is free again.
//! - [`collect`]: `chat.*`, `form.*` and `core.*` facts through adapters, with baselines;
//!   [`signout`]: sign-out controls known by their name, for `core.login_state`; [`shadows`]:
//!   the open shadow roots they are looked for in too (web-component chats); [`note`]: a
//!   note's text without its own dismiss control.
//! - [`watch`]: facts, assertion checks and the event-driven postcondition watch (CLS).
//! - [`timing`]: the extension's stage timings on a response, for the hub's stage timings.
//! - [`ui`]: the person's pages: popup (STOP, agents, activity), options, permission prompt.
//!
//! The JavaScript in `extension/static/` only loads this module and forwards browser events.

#![warn(missing_docs)]

pub mod actions;
pub mod asking;
pub mod attrs;
pub mod aware;
pub mod background;
pub mod bindings;
pub mod changes;
pub mod collect;
pub mod colour;
pub mod content;
pub mod covered;
pub mod debounce;
pub mod docrev;
pub mod dom;
pub mod drawing;
pub mod drawn;
pub mod edit_context;
pub mod glued;
pub mod hint;
pub mod keys;
pub mod leaving;
pub mod listbox;
pub mod modal;
pub mod note;
pub mod order;
pub mod overflow;
pub mod perceive;
pub mod pks;
pub mod placed;
pub mod proxied;
pub mod readback;
pub mod scan;
pub mod seen;
pub mod select2;
pub mod selectize;
pub mod settle;
pub mod shadows;
pub mod shown;
pub mod signout;
pub mod stacking;
pub mod submitter;
pub mod taken;
pub mod timing;
pub mod tools;
pub mod ui;
pub mod watch;
