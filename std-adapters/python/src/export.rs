//! Arrow out: quiver's record batches as an Arrow C stream (`ArrowArrayStream`), zero-copy.
//!
//! It uses `ffi`, `source` and `error`.
//!
//! Each exported `ArrowArray` points into the buffers of a quiver [`ArrayView`] that its
//! private data keeps (a clone: reference counts, no copy) until the consumer releases it. The
//! buffers are laid out as the C Data Interface wants them: the validity slot first (null when
//! there are no nulls) except for null, union and run-end encoded arrays, and a view array's
//! variadic data buffers followed by their sizes. An empty buffer points at a few static zero
//! bytes, so a consumer that reads the first offset of an empty array reads 0.

use crate::error::Failure;
use crate::ffi::{
    ArrowArray, ArrowArrayStream, ArrowSchema, Empty, FLAG_DICTIONARY_ORDERED, FLAG_NULLABLE,
};
use crate::source::Source;
use quiver::array::{ArrayView, RecordBatch};
use quiver::datatype::{DataType, IntervalUnit, TimeUnit, UnionMode};
use quiver::schema::{Field, Metadata, Schema};
use std::ffi::{CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What an empty buffer points at: zeros, aligned for any offset width.
static ZEROS: [u64; 2] = [0; 2];

/// `EINVAL`, for a schema that cannot be exported.
const EINVAL: c_int = 22;
/// `EIO`, for a batch that could not be read.
const EIO: c_int = 5;

/// The format string of `data_type` (an index type's for a dictionary-encoded field).
fn format(data_type: &DataType) -> Result<String, Failure> {
    let unit = |u: &TimeUnit| match u {
        TimeUnit::Second => 's',
        TimeUnit::Millisecond => 'm',
        TimeUnit::Microsecond => 'u',
        TimeUnit::Nanosecond => 'n',
    };
    Ok(match data_type {
        DataType::Null => "n".into(),
        DataType::Boolean => "b".into(),
        DataType::Int8 => "c".into(),
        DataType::UInt8 => "C".into(),
        DataType::Int16 => "s".into(),
        DataType::UInt16 => "S".into(),
        DataType::Int32 => "i".into(),
        DataType::UInt32 => "I".into(),
        DataType::Int64 => "l".into(),
        DataType::UInt64 => "L".into(),
        DataType::Float16 => "e".into(),
        DataType::Float32 => "f".into(),
        DataType::Float64 => "g".into(),
        DataType::Decimal32(p, s) => format!("d:{p},{s},32"),
        DataType::Decimal64(p, s) => format!("d:{p},{s},64"),
        DataType::Decimal128(p, s) => format!("d:{p},{s}"),
        DataType::Decimal256(p, s) => format!("d:{p},{s},256"),
        DataType::Date32 => "tdD".into(),
        DataType::Date64 => "tdm".into(),
        DataType::Time32(u) | DataType::Time64(u) => format!("tt{}", unit(u)),
        DataType::Timestamp(u, zone) => format!("ts{}:{}", unit(u), zone.as_deref().unwrap_or("")),
        DataType::Duration(u) => format!("tD{}", unit(u)),
        DataType::Interval(IntervalUnit::YearMonth) => "tiM".into(),
        DataType::Interval(IntervalUnit::DayTime) => "tiD".into(),
        DataType::Interval(IntervalUnit::MonthDayNano) => "tin".into(),
        DataType::Binary => "z".into(),
        DataType::LargeBinary => "Z".into(),
        DataType::FixedSizeBinary(w) => format!("w:{w}"),
        DataType::Utf8 => "u".into(),
        DataType::LargeUtf8 => "U".into(),
        DataType::BinaryView => "vz".into(),
        DataType::Utf8View => "vu".into(),
        DataType::List(_) => "+l".into(),
        DataType::LargeList(_) => "+L".into(),
        DataType::ListView(_) => "+vl".into(),
        DataType::LargeListView(_) => "+vL".into(),
        DataType::FixedSizeList(_, n) => format!("+w:{n}"),
        DataType::Struct(_) => "+s".into(),
        DataType::Map(..) => "+m".into(),
        DataType::Union(_, ids, mode) => {
            let ids: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
            let mode = if *mode == UnionMode::Dense { 'd' } else { 's' };
            format!("+u{mode}:{}", ids.join(","))
        }
        DataType::RunEndEncoded(_) => "+r".into(),
        other => return Err(Failure::invalid(format!("type {other} cannot be exported"))),
    })
}

/// The metadata in the interface's layout (native-endian `int32` lengths).
fn metadata_bytes(metadata: &Metadata) -> Option<Vec<u8>> {
    if metadata.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    let int = |out: &mut Vec<u8>, n: usize| {
        out.extend(i32::try_from(n).unwrap_or(i32::MAX).to_ne_bytes())
    };
    int(&mut out, metadata.len());
    for (key, value) in metadata {
        int(&mut out, key.len());
        out.extend(key.as_bytes());
        int(&mut out, value.len());
        out.extend(value.as_bytes());
    }
    Some(out)
}

/// What an exported schema owns.
struct SchemaPrivate {
    format: CString,
    name: CString,
    metadata: Option<Vec<u8>>,
    children: Vec<*mut ArrowSchema>,
    dictionary: *mut ArrowSchema,
}

/// Releases a schema this module exported.
unsafe extern "C" fn release_schema(schema: *mut ArrowSchema) {
    // SAFETY: the consumer passes the schema it was given (or moved), whose `private_data` is
    // the `SchemaPrivate` boxed in `export_field`, released once (`release` is cleared here).
    let Some(schema) = (unsafe { schema.as_mut() }) else {
        return;
    };
    if schema.private_data.is_null() {
        return;
    }
    // SAFETY: as above: the box leaked by `export_field`, taken back once.
    let private = unsafe { Box::from_raw(schema.private_data.cast::<SchemaPrivate>()) };
    for child in private.children.iter().copied().chain([private.dictionary]) {
        if !child.is_null() {
            // SAFETY: each child was leaked from a `Box<ArrowSchema>` by `export_field` and is
            // owned by this schema; dropping the box releases it (its `Drop`).
            drop(unsafe { Box::from_raw(child) });
        }
    }
    schema.private_data = std::ptr::null_mut();
    schema.release = None;
}

/// The `ArrowSchema` of `field` (with its dictionary's when encoded).
fn export_field(field: &Field) -> Result<ArrowSchema, Failure> {
    let cstring =
        |s: &str| CString::new(s).map_err(|_| Failure::invalid(format!("name {s:?} holds a NUL")));
    let mut flags = if field.is_nullable() {
        FLAG_NULLABLE
    } else {
        0
    };
    let (format_string, dictionary, children) = match field.dictionary() {
        Some(encoding) => {
            if encoding.ordered {
                flags |= FLAG_DICTIONARY_ORDERED;
            }
            let index = DataType::int(encoding.index_type).unwrap_or(DataType::Int32);
            let values = Field::new("", field.data_type().clone(), true);
            let values = Box::into_raw(Box::new(export_field(&values)?));
            (format(&index)?, values, Vec::new())
        }
        None => {
            let children = field
                .data_type()
                .children()
                .iter()
                .map(|c| export_field(c).map(|s| Box::into_raw(Box::new(s))))
                .collect::<Result<Vec<_>, _>>()?;
            (format(field.data_type())?, std::ptr::null_mut(), children)
        }
    };
    let keys_sorted = matches!(field.data_type(), DataType::Map(_, true));
    if keys_sorted {
        flags |= crate::ffi::FLAG_MAP_KEYS_SORTED;
    }
    let mut private = Box::new(SchemaPrivate {
        format: cstring(&format_string)?,
        name: cstring(field.name())?,
        metadata: metadata_bytes(field.metadata()),
        children,
        dictionary,
    });
    Ok(ArrowSchema {
        format: private.format.as_ptr(),
        name: private.name.as_ptr(),
        metadata: private
            .metadata
            .as_ref()
            .map_or(std::ptr::null(), |m| m.as_ptr().cast::<c_char>()),
        flags,
        n_children: private.children.len() as i64,
        children: private.children.as_mut_ptr(),
        dictionary: private.dictionary,
        release: Some(release_schema),
        private_data: Box::into_raw(private).cast::<c_void>(),
    })
}

/// The `ArrowSchema` of a record batch: a struct of the columns.
pub fn export_schema(schema: &Schema) -> Result<ArrowSchema, Failure> {
    let top = Field::new("", DataType::Struct(schema.fields().into()), false)
        .with_metadata(schema.metadata().clone());
    export_field(&top)
}

/// What an exported array owns: the view its buffers point into, the pointer lists.
struct ArrayPrivate {
    _view: Option<ArrayView<'static>>,
    _sizes: Vec<i64>,
    buffers: Vec<*const c_void>,
    children: Vec<*mut ArrowArray>,
    dictionary: *mut ArrowArray,
}

/// Releases an array this module exported.
unsafe extern "C" fn release_array(array: *mut ArrowArray) {
    // SAFETY: the consumer passes the array it was given (or moved), whose `private_data` is
    // the `ArrayPrivate` boxed in `export_array`, released once (`release` is cleared here).
    let Some(array) = (unsafe { array.as_mut() }) else {
        return;
    };
    if array.private_data.is_null() {
        return;
    }
    // SAFETY: as above: the box leaked by `export_array`, taken back once.
    let private = unsafe { Box::from_raw(array.private_data.cast::<ArrayPrivate>()) };
    for child in private.children.iter().copied().chain([private.dictionary]) {
        if !child.is_null() {
            // SAFETY: each child was leaked from a `Box<ArrowArray>` by `export_array` and is
            // owned by this array; dropping the box releases it (its `Drop`).
            drop(unsafe { Box::from_raw(child) });
        }
    }
    array.private_data = std::ptr::null_mut();
    array.release = None;
}

/// A buffer's pointer; an empty one points at [`ZEROS`].
fn pointer(bytes: &[u8]) -> *const c_void {
    match bytes.is_empty() {
        true => ZEROS.as_ptr().cast::<c_void>(),
        false => bytes.as_ptr().cast::<c_void>(),
    }
}

/// An `ArrowArray` over `view`'s buffers (no copy).
fn export_array(view: &ArrayView<'static>) -> ArrowArray {
    let data_type = view.data_type();
    let mut buffers = Vec::new();
    let mut sizes = Vec::new();
    let with_validity = view.dictionary().is_some()
        || !matches!(
            data_type,
            DataType::Null | DataType::Union(..) | DataType::RunEndEncoded(_)
        );
    if with_validity {
        buffers.push(match view.validity() {
            Some(bitmap) if view.null_count() > 0 => pointer(bitmap),
            _ => std::ptr::null(),
        });
    }
    buffers.extend(view.buffers().iter().map(|b| pointer(b)));
    if view.dictionary().is_none() && matches!(data_type, DataType::BinaryView | DataType::Utf8View)
    {
        sizes = view
            .buffers()
            .iter()
            .skip(1)
            .map(|b| b.len() as i64)
            .collect();
        buffers.push(pointer(bytemuck_i64(&sizes)));
    }
    let children: Vec<*mut ArrowArray> = view
        .children()
        .iter()
        .map(|c| Box::into_raw(Box::new(export_array(c))))
        .collect();
    let dictionary = view.dictionary().map_or(std::ptr::null_mut(), |d| {
        Box::into_raw(Box::new(export_array(&d.values)))
    });
    let mut private = Box::new(ArrayPrivate {
        _view: Some(view.clone()),
        _sizes: sizes,
        buffers,
        children,
        dictionary,
    });
    ArrowArray {
        length: view.len() as i64,
        null_count: view.null_count() as i64,
        offset: view.offset() as i64,
        n_buffers: private.buffers.len() as i64,
        n_children: private.children.len() as i64,
        buffers: private.buffers.as_mut_ptr(),
        children: private.children.as_mut_ptr(),
        dictionary: private.dictionary,
        release: Some(release_array),
        private_data: Box::into_raw(private).cast::<c_void>(),
    }
}

/// The bytes of `values` (native-endian, as the interface's sizes buffer wants them).
fn bytemuck_i64(values: &[i64]) -> &[u8] {
    // SAFETY: any initialised `i64`s are valid bytes; the slice covers exactly their memory and
    // borrows `values`, so it cannot outlive them. (`u8` has no alignment requirement.)
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

/// The `ArrowArray` of a record batch: a struct of the columns, no nulls.
pub fn export_batch(batch: &RecordBatch<'static>) -> ArrowArray {
    let children: Vec<*mut ArrowArray> = batch
        .columns()
        .iter()
        .map(|c| Box::into_raw(Box::new(export_array(c))))
        .collect();
    let mut private = Box::new(ArrayPrivate {
        _view: None,
        _sizes: Vec::new(),
        buffers: vec![std::ptr::null()],
        children,
        dictionary: std::ptr::null_mut(),
    });
    ArrowArray {
        length: batch.num_rows() as i64,
        null_count: 0,
        offset: 0,
        n_buffers: 1,
        n_children: private.children.len() as i64,
        buffers: private.buffers.as_mut_ptr(),
        children: private.children.as_mut_ptr(),
        dictionary: std::ptr::null_mut(),
        release: Some(release_array),
        private_data: Box::into_raw(private).cast::<c_void>(),
    }
}

/// What an exported stream owns.
struct StreamPrivate {
    batches: Source,
    last_error: Option<CString>,
}

impl StreamPrivate {
    /// Keeps `error`'s message for `get_last_error`; returns `code`.
    fn failed(&mut self, error: impl std::fmt::Display, code: c_int) -> c_int {
        let message = error.to_string().replace('\0', " ");
        self.last_error = CString::new(message).ok();
        code
    }
}

/// The private data of a live stream this module exported.
///
/// # Safety
/// `stream` must be a stream made by [`stream`] and not released.
unsafe fn private<'a>(stream: *mut ArrowArrayStream) -> Option<&'a mut StreamPrivate> {
    // SAFETY: per the contract, a live stream of ours: `private_data` is its boxed
    // `StreamPrivate`, used by one call at a time (the interface's rule).
    unsafe {
        stream
            .as_mut()?
            .private_data
            .cast::<StreamPrivate>()
            .as_mut()
    }
}

unsafe extern "C" fn get_schema(stream: *mut ArrowArrayStream, out: *mut ArrowSchema) -> c_int {
    // SAFETY: the consumer calls this on the live stream it was given.
    let Some(private) = (unsafe { private(stream) }) else {
        return EINVAL;
    };
    let result = catch_unwind(AssertUnwindSafe(|| export_schema(private.batches.schema())));
    match result {
        Ok(Ok(schema)) => {
            // SAFETY: `out` points at an `ArrowSchema` the consumer provides for the result;
            // what was there is not ours to drop (the interface treats it as uninitialised).
            unsafe { out.write(schema) };
            0
        }
        Ok(Err(e)) => private.failed(format!("{e:?}"), EINVAL),
        Err(_) => private.failed("a panic while exporting the schema", EINVAL),
    }
}

unsafe extern "C" fn get_next(stream: *mut ArrowArrayStream, out: *mut ArrowArray) -> c_int {
    // SAFETY: the consumer calls this on the live stream it was given.
    let Some(private) = (unsafe { private(stream) }) else {
        return EINVAL;
    };
    let result = catch_unwind(AssertUnwindSafe(|| private.batches.next_batch()));
    let array = match result {
        Ok(Ok(Some(batch))) => export_batch(&batch),
        Ok(Ok(None)) => ArrowArray::empty(),
        Ok(Err(Failure::Invalid(m) | Failure::Value(m) | Failure::Json(m))) => {
            return private.failed(m, EIO);
        }
        Ok(Err(e)) => return private.failed(format!("{e:?}"), EIO),
        Err(_) => return private.failed("a panic while reading a batch", EIO),
    };
    // SAFETY: `out` points at an `ArrowArray` the consumer provides for the result (treated as
    // uninitialised by the interface).
    unsafe { out.write(array) };
    0
}

unsafe extern "C" fn get_last_error(stream: *mut ArrowArrayStream) -> *const c_char {
    // SAFETY: the consumer calls this on the live stream it was given.
    match unsafe { private(stream) } {
        Some(private) => private
            .last_error
            .as_ref()
            .map_or(std::ptr::null(), |e| e.as_ptr()),
        None => std::ptr::null(),
    }
}

unsafe extern "C" fn release_stream(stream: *mut ArrowArrayStream) {
    // SAFETY: the consumer releases the live stream it was given, once.
    let Some(stream) = (unsafe { stream.as_mut() }) else {
        return;
    };
    if !stream.private_data.is_null() {
        // SAFETY: the box leaked by `stream`, taken back once (the pointer is cleared).
        drop(unsafe { Box::from_raw(stream.private_data.cast::<StreamPrivate>()) });
    }
    stream.private_data = std::ptr::null_mut();
    stream.release = None;
}

/// An `ArrowArrayStream` over `batches` (read on whichever thread the consumer calls from).
pub fn stream(batches: Source) -> ArrowArrayStream {
    let private = Box::new(StreamPrivate {
        batches,
        last_error: None,
    });
    ArrowArrayStream {
        get_schema: Some(get_schema),
        get_next: Some(get_next),
        get_last_error: Some(get_last_error),
        release: Some(release_stream),
        private_data: Box::into_raw(private).cast::<c_void>(),
    }
}
