//! CLS contract types and the assertion evaluator. The evaluator is pure and is the same code
//! in the page (postcondition watch) and in the host.
//!
//! Every type here rejects unknown fields at any depth (`deny_unknown_fields`), so a typo in a
//! contract is an invalid-params error, never a silently ignored condition.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::facts;

/// How the fact's observed value compares with `expected` (docs/cls.md, "Contract").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operator {
    /// Equal (numbers by value).
    Eq,
    /// Not equal.
    NotEq,
    /// Same as `not_eq`.
    Neq,
    /// Has a value (not null); no `expected`.
    Exists,
    /// Is null; no `expected`.
    NotExists,
    /// Text contains the expected text, or a list the expected item.
    Contains,
    /// `>`.
    Gt,
    /// `<`.
    Lt,
    /// `>=`.
    Gte,
    /// `<=`.
    Lte,
}

impl Operator {
    /// Whether the operator compares against `expected`.
    pub fn needs_expected(self) -> bool {
        !matches!(self, Self::Exists | Self::NotExists)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Eq => "eq",
            Self::NotEq => "not_eq",
            Self::Neq => "neq",
            Self::Exists => "exists",
            Self::NotExists => "not_exists",
            Self::Contains => "contains",
            Self::Gt => "gt",
            Self::Lt => "lt",
            Self::Gte => "gte",
            Self::Lte => "lte",
        }
    }
}

/// One machine-checkable condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Assertion {
    /// Fact key, e.g. `dom.visible(#sent)`.
    pub fact_key: String,
    /// Operator.
    pub operator: Operator,
    /// Expected value (JSON); required except for `exists` / `not_exists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// Frame to read the fact in (a frame id from `nova.perceive`); the top frame when null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<String>,
}

/// Assertions grouped: all must pass, at least one of `any` must pass, none of `forbidden`
/// may pass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssertionSet {
    /// Every one must pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub all: Vec<Assertion>,
    /// At least one must pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub any: Vec<Assertion>,
    /// None may pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<Assertion>,
}

impl AssertionSet {
    /// No assertion at all.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty() && self.any.is_empty() && self.forbidden.is_empty()
    }

    /// Every assertion in the set.
    pub fn iter(&self) -> impl Iterator<Item = &Assertion> {
        self.all.iter().chain(&self.any).chain(&self.forbidden)
    }
}

/// What counts as success, failure and ambiguity after dispatch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Postconditions {
    /// Proves the action worked (must hold for `stabilityMs`).
    #[serde(default, skip_serializing_if = "AssertionSet::is_empty")]
    pub success: AssertionSet,
    /// Proves the action failed (an error banner, a validation message).
    #[serde(default, skip_serializing_if = "AssertionSet::is_empty")]
    pub forbidden: AssertionSet,
    /// Signals that leave the outcome unclear.
    #[serde(default, skip_serializing_if = "AssertionSet::is_empty")]
    pub ambiguous: AssertionSet,
}

impl Postconditions {
    /// No bucket has an assertion.
    pub fn is_empty(&self) -> bool {
        self.success.is_empty() && self.forbidden.is_empty() && self.ambiguous.is_empty()
    }
}

/// Kind of action a contract guards; selects stability defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// Closing a blocking overlay.
    DismissOverlay,
    /// Sending a chat message.
    SendMessage,
    /// Submitting a form.
    SubmitForm,
    /// Choosing an option (model, workspace).
    SelectOption,
    /// Anything else (raw contracts).
    #[default]
    Custom,
}

impl ActionKind {
    /// Template defaults: (stabilityWindowMs, stabilityMs).
    pub fn stability_defaults(self) -> (u32, u32) {
        match self {
            Self::DismissOverlay => (3_000, 300),
            Self::SendMessage => (10_000, 500),
            Self::SubmitForm => (10_000, 500),
            Self::SelectOption => (5_000, 300),
            Self::Custom => (5_000, 300),
        }
    }
}

