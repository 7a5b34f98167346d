//! Owned schemas: [`Schema`], [`Field`] and their custom metadata, built from the flatbuffer views.
//!
//! Bytes enter as a [`format::Schema`] view (from a footer or a schema message) and leave as an
//! owned [`Schema`] whose types are shared cheaply (`Arc`) with the arrays that use them.

use crate::datatype::{DataType, Endianness, FieldType, IntType};
use crate::error::{FieldPath, FlatbufferBound, FormatError, FormatErrorKind, FormatResult};
use crate::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Custom metadata: key/value pairs in file order.
pub type Metadata = Vec<(String, String)>;

/// The metadata key that names an extension type; its storage type is read as usual.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";

/// How a field is dictionary-encoded: its values live in a dictionary batch with this id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DictionaryEncoding {
    /// The dictionary id, unique within the file or stream.
    pub id: i64,
    /// The integer type of the indices stored in the record batches.
    pub index_type: IntType,
    /// Whether the dictionary's order is meaningful.
    pub ordered: bool,
}

/// A named column or child: its type, nullability, metadata and dictionary encoding.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    name: String,
    data_type: DataType,
    nullable: bool,
    metadata: Metadata,
    dictionary: Option<DictionaryEncoding>,
}

impl Field {
    /// A field with no metadata and no dictionary encoding.
    pub fn new(name: impl Into<String>, data_type: DataType, nullable: bool) -> Self {
        Field {
            name: name.into(),
            data_type,
            nullable,
            metadata: Metadata::new(),
            dictionary: None,
        }
    }

    /// This field with custom metadata.
    #[must_use]
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// This field, dictionary-encoded; `data_type` stays the type of the dictionary's values.
    #[must_use]
    pub fn with_dictionary(mut self, dictionary: DictionaryEncoding) -> Self {
        self.dictionary = Some(dictionary);
        self
    }

    /// The field's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The field's logical type (the value type when dictionary-encoded).
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// Whether the field may hold nulls.
    pub fn is_nullable(&self) -> bool {
        self.nullable
    }

    /// Custom metadata, in file order.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The dictionary encoding, if the field is dictionary-encoded.
    pub fn dictionary(&self) -> Option<&DictionaryEncoding> {
        self.dictionary.as_ref()
    }

    /// The extension type's name (`ARROW:extension:name`), if the field has one.
    pub fn extension_name(&self) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == EXTENSION_NAME_KEY)
            .map(|(_, v)| v.as_str())
    }
}

/// Arrow's notation for a field: `name: type`, then ` not null` when it cannot hold nulls; a
/// dictionary-encoded field's type is `dictionary<values=…, indices=…, ordered=0>`. A name
/// that would break the line is quoted ([`DisplayName`]).
impl core::fmt::Display for Field {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", DisplayName(&self.name), FieldType(self))?;
        if !self.nullable {
            f.write_str(" not null")?;
        }
        Ok(())
    }
}

/// A field name or metadata key as text shows it: as it is, or quoted and escaped the way Rust's
/// `Debug` writes a string (`"a\nb"`) when it is empty or holds a control character (a
/// newline, a NUL, …) or a `"`, so that no name can break a line or fake another field.
#[derive(Debug, Clone, Copy)]
pub struct DisplayName<'a>(pub &'a str);

impl core::fmt::Display for DisplayName<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let name = self.0;
        if name.is_empty() || name.chars().any(|c| c.is_control() || c == '"') {
            write!(f, "{name:?}")
        } else {
            f.write_str(name)
        }
    }
}

/// The fields of a record batch, with schema-level metadata and the files' byte order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Schema {
    fields: Vec<Field>,
    metadata: Metadata,
    endianness: Endianness,
}

impl Schema {
    /// A little-endian schema with no metadata.
    pub fn new(fields: Vec<Field>) -> Self {
        Schema {
            fields,
            metadata: Metadata::new(),
            endianness: Endianness::Little,
        }
    }

    /// This schema with custom metadata.
    #[must_use]
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// This schema with the given byte order.
    #[must_use]
    pub fn with_endianness(mut self, endianness: Endianness) -> Self {
        self.endianness = endianness;
        self
    }

