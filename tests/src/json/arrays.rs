//! Arrays of every type for the JSON tests, built straight from [`ArrayParts`] (no builders),
//! and the encode loops the tests share.

use quiver::array::{ArrayParts, ArrayView, Dictionary, RecordBatch};
use quiver::bytes::Bytes;
use quiver::datatype::{DataType, IntType, IntervalUnit, TimeUnit, UnionMode};
use quiver::json::{Encoder, EncoderOptions, JsonFormat};
use quiver::schema::{DictionaryEncoding, Field, Schema};
use std::sync::Arc;

/// An array that owns its buffers.
pub type Array = ArrayView<'static>;

/// Little-endian bytes of fixed-width values.
pub trait Le: Copy + Default {
    /// The value as little-endian bytes.
    fn le(self) -> Vec<u8>;
}

macro_rules! le {
    ($($t:ty),*) => {$(impl Le for $t { fn le(self) -> Vec<u8> { self.to_le_bytes().to_vec() } })*};
}
le!(i8, i16, i32, i64, i128, u8, u16, u32, u64, f32, f64);

impl<const N: usize> Le for [u8; N]
where
    [u8; N]: Default,
{
    /// The value as little-endian bytes.
    fn le(self) -> Vec<u8> {
        self.to_vec()
    }
}

/// A buffer of the values, little-endian, one after another.
pub fn buffer<T: Le>(values: impl IntoIterator<Item = T>) -> Bytes<'static> {
    Bytes::from_vec(values.into_iter().flat_map(Le::le).collect())
}

