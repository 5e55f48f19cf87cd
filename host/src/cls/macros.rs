//! Guarded macros: one call that builds the transition contract for a common commit point from
//! an adapter and runs it through the guarded flow. A caller's `transitionContract` refines the
//! built one (its assertions are added, its timing and policies win).

use std::collections::BTreeMap;

use nova_shared::cls::{ActionKind, Assertion, AssertionResult, AssertionSet, Operator, TransitionContract};
use nova_shared::page::PageModel;
use nova_shared::protocol::{
    CheckParams, CheckResult, ClickParams, ORDER_MAX_SELECTORS, OrderParams, OrderResult, PageAction,
    PerceiveParams, SelectParams, SubmitterParams, SubmitterResult, TabInfo, TypeParams, method,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::bridge::{BridgeError, DEFAULT_TIMEOUT};
use crate::call::{CallError, CallRecord, ToolReply};
use crate::cls::journal::caveat;
use crate::observation::flags;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// What the guarded macros reach.
pub struct Macros<'h> {
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// Guarded transitions (CLS).
    pub guard: crate::cls::engine::Guard<'h>,
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
    /// Tab leases.
    pub leases: &'h crate::lease::Leases,
    /// The data dir.
    pub data: &'h crate::paths::DataDir,
    /// Operational knowledge: a verified sign-in files the tab's login state.
    pub ok: &'h crate::ok::Knowledge,
}

impl<'h> From<&'h crate::hub::Hub> for Macros<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self {
            tabs: hub.tabs(),
            guard: crate::cls::engine::Guard::from(hub),
            bridge: &hub.bridge,
            leases: &hub.leases,
            data: &hub.data,
            ok: &hub.ok,
        }
    }
}

/// What every guarded macro shares in the tool registry: browser automation, a page
/// interaction that supplies input, behind fresh perception.
const fn guarded(tool: ToolDef) -> ToolDef {
    tool.bundles(&[Bundle::BrowserAutomation])
        .tob(
            crate::observation::ActionKind::Interact,
            "dom_node",
            flags::MUTATION_ATTEMPTED | flags::INPUT_SUPPLIED,
        )
        .page(PageUse::Acts { needs_perception: true })
}

crate::tool! {
    /// `nova.guarded_send_message` in the tool registry.
    pub static SEND_MESSAGE = guarded(ToolDef::new(
        "nova.guarded_send_message",
        "Send a chat message with outcome checks: types into the composer, sends, and verifies that \
         an assistant turn or stream started (or that an error banner appeared). Never re-sends.",
        registry::schema::<SendMessageArgs>,
        crate::handler!(Macros::guarded_send_message),
    ));
}

crate::tool! {
    /// `nova.guarded_login` in the tool registry.
    pub static LOGIN = guarded(ToolDef::new(
        "nova.guarded_login",
        "Sign in with outcome checks: fills the username and password fields, submits, and verifies \
         the login left the form (or reports the error shown); a sign-in that asks for the password \
         on a next page is followed there, one that asks for a password alone takes no username. \
         The password is never stored or logged.",
        registry::schema::<LoginArgs>,
        crate::handler!(Macros::guarded_login),
    ))
    .secrets(&["password"]);
}

crate::tool! {
    /// `nova.guarded_submit_form` in the tool registry.
    pub static SUBMIT_FORM = guarded(ToolDef::new(
        "nova.guarded_submit_form",
        "Fill and submit a form with outcome checks: success is a navigation or a success message; \
         validation errors or an error banner are a verified failure. Never submits twice.",
        registry::schema::<SubmitFormArgs>,
        crate::handler!(Macros::guarded_submit_form),
    ))
    .secrets(&["fields"]);
}

crate::tool! {
    /// `nova.guarded_switch_model` in the tool registry.
    pub static SWITCH_MODEL = guarded(ToolDef::new(
        "nova.guarded_switch_model",
        "Switch the model of an assistant with outcome checks: opens the model picker, chooses the \
         option and verifies the picker shows it; an upgrade dialog or error is a verified failure.",
        registry::schema::<SwitchArgs>,
        crate::handler!(Macros::guarded_switch, Picker::Model),
    ));
}

crate::tool! {
    /// `nova.guarded_switch_sandbox` in the tool registry.
    pub static SWITCH_SANDBOX = guarded(ToolDef::new(
        "nova.guarded_switch_sandbox",
        "Switch workspace / sandbox / project with outcome checks (like guarded_switch_model).",
        registry::schema::<SwitchArgs>,
        crate::handler!(Macros::guarded_switch, Picker::Sandbox),
    ));
}

crate::tool_args! {
    /// `nova.guarded_send_message` arguments.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct SendMessageArgs [tab, agent, refine] {
        /// The message.
        pub text: String,
        /// Composer selector, when the adapter's heuristics do not find it.
        #[serde(default)]
        pub composer_selector: Option<String>,
        /// Send-control selector, when the adapter's heuristics do not find it.
        #[serde(default)]
        pub send_selector: Option<String>,
    }
}

fn fact(key: &str, op: Operator, expected: Option<Value>) -> Assertion {
    Assertion { fact_key: key.into(), operator: op, expected, frame_id: None }
}

/// A built contract: success when any of `success` holds, failure when any of `forbidden` does.
fn outcome_contract(
    kind: ActionKind,
    success: Vec<Assertion>,
    forbidden: Vec<Assertion>,
) -> TransitionContract {
    TransitionContract {
        action_kind: kind,
        postconditions: nova_shared::cls::Postconditions {
            success: AssertionSet { any: success, ..Default::default() },
            forbidden: AssertionSet { any: forbidden, ..Default::default() },
            ambiguous: AssertionSet::default(),
        },
        ..Default::default()
    }
}

/// The built contract of a sign-in started on navigation epoch `epoch` (docs/cls.md, "Guarded
/// macros and adapters"). It failed when the password field is still asked for and the page
/// says so: it was re-rendered or replaced (a new document), shows an error note, or marks a
/// field invalid, and no sign-out control is shown. It succeeded when a sign-out control shows,
/// or the password field is gone, with no error note, no invalid field, no field asking for a
/// second factor and the page not at work (`page.busy`: a single-page application may hide its
/// form and show its signed-in frame while it still asks its server about the password): a
/// one-time code asked for leaves it unclear (the password was taken, the sign-in is not
/// finished).
pub fn login_contract(password: &str, marks: &nova_shared::adapter::Login, epoch: u32) -> TransitionContract {
    let second_factor = marks.second_factor.as_deref().map(|code| shows(code, true));
    // A sign-out control: the adapter's, or one named like it (`core.login_state`).
    let signed_in: Vec<Assertion> =
        marks.logged_in.as_deref().map(|mark| shows(mark, true)).into_iter().chain([signed(true)]).collect();
    let mut contract = outcome_contract(ActionKind::SubmitForm, Vec::new(), Vec::new());
    let post = &mut contract.postconditions;
    post.success = AssertionSet {
        any: signed_in.iter().cloned().chain([shows(password, false)]).collect(),
        forbidden: page_says_no().into_iter().chain(second_factor.clone()).chain([at_work()]).collect(),
        ..Default::default()
    };
    post.ambiguous = AssertionSet { any: second_factor.into_iter().collect(), ..Default::default() };
    post.forbidden = asked_again(password, epoch, signed_in);
    contract
}

/// Where a guarded reply names the assertions its verdict rests on.
#[derive(Clone, Copy)]
enum Bucket {
    /// `guardedCommit.heldAssertions`: what proved a success.
    Held,
    /// `guardedCommit.failedAssertions`: what failed it or left it ambiguous.
    Failed,
}

/// Whether `a` held as `reply`'s verdict was reached: it is in the reply's `bucket`, passed.
/// Read from the verdict itself, so the page is not asked again (and cannot have changed since).
fn held(reply: &ToolReply, bucket: Bucket, a: &Assertion) -> bool {
    let list = match bucket {
        Bucket::Held => "heldAssertions",
        Bucket::Failed => "failedAssertions",
    };
    let results = reply.structured["guardedCommit"][list].as_array().map_or(&[][..], Vec::as_slice);
    results
        .iter()
        .filter_map(|r| serde_json::from_value::<AssertionResult>(r.clone()).ok())
        .any(|r| r.passed && r.fact_key == a.fact_key && r.op == a.operator && r.expected == a.expected)
}

