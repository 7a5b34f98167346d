//! The data side of the golden test: an [`ArrayView`] read from IPC against its JSON column
//! (`count`, `VALIDITY`, `DATA`, `OFFSET`, `SIZE`, `TYPE_ID`, `VIEWS`, `children`), recursively,
//! following dictionary-encoded fields into the JSON `dictionaries`.

use super::schema::{DictionaryIds, get, int, int_at, list};
use quiver::array::ArrayView;
use quiver::datatype::{DataType, IntervalUnit, UnionMode};
use quiver::schema::Field;
use serde_json::Value;
use std::collections::HashMap;

/// The JSON side of dictionaries: id → the dictionary's single column, and how the IPC file's
/// ids map onto the JSON's.
pub struct Dictionaries<'j> {
    /// JSON dictionary id → its `data` batch.
    pub json: HashMap<i64, &'j Value>,
    /// IPC dictionary id → JSON dictionary id, from the schema comparison.
    pub ids: DictionaryIds,
}

/// Lower-case hex of some bytes, as the JSON writes binary values.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
                .ok_or_else(|| format!("bad hex {s:?}"))
        })
        .collect()
}

/// IEEE 754 half precision bits as an f32.
fn f16_to_f32(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let mantissa = f32::from(bits & 0x3ff);
    sign * match exp {
        0 => mantissa * 2f32.powi(-24),
        31 if mantissa == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + mantissa / 1024.0) * 2f32.powi(exp - 15),
    }
}

