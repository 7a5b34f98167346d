//! Views of `File.fbs`: the file [`Footer`] and its [`Block`] index.
//!
//! It uses `framing`, `message`, `schema` and `slots` beside it, the flatbuffer reader and the
//! errors.
//!
//! [`Footer::parse`] takes the footer's flatbuffer bytes: in a file they sit just before the
//! trailing `i32` footer length and `ARROW1` magic, which the caller has checked and stripped.

use super::Foreign;
use super::framing::Prefix;
use super::message::{Message, MetadataVersion, version};
use super::schema::{KeyValues, Schema, key_values};
use super::slots::*;
use super::{required, truncated, vector_or_empty};
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use crate::flatbuffer::{Table, Vector};
use core::ops::Range;

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
        required(&self.table, FOOTER_SCHEMA, "Footer.schema").map(Schema::from_table)
    }

    /// Where the dictionary batches lie (`Footer.dictionaries`; empty when absent).
    pub fn dictionaries(&self) -> FormatResult<Blocks<'a>> {
        vector_or_empty(&self.table, FOOTER_DICTIONARIES, "Footer.dictionaries")
    }

    /// Where the record batches lie (`Footer.recordBatches`; empty when absent).
    pub fn record_batches(&self) -> FormatResult<Blocks<'a>> {
        vector_or_empty(&self.table, FOOTER_RECORD_BATCHES, "Footer.recordBatches")
    }

    /// User-defined metadata (`Footer.custom_metadata`; empty when absent).
    pub fn custom_metadata(&self) -> FormatResult<KeyValues<'a>> {
        key_values(
            &self.table,
            FOOTER_CUSTOM_METADATA,
            "Footer.custom_metadata",
        )
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

// 4 bytes of padding after `metaDataLength`.
fb_struct!(Block: 24 { offset: i64 = 0, meta_data_length: i32 = 8, body_length: i64 = 16 });

/// A footer's blocks.
pub type Blocks<'a> = Vector<'a, Block>;

/// Bytes after the footer: its i32 length and the trailing magic.
pub const TRAILER_LEN: usize = 4 + super::MAGIC.len();

/// The leading magic plus its padding to 8 bytes.
pub const LEADING_LEN: u64 = 8;

/// Where the footer lies in a file of `file_len` bytes, from `tail`, the file's last bytes
/// (read from `tail_start`, at least [`TRAILER_LEN`] + [`LEADING_LEN`] of them unless the file
/// is shorter): checks both magics (the leading one when the tail is the whole file) and the
/// footer length.
///
/// A file without the trailing magic is refused as what it looks like when its last bytes or
/// (with the whole file in `tail`) its first bytes say so; else it is [`BadMagic`] at the end,
/// and a caller that did not read the file's start may read it and ask [`missing_trailer`].
///
/// [`BadMagic`]: FormatErrorKind::BadMagic
pub fn footer_range(tail: &[u8], tail_start: u64, file_len: u64) -> FormatResult<Range<u64>> {
    let magic = super::MAGIC;
    let whole = tail_start == 0;
    if (tail.len() as u64) < TRAILER_LEN as u64 + LEADING_LEN {
        if file_len == 0 {
            return Err(FormatErrorKind::EmptyInput.into());
        }
        if let Some(looks_like) = Foreign::sniff(tail).filter(|_| whole) {
            return Err(FormatErrorKind::NotArrow { looks_like }.into());
        }
        return Err(FormatErrorKind::Truncated {
            what: "IPC file",
            needed: TRAILER_LEN as u64 + LEADING_LEN,
            available: file_len,
        }
        .into());
    }
    let trailer_at = tail.len() - TRAILER_LEN;
    let (footer_len_bytes, trailing) = tail.get(trailer_at..).unwrap_or_default().split_at(4);
    if trailing != magic {
        if whole && tail.starts_with(magic) {
            return Err(missing_trailer(tail, file_len));
        }
        // Parquet and Feather version 1 files end with the magic they start with.
        let last = tail.get(tail.len() - 4..).unwrap_or_default();
        if let Some(looks_like) =
            Foreign::sniff(last).filter(|f| matches!(f, Foreign::Parquet | Foreign::FeatherV1))
        {
            return Err(FormatErrorKind::NotArrow { looks_like }.into());
        }
        if whole {
            return Err(missing_trailer(tail, file_len));
        }
        return Err(FormatError::from(FormatErrorKind::BadMagic).at(file_len - magic.len() as u64));
    }
    if whole && tail.get(..magic.len()) != Some(&magic[..]) {
        return Err(FormatError::from(FormatErrorKind::BadMagic).at(0));
    }
    let footer_len = i32::from_le_bytes(footer_len_bytes.try_into().unwrap_or_default());
    let footer_at = file_len - TRAILER_LEN as u64;
    let footer_len = u64::try_from(footer_len)
        .ok()
        .filter(|len| *len + LEADING_LEN <= footer_at)
        .ok_or_else(|| {
            FormatError::from(FormatErrorKind::InvalidValue {
                what: "footer length",
                value: i64::from(footer_len),
            })
            .at(footer_at)
        })?;
    Ok(footer_at - footer_len..footer_at)
}

