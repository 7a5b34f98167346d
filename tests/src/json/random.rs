//! Random batches for the JSON property tests: a type tree ([`Ty`]), values of it ([`Val`]),
//! and the quiver array that holds them ([`build`]); a [`Case`] is a batch of up to three such
//! columns, sliced. Shared by `json_roundtrip.rs` (against a value tree built from the same
//! values) and `json_arrow_json.rs` (against arrow-json on the same batch).

use super::arrays::*;
use proptest::collection::vec;
use proptest::prelude::*;
use quiver::array::RecordBatch;
use quiver::datatype::DataType;

/// A column type the random batches use.
#[derive(Debug, Clone)]
pub enum Ty {
    /// Int32.
    Int32,
    /// Int64.
    Int64,
    /// UInt64.
    UInt64,
    /// Float64.
    Float64,
    /// Float32.
    Float32,
    /// Boolean.
    Bool,
    /// Utf8.
    Utf8,
    /// LargeUtf8.
    LargeUtf8,
    /// Utf8View.
    Utf8View,
    /// Binary.
    Binary,
    /// Decimal128 of this scale.
    Decimal128(i8),
    /// Date32.
    Date32,
    /// Milliseconds, with the "+05:30" timezone or none.
    Timestamp(bool),
    /// Dictionary-encoded Utf8.
    Dict,
    /// Run-end encoded Int32.
    Ree,
    /// A list of this item type.
    List(Box<Ty>),
    /// A large list of this item type.
    LargeList(Box<Ty>),
    /// A fixed-size list of this item type and size.
    FixedList(Box<Ty>, usize),
    /// A struct of these member types.
    Struct(Vec<Ty>),
    /// Utf8 keys.
    Map(Box<Ty>),
    /// Sparse.
    Union(Vec<Ty>),
}

/// A value of a [`Ty`], or null.
#[derive(Debug, Clone)]
pub enum Val {
    /// Null.
    Null,
    /// A signed integer (also dates and timestamps).
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A float64.
    Float(f64),
    /// A float32.
    Float32(f32),
    /// A boolean.
    Bool(bool),
    /// Text.
    Text(String),
    /// Bytes.
    Bytes(Vec<u8>),
    /// List items.
    List(Vec<Val>),
    /// Struct members, in order.
    Struct(Vec<Val>),
    /// Map entries.
    Map(Vec<(String, Val)>),
    /// The union child chosen, and its value.
    Union(usize, Box<Val>),
}

/// Random column types, nested up to a few levels.
pub fn ty() -> impl Strategy<Value = Ty> {
    let leaf = prop_oneof![
        Just(Ty::Int32),
        Just(Ty::Int64),
        Just(Ty::UInt64),
        Just(Ty::Float64),
        Just(Ty::Float32),
        Just(Ty::Bool),
        Just(Ty::Utf8),
        Just(Ty::LargeUtf8),
        Just(Ty::Utf8View),
        Just(Ty::Binary),
        (-3i8..12).prop_map(Ty::Decimal128),
        Just(Ty::Date32),
        any::<bool>().prop_map(Ty::Timestamp),
        Just(Ty::Dict),
        Just(Ty::Ree),
    ];
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| Ty::List(Box::new(t))),
            inner.clone().prop_map(|t| Ty::LargeList(Box::new(t))),
            (inner.clone(), 1usize..3).prop_map(|(t, n)| Ty::FixedList(Box::new(t), n)),
            vec(inner.clone(), 1..4).prop_map(Ty::Struct),
            inner.clone().prop_map(|t| Ty::Map(Box::new(t))),
            vec(inner, 1..3).prop_map(Ty::Union),
        ]
    })
}

/// Random text: short words, any chars, characters JSON escapes, long words.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,12}",
        any::<String>(),
        "[\\x00-\\x1f\"\\\\/é😀 ]{0,8}",
        "[a-z]{20,60}",
    ]
}

/// Random floats, NaN and the infinities included.
pub fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => any::<f64>(),
        2 => -1e3f64..1e3,
        1 => Just(f64::NAN),
        1 => prop_oneof![Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(-0.0)],
    ]
}

