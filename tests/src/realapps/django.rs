//! The Django admin, from PyPI: a stock project (`django-admin startproject`) with SQLite, a
//! superuser, served by Django's own development server on loopback. Its admin has the
//! autocomplete pickers a deployment turns on with one line each (`autocomplete_fields`), which
//! Django draws with Select2. Nothing of the application is ours: the tests only drive its
//! admin pages and read its database.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::{
    Judge, Step, failed_observed, line_of, proven_by, read_until, ref_of, refused_without_contract, run,
};
use crate::agent::Agent;

/// The Django release installed (5.2 is the long-term support line).
pub const VERSION: &str = "5.2.19";
/// The superuser's name.
pub const ADMIN_USER: &str = "admin";
/// The superuser's password (a throwaway, local to the test's data directory).
pub const ADMIN_PASSWORD: &str = "correct-horse-battery-staple";

/// The interpreter of the virtualenv with Django, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Django", "Django", VERSION)
}

/// The project's URLs: the admin, with an autocomplete picker for a user's groups (several
/// choices) and for a permission's content type (one), configured as Django's documentation
/// shows (`ModelAdmin.autocomplete_fields`; the admin of the model picked needs
/// `search_fields`, which the stock group admin has).
const URLS: &str = r#"from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.urls import path


class PickingUserAdmin(UserAdmin):
    autocomplete_fields = ("groups",)
    filter_horizontal = ("user_permissions",)


@admin.register(ContentType)
class ContentTypeAdmin(admin.ModelAdmin):
    search_fields = ("app_label", "model")


@admin.register(Permission)
class PermissionAdmin(admin.ModelAdmin):
    autocomplete_fields = ("content_type",)


admin.site.unregister(User)
admin.site.register(User, PickingUserAdmin)
urlpatterns = [path("admin/", admin.site.urls)]
"#;

/// The arguments to Python that make Django's stock project, `demo`, in the current directory.
pub const STARTPROJECT: &[&str] = &["-m", "django", "startproject", "demo", "."];

/// The groups made with the project, for the groups picker to offer.
const GROUPS: &str = "from django.contrib.auth.models import Group; \
                      [Group.objects.create(name=n) for n in ('Reviewers', 'Translators')]";

/// Counts the server's sessions: one per person signed in.
const SESSIONS: &str = "SELECT COUNT(*) FROM django_session";

/// `python manage.py args` in the project at `project`.
fn manage(python: &Path, project: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(python);
    c.arg("manage.py").args(args).current_dir(project);
    c
}

/// A running Django admin with its own project directory and database.
pub struct Django {
    served: super::Served,
    /// The interpreter it runs with (for `manage.py` commands while it serves).
    python: PathBuf,
}

impl Django {
    /// Installs Django if needed, makes a project with its pickers, two groups and a
    /// superuser, and serves it.
    pub async fn start() -> anyhow::Result<Self> {
        let urls = |project: &Path| Ok(std::fs::write(project.join("demo/urls.py"), URLS)?);
        Self::start_project(&ensure_installed()?, STARTPROJECT, urls, Some(GROUPS)).await
    }

