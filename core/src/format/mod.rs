//! Typed, zero-copy views of Arrow's flatbuffer metadata: `Schema.fbs`, `Message.fbs` and
//! `File.fbs`.
//!
//! Bytes enter as the flatbuffer of one encapsulated message ([`Message::parse`]) or of a
//! file footer ([`Footer::parse`]); the IPC framing around them (continuation marker, length
//! prefix, `ARROW1` magic) is the caller's business. Every view is `Copy`, borrows from those
//! bytes, and reads its fields through the checked [`flatbuffer`](crate::flatbuffer) reader, so
//! nothing is allocated and nothing panics. Names follow the `.fbs` files. Offsets in errors
//! are relative to the buffer handed to `parse`; the caller rebases them
//! ([`FormatError::rebase`](crate::FormatError::rebase)).
//!
//! Nested fields form a tree whose depth is bounded by
//! [`flatbuffer::MAX_DEPTH`](crate::flatbuffer::MAX_DEPTH), but flatbuffer offsets may share
//! subtrees: code that walks [`Field::children`] recursively must also budget the number of
//! fields it visits.

mod file;
mod message;
mod schema;

pub use file::{Block, Blocks, Footer};
pub use message::{
    BodyCompression, BodyCompressionMethod, Buffer, Buffers, DictionaryBatch, FieldNode,
    FieldNodes, Message, MessageHeader, MetadataVersion, RecordBatch,
};
pub use schema::{
    DictionaryEncoding, Field, Fields, KeyValue, KeyValues, Schema, Type,
};

use crate::error::{FormatError, FormatErrorKind};
use crate::flatbuffer::{Table, Vector};

/// A flatbuffer vector of `int` (e.g. `Union.typeIds`).
pub type Int32s<'a> = Vector<'a, i32>;

/// A flatbuffer vector of `long` (e.g. `RecordBatch.variadicBufferCounts`).
pub type Int64s<'a> = Vector<'a, i64>;

/// An `InvalidValue` error for `what`, located at `table`.
fn invalid(what: &'static str, value: impl Into<i64>, table: &Table<'_>) -> FormatError {
    FormatError::new(FormatErrorKind::InvalidValue {
        what,
        value: value.into(),
    })
    .at(table.offset() as u64)
}

/// A `MissingField` error for `what`, located at the table that lacks it.
fn missing(what: &'static str, table: &Table<'_>) -> FormatError {
    FormatError::new(FormatErrorKind::MissingField { what }).at(table.offset() as u64)
}

/// Reads an `i16` enum field and converts it with `from_fb`; unknown values are errors.
fn enum_field<T>(
    table: &Table<'_>,
    slot: u16,
    default: i16,
    what: &'static str,
    from_fb: fn(i16) -> Option<T>,
) -> crate::FormatResult<T> {
    let value = table.i16(slot, default, what)?;
    from_fb(value).ok_or_else(|| invalid(what, value, table))
}
