//! Wagtail, the Django content management system, from PyPI: the project `wagtail start`
//! makes (a home page model, given a rich text body as the first step of Wagtail's tutorial
//! does; SQLite), with a superuser, served by Django's development server on loopback. Its page
//! editor is a script-heavy admin (Stimulus controllers, React panels): a page's address (its
//! slug) is made from its title by a script a moment after the title is typed, the body is a
//! Draftail rich text editor (Draft.js), the publish button lies in a menu, a failed save marks
//! the tabs holding the errors, and its image upload lays a transparent file input over the
//! button a person clicks. Nothing of the application is ours: the tests only drive its admin
//! and read its database.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::django::{ADMIN_PASSWORD, ADMIN_USER, Django};
use super::{Judge, Step, line_of, read_text_until, read_until, ref_of, refused_without_contract};
use crate::agent::Agent;

/// The Wagtail release installed.
pub const VERSION: &str = "8.0.1";

/// The interpreter of the virtualenv with Wagtail (and the Django it requires), installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Wagtail", "wagtail", VERSION)
}

/// The arguments to Python that make Wagtail's starter project, `demo`, in the current
/// directory (what `wagtail start demo .` does).
const START: &[&str] = &["-m", "wagtail.bin.wagtail", "start", "demo", "."];

/// The home page model of the starter project with a rich text body, as the first step of
/// Wagtail's tutorial gives it: the editor types it in Draftail (Draft.js, a `contenteditable`
/// that keeps its own model of the text and redraws the page from it).
const HOME_MODEL: &str = r#"from wagtail.fields import RichTextField
from wagtail.models import Page


class HomePage(Page):
    body = RichTextField(blank=True)

    content_panels = Page.content_panels + ["body"]
"#;

/// The id of the site's home page in a new project (the tree's root is 1; the page Wagtail's
/// first migration makes is replaced by the project's home page).
const HOME: i64 = 3;

/// A running Wagtail with its own project directory and database.
pub struct Wagtail {
    /// The Django project it is.
    pub django: Django,
}

impl Wagtail {
    /// Installs Wagtail if needed, makes the starter project (its home page model given a body:
    /// [`HOME_MODEL`]) and a superuser, and serves it.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let body = |project: &Path| {
            std::fs::write(project.join("home/models.py"), HOME_MODEL)?;
            super::run(
                Command::new(&python).args(["manage.py", "makemigrations", "home"]).current_dir(project),
            )?;
            Ok(())
        };
        let django = Django::start_project(&python, START, body, None).await?;
        Ok(Self { django })
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        self.django.url(path)
    }
}

