//! Nova on real web applications that nobody on the Nova team wrote, installed from the package
//! registries (`nova_e2e::realapps`). A compliant agent at the product's default gate settings
//! drives them through the guarded macros; every verdict must be definitive and right, `urlAfter`
//! and the stored `url_after` must name where the action landed, and the application's own
//! database must hold each record exactly once.

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use nova_e2e::realapps::django::{ADMIN_PASSWORD, ADMIN_USER, Django};
use serde_json::{Value, json};

/// The verdict of a guarded call.
fn verdict(r: &Value) -> &str {
    r["guardedCommit"]["verificationStatus"].as_str().unwrap_or_default()
}

/// The stored row of the latest call of `tool`.
fn last_row(nova: &Nova, tool: &str) -> anyhow::Result<Value> {
    Ok(nova.tool_rows(tool, 1)?.pop().unwrap_or_default())
}

/// Checks the reply's and the store's URL after the call against `landed`.
fn landed_at(nova: &Nova, tool: &str, r: &Value, landed: &str) -> anyhow::Result<()> {
    anyhow::ensure!(r["urlAfter"] == json!(landed), "urlAfter should be {landed}: {r}");
    let row = last_row(nova, tool)?;
    anyhow::ensure!(row["url_after"] == json!(landed), "stored url_after should be {landed}: {row}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn django_admin_sign_in_forms_a_duplicate_and_a_confirmed_delete() -> anyhow::Result<()> {
    let app = Django::start().await?;
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "django-agent").await?;
    a.ready().await?;
    let sessions = "SELECT COUNT(*) FROM django_session";
    let groups = "SELECT COUNT(*) FROM auth_group WHERE name = 'Editors'";

    // Sign-in, wrong then right.
    let login = app.url("/admin/login/?next=/admin/");
    a.visit(&login).await?;
    let (r, _) =
        a.call("nova.guarded_login", json!({"username": ADMIN_USER, "password": "not-the-password"})).await?;
    anyhow::ensure!(verdict(&r) == "verified_fail", "a wrong password: {r}\n{}", app.log());
    landed_at(&nova, "nova.guarded_login", &r, &login)?;
    anyhow::ensure!(app.count(sessions)? == 0, "no session after a wrong password");
    a.step("nova.perceive", json!({})).await?;
    let r = a.step("nova.guarded_login", json!({"username": ADMIN_USER, "password": ADMIN_PASSWORD})).await?;
    anyhow::ensure!(verdict(&r) == "verified_success", "the right password: {r}");
    landed_at(&nova, "nova.guarded_login", &r, &app.url("/admin/"))?;
    anyhow::ensure!(app.count(sessions)? == 1, "one session after signing in");

    // A form with a validation error (the name is required), then a valid one.
    let add = app.url("/admin/auth/group/add/");
    let save = json!("input[name=\"_save\"]");
    a.visit(&add).await?;
    let (r, _) = a.call("nova.guarded_submit_form", json!({"submitSelector": save})).await?;
    anyhow::ensure!(verdict(&r) == "verified_fail", "an empty required field: {r}");
    landed_at(&nova, "nova.guarded_submit_form", &r, &add)?;
    anyhow::ensure!(app.count("SELECT COUNT(*) FROM auth_group")? == 0, "nothing saved");
    a.step("nova.perceive", json!({})).await?;
    let fields = json!({"#id_name": "Editors"});
    let (r, _) =
        a.call("nova.guarded_submit_form", json!({"fields": fields, "submitSelector": save})).await?;
    anyhow::ensure!(verdict(&r) == "verified_success", "a valid group: {r}\n{}", app.log());
    landed_at(&nova, "nova.guarded_submit_form", &r, &app.url("/admin/auth/group/"))?;
    anyhow::ensure!(app.count(groups)? == 1, "the group saved once");

    // The same record again: the application refuses the duplicate.
    a.visit(&add).await?;
    let (r, _) =
        a.call("nova.guarded_submit_form", json!({"fields": fields, "submitSelector": save})).await?;
    anyhow::ensure!(verdict(&r) == "verified_fail", "a duplicate name: {r}");
    landed_at(&nova, "nova.guarded_submit_form", &r, &add)?;
    anyhow::ensure!(app.count(groups)? == 1, "still one group");

    // A delete: refused without a contract, then confirmed with one.
    let id = app.count("SELECT id FROM auth_group WHERE name = 'Editors'")?;
    a.visit(&app.url(&format!("/admin/auth/group/{id}/change/"))).await?;
    let (r, failed) = a.call("nova.click_selector", json!({"selector": "a.deletelink"})).await?;
    anyhow::ensure!(
        failed && r["reasonCode"] == "guarded_commit.missing_contract",
        "a raw delete must be refused: {r}"
    );
    anyhow::ensure!(r["actionDispatched"] == false, "{r}");
    let confirm = app.url(&format!("/admin/auth/group/{id}/delete/"));
    let to_confirm = json!({
        "actionKind": "custom",
        "postconditions": {"success": {"all": [
            {"factKey": "dom.exists(input[name=post])", "operator": "eq", "expected": true}
        ]}},
    });
    let r = a
        .step("nova.click_selector", json!({"selector": "a.deletelink", "transitionContract": to_confirm}))
        .await?;
    anyhow::ensure!(verdict(&r) == "verified_success", "the confirmation page: {r}");
    landed_at(&nova, "nova.click_selector", &r, &confirm)?;
    anyhow::ensure!(app.count(groups)? == 1, "asking is not deleting");
    a.step("nova.perceive", json!({})).await?;
    let yes = json!("input[type=submit]");
    let r = a.step("nova.guarded_submit_form", json!({"submitSelector": yes})).await?;
    anyhow::ensure!(verdict(&r) == "verified_success", "the confirmed delete: {r}");
    landed_at(&nova, "nova.guarded_submit_form", &r, &app.url("/admin/auth/group/"))?;
    anyhow::ensure!(app.count(groups)? == 0, "the group is gone");
    Ok(())
}
