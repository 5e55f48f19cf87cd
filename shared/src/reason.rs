//! Reason codes produced by page-side code and the bridge. Host-only reason codes (gates, leases)
//! live next to the host code that emits them.

/// The selector matched nothing in the target document.
pub const ELEMENT_NOT_FOUND: &str = "element_not_found";
/// The selector could not be parsed (bad CSS or a dangling `>>>`).
pub const INVALID_SELECTOR: &str = "invalid_selector";
/// The element exists but is not rendered (display:none, visibility:hidden, zero size).
pub const ELEMENT_NOT_VISIBLE: &str = "element_not_visible";
/// The element is disabled (`disabled` attribute, `aria-disabled=true`, or a disabled fieldset).
pub const ELEMENT_DISABLED: &str = "element_disabled";
/// Another element sits on top of the target at its click point.
pub const ELEMENT_COVERED: &str = "element_covered";
/// The element cannot take text (not an input, textarea or contenteditable).
pub const ELEMENT_NOT_EDITABLE: &str = "element_not_editable";
/// The element is read-only.
pub const ELEMENT_READONLY: &str = "element_readonly";
/// The target tab does not exist (closed, or never existed).
pub const TARGET_NOT_FOUND: &str = "target_not_found";
/// The page cannot be scripted (browser-internal pages such as `chrome://`).
pub const PAGE_NOT_SCRIPTABLE: &str = "page_not_scriptable";
/// Navigation failed (DNS, refused connection, blocked URL scheme).
pub const NAVIGATION_FAILED: &str = "navigation_failed";
/// The browser did not answer in time.
pub const TIMEOUT: &str = "timeout";
/// The browser-side handler failed unexpectedly; the message says how.
pub const INTERNAL: &str = "internal_error";
/// The request method is not known to this extension version.
pub const UNKNOWN_METHOD: &str = "unknown_method";
/// The request parameters did not match the method's schema.
pub const BAD_PARAMS: &str = "bad_params";
/// The screenshot could not be captured (tab not visible, permissions).
pub const CAPTURE_FAILED: &str = "capture_failed";
/// A commit-point action (submit, send, login, pay, delete, confirm) without a transition
/// contract; blocked before dispatch.
pub const MISSING_CONTRACT: &str = "guarded_commit.missing_contract";
/// The document or frame being watched went away without a navigation to follow.
pub const FRAME_DESTROYED: &str = "frame_destroyed";
/// An action was handed to the page script of a frame and that frame or its document went away
/// before answering (an action may close its own frame: a consent dialog on "Reject"). The action
/// may have run: the page, not a resend, says whether it did. Never sent twice.
pub const GONE_AFTER_DISPATCH: &str = "page_gone_after_dispatch";
/// A click on a file input (or its label) was refused before dispatch: it would open a native
/// file chooser outside MCP visibility; `nova.file_upload` puts the files in instead.
pub const FILE_INPUT_CLICK: &str = "file_input_click";
/// A double-click on a commit point was refused before dispatch: its two presses would send,
/// submit or delete twice; one click (guarded) commits once.
pub const DOUBLE_CLICK_COMMIT: &str = "double_click_commit_point";
/// The browser asks for a user name and password for HTTP authentication in a dialog of its own
/// ([`crate::sign_in`]): the document asked for waits on it, or the browser gave up on it (a
/// headless browser shows no dialog). Only the person can answer it.
pub const HTTP_SIGN_IN: &str = "http_sign_in";
/// A playbook step's element is outside the surface its `maxScope` allows.
pub const PKS_OUTSIDE_SCOPE: &str = "pks.outside_scope";