/// `dom.exists(selector)` is `is`.
fn shows(selector: &str, is: bool) -> Assertion {
    fact(&format!("dom.exists({selector})"), Operator::Eq, Some(json!(is)))
}

/// The page shows it is at work (`page.busy`): a loading screen, a spinner.
fn at_work() -> Assertion {
    fact("page.busy", Operator::Eq, Some(json!(true)))
}

/// The page says the input was not taken: an error note, or a field marked invalid.
fn page_says_no() -> [Assertion; 2] {
    [
        fact("form.errorNote", Operator::Exists, None),
        fact("form.validationErrors", Operator::Gt, Some(json!(0))),
    ]
}

/// A sign-in page refused what was sent: `field` is still asked for, and the page was replaced
/// (a new document after navigation epoch `epoch`), shows an error note or banner, or marks a
/// field invalid; unless one of `unless` shows.
fn asked_again(field: &str, epoch: u32, unless: Vec<Assertion>) -> AssertionSet {
    AssertionSet {
        all: vec![shows(field, true)],
        any: [fact("page.navEpoch", Operator::Gt, Some(json!(epoch)))]
            .into_iter()
            .chain(page_says_no())
            .chain([fact("chat.errorBanner", Operator::Exists, None)])
            .collect(),
        forbidden: unless,
    }
}

/// The built contract of the first page of a sign-in that asks for the user name alone and
/// the password on the next (identifier-first), started on navigation epoch `epoch`. It
/// succeeded when the password field shows, with no error note and no invalid field; a field
/// asking for a one-time code instead leaves it unclear (a sign-in by code); it failed when the
/// user-name field is still asked for and the page was replaced, shows an error note or banner,
/// or marks a field invalid, and no password field shows.
pub fn identifier_contract(
    user: &str,
    password: &str,
    marks: &nova_shared::adapter::Login,
    epoch: u32,
) -> TransitionContract {
    let mut contract = outcome_contract(ActionKind::SubmitForm, Vec::new(), Vec::new());
    let post = &mut contract.postconditions;
    post.success = AssertionSet {
        any: vec![shows(password, true)],
        forbidden: page_says_no().into(),
        ..Default::default()
    };
    post.ambiguous = AssertionSet {
        any: marks.second_factor.iter().map(|code| shows(code, true)).collect(),
        ..Default::default()
    };
    post.forbidden = asked_again(user, epoch, vec![shows(password, true)]);
    contract
}

/// The built contract of a form sent on navigation epoch `epoch` (docs/cls.md, "Guarded macros
/// and adapters"). It succeeded when a new page came or the success message (`mark`) shows; it
/// failed when the page shows an error note or banner or marks a field invalid. Sent from a
/// signed-in page (`signed_in`), a page that then asks to sign in leaves it unclear.
pub fn submit_contract(epoch: u32, mark: Option<&str>, signed_in: bool) -> TransitionContract {
    let success = [fact("page.navEpoch", Operator::Gt, Some(json!(epoch)))]
        .into_iter()
        .chain(mark.map(|m| shows(m, true)))
        .collect();
    let mut contract = outcome_contract(
        ActionKind::SubmitForm,
        success,
        vec![
            fact("form.validationErrors", Operator::Gt, Some(json!(0))),
            fact("form.errorNote", Operator::Exists, None),
            fact("chat.errorBanner", Operator::Exists, None),
        ],
    );
    if signed_in {
        contract.postconditions.ambiguous = sign_in_asked(mark);
    }
    contract
}

/// A form sent from a signed-in page came back asking to sign in: `core.login_state` reads
/// `logged_out` (a password field shows and no sign-out control does), and no success message
/// (`mark`) shows. The session ended before the form reached the server, which then saved
/// nothing, or the form itself signs out: the new page proves neither.
fn sign_in_asked(mark: Option<&str>) -> AssertionSet {
    AssertionSet {
        all: vec![signed(false)],
        forbidden: mark.map(|m| shows(m, true)).into_iter().collect(),
        ..Default::default()
    }
}

/// `core.login_state` is `logged_in` (`is`), or `logged_out`.
fn signed(is: bool) -> Assertion {
    let state = if is { "logged_in" } else { "logged_out" };
    fact("core.login_state", Operator::Eq, Some(json!(state)))
}

/// The built contract for sending a chat message.
pub fn send_message_contract() -> TransitionContract {
    outcome_contract(
        ActionKind::SendMessage,
        vec![
            fact("chat.assistantTurnCreated", Operator::Eq, Some(json!(true))),
            fact("chat.streamActive.started", Operator::Eq, Some(json!(true))),
        ],
        vec![fact("chat.errorBanner", Operator::Exists, None)],
    )
}

fn extend(into: &mut AssertionSet, from: AssertionSet) {
    into.all.extend(from.all);
    into.any.extend(from.any);
    into.forbidden.extend(from.forbidden);
}

/// Adds a caller's refinement to a built contract.
pub fn refine(mut built: TransitionContract, caller: Option<TransitionContract>) -> TransitionContract {
    let Some(c) = caller else { return built };
    extend(&mut built.preconditions, c.preconditions);
    extend(&mut built.postconditions.success, c.postconditions.success);
    extend(&mut built.postconditions.forbidden, c.postconditions.forbidden);
    extend(&mut built.postconditions.ambiguous, c.postconditions.ambiguous);
    built.retry_policy = c.retry_policy.or(built.retry_policy);
    built.ambiguity_policy = c.ambiguity_policy.or(built.ambiguity_policy);
    built.stability_window_ms = c.stability_window_ms.or(built.stability_window_ms);
    built.stability_ms = c.stability_ms.or(built.stability_ms);
    built
}

/// Whether a caller's refinement names its own success.
fn names_success(caller: Option<&TransitionContract>) -> bool {
    caller.is_some_and(|c| !c.postconditions.success.is_empty())
}

/// Tells an agent whose macro call ended in `no_signal_yet` on the built contract alone what
/// that contract counts as success (`seen_as`), and how to name another on a page that shows
/// something else (`elsewhere`, of which `example` is a sign).
fn explain_silence(
    mut reply: ToolReply,
    own_success: bool,
    [seen_as, elsewhere, example]: [&str; 3],
) -> ToolReply {
    if own_success || reply.structured["reasonCode"] != super::reason::NO_SIGNAL_YET {
        return reply;
    }
    let said = reply.structured["message"].as_str().unwrap_or_default().to_owned();
    reply.structured["message"] = json!(format!(
        "{said} This tool counts as success only {seen_as}; {elsewhere} needs \
         `transitionContract.postconditions.success.any` naming what changes there, for example \
         `dom.exists(SELECTOR)` of {example} (an entry in `success.all` must hold as well as the \
         tool's own signals, not instead of them)."
    ));
    reply
}

/// The reply to a page call that failed before the commit point: nothing was dispatched.
fn undispatched(e: &BridgeError) -> ToolReply {
    let mut reply = ToolReply::bridge_failure(e);
    reply.structured["actionDispatched"] = json!(false);
    reply
}

/// A sign-in's reply with its user-name page's step, when it had one (`userNameStep`).
fn with_first_step(mut reply: ToolReply, step: Option<Value>) -> ToolReply {
    if let Some(step) = step {
        reply.structured["userNameStep"] = step;
    }
    reply
}

/// The first element line of an enabled element matching `pred`.
fn find_line(page: &PageModel, pred: impl Fn(&str) -> bool) -> Option<&str> {
    page.elements.iter().map(String::as_str).find(|l| pred(l) && !l.ends_with(" disabled"))
}

/// The ref of the first element line matching `pred` (`e12 button "Send"` -> `e12`).
fn find_ref(page: &PageModel, pred: impl Fn(&str) -> bool) -> Option<String> {
    find_line(page, pred).and_then(|l| l.split(' ').next().map(str::to_owned))
}

/// Whether `page` shows the account `username` signs in to (in its visible text or a visible
/// field's value, case aside): the password page of an identifier-first sign-in.
fn shows_account(page: &PageModel, username: &str) -> bool {
    let wanted = username.trim().to_lowercase();
    !wanted.is_empty()
        && (page.text.to_lowercase().contains(&wanted)
            || page.elements.iter().any(|l| l.to_lowercase().contains(&format!("value=\"{wanted}"))))
}