/// The error for a file of `file_len` bytes (at least [`TRAILER_LEN`]) that does not end with
/// `ARROW1`, from `leading`, its first bytes: a truncated file when they are `ARROW1`, what the
/// file looks like when they say ([`Foreign::sniff`]), else [`BadMagic`] at the end.
///
/// [`BadMagic`]: FormatErrorKind::BadMagic
pub fn missing_trailer(leading: &[u8], file_len: u64) -> FormatError {
    if leading.starts_with(super::MAGIC) {
        FormatErrorKind::TruncatedFile { len: file_len }.into()
    } else if let Some(looks_like) = Foreign::sniff(leading) {
        FormatErrorKind::NotArrow { looks_like }.into()
    } else {
        FormatError::from(FormatErrorKind::BadMagic)
            .at(file_len.saturating_sub(super::MAGIC.len() as u64))
    }
}

impl Block {
    /// A block must lie between the leading magic and the footer, with sane lengths. Errors carry
    /// no offset: the caller locates them at the footer, where the lie is.
    pub fn check(self, footer_start: u64) -> FormatResult<()> {
        let block = self;
        let invalid =
            |what, value| FormatError::from(FormatErrorKind::InvalidValue { what, value });
        let offset = u64::try_from(block.offset)
            .ok()
            .filter(|o| *o >= LEADING_LEN)
            .ok_or_else(|| invalid("Block.offset", block.offset))?;
        let meta = u64::try_from(block.meta_data_length)
            .ok()
            .filter(|m| *m >= 8)
            .ok_or_else(|| invalid("Block.metaDataLength", i64::from(block.meta_data_length)))?;
        let body = u64::try_from(block.body_length)
            .map_err(|_| invalid("Block.bodyLength", block.body_length))?;
        let end = offset
            .checked_add(meta)
            .and_then(|e| e.checked_add(body))
            .filter(|e| *e <= footer_start);
        if end.is_none() || usize::try_from(meta + body).is_err() {
            return Err(FormatError::from(FormatErrorKind::Truncated {
                what: "block (past the footer)",
                needed: offset.saturating_add(meta).saturating_add(body),
                available: footer_start,
            }));
        }
        Ok(())
    }

    /// Where the message flatbuffer lies in `bytes`, the block's bytes from its start: after
    /// the encapsulation prefix, checked to end within `metaDataLength`. Errors are located in
    /// the file.
    pub(crate) fn flatbuffer(self, bytes: &[u8]) -> FormatResult<Range<usize>> {
        let at = self.offset as u64;
        let (prefix, len) = match Prefix::parse(bytes, true, at)? {
            Prefix::Message { len, metadata_len } => (len, metadata_len),
            // A zero length: an empty flatbuffer, which is no message.
            Prefix::EndOfStream { len } => (len, 0),
            Prefix::EndOfInput | Prefix::Need(_) => {
                return Err(truncated("message length prefix", 4, 0, at));
            }
        };
        if prefix + len > self.meta_data_length as usize {
            return Err(FormatError::from(FormatErrorKind::InvalidValue {
                what: "message metadata length (past Block.metaDataLength)",
                value: len as i64,
            })
            .at(at));
        }
        Ok(prefix..prefix + len)
    }

    /// The message of `flatbuffer` (the block's, at `at` in the file), checked to declare the
    /// block's body length.
    pub(crate) fn message(self, flatbuffer: &[u8], at: u64) -> FormatResult<Message<'_>> {
        let message = Message::parse(flatbuffer).map_err(|e| e.rebase(at))?;
        if message.body_length() != self.body_length {
            return Err(FormatError::from(FormatErrorKind::InvalidValue {
                what: "Message.bodyLength (differs from Block.bodyLength)",
                value: message.body_length(),
            })
            .at(at));
        }
        Ok(message)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::error::FormatErrorKind;
    use crate::flatbuffer::builder::{Obj, Value, finish};
    use crate::format::block;
    use std::string::ToString;
    use std::vec;
    use std::vec::Vec;

    fn blocks(blocks: &[(i64, i32, i64)]) -> Value {
        let mut bytes = Vec::new();
        for (offset, meta, body) in blocks {
            bytes.extend_from_slice(&offset.to_le_bytes());
            bytes.extend_from_slice(&meta.to_le_bytes());
            bytes.extend_from_slice(&[0xAA; 4]); // padding, ignored
            bytes.extend_from_slice(&body.to_le_bytes());
        }
        Value::Vector {
            elem_size: 24,
            bytes,
        }
    }