/// Whether repeating the action may be safe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetryPolicy {
    /// Repeating does no harm.
    Idempotent,
    /// Repeating may duplicate the effect (sends, submits, logins).
    #[default]
    NonIdempotent,
    /// Never repeat.
    NoRetry,
}

/// How ambiguous postcondition matches shape retry advice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AmbiguityPolicy {
    /// Report the ambiguity.
    #[default]
    Signal,
    /// Allow one retry (only when the action is idempotent).
    RetryOnce,
    /// Treat as failure.
    Abort,
}

/// `stabilityWindowMs` bounds: 500-30000 (docs/cls.md, "Contract").
pub const STABILITY_WINDOW_MS: (u32, u32) = (500, 30_000);
/// `stabilityMs` bounds: 0-5000 (docs/cls.md, "Contract").
pub const STABILITY_MS: (u32, u32) = (0, 5_000);
/// Most assertions in one contract.
pub const MAX_ASSERTIONS: usize = 64;

/// The structured agreement for one state-changing action.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TransitionContract {
    /// Action kind (default `custom`).
    #[serde(default)]
    pub action_kind: ActionKind,
    /// Must hold before dispatch; a failure blocks the action.
    #[serde(default, skip_serializing_if = "AssertionSet::is_empty")]
    pub preconditions: AssertionSet,
    /// What to watch for after dispatch.
    #[serde(default, skip_serializing_if = "Postconditions::is_empty")]
    pub postconditions: Postconditions,
    /// Default `non_idempotent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_policy: Option<RetryPolicy>,
    /// Default `signal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ambiguity_policy: Option<AmbiguityPolicy>,
    /// How long to watch for an outcome (500-30000; clamped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 500, max = 30000))]
    pub stability_window_ms: Option<u32>,
    /// How long success must hold (0-5000; clamped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 5000))]
    pub stability_ms: Option<u32>,
}

/// A contract after validation, with its effective timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Effective {
    /// Watch window in ms.
    pub stability_window_ms: u32,
    /// Success hold in ms.
    pub stability_ms: u32,
    /// What was clamped, as sentences (`stabilityWindowMs 60000 clamped to 30000`).
    pub adjustments: Vec<String>,
}

impl TransitionContract {
    /// The retry policy in force (`non_idempotent` unless set).
    pub fn retry(&self) -> RetryPolicy {
        self.retry_policy.unwrap_or_default()
    }

    /// The ambiguity policy in force (`signal` unless set).
    pub fn ambiguity(&self) -> AmbiguityPolicy {
        self.ambiguity_policy.unwrap_or_default()
    }

    /// Checks every fact key and operator, and resolves timing (clamping out-of-range values
    /// to the guarded-safe bounds, as docs/cls.md says). `commit_point` contracts must say
    /// what an outcome looks like: empty postconditions fail closed.
    pub fn validate(&self, commit_point: bool) -> Result<Effective, String> {
        let all: Vec<&Assertion> = self
            .preconditions
            .iter()
            .chain(self.postconditions.success.iter())
            .chain(self.postconditions.forbidden.iter())
            .chain(self.postconditions.ambiguous.iter())
            .collect();
        if all.len() > MAX_ASSERTIONS {
            return Err(format!(
                "transitionContract has {} assertions; at most {MAX_ASSERTIONS} are allowed",
                all.len()
            ));
        }
        for a in &all {
            let key = facts::parse(&a.fact_key).map_err(|e| format!("transitionContract: {e}"))?;
            if a.operator.needs_expected() && a.expected.is_none() {
                return Err(format!(
                    "transitionContract: `{}` with operator {} needs `expected`",
                    a.fact_key,
                    a.operator.as_str()
                ));
            }
            meaningful(a, key.kind()).map_err(|e| format!("transitionContract: {e}"))?;
        }
        if commit_point && self.postconditions.is_empty() {
            return Err(
                "transitionContract.postconditions must have a non-empty success, forbidden or ambiguous \
                        bucket for a commit point (fails closed)"
                    .into(),
            );
        }
        let (window, hold) = self.action_kind.stability_defaults();
        let mut adjustments = Vec::new();
        let mut clamp = |name: &str, v: Option<u32>, default: u32, (lo, hi): (u32, u32)| {
            let v = v.unwrap_or(default);
            let c = v.clamp(lo, hi);
            if c != v {
                adjustments.push(format!("{name} {v} clamped to {c}"));
            }
            c
        };
        let stability_window_ms =
            clamp("stabilityWindowMs", self.stability_window_ms, window, STABILITY_WINDOW_MS);
        let mut stability_ms = clamp("stabilityMs", self.stability_ms, hold, STABILITY_MS);
        if stability_ms >= stability_window_ms {
            adjustments
                .push(format!("stabilityMs {stability_ms} lowered below the window ({stability_window_ms})"));
            stability_ms = stability_window_ms / 2;
        }
        Ok(Effective { stability_window_ms, stability_ms, adjustments })
    }
}

