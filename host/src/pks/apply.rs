//! `nova.phenomenon_apply` (docs/pks.md, "Applying"): runs an active phenomenon's playbook in a
//! tab. In order: the entry must be active (`pks.not_active`) with actions
//! (`pks.empty_playbook`); the drift gate measures what is seen against the frozen baseline
//! (`pks.drift_blocked`); the fingerprint must be on the page (otherwise a precondition
//! failure, reported `not_applicable`, never an action failure); then each action goes through
//! the checks of `nova.click_selector`, held inside the surface its `maxScope` allows; then the
//! verify steps, which never use fallback selectors. The outcome is reported as telemetry.

use std::time::{Duration, Instant};

use nova_shared::protocol::pks::{Check, Probe, ProbeParams, ProbeResult, StepKind, StepParams, StepResult};
use nova_shared::protocol::{FrameInfo, FramesParams, TabInfo, method};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::drift::{self, Gate};
use super::model::{Action, ActionType, Fingerprint, Kind, MaxScope, Playbook, Signal, Verify, VerifyType};
use super::records::{self, Outcome};
use super::{Pks, probes, scope, siblings};
use crate::bridge::{BridgeError, DEFAULT_TIMEOUT};
use crate::call::{CallError, CallRecord, ToolReply, check_range};
use crate::observation::{ActionKind, flags};
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// `maxSteps` bounds and default.
pub const MAX_STEPS: (u32, u32, u32) = (1, 20, 10);
/// `timeoutMs` bounds and default.
pub const TIMEOUT_MS: (u32, u32, u32) = (1000, 60_000, 15_000);
/// How long an action waits for its element when it names no `timeoutMs`.
const ACTION_WAIT_MS: u64 = 2000;
/// How long a verify step waits when it names no `timeoutMs`.
const VERIFY_WAIT_MS: u64 = 3000;
/// How often a waiting step looks again.
const POLL: Duration = Duration::from_millis(100);
/// Share of the viewport `obstruction_cleared` allows covered when it names no threshold.
const OBSTRUCTION: f64 = 0.05;

/// What was seen, for the drift measure and the match.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Observation {
    /// Signals seen on the page (at most 256); without them Nova's own look at the page counts.
    #[serde(default)]
    pub signals: Option<Vec<Signal>>,
    /// Share of the fingerprint that must be on the page, 0 to 1 (default 0.5).
    #[serde(default)]
    pub min_confidence: Option<f64>,
}

crate::tool_args! {
    /// `nova.phenomenon_apply` arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ApplyArgs [tab, agent] {
        /// The site.
        pub scope: String,
        /// The phenomenon (case-insensitive).
        pub phenomenon_id: String,
        /// Most actions run (1-20, default 10).
        #[serde(default = "ten")]
        pub max_steps: u32,
        /// Time for the whole playbook, ms (1000-60000, default 15000).
        #[serde(default = "fifteen_seconds")]
        pub timeout_ms: u32,
        /// What was seen.
        #[serde(default)]
        pub observation: Option<Observation>,
    }
}

fn ten() -> u32 {
    MAX_STEPS.2
}

fn fifteen_seconds() -> u32 {
    TIMEOUT_MS.2
}

/// What `nova.phenomenon_apply` reaches.
pub struct PksApply<'h> {
    /// The PKS tables.
    pub pks: &'h Pks,
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
    /// The data dir (the drift gate's mode is a setting).
    pub data: &'h crate::paths::DataDir,
}

impl<'h> From<&'h crate::hub::Hub> for PksApply<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { pks: &hub.pks, tabs: hub.tabs(), bridge: &hub.bridge, data: &hub.data }
    }
}

