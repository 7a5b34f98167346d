//! Arrow data from another library, zero-copy: an `ArrowSchema` becomes quiver [`Field`]s, an
//! `ArrowArray` tree becomes [`ArrayView`]s over the producer's own buffers.
//!
//! It uses `ffi` and `error`.
//!
//! The C Data Interface carries pointers, not lengths: each buffer's length follows from the
//! array's type, `offset` and `length` (and, for variable-size binary, from the last offset, the
//! only way the interface has to say how long the data buffer is). Every buffer is shared
//! through a [`Bytes`] whose owner holds the tree's root; the root releases the producer's
//! memory (its `release` callback, once) when the last buffer that points into it is dropped.
//! The parts then pass [`ArrayView::try_new`], the checks an IPC body gets: offsets in order and
//! within the child or data they index, UTF-8, union type ids, run ends, dictionary indices.

use crate::error::{Failure, Result};
use crate::ffi::{ArrowArray, ArrowSchema, FLAG_DICTIONARY_ORDERED, FLAG_NULLABLE};
use quiver::array::{ArrayParts, ArrayView, Dictionary, RecordBatch, count_set_bits};
use quiver::bytes::Bytes;
use quiver::datatype::{DataType, IntType, IntervalUnit, TimeUnit, UnionMode};
use quiver::ipc::Projection;
use quiver::schema::{DictionaryEncoding, Field, Metadata, Schema};
use std::ffi::{CStr, c_char, c_void};
use std::sync::Arc;

/// The root of an imported array tree: its drop releases the producer's whole tree.
#[derive(Debug)]
struct Root(ArrowArray);

// SAFETY: a `Root` is only read through shared references (the tree's pointers, while it is
// imported); it is released once, by its drop, from whichever thread drops the last reference.
unsafe impl Sync for Root {}

/// One buffer of an imported tree, kept alive by the tree's root.
struct Buffer {
    _root: Arc<Root>,
    pointer: *const u8,
    len: usize,
}

impl AsRef<[u8]> for Buffer {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `pointer` is a buffer of the tree `_root` owns, non-null (checked when the
        // buffer was made), and the producer keeps it valid and unchanged until the tree is
        // released, which happens only once `_root` is dropped. `len` is the length the format
        // gives the buffer for this array's type, offset and length (checked against
        // `isize::MAX`): the interface's contract for what a consumer may read.
        unsafe { std::slice::from_raw_parts(self.pointer, self.len) }
    }
}

// SAFETY: the buffer is immutable memory of the producer's, valid until the root is released;
// the interface allows reading it and releasing the tree from any thread.
unsafe impl Send for Buffer {}
// SAFETY: as above; shared references only read.
unsafe impl Sync for Buffer {}

/// Reads a NUL-terminated string the producer owns, or `None` for a null pointer.
fn c_str<'a>(pointer: *const c_char) -> Option<&'a CStr> {
    if pointer.is_null() {
        return None;
    }
    // SAFETY: the interface's strings are NUL-terminated and live until the structure that
    // holds them is released, which the caller's borrow of that structure outlasts.
    Some(unsafe { CStr::from_ptr(pointer) })
}

/// The `len` pointers at `pointer` (none when `len` is 0), or an error for a null pointer or a
/// negative count.
fn pointers<'a, T>(pointer: *const T, len: i64, what: &str) -> Result<&'a [T]> {
    let len = usize::try_from(len).map_err(|_| Failure::invalid(format!("negative {what}")))?;
    if len == 0 {
        return Ok(&[]);
    }
    if pointer.is_null() {
        return Err(Failure::invalid(format!(
            "{len} {what} behind a null pointer"
        )));
    }
    // SAFETY: the producer's structure points at `len` initialised entries here (its
    // `n_children` / `n_buffers` count them), alive until it is released, which the caller's
    // borrow of the structure outlasts.
    Ok(unsafe { std::slice::from_raw_parts(pointer, len) })
}