/// The editor's journey of a compliant agent: sign-in wrong and right; a new page saved as a
/// draft with no title (refused: the title and the address are required), then with its title
/// and a body of two lines (typed into Draftail) in the same form, published from the editor's
/// menu, and deleted from its other menu (refused without a contract, then asked and
/// confirmed); an image uploaded through the file input laid over its button, then retitled.
/// Every verdict, `urlAfter` and the database after each step are checked here; `after` sees
/// each guarded step too.
pub async fn journey(
    app: &Wagtail,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    let sessions = "SELECT COUNT(*) FROM django_session";
    let mut judge = Judge { after, log: &|| app.django.log(), count: &|sql| app.django.count(sql) };

    let login = app.url("/admin/login/?next=/admin/");
    a.visit(&login).await?;
    // Its sign-in form posts to the sign-in page without the page asked for.
    let landings = (app.url("/admin/login/"), app.url("/admin/"));
    judge.sign_in(a, (Some(ADMIN_USER), ADMIN_PASSWORD), landings, (sessions, (0, 1))).await?;

    let add = app.url(&format!("/admin/pages/add/home/homepage/{HOME}/"));
    a.visit(&add).await?;
    let page = a.step("nova.perceive", json!({})).await?;
    let save = ref_of(&page, r#"button "Save draft""#)?;
    let r = a.call(SUBMIT, json!({"submitSelector": save})).await?;
    let pages = "SELECT COUNT(*) FROM wagtailcore_page";
    judge.step(
        ("draft_untitled", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        add.clone(),
        (pages, 2),
    )?;

    // The agent reads what went wrong and types the title into the form it was shown again,
    // and two lines into the body's rich text editor (named by its label, as a person reads it);
    // the page makes the address from the title, as it does for a person.
    let page = a.step("nova.perceive", json!({})).await?;
    anyhow::ensure!(
        page["text"].as_str().is_some_and(|t| t.contains("could not be created due to validation errors")),
        "the failed save is not told: {}",
        page["text"]
    );
    let title = ref_of(&page, r#"textbox "Title*""#)?;
    let save = ref_of(&page, r#"button "Save draft""#)?;
    let body = ref_of(&page, r#"textbox "Body""#)?;
    let fields = json!({ title: "Opening hours", body: "Open daily from 9 to 5.\nClosed on Sundays." });
    let r = a.call(SUBMIT, json!({"fields": fields, "submitSelector": save})).await?;
    // The body is kept as Draftail's model holds it: once, its line break a `<br/>`.
    let drafts = "SELECT COUNT(*) FROM wagtailcore_page p JOIN home_homepage h ON h.page_ptr_id = p.id \
                  WHERE p.slug = 'opening-hours' AND p.live = 0 \
                  AND h.body LIKE '<p data-block-key=\"%\">Open daily from 9 to 5.<br/>Closed on Sundays.</p>'";
    let id = HOME + 1;
    let edit = app.url(&format!("/admin/pages/{id}/edit/"));
    judge.step(("draft_titled", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", edit, (drafts, 1))?;

    // Publishing is in the menu beside "Save draft". The saved page shows the body it keeps.
    let page = a.step("nova.perceive", json!({})).await?;
    line_of(&page, r#"textbox "Body" value="Open daily from 9 to 5. Closed on Sundays.""#)?;
    let more = ref_of(&page, r#"button "More actions""#)?;
    a.step("nova.click_selector", json!({"selector": more})).await?;
    let page = read_until(a, "the publish button", |r| ref_of(r, r#"button "Publish""#).is_ok()).await?;
    let publish = ref_of(&page, r#"button "Publish""#)?;
    let r = a.call(SUBMIT, json!({"submitSelector": publish})).await?;
    let live = "SELECT COUNT(*) FROM wagtailcore_page WHERE slug = 'opening-hours' AND live = 1";
    let explorer = app.url(&format!("/admin/pages/{HOME}/"));
    judge.step(
        ("publish", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        explorer.clone(),
        (live, 1),
    )?;

    // Deleting is in the editor's "Actions" menu, a link to a page that asks first.
    a.visit(&app.url(&format!("/admin/pages/{id}/edit/"))).await?;
    let page = a.step("nova.perceive", json!({})).await?;
    let actions = ref_of(&page, r#"button "Actions""#)?;
    a.step("nova.click_selector", json!({"selector": actions})).await?;
    let page = read_until(a, "the delete link", |r| ref_of(r, r#"link "Delete""#).is_ok()).await?;
    let delete = ref_of(&page, r#"link "Delete""#)?;
    refused_without_contract(&a.call("nova.click_selector", json!({"selector": delete})).await?, "a delete")?;
    let to_confirm = json!({
        "actionKind": "custom",
        "postconditions": {"success": {"all": [
            {"factKey": "dom.text(main)", "operator": "contains", "expected": "Are you sure"}
        ]}},
    });
    let r =
        a.call("nova.click_selector", json!({"selector": delete, "transitionContract": to_confirm})).await?;
    let confirm = app.url(&format!("/admin/pages/{id}/delete/"));
    let pages = "SELECT COUNT(*) FROM wagtailcore_page WHERE slug = 'opening-hours'";
    judge.step(
        ("delete_ask", "nova.click_selector", a.calls_of("nova.click_selector")),
        r,
        "verified_success",
        confirm,
        (pages, 1),
    )?;
    let page = a.step("nova.perceive", json!({})).await?;
    let yes = ref_of(&page, "Yes, delete")?;
    let r = a.call(SUBMIT, json!({"submitSelector": yes})).await?;
    judge.step(
        ("delete_confirm", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        explorer,
        (pages, 0),
    )?;

    // An image, chosen from the button "Or choose from your computer" as a person does: the
    // click is refused for the transparent file input laid over the button, whose selector takes
    // the file. Wagtail uploads it at once and asks for a better title, saved in the background
    // while the upload's own success note still shows.
    let add = app.url("/admin/images/multiple/add/");
    a.visit(&add).await?;
    let page = a.step("nova.perceive", json!({})).await?;
    let choose = ref_of(&page, r#"button "Or choose from your computer""#)?;
    let (r, failed) = a.call("nova.click_selector", json!({"selector": choose})).await?;
    anyhow::ensure!(
        failed && r["reasonCode"] == "file_input_click" && r["actionDispatched"] == false,
        "the button under the file input must point to nova.file_upload: {r}"
    );
    let input = r["fileUploadSelectorHint"].as_str().unwrap_or_default();
    let image = json!([{"name": "storefront.png", "mimeType": "image/png", "contentBase64": DOT_PNG}]);
    a.step("nova.file_upload", json!({"selector": input, "files": image})).await?;
    read_text_until(a, "Upload successful").await?;
    anyhow::ensure!(
        app.django.count("SELECT COUNT(*) FROM wagtailimages_image WHERE title = 'storefront'")? == 1,
        "the image must be uploaded once, titled after its file"
    );
    let page = a.step("nova.perceive", json!({})).await?;
    let title = ref_of(&page, r#"textbox "Title*""#)?;
    let update = ref_of(&page, r#"button "Update""#)?;
    let r =
        a.call(SUBMIT, json!({"fields": {title: "Storefront at night"}, "submitSelector": update})).await?;
    let titled = "SELECT COUNT(*) FROM wagtailimages_image WHERE title = 'Storefront at night'";
    judge.step(("image_titled", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", add, (titled, 1))
}

/// A PNG of one pixel.
const DOT_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
