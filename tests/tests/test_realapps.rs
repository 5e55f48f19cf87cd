//! Nova on real web applications that nobody on the Nova team wrote, installed from the package
//! registries (`nova_e2e::realapps`). A compliant agent at the product's default gate settings
//! drives them through the guarded macros; every verdict must be definitive and right, `urlAfter`
//! and the stored `url_after` must name where the action landed, and the application's own
//! database must hold each record exactly once.

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use nova_e2e::realapps::Step;
use nova_e2e::realapps::django::{self, Django};
use nova_e2e::realapps::mediawiki::{self, MediaWiki};
use serde_json::json;

/// The evidence store names where each action landed, as the reply does.
fn stored_where_it_landed(nova: &Nova, step: &Step) -> anyhow::Result<()> {
    let rows = nova.tool_rows(step.tool, step.nth)?;
    let row = rows.get(step.nth - 1).cloned().unwrap_or_default();
    anyhow::ensure!(row["url_after"] == json!(step.landed), "{}: stored url_after: {row}", step.kind);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn django_admin_sign_in_forms_a_duplicate_and_a_confirmed_delete() -> anyhow::Result<()> {
    let app = Django::start().await?;
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "django-agent").await?;
    a.ready().await?;
    let mut steps = Vec::new();
    django::journey(&app, &mut a, |step| {
        stored_where_it_landed(&nova, step)?;
        steps.push(step.kind);
        Ok(())
    })
    .await?;
    assert_eq!(steps.len(), 7, "{steps:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn mediawiki_sign_in_accounts_a_taken_name_and_a_confirmed_delete() -> anyhow::Result<()> {
    let wiki = MediaWiki::start().await?;
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "wiki-agent").await?;
    a.ready().await?;
    let mut steps = Vec::new();
    mediawiki::journey(&wiki, &mut a, |step| {
        stored_where_it_landed(&nova, step)?;
        steps.push(step.kind);
        Ok(())
    })
    .await?;
    assert_eq!(steps.len(), 6, "{steps:?}");
    Ok(())
}
