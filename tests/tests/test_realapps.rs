//! Nova on real web applications that nobody on the Nova team wrote, installed from the package
//! registries (`nova_e2e::realapps`). A compliant agent at the product's default gate settings
//! drives them through the guarded macros; every verdict must be definitive and right, `urlAfter`
//! and the stored `url_after` must name where the action landed, and the application's own
//! database must hold each record exactly once.

use nova_e2e::agent::Agent;
use nova_e2e::realapps::Step;
use nova_e2e::realapps::canaille::{self, Canaille};
use nova_e2e::realapps::django::{self, Django};
use nova_e2e::realapps::fava::{self, Fava};
use nova_e2e::realapps::ihatemoney::{self, IHateMoney};
use nova_e2e::realapps::jingo::{self, Jingo};
use nova_e2e::realapps::jupyterlab::{self, JupyterLab};
use nova_e2e::realapps::mediawiki::{self, MediaWiki};
use nova_e2e::realapps::mlflow::{self, Mlflow};
use nova_e2e::realapps::node_red::{self, NodeRed};
use nova_e2e::realapps::prefect::{self, Prefect};
use nova_e2e::realapps::radicale::{self, Radicale};
use nova_e2e::realapps::sqlite_web::{self, SqliteWeb};
use nova_e2e::realapps::tiddlywiki::{self, TiddlyWiki};
use nova_e2e::realapps::trac::{self, Trac};
use nova_e2e::realapps::two_factor::{self, TwoFactor};
use nova_e2e::realapps::wagtail::{self, Wagtail};
use nova_e2e::realapps::{chainlit, chat, deep_chat, gradio, nicegui, shiny, streamlit};
use nova_e2e::ui::Ui;
use nova_e2e::{BrowserKind, Nova, sight};
use serde_json::json;

/// Type of the step hook a journey calls.
type After<'a> = &'a mut dyn FnMut(&Step) -> anyhow::Result<()>;