/// The validity bitmap and null count of a slot list (no bitmap when nothing is null).
pub fn validity(valid: &[bool]) -> (Option<Bytes<'static>>, usize) {
    let nulls = valid.iter().filter(|v| !**v).count();
    if nulls == 0 {
        return (None, 0);
    }
    let mut bits = vec![0u8; valid.len().div_ceil(8)];
    for (i, v) in valid.iter().enumerate() {
        if *v {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    (Some(Bytes::from_vec(bits)), nulls)
}

/// An array of `data_type` with `valid.len()` slots (`false` slots null), these buffers and children.
pub fn array(
    data_type: DataType,
    valid: &[bool],
    buffers: Vec<Bytes<'static>>,
    children: Vec<Array>,
) -> Array {
    let (validity, null_count) = validity(valid);
    ArrayView::try_new(ArrayParts {
        data_type: Some(data_type),
        len: valid.len(),
        null_count,
        validity,
        buffers,
        children,
        ..ArrayParts::default()
    })
    .unwrap()
}

/// A fixed-width array; `None` slots are null (their bytes are the default value).
pub fn prim<T: Le>(data_type: DataType, values: &[Option<T>]) -> Array {
    let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
    let data = buffer(values.iter().map(|v| v.unwrap_or_default()));
    array(data_type, &valid, vec![data], vec![])
}

/// An Int32 array; `None` slots are null.
pub fn int32(values: &[Option<i32>]) -> Array {
    prim(DataType::Int32, values)
}

/// A Boolean array; `None` slots are null.
pub fn bools(values: &[Option<bool>]) -> Array {
    let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
    let mut bits = vec![0u8; values.len().div_ceil(8)];
    for (i, v) in values.iter().enumerate() {
        if *v == Some(true) {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    array(
        DataType::Boolean,
        &valid,
        vec![Bytes::from_vec(bits)],
        vec![],
    )
}

/// Utf8, LargeUtf8, Binary or LargeBinary from byte values.
pub fn var(data_type: DataType, values: &[Option<&[u8]>]) -> Array {
    let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
    let mut offsets = vec![0i64];
    let mut data = Vec::new();
    for v in values {
        data.extend_from_slice(v.unwrap_or_default());
        offsets.push(data.len() as i64);
    }
    let offsets = match data_type {
        DataType::LargeUtf8 | DataType::LargeBinary => buffer(offsets),
        _ => buffer(offsets.iter().map(|o| *o as i32)),
    };
    array(
        data_type,
        &valid,
        vec![offsets, Bytes::from_vec(data)],
        vec![],
    )
}

/// A Utf8 array; `None` slots are null.
pub fn utf8(values: &[Option<&str>]) -> Array {
    let bytes: Vec<Option<&[u8]>> = values.iter().map(|v| v.map(str::as_bytes)).collect();
    var(DataType::Utf8, &bytes)
}

/// Utf8View or BinaryView: inline up to 12 bytes, else in one data buffer.
pub fn views(data_type: DataType, values: &[Option<&[u8]>]) -> Array {
    let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
    let (mut views, mut data) = (Vec::new(), Vec::new());
    for v in values {
        let v = v.unwrap_or_default();
        views.extend_from_slice(&(v.len() as i32).to_le_bytes());
        if v.len() <= 12 {
            let mut inline = [0u8; 12];
            inline[..v.len()].copy_from_slice(v);
            views.extend_from_slice(&inline);
        } else {
            views.extend_from_slice(&v[..4]);
            views.extend_from_slice(&0i32.to_le_bytes());
            views.extend_from_slice(&(data.len() as i32).to_le_bytes());
            data.extend_from_slice(v);
        }
    }
    array(
        data_type,
        &valid,
        vec![Bytes::from_vec(views), Bytes::from_vec(data)],
        vec![],
    )
}

/// A nullable field for `child`; a dictionary-encoded one gets a dictionary id of its own, so
/// that the batch can be written to IPC.
pub fn field(name: &str, child: &Array) -> Field {
    static NEXT_ID: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);
    let f = Field::new(name, child.data_type().clone(), true);
    match child.dictionary() {
        Some(d) => f.with_dictionary(DictionaryEncoding {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            index_type: d.index_type,
            ordered: false,
        }),
        None => f,
    }
}

/// List or LargeList: `lens[i]` child slots per list, `None` a null list.
pub fn list(large: bool, child: Array, lens: &[Option<usize>]) -> Array {
    let valid: Vec<bool> = lens.iter().map(Option::is_some).collect();
    let mut offsets = vec![0i64];
    for l in lens {
        offsets.push(offsets.last().unwrap() + l.unwrap_or(0) as i64);
    }
    assert_eq!(*offsets.last().unwrap() as usize, child.len());
    let item = Arc::new(field("item", &child));
    let (data_type, offsets) = if large {
        (DataType::LargeList(item), buffer(offsets))
    } else {
        (
            DataType::List(item),
            buffer(offsets.iter().map(|o| *o as i32)),
        )
    };
    array(data_type, &valid, vec![offsets], vec![child])
}

/// ListView with explicit offsets and sizes.
pub fn list_view(child: Array, slots: &[Option<(i32, i32)>]) -> Array {
    let valid: Vec<bool> = slots.iter().map(Option::is_some).collect();
    let offsets = buffer(slots.iter().map(|s| s.map_or(0, |s| s.0)));
    let sizes = buffer(slots.iter().map(|s| s.map_or(0, |s| s.1)));
    let item = Arc::new(field("item", &child));
    array(
        DataType::ListView(item),
        &valid,
        vec![offsets, sizes],
        vec![child],
    )
}

/// A fixed-size list array of `size` items per slot over `child`.
pub fn fixed_list(child: Array, size: i32, valid: &[bool]) -> Array {
    let item = Arc::new(field("item", &child));
    array(
        DataType::FixedSizeList(item, size),
        valid,
        vec![],
        vec![child],
    )
}

/// A struct array with these named members.
pub fn structs(members: Vec<(&str, Array)>, valid: &[bool]) -> Array {
    let fields: Vec<Field> = members.iter().map(|(n, a)| field(n, a)).collect();
    let children = members.into_iter().map(|(_, a)| a).collect();
    array(DataType::Struct(fields.into()), valid, vec![], children)
}

/// A map of `lens[i]` entries per slot over `keys` and `values`.
pub fn map(keys: Array, values: Array, lens: &[Option<usize>]) -> Array {
    // Map keys are never null (the key field is not nullable, as the format requires).
    let fields = vec![
        Field::new("key", keys.data_type().clone(), false),
        field("value", &values),
    ];
    let entries = array(
        DataType::Struct(fields.into()),
        &vec![true; lens.iter().map(|l| l.unwrap_or(0)).sum()],
        vec![],
        vec![keys, values],
    );
    let valid: Vec<bool> = lens.iter().map(Option::is_some).collect();
    let mut offsets = vec![0i32];
    for l in lens {
        offsets.push(offsets.last().unwrap() + l.unwrap_or(0) as i32);
    }
    let entries_field = Field::new("entries", entries.data_type().clone(), false);
    array(
        DataType::Map(Arc::new(entries_field), false),
        &valid,
        vec![buffer(offsets)],
        vec![entries],
    )
}

/// A dictionary-encoded array (Int32 indices) over `values`.
pub fn dictionary(indices: &[Option<i32>], values: Array) -> Array {
    let valid: Vec<bool> = indices.iter().map(Option::is_some).collect();
    let (validity, null_count) = validity(&valid);
    ArrayView::try_new(ArrayParts {
        data_type: Some(values.data_type().clone()),
        len: indices.len(),
        null_count,
        validity,
        buffers: vec![buffer(indices.iter().map(|i| i.unwrap_or(0)))],
        dictionary: Some(Dictionary {
            index_type: IntType {
                bit_width: 32,
                signed: true,
            },
            values: Arc::new(values),
        }),
        ..ArrayParts::default()
    })
    .unwrap()
}

/// Run-end encoded (Int32 run ends) over `values`, one run per value.
pub fn run_ends(ends: &[i32], values: Array) -> Array {
    let len = *ends.last().unwrap_or(&0) as usize;
    let run_ends = int32(&ends.iter().copied().map(Some).collect::<Vec<_>>());
    let fields = [
        Field::new("run_ends", DataType::Int32, false),
        field("values", &values),
    ];
    ArrayView::try_new(ArrayParts {
        data_type: Some(DataType::RunEndEncoded(Arc::new(fields))),
        len,
        children: vec![run_ends, values],
        ..ArrayParts::default()
    })
    .unwrap()
}

/// A union of `children` (type ids 0, 1, …): sparse when `offsets` is `None`.
pub fn union(children: Vec<(&str, Array)>, type_ids: &[i8], offsets: Option<&[i32]>) -> Array {
    let fields: Vec<Field> = children.iter().map(|(n, a)| field(n, a)).collect();
    let ids: Vec<i8> = (0..fields.len() as i8).collect();
    let mode = if offsets.is_some() {
        UnionMode::Dense
    } else {
        UnionMode::Sparse
    };
    let mut buffers = vec![buffer(type_ids.iter().copied())];
    if let Some(offsets) = offsets {
        buffers.push(buffer(offsets.iter().copied()));
    }
    ArrayView::try_new(ArrayParts {
        data_type: Some(DataType::Union(fields.into(), ids.into(), mode)),
        len: type_ids.len(),
        buffers,
        children: children.into_iter().map(|(_, a)| a).collect(),
        ..ArrayParts::default()
    })
    .unwrap()
}

/// A batch of named columns.
pub fn batch(columns: Vec<(&str, Array)>) -> RecordBatch<'static> {
    let rows = columns.first().map_or(0, |(_, a)| a.len());
    let fields = columns.iter().map(|(n, a)| field(n, a)).collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays, rows).unwrap()
}

/// Runs an encoder to the end with buffers of the given sizes, cycling (0 sizes are allowed and
/// must make no progress).
pub fn drain(encoder: &mut Encoder<'_>, sizes: &[usize]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buffer = vec![0u8; sizes.iter().copied().max().unwrap_or(1).max(1)];
    let mut stalled = 0;
    for size in sizes.iter().cycle() {
        let progress = encoder.encode(&mut buffer[..*size]);
        assert!(progress.written <= *size);
        out.extend_from_slice(&buffer[..progress.written]);
        if progress.done {
            return out;
        }
        stalled = if progress.written == 0 {
            stalled + 1
        } else {
            0
        };
        assert!(stalled < 4 * sizes.len() + 4, "no progress");
    }
    unreachable!()
}

/// `batch` as a whole document, in one call with a large buffer.
pub fn encode(batch: &RecordBatch<'_>, format: JsonFormat, options: EncoderOptions) -> String {
    let mut encoder = Encoder::batch(batch, format, options).unwrap();
    String::from_utf8(drain(&mut encoder, &[1 << 20])).unwrap()
}

/// `batch` as newline-delimited JSON with default options.
pub fn lines(batch: &RecordBatch<'_>) -> String {
    encode(batch, JsonFormat::LineDelimited, EncoderOptions::default())
}

/// One column as newline-delimited JSON values (array encoder).
pub fn values(array: &Array, options: EncoderOptions) -> String {
    let mut encoder = Encoder::array(array, JsonFormat::JsonArray, options).unwrap();
    String::from_utf8(drain(&mut encoder, &[1 << 20])).unwrap()
}

/// One column of every type the encoder writes, each with a null.
pub fn every_type() -> Vec<(&'static str, Array)> {
    use TimeUnit::*;
    let long = "a string long enough to stream across many small buffers \"quoted\"\n";
    let ts = |unit, tz: Option<&str>| {
        prim(
            DataType::Timestamp(unit, tz.map(Into::into)),
            &[Some(1_542_129_070_011i64), None, Some(-1)],
        )
    };
    vec![
        ("bool", bools(&[Some(true), None, Some(false)])),
        ("i8", prim(DataType::Int8, &[Some(-1i8), None, Some(1)])),
        ("i16", prim(DataType::Int16, &[Some(-1i16), None, Some(1)])),
        ("i32", int32(&[Some(-1), None, Some(i32::MAX)])),
        (
            "i64",
            prim(DataType::Int64, &[Some(i64::MIN), None, Some(1)]),
        ),
        ("u8", prim(DataType::UInt8, &[Some(1u8), None, Some(2)])),
        ("u16", prim(DataType::UInt16, &[Some(1u16), None, Some(2)])),
        ("u32", prim(DataType::UInt32, &[Some(1u32), None, Some(2)])),
        (
            "u64",
            prim(DataType::UInt64, &[Some(u64::MAX), None, Some(2)]),
        ),
        (
            "f16",
            prim(DataType::Float16, &[Some(0x3C00u16), None, Some(0x7E00)]),
        ),
        (
            "f32",
            prim(
                DataType::Float32,
                &[Some(0.1f32), None, Some(f32::INFINITY)],
            ),
        ),
        (
            "f64",
            prim(DataType::Float64, &[Some(0.1f64), None, Some(f64::NAN)]),
        ),
        (
            "d32",
            prim(DataType::Decimal32(9, 2), &[Some(12345i32), None, Some(-1)]),
        ),
        (
            "d64",
            prim(DataType::Decimal64(18, -3), &[Some(5i64), None, Some(0)]),
        ),
        (
            "d128",
            prim(
                DataType::Decimal128(38, 10),
                &[Some(i128::MIN), None, Some(1)],
            ),
        ),
        (
            "d256",
            prim(
                DataType::Decimal256(76, 40),
                &[Some([0xFFu8; 32]), None, Some([1; 32])],
            ),
        ),
        (
            "date32",
            prim(DataType::Date32, &[Some(17_848i32), None, Some(-1)]),
        ),
        (
            "date64",
            prim(
                DataType::Date64,
                &[Some(1_542_129_070_011i64), None, Some(0)],
            ),
        ),
        (
            "t32",
            prim(
                DataType::Time32(Millisecond),
                &[Some(120i32), None, Some(-5)],
            ),
        ),
        (
            "t64",
            prim(DataType::Time64(Nanosecond), &[Some(120i64), None, Some(1)]),
        ),
        ("ts", ts(Millisecond, None)),
        ("tsz", ts(Microsecond, Some("+05:30"))),
        ("tsn", ts(Nanosecond, Some("Europe/Paris"))),
        (
            "dur",
            prim(
                DataType::Duration(Millisecond),
                &[Some(120i64), None, Some(-1)],
            ),
        ),
        (
            "ym",
            prim(
                DataType::Interval(IntervalUnit::YearMonth),
                &[Some(14i32), None, Some(0)],
            ),
        ),
        (
            "dt",
            prim(
                DataType::Interval(IntervalUnit::DayTime),
                &[Some([1u8; 8]), None, Some([0; 8])],
            ),
        ),
        (
            "mdn",
            prim(
                DataType::Interval(IntervalUnit::MonthDayNano),
                &[Some([1u8; 16]), None, Some([0xFF; 16])],
            ),
        ),
        ("utf8", utf8(&[Some(long), None, Some("\u{1}é")])),
        (
            "large",
            var(
                DataType::LargeUtf8,
                &[Some(long.as_bytes()), None, Some(b"x")],
            ),
        ),
        (
            "view",
            views(
                DataType::Utf8View,
                &[Some(long.as_bytes()), None, Some(b"short")],
            ),
        ),
        (
            "bin",
            var(
                DataType::Binary,
                &[Some(long.as_bytes()), None, Some(b"\xff")],
            ),
        ),
        (
            "lbin",
            var(DataType::LargeBinary, &[Some(b"\x00\x01"), None, Some(b"")]),
        ),
        (
            "bview",
            views(
                DataType::BinaryView,
                &[Some(long.as_bytes()), None, Some(b"\x01")],
            ),
        ),
        (
            "fsb",
            prim(
                DataType::FixedSizeBinary(3),
                &[Some([1u8, 2, 3]), None, Some([0; 3])],
            ),
        ),
        (
            "list",
            list(
                false,
                int32(&[Some(1), None, Some(3)]),
                &[Some(2), None, Some(1)],
            ),
        ),
        (
            "llist",
            list(
                true,
                utf8(&[Some(long), Some("b")]),
                &[Some(1), Some(0), Some(1)],
            ),
        ),
        (
            "fsl",
            fixed_list(
                int32(&[Some(1), Some(2), None, Some(4), Some(5), Some(6)]),
                2,
                &[true, false, true],
            ),
        ),
        (
            "lview",
            list_view(
                int32(&[Some(1), Some(2), Some(3)]),
                &[Some((1, 2)), None, Some((0, 3))],
            ),
        ),
        (
            "struct",
            structs(
                vec![
                    ("a", int32(&[Some(1), Some(2), None])),
                    ("b\"", utf8(&[Some(long), None, Some("z")])),
                ],
                &[true, false, true],
            ),
        ),
        (
            "map",
            map(
                utf8(&[Some("k"), Some(long), Some("m")]),
                int32(&[Some(1), None, Some(3)]),
                &[Some(2), None, Some(1)],
            ),
        ),
        (
            "imap",
            map(
                int32(&[Some(1), Some(2)]),
                utf8(&[Some(long), None]),
                &[Some(1), Some(1), None],
            ),
        ),
        (
            "dict",
            dictionary(&[Some(1), None, Some(0)], utf8(&[Some(long), Some("one")])),
        ),
        ("ree", run_ends(&[2, 3], utf8(&[Some(long), None]))),
        (
            "sparse",
            union(
                vec![
                    ("i", int32(&[Some(1), Some(2), Some(3)])),
                    ("s", utf8(&[Some("a"), Some(long), None])),
                ],
                &[0, 1, 1],
                None,
            ),
        ),
        (
            "dense",
            union(
                vec![
                    ("i", int32(&[Some(7)])),
                    (
                        "l",
                        list(false, int32(&[Some(1), Some(2)]), &[Some(2), Some(0)]),
                    ),
                ],
                &[1, 0, 1],
                Some(&[0, 0, 1]),
            ),
        ),
    ]
}
