//! Every real application installed in one call: `cargo xtask test` runs it in the background
//! while it builds, so the downloads do not hold up the tests (each test still installs what it
//! needs itself when it is missing).

use std::path::PathBuf;

use anyhow::Context;

use super::{
    canaille, chainlit, deep_chat, django, gradio, ihatemoney, jingo, mediawiki, nicegui, shiny, streamlit,
    tiddlywiki, trac, two_factor, wagtail,
};

/// One application's installer: the path the application is started from.
type Install = fn() -> anyhow::Result<PathBuf>;

/// Installs every application that is not installed yet, one after another, in the order the
/// tests first start them; the first failure stops it.
pub fn ensure_all_installed() -> anyhow::Result<()> {
    let installs: [(&str, Install); 15] = [
        ("Canaille", canaille::ensure_installed),
        ("Chainlit", chainlit::ensure_installed),
        ("Deep Chat", deep_chat::ensure_installed),
        ("django-two-factor-auth", two_factor::ensure_installed),
        ("Gradio", gradio::ensure_installed),
        ("NiceGUI", nicegui::ensure_installed),
        ("Shiny", shiny::ensure_installed),
        ("Streamlit", streamlit::ensure_installed),
        ("Django", django::ensure_installed),
        ("I Hate Money", ihatemoney::ensure_installed),
        ("Jingo", jingo::ensure_installed),
        ("MediaWiki", mediawiki::ensure_installed),
        ("TiddlyWiki", tiddlywiki::ensure_installed),
        ("Trac", trac::ensure_installed),
        ("Wagtail", wagtail::ensure_installed),
    ];
    for (name, install) in installs {
        install().with_context(|| format!("installing {name}"))?;
    }
    Ok(())
}
