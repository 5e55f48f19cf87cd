//! Adapters: declarative selector sets per kind of page (chat, form, login, picker, account).
//! The generic heuristics are data (`shared/adapters/generic.json`, compiled in); site-specific
//! sets are data files matched by URL, and every selector they leave out falls back to the
//! generic one. The page-side collectors read `chat.*`, `form.*` and `core.*` facts through the
//! adapter the host chose; the guarded macros find their controls through it.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// The generic adapter's source.
pub const GENERIC_JSON: &str = include_str!("../adapters/generic.json");

/// A selector field as written in an adapter file: one selector list, or a list of conventions,
/// each with where it comes from (how `generic.json` documents every entry). Either way the
/// adapter holds one comma-separated selector list, tried alternative by alternative.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Selectors {
    /// `"a, b"`.
    Css(String),
    /// `[{"css": "a", "from": "..."}]`.
    Conventions(Vec<Convention>),
}

/// One convention of the web: a selector and where it comes from.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Convention {
    /// The selector (may end in `:visible`).
    pub css: String,
    /// Where the convention comes from (framework, design system, standard).
    pub from: String,
}

fn selectors<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<Selectors>::deserialize(d)?.map(|w| match w {
        Selectors::Css(css) => css,
        Selectors::Conventions(list) => list.iter().map(|c| c.css.as_str()).collect::<Vec<_>>().join(", "),
    }))
}

/// Chat pages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Chat {
    /// The message composer.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub composer: Option<String>,
    /// The send control (absent: Enter sends).
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub send: Option<String>,
    /// Every message turn.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub messages: Option<String>,
    /// Assistant turns.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub assistant: Option<String>,
    /// Visible while a reply streams.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub streaming: Option<String>,
    /// Error banners.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub error_banner: Option<String>,
}

/// Forms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Form {
    /// The submit control.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub submit: Option<String>,
    /// A confirmation shown after a successful submit.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub success: Option<String>,
    /// An error note the page shows about the whole submit (a flash message, an alert: "Invalid
    /// password", "Please correct the errors below").
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub error_note: Option<String>,
    /// Inline validation messages / invalid fields.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub validation_error: Option<String>,
}

/// Login pages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Login {
    /// The user-name / e-mail field.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub username: Option<String>,
    /// The password field.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub password: Option<String>,
    /// The sign-in control.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub submit: Option<String>,
    /// Something only a signed-in user sees (a log-out link, the account menu).
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub logged_in: Option<String>,
    /// A field asking for a second factor once the password is accepted (a one-time code): the
    /// sign-in is not finished while it shows.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub second_factor: Option<String>,
}

/// Model pickers and workspace switchers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Picker {
    /// The model picker control.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub model: Option<String>,
    /// Shows the active model (its text or value).
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub model_selected: Option<String>,
    /// Every model on offer.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub model_options: Option<String>,
    /// The workspace / sandbox switcher.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub workspace: Option<String>,
}

/// Account details shown on the page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Account {
    /// The signed-in user's name.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub display_name: Option<String>,
    /// The signed-in user's e-mail.
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub email: Option<String>,
    /// The plan label (Free, Pro, Team, ...).
    #[serde(default, deserialize_with = "selectors", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Selectors>")]
    pub plan: Option<String>,
}

/// One adapter. Selectors may end in `:visible` (first visible match).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Adapter {
    /// Adapter name (`generic`, `acme-chat`, ...).
    pub name: String,
    /// Substring the page URL must contain; empty for the generic adapter.
    #[serde(default)]
    pub url_contains: String,
    /// The service the pages it matches belong to (an OK service key such as `acme`); pages
    /// no adapter names a service for get a well-known name or their host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Chat selectors.
    #[serde(default)]
    pub chat: Chat,
    /// Form selectors.
    #[serde(default)]
    pub form: Form,
    /// Login selectors.
    #[serde(default)]
    pub login: Login,
    /// Picker selectors.
    #[serde(default)]
    pub picker: Picker,
    /// Account selectors.
    #[serde(default)]
    pub account: Account,
}

fn or(site: &mut Option<String>, generic: &Option<String>) {
    if site.is_none() {
        site.clone_from(generic);
    }
}

impl Adapter {
    /// Whether this adapter applies to `url`.
    pub fn matches(&self, url: &str) -> bool {
        self.url_contains.is_empty() || url.contains(&self.url_contains)
    }