/// Refuses an assertion whose operator (or expected value) cannot mean what it reads as on a
/// fact of this kind, saying what to write instead (docs/cls.md, "Operators by kind of fact").
/// `dom.exists(#error)` with `exists` is the trap this closes: the fact is `false`, not absent,
/// when the element is missing, so `exists` would always hold.
pub fn meaningful(a: &Assertion, kind: facts::Kind) -> Result<(), String> {
    use Operator::*;
    use facts::Kind;
    let key = &a.fact_key;
    let op = a.operator.as_str();
    let expected = a.expected.as_ref();
    match (kind, a.operator) {
        (Kind::Any, _) => Ok(()),
        (Kind::Bool, Exists) => Err(format!(
            "`{key}` is true or false, never absent, so `exists` always holds: write \
             {{\"operator\": \"eq\", \"expected\": true}}"
        )),
        (Kind::Bool, NotExists) => Err(format!(
            "`{key}` is true or false, never absent, so `not_exists` never holds: write \
             {{\"operator\": \"eq\", \"expected\": false}}"
        )),
        (Kind::Bool, Eq | NotEq | Neq) if expected.is_some_and(Value::is_boolean) => Ok(()),
        (Kind::Bool, Eq | NotEq | Neq) => Err(format!(
            "`{key}` is true or false; `expected` {} can never match: write true or false (no quotes)",
            expected.unwrap_or(&Value::Null)
        )),
        (Kind::Bool, _) => {
            Err(format!("`{key}` is true or false; `{op}` does not apply: compare it with eq or not_eq"))
        }
        (Kind::Number, Exists) => Err(format!(
            "`{key}` is always a number, so `exists` always holds: for \"at least one\" write \
             {{\"operator\": \"gt\", \"expected\": 0}}"
        )),
        (Kind::Number, NotExists) => Err(format!(
            "`{key}` is always a number, so `not_exists` never holds: for \"none\" write \
             {{\"operator\": \"eq\", \"expected\": 0}}"
        )),
        (Kind::Number, Contains) => {
            Err(format!("`{key}` is a number; `contains` does not apply: use eq, gt, gte, lt or lte"))
        }
        (Kind::Number, _) if expected.is_some_and(Value::is_number) => Ok(()),
        (Kind::Number, _) => Err(format!(
            "`{key}` is a number; `expected` {} is not: write a number (no quotes)",
            expected.unwrap_or(&Value::Null)
        )),
        (Kind::Text, Exists | NotExists) => {
            Err(format!("`{key}` always has a value, so `{op}` says nothing: compare it with eq or contains"))
        }
        (Kind::Text | Kind::OptionalText, Gt | Lt | Gte | Lte) => Err(format!(
            "`{key}` is text; `{op}` compares numbers: use eq or contains (to count elements, \
             dom.count)"
        )),
        (Kind::OptionalText, Exists | NotExists) => Ok(()),
        (Kind::Text | Kind::OptionalText, _) if expected.is_some_and(Value::is_string) => Ok(()),
        (Kind::Text | Kind::OptionalText, _) => Err(format!(
            "`{key}` is text; `expected` {} is not, so `{op}` can never match: write it as text (in quotes)",
            expected.unwrap_or(&Value::Null)
        )),
    }
}