/// The children of an `ArrowSchema`.
fn schema_children(schema: &ArrowSchema) -> Result<Vec<&ArrowSchema>> {
    let children = pointers(schema.children, schema.n_children, "schema children")?;
    children
        .iter()
        .map(|&child| {
            // SAFETY: each child pointer of a live schema points at a live schema (null is
            // refused), owned by its parent.
            unsafe { child.as_ref() }.ok_or_else(|| Failure::invalid("null schema child"))
        })
        .collect()
}

/// The children of an `ArrowArray`.
fn array_children(array: &ArrowArray) -> Result<Vec<&ArrowArray>> {
    let children = pointers(array.children, array.n_children, "array children")?;
    children
        .iter()
        .map(|&child| {
            // SAFETY: as for schema children: owned by the live parent, null refused.
            unsafe { child.as_ref() }.ok_or_else(|| Failure::invalid("null array child"))
        })
        .collect()
}

/// The custom metadata in the interface's layout: an `int32` count, then each key and value
/// as an `int32` length and its bytes (native-endian, unaligned).
fn metadata(pointer: *const c_char) -> Result<Metadata> {
    let mut out = Metadata::new();
    if pointer.is_null() {
        return Ok(out);
    }
    let mut at = pointer.cast::<u8>();
    let count = metadata_int(&mut at)?;
    for _ in 0..count {
        let key = metadata_text(&mut at)?;
        let value = metadata_text(&mut at)?;
        out.push((key, value));
    }
    Ok(out)
}

/// The next `int32` of a metadata block, as a length.
fn metadata_int(at: &mut *const u8) -> Result<usize> {
    // SAFETY: the producer's metadata block holds each int32 its layout announces, here.
    let value = unsafe { at.cast::<i32>().read_unaligned() };
    // SAFETY: the block goes on after this int32 (with the bytes it counts, or its end).
    *at = unsafe { at.add(4) };
    usize::try_from(value).map_err(|_| Failure::invalid("negative length in metadata"))
}