/// Whether an element line (`e12 button "Send message"`) has the role `role` and a name with a
/// word starting with one of `words`. Only the name counts: not a nameless control's hints
/// (`e15 button testid="submit-button"`) nor what a field holds.
fn named_like(line: &str, role: &str, words: &[&str]) -> bool {
    let mut parts = line.splitn(3, ' ');
    let (_, line_role, rest) = (parts.next(), parts.next(), parts.next().unwrap_or_default());
    let Some(name) = rest.strip_prefix('"').and_then(|n| n.split('"').next()) else {
        return false;
    };
    let name = name.to_lowercase();
    line_role == Some(role) && words.iter().any(|w| name.starts_with(w) || name.contains(&format!(" {w}")))
}

/// Whether a button's accessible name says it only previews its form ([`PREVIEW_WORDS`]).
fn previews(name: &str) -> bool {
    let name = name.to_lowercase();
    PREVIEW_WORDS.iter().any(|w| name.contains(w))
}

impl Macros<'_> {
    /// `nova.guarded_send_message`.
    pub async fn guarded_send_message(
        &self,
        rec: &mut CallRecord,
        a: SendMessageArgs,
    ) -> Result<ToolReply, CallError> {
        if a.text.trim().is_empty() {
            return Err(CallError::invalid("text", "`text` must not be empty"));
        }
        let own_success = names_success(a.transition_contract.as_ref());
        let contract = refine(send_message_contract(), a.transition_contract);
        contract.validate(true).map_err(|m| CallError::invalid("transitionContract", m))?;
        let tab = match self.tabs.resolve(&a.target_id).await {
            Ok(t) => t,
            Err(reply) => return Ok(reply),
        };
        rec.obs.target_id = Some(tab.target_id.clone());
        rec.obs.url_before = Some(tab.url.clone());
        rec.obs.signal_flags |= flags::TARGET_RESOLVED | flags::SELECTOR_TOUCHED | flags::INPUT_SUPPLIED;
        let agent = rec.obs.agent_id.clone();
        self.leases.check(&tab.target_id, &agent).map_err(CallError::Owner)?;
        self.leases.auto_claim(&tab.target_id, &agent).map_err(CallError::Owner)?;
        let chosen = self.guard.adapter_for(&tab.url);

        let params = PerceiveParams {
            target: tab.target_id.clone(),
            frame_id: None,
            max_elements: 2000,
            max_text_chars: 0,
            adapter: None,
        };
        let page: PageModel = match self.bridge.call(method::PERCEIVE, params, DEFAULT_TIMEOUT).await {
            Ok(p) => p,
            Err(e) => return Ok(ToolReply::bridge_failure(&e)),
        };
        let composer = match a.composer_selector.clone() {
            Some(c) => Some(c),
            None => self.composer(&tab.target_id, chosen.chat.composer.clone(), &page).await,
        };
        let Some(composer) = composer else {
            return Ok(ToolReply::failure(
                "adapter.composer_not_found",
                "no message composer found on this page; pass composerSelector",
                false,
            ));
        };
        let send = a
            .send_selector
            .clone()
            .or_else(|| chosen.chat.send.clone())
            .or_else(|| find_ref(&page, |l| named_like(l, "button", &["send", "submit"])));

        // Typing the message is not the commit point; sending it is.
        let typing = TypeParams {
            target: tab.target_id.clone(),
            frame_id: None,
            selector: composer.clone(),
            guarded: false,
            text: a.text.clone(),
            clear: true,
            press_enter: false,
        };
        if let Err(e) =
            self.bridge.call::<nova_shared::page::ActionReport>(method::TYPE, typing, DEFAULT_TIMEOUT).await
        {
            return Ok(undispatched(&e));
        }
        let action = match send {
            Some(selector) => PageAction::Click(ClickParams::guarded(tab.target_id.clone(), selector)),
            None => PageAction::Type(TypeParams {
                target: tab.target_id.clone(),
                frame_id: None,
                selector: composer.clone(),
                guarded: true,
                text: String::new(),
                clear: false,
                press_enter: true,
            }),
        };
        let name = chosen.name.clone();
        let mut reply = self.guard.guarded_with_adapter(rec, &tab, action, &contract, chosen).await?;
        reply.structured["adapter"] = json!(name);
        if reply.structured["reasonCode"] == super::reason::NO_SIGNAL_YET {
            let note = self.composer_note(&tab.target_id, &composer, &a.text).await;
            let said = reply.structured["message"].as_str().unwrap_or_default();
            reply.structured["message"] = json!(format!("{said}{note}"));
        }
        Ok(explain_silence(
            reply,
            own_success,
            [
                "an assistant's reply appearing or starting to stream",
                "a chat where no assistant answers (a message to a person)",
                "the sent message",
            ],
        ))
    }
}

crate::tool_args! {
    /// `nova.guarded_login` arguments.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct LoginArgs [tab, agent, refine] {
        /// User name or email; left out where the page asks for a password alone (a site or
        /// server password, no account).
        #[serde(default)]
        pub username: Option<String>,
        /// Password: typed into the password field, never returned, stored or logged.
        pub password: String,
        /// Username field, when the heuristics do not find it.
        #[serde(default)]
        pub username_selector: Option<String>,
        /// Password field, when the heuristics do not find it.
        #[serde(default)]
        pub password_selector: Option<String>,
        /// Sign-in control, when the heuristics do not find it.
        #[serde(default)]
        pub submit_selector: Option<String>,
    }
}

crate::tool_args! {
    /// `nova.guarded_submit_form` arguments.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct SubmitFormArgs [tab, agent, refine] {
        /// The form whose submit control to press (default: the form of the fields filled).
        #[serde(default)]
        pub form_selector: Option<String>,
        /// Values to type first: selector -> text (for a select, the option to choose), filled
        /// in the page's order, top to bottom; a field not on the page yet is filled last.
        #[serde(default)]
        pub fields: BTreeMap<String, String>,
        /// Submit control, when the heuristics do not find it (needed when the form's own
        /// button only previews it).
        #[serde(default)]
        pub submit_selector: Option<String>,
    }
}

/// What a sign-in's button is named like, when the page does not say which it is.
const LOGIN_WORDS: &[&str] = &["sign in", "log in", "login", "continue", "next", "submit"];

/// What the button that takes a sign-in's user name on to its password page is named like
/// (Google's and Microsoft's "Next", Okta's and Auth0's "Continue"): a page with a text box and
/// a button named otherwise (a newsletter's "Subscribe", a search) is not a sign-in.
const NEXT_WORDS: &[&str] = &["next", "continue", "sign in", "log in", "login", "sign on"];

/// What the control that goes back to choosing the account on an identifier-first sign-in's
/// password page is named like (Canaille's "Switch account", Google's "Use another account",
/// "Not you?").
const SWITCH_WORDS: &[&str] = &[
    "not you",
    "switch account",
    "switch user",
    "use another account",
    "use a different account",
    "sign in with another account",
    "sign in with a different account",
    "sign in as someone else",
    "change account",
    "change user",
];

/// What a form's submit button is named like, when the page does not say which it is (MLflow's
/// dialogs are sent by a "Create" in their footer).
const SUBMIT_WORDS: &[&str] = &["submit", "send", "save", "subscribe", "continue", "create"];

/// What `page.submitter` found for a field.
struct Sender {
    /// The button's ref and accessible name.
    button: Option<(String, String)>,
    /// Whether the field belongs to a form (a button elsewhere would send another one).
    in_form: bool,
}
/// Words a button that only previews a form is named with (Trac's and WordPress's "Preview",
/// MediaWiki's "Show preview"): pressing it sends the form to be shown, not saved.
const PREVIEW_WORDS: &[&str] = &["preview", "vorschau", "aperçu", "vista previa", "anteprima"];

