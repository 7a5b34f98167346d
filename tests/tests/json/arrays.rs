//! Arrays of every type for the JSON tests, built straight from [`ArrayParts`] (no builders),
//! and the encode loops the tests share.
#![allow(dead_code)]

use quiver::array::{ArrayParts, ArrayView, Dictionary, RecordBatch};
use quiver::bytes::Bytes;
use quiver::datatype::{IntType, UnionMode};
use quiver::json::{Encoder, EncoderOptions, JsonFormat};
use quiver::schema::DictionaryEncoding;
use quiver::{DataType, Field, Schema};
use std::sync::Arc;

pub type Array = ArrayView<'static>;

/// Little-endian bytes of fixed-width values.
pub trait Le: Copy + Default {
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
    fn le(self) -> Vec<u8> {
        self.to_vec()
    }
}

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

pub fn int32(values: &[Option<i32>]) -> Array {
    prim(DataType::Int32, values)
}

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

/// A field for `child`, dictionary-encoded when the array is.
pub fn field(name: &str, child: &Array) -> Field {
    let f = Field::new(name, child.data_type().clone(), true);
    match child.dictionary() {
        Some(d) => f.with_dictionary(DictionaryEncoding {
            id: 0,
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

pub fn fixed_list(child: Array, size: i32, valid: &[bool]) -> Array {
    let item = Arc::new(field("item", &child));
    array(
        DataType::FixedSizeList(item, size),
        valid,
        vec![],
        vec![child],
    )
}

pub fn structs(members: Vec<(&str, Array)>, valid: &[bool]) -> Array {
    let fields: Vec<Field> = members.iter().map(|(n, a)| field(n, a)).collect();
    let children = members.into_iter().map(|(_, a)| a).collect();
    array(DataType::Struct(fields.into()), valid, vec![], children)
}

/// A map of `lens[i]` entries per slot over `keys` and `values`.
pub fn map(keys: Array, values: Array, lens: &[Option<usize>]) -> Array {
    let entries = structs(
        vec![("key", keys), ("value", values)],
        &vec![true; lens.iter().map(|l| l.unwrap_or(0)).sum()],
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
pub fn drain(encoder: &mut Encoder<'_, '_>, sizes: &[usize]) -> Vec<u8> {
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
