//! Sign-out controls known by their name: a link or button a person reads as "Log out" or
//! "Sign out", whatever its address or markup. `core.login_state` counts those that show
//! besides the adapter's `login.loggedIn` selectors, which know sign-out controls by their
//! address (a link to `/logout`, a form posting to one) and by test ids and accessible labels
//! (docs/ok.md); `page.signOut` counts hidden ones too (docs/cls.md).

use crate::dom;

/// What a sign-out control says, lowercase, each between bars (the XPath below looks for
/// `|its text|` in this list, so only the whole text counts: "Log out" but not "Why log out?").
const NAMES: &str = "|log out|logout|log-out|log off|logoff|sign out|signout|sign-out|sign off|";

thread_local! {
    /// [`xpath`], built once: it is asked on every `core.login_state` read of a page whose
    /// adapter selectors find no sign-out (every signed-out page's read).
    static XPATH: String = xpath();
}

/// Links, buttons and menu items whose whole text, and submit or button inputs whose value,
/// is one of [`NAMES`], case aside.
fn xpath() -> String {
    let named = |text: &str| {
        format!(
            "[contains('{NAMES}', concat('|', translate(normalize-space({text}), \
             'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), '|'))]"
        )
    };
    format!(
        "//*[self::a or self::button or @role='button' or @role='menuitem']{} \
         | //input[@type='submit' or @type='button']{}",
        named("."),
        named("@value")
    )
}

/// How many matches are looked at for one that shows, at most.
const LOOK_AT: u32 = 10;

/// Whether one of the first [`LOOK_AT`] controls named like signing out ([`NAMES`]) passes `keep`.
fn any(keep: impl Fn(&web_sys::Element) -> bool) -> bool {
    let Ok(doc) = dom::document() else { return false };
    let Ok(found) = XPATH.with(|x| doc.evaluate(x, &doc)) else { return false };
    (0..LOOK_AT)
        .map_while(|_| found.iterate_next().ok().flatten())
        .any(|node| dom::as_element(&node).is_some_and(&keep))
}

/// Whether the page shows a control named like signing out.
pub fn shown() -> bool {
    any(dom::is_visible)
}

/// Whether the document holds a control named like signing out, showing or not (one in a closed
/// account menu, say).
pub fn present() -> bool {
    any(|_| true)
}