/// A value of `ty` that is never null (unions pick a child; the child's value may be null).
pub fn value(ty: &Ty) -> BoxedStrategy<Val> {
    match ty {
        Ty::Int32 | Ty::Ree => any::<i32>().prop_map(|v| Val::Int(v.into())).boxed(),
        Ty::Int64 => any::<i64>().prop_map(Val::Int).boxed(),
        Ty::UInt64 => any::<u64>().prop_map(Val::UInt).boxed(),
        Ty::Float64 => float().prop_map(Val::Float).boxed(),
        Ty::Float32 => float().prop_map(|f| Val::Float32(f as f32)).boxed(),
        Ty::Bool => any::<bool>().prop_map(Val::Bool).boxed(),
        Ty::Utf8 | Ty::LargeUtf8 | Ty::Utf8View => text().prop_map(Val::Text).boxed(),
        Ty::Dict => prop_oneof!["a|b|c", "[\"x]{0,3}"]
            .prop_map(Val::Text)
            .boxed(),
        Ty::Binary => vec(any::<u8>(), 0..20).prop_map(Val::Bytes).boxed(),
        Ty::Decimal128(_) => any::<i64>().prop_map(Val::Int).boxed(),
        Ty::Date32 => (-800_000i64..2_900_000).prop_map(Val::Int).boxed(),
        Ty::Timestamp(_) => (-8_000_000_000_000_000i64..8_000_000_000_000_000)
            .prop_map(|ms| Val::Int(ms / 1000))
            .boxed(),
        Ty::List(t) | Ty::LargeList(t) => vec(nullable(t), 0..4).prop_map(Val::List).boxed(),
        Ty::FixedList(t, n) => vec(nullable(t), *n).prop_map(Val::List).boxed(),
        Ty::Struct(ts) => ts
            .iter()
            .map(nullable)
            .collect::<Vec<_>>()
            .prop_map(Val::Struct)
            .boxed(),
        Ty::Map(t) => vec(("[a-d]{1,2}", nullable(t)), 0..4)
            .prop_map(Val::Map)
            .boxed(),
        Ty::Union(ts) => {
            let choices: Vec<_> = ts
                .iter()
                .enumerate()
                .map(|(k, t)| nullable(t).prop_map(move |v| Val::Union(k, Box::new(v))))
                .collect();
            proptest::strategy::Union::new(choices).boxed()
        }
    }
}

/// A value of `ty`, or null (union slots are never null themselves).
pub fn nullable(ty: &Ty) -> BoxedStrategy<Val> {
    if matches!(ty, Ty::Union(_)) {
        return value(ty);
    }
    prop_oneof![1 => Just(Val::Null), 4 => value(ty)].boxed()
}

/// The integers of `vals` (anything else as null).
pub fn ints(vals: &[Val]) -> impl Iterator<Item = Option<i64>> + '_ {
    vals.iter().map(|v| match v {
        Val::Int(i) => Some(*i),
        _ => None,
    })
}

/// The values `f` picks out of `vals` (the others as nulls).
fn pick<T>(vals: &[Val], f: impl Fn(&Val) -> Option<T>) -> Vec<Option<T>> {
    vals.iter().map(f).collect()
}

/// The text or bytes of `vals` (anything else as null).
pub fn texts(vals: &[Val]) -> Vec<Option<&[u8]>> {
    vals.iter()
        .map(|v| match v {
            Val::Text(s) => Some(s.as_bytes()),
            Val::Bytes(b) => Some(&b[..]),
            _ => None,
        })
        .collect()
}