crate::tool! {
    /// `nova.phenomenon_apply` in the tool registry.
    pub static PHENOMENON_APPLY = ToolDef::new(
        "nova.phenomenon_apply",
        "Run a site's active phenomenon (a consent banner, a modal) in a tab: its fingerprint must \
         be on the page, each action is checked like nova.click_selector and held inside the \
         surface it may touch, then its verify steps say whether the page is free. Refused when \
         the entry is not active or the page drifted from it; the outcome is reported as telemetry.",
        registry::schema::<ApplyArgs>,
        crate::handler!(PksApply::phenomenon_apply),
    )
    .bundles(&[Bundle::PksLearning, Bundle::BrowserAutomation])
    .tob(ActionKind::Interact, "webpage", flags::MUTATION_ATTEMPTED)
    .page(PageUse::Acts { needs_perception: false })
    .in_sequence();
}

/// One action's outcome.
struct Stepped {
    json: Value,
    ok: bool,
    dispatched: bool,
}

fn check_args(a: &ApplyArgs) -> Result<(), CallError> {
    check_range("maxSteps", a.max_steps, MAX_STEPS)?;
    check_range("timeoutMs", a.timeout_ms, TIMEOUT_MS)?;
    if let Some(o) = &a.observation {
        if o.min_confidence.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
            return Err(CallError::invalid(
                "observation.minConfidence",
                "`observation.minConfidence` must be between 0 and 1",
            ));
        }
        let n = o.signals.as_ref().map_or(0, Vec::len);
        if n > drift::MAX_OBSERVED {
            return Err(CallError::invalid(
                "observation.signals",
                format!("`observation.signals` holds at most {} signals, got {n}", drift::MAX_OBSERVED),
            ));
        }
    }
    Ok(())
}

/// The step a playbook action becomes, or why it cannot run here.
fn step_params(
    target: &str,
    kind: Kind,
    fp: &Fingerprint,
    a: &Action,
) -> Result<StepParams, (String, String)> {
    let step = match a.kind {
        ActionType::Click => StepKind::Click,
        ActionType::PressKey => StepKind::PressKey,
        ActionType::Dismiss => StepKind::Dismiss,
        ActionType::Type => {
            return Err((
                "pks.value_unavailable".into(),
                "a typing step needs a value nova.phenomenon_apply cannot supply; type it with nova.type_selector".into(),
            ));
        }
        ActionType::Wait => return Err(("pks.internal".into(), "a wait has no element".into())),
    };
    let mut selectors: Vec<String> = a.selector.iter().cloned().collect();
    if step == StepKind::Click {
        selectors.extend(a.fallback_selectors.iter().cloned());
    }
    let scope = a.max_scope.or((kind == Kind::ConsentCmp).then_some(MaxScope::ScopedToCmpSurface));
    let surface = probes::surface(fp).map(str::to_owned);
    if scope == Some(MaxScope::ScopedToCmpSurface) && surface.is_none() {
        return Err((
            "pks.outside_scope".into(),
            "the action is held to the consent surface, but the fingerprint names no dom signal for it"
                .into(),
        ));
    }
    Ok(StepParams {
        target: target.to_owned(),
        frame_id: None,
        kind: step,
        selectors,
        key: a.key.clone(),
        within: match scope {
            Some(MaxScope::ScopedToCmpSurface | MaxScope::ScopedToFrame) => surface,
            _ => None,
        },
        same_frame: scope == Some(MaxScope::ScopedToFrame),
        top_frame: scope == Some(MaxScope::ScopedToTopFrame),
    })
}

fn refusal(status: &str, code: &str, message: String, base: Value) -> ToolReply {
    let mut body = base;
    body["ok"] = json!(false);
    body["status"] = json!(status);
    body["reasonCode"] = json!(code);
    body["message"] = json!(message);
    ToolReply::ok(body)
}