/// What a fact read gave: a value (`null` = absent) or an evaluation error.
pub type Observed = Result<Value, String>;

/// One assertion's result (`failedAssertions[]` entries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssertionResult {
    /// Fact key.
    pub fact_key: String,
    /// Operator.
    pub op: Operator,
    /// Expected value.
    pub expected: Option<Value>,
    /// Observed value (null when absent or on error).
    pub observed: Value,
    /// Whether the assertion holds.
    pub passed: bool,
    /// Evaluation error, if the fact could not be read or compared.
    pub error: Option<String>,
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Checks one assertion against what was observed.
pub fn check(a: &Assertion, observed: &Observed) -> AssertionResult {
    let mut result = AssertionResult {
        fact_key: a.fact_key.clone(),
        op: a.operator,
        expected: a.expected.clone(),
        observed: Value::Null,
        passed: false,
        error: None,
    };
    let value = match observed {
        Ok(v) => v,
        Err(e) => {
            result.error = Some(e.clone());
            return result;
        }
    };
    result.observed = value.clone();
    let expected = a.expected.as_ref().unwrap_or(&Value::Null);
    let compare = |f: fn(f64, f64) -> bool| match (number(value), number(expected)) {
        (Some(x), Some(y)) => Ok(f(x, y)),
        _ => Err(format!("{} compares numbers; observed {value}, expected {expected}", a.operator.as_str())),
    };
    let outcome = match a.operator {
        Operator::Exists => Ok(!value.is_null()),
        Operator::NotExists => Ok(value.is_null()),
        Operator::Eq => Ok(equal(value, expected)),
        Operator::NotEq | Operator::Neq => Ok(!equal(value, expected)),
        Operator::Contains => match (value, expected) {
            (Value::String(s), Value::String(e)) => Ok(s.contains(e.as_str())),
            (Value::Array(items), e) => Ok(items.iter().any(|i| equal(i, e))),
            (Value::Null, _) => Ok(false),
            _ => Err(format!("contains needs text or a list; observed {value}")),
        },
        Operator::Gt => compare(|x, y| x > y),
        Operator::Lt => compare(|x, y| x < y),
        Operator::Gte => compare(|x, y| x >= y),
        Operator::Lte => compare(|x, y| x <= y),
    };
    match outcome {
        Ok(p) => result.passed = p,
        Err(e) => result.error = Some(e),
    }
    result
}

/// Verdict on an assertion set (`preconditionVerdict` / `outcomeVerdict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The set holds.
    Satisfied,
    /// The set does not hold.
    Failed,
    /// An assertion could not be evaluated, so the set cannot be judged.
    Unknown,
}

/// Evaluates a set given a way to observe facts. Returns the verdict and the results of the
/// assertions that failed or could not be evaluated.
pub fn evaluate(
    set: &AssertionSet,
    observe: &mut dyn FnMut(&Assertion) -> Observed,
) -> (Verdict, Vec<AssertionResult>) {
    let mut bad = Vec::new();
    let mut failed = false;
    let mut unknown = false;
    for a in &set.all {
        let r = check(a, &observe(a));
        if r.error.is_some() {
            unknown = true;
        } else if !r.passed {
            failed = true;
        }
        if !r.passed {
            bad.push(r);
        }
    }
    if !set.any.is_empty() {
        let results: Vec<AssertionResult> = set.any.iter().map(|a| check(a, &observe(a))).collect();
        if !results.iter().any(|r| r.passed) {
            if results.iter().any(|r| r.error.is_some()) {
                unknown = true;
            } else {
                failed = true;
            }
            bad.extend(results);
        }
    }
    for a in &set.forbidden {
        let r = check(a, &observe(a));
        if r.passed {
            failed = true;
            bad.push(r);
        } else if r.error.is_some() {
            unknown = true;
            bad.push(r);
        }
    }
    let verdict = if failed {
        Verdict::Failed
    } else if unknown {
        Verdict::Unknown
    } else {
        Verdict::Satisfied
    };
    (verdict, bad)
}

