//! Property tests of the JSON encoder on random batches (nested types, nulls, NaN, escapes,
//! unicode, dictionaries, run ends, unions, sliced columns):
//!
//! - encoding with random buffer sizes (down to 1 byte, with empty buffers mixed in) gives the
//!   same bytes as one call with a large buffer, and so does splitting rows off into encoders
//!   of their own (`Encoder::split_rows`);
//! - the output parses with serde_json and equals a value tree built in this file from the
//!   values the arrays were made of (dates and timestamps formatted by chrono; a float32 is
//!   expected as its exact value, and the text written for it must read back as that f32: its
//!   shortest texts can differ in the last digit, -461.57812 and -461.57813 for -461.578125).

use quiver_tests::json::arrays;
use quiver_tests::json::random;
use quiver_tests::json::same;

use arrays::*;
use chrono::{DateTime, FixedOffset, NaiveDate, SecondsFormat};
use proptest::collection::vec;
use proptest::prelude::*;
use quiver::json::{Encoder, EncoderOptions, JsonFormat};
use random::*;
use same::{f32_of, same_by};
use serde_json::{Map, Value};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decimal_text(v: i64, scale: i8) -> String {
    let digits = v.unsigned_abs().to_string();
    let sign = if v < 0 { "-" } else { "" };
    if scale <= 0 {
        let zeros = if v == 0 { 0 } else { (-scale) as usize };
        return format!("{sign}{digits}{}", "0".repeat(zeros));
    }
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    format!("{sign}{whole}.{fraction}")
}

/// The JSON of a value: `None` for a null slot (left out of objects unless nulls are explicit).
fn json(ty: &Ty, val: &Val, explicit: bool) -> Option<Value> {
    let number = |text: String| Some(serde_json::from_str::<Value>(&text).unwrap());
    Some(match (ty, val) {
        (_, Val::Null) => return None,
        (Ty::Union(ts), Val::Union(k, v)) => return json(&ts[*k], v, explicit),
        (Ty::Decimal128(s), Val::Int(v)) => return number(decimal_text(*v, *s)),
        (Ty::Date32, Val::Int(days)) => {
            let date = NaiveDate::from_num_days_from_ce_opt(*days as i32 + 719_163).unwrap();
            Value::from(format!("{date:?}"))
        }
        (Ty::Timestamp(tz), Val::Int(ms)) => {
            let utc = DateTime::from_timestamp_millis(*ms).unwrap();
            Value::from(if *tz {
                let offset = FixedOffset::east_opt(19_800).unwrap();
                utc.with_timezone(&offset)
                    .to_rfc3339_opts(SecondsFormat::AutoSi, true)
            } else {
                format!("{:?}", utc.naive_utc())
            })
        }
        (_, Val::Int(v)) => Value::from(*v),
        (_, Val::UInt(v)) => Value::from(*v),
        (_, Val::Float(f)) if f.is_finite() => Value::from(*f),
        (_, Val::Float32(f)) if f.is_finite() => Value::from(*f as f64),
        (_, Val::Float(_) | Val::Float32(_)) => Value::Null,
        (_, Val::Bool(b)) => Value::from(*b),
        (_, Val::Text(s)) => Value::from(s.as_str()),
        (_, Val::Bytes(b)) => Value::from(hex(b)),
        (Ty::List(t) | Ty::LargeList(t) | Ty::FixedList(t, _), Val::List(items)) => Value::Array(
            items
                .iter()
                .map(|v| json(t, v, explicit).unwrap_or(Value::Null))
                .collect(),
        ),
        (Ty::Struct(ts), Val::Struct(members)) => {
            let names = member_names(ts.len());
            object(
                ts.iter()
                    .zip(members)
                    .zip(names)
                    .map(|((t, v), n)| (n, json(t, v, explicit))),
                explicit,
            )
        }
        (Ty::Map(t), Val::Map(entries)) => object(
            entries
                .iter()
                .map(|(k, v)| (k.as_str(), json(t, v, explicit))),
            // A map's keys are written whatever `explicit_nulls` says.
            true,
        ),
        other => panic!("no JSON for {other:?}"),
    })
}