impl PksApply<'_> {
    async fn probe(&self, p: ProbeParams) -> Result<ProbeResult, BridgeError> {
        self.bridge.call::<ProbeResult>(method::PKS_PROBE, p, DEFAULT_TIMEOUT).await
    }

    /// Runs one action, waiting for its element up to its `timeoutMs` (or the deadline).
    async fn act(
        &self,
        params: StepParams,
        wait: Duration,
        deadline: Instant,
    ) -> Result<StepResult, (String, String)> {
        let until = (Instant::now() + wait).min(deadline);
        loop {
            match self.bridge.call::<StepResult>(method::PKS_STEP, params.clone(), DEFAULT_TIMEOUT).await {
                Ok(r) => return Ok(r),
                Err(BridgeError::Remote { code, .. })
                    if code == nova_shared::reason::ELEMENT_NOT_FOUND
                        && let Some(r) = self.across_frames(&params).await =>
                {
                    return r;
                }
                Err(BridgeError::Remote { code, message }) => {
                    let waiting = matches!(
                        code.as_str(),
                        nova_shared::reason::ELEMENT_NOT_FOUND
                            | nova_shared::reason::ELEMENT_NOT_VISIBLE
                            | nova_shared::reason::ELEMENT_COVERED
                    );
                    if !waiting || Instant::now() + POLL >= until {
                        return Err((code, message));
                    }
                }
                Err(e) => return Err((e.reason_code().to_owned(), e.to_string())),
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// A step whose selector goes `>>>` into an iframe of another origin, which the page cannot
    /// enter: the rest of the selector is sent to that frame itself (found by the iframe's
    /// address among the tab's frames). The iframe must be inside the surface; all of its frame
    /// then is. `None` when no selector leads into such a frame.
    async fn across_frames(&self, params: &StepParams) -> Option<Result<StepResult, (String, String)>> {
        if params.top_frame || params.frame_id.is_some() {
            return None;
        }
        for selector in &params.selectors {
            let Some((frame, rest)) = selector.split_once(">>>") else { continue };
            let (frame, rest) = (frame.trim().to_owned(), rest.trim().to_owned());
            let probe = ProbeParams {
                target: params.target.clone(),
                probes: vec![Probe::FrameSrc { selector: frame, within: params.within.clone() }],
                surface: None,
                checks: Vec::new(),
            };
            let src = self.probe(probe).await.ok()?.proposals.into_iter().next().flatten()?;
            let frames = self
                .bridge
                .call::<Vec<FrameInfo>>(
                    method::FRAMES,
                    FramesParams { target: params.target.clone() },
                    DEFAULT_TIMEOUT,
                )
                .await
                .ok()?;
            let bare = |u: &str| u.split('#').next().unwrap_or_default().to_owned();
            let Some(f) = frames.iter().find(|f| f.frame_id != 0 && bare(&f.url) == bare(&src)) else {
                continue;
            };
            let inner = StepParams {
                frame_id: Some(f.frame_id),
                selectors: vec![rest],
                within: None,
                same_frame: false,
                ..params.clone()
            };
            let r = self.bridge.call::<StepResult>(method::PKS_STEP, inner, DEFAULT_TIMEOUT).await;
            return Some(match r {
                Ok(mut r) => {
                    r.selector = selector.clone();
                    Ok(r)
                }
                Err(BridgeError::Remote { code, message }) => Err((code, message)),
                Err(e) => Err((e.reason_code().to_owned(), e.to_string())),
            });
        }
        None
    }

    /// Runs one verify step until it holds or its time is up.
    async fn verify(&self, target: &str, surface: Option<&str>, v: &Verify, deadline: Instant) -> Value {
        let started = Instant::now();
        let wait = Duration::from_millis(v.timeout_ms.map_or(VERIFY_WAIT_MS, u64::from));
        let until = (started + wait).min(deadline);
        let check = match v.kind {
            VerifyType::Wait => {
                tokio::time::sleep(until.saturating_duration_since(started)).await;
                return json!({"type": "wait", "ok": true, "detail": "waited", "elapsedMs": started.elapsed().as_millis() as u64});
            }
            VerifyType::ObstructionCleared => {
                Check::ObstructionCleared { threshold: v.threshold.unwrap_or(OBSTRUCTION) }
            }
            VerifyType::ScrollUnlocked => Check::ScrollUnlocked,
            VerifyType::TopmostClickabilityRestored => Check::TopmostClickabilityRestored,
            VerifyType::Absent => match &v.selector {
                Some(s) => Check::Absent { selector: s.clone() },
                None => {
                    return json!({"type": "absent", "ok": false, "detail": "`absent` names no selector", "elapsedMs": 0});
                }
            },
        };
        let kind = serde_json::to_value(v.kind).unwrap_or(Value::Null);
        loop {
            let p = ProbeParams {
                target: target.to_owned(),
                probes: Vec::new(),
                surface: surface.map(str::to_owned),
                checks: vec![check.clone()],
            };
            let (ok, detail) = match self.probe(p).await {
                Ok(r) => {
                    r.checks.first().map_or((false, "no answer".to_owned()), |c| (c.ok, c.detail.clone()))
                }
                Err(e) => (false, e.to_string()),
            };
            if ok || Instant::now() + POLL >= until {
                return json!({"type": kind, "selector": v.selector, "ok": ok, "detail": detail,
                              "elapsedMs": started.elapsed().as_millis() as u64});
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// `nova.phenomenon_apply`.
    pub async fn phenomenon_apply(&self, rec: &mut CallRecord, a: ApplyArgs) -> Result<ToolReply, CallError> {
        check_args(&a)?;
        let scope = scope::normalize(&a.scope)?;
        let tab = match self.tabs.enter(rec, &a.target_id, true).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        self.run(rec, &tab, &scope, &a, false).await
    }

    /// Applies the entries of the tab's site that are active and on the page, for
    /// `nova.dismiss_blockers`: what each did (entries not on the page are left out, and nothing
    /// is reported for them).
    pub async fn consult(&self, rec: &mut CallRecord, tab: &TabInfo) -> Result<Vec<Value>, CallError> {
        let Ok(site) = scope::normalize(&tab.url) else { return Ok(Vec::new()) };
        let entries = self.pks.with(|c| records::entries(c, &site))?;
        let mut used = Vec::new();
        for e in entries.iter().filter(|e| e.active()) {
            let a = ApplyArgs {
                scope: site.clone(),
                phenomenon_id: e.id.clone(),
                max_steps: MAX_STEPS.2,
                timeout_ms: TIMEOUT_MS.2,
                observation: None,
                target_id: tab.target_id.clone(),
                agent_id: Some(rec.obs.agent_id.clone()),
            };
            let r = self.run(rec, tab, &site, &a, true).await?.structured;
            if r["preconditionFailed"] != true {
                used.push(json!({
                    "phenomenonId": e.id, "type": e.kind, "status": r["status"], "reasonCode": r["reasonCode"],
                    "stepsExecuted": r["stepsExecuted"], "verified": r["status"] == "ok",
                }));
            }
        }
        Ok(used)
    }

    /// Applies `a` in `tab`; `quiet`: a phenomenon not on the page is not reported.
    async fn run(
        &self,
        rec: &mut CallRecord,
        tab: &TabInfo,
        scope: &str,
        a: &ApplyArgs,
        quiet: bool,
    ) -> Result<ToolReply, CallError> {
        let started = Instant::now();
        let scope = scope.to_owned();
        let mut base = json!({"scope": scope, "phenomenonId": a.phenomenon_id, "targetId": tab.target_id,
                              "stepsExecuted": 0, "failedStepIndex": null, "stepResults": [], "verifyResults": [],
                              "telemetryReported": false, "driftGate": null});
        if scope::normalize(&tab.url).ok().as_deref() != Some(scope.as_str()) {
            let msg = format!("the tab shows {}, not {scope}: open the site in it first", tab.url);
            return Ok(refusal("rejected", "pks.scope_not_open", msg, base));
        }
        let policy = crate::settings::Settings::load(self.data).pks_sibling_policy;
        let (entry, inherited) = self.pks.with(|c| {
            Ok(match records::entry(c, &scope, &a.phenomenon_id)? {
                Some(e) => (Some(e), None),
                None => match siblings::find(c, &scope, &a.phenomenon_id, policy)? {
                    Some(i) => (Some(i.entry.clone()), Some(i)),
                    None => (None, None),
                },
            })
        })?;
        let Some(entry) = entry else {
            let msg = format!("{scope} has no phenomenon `{}`, nor does a sibling site", a.phenomenon_id);
            return Ok(refusal("error", "pks.phenomenon_not_found", msg, base));
        };
        let id = entry.id.clone();
        if let Some(i) = &inherited {
            base["inheritedFrom"] = json!(i.source);
            base["inheritance"] = json!({"verified": i.verified(), "failuresHere": i.standing.failures,
                                         "suppressed": i.standing.suppressed});
            if i.standing.suppressed {
                let msg = format!(
                    "{id} comes from {} and failed {} times in a row here: it is suppressed on {scope} (the source \
                     is untouched); store an entry of this site's own",
                    i.source,
                    siblings::SUPPRESS_AFTER
                );
                return Ok(refusal("rejected", "pks.sibling_suppressed", msg, base));
            }
            // Its first use here (or the first since the source changed) is a live check, one per
            // registrable domain and session.
            if !i.verified() && !rec.session.slots.get::<siblings::Checks>().take(&scope) {
                let msg = format!(
                    "{id} comes from {} and is not verified on {scope}; the one live check of a sibling entry \
                     this session has been used: store an entry of this site's own, or try in a new session",
                    i.source
                );
                return Ok(refusal("rejected", "pks.sibling_check_spent", msg, base));
            }
        }
        base["phenomenonId"] = json!(id);
        base["phenomenonType"] = json!(entry.kind);
        let fp: Fingerprint = serde_json::from_value(entry.fingerprint.clone())
            .map_err(|e| CallError::Store(format!("stored fingerprint of {id}: {e}")))?;
        let playbook: Playbook = serde_json::from_value(entry.playbook.clone())
            .map_err(|e| CallError::Store(format!("stored playbook of {id}: {e}")))?;
        let kind: Kind = serde_json::from_value(json!(entry.kind)).unwrap_or(Kind::Custom);
        base["policy"] = serde_json::to_value(playbook.policy).unwrap_or(Value::Null);
        if !entry.active() {
            let state =
                if entry.deprecated.is_some() { "retired".to_owned() } else { format!("at {}", entry.level) };
            let msg = format!("{id} is {state}; only active (L2) entries are applied (nova.learn_promote)");
            return Ok(refusal("rejected", "pks.not_active", msg, base));
        }
        if playbook.actions.is_empty() {
            let msg = format!("{id} has no actions to run");
            return Ok(refusal("rejected", "pks.empty_playbook", msg, base));
        }

        // Nova's own look at the page: which of the fingerprint's signals are there.
        let checkable = probes::checkable(&fp);
        let look = ProbeParams {
            target: tab.target_id.clone(),
            probes: checkable.iter().map(|(_, p)| p.clone()).collect(),
            surface: None,
            checks: Vec::new(),
        };
        let seen = match self.probe(look).await {
            Ok(r) => r,
            Err(e) => return Ok(ToolReply::bridge_failure(&e)),
        };
        let (live, confidence, missing) = probes::measure(&fp, &seen.present);
        base["matchConfidence"] = json!((confidence * 1000.0).round() / 1000.0);

        let session = rec.session.id.clone();
        let report = |outcome: &str, features: Value| {
            let elapsed = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
            if inherited.is_some() {
                // Outcomes of an inherited entry count here, never at the source.
                return Ok(None);
            }
            self.pks.with(|c| {
                let o = Outcome {
                    outcome,
                    elapsed_ms: Some(elapsed),
                    target_id: Some(&tab.target_id),
                    session_id: Some(&session),
                    features: Some(&features),
                };
                records::report(c, &scope, &id, &o, crate::time::now_ms())
            })
        };
        let min = a.observation.as_ref().and_then(|o| o.min_confidence).unwrap_or(0.5);
        let features =
            json!({"presentSignals": live, "absentSignals": missing, "matchConfidence": confidence});
        if checkable.is_empty() || confidence < min {
            // The situation is not on the page: nothing was tried, nothing failed, nothing drifted.
            if !quiet {
                report("not_applicable", features)?;
                base["telemetryReported"] = json!(true);
            }
            base["preconditionFailed"] = json!(true);
            let msg = format!(
                "{id} is not on the page: {:.2} of its fingerprint seen, {min} needed (missing: {})",
                confidence,
                missing.iter().map(|s| s.matches.as_str()).collect::<Vec<_>>().join(", ")
            );
            return Ok(refusal("error", "pks.phenomenon_absent", msg, base));
        }

        // The drift gate, on what the agent saw or else on Nova's look.
        let observed = a.observation.as_ref().and_then(|o| o.signals.clone()).unwrap_or_else(|| live.clone());
        let source = inherited.as_ref().map_or(scope.as_str(), |i| i.source.as_str());
        let debt = self.pks.with(|c| {
            let baseline = records::baseline(c, source, &id)?;
            let debt = drift::blend(entry.drift_debt, drift::distance(&baseline, &observed));
            if inherited.is_none() {
                records::set_drift(c, &scope, &id, debt)?;
            }
            Ok(debt)
        })?;
        let gate = Gate::judge(crate::settings::Settings::load(self.data).pks_drift_gate_mode, debt);
        base["driftGate"] = gate.to_json();
        if gate.blocks() {
            let msg = format!(
                "{id} has drifted from how it was stored (debt {debt:.2} >= {}); nova.revalidate shows what \
                 changed; store the new look as a new phenomenon",
                drift::THRESHOLD
            );
            return Ok(refusal("blocked", "pks.drift_blocked", msg, base));
        }

        if let Some(i) = inherited.as_ref().filter(|i| !i.verified()) {
            // The live check passed: its fingerprint is on this site's page.
            let now = crate::time::now_ms();
            self.pks.with(|c| siblings::record(c, &scope, i, siblings::Event::Checked, now))?;
        }
        let deadline = started + Duration::from_millis(u64::from(a.timeout_ms));
        let mut steps = Vec::new();
        let mut failed: Option<(usize, String)> = None;
        let mut dispatched = false;
        let mut matched = Vec::new();
        for (i, action) in playbook.actions.iter().take(a.max_steps as usize).enumerate() {
            let s = self.run_action(&tab.target_id, kind, &fp, i, action, deadline).await;
            dispatched |= s.dispatched;
            if let Some(sel) = s.json["selector"].as_str().filter(|_| s.ok) {
                matched.push(sel.to_owned());
            }
            let ok = s.ok;
            steps.push(s.json);
            if !ok {
                let code = steps[i]["reasonCode"].as_str().unwrap_or("pks.step_failed").to_owned();
                failed = Some((i, code));
                break;
            }
        }
        let mut verified = Vec::new();
        if failed.is_none() {
            let surface = probes::surface(&fp);
            for v in &playbook.verify {
                verified.push(self.verify(&tab.target_id, surface, v, deadline).await);
            }
        }
        if dispatched {
            rec.executed();
            rec.obs.signal_flags |= flags::MUTATION_COMMITTED;
        }
        let verify_ok = verified.iter().all(|v| v["ok"] == true);
        // Out of time is an action cut short; verify steps always give their answer.
        let timed_out = failed.is_some() && Instant::now() >= deadline;
        let success = failed.is_none() && verify_ok;
        let mut features = features;
        features["matchedSelectors"] = json!(matched);
        if let Some(i) = &inherited {
            let now = crate::time::now_ms();
            let event = if success { siblings::Event::Success } else { siblings::Event::Failure };
            let standing = self.pks.with(|c| siblings::record(c, &scope, i, event, now))?;
            base["inheritance"] = json!({"verified": standing.verified_rev == Some(i.source_rev),
                                         "failuresHere": standing.failures, "suppressed": standing.suppressed});
        }
        let (e, retired) = report(if success { "success" } else { "failure" }, features)?.unzip();
        base["telemetryReported"] = json!(true);
        base["autoDeprecated"] = json!(retired.unwrap_or(false));
        if let Some(e) = e {
            base["health"] = json!({"consecutiveFailures": e.attempts.3, "totalAttempts": e.attempts.0,
                                    "learningLevel": e.level, "deprecated": e.deprecated.is_some()});
        }
        base["stepsExecuted"] = json!(steps.len());
        base["failedStepIndex"] = json!(failed.as_ref().map(|(i, _)| i));
        base["stepResults"] = json!(steps);
        base["verifyResults"] = json!(verified);
        base["elapsedMs"] = json!(started.elapsed().as_millis() as u64);
        if success {
            base["ok"] = json!(true);
            base["status"] = json!("ok");
            base["reasonCode"] = Value::Null;
            rec.obs.url_after = Some(seen.url);
            return Ok(ToolReply::ok(base));
        }
        let (code, msg) = match (&failed, timed_out) {
            (_, true) => {
                ("pks.playbook_timeout".to_owned(), format!("{id} did not finish within {} ms", a.timeout_ms))
            }
            (Some((i, code)), _) => {
                (code.clone(), format!("action {i} of {id} failed: {}", steps[*i]["message"]))
            }
            (None, _) => (
                "pks.verify_failed".to_owned(),
                format!(
                    "{id} ran, but the page is not free: {}",
                    verified
                        .iter()
                        .filter(|v| v["ok"] != true)
                        .map(|v| v["detail"].as_str().unwrap_or_default())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            ),
        };
        Ok(refusal("error", &code, msg, base))
    }

    async fn run_action(
        &self,
        target: &str,
        kind: Kind,
        fp: &Fingerprint,
        i: usize,
        action: &Action,
        deadline: Instant,
    ) -> Stepped {
        let started = Instant::now();
        let name = serde_json::to_value(action.kind).unwrap_or(Value::Null);
        let elapsed = |s: Instant| s.elapsed().as_millis() as u64;
        if action.kind == ActionType::Wait {
            let wait = Duration::from_millis(action.timeout_ms.map_or(500, u64::from));
            tokio::time::sleep(wait.min(deadline.saturating_duration_since(started))).await;
            return Stepped {
                json: json!({"index": i, "action": name, "selector": null, "ok": true, "elapsedMs": elapsed(started)}),
                ok: true,
                dispatched: false,
            };
        }
        let params = match step_params(target, kind, fp, action) {
            Ok(p) => p,
            Err((code, message)) => {
                return Stepped {
                    json: json!({"index": i, "action": name, "selector": action.selector, "ok": false,
                                 "elapsedMs": 0, "reasonCode": code, "message": message}),
                    ok: false,
                    dispatched: false,
                };
            }
        };
        let wait = Duration::from_millis(action.timeout_ms.map_or(ACTION_WAIT_MS, u64::from));
        match self.act(params, wait, deadline).await {
            Ok(r) => Stepped {
                json: json!({"index": i, "action": name, "selector": r.selector, "element": r.element, "ok": true,
                             "elapsedMs": elapsed(started)}),
                ok: true,
                dispatched: true,
            },
            // The frame took the action and went away (a consent frame closing itself on
            // "Reject"): the verify steps say whether the page is free.
            Err((code, message)) if code == nova_shared::reason::GONE_AFTER_DISPATCH => Stepped {
                json: json!({"index": i, "action": name, "selector": action.selector, "ok": true,
                             "frameGone": true, "message": message, "elapsedMs": elapsed(started)}),
                ok: true,
                dispatched: true,
            },
            Err((code, message)) => Stepped {
                json: json!({"index": i, "action": name, "selector": action.selector, "ok": false,
                             "elapsedMs": elapsed(started), "reasonCode": code, "message": message}),
                ok: false,
                dispatched: false,
            },
        }
    }
}