/// Generic login fields.
impl Macros<'_> {
    /// Resolves the target, checks and takes the lease, and records what the call touches.
    async fn macro_target(
        &self,
        rec: &mut CallRecord,
        target: &str,
    ) -> Result<Result<TabInfo, ToolReply>, CallError> {
        let tab = match self.tabs.resolve(target).await {
            Ok(t) => t,
            Err(reply) => return Ok(Err(reply)),
        };
        rec.obs.target_id = Some(tab.target_id.clone());
        rec.obs.url_before = Some(tab.url.clone());
        rec.obs.signal_flags |= flags::TARGET_RESOLVED | flags::SELECTOR_TOUCHED | flags::INPUT_SUPPLIED;
        let agent = rec.obs.agent_id.clone();
        self.leases.check(&tab.target_id, &agent).map_err(CallError::Owner)?;
        self.leases.auto_claim(&tab.target_id, &agent).map_err(CallError::Owner)?;
        Ok(Ok(tab))
    }

    /// Types into a field before the commit point; a failure ends the macro undispatched.
    async fn fill(&self, target: &str, selector: &str, text: &str) -> Result<(), ToolReply> {
        let typing = TypeParams {
            target: target.to_owned(),
            frame_id: None,
            selector: selector.to_owned(),
            guarded: false,
            text: text.to_owned(),
            clear: true,
            press_enter: false,
        };
        match self.bridge.call::<nova_shared::page::ActionReport>(method::TYPE, typing, DEFAULT_TIMEOUT).await
        {
            Ok(_) => Ok(()),
            Err(e) => {
                let mut reply = undispatched(&e);
                reply.structured["field"] = json!(selector);
                Err(reply)
            }
        }
    }

    /// The fields' selectors in the document order of their elements (a person's top to
    /// bottom); those naming nothing yet last, so a field that appears once another is filled
    /// still can be. If the page cannot say, the selectors' alphabetical order.
    async fn document_order(&self, target: &str, fields: &BTreeMap<String, String>) -> Vec<String> {
        let given: Vec<String> = fields.keys().cloned().collect();
        if given.len() < 2 {
            return given;
        }
        match self.order(target, given.clone()).await {
            Ok(r)
                if r.selectors.len() == given.len() && r.selectors.iter().all(|s| fields.contains_key(s)) =>
            {
                r.selectors
            }
            _ => given,
        }
    }

    /// `page.order` of `selectors` in the top frame: their document order, and which name nothing.
    async fn order(&self, target: &str, selectors: Vec<String>) -> Result<OrderResult, BridgeError> {
        let params = OrderParams { target: target.to_owned(), frame_id: None, selectors };
        self.bridge.call(method::ORDER, params, DEFAULT_TIMEOUT).await
    }

    /// Whether `selector` names something on the page now (false when the page cannot say).
    async fn shows(&self, target: &str, selector: &str) -> bool {
        self.order(target, vec![selector.to_owned()]).await.is_ok_and(|r| r.missing.is_empty())
    }

    /// A refusal before anything is typed, naming the `field` it is about.
    fn untyped(reason: &str, field: &str, message: String) -> ToolReply {
        let mut reply = ToolReply::failure(reason, message, false);
        reply.structured["actionDispatched"] = json!(false);
        reply.structured["field"] = json!(field);
        reply
    }

    /// `nova.guarded_login`.
    pub async fn guarded_login(&self, rec: &mut CallRecord, a: LoginArgs) -> Result<ToolReply, CallError> {
        let tab = match self.macro_target(rec, &a.target_id).await? {
            Ok(t) => t,
            Err(reply) => return Ok(reply),
        };
        let ad = self.guard.adapter_for(&tab.url);
        let password = ad.login.password.clone().unwrap_or_else(|| "input[type=\"password\"]:visible".into());
        // The caller's refinement is checked before anything is typed.
        let built = login_contract(&password, &ad.login, tab.nav_epoch);
        refine(built, a.transition_contract.clone())
            .validate(true)
            .map_err(|m| CallError::invalid("transitionContract", m))?;
        let Some(user) = a.username_selector.clone().or(ad.login.username.clone()) else {
            return Ok(ToolReply::failure(
                "adapter.username_not_found",
                "the adapter names no user-name field for this page; pass usernameSelector",
                false,
            ));
        };
        let pass = a.password_selector.clone().unwrap_or(password);
        let missing = match self.order(&tab.target_id, vec![user.clone(), pass.clone()]).await {
            Ok(r) => r.missing,
            Err(e) => {
                return Ok(undispatched(&e));
            }
        };
        let (asks_user, asks_password) = (!missing.contains(&user), !missing.contains(&pass));
        let username = match (a.username.as_deref(), asks_user) {
            (Some(name), _) => name,
            (None, true) => {
                let m = format!("this sign-in asks for a user name (`{user}`): pass it; nothing was typed");
                return Err(CallError::invalid("username", m));
            }
            (None, false) => "",
        };
        let mut first = None;
        let tab = match (asks_user, asks_password) {
            (true, true) => match self.fill(&tab.target_id, &user, username).await {
                Ok(()) => tab,
                // A user-name field no one can type in (kept off-screen or read-only for the
                // password manager on the password page of an identifier-first sign-in).
                Err(reply)
                    if reply.structured["reasonCode"].as_str().is_some_and(|c| c.starts_with("element_")) =>
                {
                    match self.other_account(&tab.target_id, &user, username).await {
                        None => tab,
                        Some(refused) => return Ok(refused),
                    }
                }
                Err(reply) => return Ok(reply),
            },
            // Identifier-first: the user name on this page, the password on the next.
            (true, false) => match self.identify(rec, &tab, &a, (&user, username), &pass).await? {
                Ok((next, step)) => {
                    first = Some(step);
                    next
                }
                Err(reply) => return Ok(reply),
            },
            // A password alone, no account (a site or server password): nothing to check.
            (false, true) if a.username.is_none() => tab,
            // The password page of such a sign-in: only for the account it shows.
            (false, true) => match self.other_account(&tab.target_id, &user, username).await {
                None => tab,
                Some(refused) => return Ok(refused),
            },
            (false, false) => {
                return Ok(Self::untyped(
                    nova_shared::reason::ELEMENT_NOT_FOUND,
                    &user,
                    format!(
                        "no sign-in form here: nothing matches the user-name field `{user}` or the \
                         password field `{pass}`; nothing was typed. Open the sign-in page, or name the \
                         fields (usernameSelector, passwordSelector)"
                    ),
                ));
            }
        };
        // After a user-name page the password page may be another site's (its own adapter) and a
        // new document (its own epoch).
        let ad = self.guard.adapter_for(&tab.url);
        let contract = refine(login_contract(&pass, &ad.login, tab.nav_epoch), a.transition_contract);
        if let Err(reply) = self.fill(&tab.target_id, &pass, &a.password).await {
            return Ok(with_first_step(reply, first));
        }
        let submit = match a.submit_selector.or(ad.login.submit.clone()) {
            Some(s) => s,
            None => match self.submitter(&tab.target_id, &pass, LOGIN_WORDS).await.button {
                Some((button, _)) => button,
                None => self.submit_control(&tab.target_id, None, LOGIN_WORDS).await,
            },
        };
        let action = PageAction::Click(ClickParams::guarded(tab.target_id.clone(), submit));
        let reply = self.guard.guarded(rec, &tab, action, &contract).await?;
        let reply = Self::explain_code(&ad.login, reply);
        let reply = self.sign_in_unconfirmed(reply, &tab.target_id, &ad.login).await;
        let reply = self.unanswered(reply, &tab.target_id).await;
        if reply.structured["guardedCommit"]["verificationStatus"] == "verified_success" {
            let landed = reply.structured["urlAfter"].as_str().unwrap_or(&tab.url);
            let certainty = if reply.structured["verifyState"] == "verified" {
                crate::ok::rules::Certainty::Certain
            } else {
                crate::ok::rules::Certainty::Likely
            };
            // The sign-in happened whatever OK manages to file: its verdict stands.
            if let Err(e) = crate::ok::page::signed_in(self.ok, self.data, &tab.target_id, landed, certainty)
            {
                tracing::warn!(error = %e, "operational knowledge not updated");
            }
        }
        Ok(with_first_step(reply, first))
    }

    /// The first page of an identifier-first sign-in: types the user name and presses the button
    /// that takes it on, a guarded transition of its own whose success is the password field
    /// showing. Gives the tab as it then is and the step's summary, or the reply to end the call
    /// with (refused before typing when the page's button is not named like a sign-in's next step).
    /// `user` is the user-name field, `username` what is typed there.
    async fn identify(
        &self,
        rec: &mut CallRecord,
        tab: &TabInfo,
        a: &LoginArgs,
        (user, username): (&str, &str),
        pass: &str,
    ) -> Result<Result<(TabInfo, Value), ToolReply>, CallError> {
        let ad = self.guard.adapter_for(&tab.url);
        let named = |name: &str| {
            let name = name.to_lowercase();
            NEXT_WORDS.iter().any(|w| name.contains(w))
        };
        let explicit = a.submit_selector.clone().or(ad.login.submit.clone());
        let button = match explicit {
            Some(s) if self.shows(&tab.target_id, &s).await => s,
            _ => match self.submitter(&tab.target_id, user, NEXT_WORDS).await.button {
                Some((button, name)) if named(&name) => button,
                found => {
                    let said = found.map_or("no button sends it".to_owned(), |(_, name)| {
                        format!("the button that sends it is named \"{name}\"")
                    });
                    return Ok(Err(Self::untyped(
                        nova_shared::reason::ELEMENT_NOT_FOUND,
                        pass,
                        format!(
                            "no sign-in form here: nothing matches the password field `{pass}`, and the \
                             page is not the first step of a sign-in that asks for the password next \
                             ({said}, not Next, Continue or Sign in); nothing was typed. Open the \
                             sign-in page, or name the fields (usernameSelector, passwordSelector, \
                             submitSelector)"
                        ),
                    )));
                }
            },
        };
        if let Err(reply) = self.fill(&tab.target_id, user, username).await {
            return Ok(Err(reply));
        }
        let mut contract = identifier_contract(user, pass, &ad.login, tab.nav_epoch);
        // The caller's timing is for the site, so for both of its pages.
        if let Some(c) = &a.transition_contract {
            contract.stability_window_ms = c.stability_window_ms.or(contract.stability_window_ms);
            contract.stability_ms = c.stability_ms.or(contract.stability_ms);
        }
        let action = PageAction::Click(ClickParams::guarded(tab.target_id.clone(), button));
        let reply = self.guard.guarded(rec, tab, action, &contract).await?;
        let step = json!({
            "transitionId": reply.structured["guardedCommit"]["transitionId"],
            "verificationStatus": reply.structured["guardedCommit"]["verificationStatus"],
            "urlAfter": reply.structured["urlAfter"],
        });
        if reply.structured["guardedCommit"]["verificationStatus"] != "verified_success" {
            let mut reply = Self::explain_code(&ad.login, reply);
            let said = reply.structured["message"].as_str().unwrap_or_default().to_owned();
            reply.structured["message"] = json!(format!(
                "This sign-in asks for the user name first; the password was not typed: the page \
                 did not go on to a password field. {said}"
            ));
            return Ok(Err(with_first_step(reply, Some(step))));
        }
        match self.tabs.resolve(&tab.target_id).await {
            Ok(next) => Ok(Ok((next, step))),
            Err(reply) => Ok(Err(with_first_step(reply, Some(step)))),
        }
    }

    /// On a page that asks for a password with no user-name field to type in: a refusal unless
    /// the page shows the account `username` signs in to (the password page of an
    /// identifier-first sign-in), so that a password never goes to another account's sign-in.
    /// The refusal names the page's own way back to choosing the account ("Switch account",
    /// "Not you?") when it has one, in `message` and as `switchAccount` (its ref).
    async fn other_account(&self, target: &str, user: &str, username: &str) -> Option<ToolReply> {
        let params = PerceiveParams {
            target: target.to_owned(),
            frame_id: None,
            max_elements: 2000,
            max_text_chars: 20_000,
            adapter: None,
        };
        let page: PageModel = match self.bridge.call(method::PERCEIVE, params, DEFAULT_TIMEOUT).await {
            Ok(page) => page,
            Err(e) => return Some(undispatched(&e)),
        };
        if shows_account(&page, username) {
            return None;
        }
        let switch =
            find_line(&page, |l| ["link", "button"].iter().any(|role| named_like(l, role, SWITCH_WORDS)));
        let way = switch.and_then(|l| Some((l.split(' ').next()?, l.split('"').nth(1)?)));
        let next = match way {
            Some((r, name)) => format!(
                "To sign in as `{username}`, press the page's \"{name}\" ({r}) with nova.click_selector, \
                 which goes back to the page that asks for the account, then call nova.guarded_login \
                 again there"
            ),
            None => "Open the sign-in page that asks for the account and call nova.guarded_login there, \
                     or name the user-name field (usernameSelector). A page that asks for a password \
                     alone, for no account (a site or server password), takes no username: leave it out"
                .to_owned(),
        };
        let mut refused = Self::untyped(
            nova_shared::reason::ELEMENT_NOT_FOUND,
            user,
            format!(
                "this page asks for a password but shows neither a user-name field to type in \
                 (`{user}`) nor the user name given: it may be another account's sign-in; nothing \
                 was typed. {next}."
            ),
        );
        if let Some((r, _)) = way {
            refused.structured["switchAccount"] = json!(r);
        }
        Some(refused)
    }

    /// A sign-in that now asks for a one-time code (`login.secondFactor`) says so in `message`
    /// and names the field.
    fn explain_code(marks: &nova_shared::adapter::Login, mut reply: ToolReply) -> ToolReply {
        if let Some(code) = &marks.second_factor
            && reply.structured["reasonCode"] == super::reason::AMBIGUOUS_SIGNAL
            && held(&reply, Bucket::Failed, &shows(code, true))
        {
            let said = reply.structured["message"].as_str().unwrap_or_default().to_owned();
            reply.structured["message"] = json!(format!(
                "{said} The page took the password and now asks for a second factor, a one-time code \
                 (`{code}`): the sign-in is not finished. Do not sign in again; the code comes from \
                 the person (an authenticator app, a text message): type it with nova.type_selector \
                 and send it with nova.guarded_submit_form."
            ));
            reply.structured["field"] = json!(code);
        }
        reply
    }

    /// `nova.guarded_submit_form`.
    pub async fn guarded_submit_form(
        &self,
        rec: &mut CallRecord,
        a: SubmitFormArgs,
    ) -> Result<ToolReply, CallError> {
        let tab = match self.macro_target(rec, &a.target_id).await? {
            Ok(t) => t,
            Err(reply) => return Ok(reply),
        };
        let ad = self.guard.adapter_for(&tab.url);
        let own_success = names_success(a.transition_contract.as_ref());
        let signed_in = self.holds(&tab.target_id, vec![signed(true)]).await;
        let built = submit_contract(tab.nav_epoch, ad.form.success.as_deref(), signed_in);
        let contract = refine(built, a.transition_contract);
        contract.validate(true).map_err(|m| CallError::invalid("transitionContract", m))?;
        if a.fields.len() > ORDER_MAX_SELECTORS {
            let m = format!("{} fields given, at most {ORDER_MAX_SELECTORS}", a.fields.len());
            return Err(CallError::invalid("fields", m));
        }
        let order = self.document_order(&tab.target_id, &a.fields).await;
        // The button Nova would press when none is named: the form's own, asked before anything
        // is typed so that a refusal leaves the page as it was.
        let nova_picks = a.submit_selector.is_none() && ad.form.submit.is_none();
        if let (true, Some(first)) = (nova_picks, order.first()) {
            let found = self.submitter(&tab.target_id, first, SUBMIT_WORDS).await;
            if let Some((button, name)) = &found.button
                && previews(name)
            {
                // The form's own button only previews it (Trac puts "Preview" before "Create
                // ticket"): pressed, the page would come back and read as a success with nothing
                // saved. The agent names the control that sends the form.
                let m = format!(
                    "the button that sends this form by default is `{button}` \"{name}\", which shows \
                     a preview and saves nothing: name the control that saves (read the page for its ref)"
                );
                return Err(CallError::invalid("submitSelector", m));
            }
            if found.button.is_none() && found.in_form && a.form_selector.is_none() {
                // A button found elsewhere on the page would send another form (a search box's),
                // or nothing of this one.
                let m = format!(
                    "`{first}` is in a form with no submit button of its own, and no button named \
                     like {} shows near it: name the control that sends it in `submitSelector` (read the page for \
                     its ref)",
                    SUBMIT_WORDS.join(", ")
                );
                return Err(CallError::invalid("submitSelector", m));
            }
        }
        for selector in &order {
            if let Err(reply) = self.fill(&tab.target_id, selector, &a.fields[selector]).await {
                return Ok(reply);
            }
        }
        let filled_form = match (&a.form_selector, order.first()) {
            (None, Some(first)) if nova_picks => {
                self.submitter(&tab.target_id, first, SUBMIT_WORDS).await.button.map(|(b, _)| b)
            }
            _ => None,
        };
        let submit = match a.submit_selector.or(ad.form.submit.clone()).or(filled_form) {
            Some(s) => s,
            None => self.submit_control(&tab.target_id, a.form_selector.as_deref(), SUBMIT_WORDS).await,
        };
        let action = PageAction::Click(ClickParams::guarded(tab.target_id.clone(), submit));
        let reply = self.guard.guarded(rec, &tab, action, &contract).await?;
        let reply = if signed_in { self.sign_in_asked(reply) } else { reply };
        let reply = if own_success { reply } else { self.post_back(reply, &tab, ad.form.success.as_deref()) };
        Ok(explain_silence(
            reply,
            own_success,
            [
                "a navigation to a new page or a success message",
                "a page that saves in the background and shows neither",
                "the saved entry",
            ],
        ))
    }

    /// A form sent while signed in whose page then asked to sign in ([`sign_in_asked`], the
    /// built ambiguity): the reply says what that means and what to do, and the journal keeps it
    /// (`caveat::SIGN_IN_ASKED`) for support staff.
    fn sign_in_asked(&self, mut reply: ToolReply) -> ToolReply {
        let r = &reply.structured;
        if r["reasonCode"] != super::reason::AMBIGUOUS_SIGNAL || !held(&reply, Bucket::Failed, &signed(false))
        {
            return reply;
        }
        let url = r["urlAfter"].as_str().unwrap_or_default().to_owned();
        let id = r["guardedCommit"]["transitionId"].as_str().unwrap_or_default();
        if let Err(e) = self.guard.cls.journal.caveat(id, caveat::SIGN_IN_ASKED) {
            tracing::error!(error = %e, "journal: cannot record the sign-in caveat");
        }
        reply.structured["message"] = json!(format!(
            "The form was sent from a signed-in page and the page now asks to sign in ({url}): the \
             session ended before the form reached the server, which then saved nothing, or the \
             form itself signs out. Nothing shows the form was saved. Do not send it again blindly: \
             sign in (nova.guarded_login), read the saved entry or the form, and send it again \
             only if it is not there."
        ));
        reply
    }

    /// A sign-in verified by its password field gone alone, on a page that offers no way to sign
    /// out, shown or hidden (`page.signOut` is `none`): the password was taken, and the site may
    /// still be waiting for an approval on another device or another step. The success is
    /// `likely`, not `verified`, the reply says what to read and the journal keeps the caveat.
    async fn sign_in_unconfirmed(
        &self,
        mut reply: ToolReply,
        target: &str,
        marks: &nova_shared::adapter::Login,
    ) -> ToolReply {
        let mut signed_in =
            marks.logged_in.as_deref().map(|m| shows(m, true)).into_iter().chain([signed(true)]);
        if reply.structured["verifyState"] != "verified"
            || signed_in.any(|a| held(&reply, Bucket::Held, &a))
            || self.holds(target, vec![fact("page.signOut", Operator::NotEq, Some(json!("none")))]).await
        {
            return reply;
        }
        let r = &reply.structured;
        let url = r["urlAfter"].as_str().unwrap_or_default().to_owned();
        let id = r["guardedCommit"]["transitionId"].as_str().unwrap_or_default();
        if let Err(e) = self.guard.cls.journal.caveat(id, caveat::SIGN_IN_UNCONFIRMED) {
            tracing::error!(error = %e, "journal: cannot record the sign-in caveat");
        }
        reply.structured["verifyState"] = json!("likely");
        reply.structured["message"] = json!(format!(
            "The password was taken (the page no longer asks for it), but nothing on {url} shows \
             a signed-in page: no sign-out control, shown or in a menu. The site may be waiting \
             for the sign-in to be approved on another device, or for another step. Read the \
             page (nova.perceive) before relying on the sign-in, and do not send the password \
             again blindly."
        ));
        reply
    }

    /// A sign-in that ended with nothing proven (`no_signal_yet`) while the page still shows it
    /// is at work (`page.busy`: Radicale's loading screen): the site has not answered the
    /// password, or the browser asks for it in a dialog of its own (an HTTP sign-in the page's
    /// script started). The message says so, and not to send the password again blindly.
    async fn unanswered(&self, mut reply: ToolReply, target: &str) -> ToolReply {
        // The browser's own sign-in dialog, when it is what waits, is named already (pageAsks).
        if reply.structured["reasonCode"] != super::reason::NO_SIGNAL_YET
            || reply.structured.get("pageAsks").is_some()
            || !self.holds(target, vec![at_work()]).await
        {
            return reply;
        }
        let said = reply.structured["message"].as_str().unwrap_or_default().to_owned();
        reply.structured["message"] = json!(format!(
            "{said} The page still shows it is at work (a loading screen or spinner): the site has \
             not answered the sign-in, or the browser asks for the password in a dialog of its \
             own, which the person answers. Read the page again (nova.perceive) before signing in \
             again."
        ));
        reply
    }

    /// A form that posted back: the verdict rests on a new page alone, at the very address the
    /// form was sent from, and no success message shows there. A server answers so after saving
    /// an edit and after refusing input with an error Nova does not recognise, so the success is
    /// `likely`, not `verified`, the reply says what to read and the journal keeps the caveat.
    /// `mark` is the success message's selector.
    fn post_back(&self, mut reply: ToolReply, before: &TabInfo, mark: Option<&str>) -> ToolReply {
        let r = &reply.structured;
        let url = r["urlAfter"].as_str().unwrap_or_default().to_owned();
        let navigated =
            self.bridge.state().tab(&before.target_id).is_some_and(|t| t.nav_epoch > before.nav_epoch);
        if r["verifyState"] != "verified" || !navigated || url.is_empty() || url != r["urlBefore"] {
            return reply;
        }
        if mark.is_some_and(|m| held(&reply, Bucket::Held, &shows(m, true))) {
            return reply;
        }
        let said = r["message"].as_str().map(|m| format!("{m} ")).unwrap_or_default();
        // Support staff reading the store see what the agent was told (docs/support.md).
        let id = r["guardedCommit"]["transitionId"].as_str().unwrap_or_default();
        if let Err(e) = self.guard.cls.journal.caveat(id, caveat::POST_BACK_UNCONFIRMED) {
            tracing::error!(error = %e, "journal: cannot record the post-back caveat");
        }
        reply.structured["verifyState"] = json!("likely");
        reply.structured["message"] = json!(format!(
            "{said}The form posted back to the address it is on ({url}) and no success message \
             shows: a server answers so after saving and also after refusing the input with an \
             error Nova does not recognise. Read the page (an error near a field, the form still \
             holding what was typed) or the saved entry before relying on it."
        ));
        reply
    }

    /// The composer of a chat with no `composerSelector`: the adapter's (`convention`) when it
    /// matches on the page, else the first text box of `page` (one inside a shadow root, say,
    /// which an adapter's selector does not reach), else the adapter's all the same: a page
    /// still drawing its parts (Streamlit) shows it a moment later, and typing waits for it.
    async fn composer(&self, target: &str, convention: Option<String>, page: &PageModel) -> Option<String> {
        if let Some(c) = &convention {
            let exists = fact(&format!("dom.exists({c})"), Operator::Eq, Some(json!(true)));
            if self.holds(target, vec![exists]).await {
                return convention;
            }
        }
        find_ref(page, |l| l.split(' ').nth(1) == Some("textbox")).or(convention)
    }

    /// After a send nothing answered: whether the page took the message, from what its composer
    /// holds now. A composer still holding the text says the send never left (a chat still
    /// connecting ignores Enter, a send control did nothing); an emptied one says the page took
    /// it. Empty when the page cannot say.
    async fn composer_note(&self, target: &str, composer: &str, text: &str) -> &'static str {
        // A text box holds the message as its value, an editable region as its text.
        let value = format!("dom.value({composer})");
        let (key, typed) = if self.holds(target, vec![fact(&value, Operator::Exists, None)]).await {
            (value, text.to_owned())
        } else {
            (format!("dom.text({composer})"), text.split_whitespace().collect::<Vec<_>>().join(" "))
        };
        if self.holds(target, vec![fact(&key, Operator::Eq, Some(json!(typed)))]).await {
            " The composer still holds the message: the page did not take it (a chat still \
             connecting ignores Enter; a send control may have done nothing). Nothing shows that \
             it went out: read the page, and send it again once the chat is ready."
        } else if self.holds(target, vec![fact(&key, Operator::Eq, Some(json!("")))]).await {
            " The composer was emptied: the page took the message, and no reply showed in the \
             window."
        } else {
            ""
        }
    }

    /// Whether `selector` shows its choice as a `.value` (a `<select>`, an input combobox)
    /// rather than as its text.
    async fn is_form_control(&self, target: &str, selector: &str) -> bool {
        // Buttons carry an empty `.value`, other elements none at all.
        let value = format!("dom.value({selector})");
        let all = vec![fact(&value, Operator::Exists, None), fact(&value, Operator::NotEq, Some(json!("")))];
        self.holds(target, all).await
    }

    /// Whether every one of `all` holds on the tab `target` now (false when the page cannot say).
    async fn holds(&self, target: &str, all: Vec<Assertion>) -> bool {
        let params = CheckParams {
            target: target.to_owned(),
            frame_id: None,
            set: AssertionSet { all, ..Default::default() },
            adapter: None,
            nav_epoch: 0,
        };
        self.bridge
            .call::<CheckResult>(method::CHECK, params, DEFAULT_TIMEOUT)
            .await
            .is_ok_and(|r| r.verdict == nova_shared::cls::Verdict::Satisfied)
    }

    /// The button that submits the form `field` belongs to (its default button), or, for a field
    /// in no form or in a form with no button, the nearest button around it named with one of
    /// `words`.
    async fn submitter(&self, target: &str, field: &str, words: &[&str]) -> Sender {
        let params = SubmitterParams {
            target: target.to_owned(),
            frame_id: None,
            field: field.to_owned(),
            words: words.iter().map(|w| (*w).to_owned()).collect(),
        };
        let found = self.bridge.call::<SubmitterResult>(method::SUBMITTER, params, DEFAULT_TIMEOUT).await;
        let Ok(r) = found else { return Sender { button: None, in_form: false } };
        Sender { button: r.submitter.map(|button| (button, r.name.unwrap_or_default())), in_form: r.in_form }
    }

    /// The submit control when no form's own button is known: a button named with one of `words`
    /// from the page model, else a submit button (inside `form` when given).
    async fn submit_control(&self, target: &str, form: Option<&str>, words: &[&str]) -> String {
        let scope = form.unwrap_or("form");
        let css = format!("{scope} [type=\"submit\"]:visible, {scope} button:not([type]):visible");
        let params = PerceiveParams {
            target: target.to_owned(),
            frame_id: None,
            max_elements: 2000,
            max_text_chars: 0,
            adapter: None,
        };
        if form.is_none()
            && let Ok(page) = self.bridge.call::<PageModel>(method::PERCEIVE, params, DEFAULT_TIMEOUT).await
            && let Some(r) = find_ref(&page, |l| named_like(l, "button", words))
        {
            return r;
        }
        css
    }
}