/// The next length-prefixed string of a metadata block.
fn metadata_text(at: &mut *const u8) -> Result<String> {
    let len = metadata_int(at)?;
    // SAFETY: the layout announced `len` bytes here, within the block.
    let bytes = unsafe { std::slice::from_raw_parts(*at, len) };
    // SAFETY: the block goes on after them.
    *at = unsafe { at.add(len) };
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// The field an `ArrowSchema` describes; `ids` numbers the dictionaries met so far.
pub fn field(schema: &ArrowSchema, ids: &mut i64) -> Result<Field> {
    let name = c_str(schema.name).map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let nullable = schema.flags & FLAG_NULLABLE != 0;
    let format = c_str(schema.format).ok_or_else(|| Failure::invalid("schema without a format"))?;
    let format = format
        .to_str()
        .map_err(|_| Failure::invalid("format string is not UTF-8"))?;
    let located = |e: Failure| match e {
        Failure::Invalid(m) if !name.is_empty() => Failure::Invalid(format!("field `{name}`: {m}")),
        other => other,
    };
    // SAFETY: a schema's dictionary is null or a live schema owned by it.
    let dictionary = unsafe { schema.dictionary.as_ref() };
    let (data_type, encoding) = match dictionary {
        None => (
            data_type(format, &schema_children(schema)?, ids).map_err(located)?,
            None,
        ),
        Some(values) => {
            let index_type = match int_type(format) {
                Some(int) => int,
                None => {
                    return Err(located(Failure::invalid(format!(
                        "dictionary index type `{format}`"
                    ))));
                }
            };
            let values = field(values, ids).map_err(located)?;
            *ids += 1;
            let encoding = DictionaryEncoding {
                id: *ids,
                index_type,
                ordered: schema.flags & FLAG_DICTIONARY_ORDERED != 0,
            };
            if values.dictionary().is_some() {
                return Err(located(Failure::invalid("a dictionary of dictionaries")));
            }
            (values.data_type().clone(), Some(encoding))
        }
    };
    let mut field = Field::new(name, data_type, nullable).with_metadata(metadata(schema.metadata)?);
    if let Some(encoding) = encoding {
        field = field.with_dictionary(encoding);
    }
    Ok(field)
}

/// The integer type of a format string (`c`, `C`, `s`, … `L`).
fn int_type(format: &str) -> Option<IntType> {
    let (bit_width, signed) = match format {
        "c" => (8, true),
        "C" => (8, false),
        "s" => (16, true),
        "S" => (16, false),
        "i" => (32, true),
        "I" => (32, false),
        "l" => (64, true),
        "L" => (64, false),
        _ => return None,
    };
    Some(IntType { bit_width, signed })
}

/// The type a format string names, with the children's schemas.
fn data_type(format: &str, children: &[&ArrowSchema], ids: &mut i64) -> Result<DataType> {
    let unsupported = || Failure::invalid(format!("unsupported format string `{format}`"));
    let mut fields = || -> Result<Vec<Field>> { children.iter().map(|c| field(c, ids)).collect() };
    let unit = |c: &str| match c {
        "s" => Some(TimeUnit::Second),
        "m" => Some(TimeUnit::Millisecond),
        "u" => Some(TimeUnit::Microsecond),
        "n" => Some(TimeUnit::Nanosecond),
        _ => None,
    };
    let number = |text: &str| text.parse::<i32>().map_err(|_| unsupported());
    if let Some(int) = int_type(format) {
        return DataType::int(int).ok_or_else(unsupported);
    }
    let one_child = |mut fields: Vec<Field>| -> Result<Arc<Field>> {
        match (fields.pop(), fields.is_empty()) {
            (Some(child), true) => Ok(Arc::new(child)),
            _ => Err(Failure::invalid(format!("`{format}` needs one child"))),
        }
    };
    Ok(match format {
        "n" => DataType::Null,
        "b" => DataType::Boolean,
        "e" => DataType::Float16,
        "f" => DataType::Float32,
        "g" => DataType::Float64,
        "z" => DataType::Binary,
        "Z" => DataType::LargeBinary,
        "vz" => DataType::BinaryView,
        "u" => DataType::Utf8,
        "U" => DataType::LargeUtf8,
        "vu" => DataType::Utf8View,
        "tdD" => DataType::Date32,
        "tdm" => DataType::Date64,
        "tts" => DataType::Time32(TimeUnit::Second),
        "ttm" => DataType::Time32(TimeUnit::Millisecond),
        "ttu" => DataType::Time64(TimeUnit::Microsecond),
        "ttn" => DataType::Time64(TimeUnit::Nanosecond),
        "tiM" => DataType::Interval(IntervalUnit::YearMonth),
        "tiD" => DataType::Interval(IntervalUnit::DayTime),
        "tin" => DataType::Interval(IntervalUnit::MonthDayNano),
        "+l" => DataType::List(one_child(fields()?)?),
        "+L" => DataType::LargeList(one_child(fields()?)?),
        "+vl" => DataType::ListView(one_child(fields()?)?),
        "+vL" => DataType::LargeListView(one_child(fields()?)?),
        "+s" => DataType::Struct(fields()?.into()),
        "+m" => DataType::Map(one_child(fields()?)?, false),
        "+r" => {
            let fields = fields()?;
            match <[Field; 2]>::try_from(fields) {
                Ok(pair) => DataType::RunEndEncoded(Arc::new(pair)),
                Err(_) => return Err(Failure::invalid("`+r` needs two children")),
            }
        }
        _ => {
            if let Some(rest) = format.strip_prefix("tD") {
                DataType::Duration(unit(rest).ok_or_else(unsupported)?)
            } else if let Some(rest) = format.strip_prefix("ts") {
                let (u, zone) = rest.split_once(':').ok_or_else(unsupported)?;
                let zone = (!zone.is_empty()).then(|| Arc::<str>::from(zone));
                DataType::Timestamp(unit(u).ok_or_else(unsupported)?, zone)
            } else if let Some(width) = format.strip_prefix("w:") {
                DataType::FixedSizeBinary(number(width)?)
            } else if let Some(size) = format.strip_prefix("+w:") {
                DataType::FixedSizeList(one_child(fields()?)?, number(size)?)
            } else if let Some(rest) = format.strip_prefix("d:") {
                let parts: Vec<&str> = rest.split(',').collect();
                let (p, s, bits) = match parts[..] {
                    [p, s] => (p, s, "128"),
                    [p, s, bits] => (p, s, bits),
                    _ => return Err(unsupported()),
                };
                let p = u8::try_from(number(p)?).map_err(|_| unsupported())?;
                let s = i8::try_from(number(s)?).map_err(|_| unsupported())?;
                match bits {
                    "32" => DataType::Decimal32(p, s),
                    "64" => DataType::Decimal64(p, s),
                    "128" => DataType::Decimal128(p, s),
                    "256" => DataType::Decimal256(p, s),
                    _ => return Err(unsupported()),
                }
            } else if let Some(rest) = format.strip_prefix("+u") {
                let (mode, ids) = rest.split_once(':').ok_or_else(unsupported)?;
                let mode = match mode {
                    "s" => UnionMode::Sparse,
                    "d" => UnionMode::Dense,
                    _ => return Err(unsupported()),
                };
                let ids = match ids {
                    "" => Vec::new(),
                    ids => ids
                        .split(',')
                        .map(|id| id.parse::<i8>().map_err(|_| unsupported()))
                        .collect::<Result<Vec<i8>>>()?,
                };
                let fields = fields()?;
                if ids.len() != fields.len() {
                    return Err(Failure::invalid(format!(
                        "`{format}`: {} type ids for {} children",
                        ids.len(),
                        fields.len()
                    )));
                }
                DataType::Union(fields.into(), ids.into(), mode)
            } else {
                return Err(unsupported());
            }
        }
    })
}

/// A schema from the `ArrowSchema` of a record batch (a struct whose children are the columns).
pub fn schema(root: &ArrowSchema) -> Result<Schema> {
    let mut ids = 0;
    let top = field(root, &mut ids)?;
    let DataType::Struct(fields) = top.data_type() else {
        let name = match top.name() {
            "" => "name".to_owned(),
            name => name.replace('\\', "\\\\").replace('"', "\\\""),
        };
        return Err(Failure::Value(format!(
            "expected record batches (a table, a data frame or a struct array whose children \
             are the columns), got one array of type {}: make it a column of a table, as in \
             pyarrow.table({{\"{name}\": array}}) or series.to_frame()",
            top.data_type()
        )));
    };
    Ok(Schema::new(fields.to_vec()).with_metadata(top.metadata().clone()))
}

/// Takes ownership of `array`, a record batch of `schema` (a struct array whose children are
/// the columns), and views it as a batch of the `projection`'s columns: zero-copy, validated.
pub fn record_batch(
    array: ArrowArray,
    schema: &Arc<Schema>,
    projection: &Projection,
) -> Result<RecordBatch<'static>> {
    if array.release.is_none() {
        return Err(Failure::invalid("the array was already released"));
    }
    let root = Arc::new(Root(array));
    let top = &root.0;
    let children = array_children(top)?;
    let fields = schema.fields();
    if children.len() != fields.len() {
        return Err(Failure::invalid(format!(
            "the batch has {} columns, its schema {}",
            children.len(),
            fields.len()
        )));
    }
    let (offset, rows) = (length(top.offset, "offset")?, length(top.length, "length")?);
    let projected = match projection.is_all() {
        true => Arc::clone(schema),
        false => Arc::new(projection.project_schema(schema)),
    };
    let selected = (0..fields.len()).filter_map(|i| projection.child(i).map(|p| (i, p)));
    let mut columns = Vec::new();
    for ((i, projection), field) in selected.zip(projected.fields()) {
        let child = children.get(i).copied();
        let child = child.ok_or_else(|| Failure::invalid("fewer columns than the schema"))?;
        let located = |e: Failure| match e {
            Failure::Invalid(m) => {
                Failure::Invalid(format!("column {i} (`{}`): {m}", field.name()))
            }
            other => other,
        };
        let column = import_array(field, child, projection, &root).map_err(located)?;
        let column = column
            .slice(offset, rows)
            .map_err(|e| located(Failure::invalid(e)))?;
        columns.push(column);
    }
    RecordBatch::try_new(projected, columns, rows).map_err(Failure::invalid)
}

