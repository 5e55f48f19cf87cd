//! CLS, the closed loop around state-changing actions (docs/cls.md): precondition check in the
//! page -> intent journaled in SQLite (durable before dispatch) -> dispatch with the
//! postcondition watch armed in the page -> verdict, retry advice, journal update.
//!
//! One guarded transition per target at a time: a second one gets
//! `guarded_commit.coordinator_busy` with `retryAfterMs=1000`.
//!
//! This file holds what the hub keeps (the coordinator, retry advice); [`engine`] runs one
//! transition, [`journal`] stores it, [`macros`] are the `guarded_*` tools, [`goals`] the goal
//! tool and its store.

pub mod goals;
pub mod journal;
pub mod macros;

pub mod engine;
use std::collections::HashMap;
use std::sync::Mutex;

use nova_shared::cls::{AmbiguityPolicy, RetryPolicy};
use serde_json::{Value, json};

/// Wait suggested to a caller that found the target busy: 1000 ms (docs/cls.md).
pub const COORDINATOR_RETRY_AFTER_MS: u64 = 1000;

/// Reason codes of the CLS failure table.
pub mod reason {
    /// Commit point without a contract.
    pub const MISSING_CONTRACT: &str = "guarded_commit.missing_contract";
    /// Preconditions did not hold.
    pub const PRECONDITION_FAILED: &str = "guarded_commit.precondition_failed";
    /// Preconditions could not be evaluated (fails closed).
    pub const PRECONDITION_ERROR: &str = "guarded_commit.precondition_error";
    /// The target's active goal belongs to another agent.
    pub const BLOCKED_GOAL: &str = "guarded_commit.blocked_goal";
    /// Another guarded transition runs on the target.
    pub const COORDINATOR_BUSY: &str = "guarded_commit.coordinator_busy";
    /// The page refused the dispatch (element not actionable).
    pub const DISPATCH_PREPARE_REJECTED: &str = "guarded_commit.dispatch_prepare_rejected";
    /// The forbidden postconditions held.
    pub const POSTCONDITION_FAILED: &str = "guarded_commit.postcondition_failed";
    /// Indeterminate: the window passed with no success and no failure shown; dispatched once.
    pub const NO_SIGNAL_YET: &str = "guarded_commit.no_signal_yet";
    /// Indeterminate: the ambiguous bucket held (a sign-in that asks for a one-time code).
    pub const AMBIGUOUS_SIGNAL: &str = "guarded_commit.ambiguous_signal";
}

/// `guardedCommit.retryAdvice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAdvice {
    /// Repeating cannot duplicate an effect.
    SafeToRetry,
    /// Do not repeat.
    DoNotRetry,
    /// Look at the page (the postconditions) before deciding.
    CheckPostconditionFirst,
}

impl RetryAdvice {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SafeToRetry => "safe_to_retry",
            Self::DoNotRetry => "do_not_retry",
            Self::CheckPostconditionFirst => "check_postcondition_first",
        }
    }
}

/// How a guarded transition ended, for the advice table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Not dispatched (precondition, coordinator, page refusal).
    Blocked,
    /// `verified_success`.
    Success,
    /// `verified_fail`.
    Fail,
    /// `indeterminate`.
    Indeterminate,
}

/// The retry-advice table (docs/cls.md): policy x verdict.
pub fn advice(policy: RetryPolicy, ambiguity: AmbiguityPolicy, end: End) -> RetryAdvice {
    use RetryAdvice::*;
    match (end, policy) {
        (End::Blocked, _) => SafeToRetry,
        (End::Success, _) => DoNotRetry,
        (_, RetryPolicy::NoRetry) => DoNotRetry,
        (End::Fail, RetryPolicy::Idempotent) => SafeToRetry,
        (End::Fail, RetryPolicy::NonIdempotent) => CheckPostconditionFirst,
        (End::Indeterminate, RetryPolicy::Idempotent) => match ambiguity {
            AmbiguityPolicy::Abort => DoNotRetry,
            AmbiguityPolicy::Signal | AmbiguityPolicy::RetryOnce => SafeToRetry,
        },
        (End::Indeterminate, RetryPolicy::NonIdempotent) => match ambiguity {
            AmbiguityPolicy::Abort => DoNotRetry,
            AmbiguityPolicy::Signal | AmbiguityPolicy::RetryOnce => CheckPostconditionFirst,
        },
    }
}