/// A little-endian two's complement integer of any width as a decimal string.
fn decimal_string(le: &[u8]) -> String {
    let negative = le.last().is_some_and(|b| b & 0x80 != 0);
    let mut magnitude = le.to_vec();
    if negative {
        let mut carry = true;
        for b in &mut magnitude {
            let (v, c) = (!*b).overflowing_add(u8::from(carry));
            *b = v;
            carry = c;
        }
    }
    // Big-endian u32 limbs, divided by 10^9 until zero.
    let mut limbs: Vec<u32> = magnitude
        .chunks(4)
        .rev()
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect();
    let mut chunks = Vec::new();
    while limbs.iter().any(|l| *l != 0) {
        let mut rem = 0u64;
        for l in &mut limbs {
            let cur = (rem << 32) | u64::from(*l);
            *l = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        chunks.push(rem);
    }
    let mut out = String::from(if negative { "-" } else { "" });
    match chunks.split_last() {
        None => out.push('0'),
        Some((top, rest)) => {
            out += &top.to_string();
            for c in rest.iter().rev() {
                out += &format!("{c:09}");
            }
        }
    }
    out
}

/// The signed little-endian integer in `bytes[range]` (0 if out of range).
fn le(bytes: &[u8], range: std::ops::Range<usize>) -> i128 {
    decimal_string(bytes.get(range).unwrap_or_default())
        .parse()
        .unwrap_or(0)
}

fn close(expected: f64, actual: f64, relative: f64) -> bool {
    expected == actual || (expected - actual).abs() <= relative * expected.abs().max(1.0)
}

/// Compares `array` (read from IPC, typed by `field`) with its JSON column `col`.
pub fn compare_array(
    array: &ArrayView<'_>,
    col: &Value,
    field: &Field,
    dictionaries: &Dictionaries<'_>,
    path: &str,
) -> Result<(), String> {
    let count = int_at(col, "count")?;
    if count != array.len() as i128 {
        return Err(format!(
            "{path}: length: expected {count}, got {}",
            array.len()
        ));
    }
    if let Some(encoding) = field.dictionary() {
        let dictionary = array
            .dictionary()
            .ok_or_else(|| format!("{path}: dictionary-encoded field read without a dictionary"))?;
        compare_validity(array, col, path)?;
        let data = list(col, "DATA")?;
        for i in (0..array.len()).filter(|i| array.is_valid(*i)) {
            let expected = data.get(i).and_then(int);
            let actual = array.dictionary_index(i) as i128;
            if expected != Some(actual) {
                return Err(format!(
                    "{path} slot {i}: dictionary index: expected {expected:?}, got {actual}"
                ));
            }
        }
        let json_id = dictionaries
            .ids
            .get(&encoding.id)
            .copied()
            .unwrap_or(encoding.id);
        let json = dictionaries
            .json
            .get(&json_id)
            .ok_or_else(|| format!("{path}: JSON has no dictionary {json_id}"))?;
        let values_field = Field::new(field.name(), field.data_type().clone(), field.is_nullable());
        let columns = list(get(json, "data")?, "columns")?;
        let values = columns
            .first()
            .ok_or_else(|| format!("{path}: JSON dictionary {} has no column", encoding.id))?;
        let dict_path = format!("{path} dictionary {}", encoding.id);
        return compare_array(
            &dictionary.values,
            values,
            &values_field,
            dictionaries,
            &dict_path,
        );
    }

    let data_type = array.data_type();
    if data_type != field.data_type() {
        return Err(format!(
            "{path}: array type {data_type:?} differs from its field"
        ));
    }
    if !matches!(
        data_type,
        DataType::Null | DataType::Union(..) | DataType::RunEndEncoded(..)
    ) {
        compare_validity(array, col, path)?;
    }
    let valid: Vec<usize> = (0..array.len()).filter(|i| array.is_valid(*i)).collect();
    let slot_err = |i: usize, e: &dyn std::fmt::Display, a: &dyn std::fmt::Debug| {
        Err(format!("{path} slot {i}: expected {e}, got {a:?}"))
    };
    macro_rules! each {
        ($key:expr, |$i:ident, $json:ident| $body:block) => {{
            let values = list(col, $key)?;
            for &$i in &valid {
                let $json = values
                    .get($i)
                    .ok_or_else(|| format!("{path}: JSON {} too short at {}", $key, $i))?;
                $body
            }
        }};
    }
    macro_rules! ints {
        ($t:ty) => {
            each!("DATA", |i, json| {
                let actual = i128::from(array.value::<$t>(i));
                if int(json) != Some(actual) {
                    return slot_err(i, json, &actual);
                }
            })
        };
    }
    macro_rules! floats {
        ($actual:expr, $tolerance:expr) => {
            each!("DATA", |i, json| {
                let actual: f64 = $actual(i);
                let expected = json
                    .as_f64()
                    .ok_or_else(|| format!("{path}: DATA not a number"))?;
                if !close(expected, actual, $tolerance) {
                    return slot_err(i, json, &actual);
                }
            })
        };
    }
    match data_type {
        DataType::Null => {}
        DataType::Boolean => each!("DATA", |i, json| {
            if json.as_bool() != Some(array.bool_value(i)) {
                return slot_err(i, json, &array.bool_value(i));
            }
        }),
        DataType::Int8 => ints!(i8),
        DataType::Int16 => ints!(i16),
        DataType::Int32 | DataType::Date32 | DataType::Time32(_) => ints!(i32),
        DataType::Interval(IntervalUnit::YearMonth) => ints!(i32),
        DataType::Int64
        | DataType::Date64
        | DataType::Time64(_)
        | DataType::Timestamp(..)
        | DataType::Duration(_) => ints!(i64),
        DataType::UInt8 => ints!(u8),
        DataType::UInt16 => ints!(u16),
        DataType::UInt32 => ints!(u32),
        DataType::UInt64 => ints!(u64),
        DataType::Float16 => floats!(|i| f64::from(f16_to_f32(array.value::<u16>(i))), 1e-3),
        DataType::Float32 => floats!(|i| f64::from(array.value::<f32>(i)), 1e-6),
        DataType::Float64 => floats!(|i| array.value::<f64>(i), 1e-12),
        DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => each!("DATA", |i, json| {
            let actual = decimal_string(array.fixed_bytes(i));
            if json.as_str().map(|s| s.trim_start_matches('+')) != Some(actual.as_str()) {
                return slot_err(i, json, &actual);
            }
        }),
        DataType::Interval(IntervalUnit::DayTime) => each!("DATA", |i, json| {
            let b = array.fixed_bytes(i);
            let actual = (le(b, 0..4), le(b, 4..8));
            if (int_at(json, "days")?, int_at(json, "milliseconds")?) != actual {
                return slot_err(i, json, &actual);
            }
        }),
        DataType::Interval(IntervalUnit::MonthDayNano) => each!("DATA", |i, json| {
            let b = array.fixed_bytes(i);
            let actual = (le(b, 0..4), le(b, 4..8), le(b, 8..16));
            let expected = (
                int_at(json, "months")?,
                int_at(json, "days")?,
                int_at(json, "nanoseconds")?,
            );
            if expected != actual {
                return slot_err(i, json, &actual);
            }
        }),
        DataType::Binary | DataType::LargeBinary | DataType::FixedSizeBinary(_) => {
            each!("DATA", |i, json| {
                let actual = hex(array.bytes_value(i));
                if json.as_str().map(str::to_ascii_lowercase) != Some(actual.clone()) {
                    return slot_err(i, json, &actual);
                }
            })
        }
        DataType::Utf8 | DataType::LargeUtf8 => each!("DATA", |i, json| {
            if json.as_str() != Some(array.str_value(i)) {
                return slot_err(i, json, &array.str_value(i));
            }
        }),
        DataType::BinaryView | DataType::Utf8View => {
            let buffers = match col.get("VARIADIC_DATA_BUFFERS").and_then(Value::as_array) {
                Some(b) => b
                    .iter()
                    .map(|h| unhex(h.as_str().unwrap_or_default()))
                    .collect::<Result<Vec<_>, _>>()?,
                None => Vec::new(),
            };
            let utf8 = *data_type == DataType::Utf8View;
            each!("VIEWS", |i, view| {
                let expected = match view.get("INLINED").and_then(Value::as_str) {
                    Some(s) if utf8 => s.as_bytes().to_vec(),
                    Some(s) => unhex(s)?,
                    None => {
                        let buffer = int_at(view, "BUFFER_INDEX")? as usize;
                        let start = int_at(view, "OFFSET")? as usize;
                        let size = int_at(view, "SIZE")? as usize;
                        buffers
                            .get(buffer)
                            .and_then(|b| b.get(start..start + size))
                            .ok_or_else(|| format!("{path} slot {i}: JSON view out of range"))?
                            .to_vec()
                    }
                };
                if expected != array.bytes_value(i) {
                    return slot_err(i, &hex(&expected), &hex(array.bytes_value(i)));
                }
            })
        }
        DataType::List(_) | DataType::LargeList(_) | DataType::Map(..) => {
            let offsets = list(col, "OFFSET")?;
            let json_base = offsets.first().and_then(int).unwrap_or(0);
            let base = if array.is_empty() {
                0
            } else {
                array.list_range(0).start
            } as i128;
            for &i in &valid {
                let json = (
                    offsets.get(i).and_then(int).map(|o| o - json_base),
                    offsets.get(i + 1).and_then(int).map(|o| o - json_base),
                );
                let r = array.list_range(i);
                let actual = (Some(r.start as i128 - base), Some(r.end as i128 - base));
                if json != actual {
                    return Err(format!(
                        "{path} slot {i}: list offsets: expected {json:?}, got {actual:?}"
                    ));
                }
            }
        }
        DataType::ListView(_) | DataType::LargeListView(_) => {
            let (offsets, sizes) = (list(col, "OFFSET")?, list(col, "SIZE")?);
            for &i in &valid {
                let json = (offsets.get(i).and_then(int), sizes.get(i).and_then(int));
                let r = array.list_range(i);
                let actual = (Some(r.start as i128), Some(r.len() as i128));
                if json != actual {
                    return Err(format!(
                        "{path} slot {i}: list view (offset, size): expected {json:?}, got {actual:?}"
                    ));
                }
            }
        }
        DataType::Union(_, type_ids, mode) => {
            let ids = list(col, "TYPE_ID")?;
            let offsets = if *mode == UnionMode::Dense {
                list(col, "OFFSET")?
            } else {
                &[]
            };
            for i in 0..array.len() {
                let (child, slot) = array.union_value(i);
                let id = type_ids.get(child).copied().map(i128::from);
                if ids.get(i).and_then(int) != id {
                    return Err(format!(
                        "{path} slot {i}: type id: expected {:?}, got {id:?}",
                        ids.get(i)
                    ));
                }
                if *mode == UnionMode::Dense && offsets.get(i).and_then(int) != Some(slot as i128) {
                    return Err(format!(
                        "{path} slot {i}: dense union offset: expected {:?}, got {slot}",
                        offsets.get(i)
                    ));
                }
            }
        }
        DataType::FixedSizeList(..) | DataType::Struct(_) | DataType::RunEndEncoded(_) => {}
        other => return Err(format!("{path}: the golden test does not know {other:?}")),
    }

    let fields = data_type.children();
    let json_children = col
        .get("children")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if json_children.len() != fields.len() || array.children().len() != fields.len() {
        return Err(format!(
            "{path}: children: JSON has {}, the type {}, the array {}",
            json_children.len(),
            fields.len(),
            array.children().len()
        ));
    }
    for ((child, json), field) in array.children().iter().zip(json_children).zip(fields) {
        compare_array(
            child,
            json,
            field,
            dictionaries,
            &format!("{path}/{}", field.name()),
        )?;
    }
    Ok(())
}

/// `VALIDITY` (1/0 per slot; absent means all valid) against [`ArrayView::is_valid`].
fn compare_validity(array: &ArrayView<'_>, col: &Value, path: &str) -> Result<(), String> {
    let Some(validity) = col.get("VALIDITY").and_then(Value::as_array) else {
        return match (0..array.len()).find(|i| !array.is_valid(*i)) {
            Some(i) => Err(format!("{path} slot {i}: null, but JSON has no VALIDITY")),
            None => Ok(()),
        };
    };
    for i in 0..array.len() {
        let expected = validity.get(i).and_then(int).map(|v| v != 0);
        if expected != Some(array.is_valid(i)) {
            return Err(format!(
                "{path} slot {i}: validity: expected {expected:?}, got {}",
                array.is_valid(i)
            ));
        }
    }
    Ok(())
}

#[test]
fn decimal_strings() {
    assert_eq!(decimal_string(&0i128.to_le_bytes()), "0");
    assert_eq!(decimal_string(&(-1i128).to_le_bytes()), "-1");
    assert_eq!(
        decimal_string(&i128::MIN.to_le_bytes()),
        i128::MIN.to_string()
    );
    assert_eq!(
        decimal_string(&i128::MAX.to_le_bytes()),
        i128::MAX.to_string()
    );
    assert_eq!(
        decimal_string(&1_000_000_000i32.to_le_bytes()),
        "1000000000"
    );
    let mut wide = [0xffu8; 32];
    wide[0] = 0xfe;
    assert_eq!(decimal_string(&wide), "-2");
    let mut big = [0u8; 32];
    big[16] = 1; // 2^128
    assert_eq!(
        decimal_string(&big),
        "340282366920938463463374607431768211456"
    );
}

#[test]
fn half_floats() {
    assert_eq!(f16_to_f32(0x3c00), 1.0);
    assert_eq!(f16_to_f32(0xc000), -2.0);
    assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
    assert_eq!(f16_to_f32(0x7bff), 65504.0);
}
