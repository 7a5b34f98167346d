//! Owned schemas: [`Schema`], [`Field`] and their custom metadata, built from the flatbuffer views.
//!
//! Bytes enter as a [`format::Schema`] view (from a footer or a schema message) and leave as an
//! owned [`Schema`] whose types are shared cheaply (`Arc`) with the arrays that use them. An
//! error about a field is shown with the names a schema gives it here
//! ([`FormatError::display_with`]).
//!
//! It uses [`datatype`](crate::datatype) (mutual: a nested type holds child fields), the
//! flatbuffer views and checked types of [`format`], and the errors.

use crate::datatype::{DataType, Endianness, FieldType, IntType, UnionMode};
use crate::error::{
    Error, FieldPath, FlatbufferBound, FormatError, FormatErrorKind, FormatResult, write_dotted,
};
use crate::format;
use crate::format::layout::invalid;
use crate::format::{Kind, TypeIds};
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

/// Custom metadata: key/value pairs in file order.
pub type Metadata = Vec<(String, String)>;

/// The metadata key that names an extension type; its storage type is read as usual.
pub const EXTENSION_NAME_KEY: &str = crate::format::EXTENSION_NAME_KEY;

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
    /// [`FormatError::field`](crate::error::FormatError::field)); fewer than the path's levels
    /// where it leaves this schema.
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
        let fields = fields_from_fb(fb.fields()?, &mut budget).map_err(|mut e| {
            // The count ran out below a field: say which limit.
            if let FormatErrorKind::FlatbufferLimit {
                what: FlatbufferBound::FieldCount,
                limit,
            } = &mut e.kind
            {
                *limit = max_fields as u64;
            }
            e
        })?;
        Ok(Schema {
            fields,
            metadata: metadata_from_fb(fb.custom_metadata()?)?,
            endianness: fb.endianness()?,
        })
    }
}

/// An error shown with the schema that names its field.
struct DisplayWith<'a, T> {
    error: &'a T,
    schema: &'a Schema,
}

impl<E> Error<E> {
    /// Shows the error naming its field as `schema` calls it (a dotted path such as `a.b`), as
    /// [`FormatError::display_with`] does.
    pub fn display_with<'a>(&'a self, schema: &'a Schema) -> impl fmt::Display + 'a
    where
        E: fmt::Display,
    {
        DisplayWith {
            error: self,
            schema,
        }
    }
}

impl FormatError {
    /// Shows the error naming its field as `schema` calls it: a dotted path of field names such
    /// as `a.b` (the plain [`Display`](fmt::Display) shows the field's indices, `#0.1`).
    pub fn display_with<'a>(&'a self, schema: &'a Schema) -> impl fmt::Display + 'a {
        DisplayWith {
            error: self,
            schema,
        }
    }
}

impl<E: fmt::Display> fmt::Display for DisplayWith<'_, Error<E>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.error {
            Error::Format(e) => e.display_with(self.schema).fmt(f),
            source => source.fmt(f),
        }
    }
}

impl fmt::Display for DisplayWith<'_, FormatError> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error
            .write(f, |f, path| self.schema.write_field(f, path))
    }
}

impl Schema {
    /// Writes `` `a.b` `` when this schema has every field on `path`, else its indices, `#0.1`.
    fn write_field(&self, f: &mut fmt::Formatter<'_>, path: FieldPath) -> fmt::Result {
        if self.fields_on_path(path).count() == path.len() {
            f.write_str("`")?;
            let names = self.fields_on_path(path).map(|field| field.name());
            write_dotted(f, names, path.is_cut())?;
            return f.write_str("`");
        }
        write!(f, "#{path}")
    }
}

fn metadata_from_fb(kvs: format::KeyValues<'_>) -> FormatResult<Metadata> {
    kvs.iter()
        .map(|kv| kv.map(|kv| (kv.key.to_string(), kv.value.to_string())))
        .collect()
}

/// Converts `fields` (an error placed in its field), each counted against `budget`.
fn fields_from_fb(fields: format::Fields<'_>, budget: &mut usize) -> FormatResult<Vec<Field>> {
    let field = |(i, field): (usize, FormatResult<format::Field<'_>>)| {
        field
            .and_then(|field| field_from_fb(field, budget))
            .map_err(|e| e.in_field(i))
    };
    fields.iter().enumerate().map(field).collect()
}

