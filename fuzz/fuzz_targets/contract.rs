//! The transition-contract parser and evaluator (`nova_shared::cls`, `nova_shared::facts`):
//! the `transitionContract` JSON an agent sends, its validation, and the evaluation of its
//! assertion sets against observed facts.
//!
//! Input: a contract as JSON. The facts observed for it are derived from the input itself (each
//! assertion sees one of a few values, or a read error), so the evaluator runs on the shapes the
//! contract invites.
//!
//! Checks: nothing panics; a parsed contract serialises and parses back to itself; every fact
//! key that parses writes back to the same key; validation keeps timing in its documented
//! bounds with `stabilityMs` below the window, and a commit point with no postconditions is
//! refused; an assertion checked against its own expected value gives `eq` true and `not_eq`
//! false; a set's verdict is `satisfied` exactly when no assertion is reported against it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nova_fuzz::assert_round_trip;
use nova_shared::cls::{
    self, Assertion, AssertionSet, Observed, Operator, STABILITY_MS, STABILITY_WINDOW_MS, TransitionContract,
    Verdict,
};
use nova_shared::facts;
use serde_json::{Value, json};

fuzz_target!(|data: &[u8]| {
    let Ok(contract) = serde_json::from_slice::<TransitionContract>(data) else { return };
    assert_round_trip(&contract, "a contract");

    for commit_point in [false, true] {
        match contract.validate(commit_point) {
            Ok(eff) => {
                let (lo, hi) = STABILITY_WINDOW_MS;
                assert!((lo..=hi).contains(&eff.stability_window_ms), "{eff:?}");
                assert!((STABILITY_MS.0..=STABILITY_MS.1).contains(&eff.stability_ms), "{eff:?}");
                assert!(eff.stability_ms < eff.stability_window_ms, "{eff:?}");
                assert!(!commit_point || !contract.postconditions.is_empty(), "commit points fail closed");
            }
            Err(e) => assert!(!e.is_empty()),
        }
    }

    let all: Vec<&Assertion> = contract
        .preconditions
        .iter()
        .chain(contract.postconditions.success.iter())
        .chain(contract.postconditions.forbidden.iter())
        .chain(contract.postconditions.ambiguous.iter())
        .collect();
    for a in &all {
        if let Ok(key) = facts::parse(&a.fact_key) {
            let written = match &key.arg {
                Some(arg) => format!("{}.{}({arg})", key.namespace, key.path),
                None => format!("{}.{}", key.namespace, key.path),
            };
            assert_eq!(facts::parse(&written).as_ref(), Ok(&key), "fact key `{}`", a.fact_key);
            let _ = cls::meaningful(a, key.kind());
        }
        if let Some(expected) = &a.expected {
            let same = Ok(expected.clone());
            let eq = Assertion { operator: Operator::Eq, ..(*a).clone() };
            let ne = Assertion { operator: Operator::NotEq, ..(*a).clone() };
            let (r_eq, r_ne) = (cls::check(&eq, &same), cls::check(&ne, &same));
            assert!(r_eq.passed && r_eq.error.is_none(), "{r_eq:?}");
            assert!(!r_ne.passed && r_ne.error.is_none(), "{r_ne:?}");
        }
    }

    let salt = data.len();
    let mut observe = |a: &Assertion| observed(a, salt);
    let post = &contract.postconditions;
    for set in [&contract.preconditions, &post.success, &post.forbidden, &post.ambiguous] {
        check_set(set, &mut observe);
    }
    let _ = cls::classify(post, &mut observe);
    let _ = cls::forbidden_evidence(post, &mut observe);
});

/// `evaluate` reports an assertion against the set exactly when the set is not satisfied.
fn check_set(set: &AssertionSet, observe: &mut dyn FnMut(&Assertion) -> Observed) {
    let (verdict, bad) = cls::evaluate(set, observe);
    assert_eq!(verdict == Verdict::Satisfied, bad.is_empty(), "{verdict:?} with {bad:?}");
    assert_eq!(cls::holds(set, observe), !set.is_empty() && verdict == Verdict::Satisfied);
}

/// What a page might show for `a`: always the same for the same assertion and input.
fn observed(a: &Assertion, salt: usize) -> Observed {
    let pick = a.fact_key.bytes().fold(salt, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b)));
    let expected = a.expected.clone().unwrap_or(Value::Null);
    Ok(match pick % 9 {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(false),
        3 => json!(0),
        4 => json!(2.5),
        5 => json!("Saved"),
        6 => json!([expected]),
        7 => expected,
        _ => return Err("the frame is gone".into()),
    })
}