    /// This adapter with every selector it leaves out taken from `generic`.
    pub fn over(mut self, generic: &Adapter) -> Adapter {
        let (c, g) = (&mut self.chat, &generic.chat);
        for (s, d) in [
            (&mut c.composer, &g.composer),
            (&mut c.send, &g.send),
            (&mut c.messages, &g.messages),
            (&mut c.assistant, &g.assistant),
            (&mut c.streaming, &g.streaming),
            (&mut c.error_banner, &g.error_banner),
        ] {
            or(s, d);
        }
        let (f, g) = (&mut self.form, &generic.form);
        for (s, d) in [
            (&mut f.submit, &g.submit),
            (&mut f.success, &g.success),
            (&mut f.error_note, &g.error_note),
            (&mut f.validation_error, &g.validation_error),
        ] {
            or(s, d);
        }
        let (l, g) = (&mut self.login, &generic.login);
        for (s, d) in [
            (&mut l.username, &g.username),
            (&mut l.password, &g.password),
            (&mut l.submit, &g.submit),
            (&mut l.logged_in, &g.logged_in),
            (&mut l.second_factor, &g.second_factor),
        ] {
            or(s, d);
        }
        let (p, g) = (&mut self.picker, &generic.picker);
        for (s, d) in [
            (&mut p.model, &g.model),
            (&mut p.model_selected, &g.model_selected),
            (&mut p.model_options, &g.model_options),
            (&mut p.workspace, &g.workspace),
        ] {
            or(s, d);
        }
        let (a, g) = (&mut self.account, &generic.account);
        for (s, d) in
            [(&mut a.display_name, &g.display_name), (&mut a.email, &g.email), (&mut a.plan, &g.plan)]
        {
            or(s, d);
        }
        self
    }
}

/// The generic adapter (the compiled-in heuristics).
pub fn generic() -> Adapter {
    // The file is part of the build and covered by a unit test; an empty adapter is the
    // conservative fallback should it ever fail to parse.
    serde_json::from_str(GENERIC_JSON).unwrap_or_default()
}

/// The adapter for `url`: the first site-specific adapter matching it, completed by the generic
/// one; the generic one alone when no site adapter matches.
pub fn choose(site: &[Adapter], url: &str) -> Adapter {
    let generic = site.iter().find(|a| a.url_contains.is_empty()).cloned().unwrap_or_else(generic);
    match site.iter().find(|a| !a.url_contains.is_empty() && a.matches(url)) {
        Some(a) => a.clone().over(&generic),
        None => generic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generic_adapter_parses_and_has_every_section() {
        let g: Adapter = serde_json::from_str(GENERIC_JSON).expect("generic.json");
        assert_eq!(g.name, "generic");
        assert!(g.url_contains.is_empty());
        assert!(g.chat.composer.is_some() && g.form.validation_error.is_some());
        assert!(g.login.password.is_some() && g.picker.model_selected.is_some());
        assert!(g.account.display_name.is_some());
    }

    #[test]
    fn site_adapters_win_and_fall_back_to_the_generic_selectors() {
        let site: Adapter = serde_json::from_str(
            r##"{"name":"acme","urlContains":"chat.acme","chat":{"composer":"#acme-input"}}"##,
        )
        .expect("site adapter");
        let all = [site];
        let chosen = choose(&all, "https://chat.acme/c/1");
        assert_eq!(chosen.name, "acme");
        assert_eq!(chosen.chat.composer.as_deref(), Some("#acme-input"));
        assert_eq!(chosen.chat.assistant, generic().chat.assistant, "left out -> generic");
        assert_eq!(choose(&all, "https://other.test/").name, "generic");
        assert!(serde_json::from_str::<Adapter>(r#"{"name":"x","bogus":1}"#).is_err());
        assert!(serde_json::from_str::<Adapter>(r#"{"name":"x","chat":{"composr":"a"}}"#).is_err());
        let listed: Adapter = serde_json::from_str(
            r##"{"name":"x","form":{"errorNote":[{"css":".a","from":"A"},{"css":".b:visible","from":"B"}]}}"##,
        )
        .expect("conventions");
        assert_eq!(listed.form.error_note.as_deref(), Some(".a, .b:visible"));
        let back: Adapter =
            serde_json::from_value(serde_json::to_value(&listed).expect("json")).expect("again");
        assert_eq!(back, listed, "what the host sends the page reads back the same");
        assert!(
            serde_json::from_str::<Adapter>(r#"{"name":"x","form":{"errorNote":[{"css":".a","form":"A"}]}}"#)
                .is_err(),
            "a convention names where it comes from"
        );
    }
}