fn field_from_fb(fb: format::Field<'_>, budget: &mut usize) -> FormatResult<Field> {
    *budget = budget
        .checked_sub(1)
        .ok_or(FormatErrorKind::FlatbufferLimit {
            what: FlatbufferBound::FieldCount,
            limit: 0,
        })?;
    let name = fb.name()?.unwrap_or_default();
    let children = fields_from_fb(fb.children()?, budget)?;
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

/// Builds a [`DataType`] from a flatbuffer `Type` and the field's already converted children:
/// the number of children and each type's parameters are checked by [`Kind::of`], as the
/// no-alloc decoder checks them; what an owned type adds (map entries, run-end types) here.
fn data_type_from_fb(ty: format::Type<'_>, children: Vec<Field>) -> FormatResult<DataType> {
    let kind = Kind::of(ty, children.len())?;
    // One child, counted by `Kind::of` for the types that call this.
    let only = |children: Vec<Field>| {
        let child = children.into_iter().next();
        child
            .map(Arc::new)
            .ok_or_else(|| invalid("number of child fields", 0))
    };
    let (precision, keys_sorted) = match ty {
        // 1..=76, checked by `Kind::of`.
        format::Type::Decimal { precision, .. } => (precision as u8, false),
        format::Type::Map { keys_sorted } => (0, keys_sorted),
        _ => (0, false),
    };
    // Widths and sizes were `i32`s, checked not negative by `Kind::of`.
    let width = |w: usize| w as i32;
    Ok(match kind {
        Kind::Null => DataType::Null,
        Kind::Boolean => DataType::Boolean,
        Kind::Int(int) => {
            DataType::int(int).ok_or_else(|| invalid("Int.bitWidth", i64::from(int.bit_width)))?
        }
        Kind::Float16 => DataType::Float16,
        Kind::Float32 => DataType::Float32,
        Kind::Float64 => DataType::Float64,
        Kind::Decimal(4, scale) => DataType::Decimal32(precision, scale),
        Kind::Decimal(8, scale) => DataType::Decimal64(precision, scale),
        Kind::Decimal(16, scale) => DataType::Decimal128(precision, scale),
        Kind::Decimal(_, scale) => DataType::Decimal256(precision, scale),
        Kind::Date32 => DataType::Date32,
        Kind::Date64 => DataType::Date64,
        Kind::Time32(unit) => DataType::Time32(unit),
        Kind::Time64(unit) => DataType::Time64(unit),
        Kind::Timestamp(unit, zone) => DataType::Timestamp(unit, zone.map(Arc::from)),
        Kind::Duration(unit) => DataType::Duration(unit),
        Kind::Interval(unit) => DataType::Interval(unit),
        Kind::Binary => DataType::Binary,
        Kind::LargeBinary => DataType::LargeBinary,
        Kind::Utf8 => DataType::Utf8,
        Kind::LargeUtf8 => DataType::LargeUtf8,
        Kind::BinaryView => DataType::BinaryView,
        Kind::Utf8View => DataType::Utf8View,
        Kind::FixedSizeBinary(size) => DataType::FixedSizeBinary(width(size)),
        Kind::List => DataType::List(only(children)?),
        Kind::LargeList => DataType::LargeList(only(children)?),
        Kind::ListView => DataType::ListView(only(children)?),
        Kind::LargeListView => DataType::LargeListView(only(children)?),
        Kind::FixedSizeList(size) => DataType::FixedSizeList(only(children)?, width(size)),
        Kind::Map => {
            let entries = only(children)?;
            if !matches!(entries.data_type(), DataType::Struct(kv) if kv.len() == 2) {
                return Err(invalid("Map entries: struct<key, value> child count", 0));
            }
            DataType::Map(entries, keys_sorted)
        }
        Kind::Struct => DataType::Struct(children.into()),
        Kind::Union { dense, type_ids } => {
            let ids: Vec<i8> = match type_ids {
                // In 0..=127 and unique, checked by `Kind::of`.
                TypeIds::Message(ids) => ids.iter().map(|id| id as i8).collect(),
                _ => (0..children.len()).map(|i| i as i8).collect(),
            };
            let mode = if dense {
                UnionMode::Dense
            } else {
                UnionMode::Sparse
            };
            DataType::Union(children.into(), ids.into(), mode)
        }
        Kind::RunEndEncoded => {
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
