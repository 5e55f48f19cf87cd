//! One guarded transition (docs/cls.md): check the precondition in the page, journal the intent
//! (durable before dispatch), dispatch with the postcondition watch armed, then the verdict, the
//! retry advice and the journal update.

use std::time::Duration;

use nova_shared::cls::{AssertionResult, Outcome, RetryPolicy, TransitionContract, Verdict};
use nova_shared::page::ActionReport;
use nova_shared::protocol::{
    ActParams, CheckParams, CheckResult, PageAction, TabInfo, WatchParams, WatchResult, WatchSpec, method,
};
use serde_json::{Value, json};

use crate::bridge::{BridgeError, DEFAULT_TIMEOUT};
use crate::call::{CallError, CallRecord, ToolReply};
use crate::observation::flags;
use crate::time::now_ms;

use super::{COORDINATOR_RETRY_AFTER_MS, End, RetryAdvice, advice, journal, reason};
use nova_shared::adapter::Adapter;

/// What a guarded transition reaches.
pub struct Guard<'h> {
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
    /// Guarded transitions.
    pub cls: &'h crate::cls::Cls,
    /// The data dir.
    pub data: &'h crate::paths::DataDir,
}

impl<'h> From<&'h crate::hub::Hub> for Guard<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { bridge: &hub.bridge, cls: &hub.cls, data: &hub.data }
    }
}

/// Everything a reply needs.
struct Report {
    transition_id: String,
    dispatch_status: Option<&'static str>,
    verification_status: &'static str,
    indeterminate_reason: Option<&'static str>,
    reason_code: Option<String>,
    retry: RetryAdvice,
    precondition: Option<Verdict>,
    outcome: Option<Verdict>,
    failed: Vec<AssertionResult>,
    /// What proved a success (`heldAssertions[]`).
    held: Vec<AssertionResult>,
    started: i64,
    action: Option<ActionReport>,
    message: Option<String>,
    adjustments: Vec<String>,
    success_seen: bool,
    page_reason: Option<String>,
    active: Option<Value>,
    /// The page did not answer the dispatch: a native dialog may hold it.
    dispatch_timed_out: bool,
    /// Where the action ended: the document the verdict was reached on, else the tab's URL
    /// once the watch ended (`urlAfter`).
    landed: Option<String>,
    /// What a dialog the page opened after the action asks, when nothing was proven
    /// (`pageAsks`).
    asking: Option<String>,
}

fn verdict_str(v: Verdict) -> &'static str {
    match v {
        Verdict::Satisfied => "satisfied",
        Verdict::Failed => "failed",
        Verdict::Unknown => "unknown",
    }
}