/// The array of `ty` holding `vals`.
pub fn build(ty: &Ty, vals: &[Val]) -> Array {
    let valid: Vec<bool> = vals.iter().map(|v| !matches!(v, Val::Null)).collect();
    match ty {
        Ty::Int32 => int32(&ints(vals).map(|v| v.map(|v| v as i32)).collect::<Vec<_>>()),
        Ty::Int64 => prim(DataType::Int64, &ints(vals).collect::<Vec<_>>()),
        Ty::Decimal128(s) => prim(
            DataType::Decimal128(38, *s),
            &ints(vals).map(|v| v.map(i128::from)).collect::<Vec<_>>(),
        ),
        Ty::Date32 => prim(
            DataType::Date32,
            &ints(vals).map(|v| v.map(|v| v as i32)).collect::<Vec<_>>(),
        ),
        Ty::Timestamp(tz) => prim(
            DataType::Timestamp(
                quiver::datatype::TimeUnit::Millisecond,
                tz.then(|| "+05:30".into()),
            ),
            &ints(vals).collect::<Vec<_>>(),
        ),
        Ty::UInt64 => prim(
            DataType::UInt64,
            &pick(vals, |v| match v {
                Val::UInt(x) => Some(*x),
                _ => None,
            }),
        ),
        Ty::Float64 => prim(
            DataType::Float64,
            &pick(vals, |v| match v {
                Val::Float(x) => Some(*x),
                _ => None,
            }),
        ),
        Ty::Float32 => prim(
            DataType::Float32,
            &pick(vals, |v| match v {
                Val::Float32(x) => Some(*x),
                _ => None,
            }),
        ),
        Ty::Bool => bools(&pick(vals, |v| match v {
            Val::Bool(b) => Some(*b),
            _ => None,
        })),
        Ty::Utf8 => var(DataType::Utf8, &texts(vals)),
        Ty::LargeUtf8 => var(DataType::LargeUtf8, &texts(vals)),
        Ty::Utf8View => views(DataType::Utf8View, &texts(vals)),
        Ty::Binary => var(DataType::Binary, &texts(vals)),
        Ty::Dict => {
            let mut words: Vec<&str> = Vec::new();
            let indices: Vec<Option<i32>> = vals
                .iter()
                .map(|v| match v {
                    Val::Text(s) => Some(match words.iter().position(|w| w == s) {
                        Some(i) => i as i32,
                        None => {
                            words.push(s);
                            words.len() as i32 - 1
                        }
                    }),
                    _ => None,
                })
                .collect();
            // A null dictionary value nobody points at, to keep the encoder honest.
            let mut dict: Vec<Option<&str>> = words.iter().map(|w| Some(*w)).collect();
            dict.push(None);
            dictionary(&indices, utf8(&dict))
        }
        Ty::Ree => {
            let mut ends = Vec::new();
            let mut runs: Vec<Option<i32>> = Vec::new();
            for (i, v) in ints(vals).enumerate() {
                let v = v.map(|v| v as i32);
                if runs.last() == Some(&v) {
                    *ends.last_mut().unwrap() = i as i32 + 1;
                } else {
                    runs.push(v);
                    ends.push(i as i32 + 1);
                }
            }
            run_ends(&ends, int32(&runs))
        }
        Ty::List(t) | Ty::LargeList(t) => {
            let mut lens = Vec::new();
            let mut children = Vec::new();
            for v in vals {
                match v {
                    Val::List(items) => {
                        lens.push(Some(items.len()));
                        children.extend(items.iter().cloned());
                    }
                    _ => lens.push(None),
                }
            }
            list(matches!(ty, Ty::LargeList(_)), build(t, &children), &lens)
        }
        Ty::FixedList(t, n) => {
            let mut children = Vec::new();
            for v in vals {
                match v {
                    Val::List(items) => children.extend(items.iter().cloned()),
                    _ => children.extend(std::iter::repeat_n(Val::Null, *n)),
                }
            }
            fixed_list(build(t, &children), *n as i32, &valid)
        }
        Ty::Struct(ts) => {
            let members = members(ts, vals, |v, j| match v {
                Val::Struct(m) => Some(m[j].clone()),
                _ => None,
            });
            structs(members, &valid)
        }
        Ty::Map(t) => {
            let (mut keys, mut values, mut lens) = (Vec::new(), Vec::new(), Vec::new());
            for v in vals {
                match v {
                    Val::Map(entries) => {
                        lens.push(Some(entries.len()));
                        for (k, v) in entries {
                            keys.push(Some(k.as_str()));
                            values.push(v.clone());
                        }
                    }
                    _ => lens.push(None),
                }
            }
            map(utf8(&keys), build(t, &values), &lens)
        }
        Ty::Union(ts) => {
            let ids: Vec<i8> = vals
                .iter()
                .map(|v| match v {
                    Val::Union(k, _) => *k as i8,
                    _ => 0,
                })
                .collect();
            let children = members(ts, vals, |v, j| match v {
                Val::Union(k, v) if *k == j => Some((**v).clone()),
                _ => None,
            });
            union(children, &ids, None)
        }
    }
}

/// Member names, one with characters that need escaping.
/// The named member arrays of `ts` (a struct's or a union's), member `j` of each row being what
/// `member(row, j)` picks (null when nothing).
fn members(
    ts: &[Ty],
    vals: &[Val],
    member: impl Fn(&Val, usize) -> Option<Val>,
) -> Vec<(&'static str, Array)> {
    let names = member_names(ts.len());
    ts.iter()
        .enumerate()
        .map(|(j, t)| {
            let column: Vec<Val> = vals
                .iter()
                .map(|v| member(v, j).unwrap_or(Val::Null))
                .collect();
            (names[j], build(t, &column))
        })
        .collect()
}

/// The names of the first `n` struct or union members.
pub fn member_names(n: usize) -> Vec<&'static str> {
    ["a", "b\"\n", "ccc"][..n].to_vec()
}

/// A batch of random columns: their types and rows.
#[derive(Debug, Clone)]
pub struct Case {
    /// The column types.
    pub types: Vec<Ty>,
    /// The rows, one value per column.
    pub rows: Vec<Vec<Val>>,
    /// Rows before the slice the batch keeps.
    pub skip: usize,
}

/// Random cases of one to three columns.
pub fn case() -> impl Strategy<Value = Case> {
    (vec(ty(), 1..4), 0usize..3)
        .prop_flat_map(|(types, skip)| {
            let row: Vec<BoxedStrategy<Val>> = types.iter().map(nullable).collect();
            (Just(types), vec(row, skip..skip + 6), Just(skip))
        })
        .prop_map(|(types, rows, skip)| Case { types, rows, skip })
}

impl Case {
    /// The column names, `c0`, `c1`, ….
    pub fn names(&self) -> Vec<String> {
        (0..self.types.len()).map(|i| format!("c{i}")).collect()
    }

    /// The batch of every row, each column sliced past the first `skip` rows.
    pub fn batch(&self) -> RecordBatch<'static> {
        let names = self.names();
        let columns = self
            .types
            .iter()
            .enumerate()
            .map(|(j, t)| {
                let column: Vec<Val> = self.rows.iter().map(|r| r[j].clone()).collect();
                let full = build(t, &column);
                let kept = full.len() - self.skip;
                (names[j].as_str(), full.slice(self.skip, kept).unwrap())
            })
            .collect();
        batch(columns)
    }
}