    /// The top-level fields (columns), in order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The fields on `path`, from the top-level field down (an error's
    /// [`FormatError::field`]); fewer than the path's levels where it leaves this schema.
    pub fn fields_on_path(&self, path: FieldPath) -> impl Iterator<Item = &Field> + '_ {
        let mut level = self.fields.as_slice();
        let mut indices = path.indices();
        core::iter::from_fn(move || {
            let field = level.get(indices.next()?)?;
            level = field.data_type().children();
            Some(field)
        })
    }

    /// The path of the first field (depth first) whose dictionary has id `id`.
    pub(crate) fn dictionary_path(&self, id: i64) -> Option<FieldPath> {
        fn find(fields: &[Field], id: i64, above: Option<FieldPath>) -> Option<FieldPath> {
            fields.iter().enumerate().find_map(|(i, field)| {
                let path = above.map_or_else(|| FieldPath::top(i), |p| p.child(i));
                match field.dictionary() {
                    Some(d) if d.id == id => Some(path),
                    _ => find(field.data_type().children(), id, Some(path)),
                }
            })
        }
        find(&self.fields, id, None)
    }

    /// Schema-level custom metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The byte order of the buffers in files with this schema.
    pub fn endianness(&self) -> Endianness {
        self.endianness
    }

    /// Index of the first top-level field with this name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// Converts a flatbuffer schema, visiting at most `max_fields` fields in all.
    ///
    /// The flatbuffer reader limits nesting depth; `max_fields` bounds the work and memory a
    /// schema whose children vectors share tables (a DAG) could otherwise cost. Callers derive it
    /// from the message length, so the owned schema stays proportional to the bytes read.
    pub fn from_fb(fb: format::Schema<'_>, max_fields: usize) -> FormatResult<Self> {
        let mut budget = max_fields;
        let mut fields = Vec::new();
        for (i, field) in fb.fields()?.iter().enumerate() {
            let field = field
                .and_then(|field| field_from_fb(field, &mut budget))
                .map_err(|mut e| {
                    // The count ran out below this field: say which limit.
                    if let FormatErrorKind::FlatbufferLimit {
                        what: FlatbufferBound::FieldCount,
                        limit,
                    } = &mut e.kind
                    {
                        *limit = max_fields as u64;
                    }
                    e.in_field(i)
                })?;
            fields.push(field);
        }
        Ok(Schema {
            fields,
            metadata: metadata_from_fb(fb.custom_metadata()?)?,
            endianness: fb.endianness()?,
        })
    }
}

fn metadata_from_fb(kvs: format::KeyValues<'_>) -> FormatResult<Metadata> {
    kvs.iter()
        .map(|kv| kv.map(|kv| (kv.key.to_string(), kv.value.to_string())))
        .collect()
}

fn invalid(what: &'static str, value: i64) -> FormatError {
    FormatErrorKind::InvalidValue { what, value }.into()
}

fn field_from_fb(fb: format::Field<'_>, budget: &mut usize) -> FormatResult<Field> {
    *budget = budget
        .checked_sub(1)
        .ok_or(FormatErrorKind::FlatbufferLimit {
            what: FlatbufferBound::FieldCount,
            limit: 0,
        })?;
    let name = fb.name()?.unwrap_or_default();
    let mut children = Vec::new();
    for (i, child) in fb.children()?.iter().enumerate() {
        children.push(
            child
                .and_then(|child| field_from_fb(child, budget))
                .map_err(|e| e.in_field(i))?,
        );
    }
    let data_type = data_type_from_fb(fb.type_()?, children)?;
    let dictionary = fb.dictionary()?.map(|d| DictionaryEncoding {
        id: d.id,
        index_type: d.index_type,
        ordered: d.is_ordered,
    });
    Ok(Field {
        name: name.to_string(),
        data_type,
        nullable: fb.nullable(),
        metadata: metadata_from_fb(fb.custom_metadata()?)?,
        dictionary,
    })
}