    /// Makes a project named `demo` with `python` running `make` (Django's stock one:
    /// [`STARTPROJECT`]), lets `adjust` change its files (settings, URLs) before its database
    /// is made, adds the superuser, runs `shell` (Python, in `manage.py shell`) if given, and
    /// serves it.
    pub async fn start_project(
        python: &Path,
        make: &[&str],
        adjust: impl FnOnce(&Path) -> anyhow::Result<()>,
        shell: Option<&str>,
    ) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let project = dir.path();
        let manage = |args: &[&str]| manage(python, project, args);
        run(Command::new(python).args(make).current_dir(project))?;
        adjust(project)?;
        run(&mut manage(&["migrate", "--noinput"]))?;
        run(manage(&[
            "createsuperuser",
            "--noinput",
            "--username",
            ADMIN_USER,
            "--email",
            "admin@example.org",
        ])
        .env("DJANGO_SUPERUSER_PASSWORD", ADMIN_PASSWORD))?;
        if let Some(script) = shell {
            run(&mut manage(&["shell", "-c", script]))?;
        }
        let port = super::free_port()?;
        let mut serve = manage(&["runserver", "--noreload", &format!("127.0.0.1:{port}")]);
        let served = super::Served::spawn(dir, port, &mut serve, "the Django server").await?;
        Ok(Self { served, python: python.to_owned() })
    }

    /// Ends every session on the server, as its administrator does (each person must sign in
    /// again), with Django's own session model.
    pub fn end_sessions(&self) -> anyhow::Result<()> {
        let script = "from django.contrib.sessions.models import Session; Session.objects.all().delete()";
        run(&mut manage(&self.python, &self.served.path(""), &["shell", "-c", script]))?;
        Ok(())
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.served.origin)
    }

    /// One integer from the application's database.
    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        self.served.count("db.sqlite3", sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// The admin journey of a compliant agent (who has loaded its bundle): sign-in wrong and right,
/// a form with a validation error and a valid one, one sent after the session ended
/// ([`signed_out`]), the same record again, a delete refused
/// without a contract and confirmed with one, then the autocomplete pickers ([`use_pickers`])
/// and a bulk delete ([`bulk_delete`]). Every verdict, `urlAfter` and the database after
/// each step are checked here; `after` sees each guarded step too (the store, timings).
pub async fn journey(
    app: &Django,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let groups = "SELECT COUNT(*) FROM auth_group WHERE name = 'Editors'";
    let mut judge = Judge { after, log: &|| app.log(), count: &|sql| app.count(sql) };
    const SUBMIT: &str = "nova.guarded_submit_form";

    let login = app.url("/admin/login/?next=/admin/");
    a.visit(&login).await?;
    let landings = (login.clone(), app.url("/admin/"));
    judge.sign_in(a, (Some(ADMIN_USER), ADMIN_PASSWORD), landings, (SESSIONS, (0, 1))).await?;

    let add = app.url("/admin/auth/group/add/");
    let save = json!("input[name=\"_save\"]");
    a.visit(&add).await?;
    let r = a.call(SUBMIT, json!({"submitSelector": save})).await?;
    judge.step(
        ("submit_invalid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        add.clone(),
        ("SELECT COUNT(*) FROM auth_group", 2),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let fields = json!({"#id_name": "Editors"});
    let r = a.call(SUBMIT, json!({"fields": fields, "submitSelector": save})).await?;
    // Proven by Django's own word ("was added successfully"), not by the new page alone.
    let proof = proven_by(&r.0);
    anyhow::ensure!(
        proof.iter().any(|k| k.starts_with("dom.exists(") && k.contains(".messagelist .success")),
        "submit_valid: proven by the success message: {proof:?}: {}",
        r.0
    );
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/admin/auth/group/"),
        (groups, 1),
    )?;

    signed_out(app, a, &mut judge).await?;

    a.visit(&add).await?;
    let r = a.call(SUBMIT, json!({"fields": fields, "submitSelector": save})).await?;
    judge.step(
        ("submit_duplicate", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        add.clone(),
        (groups, 1),
    )?;

    let id = app.count("SELECT id FROM auth_group WHERE name = 'Editors'")?;
    a.visit(&app.url(&format!("/admin/auth/group/{id}/change/"))).await?;
    refused_without_contract(
        &a.call("nova.click_selector", json!({"selector": "a.deletelink"})).await?,
        "a delete",
    )?;
    let to_confirm = json!({
        "actionKind": "custom",
        "postconditions": {"success": {"all": [
            {"factKey": "dom.exists(input[name=post])", "operator": "eq", "expected": true}
        ]}},
    });
    let r = a
        .call("nova.click_selector", json!({"selector": "a.deletelink", "transitionContract": to_confirm}))
        .await?;
    let confirm = app.url(&format!("/admin/auth/group/{id}/delete/"));
    judge.step(
        ("delete_ask", "nova.click_selector", a.calls_of("nova.click_selector")),
        r,
        "verified_success",
        confirm,
        (groups, 1),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, json!({"submitSelector": "input[type=submit]"})).await?;
    judge.step(
        ("delete_confirm", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/admin/auth/group/"),
        (groups, 0),
    )?;
    use_pickers(app, a, &mut judge).await
}

/// A form sent after the session ended: Django sends the browser to its sign-in page and saves
/// nothing, so the verdict is in doubt, not a success (the new page proves nothing); the agent
/// signs in again, lands back on the form (`next`), and sends it again, saved.
async fn signed_out<F: FnMut(&Step) -> anyhow::Result<()>>(
    app: &Django,
    a: &mut Agent,
    judge: &mut Judge<'_, F>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    const LOGIN: &str = "nova.guarded_login";
    let authors = "SELECT COUNT(*) FROM auth_group WHERE name = 'Authors'";
    let add = app.url("/admin/auth/group/add/");
    let send = json!({"fields": {"#id_name": "Authors"}, "submitSelector": "input[name=\"_save\"]"});
    a.visit(&add).await?;
    app.end_sessions()?;
    let r = a.call(SUBMIT, send.clone()).await?;
    let reason = &r.0["reasonCode"];
    anyhow::ensure!(reason == "guarded_commit.ambiguous_signal", "signed out: reasonCode {reason}: {}", r.0);
    let said = r.0["message"].as_str().unwrap_or_default();
    anyhow::ensure!(said.contains("asks to sign in"), "signed out: the message should say why: {said}");
    let state = failed_observed(&r.0, "core.login_state");
    anyhow::ensure!(state == "logged_out", "signed out: the doubt rests on the sign-in page: {}", r.0);
    let login = app.url("/admin/login/?next=/admin/auth/group/add/");
    judge.step(("submit_signed_out", SUBMIT, a.calls_of(SUBMIT)), r, "indeterminate", login, (authors, 0))?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(LOGIN, json!({"username": ADMIN_USER, "password": ADMIN_PASSWORD})).await?;
    judge.step(
        ("sign_in_again", LOGIN, a.calls_of(LOGIN)),
        r,
        "verified_success",
        add.clone(),
        (SESSIONS, 1),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, send).await?;
    judge.step(
        ("submit_again", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/admin/auth/group/"),
        (authors, 1),
    )
}

/// The autocomplete pickers (Select2), read and operated as a person does, each pick seen as
/// the picker's value and the form saved and judged on the database: a permission's content
/// type, found by typing in the search box of the list the picker opens; then the superuser's
/// groups, one picked from the opened list and one found by typing in the picker's own search
/// box; then a permission, with Django's own picker of two lists (`filter_horizontal`).
async fn use_pickers<F: FnMut(&Step) -> anyhow::Result<()>>(
    app: &Django,
    a: &mut Agent,
    judge: &mut Judge<'_, F>,
) -> anyhow::Result<()> {
    const CLICK: &str = "nova.click_selector";
    const SUBMIT: &str = "nova.guarded_submit_form";
    let save = json!({"submitSelector": "input[name=\"_continue\"]"});
    // The options are fetched from the server once the list opens, then on each filter typed.
    let searched = |read: &serde_json::Value, shown: &str| {
        ref_of(read, shown).is_ok() && ref_of(read, r#"option "Searching"#).is_err()
    };

    let permission = app.url("/admin/auth/permission/1/change/");
    let page = a.visit(&permission).await?;
    let picker = ref_of(&page, r#"combobox "Content type:" value="Administration | log entry""#)?;
    anyhow::ensure!(ref_of(&page, r#"textbox "Administration"#).is_err(), "the choice is read as a text box");
    // Typed into, the picker, named as the read names it, says how it is operated.
    let (r, failed) = a.call("nova.type_selector", json!({"selector": picker, "text": "group"})).await?;
    let told = r#"combobox \"Content type:\" is a picker and takes no typed text: click it to open its list"#;
    anyhow::ensure!(failed && r.to_string().contains(told), "typing into the picker: {r}");
    a.step(CLICK, json!({"selector": picker})).await?;
    let page =
        read_until(a, "the picker's search box", |r| ref_of(r, r#"searchbox "Content type:""#).is_ok())
            .await?;
    let search = ref_of(&page, r#"searchbox "Content type:""#)?;
    a.step("nova.type_selector", json!({"selector": search, "text": "group"})).await?;
    let group = r#"option "Authentication and Authorization | group""#;
    let page = read_until(a, "the content types found", |r| {
        searched(r, group) && ref_of(r, r#"option "Administration"#).is_err()
    })
    .await?;
    a.step(CLICK, json!({"selector": ref_of(&page, group)?})).await?;
    let page = a.step("nova.perceive", json!({})).await?;
    ref_of(&page, r#"combobox "Content type:" value="Authentication and Authorization | group""#)?;
    let r = a.call(SUBMIT, save.clone()).await?;
    let typed = "SELECT COUNT(*) FROM auth_permission p JOIN django_content_type t ON t.id = p.content_type_id \
                 WHERE p.id = 1 AND t.model = 'group'";
    judge.step(
        ("save_picked_one", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        permission,
        (typed, 1),
    )?;

    let user = app.url("/admin/auth/user/1/change/");
    let page = a.visit(&user).await?;
    // The split date and time boxes, under a label that labels neither, are named as a person
    // reads them: that label, then each box's own word.
    for field in ["Date joined: Date:", "Date joined: Time:"] {
        ref_of(&page, &format!(r#"textbox "{field}" value="#))?;
    }
    let picker = ref_of(&page, r#"combobox "Groups:""#)?;
    anyhow::ensure!(ref_of(&page, r#"combobox "Groups:" value="#).is_err(), "no group is chosen yet");
    anyhow::ensure!(ref_of(&page, r#"listbox "Groups:""#).is_err(), "the select Select2 hides is listed");
    a.step(CLICK, json!({"selector": picker})).await?;
    let translators = r#"option "Translators""#;
    let page = read_until(a, "the groups", |r| searched(r, translators)).await?;
    a.step(CLICK, json!({"selector": ref_of(&page, translators)?})).await?;
    let page = a.step("nova.perceive", json!({})).await?;
    ref_of(&page, r#"combobox "Groups:" value="Translators""#)?;
    let search = ref_of(&page, r#"searchbox "Groups:""#)?;
    a.step("nova.type_selector", json!({"selector": search, "text": "Rev"})).await?;
    let reviewers = r#"option "Reviewers""#;
    let page = read_until(a, "the groups found", |r| searched(r, reviewers)).await?;
    anyhow::ensure!(ref_of(&page, translators).is_err(), "the typed filter left other groups: {page}");
    // The agent says what shows once the pick took: the picker's value (its select's choices).
    let both = "Translators, Reviewers";
    let picked = json!({
        "actionKind": "custom",
        "postconditions": {"success": {"all": [
            {"factKey": format!("dom.value({picker})"), "operator": "eq", "expected": both}
        ]}},
    });
    let click = json!({"selector": ref_of(&page, reviewers)?, "transitionContract": picked});
    let (r, _) = a.call(CLICK, click).await?;
    let verdict = &r["guardedCommit"]["verificationStatus"];
    anyhow::ensure!(verdict == "verified_success", "picking a second group: {r}");
    let page = a.step("nova.perceive", json!({})).await?;
    ref_of(&page, &format!(r#"combobox "Groups:" value="{both}""#))?;
    let r = a.call(SUBMIT, save.clone()).await?;
    let members = "SELECT COUNT(*) FROM auth_user_groups WHERE user_id = 1";
    judge.step(
        ("save_picked_several", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        user.clone(),
        (members, 2),
    )?;

    // Django's own two-list picker (the user's permissions): an option chosen in the list of
    // those available, moved to the chosen ones with its button, then saved.
    let page = a.step("nova.perceive", json!({})).await?;
    let available = ref_of(&page, r#"listbox "Available user permissions"#)?;
    a.step("nova.type_selector", json!({"selector": available, "text": "Can add group"})).await?;
    let page = a.step("nova.perceive", json!({})).await?;
    a.step(CLICK, json!({"selector": ref_of(&page, r#"button "Choose selected user permissions""#)?}))
        .await?;
    let page = a.step("nova.perceive", json!({})).await?;
    let chosen = line_of(&page, r#"listbox "Chosen user permissions"#)?;
    anyhow::ensure!(
        chosen.ends_with("options=[Authentication and Authorization | group | Can add group]"),
        "the permission is not among the chosen: {chosen}"
    );
    let r = a.call(SUBMIT, save).await?;
    let granted = "SELECT COUNT(*) FROM auth_user_user_permissions WHERE user_id = 1";
    judge.step(
        ("save_chosen_permission", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        user,
        (granted, 1),
    )?;
    bulk_delete(app, a, judge).await
}

/// A bulk action from the list of groups: one group ticked, "Delete selected groups" chosen,
/// run with "Go" (the form posts to the list's own address and answers with a confirmation
/// page there), then confirmed (posting there again).
async fn bulk_delete<F: FnMut(&Step) -> anyhow::Result<()>>(
    app: &Django,
    a: &mut Agent,
    judge: &mut Judge<'_, F>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    let list = app.url("/admin/auth/group/");
    let reviewers = "SELECT COUNT(*) FROM auth_group WHERE name = 'Reviewers'";
    let page = a.visit(&list).await?;
    let tick = ref_of(&page, r#"checkbox "Select this object for an action - Reviewers""#)?;
    a.step("nova.click_selector", json!({"selector": tick})).await?;
    let page = a.step("nova.perceive", json!({})).await?;
    let action = ref_of(&page, r#"combobox "Action:""#)?;
    a.step("nova.type_selector", json!({"selector": action, "text": "Delete selected groups"})).await?;
    let r = a.call(SUBMIT, json!({"submitSelector": "button[name=\"index\"]"})).await?;
    // Chromium drops the answer of a form posting to its own page: the report is inferred,
    // and still says where the action was taken and on what.
    anyhow::ensure!(r.0["urlBefore"] == json!(list), "bulk_ask: urlBefore should be {list}: {}", r.0);
    anyhow::ensure!(
        r.0["element"].as_str().is_some_and(|e| !e.is_empty()),
        "bulk_ask: no element named: {}",
        r.0
    );
    judge.step(
        ("bulk_ask", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        list.clone(),
        (reviewers, 1),
    )?;
    let page = a.step("nova.perceive", json!({})).await?;
    anyhow::ensure!(
        page["text"]
            .as_str()
            .is_some_and(|t| t.contains("Are you sure you want to delete the selected group?")),
        "the confirmation is not shown: {}",
        page["text"]
    );
    let r = a.call(SUBMIT, json!({"submitSelector": "input[type=submit]"})).await?;
    judge.step(("bulk_confirm", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", list, (reviewers, 0))
}