crate::tool_args! {
    /// `nova.guarded_switch_model` / `nova.guarded_switch_sandbox` arguments.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct SwitchArgs [tab, agent, refine] {
        /// The option to switch to, by its visible text.
        pub option: String,
        /// The picker, when the heuristics do not find it.
        #[serde(default)]
        pub picker_selector: Option<String>,
    }
}

/// Which picker a switch macro looks for.
#[derive(Debug, Clone, Copy)]
pub enum Picker {
    /// Model pickers.
    Model,
    /// Workspace / sandbox / project switchers.
    Sandbox,
}

impl Picker {
    fn words(self) -> &'static [&'static str] {
        match self {
            Self::Model => &["model"],
            Self::Sandbox => &["workspace", "sandbox", "project", "organization", "team", "account"],
        }
    }
}

impl Macros<'_> {
    /// `nova.guarded_switch_model` and `nova.guarded_switch_sandbox`: choose an option of a
    /// picker and verify the picker shows it; an upgrade dialog or an error is a verified failure.
    pub async fn guarded_switch(
        &self,
        rec: &mut CallRecord,
        kind: Picker,
        a: SwitchArgs,
    ) -> Result<ToolReply, CallError> {
        if a.option.trim().is_empty() {
            return Err(CallError::invalid("option", "`option` must not be empty"));
        }
        let tab = match self.macro_target(rec, &a.target_id).await? {
            Ok(t) => t,
            Err(reply) => return Ok(reply),
        };
        let params = PerceiveParams {
            target: tab.target_id.clone(),
            frame_id: None,
            max_elements: 2000,
            max_text_chars: 0,
            adapter: None,
        };
        let page: PageModel = match self.bridge.call(method::PERCEIVE, params, DEFAULT_TIMEOUT).await {
            Ok(p) => p,
            Err(e) => return Ok(ToolReply::bridge_failure(&e)),
        };
        let line = |l: &str| {
            let role = l.split(' ').nth(1).unwrap_or_default();
            let lower = l.to_lowercase();
            matches!(role, "button" | "combobox" | "listbox")
                && kind.words().iter().any(|w| lower.contains(w))
        };
        let found = page.elements.iter().find(|l| line(l)).cloned();
        let ad = self.guard.adapter_for(&tab.url);
        let configured = match kind {
            Picker::Model => ad.picker.model.clone(),
            Picker::Sandbox => ad.picker.workspace.clone(),
        };
        let (picker, listed) = match (a.picker_selector.or(configured), found) {
            (Some(sel), _) => (sel, false),
            (None, Some(l)) => (l.split(' ').next().unwrap_or_default().to_owned(), l.contains(" options=[")),
            (None, None) => {
                return Ok(ToolReply::failure(
                    "adapter.picker_not_found",
                    "no matching picker on this page; pass pickerSelector",
                    false,
                ));
            }
        };
        // A `<select>` or an input combobox shows its choice as a value, other pickers as text.
        let is_select = listed || self.is_form_control(&tab.target_id, &picker).await;
        let shown = if is_select { format!("dom.value({picker})") } else { format!("dom.text({picker})") };
        // A dialog that opens (an upgrade offer) refuses the switch; one already open (a settings
        // panel holding the picker) is not news to the watch, and the agent is told to confirm it.
        let dialog = fact(&format!("dom.exists({DIALOGS})"), Operator::Eq, Some(json!(true)));
        let in_dialog = self.holds(&tab.target_id, vec![dialog.clone()]).await;
        let mut built = outcome_contract(
            ActionKind::SelectOption,
            Vec::new(),
            vec![fact("chat.errorBanner", Operator::Exists, None), dialog],
        );
        // The picker must show the option: a single condition, so `all`.
        built.postconditions.success.all.push(fact(&shown, Operator::Contains, Some(json!(a.option.trim()))));
        built.retry_policy = Some(nova_shared::cls::RetryPolicy::Idempotent);
        let contract = refine(built, a.transition_contract);
        contract.validate(true).map_err(|m| CallError::invalid("transitionContract", m))?;
        let action = PageAction::Select(SelectParams {
            target: tab.target_id.clone(),
            frame_id: None,
            selector: picker,
            option: a.option,
        });
        let mut reply = self.guard.guarded(rec, &tab, action, &contract).await?;
        if in_dialog && reply.structured["guardedCommit"]["verificationStatus"] == "verified_success" {
            let said = reply.structured["message"].as_str().unwrap_or_default().to_owned();
            let note = "The picker is in a dialog that is still open (a settings panel): the choice \
                        may take effect only once the dialog is confirmed, with its Confirm, Save or \
                        Apply button.";
            reply.structured["message"] = json!(format!("{said} {note}").trim_start());
        }
        Ok(reply)
    }
}