/// A count from the interface (`length`, `offset`) as a `usize`.
fn length(value: i64, what: &str) -> Result<usize> {
    usize::try_from(value).map_err(|_| Failure::invalid(format!("negative {what} {value}")))
}

/// `a * b + c` bytes, or an error when that overflows or exceeds `isize::MAX`.
fn bytes(a: usize, b: usize, c: usize) -> Result<usize> {
    a.checked_mul(b)
        .and_then(|n| n.checked_add(c))
        .filter(|&n| isize::try_from(n).is_ok())
        .ok_or_else(|| Failure::invalid("buffer size overflows"))
}

/// The imported array of `field` (zero-copy, validated); `projection` selects struct children.
fn import_array(
    field: &Field,
    array: &ArrowArray,
    projection: &Projection,
    root: &Arc<Root>,
) -> Result<ArrayView<'static>> {
    let len = length(array.length, "length")?;
    let offset = length(array.offset, "offset")?;
    let end = offset
        .checked_add(len)
        .ok_or_else(|| Failure::invalid("offset + length overflows"))?;
    let raw = pointers(array.buffers.cast_const(), array.n_buffers, "buffers")?;
    let share = |i: usize, len: usize| -> Result<Bytes<'static>> {
        let pointer = raw.get(i).copied().unwrap_or(std::ptr::null()).cast::<u8>();
        if pointer.is_null() {
            return match len {
                0 => Ok(Bytes::default()),
                _ => Err(Failure::invalid(format!("buffer {i} is null"))),
            };
        }
        let owner = Arc::new(Buffer {
            _root: Arc::clone(root),
            pointer,
            len,
        });
        Ok(Bytes::from_owner(owner, 0..len))
    };
    // The C layout: validity first (except unions, null and run-end encoded), then the type's
    // buffers; the lengths follow from the type.
    let physical = match field.dictionary() {
        Some(encoding) => DataType::int(encoding.index_type).unwrap_or(DataType::Int32),
        None => field.data_type().clone(),
    };
    let mut validity_slot = true;
    let mut buffers = Vec::new();
    match &physical {
        DataType::Null => validity_slot = false,
        DataType::Boolean => buffers.push(share(1, end.div_ceil(8))?),
        DataType::Binary | DataType::Utf8 | DataType::LargeBinary | DataType::LargeUtf8 => {
            let wide = matches!(physical, DataType::LargeBinary | DataType::LargeUtf8);
            let width = if wide { 8 } else { 4 };
            let offsets = share(1, offsets_len(raw, 1, end, width)?)?;
            let data = last_offset(&offsets, end, width)?;
            buffers.push(offsets);
            buffers.push(share(2, data)?);
        }
        DataType::BinaryView | DataType::Utf8View => {
            let variadic = raw.len().checked_sub(3).ok_or_else(|| {
                Failure::invalid(format!(
                    "a view array has {} buffers, at least 3",
                    raw.len()
                ))
            })?;
            buffers.push(share(1, bytes(end, 16, 0)?)?);
            let sizes = share(raw.len() - 1, bytes(variadic, 8, 0)?)?;
            for (k, size) in sizes.chunks_exact(8).enumerate() {
                let size = i64::from_ne_bytes(size.try_into().unwrap_or_default());
                let size = usize::try_from(size)
                    .map_err(|_| Failure::invalid(format!("negative size of data buffer {k}")))?;
                buffers.push(share(2 + k, bytes(size, 1, 0)?)?);
            }
        }
        DataType::List(_) | DataType::Map(..) => {
            buffers.push(share(1, offsets_len(raw, 1, end, 4)?)?)
        }
        DataType::LargeList(_) => buffers.push(share(1, offsets_len(raw, 1, end, 8)?)?),
        DataType::ListView(_) => {
            buffers.push(share(1, bytes(end, 4, 0)?)?);
            buffers.push(share(2, bytes(end, 4, 0)?)?);
        }
        DataType::LargeListView(_) => {
            buffers.push(share(1, bytes(end, 8, 0)?)?);
            buffers.push(share(2, bytes(end, 8, 0)?)?);
        }
        DataType::FixedSizeList(..) | DataType::Struct(_) => {}
        DataType::Union(_, _, mode) => {
            validity_slot = false;
            buffers.push(share(0, end)?);
            if *mode == UnionMode::Dense {
                buffers.push(share(1, bytes(end, 4, 0)?)?);
            }
        }
        DataType::RunEndEncoded(_) => validity_slot = false,
        other => {
            let width = other
                .byte_width()
                .ok_or_else(|| Failure::invalid(format!("type {other} has no layout here")))?;
            buffers.push(share(1, bytes(end, width, 0)?)?);
        }
    }
    let expected = buffers.len() + usize::from(validity_slot);
    let views = matches!(physical, DataType::BinaryView | DataType::Utf8View);
    if !views && raw.len() != expected {
        return Err(Failure::invalid(format!(
            "{} buffers for type {physical}, expected {expected}",
            raw.len()
        )));
    }
    let mut null_count = array.null_count;
    let validity = match validity_slot && raw.first().is_some_and(|p| !p.is_null()) {
        true if null_count != 0 => Some(share(0, end.div_ceil(8))?),
        _ => None,
    };
    if null_count < 0 {
        null_count = match &validity {
            Some(bitmap) => (len - count_set_bits(bitmap, offset..end)) as i64,
            None => 0,
        };
    }
    let children = array_children(array)?;
    let dictionary = match field.dictionary() {
        None => None,
        Some(encoding) => {
            // SAFETY: an array's dictionary is null or a live array owned by it.
            let values = unsafe { array.dictionary.as_ref() }
                .ok_or_else(|| Failure::invalid("dictionary-encoded array without a dictionary"))?;
            let values_field = Field::new("", field.data_type().clone(), true);
            let values = import_array(&values_field, values, &Projection::All, root)?;
            Some(Dictionary {
                index_type: encoding.index_type,
                values: Arc::new(values),
            })
        }
    };
    let child_fields = match dictionary {
        Some(_) => &[][..],
        None => field.data_type().children(),
    };
    let mut child_views = Vec::new();
    match (&physical, projection, field.dictionary()) {
        // A projected struct: its field already lists only the selected children; the arrays
        // are picked by the projection's indices.
        (DataType::Struct(_), Projection::Fields(selected), None) => {
            for ((index, child_projection), child_field) in selected.iter().zip(child_fields) {
                let child = children
                    .get(*index)
                    .ok_or_else(|| Failure::invalid("fewer children than the type has"))?;
                child_views.push(import_array(child_field, child, child_projection, root)?);
            }
        }
        _ => {
            if children.len() != child_fields.len() {
                return Err(Failure::invalid(format!(
                    "{} children for type {}, expected {}",
                    children.len(),
                    field.data_type(),
                    child_fields.len()
                )));
            }
            for (child, child_field) in children.iter().zip(child_fields) {
                child_views.push(import_array(child_field, child, &Projection::All, root)?);
            }
        }
    }
    let null_count = usize::try_from(null_count).unwrap_or_default();
    ArrayView::try_new(ArrayParts {
        data_type: Some(field.data_type().clone()),
        len,
        offset,
        null_count,
        validity,
        buffers,
        children: child_views,
        dictionary,
    })
    .map_err(Failure::invalid)
}

/// The bytes of the offsets of a list of `end` slots at buffer `i` (`width` bytes each), none
/// when an empty array leaves the buffer out.
fn offsets_len(raw: &[*const c_void], i: usize, end: usize, width: usize) -> Result<usize> {
    match raw.get(i).is_some_and(|p| !p.is_null()) {
        true => bytes(end, width, width),
        false => Ok(0),
    }
}

/// The offset at slot `end` of an offsets buffer (`width` bytes each): the length of the data
/// it indexes; 0 for a buffer an empty array left out.
fn last_offset(offsets: &[u8], end: usize, width: usize) -> Result<usize> {
    let at = end * width;
    let last = match offsets.get(at..at + width) {
        Some(&[a, b, c, d]) => i64::from(i32::from_le_bytes([a, b, c, d])),
        Some(b) => i64::from_le_bytes(b.try_into().unwrap_or_default()),
        None => 0,
    };
    usize::try_from(last)
        .ok()
        .filter(|&n| isize::try_from(n).is_ok())
        .ok_or_else(|| Failure::invalid(format!("last offset {last} is out of range")))
}