/// Runs `journey` with a compliant agent at default gates, checking that the evidence store
/// names where each guarded step landed, as the reply does, that a verified sign-in is what
/// operational knowledge holds (and one stopped at a one-time code is not), that a form in
/// doubt because its page then asked to sign in says so in `nova log`, and that `expected`
/// steps were judged;
/// then visits `pages` and checks that what Nova reads of each loses no text a person sees, and
/// that none of the journey's `secrets` (passwords typed) is anywhere in Nova's data directory.
async fn drive(
    (agent, secrets): (&'static str, &[&str]),
    expected: &[&str],
    journey: impl AsyncFnOnce(&mut Agent, After<'_>, &Ui) -> anyhow::Result<()>,
    pages: &[String],
) -> anyhow::Result<()> {
    let nova = Nova::start_with_ui().await?;
    let mut a = Agent::new(&nova, agent).await?;
    a.ready().await?;
    let mut steps = Vec::new();
    let mut after = |step: &Step| {
        let rows = nova.tool_rows(step.tool, step.nth)?;
        let row = rows.get(step.nth - 1).cloned().unwrap_or_default();
        anyhow::ensure!(row["url_after"] == json!(step.landed), "{}: stored url_after: {row}", step.kind);
        if step.kind == "sign_in_right" {
            let held = nova.ok_facts("core.login_state")?;
            anyhow::ensure!(held == [(json!("logged_in"), "system".into())], "signed in, OK holds {held:?}");
        }
        if step.kind == "submit_signed_out" {
            // Support staff see why it is in doubt (docs/support.md).
            let id = step.reply["guardedCommit"]["transitionId"].as_str().unwrap_or_default();
            let rows = nova.log_rows(&["--tool", step.tool])?;
            let row = rows.iter().find(|r| r.transition_id.as_deref() == Some(id));
            let seen = row.map(|r| (r.outcome.as_str(), r.reason.as_deref()));
            anyhow::ensure!(
                seen == Some(("in_doubt", Some("sign_in_asked"))),
                "signed out: nova log reads {row:?}"
            );
        }
        if step.kind == "sign_in_code_asked" {
            let held = nova.ok_facts("core.login_state")?;
            anyhow::ensure!(
                !held.iter().any(|(v, _)| v == "logged_in"),
                "a code is asked, OK holds {held:?}"
            );
        }
        steps.push(step.kind);
        Ok(())
    };
    let ui = nova.ui().await?;
    journey(&mut a, &mut after, &ui).await?;
    assert_eq!(steps, expected);
    for url in pages {
        let landed =
            a.step("nova.navigate", json!({"url": url})).await?["url"].as_str().unwrap_or(url).to_owned();
        let tab = ui.wait_window(&landed, std::time::Duration::from_secs(10)).await?;
        sight::reads_lose_nothing(&mut a, &tab, &landed).await?;
    }
    drop(a);
    for secret in secrets {
        anyhow::ensure!(
            !nova.data_holds(secret)?,
            "`{secret}`, typed by the agent, is in Nova's data directory"
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn django_admin_sign_in_forms_a_duplicate_a_confirmed_delete_and_its_pickers() -> anyhow::Result<()> {
    let app = Django::start().await?;
    let steps = [
        "sign_in_wrong",
        "sign_in_right",
        "submit_invalid",
        "submit_valid",
        "submit_signed_out",
        "sign_in_again",
        "submit_again",
        "submit_duplicate",
        "delete_ask",
        "delete_confirm",
        "save_picked_one",
        "save_picked_several",
        "save_chosen_permission",
        "bulk_ask",
        "bulk_confirm",
    ];
    let pages = [
        "/admin/",
        "/admin/auth/group/",
        "/admin/auth/group/add/",
        "/admin/auth/user/",
        "/admin/auth/user/1/change/",
        "/admin/auth/permission/1/change/",
    ]
    .map(|p| app.url(p));
    drive(
        ("django-agent", &[django::ADMIN_PASSWORD]),
        &steps,
        async |a, after, _| django::journey(&app, a, after).await,
        &pages,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn wagtail_editor_publishes_a_page_titled_after_a_refused_draft_and_uploads_an_image_from_its_button()
-> anyhow::Result<()> {
    let app = Wagtail::start().await?;
    let steps = [
        "sign_in_wrong",
        "sign_in_right",
        "draft_untitled",
        "draft_titled",
        "publish",
        "delete_ask",
        "delete_confirm",
        "image_titled",
    ];
    let pages = [
        "/admin/",
        "/admin/pages/3/",
        "/admin/pages/add/home/homepage/3/",
        "/admin/pages/4/edit/",
        "/admin/images/",
        "/admin/images/multiple/add/",
    ]
    .map(|p| app.url(p));
    drive(
        ("wagtail-agent", &[django::ADMIN_PASSWORD]),
        &steps,
        async |a, after, _| wagtail::journey(&app, a, after).await,
        &pages,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_django_sign_in_with_a_second_factor_is_done_only_once_the_code_is_taken() -> anyhow::Result<()> {
    let app = TwoFactor::start().await?;
    let steps = ["sign_in_wrong", "sign_in_code_asked", "submit_invalid", "submit_valid"];
    let pages = ["/account/login/", "/account/two_factor/"].map(|p| app.django.url(p));
    drive(
        ("two-factor-agent", &[django::ADMIN_PASSWORD]),
        &steps,
        async |a, after, _| two_factor::journey(&app, a, after).await,
        &pages,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_canaille_sign_in_that_asks_the_account_first_is_judged_on_both_pages() -> anyhow::Result<()> {
    let app = Canaille::start().await?;
    let steps =
        ["sign_in_unknown", "sign_in_wrong", "sign_in_right", "password_page_wrong", "password_page_right"];
    let pages = ["/login", &format!("/profile/{}", canaille::USER)].map(|p| app.url(p));
    drive(
        ("canaille-agent", &[canaille::PASSWORD]),
        &steps,
        async |a, after, _| canaille::journey(&app, a, after).await,
        &pages,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn mediawiki_sign_in_accounts_a_taken_name_and_a_confirmed_delete() -> anyhow::Result<()> {
    let wiki = MediaWiki::start().await?;
    let steps = [
        "sign_in_wrong",
        "sign_in_right",
        "submit_invalid",
        "submit_duplicate",
        "submit_valid",
        "delete_confirm",
    ];
    let pages = [
        wiki.article("Special:RecentChanges"),
        wiki.article("Special:ListUsers"),
        wiki.article("Special:Preferences"),
        wiki.article("Special:Version"),
    ];
    drive(
        ("wiki-agent", &[mediawiki::ADMIN_PASSWORD]),
        &steps,
        async |a, after, _| mediawiki::journey(&wiki, a, after).await,
        &pages,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn radicale_signs_in_and_creates_an_address_book_on_a_page_that_never_reloads() -> anyhow::Result<()> {
    let app = Radicale::start().await?;
    let steps = ["sign_in_wrong", "sign_in_right", "submit_valid", "submit_duplicate"];
    let pages = [app.home()];
    drive(
        ("radicale-agent", &[radicale::PASSWORD]),
        &steps,
        async |a, after, _| radicale::journey(&app, (a, BrowserKind::from_env()), after).await,
        &pages,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_web_signs_in_with_a_password_alone_and_refuses_a_duplicate_title() -> anyhow::Result<()> {
    let app = SqliteWeb::start().await?;
    let steps = [
        "sign_in_wrong",
        "sign_in_right",
        "submit_valid",
        "submit_duplicate",
        "submit_invalid",
        "submit_valid",
        "delete_ask",
        "delete_confirm",
    ];
    let pages = ["/", "/book/", "/book/content/", "/book/query/", "/book/insert/"].map(|p| app.url(p));
    drive(
        ("sqlite-web-agent", &[sqlite_web::PASSWORD]),
        &steps,
        async |a, after, _| sqlite_web::journey(&app, a, after).await,
        &pages,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn jingo_sign_in_pages_a_taken_title_and_a_confirmed_delete() -> anyhow::Result<()> {
    let app = Jingo::start().await?;
    let steps = [
        "sign_in_wrong",
        "sign_in_right",
        "submit_invalid",
        "submit_valid",
        "submit_valid",
        "submit_duplicate",
        "delete_confirm",
    ];
    let pages = ["/wiki/Drafts", "/wiki", "/wiki/Drafts/history", "/pages/new", "/pages/Drafts/edit"]
        .map(|p| app.url(p));
    let journey = async |a: &mut Agent, after: After<'_>, ui: &Ui| {
        // The person's view of the agent's tab, to answer Jingo's confirmation dialog.
        let home = app.url("/login");
        a.visit(&home).await?;
        let tab = ui.wait_window(&home, std::time::Duration::from_secs(10)).await?;
        tab.watch_dialogs().await?;
        jingo::journey(&app, a, after, async || tab.accept_dialog().await).await
    };
    drive(("jingo-agent", &[jingo::ADMIN_PASSWORD]), &steps, journey, &pages).await
}

#[tokio::test(flavor = "multi_thread")]
async fn tiddlywiki_saves_an_entry_from_its_sliding_editor_and_a_confirmed_delete() -> anyhow::Result<()> {
    let app = TiddlyWiki::start().await?;
    let steps = ["submit_valid", "delete_confirm"];
    let journey = async |a: &mut Agent, after: After<'_>, ui: &Ui| {
        // The person's view of the agent's tab, to answer TiddlyWiki's confirmation dialog.
        let home = app.home();
        a.visit(&home).await?;
        let tab = ui.wait_window(&home, std::time::Duration::from_secs(10)).await?;
        tab.watch_dialogs().await?;
        tiddlywiki::journey(&app, a, after, async || tab.accept_dialog().await).await
    };
    drive(("tiddlywiki-agent", &[]), &steps, journey, &[app.home()]).await
}

#[tokio::test(flavor = "multi_thread")]
async fn ihatemoney_forms_in_a_dialog_a_select_and_a_delete_that_asks_in_its_button() -> anyhow::Result<()> {
    let app = IHateMoney::start().await?;
    let steps = [
        "submit_invalid",
        "submit_valid",
        "submit_valid",
        "submit_duplicate",
        "submit_valid",
        "submit_invalid",
        "submit_valid",
        "delete_ask",
        "delete_confirm",
        "sign_out",
        "sign_in_wrong",
        "sign_in_right",
    ];
    let pages = ["/trip/", "/trip/settle_bills", "/trip/statistics", "/trip/add"].map(|p| app.url(p));
    drive(
        ("ihatemoney-agent", &[ihatemoney::PROJECT_CODE]),
        &steps,
        async |a, after, _| ihatemoney::journey(&app, a, after).await,
        &pages,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gradio_chat_is_judged_on_what_its_server_received() -> anyhow::Result<()> {
    let app = gradio::start().await?;
    drive(
        ("gradio-agent", &[]),
        &CHAT_STEPS,
        async |a, after, _| chat::journey(&app, a, chat::Picker::Shown, after).await,
        &[app.home()],
    )
    .await
}

/// The steps of [`chat::journey`].
const CHAT_STEPS: [&str; 4] = ["send_reply", "switch_model", "send_switched", "send_failed"];

#[tokio::test(flavor = "multi_thread")]
async fn a_streamlit_chat_is_judged_on_what_its_server_received() -> anyhow::Result<()> {
    let app = streamlit::start().await?;
    drive(
        ("streamlit-agent", &[]),
        &CHAT_STEPS,
        async |a, after, _| chat::journey(&app, a, chat::Picker::Shown, after).await,
        &[app.home()],
    )
    .await
}

/// NiceGUI's Quasar chat: replies are Quasar's received messages, a failure its negative
/// notification, the model a Quasar select whose focus target is a transparent input.
#[tokio::test(flavor = "multi_thread")]
async fn a_nicegui_chat_is_judged_on_what_its_server_received() -> anyhow::Result<()> {
    let app = nicegui::start().await?;
    drive(
        ("nicegui-agent", &[]),
        &CHAT_STEPS,
        async |a, after, _| chat::journey(&app, a, chat::Picker::Shown, after).await,
        &[app.home()],
    )
    .await
}

/// Shiny for Python's chat (shinychat): a reply streamed into the conversation, the model in a
/// Selectize picker beside it, a failure an error notification.
#[tokio::test(flavor = "multi_thread")]
async fn a_shiny_chat_is_judged_on_what_its_server_received() -> anyhow::Result<()> {
    let app = shiny::start().await?;
    drive(
        ("shiny-agent", &[]),
        &CHAT_STEPS,
        async |a, after, _| chat::journey(&app, a, chat::Picker::Shown, after).await,
        &[app.home()],
    )
    .await
}

/// Deep Chat's web component: the whole chat inside its shadow root, a reply streamed as
/// Server-Sent Events into a bubble, a failure its error bubble; the model a `<select>` on the
/// page around it.
#[tokio::test(flavor = "multi_thread")]
async fn a_deep_chat_web_component_is_judged_on_what_its_server_received() -> anyhow::Result<()> {
    let app = deep_chat::start().await?;
    drive(
        ("deep-chat-agent", &[]),
        &CHAT_STEPS,
        async |a, after, _| chat::journey(&app, a, chat::Picker::Shown, after).await,
        &[app.home()],
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chainlit_chat_is_judged_on_what_its_server_received() -> anyhow::Result<()> {
    let app = chainlit::start().await?;
    drive(
        ("chainlit-agent", &[]),
        &CHAT_STEPS,
        async |a, after, ui| {
            chat::journey(&app, a, chat::Picker::InDialog(&chainlit::SETTINGS), after).await?;
            // Chainlit keeps its pane at the latest message: by now the first is scrolled away.
            let tab = ui.wait_window(&app.home(), std::time::Duration::from_secs(10)).await?;
            chat::first_scrolled_away_is_read(a, &tab).await
        },
        &[app.home()],
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn trac_files_a_ticket_after_a_refusal_and_comments_after_a_colleague_changed_it() -> anyhow::Result<()>
{
    let app = Trac::start().await?;
    let steps = [
        "create_untitled",
        "create_titled",
        "comment_collided",
        "comment_saved",
        "resolve",
        "prefs_refused",
        "prefs_saved",
    ];
    let pages = ["/newticket", "/ticket/1", "/report/1", "/timeline", "/prefs"].map(|p| app.url(p));
    drive(("trac-agent", &[]), &steps, async |a, after, _| trac::journey(&app, a, after).await, &pages).await
}

#[tokio::test(flavor = "multi_thread")]
async fn mlflow_creates_from_a_dialog_sent_by_its_footer_and_proves_nothing_from_its_badges()
-> anyhow::Result<()> {
    let app = Mlflow::start().await?;
    let steps = ["submit_unproven", "submit_valid", "submit_duplicate"];
    let pages = [app.url("/#/experiments")];
    drive(("mlflow-agent", &[]), &steps, async |a, after, _| mlflow::journey(&app, a, after).await, &pages)
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn prefect_creates_from_a_dialog_proven_by_its_toast_and_refused_in_the_dialogs_own_line()
-> anyhow::Result<()> {
    let app = Prefect::start().await?;
    let steps = ["submit_valid", "submit_duplicate"];
    let pages = [app.url("/v2/variables")];
    drive(("prefect-agent", &[]), &steps, async |a, after, _| prefect::journey(&app, a, after).await, &pages)
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn fava_adds_an_entry_from_a_modal_dialog_proven_by_its_notification_and_refused_in_another()
-> anyhow::Result<()> {
    let app = Fava::start().await?;
    let steps = ["submit_valid", "submit_refused"];
    let pages = [app.url("/household/journal/")];
    drive(("fava-agent", &[]), &steps, async |a, after, _| fava::journey(&app, a, after).await, &pages).await
}

#[tokio::test(flavor = "multi_thread")]
async fn node_red_deploys_a_flow_proven_by_its_notification_refused_after_a_colleague_s_merged_then_renamed()
-> anyhow::Result<()> {
    let app = NodeRed::start().await?;
    let steps = ["submit_valid", "submit_refused", "submit_merged", "submit_renamed"];
    let pages = [app.home()];
    drive(
        ("node-red-agent", &[]),
        &steps,
        async |a, after, _| node_red::journey(&app, a, after).await,
        &pages,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn jupyterlab_runs_cells_proven_by_their_output_and_saves_once_its_question_is_answered()
-> anyhow::Result<()> {
    let app = JupyterLab::start().await?;
    let steps = ["run_printed", "run_raised", "save_asked", "save_overwritten"];
    let pages = [app.home()];
    drive(
        ("jupyterlab-agent", &[]),
        &steps,
        async |a, after, _| jupyterlab::journey(&app, a, after).await,
        &pages,
    )
    .await
}
