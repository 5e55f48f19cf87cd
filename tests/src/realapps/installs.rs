//! Every real application installed in one call: `cargo xtask test` runs it in the background
//! while it builds, so the downloads do not hold up the tests (each test still installs what it
//! needs itself when it is missing).

use std::path::PathBuf;

use super::{
    canaille, chainlit, deep_chat, django, fava, gradio, ihatemoney, jingo, jupyterlab, mediawiki, mlflow,
    nicegui, node_red, prefect, radicale, shiny, sqlite_web, streamlit, tiddlywiki, trac, two_factor,
    wagtail,
};

/// Installs every application that is not installed yet, one after another, in the order the
/// tests first start them; the first failure stops it (each installer names its application in
/// what it prints and in its error).
pub fn ensure_all_installed() -> anyhow::Result<()> {
    let installs: [fn() -> anyhow::Result<PathBuf>; 22] = [
        canaille::ensure_installed,
        chainlit::ensure_installed,
        deep_chat::ensure_installed,
        two_factor::ensure_installed,
        gradio::ensure_installed,
        nicegui::ensure_installed,
        shiny::ensure_installed,
        streamlit::ensure_installed,
        django::ensure_installed,
        ihatemoney::ensure_installed,
        sqlite_web::ensure_installed,
        radicale::ensure_installed,
        jingo::ensure_installed,
        mediawiki::ensure_installed,
        tiddlywiki::ensure_installed,
        trac::ensure_installed,
        wagtail::ensure_installed,
        mlflow::ensure_installed,
        prefect::ensure_installed,
        fava::ensure_installed,
        node_red::ensure_installed,
        jupyterlab::ensure_installed,
    ];
    for install in installs {
        install()?;
    }
    Ok(())
}