    #[test]
    fn footer() {
        let schema = Obj::new().tables(1, vec![Obj::new().str(0, "x")]);
        let footer = Obj::new()
            .with(FOOTER_VERSION, Value::I16(4))
            .table(FOOTER_SCHEMA, schema)
            .with(FOOTER_DICTIONARIES, blocks(&[(8, 200, 64)]))
            .with(
                FOOTER_RECORD_BATCHES,
                blocks(&[(272, 180, 1024), (1476, 180, -1)]),
            )
            .tables(
                FOOTER_CUSTOM_METADATA,
                vec![Obj::new().str(0, "k").str(1, "v")],
            );
        let buf = finish(&footer);
        let f = Footer::parse(&buf).unwrap();
        assert_eq!(f.version().unwrap(), MetadataVersion::V5);
        let field = f.schema().unwrap().fields().unwrap().get(0).unwrap();
        assert_eq!(field.name().unwrap(), Some("x"));
        let dictionaries = f.dictionaries().unwrap();
        assert_eq!(dictionaries.len(), 1);
        assert_eq!(dictionaries.get(0), Some(block(8, 200, 64)));
        let batches = f.record_batches().unwrap();
        assert_eq!(
            batches.iter().collect::<Vec<_>>(),
            [block(272, 180, 1024), block(1476, 180, -1)]
        );
        assert_eq!(batches.get(2), None);
        let md = f.custom_metadata().unwrap().get(0).unwrap();
        assert_eq!((md.key, md.value), ("k", "v"));
    }

    #[test]
    fn inputs_without_a_footer_say_what_they_are() {
        let kind = |bytes: &[u8]| footer_range(bytes, 0, bytes.len() as u64).unwrap_err().kind;
        let mut parquet = b"PAR1".to_vec();
        parquet.extend_from_slice(&[0x15; 40]);
        parquet.extend_from_slice(b"\x20\0\0\0PAR1");
        let not_arrow = |looks_like| FormatErrorKind::NotArrow { looks_like };
        let parquet_kind = not_arrow(Foreign::Parquet);
        assert_eq!(kind(&parquet), parquet_kind);
        // Its end alone says Parquet, when the tail is not the whole file.
        let tail = parquet.get(20..).unwrap();
        let e = footer_range(tail, 20, parquet.len() as u64).unwrap_err();
        assert_eq!(e.kind, parquet_kind);
        let feather = b"FEA1\0\0\0\0\0\0\0\0\x10\0\0\0FEA1";
        assert_eq!(kind(feather), not_arrow(Foreign::FeatherV1));
        let json = b"[{\"a\": 1}, {\"a\": 2}]\n";
        assert_eq!(kind(json), not_arrow(Foreign::Json));
        assert_eq!(kind(b"a,b\n"), not_arrow(Foreign::Text));
        assert_eq!(kind(b""), FormatErrorKind::EmptyInput);
        // ARROW1 at the start and not at the end: cut short.
        let mut cut = b"ARROW1\0\0".to_vec();
        cut.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 0x78, 0, 0, 0, 0x10, 0, 0, 0]);
        assert_eq!(kind(&cut), FormatErrorKind::TruncatedFile { len: 20 });
        assert_eq!(
            FormatError::from(kind(&cut)).to_string(),
            "truncated Arrow IPC file: it starts with ARROW1, but its 20 bytes do not end with \
             the footer length and ARROW1 magic (10 bytes)"
        );
        assert_eq!(
            kind(b"ARROW1\0\0"),
            FormatErrorKind::Truncated {
                what: "IPC file",
                needed: 18,
                available: 8
            }
        );
        // Binary that names nothing keeps the magic error.
        assert_eq!(kind(&[0x01; 32]), FormatErrorKind::BadMagic);
        // Whole-input errors print no location.
        assert_eq!(
            FormatError::from(kind(&parquet)).to_string(),
            "this looks like a Parquet file; quiver reads Arrow IPC files and streams"
        );
        assert_eq!(FormatError::from(kind(b"")).to_string(), "empty input");
    }

    #[test]
    fn absent_fields() {
        let buf = finish(&Obj::new());
        let f = Footer::parse(&buf).unwrap();
        assert_eq!(f.version().unwrap(), MetadataVersion::V1);
        let e = f.schema().unwrap_err();
        assert_eq!(
            e.kind,
            FormatErrorKind::MissingField {
                what: "Footer.schema"
            }
        );
        assert!(f.dictionaries().unwrap().is_empty());
        assert!(f.record_batches().unwrap().is_empty());
        assert!(f.custom_metadata().unwrap().is_empty());
    }

    #[test]
    fn block_vector_past_the_end() {
        let buf = finish(&Obj::new().with(FOOTER_RECORD_BATCHES, blocks(&[(1, 2, 3)])));
        // Claim two blocks where one is stored; the vector would run past the buffer.
        let at = buf
            .windows(8)
            .position(|w| w == 1i64.to_le_bytes())
            .unwrap()
            - 4;
        let mut bad = buf.clone();
        bad[at..at + 4].copy_from_slice(&(buf.len() as u32).to_le_bytes());
        let e = Footer::parse(&bad).unwrap().record_batches().unwrap_err();
        assert_eq!(
            e.kind,
            FormatErrorKind::Flatbuffer {
                what: "Footer.recordBatches"
            }
        );
        assert_eq!(e.offset(), Some(at as u64));
    }
}
