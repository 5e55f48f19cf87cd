//! django-two-factor-auth, from PyPI, on a stock Django project (`django-admin startproject`,
//! SQLite): its sign-in asks for the password, then, on a new page at the same address, for the
//! code of the user's authenticator (TOTP). The project adds only what the package's
//! documentation asks for (its apps, the OTP middleware, its URLs); the superuser gets a TOTP
//! device with a known key, named `default` as the package's own setup wizard names it (the
//! sign-in asks only for that device's code), so the test can compute the code the person would
//! read off their phone. Nothing of the application is ours: the tests drive its pages and read
//! its database.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::django::{self, ADMIN_PASSWORD, ADMIN_USER, Django};
use super::{Judge, Step, run};
use crate::agent::Agent;

/// The package's release installed, and the Django release beside it (as in [`super::django`]).
pub const VERSION: &str = "1.18.1";
/// The TOTP device's key (hex): RFC 6238's test key.
const KEY: &str = "3132333435363738393031323334353637383930";

/// What the stock project's settings get, as the package's documentation says.
const SETTINGS: &str = r#"
INSTALLED_APPS += ["django_otp", "django_otp.plugins.otp_static", "django_otp.plugins.otp_totp", "two_factor"]
MIDDLEWARE.insert(MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1,
                  "django_otp.middleware.OTPMiddleware")
LOGIN_URL = "two_factor:login"
LOGIN_REDIRECT_URL = "two_factor:profile"
"#;

/// The project's URLs: the package's, and the admin.
const URLS: &str = r#"from django.contrib import admin
from django.urls import include, path
from two_factor.urls import urlpatterns as tf_urls

urlpatterns = [path("", include(tf_urls)), path("admin/", admin.site.urls)]
"#;

/// The interpreter of the virtualenv with Django and the package, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    let django = format!("Django=={}", super::django::VERSION);
    let package = format!("django-two-factor-auth=={VERSION}");
    super::pip_install_set_once(
        &format!("django-two-factor-auth {VERSION}"),
        &format!("django-two-factor-auth-{VERSION}"),
        &[&django, &package],
    )
}

/// A running project, and the interpreter that computes the user's codes.
pub struct TwoFactor {
    python: PathBuf,
    /// The project, served (its URLs, its database, its log).
    pub django: Django,
}

impl TwoFactor {
    /// Installs the package if needed, makes the project and its superuser with a TOTP device,
    /// and serves it.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let adjust = |project: &Path| {
            let settings = project.join("demo/settings.py");
            let stock = std::fs::read_to_string(&settings)?;
            std::fs::write(&settings, stock + SETTINGS)?;
            std::fs::write(project.join("demo/urls.py"), URLS)?;
            Ok(())
        };
        let device = format!(
            "from django_otp.plugins.otp_totp.models import TOTPDevice; \
             from django.contrib.auth.models import User; \
             TOTPDevice.objects.create(user=User.objects.get(username='{ADMIN_USER}'), name='default', \
             key='{KEY}', confirmed=True)"
        );
        let django = Django::start_project(&python, django::STARTPROJECT, adjust, Some(&device)).await?;
        Ok(Self { python, django })
    }

    /// The code the user's authenticator shows now (computed by the package's own library).
    pub fn code(&self) -> anyhow::Result<String> {
        let script =
            format!("from django_otp.oath import totp; print(f'{{totp(bytes.fromhex(\"{KEY}\")):06d}}')");
        Ok(run(Command::new(&self.python).args(["-c", &script]))?.trim().to_owned())
    }
}

/// The two-step sign-in of a compliant agent: a wrong password, then the right one, which must
/// not be called a sign-in (the code is asked for); a wrong code, then the right one, which
/// signs in. The database says who is signed in: Django sets `auth_user.last_login` only when
/// the sign-in completes. Every verdict, `urlAfter` and that count are checked here; `after`
/// sees each guarded step too.
pub async fn journey(
    app: &TwoFactor,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const LOGIN: &str = "nova.guarded_login";
    const SUBMIT: &str = "nova.guarded_submit_form";
    let (codes, app) = (app, &app.django);
    let mut judge = Judge { after, log: &|| app.log(), count: &|sql| app.count(sql) };
    let signed_in = "SELECT COUNT(*) FROM auth_user WHERE last_login IS NOT NULL";
    let login = app.url("/account/login/");
    a.visit(&login).await?;

    let r = a.call(LOGIN, json!({"username": ADMIN_USER, "password": "not-the-password"})).await?;
    judge.step(
        ("sign_in_wrong", LOGIN, a.calls_of(LOGIN)),
        r,
        "verified_fail",
        login.clone(),
        (signed_in, 0),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(LOGIN, json!({"username": ADMIN_USER, "password": ADMIN_PASSWORD})).await?;
    anyhow::ensure!(r.0["reasonCode"] == "guarded_commit.ambiguous_signal", "the code is asked for: {}", r.0);
    let said = r.0["message"].as_str().unwrap_or_default();
    anyhow::ensure!(
        said.contains("asks for a second factor") && r.0["field"].is_string(),
        "the reply names the code field: {}",
        r.0
    );
    judge.step(
        ("sign_in_code_asked", LOGIN, a.calls_of(LOGIN)),
        r,
        "indeterminate",
        login.clone(),
        (signed_in, 0),
    )?;

    let code = codes.code()?;
    let wrong = if code == "000000" { "111111" } else { "000000" };
    let field = "input[autocomplete=one-time-code]";
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, json!({"fields": {field: wrong}})).await?;
    judge.step(
        ("submit_invalid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        login.clone(),
        (signed_in, 0),
    )?;
    // django-otp refuses any code for a second after a wrong one (its throttling).
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, json!({"fields": {field: codes.code()?}})).await?;
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/account/two_factor/"),
        (signed_in, 1),
    )
}