impl Report {
    fn reply(self, target_id: &str) -> ToolReply {
        let completed = now_ms();
        let dispatched = self.dispatch_status == Some("dispatched");
        let (ok, status, stage, verify_state) = match (self.dispatch_status, self.verification_status) {
            (_, "verified_success") => (true, "ok", "verified", "verified"),
            (Some("dispatched"), "skipped") => (true, "ok", "dispatch", "uncertain"),
            (_, "verified_fail") => (false, "failed", "verified", "failed"),
            (Some("dispatched") | None, "indeterminate") => {
                (false, "partial", "verify", if self.success_seen { "likely" } else { "uncertain" })
            }
            (Some(s), _) if s.starts_with("blocked") => (false, "blocked", "precondition", "failed"),
            _ => (false, "partial", "verify", "uncertain"),
        };
        let retryable = matches!(self.retry, RetryAdvice::SafeToRetry) && !ok;
        let mut structured = json!({
            "ok": ok,
            "status": status,
            "reasonCode": self.reason_code,
            "retryable": retryable,
            "retryAfterMs": if self.reason_code.as_deref() == Some(reason::COORDINATOR_BUSY) { json!(COORDINATOR_RETRY_AFTER_MS) } else { Value::Null },
            "stage": stage,
            "verifyState": verify_state,
            "retryAdvice": self.retry.as_str(),
            "targetId": target_id,
            "actionDispatched": if self.dispatch_status.is_none() { Value::Null } else { json!(dispatched) },
            "guardedCommit": {
                "transitionId": self.transition_id,
                "dispatchStatus": self.dispatch_status,
                "verificationStatus": self.verification_status,
                "indeterminateReason": self.indeterminate_reason,
                "retryAdvice": self.retry.as_str(),
                "preconditionVerdict": self.precondition.map(verdict_str),
                "outcomeVerdict": self.outcome.map(verdict_str),
                "failedAssertions": self.failed,
                "startedAt": self.started,
                "completedAt": completed,
                "durationMs": completed - self.started,
            },
        });
        if !self.held.is_empty() {
            structured["guardedCommit"]["heldAssertions"] = json!(self.held);
        }
        if let Some(a) = &self.action {
            for (k, v) in [
                ("element", json!(a.element)),
                ("urlBefore", json!(a.url_before)),
                ("urlAfter", json!(self.landed.as_deref().unwrap_or(&a.url_after))),
            ] {
                structured[k] = v;
            }
            if a.readback.is_some() {
                structured["readback"] = json!(a.readback);
            }
            crate::replies::merge(&mut structured, Value::Object(crate::replies::awareness_fields(a)));
        }
        if self.page_reason.as_deref() == Some(nova_shared::reason::FILE_INPUT_CLICK) {
            crate::replies::note_file_input_refusal(
                &mut structured,
                self.message.as_deref().unwrap_or_default(),
            );
        }
        if self.dispatch_timed_out {
            structured["nativeDialogWarning"] = json!(crate::replies::NATIVE_DIALOG_TIMEOUT);
        }
        if let Some(m) = self.message {
            structured["message"] = json!(m);
        }
        if let Some(q) = self.asking {
            structured["pageAsks"] = json!(q);
        }
        if let Some(p) = self.page_reason {
            structured["pageReasonCode"] = json!(p);
        }
        if let Some(a) = self.active {
            structured["guardedCommit"]["activeTransition"] = a;
        }
        if !self.adjustments.is_empty() {
            structured["contractAdjustments"] = json!(self.adjustments);
        }
        let mut reply = ToolReply::ok(structured);
        reply.is_error = !ok;
        reply
    }
}

/// Page refusals that happen before any event reaches the page.
fn refused_before_dispatch(code: &str) -> bool {
    code.starts_with("element_")
        // The tab or frame was not there to send the action to.
        || code == nova_shared::reason::TARGET_NOT_FOUND
        || code == nova_shared::reason::INVALID_SELECTOR
        || code == nova_shared::reason::FILE_INPUT_CLICK
        || code == reason::MISSING_CONTRACT
}

impl Guard<'_> {
    /// The adapter for a page: a site adapter from the data dir matching `url`, completed by
    /// the generic one.
    pub fn adapter_for(&self, url: &str) -> Adapter {
        crate::adapters::for_url(self.data, url)
    }
}