/// Whether a non-empty set holds now.
pub fn holds(set: &AssertionSet, observe: &mut dyn FnMut(&Assertion) -> Observed) -> bool {
    !set.is_empty() && evaluate(set, observe).0 == Verdict::Satisfied
}

/// The assertions behind a set that holds, as observed now: each of `all` and the `any` that
/// hold (a success's proof, `heldAssertions[]`; what made a result ambiguous). The set's own
/// `forbidden` are absences and are left out.
pub fn held(set: &AssertionSet, observe: &mut dyn FnMut(&Assertion) -> Observed) -> Vec<AssertionResult> {
    set.all.iter().chain(&set.any).map(|a| check(a, &observe(a))).filter(|r| r.passed).collect()
}

/// The forbidden assertions that hold now (the evidence of a failure).
pub fn forbidden_evidence(
    post: &Postconditions,
    observe: &mut dyn FnMut(&Assertion) -> Observed,
) -> Vec<AssertionResult> {
    post.forbidden.iter().map(|a| check(a, &observe(a))).filter(|r| r.passed).collect()
}

/// What the postconditions say at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The forbidden bucket holds: the action failed.
    Fail,
    /// The ambiguous bucket holds.
    Ambiguous,
    /// The success bucket holds (must stay so for `stabilityMs`).
    Success,
    /// Nothing conclusive yet.
    Pending,
    /// A needed fact could not be evaluated.
    EvalError,
}

