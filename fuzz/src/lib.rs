//! What the fuzz targets in `fuzz_targets/` share.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Asserts that `v` serialises to JSON that parses back to the same value.
///
/// Numbers compare to 12 significant digits: `serde_json` (without its `float_roundtrip`
/// feature, as the workspace builds it) may parse a number it wrote one unit in the last place
/// off (`1e42` back as `9.999999999999999e41`), which is `serde_json`'s doing, not Nova's.
///
/// # Panics
///
/// When it does not round-trip: that is the finding.
pub fn assert_round_trip<T: Serialize + DeserializeOwned>(v: &T, what: &str) {
    let text = serde_json::to_string(v).expect("serialise");
    let back: T =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what} we wrote does not parse: {e}"));
    let (a, b) = (serde_json::to_value(v).expect("value"), serde_json::to_value(&back).expect("value"));
    assert!(same(&a, &b), "{what} does not round-trip:\n  {a}\n  {b}");
}

/// JSON equality, numbers to 12 significant digits.
#[must_use]
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x != y => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