impl Guard<'_> {
    /// Runs one guarded transition on `tab`.
    pub async fn guarded(
        &self,
        rec: &mut CallRecord,
        tab: &TabInfo,
        action: PageAction,
        contract: &TransitionContract,
    ) -> Result<ToolReply, CallError> {
        let adapter = self.adapter_for(&tab.url);
        self.guarded_with_adapter(rec, tab, action, contract, adapter).await
    }

    /// [`Guard::guarded`] with the adapter the `chat.*` / `form.*` facts are read through.
    pub async fn guarded_with_adapter(
        &self,
        rec: &mut CallRecord,
        tab: &TabInfo,
        action: PageAction,
        contract: &TransitionContract,
        adapter: nova_shared::adapter::Adapter,
    ) -> Result<ToolReply, CallError> {
        let effective = contract.validate(false).map_err(|m| CallError::invalid("transitionContract", m))?;
        let started = now_ms();
        let transition_id = format!("tr_{}", uuid::Uuid::new_v4().simple());
        let policy = contract.retry();
        let ambiguity = contract.ambiguity();
        let mut report = Report {
            transition_id: transition_id.clone(),
            dispatch_status: None,
            verification_status: "skipped",
            indeterminate_reason: None,
            reason_code: None,
            retry: RetryAdvice::SafeToRetry,
            precondition: None,
            outcome: None,
            failed: Vec::new(),
            held: Vec::new(),
            started,
            action: None,
            message: None,
            adjustments: effective.adjustments.clone(),
            success_seen: false,
            page_reason: None,
            dispatch_timed_out: false,
            landed: None,
            asking: None,
            active: None,
        };
        let target = tab.target_id.clone();
        let _busy = match self.cls.claim(&target, &transition_id, started) {
            Ok(b) => b,
            Err(holder) => {
                report.active = Some(holder.to_json());
                report.dispatch_status = Some("blocked_coordinator");
                report.reason_code = Some(reason::COORDINATOR_BUSY.into());
                report.retry = advice(policy, ambiguity, End::Blocked);
                report.message =
                    Some("another guarded action is in flight on this tab; retry after it finishes".into());
                return Ok(report.reply(&target));
            }
        };

        let agent = rec.obs.agent_id.clone();
        let goal = self.cls.goals.active(&target);
        if let Some(g) = goal.as_ref().filter(|g| g.owner.as_deref().is_some_and(|o| o != agent)) {
            report.dispatch_status = Some("blocked_goal");
            report.reason_code = Some(reason::BLOCKED_GOAL.into());
            report.retry = advice(policy, ambiguity, End::Blocked);
            report.message = Some(format!(
                "the active goal {} on this tab belongs to agent `{}`",
                g.goal_id,
                g.owner.as_deref().unwrap_or_default()
            ));
            return Ok(report.reply(&target));
        }
        let step = goal.filter(|g| g.current_step > 0).map(|g| (g.goal_id, g.current_step));
        if let Some((id, idx)) = &step {
            self.cls.goals.step(id, *idx, "dispatched", &transition_id);
        }
        let watch = WatchSpec {
            postconditions: contract.postconditions.clone(),
            window_ms: effective.stability_window_ms,
            hold_ms: effective.stability_ms,
            adapter: Some(adapter),
        };
        let reply = self.guarded_inner(rec, tab, action, contract, report, watch).await;
        if let (Some((id, idx)), Ok(r)) = (&step, &reply) {
            let status = match r.structured["guardedCommit"]["verificationStatus"].as_str() {
                Some("verified_success" | "skipped") => "done",
                Some("verified_fail") => "failed",
                Some("indeterminate") => "ambiguous",
                _ => "blocked",
            };
            self.cls.goals.step(id, *idx, status, &transition_id);
        }
        reply
    }

    async fn guarded_inner(
        &self,
        rec: &mut CallRecord,
        tab: &TabInfo,
        action: PageAction,
        contract: &TransitionContract,
        mut report: Report,
        watch: WatchSpec,
    ) -> Result<ToolReply, CallError> {
        let target = tab.target_id.clone();
        let frame_id = match &action {
            PageAction::Click(c) => c.frame_id,
            PageAction::Type(t) => t.frame_id,
            PageAction::Select(o) => o.frame_id,
        };
        let transition_id = report.transition_id.clone();
        let policy = contract.retry();
        let ambiguity = contract.ambiguity();
        if !contract.preconditions.is_empty() {
            let params = CheckParams {
                target: target.clone(),
                frame_id,
                set: contract.preconditions.clone(),
                adapter: watch.adapter.clone(),
                nav_epoch: 0,
            };
            let (verdict, failed) =
                match self.bridge.call::<CheckResult>(method::CHECK, params, DEFAULT_TIMEOUT).await {
                    Ok(r) => (r.verdict, r.failed_assertions),
                    Err(e) => (Verdict::Unknown, vec![page_error(&e)]),
                };
            report.precondition = Some(verdict);
            if verdict != Verdict::Satisfied {
                report.dispatch_status = Some("blocked_precondition");
                report.reason_code = Some(
                    if verdict == Verdict::Failed {
                        reason::PRECONDITION_FAILED
                    } else {
                        reason::PRECONDITION_ERROR
                    }
                    .into(),
                );
                report.failed = failed;
                report.retry = advice(policy, ambiguity, End::Blocked);
                return Ok(report.reply(&target));
            }
        }

        let contract_json = serde_json::to_string(contract).unwrap_or_default();
        let intent = journal::Intent {
            transition_id: &transition_id,
            call_id: &rec.obs.call_id,
            tool: &rec.obs.tool,
            agent_id: &rec.obs.agent_id,
            mcp_session: &rec.obs.mcp_session,
            target_id: &target,
            url_before: &tab.url,
            action_kind: action_kind_str(contract),
            retry_policy: policy_str(policy),
            contract_json,
            precondition_verdict: report.precondition.map(verdict_str),
        };
        if let Err(e) = self.cls.journal.intent(&intent) {
            // Fail closed: without a durable intent nothing is dispatched.
            report.dispatch_status = Some("blocked_precondition");
            report.reason_code = Some(reason::DISPATCH_PREPARE_REJECTED.into());
            report.message = Some(format!("the transition journal could not record the intent: {e}"));
            return Ok(report.reply(&target));
        }

        rec.executed();
        let act = ActParams {
            target: target.clone(),
            frame_id,
            action,
            watch: watch.clone(),
            watch_id: transition_id.clone(),
            nav_epoch: 0,
        };
        match self.bridge.call::<ActionReport>(method::ACT, act, DEFAULT_TIMEOUT).await {
            Ok(mut a) => {
                // A report the extension inferred (its answer lost as the page left) carries no
                // URL before: it is the one this transition's intent recorded.
                if a.url_before.is_empty() {
                    a.url_before.clone_from(&tab.url);
                }
                rec.obs.signal_flags |= flags::MUTATION_COMMITTED;
                rec.obs.url_after = Some(a.url_after.clone());
                report.action = Some(a);
                report.dispatch_status = Some("dispatched");
                self.cls.mark_dispatched(&target);
                if let Err(e) = self.cls.journal.dispatched(&transition_id) {
                    tracing::error!(error = %e, "journal: cannot mark dispatched");
                }
            }
            Err(BridgeError::Remote { code, message }) if refused_before_dispatch(&code) => {
                report.dispatch_status = Some("blocked_precondition");
                // A commit point without an outcome to verify keeps its own reason; an element
                // that cannot take the action means the dispatch could not be prepared.
                report.reason_code = Some(if code == reason::MISSING_CONTRACT {
                    code.clone()
                } else {
                    reason::DISPATCH_PREPARE_REJECTED.to_owned()
                });
                report.page_reason = Some(code);
                report.message = Some(message);
                report.retry = advice(policy, ambiguity, End::Blocked);
                self.finish(&report, "blocked");
                return Ok(report.reply(&target));
            }
            Err(e) => {
                // The page may or may not have been touched: in doubt. A frame the action was
                // sent to that no longer exists went away under it (the action may remove it).
                report.verification_status = "indeterminate";
                report.dispatch_timed_out = matches!(e, BridgeError::Timeout { .. });
                let frame_gone = matches!(&e, BridgeError::Remote { code, .. } if code == nova_shared::reason::GONE_AFTER_DISPATCH);
                report.indeterminate_reason = Some(if report.dispatch_timed_out {
                    "timeout"
                } else if frame_gone {
                    "frame_destroyed"
                } else {
                    "eval_error"
                });
                report.reason_code =
                    Some(format!("guarded_commit.{}", report.indeterminate_reason.unwrap_or("timeout")));
                report.retry = RetryAdvice::CheckPostconditionFirst;
                report.message = Some(e.to_string());
                self.finish(&report, "in_doubt");
                return Ok(report.reply(&target));
            }
        }

        if contract.postconditions.is_empty() {
            // Nothing to watch: the dispatch is reported, verification is skipped.
            report.verification_status = "skipped";
            report.retry = match policy {
                RetryPolicy::Idempotent => RetryAdvice::SafeToRetry,
                RetryPolicy::NonIdempotent => RetryAdvice::CheckPostconditionFirst,
                RetryPolicy::NoRetry => RetryAdvice::DoNotRetry,
            };
            self.finish(&report, "completed");
            return Ok(report.reply(&target));
        }
        let window_ms = watch.window_ms;
        let wait = Duration::from_millis(u64::from(window_ms) + 10_000);
        let params = WatchParams {
            target: target.clone(),
            frame_id,
            watch,
            watch_id: transition_id.clone(),
            nav_epoch: 0,
        };
        let (end, indeterminate) = match self.bridge.call::<WatchResult>(method::WATCH, params, wait).await {
            Ok(w) => {
                report.success_seen = w.success_seen;
                report.failed = w.failed_assertions;
                report.held = w.held_assertions;
                report.landed = w.url;
                report.asking = w.asking;
                match w.outcome {
                    Outcome::Success => (End::Success, None),
                    Outcome::Fail => (End::Fail, None),
                    Outcome::Ambiguous => (End::Indeterminate, Some("ambiguous_signal")),
                    Outcome::EvalError => (End::Indeterminate, Some("eval_error")),
                    Outcome::Pending if w.navigated => (End::Indeterminate, Some("page_navigated")),
                    Outcome::Pending => (End::Indeterminate, Some("no_signal_yet")),
                }
            }
            Err(BridgeError::Timeout { .. }) => (End::Indeterminate, Some("timeout")),
            // The extension gave up on a page that stopped answering within the window.
            Err(BridgeError::Remote { code, .. }) if code == nova_shared::reason::TIMEOUT => {
                (End::Indeterminate, Some("timeout"))
            }
            Err(BridgeError::Remote { code, .. }) if code == nova_shared::reason::FRAME_DESTROYED => {
                (End::Indeterminate, Some("frame_destroyed"))
            }
            Err(e) => {
                report.failed = vec![page_error(&e)];
                (End::Indeterminate, Some("eval_error"))
            }
        };
        if report.landed.is_none() {
            report.landed = self.bridge.state().tab(&target).map(|t| t.url.clone());
        }
        if let Some(url) = &report.landed {
            rec.obs.url_after = Some(url.clone());
        }
        report.retry = advice(policy, ambiguity, end);
        match end {
            End::Success => {
                report.verification_status = "verified_success";
                report.outcome = Some(Verdict::Satisfied);
            }
            End::Fail => {
                report.verification_status = "verified_fail";
                report.outcome = Some(Verdict::Failed);
                report.reason_code = Some(reason::POSTCONDITION_FAILED.into());
            }
            _ => {
                report.verification_status = "indeterminate";
                report.outcome = Some(Verdict::Unknown);
                report.indeterminate_reason = indeterminate;
                report.reason_code = indeterminate.map(|r| format!("guarded_commit.{r}"));
                if report.reason_code.as_deref() == Some(reason::NO_SIGNAL_YET) {
                    report.message = Some(silence(window_ms, report.asking.as_deref()));
                }
            }
        }
        self.finish(&report, "completed");
        Ok(report.reply(&target))
    }

    fn finish(&self, r: &Report, state: &str) {
        let v = journal::Verdict {
            dispatch_status: r.dispatch_status.map(str::to_owned),
            verification_status: Some(r.verification_status.to_owned()),
            indeterminate_reason: r.indeterminate_reason.map(str::to_owned),
            retry_advice: Some(r.retry.as_str().to_owned()),
            outcome_verdict: r.outcome.map(|v| verdict_str(v).to_owned()),
            failed_assertions: serde_json::to_value(&r.failed).unwrap_or_default(),
            held_assertions: serde_json::to_value(&r.held).unwrap_or_default(),
        };
        if let Err(e) = self.cls.journal.complete(&r.transition_id, state, &v) {
            tracing::error!(error = %e, transition = %r.transition_id, "journal: cannot record the verdict");
        }
    }
}