/// Classifies the postconditions now: failure first, then ambiguity, then success.
pub fn classify(
    post: &Postconditions,
    observe: &mut dyn FnMut(&Assertion) -> Observed,
) -> (Outcome, Vec<AssertionResult>) {
    let mut details = Vec::new();
    if !post.forbidden.is_empty() {
        let (v, bad) = evaluate(&post.forbidden, observe);
        if v == Verdict::Satisfied {
            let results = post.forbidden.iter().map(|a| check(a, &observe(a))).filter(|r| r.passed).collect();
            return (Outcome::Fail, results);
        }
        if v == Verdict::Unknown {
            details.extend(bad.into_iter().filter(|r| r.error.is_some()));
        }
    }
    if !post.ambiguous.is_empty() && evaluate(&post.ambiguous, observe).0 == Verdict::Satisfied {
        return (Outcome::Ambiguous, held(&post.ambiguous, observe));
    }
    if !post.success.is_empty() {
        let (v, bad) = evaluate(&post.success, observe);
        match v {
            Verdict::Satisfied => return (Outcome::Success, Vec::new()),
            Verdict::Unknown => details.extend(bad.into_iter().filter(|r| r.error.is_some())),
            Verdict::Failed => details.extend(bad),
        }
    }
    if details.iter().any(|r| r.error.is_some()) {
        (Outcome::EvalError, details)
    } else {
        (Outcome::Pending, details)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn a(key: &str, op: Operator, expected: Option<Value>) -> Assertion {
        Assertion { fact_key: key.into(), operator: op, expected, frame_id: None }
    }

    /// Every fact family with every operator: accepted only where it means what it reads as,
    /// and then judged right on a present and an absent element (or signal).
    #[test]
    fn every_operator_on_every_kind_of_fact_means_what_it_says_or_is_refused() {
        use Operator::*;
        const ALL: [Operator; 10] = [Eq, NotEq, Neq, Exists, NotExists, Contains, Gt, Lt, Gte, Lte];
        // (key, a sensible expected value for it, the value when present, when absent)
        let families: &[(&str, Value, Value, Value)] = &[
            ("dom.exists(#e)", json!(true), json!(true), json!(false)),
            ("dom.visible(#e)", json!(true), json!(true), json!(false)),
            ("dom.checked(#e)", json!(true), json!(true), json!(false)),
            ("dom.enabled(#e)", json!(true), json!(true), json!(false)),
            ("form.submitted", json!(true), json!(true), json!(false)),
            ("chat.assistantTurnCreated", json!(true), json!(true), json!(false)),
            ("overlay.present", json!(true), json!(true), json!(false)),
            ("dom.count(.e)", json!(0), json!(2), json!(0)),
            ("page.navEpoch", json!(1), json!(2), json!(1)),
            ("form.validationErrors", json!(0), json!(1), json!(0)),
            ("dom.text(#e)", json!("Saved"), json!("Saved"), Value::Null),
            ("dom.value(#e)", json!("a"), json!("a"), Value::Null),
            ("dom.attr(#e|href)", json!("/x"), json!("/x"), Value::Null),
            ("chat.errorBanner", json!("Failed"), json!("Failed"), Value::Null),
            ("form.errorNote", json!("Invalid password"), json!("Invalid password"), Value::Null),
            ("overlay.text", json!("Sign in"), json!("Sign in"), Value::Null),
            ("page.title", json!("Home"), json!("Home"), json!("Other")),
            ("core.login_state", json!("logged_in"), json!("logged_in"), Value::Null),
            ("core.models.available", json!("gpt"), json!(["gpt"]), Value::Null),
        ];
        let validate = |x: &Assertion| {
            let key = facts::parse(&x.fact_key).expect("key");
            meaningful(x, key.kind())
        };
        for (key, sensible, present, absent) in families {
            let kind = facts::parse(key).expect("key").kind();
            for op in ALL {
                let x = a(key, op, op.needs_expected().then(|| sensible.clone()));
                let allowed = match kind {
                    facts::Kind::Bool => matches!(op, Eq | NotEq | Neq),
                    facts::Kind::Number => matches!(op, Eq | NotEq | Neq | Gt | Lt | Gte | Lte),
                    facts::Kind::Text => matches!(op, Eq | NotEq | Neq | Contains),
                    facts::Kind::OptionalText => {
                        matches!(op, Eq | NotEq | Neq | Contains | Exists | NotExists)
                    }
                    facts::Kind::Any => true,
                };
                match validate(&x) {
                    Ok(()) => {
                        assert!(allowed, "{key} {} was accepted", op.as_str());
                        // Accepted: it tells a present element from an absent one as it reads.
                        let on = |v: &Value| check(&x, &Ok(v.clone()));
                        let (p, n) = (on(present), on(absent));
                        if kind == facts::Kind::Any {
                            continue; // a list or a flag: what applies depends on the signal
                        }
                        assert!(p.error.is_none() && n.error.is_none(), "{key} {}: {p:?} {n:?}", op.as_str());
                        if matches!(op, Eq | Exists | Contains) && kind != facts::Kind::Number {
                            assert!(
                                p.passed && !n.passed,
                                "{key} {} present/absent: {p:?} {n:?}",
                                op.as_str()
                            );
                        }
                        if matches!(op, NotEq | Neq | NotExists) && kind != facts::Kind::Number {
                            assert!(
                                !p.passed && n.passed,
                                "{key} {} present/absent: {p:?} {n:?}",
                                op.as_str()
                            );
                        }
                    }
                    Err(e) => {
                        assert!(!allowed, "{key} {} was refused: {e}", op.as_str());
                        assert!(
                            e.contains(key)
                                && (e.contains("write") || e.contains("use") || e.contains("compare")),
                            "{e}"
                        );
                    }
                }
            }
        }
        // The trap of the issue: `exists` on dom.exists says what to write instead.
        let trap = validate(&a("dom.exists(#error)", Exists, None)).expect_err("trap");
        assert!(trap.contains(r#"{"operator": "eq", "expected": true}"#), "{trap}");
        // Types of `expected` that can never match are refused too.
        assert!(validate(&a("dom.exists(#e)", Eq, Some(json!("true")))).is_err());
        assert!(validate(&a("dom.count(.e)", Gt, Some(json!("0")))).is_err());
        assert!(validate(&a("dom.text(#e)", Eq, Some(json!(5)))).is_err());
        // A number fact compares as numbers: present (2) is gt the sensible 0, absent (0) is not.
        let gt = a("dom.count(.e)", Gt, Some(json!(0)));
        assert!(check(&gt, &Ok(json!(2))).passed && !check(&gt, &Ok(json!(0))).passed);
    }

    #[test]
    fn operators_compare_as_documented() {
        let ok = |op, exp: Option<Value>, obs: Value| check(&a("dom.text(#x)", op, exp), &Ok(obs)).passed;
        assert!(ok(Operator::Eq, Some(json!(3)), json!(3.0)));
        assert!(ok(Operator::NotEq, Some(json!("a")), json!("b")));
        assert!(ok(Operator::Neq, Some(json!("a")), Value::Null));
        assert!(ok(Operator::Exists, None, json!("")));
        assert!(!ok(Operator::Exists, None, Value::Null));
        assert!(ok(Operator::NotExists, None, Value::Null));
        assert!(ok(Operator::Contains, Some(json!("sent")), json!("Message sent!")));
        assert!(ok(Operator::Contains, Some(json!(2)), json!([1, 2])));
        assert!(ok(Operator::Gt, Some(json!(1)), json!(2)));
        assert!(ok(Operator::Gte, Some(json!("2")), json!(2)));
        assert!(ok(Operator::Lt, Some(json!(5)), json!("4")));
        assert!(ok(Operator::Lte, Some(json!(4)), json!(4)));
        let err = check(&a("dom.text(#x)", Operator::Gt, Some(json!(1))), &Ok(json!("abc")));
        assert!(!err.passed && err.error.is_some());
        let read_err = check(&a("dom.text(#x)", Operator::Eq, Some(json!(1))), &Err("frame gone".into()));
        assert_eq!((read_err.passed, read_err.error.as_deref()), (false, Some("frame gone")));
    }

    #[test]
    fn sets_combine_all_any_and_forbidden() {
        let set = AssertionSet {
            all: vec![a("dom.exists(#a)", Operator::Eq, Some(json!(true)))],
            any: vec![
                a("dom.count(.m)", Operator::Gte, Some(json!(2))),
                a("dom.exists(#b)", Operator::Eq, Some(json!(true))),
            ],
            forbidden: vec![a("dom.visible(.error)", Operator::Eq, Some(json!(true)))],
        };
        let facts = |ok_any: bool, error_shown: bool| {
            move |x: &Assertion| -> Observed {
                Ok(match x.fact_key.as_str() {
                    "dom.exists(#a)" => json!(true),
                    "dom.count(.m)" => json!(if ok_any { 3 } else { 1 }),
                    "dom.exists(#b)" => json!(false),
                    _ => json!(error_shown),
                })
            }
        };
        assert_eq!(evaluate(&set, &mut facts(true, false)).0, Verdict::Satisfied);
        let (v, bad) = evaluate(&set, &mut facts(false, false));
        assert_eq!((v, bad.len()), (Verdict::Failed, 2));
        let (v, bad) = evaluate(&set, &mut facts(true, true));
        assert_eq!((v, bad[0].fact_key.as_str()), (Verdict::Failed, "dom.visible(.error)"));
        let (v, _) = evaluate(&set, &mut |_| Err("boom".into()));
        assert_eq!(v, Verdict::Unknown);
        assert_eq!(evaluate(&AssertionSet::default(), &mut |_| Ok(Value::Null)).0, Verdict::Satisfied);
    }

    #[test]
    fn postconditions_classify_failure_before_success() {
        let post = Postconditions {
            success: AssertionSet {
                all: vec![a("dom.exists(.sent)", Operator::Eq, Some(json!(true)))],
                ..Default::default()
            },
            forbidden: AssertionSet {
                any: vec![a("dom.exists(.error)", Operator::Eq, Some(json!(true)))],
                ..Default::default()
            },
            ambiguous: AssertionSet::default(),
        };
        let obs = |sent: bool, error: bool| {
            move |x: &Assertion| -> Observed {
                Ok(json!(if x.fact_key.contains("sent") { sent } else { error }))
            }
        };
        assert_eq!(classify(&post, &mut obs(true, false)).0, Outcome::Success);
        assert_eq!(classify(&post, &mut obs(true, true)).0, Outcome::Fail);
        assert_eq!(classify(&post, &mut obs(false, false)).0, Outcome::Pending);
        assert_eq!(classify(&post, &mut |_| Err("x".into())).0, Outcome::EvalError);
    }

    #[test]
    fn what_held_names_each_all_and_the_any_that_held_and_an_ambiguity_says_which() {
        let set = AssertionSet {
            all: vec![a("page.navEpoch", Operator::Gt, Some(json!(1)))],
            any: vec![
                a("dom.visible(.saved)", Operator::Eq, Some(json!(true))),
                a("dom.visible(.queued)", Operator::Eq, Some(json!(true))),
            ],
            forbidden: vec![a("dom.visible(.error)", Operator::Eq, Some(json!(true)))],
        };
        let mut page = |x: &Assertion| -> Observed {
            Ok(match x.fact_key.as_str() {
                "page.navEpoch" => json!(2),
                "dom.visible(.saved)" => json!(true),
                _ => json!(false),
            })
        };
        let proof = held(&set, &mut page);
        let keys: Vec<&str> = proof.iter().map(|r| r.fact_key.as_str()).collect();
        assert_eq!(keys, ["page.navEpoch", "dom.visible(.saved)"]);
        assert_eq!((proof[0].observed.clone(), proof[1].passed), (json!(2), true));
        let post = Postconditions { ambiguous: set, ..Default::default() };
        let (outcome, why) = classify(&post, &mut page);
        assert_eq!((outcome, why), (Outcome::Ambiguous, proof));
    }

    #[test]
    fn contracts_reject_unknown_fields_at_any_depth() {
        let top = serde_json::from_value::<TransitionContract>(json!({"bogus": 1}));
        assert!(top.expect_err("top").to_string().contains("bogus"));
        let deep = serde_json::from_value::<TransitionContract>(json!({
            "postconditions": {"success": {"all": [{"factKey": "page.url", "operator": "exists", "extra": 1}]}}
        }));
        assert!(deep.expect_err("deep").to_string().contains("extra"));
        let op = serde_json::from_value::<TransitionContract>(json!({
            "preconditions": {"all": [{"factKey": "page.url", "operator": "like"}]}
        }));
        assert!(op.is_err());
    }

    #[test]
    fn validation_fails_closed_and_clamps_timing() {
        let empty = TransitionContract::default();
        assert!(empty.validate(true).expect_err("commit point").contains("fails closed"));
        assert!(empty.validate(false).is_ok());
        let c: TransitionContract = serde_json::from_value(json!({
            "actionKind": "send_message",
            "postconditions": {"success": {"all": [{"factKey": "dom.exists(.sent)", "operator": "eq", "expected": true}]}},
            "stabilityWindowMs": 60000, "stabilityMs": 9000
        }))
        .expect("parse");
        let eff = c.validate(true).expect("valid");
        assert_eq!((eff.stability_window_ms, eff.stability_ms), (30_000, 5_000));
        assert_eq!(eff.adjustments.len(), 2);
        let defaults = TransitionContract { action_kind: ActionKind::SendMessage, ..c.clone() };
        let defaults = TransitionContract { stability_window_ms: None, stability_ms: None, ..defaults };
        assert_eq!(defaults.validate(true).expect("ok").stability_window_ms, 10_000);
        let missing = serde_json::from_value::<TransitionContract>(json!({
            "preconditions": {"all": [{"factKey": "page.title", "operator": "eq"}]}
        }))
        .expect("parse");
        assert!(missing.validate(false).expect_err("expected").contains("needs `expected`"));
        let badkey = serde_json::from_value::<TransitionContract>(json!({
            "preconditions": {"all": [{"factKey": "dom.exists", "operator": "exists"}]}
        }))
        .expect("parse");
        assert!(badkey.validate(false).is_err());
    }
}