/// CLS state of a hub.
pub struct Cls {
    /// The journal.
    pub journal: journal::Journal,
    /// Closed-loop goals.
    pub goals: goals::Goals,
    busy: Mutex<HashMap<String, InFlight>>,
}

/// The guarded transition a target is busy with. Its verdict is `pending` until the watch ends.
#[derive(Debug, Clone)]
struct InFlight {
    transition_id: String,
    started_at: i64,
    dispatched: bool,
}

impl InFlight {
    fn to_json(&self) -> Value {
        json!({
            "transitionId": self.transition_id,
            "dispatchStatus": if self.dispatched { json!("dispatched") } else { Value::Null },
            "verificationStatus": "pending",
            "startedAt": self.started_at,
        })
    }
}

/// Holds a target for one guarded transition; released on drop.
struct Busy<'a> {
    cls: &'a Cls,
    target: String,
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.cls.busy.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.target);
    }
}

impl Cls {
    /// Opens the journal and recovers transitions a previous hub left in doubt.
    pub fn open(db: &std::path::Path) -> Result<Self, crate::store::StoreError> {
        let journal = journal::Journal::open(db)?;
        match journal.recover() {
            Ok(0) => {}
            Ok(n) => {
                tracing::warn!(count = n, "transitions left between intent and verdict are now in doubt")
            }
            Err(e) => tracing::error!(error = %e, "cannot recover the transition journal"),
        }
        let goals = goals::Goals::open(db)?;
        Ok(Self { journal, goals, busy: Mutex::new(HashMap::new()) })
    }

    /// Takes `target` for `transition_id`, or returns the transition that holds it.
    fn claim(&self, target: &str, transition_id: &str, started_at: i64) -> Result<Busy<'_>, InFlight> {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(holder) = busy.get(target) {
            return Err(holder.clone());
        }
        let inflight = InFlight { transition_id: transition_id.to_owned(), started_at, dispatched: false };
        busy.insert(target.to_owned(), inflight);
        Ok(Busy { cls: self, target: target.to_owned() })
    }

    fn mark_dispatched(&self, target: &str) {
        if let Some(t) = self.busy.lock().unwrap_or_else(|p| p.into_inner()).get_mut(target) {
            t.dispatched = true;
        }
    }

    /// The guarded transition in flight on `target` (`verificationStatus=pending`), if any.
    pub fn pending(&self, target: &str) -> Option<Value> {
        self.busy.lock().unwrap_or_else(|p| p.into_inner()).get(target).map(InFlight::to_json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_table_never_invites_a_blind_repeat_of_a_non_idempotent_action() {
        use AmbiguityPolicy::*;
        use RetryPolicy::*;
        for amb in [Signal, RetryOnce, Abort] {
            assert_eq!(advice(NonIdempotent, amb, End::Success), RetryAdvice::DoNotRetry);
            assert_ne!(advice(NonIdempotent, amb, End::Fail), RetryAdvice::SafeToRetry);
            assert_ne!(advice(NonIdempotent, amb, End::Indeterminate), RetryAdvice::SafeToRetry);
            assert_eq!(advice(NoRetry, amb, End::Indeterminate), RetryAdvice::DoNotRetry);
            assert_eq!(advice(NonIdempotent, amb, End::Blocked), RetryAdvice::SafeToRetry);
        }
        assert_eq!(advice(Idempotent, Signal, End::Indeterminate), RetryAdvice::SafeToRetry);
        assert_eq!(advice(Idempotent, Abort, End::Indeterminate), RetryAdvice::DoNotRetry);
        assert_eq!(advice(Idempotent, Signal, End::Fail), RetryAdvice::SafeToRetry);
    }
}