/// Builds a [`DataType`] from a flatbuffer `Type` and the field's already converted children,
/// checking the number of children and the parameters each type allows.
fn data_type_from_fb(ty: format::Type<'_>, children: Vec<Field>) -> FormatResult<DataType> {
    use format::Type as T;
    let expect = |n: usize| -> FormatResult<()> {
        if children.len() == n {
            Ok(())
        } else {
            Err(invalid("number of child fields", children.len() as i64))
        }
    };
    let only_child = |children: Vec<Field>| -> FormatResult<Arc<Field>> {
        match <[Field; 1]>::try_from(children) {
            Ok([child]) => Ok(Arc::new(child)),
            Err(children) => Err(invalid("number of child fields", children.len() as i64)),
        }
    };
    Ok(match ty {
        T::Null => DataType::Null,
        T::Bool => DataType::Boolean,
        T::Int(IntType { bit_width, signed }) => match (bit_width, signed) {
            (8, true) => DataType::Int8,
            (16, true) => DataType::Int16,
            (32, true) => DataType::Int32,
            (64, true) => DataType::Int64,
            (8, false) => DataType::UInt8,
            (16, false) => DataType::UInt16,
            (32, false) => DataType::UInt32,
            (64, false) => DataType::UInt64,
            _ => return Err(invalid("Int.bitWidth", i64::from(bit_width))),
        },
        T::FloatingPoint(p) => DataType::float(p),
        T::Decimal {
            precision,
            scale,
            bit_width,
        } => {
            let p = u8::try_from(precision)
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| invalid("Decimal.precision", i64::from(precision)))?;
            let s = i8::try_from(scale).map_err(|_| invalid("Decimal.scale", i64::from(scale)))?;
            let max_precision = match bit_width {
                32 => 9,
                64 => 18,
                128 => 38,
                256 => 76,
                _ => return Err(invalid("Decimal.bitWidth", i64::from(bit_width))),
            };
            if p > max_precision {
                return Err(invalid("Decimal.precision", i64::from(precision)));
            }
            match bit_width {
                32 => DataType::Decimal32(p, s),
                64 => DataType::Decimal64(p, s),
                128 => DataType::Decimal128(p, s),
                _ => DataType::Decimal256(p, s),
            }
        }
        T::Date(unit) => DataType::date(unit),
        T::Time { unit, bit_width } => {
            use crate::datatype::TimeUnit::*;
            match (unit, bit_width) {
                (Second | Millisecond, 32) => DataType::Time32(unit),
                (Microsecond | Nanosecond, 64) => DataType::Time64(unit),
                _ => return Err(invalid("Time.bitWidth", i64::from(bit_width))),
            }
        }
        T::Timestamp { unit, timezone } => DataType::Timestamp(unit, timezone.map(Arc::from)),
        T::Duration(unit) => DataType::Duration(unit),
        T::Interval(unit) => DataType::Interval(unit),
        T::Binary => DataType::Binary,
        T::LargeBinary => DataType::LargeBinary,
        T::Utf8 => DataType::Utf8,
        T::LargeUtf8 => DataType::LargeUtf8,
        T::BinaryView => DataType::BinaryView,
        T::Utf8View => DataType::Utf8View,
        T::FixedSizeBinary { byte_width } => {
            if byte_width < 0 {
                return Err(invalid("FixedSizeBinary.byteWidth", i64::from(byte_width)));
            }
            DataType::FixedSizeBinary(byte_width)
        }
        T::List => DataType::List(only_child(children)?),
        T::LargeList => DataType::LargeList(only_child(children)?),
        T::ListView => DataType::ListView(only_child(children)?),
        T::LargeListView => DataType::LargeListView(only_child(children)?),
        T::FixedSizeList { list_size } => {
            if list_size < 0 {
                return Err(invalid("FixedSizeList.listSize", i64::from(list_size)));
            }
            DataType::FixedSizeList(only_child(children)?, list_size)
        }
        T::Map { keys_sorted } => {
            let entries = only_child(children)?;
            match entries.data_type() {
                DataType::Struct(kv) if kv.len() == 2 => {}
                _ => return Err(invalid("Map entries: struct<key, value> child count", 0)),
            }
            DataType::Map(entries, keys_sorted)
        }
        T::Struct => DataType::Struct(children.into()),
        T::Union { mode, type_ids } => {
            let ids: Vec<i8> = match type_ids {
                Some(ids) => {
                    expect(ids.len())?;
                    ids.iter()
                        .map(|id| {
                            i8::try_from(id).map_err(|_| invalid("Union.typeIds", i64::from(id)))
                        })
                        .collect::<FormatResult<_>>()?
                }
                None => (0..children.len())
                    .map(|i| {
                        i8::try_from(i).map_err(|_| invalid("number of union children", i as i64))
                    })
                    .collect::<FormatResult<_>>()?,
            };
            if ids.iter().any(|id| *id < 0)
                || ids
                    .iter()
                    .enumerate()
                    .any(|(i, id)| ids.get(..i).is_some_and(|s| s.contains(id)))
            {
                return Err(invalid("Union.typeIds (negative or repeated)", 0));
            }
            DataType::Union(children.into(), ids.into(), mode)
        }
        T::RunEndEncoded => {
            let pair = <[Field; 2]>::try_from(children)
                .map_err(|c| invalid("number of child fields", c.len() as i64))?;
            match pair[0].data_type() {
                DataType::Int16 | DataType::Int32 | DataType::Int64 => {}
                _ => return Err(invalid("RunEndEncoded run_ends type", 0)),
            }
            DataType::RunEndEncoded(Arc::new(pair))
        }
    })
}