/// The dialogs a person sees.
const DIALOGS: &str = "[role=\"dialog\"]:visible, [role=\"alertdialog\"]:visible";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_is_named_like_a_word_by_its_name_alone() {
        let send = ["send", "submit"];
        assert!(named_like(r#"e7 button "Send message" disabled"#, "button", &send));
        assert!(named_like(r#"e7 button "Quick submit""#, "button", &send));
        assert!(!named_like(r#"e7 button "Resend code""#, "button", &send));
        assert!(!named_like(r#"e7 link "Send message" -> /send"#, "button", &send));
        assert!(!named_like(r#"e15 button testid="submit-button""#, "button", &send));
        assert!(!named_like(r#"e15 button id="send""#, "button", &send));
        assert!(!named_like("e15 button", "button", &send));
    }

    /// The sign-in verdict on each kind of result page, as the page watch classifies it.
    #[test]
    fn sign_in_results_are_told_apart_without_waiting_for_the_window() {
        use nova_shared::cls::{Outcome, classify};
        let pw = "input[type=\"password\"]:visible";
        let out = "a[href*=\"logout\"]:visible";
        let code = "input[autocomplete~=\"one-time-code\" i]:visible";
        let marks = nova_shared::adapter::Login {
            logged_in: Some(out.into()),
            second_factor: Some(code.into()),
            ..Default::default()
        };
        let contract = login_contract(pw, &marks, 3);
        /// What a result page shows.
        struct Page {
            name: &'static str,
            password: bool,
            signed_in: bool,
            code: bool,
            note: Option<&'static str>,
            invalid: u32,
            epoch: u32,
            want: Outcome,
        }
        let page = |name, (password, signed_in, code), note, invalid, epoch, want| Page {
            name,
            password,
            signed_in,
            code,
            note,
            invalid,
            epoch,
            want,
        };
        let pages = [
            page(
                "error note on the same page",
                (true, false, false),
                Some("Wrong password"),
                0,
                3,
                Outcome::Fail,
            ),
            page("the form again on a new page", (true, false, false), None, 0, 4, Outcome::Fail),
            page("a field marked invalid", (true, false, false), None, 1, 3, Outcome::Fail),
            page("still submitting", (true, false, false), None, 0, 3, Outcome::Pending),
            page("a page with a sign-out control", (false, true, false), None, 0, 4, Outcome::Success),
            page("signed in, a change-password box too", (true, true, false), None, 0, 4, Outcome::Success),
            page("the password field gone", (false, false, false), None, 0, 4, Outcome::Success),
            page("a one-time code asked for", (false, false, true), None, 0, 4, Outcome::Ambiguous),
            page(
                "an error page without the form",
                (false, false, false),
                Some("Account locked"),
                0,
                4,
                Outcome::Pending,
            ),
        ];
        for p in pages {
            let mut observe = |a: &Assertion| -> nova_shared::cls::Observed {
                Ok(match a.fact_key.as_str() {
                    k if k == format!("dom.exists({pw})") => json!(p.password),
                    k if k == format!("dom.exists({out})") => json!(p.signed_in),
                    k if k == format!("dom.exists({code})") => json!(p.code),
                    "form.errorNote" => p.note.map_or(Value::Null, |n| json!(n)),
                    "form.validationErrors" => json!(p.invalid),
                    "page.navEpoch" => json!(p.epoch),
                    _ => Value::Null,
                })
            };
            let (got, _) = classify(&contract.postconditions, &mut observe);
            assert_eq!(got, p.want, "{}", p.name);
        }
        contract.validate(true).expect("a valid contract");
    }

    /// The verdict on a form, by what the page shows after it was sent, and whether it was sent
    /// from a signed-in page.
    #[test]
    fn a_form_whose_page_then_asks_to_sign_in_is_in_doubt_only_when_sent_signed_in() {
        use nova_shared::cls::{Outcome, classify};
        let saved = ".alert-success:visible";
        // (what the page shows: login state, success message, invalid fields, epoch), sent
        // signed in, the outcome
        let pages = [
            ("a new page, still signed in", (Some("logged_in"), false, 0, 4), true, Outcome::Success),
            ("a new page asking to sign in", (Some("logged_out"), false, 0, 4), true, Outcome::Ambiguous),
            ("the sign-in page saying it saved", (Some("logged_out"), true, 0, 4), true, Outcome::Success),
            ("a sign-in page after a sign-up", (Some("logged_out"), false, 0, 4), false, Outcome::Success),
            ("the form again with an error", (Some("logged_in"), false, 1, 4), true, Outcome::Fail),
            ("a sign-in page marking a field", (Some("logged_out"), false, 1, 4), true, Outcome::Fail),
            ("still sending", (Some("logged_in"), false, 0, 3), true, Outcome::Pending),
        ];
        for (name, (state, shown, invalid, epoch), signed_in, want) in pages {
            let contract = submit_contract(3, Some(saved), signed_in);
            let mut observe = |a: &Assertion| -> nova_shared::cls::Observed {
                Ok(match a.fact_key.as_str() {
                    "core.login_state" => state.map_or(Value::Null, |s| json!(s)),
                    k if k == format!("dom.exists({saved})") => json!(shown),
                    "form.validationErrors" => json!(invalid),
                    "page.navEpoch" => json!(epoch),
                    _ => Value::Null,
                })
            };
            let (got, _) = classify(&contract.postconditions, &mut observe);
            assert_eq!(got, want, "{name}");
            contract.validate(true).expect("a valid contract");
        }
    }

    /// The verdict on the first page of an identifier-first sign-in, by what the page shows next.
    #[test]
    fn a_user_name_page_succeeds_only_when_the_password_is_asked_for() {
        use nova_shared::cls::{Outcome, classify};
        let (user, pw, code) = ("input[type=\"email\"]:visible", "input[type=\"password\"]:visible", "#otp");
        let marks = nova_shared::adapter::Login { second_factor: Some(code.into()), ..Default::default() };
        let contract = identifier_contract(user, pw, &marks, 2);
        // (what, user-name field, password field, code field, error note, epoch, verdict)
        let pages = [
            ("the password step in the same document", false, true, false, None, 2, Outcome::Success),
            ("the password page", false, true, false, None, 3, Outcome::Success),
            ("the password page with the account in a field", true, true, false, None, 3, Outcome::Success),
            ("an unknown account", true, false, false, Some("Couldn't find your account"), 2, Outcome::Fail),
            ("the first page again", true, false, false, None, 3, Outcome::Fail),
            ("still checking the account", true, false, false, None, 2, Outcome::Pending),
            ("a code sent instead", false, false, true, None, 3, Outcome::Ambiguous),
            (
                "a password page with an error note",
                false,
                true,
                false,
                Some("Too many tries"),
                3,
                Outcome::Pending,
            ),
        ];
        for (name, asks_user, asks_password, asks_code, note, epoch, want) in pages {
            let mut observe = |a: &Assertion| -> nova_shared::cls::Observed {
                Ok(match a.fact_key.as_str() {
                    k if k == format!("dom.exists({user})") => json!(asks_user),
                    k if k == format!("dom.exists({pw})") => json!(asks_password),
                    k if k == format!("dom.exists({code})") => json!(asks_code),
                    "form.errorNote" => note.map_or(Value::Null, |n| json!(n)),
                    "form.validationErrors" => json!(0),
                    "page.navEpoch" => json!(epoch),
                    _ => Value::Null,
                })
            };
            let (got, _) = classify(&contract.postconditions, &mut observe);
            assert_eq!(got, want, "{name}");
        }
        contract.validate(true).expect("a valid contract");
    }

    #[test]
    fn a_caller_contract_refines_the_built_one() {
        let mut caller = TransitionContract { stability_ms: Some(50), ..Default::default() };
        caller.postconditions.success.all.push(fact("dom.exists(#ok)", Operator::Eq, Some(json!(true))));
        let refined = refine(send_message_contract(), Some(caller));
        assert_eq!(refined.stability_ms, Some(50));
        assert_eq!(refined.postconditions.success.any.len(), 2, "built assertions stay");
        assert_eq!(refined.postconditions.success.all.len(), 1, "caller assertions are added");
    }
}