/// What a `no_signal_yet` verdict tells the agent: nothing was proven, and the action went out;
/// and what a dialog opened since asks (`asking`: the page's, or the browser's own HTTP
/// sign-in), which holds the outcome back.
fn silence(window_ms: u32, asking: Option<&str>) -> String {
    let base = format!(
        "nothing the contract watches for showed within the {window_ms} ms window: the outcome is \
         proven neither way. The action was dispatched once; read the page before repeating it."
    );
    match asking {
        Some(q) => format!(
            "{base} A dialog waits for an answer (pageAsks): \"{q}\". Read it and answer it, or \
             ask the person, before anything else: the outcome may wait on it."
        ),
        None => base,
    }
}

fn page_error(e: &BridgeError) -> AssertionResult {
    AssertionResult {
        fact_key: "(page)".into(),
        op: nova_shared::cls::Operator::Exists,
        expected: None,
        observed: Value::Null,
        passed: false,
        error: Some(e.to_string()),
    }
}

fn action_kind_str(c: &TransitionContract) -> &'static str {
    use nova_shared::cls::ActionKind::*;
    match c.action_kind {
        DismissOverlay => "dismiss_overlay",
        SendMessage => "send_message",
        SubmitForm => "submit_form",
        SelectOption => "select_option",
        Custom => "custom",
    }
}

fn policy_str(p: RetryPolicy) -> &'static str {
    match p {
        RetryPolicy::Idempotent => "idempotent",
        RetryPolicy::NonIdempotent => "non_idempotent",
        RetryPolicy::NoRetry => "no_retry",
    }
}
