//! Comparing parsed JSON values when number text may differ in form but not in value.

use serde_json::{Number, Value};

/// Whether two values are equal, numbers compared by `numbers`.
pub fn same_by(a: &Value, b: &Value, numbers: fn(&Number, &Number) -> bool) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_by(a, b, numbers))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_by(v, w, numbers)))
        }
        _ => a == b,
    }
}

/// The f32 a number's text reads as.
pub fn f32_of(n: &Number) -> Option<f32> {
    n.to_string().parse().ok()
}
