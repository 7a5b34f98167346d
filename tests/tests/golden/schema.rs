//! The schema side of the golden test: Arrow integration JSON fields become quiver [`Field`]s,
//! and a field read from IPC is compared with its JSON twin, children first-mismatch-wins.

use quiver::datatype::{DataType, DateUnit, IntType, IntervalUnit, Precision, TimeUnit, UnionMode};
use quiver::schema::{DictionaryEncoding, Field, Metadata};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// `obj[key]`, or an error naming the missing key.
pub fn get<'v>(obj: &'v Value, key: &str) -> Result<&'v Value, String> {
    obj.get(key).ok_or_else(|| format!("JSON has no `{key}`"))
}

/// `obj[key]` as an array.
pub fn list<'v>(obj: &'v Value, key: &str) -> Result<&'v [Value], String> {
    get(obj, key)?
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| format!("JSON `{key}` is not an array"))
}

/// `obj[key]` as a string.
pub fn text<'v>(obj: &'v Value, key: &str) -> Result<&'v str, String> {
    get(obj, key)?
        .as_str()
        .ok_or_else(|| format!("JSON `{key}` is not a string"))
}

/// An integer written as a JSON number or as a decimal string (64-bit values are strings).
pub fn int(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// `obj[key]` as an integer.
pub fn int_at(obj: &Value, key: &str) -> Result<i128, String> {
    int(get(obj, key)?).ok_or_else(|| format!("JSON `{key}` is not an integer"))
}

fn time_unit(t: &Value) -> Result<TimeUnit, String> {
    Ok(match text(t, "unit")? {
        "SECOND" => TimeUnit::Second,
        "MILLISECOND" => TimeUnit::Millisecond,
        "MICROSECOND" => TimeUnit::Microsecond,
        "NANOSECOND" => TimeUnit::Nanosecond,
        other => return Err(format!("unknown time unit {other}")),
    })
}

fn int_type(t: &Value) -> Result<IntType, String> {
    let bit_width = u8::try_from(int_at(t, "bitWidth")?).map_err(|e| e.to_string())?;
    let signed = get(t, "isSigned")?
        .as_bool()
        .ok_or("JSON `isSigned` is not a bool")?;
    Ok(IntType { bit_width, signed })
}

fn only(children: Vec<Field>) -> Result<Arc<Field>, String> {
    match <[Field; 1]>::try_from(children) {
        Ok([child]) => Ok(Arc::new(child)),
        Err(c) => Err(format!("expected one child, JSON has {}", c.len())),
    }
}

/// Maps a JSON `type` object and the field's converted children onto a [`DataType`].
fn data_type(t: &Value, children: Vec<Field>) -> Result<DataType, String> {
    let small = |v: i128| i32::try_from(v).map_err(|e| e.to_string());
    Ok(match text(t, "name")? {
        "null" => DataType::Null,
        "bool" => DataType::Boolean,
        "int" => match int_type(t)? {
            IntType {
                bit_width: 8,
                signed: true,
            } => DataType::Int8,
            IntType {
                bit_width: 16,
                signed: true,
            } => DataType::Int16,
            IntType {
                bit_width: 32,
                signed: true,
            } => DataType::Int32,
            IntType {
                bit_width: 64,
                signed: true,
            } => DataType::Int64,
            IntType {
                bit_width: 8,
                signed: false,
            } => DataType::UInt8,
            IntType {
                bit_width: 16,
                signed: false,
            } => DataType::UInt16,
            IntType {
                bit_width: 32,
                signed: false,
            } => DataType::UInt32,
            IntType {
                bit_width: 64,
                signed: false,
            } => DataType::UInt64,
            other => return Err(format!("bad int type {other:?}")),
        },
        "floatingpoint" => DataType::float(match text(t, "precision")? {
            "HALF" => Precision::Half,
            "SINGLE" => Precision::Single,
            "DOUBLE" => Precision::Double,
            other => return Err(format!("unknown precision {other}")),
        }),
        "decimal" => {
            let p = u8::try_from(int_at(t, "precision")?).map_err(|e| e.to_string())?;
            let s = i8::try_from(int_at(t, "scale")?).map_err(|e| e.to_string())?;
            match t.get("bitWidth").and_then(int).unwrap_or(128) {
                32 => DataType::Decimal32(p, s),
                64 => DataType::Decimal64(p, s),
                128 => DataType::Decimal128(p, s),
                256 => DataType::Decimal256(p, s),
                other => return Err(format!("bad decimal bitWidth {other}")),
            }
        }
        "date" => DataType::date(match text(t, "unit")? {
            "DAY" => DateUnit::Day,
            "MILLISECOND" => DateUnit::Millisecond,
            other => return Err(format!("unknown date unit {other}")),
        }),
        "time" => match int_at(t, "bitWidth")? {
            32 => DataType::Time32(time_unit(t)?),
            64 => DataType::Time64(time_unit(t)?),
            other => return Err(format!("bad time bitWidth {other}")),
        },
        "timestamp" => DataType::Timestamp(
            time_unit(t)?,
            t.get("timezone").and_then(Value::as_str).map(Arc::from),
        ),
        "duration" => DataType::Duration(time_unit(t)?),
        "interval" => DataType::Interval(match text(t, "unit")? {
            "YEAR_MONTH" => IntervalUnit::YearMonth,
            "DAY_TIME" => IntervalUnit::DayTime,
            "MONTH_DAY_NANO" => IntervalUnit::MonthDayNano,
            other => return Err(format!("unknown interval unit {other}")),
        }),
        "binary" => DataType::Binary,
        "largebinary" => DataType::LargeBinary,
        "utf8" => DataType::Utf8,
        "largeutf8" => DataType::LargeUtf8,
        "binaryview" => DataType::BinaryView,
        "utf8view" => DataType::Utf8View,
        "fixedsizebinary" => DataType::FixedSizeBinary(small(int_at(t, "byteWidth")?)?),
        "list" => DataType::List(only(children)?),
        "largelist" => DataType::LargeList(only(children)?),
        "listview" => DataType::ListView(only(children)?),
        "largelistview" => DataType::LargeListView(only(children)?),
        "fixedsizelist" => DataType::FixedSizeList(only(children)?, small(int_at(t, "listSize")?)?),
        "struct" => DataType::Struct(children.into()),
        "map" => {
            let sorted = t
                .get("keysSorted")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            DataType::Map(only(children)?, sorted)
        }
        "union" => {
            let mode = match text(t, "mode")? {
                "SPARSE" => UnionMode::Sparse,
                "DENSE" => UnionMode::Dense,
                other => return Err(format!("unknown union mode {other}")),
            };
            let ids = match t.get("typeIds").and_then(Value::as_array) {
                Some(ids) => ids
                    .iter()
                    .map(|v| int(v).and_then(|i| i8::try_from(i).ok()))
                    .collect::<Option<Vec<i8>>>()
                    .ok_or("bad union typeIds")?,
                None => (0..children.len() as i8).collect(),
            };
            DataType::Union(children.into(), ids.into(), mode)
        }
        "runendencoded" => {
            let pair = <[Field; 2]>::try_from(children)
                .map_err(|c| format!("run-end encoded with {} children", c.len()))?;
            DataType::RunEndEncoded(Arc::new(pair))
        }
        other => return Err(format!("unknown JSON type {other}")),
    })
}

/// Custom metadata from a JSON `metadata` list of `{key, value}` (absent means none).
pub fn metadata(obj: &Value) -> Result<Metadata, String> {
    let Some(kvs) = obj.get("metadata").and_then(Value::as_array) else {
        return Ok(Metadata::new());
    };
    kvs.iter()
        .map(|kv| Ok((text(kv, "key")?.to_string(), text(kv, "value")?.to_string())))
        .collect()
}

/// A JSON schema field (with children, metadata and dictionary encoding) as a quiver [`Field`].
pub fn field(f: &Value) -> Result<Field, String> {
    let name = text(f, "name")?;
    let children = match f.get("children").and_then(Value::as_array) {
        Some(children) => children.iter().map(field).collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let data_type = data_type(get(f, "type")?, children).map_err(|e| format!("{name}: {e}"))?;
    let nullable = get(f, "nullable")?
        .as_bool()
        .ok_or("`nullable` not a bool")?;
    let mut out = Field::new(name, data_type, nullable).with_metadata(metadata(f)?);
    if let Some(d) = f.get("dictionary") {
        out = out.with_dictionary(DictionaryEncoding {
            id: i64::try_from(int_at(d, "id")?).map_err(|e| e.to_string())?,
            index_type: int_type(get(d, "indexType")?)?,
            ordered: d.get("isOrdered").and_then(Value::as_bool).unwrap_or(false),
        });
    }
    Ok(out)
}

/// The type without its children: what must match at this level of the tree.
fn shallow(t: &DataType) -> String {
    match t {
        DataType::List(_) => "List".into(),
        DataType::LargeList(_) => "LargeList".into(),
        DataType::ListView(_) => "ListView".into(),
        DataType::LargeListView(_) => "LargeListView".into(),
        DataType::FixedSizeList(_, n) => format!("FixedSizeList({n})"),
        DataType::Struct(_) => "Struct".into(),
        DataType::Map(_, sorted) => format!("Map(keys_sorted: {sorted})"),
        DataType::Union(_, ids, mode) => format!("Union({ids:?}, {mode:?})"),
        DataType::RunEndEncoded(_) => "RunEndEncoded".into(),
        other => format!("{other:?}"),
    }
}

/// Dictionary ids: the IPC file's id → the JSON's id for the same field.
///
/// Writers renumber dictionaries (Arrow C++ gives every dictionary-encoded field its own id), so
/// ids are matched by field position rather than by value; one IPC id must always map to the same
/// JSON id.
pub type DictionaryIds = HashMap<i64, i64>;

/// Custom metadata sorted by key: Arrow treats it as a map, and writers reorder it.
fn sorted(metadata: &Metadata) -> Metadata {
    let mut out = metadata.clone();
    out.sort();
    out
}

/// Compares a field read from IPC with the JSON's, reporting the first difference with its path.
///
/// Follows Arrow's own integration comparison: custom metadata is a map (order ignored),
/// dictionary ids may be renumbered (recorded in `ids`), and the children of a map may carry
/// other names than the JSON's (`entries`/`key`/`value` are canonical, writers normalise them).
pub fn compare_field(
    expected: &Field,
    actual: &Field,
    path: &str,
    in_map: bool,
    ids: &mut DictionaryIds,
) -> Result<(), String> {
    let path = format!("{path}/{}", expected.name());
    let differ = |what: &str, e: &dyn std::fmt::Debug, a: &dyn std::fmt::Debug| {
        Err(format!("schema {path}: {what}: expected {e:?}, got {a:?}"))
    };
    if expected.name() != actual.name() && !in_map {
        return differ("name", &expected.name(), &actual.name());
    }
    if expected.is_nullable() != actual.is_nullable() {
        return differ("nullable", &expected.is_nullable(), &actual.is_nullable());
    }
    if sorted(expected.metadata()) != sorted(actual.metadata()) {
        return differ("metadata", expected.metadata(), actual.metadata());
    }
    match (expected.dictionary(), actual.dictionary()) {
        (None, None) => {}
        (Some(e), Some(a)) if (e.index_type, e.ordered) == (a.index_type, a.ordered) => {
            let json_id = *ids.entry(a.id).or_insert(e.id);
            if json_id != e.id {
                return Err(format!(
                    "schema {path}: dictionary id {} stands for JSON ids {json_id} and {}",
                    a.id, e.id
                ));
            }
        }
        (e, a) => return differ("dictionary", &e, &a),
    }
    let (et, at) = (expected.data_type(), actual.data_type());
    if shallow(et) != shallow(at) {
        return differ("type", &shallow(et), &shallow(at));
    }
    if et.children().len() != at.children().len() {
        return differ("children", &et.children().len(), &at.children().len());
    }
    let in_map = in_map || matches!(et, DataType::Map(..));
    for (e, a) in et.children().iter().zip(at.children()) {
        compare_field(e, a, &path, in_map, ids)?;
    }
    Ok(())
}
