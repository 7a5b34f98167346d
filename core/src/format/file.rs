//! Views of `File.fbs`: the file [`Footer`] and its [`Block`] index.
//!
//! [`Footer::parse`] takes the footer's flatbuffer bytes: in a file they sit just before the
//! trailing `i32` footer length and `ARROW1` magic, which the caller has checked and stripped.

use super::message::{MetadataVersion, version};
use super::schema::{KeyValues, Schema};
use super::missing;
use crate::error::FormatResult;
use crate::flatbuffer::{Element, Table, Vector};

// Footer slots.
const FOOTER_VERSION: u16 = 0;
const FOOTER_SCHEMA: u16 = 1;
const FOOTER_DICTIONARIES: u16 = 2;
const FOOTER_RECORD_BATCHES: u16 = 3;
const FOOTER_CUSTOM_METADATA: u16 = 4;

/// The index at the end of an Arrow file: schema plus where each message lies (`Footer`).
#[derive(Clone, Copy, Debug)]
pub struct Footer<'a> {
    table: Table<'a>,
}

impl<'a> Footer<'a> {
    /// Checks the root `Footer` table of the flatbuffer `buf`.
    pub fn parse(buf: &'a [u8]) -> FormatResult<Self> {
        Table::root(buf, "Footer").map(|table| Footer { table })
    }

    /// The metadata version the file was written with (`Footer.version`).
    pub fn version(&self) -> FormatResult<MetadataVersion> {
        version(&self.table, FOOTER_VERSION, "Footer.version")
    }

    /// The file's schema (`Footer.schema`); absent is an error.
    pub fn schema(&self) -> FormatResult<Schema<'a>> {
        match self.table.table(FOOTER_SCHEMA, "Footer.schema")? {
            Some(t) => Ok(Schema::from_table(t)),
            None => Err(missing("Footer.schema", &self.table)),
        }
    }

    /// Where the dictionary batches lie (`Footer.dictionaries`; empty when absent).
    pub fn dictionaries(&self) -> FormatResult<Blocks<'a>> {
        Ok(self
            .table
            .vector(FOOTER_DICTIONARIES, "Footer.dictionaries")?
            .unwrap_or_else(Vector::empty))
    }

    /// Where the record batches lie (`Footer.recordBatches`; empty when absent).
    pub fn record_batches(&self) -> FormatResult<Blocks<'a>> {
        Ok(self
            .table
            .vector(FOOTER_RECORD_BATCHES, "Footer.recordBatches")?
            .unwrap_or_else(Vector::empty))
    }

    /// User-defined metadata (`Footer.custom_metadata`; empty when absent).
    pub fn custom_metadata(&self) -> FormatResult<KeyValues<'a>> {
        KeyValues::read(&self.table, FOOTER_CUSTOM_METADATA, "Footer.custom_metadata")
    }
}

/// Where one encapsulated message lies in the file (`Block` struct).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Offset of the message (its framing included) from the start of the file, as written.
    pub offset: i64,
    /// Length of the framing plus metadata flatbuffer plus padding, as written.
    pub meta_data_length: i32,
    /// Length of the body that follows the metadata, as written.
    pub body_length: i64,
}

impl Element for Block {
    /// `offset` at 0, `metaDataLength` at 8, 4 bytes of padding, `bodyLength` at 16.
    const SIZE: usize = 24;

    fn from_le_slice(bytes: &[u8]) -> Option<Self> {
        let (offset, rest) = bytes.split_at_checked(8)?;
        let (meta_data_length, rest) = rest.split_at_checked(4)?;
        let (_padding, body_length) = rest.split_at_checked(4)?;
        Some(Block {
            offset: i64::from_le_slice(offset)?,
            meta_data_length: i32::from_le_slice(meta_data_length)?,
            body_length: i64::from_le_slice(body_length)?,
        })
    }
}

/// A footer's blocks.
pub type Blocks<'a> = Vector<'a, Block>;