/// An object of members, null ones left out unless `explicit` (later keys win, as in a parser).
fn object<'k>(members: impl Iterator<Item = (&'k str, Option<Value>)>, explicit: bool) -> Value {
    let mut map = Map::new();
    for (name, value) in members {
        match value {
            Some(v) => {
                map.insert(name.to_string(), v);
            }
            None if explicit => {
                map.insert(name.to_string(), Value::Null);
            }
            None => {}
        }
    }
    Value::Object(map)
}

/// The value tree every row of `case` should encode as.
fn expected(case: &Case, explicit: bool) -> Value {
    let names = case.names();
    Value::Array(
        case.rows[case.skip..]
            .iter()
            .map(|row| {
                object(
                    case.types
                        .iter()
                        .zip(row)
                        .zip(&names)
                        .map(|((t, v), n)| (n.as_str(), json(t, v, explicit))),
                    explicit,
                )
            })
            .collect(),
    )
}

/// Whether the parsed output equals the expected tree, where a number expected as the exact
/// value of a float32 may be written as any text that reads back as that f32.
fn same(parsed: &Value, expected: &Value) -> bool {
    same_by(parsed, expected, |x, y| {
        let exact_f32 = y.as_f64().filter(|v| (*v as f32) as f64 == *v);
        x == y || exact_f32.is_some_and(|v| f32_of(x) == Some(v as f32))
    })
}

fn sizes() -> impl Strategy<Value = Vec<usize>> {
    let size = prop_oneof![1 => Just(0usize), 6 => 1usize..9, 3 => 9usize..300];
    // At least one non-empty buffer, so the encoder can finish.
    (vec(size, 0..8), 1usize..5).prop_map(|(mut sizes, last)| {
        sizes.push(last);
        sizes
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(quiver_tests::proptest_cases(96)))]

    #[test]
    fn output_is_the_same_for_any_buffer_sizes(case in case(), sizes in sizes(), explicit in any::<bool>()) {
        let batch = case.batch();
        let options = EncoderOptions::default().with_omit_nulls(!explicit);
        for format in [JsonFormat::JsonArray, JsonFormat::LineDelimited] {
            let whole = drain(&mut Encoder::batch(&batch, format, options).unwrap(), &[1 << 20]);
            let chunked = drain(&mut Encoder::batch(&batch, format, options).unwrap(), &sizes);
            prop_assert_eq!(&whole, &chunked);
        }
    }

    #[test]
    fn split_off_rows_write_the_same_bytes(
        case in case(),
        splits in vec(0usize..5, 0..6),
        sizes in sizes(),
    ) {
        let batch = case.batch();
        let options = EncoderOptions::default();
        for format in [JsonFormat::JsonArray, JsonFormat::LineDelimited] {
            let whole = drain(&mut Encoder::batch(&batch, format, options).unwrap(), &[1 << 20]);
            let mut rest = Encoder::batch(&batch, format, options).unwrap();
            let mut pieces = Vec::new();
            for rows in &splits {
                let mut front = rest.split_rows(*rows).unwrap();
                pieces.extend(drain(&mut front, &sizes));
            }
            pieces.extend(drain(&mut rest, &sizes));
            prop_assert_eq!(&whole, &pieces);
            // Once an encoder has written, its rows can no longer be split off.
            let mut started = Encoder::batch(&batch, format, options).unwrap();
            if started.encode(&mut [0u8; 1]).written > 0 {
                prop_assert!(started.split_rows(1).is_none());
            }
        }
    }

    #[test]
    fn output_parses_to_the_values_the_arrays_hold(case in case(), explicit in any::<bool>()) {
        let batch = case.batch();
        let options = EncoderOptions::default().with_omit_nulls(!explicit);
        let text = encode(&batch, JsonFormat::JsonArray, options);
        let parsed: Value = serde_json::from_str(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert!(same(&parsed, &expected(&case, explicit)), "{}", text);
        // Lines: one document per row, the same values.
        let lines = encode(&batch, JsonFormat::LineDelimited, options);
        let rows: Vec<Value> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        prop_assert!(same(&Value::Array(rows), &expected(&case, explicit)), "{}", lines);
        prop_assert!(lines.is_empty() || lines.ends_with('\n'));
    }
}
