//! Documents that span batches ([`JsonWriter`]), and the thin drivers that move an [`Encoder`]'s
//! output to an `embedded_io` writer, an `embedded_io_async` writer or a `Vec<u8>`.
//!
//! The drivers are loops around [`Encoder::encode`]: nothing here formats JSON.

use super::JsonError;
use super::encoder::{Encoder, EncoderBuilder};
use super::framing::Syntax;
use super::options::{EncoderOptions, JsonFormat};
use crate::array::RecordBatch;
use alloc::vec::Vec;

/// Bytes of the stack buffer the `embedded_io` drivers encode into between writes.
pub const WRITE_BUFFER: usize = 512;

/// One JSON document written batch by batch: carries whether a row was written yet, so a
/// [`JsonFormat::JsonArray`] document opens once, separates rows across batches and closes with
/// `]` (or is `[]` when no batch had a row), as arrow-json's writer does.
///
/// ```
/// use quiver::json::{EncoderOptions, JsonFormat, JsonWriter};
///
/// let mut writer = JsonWriter::new(JsonFormat::JsonArray, EncoderOptions::default());
/// // for batch in batches { writer.batch(&batch)?.append_to(&mut out); }
/// let mut out = Vec::new();
/// out.extend_from_slice(writer.finish());
/// assert_eq!(out, b"[]");
/// ```
#[derive(Debug, Clone)]
pub struct JsonWriter {
    format: JsonFormat,
    options: EncoderOptions,
    started: bool,
    finished: bool,
}

impl JsonWriter {
    /// A writer for a new document.
    pub fn new(format: JsonFormat, options: EncoderOptions) -> Self {
        JsonWriter {
            format,
            options,
            started: false,
            finished: false,
        }
    }

    /// An encoder for `batch`'s rows as the next part of the document.
    ///
    /// The writer counts the rows as written when it hands out the encoder: run each encoder to
    /// `done`, in order, before asking for the next.
    pub fn batch<'b, 'a>(&mut self, batch: &'b RecordBatch<'a>) -> Result<Encoder<'b>, JsonError> {
        let encoder = EncoderBuilder::new(self.format, self.options)
            .continuing(self.started)
            .batch(batch)?;
        self.started |= batch.num_rows() > 0;
        Ok(encoder)
    }

    /// The bytes that end the document (`]`, `[]` or nothing); empty when called again. An
    /// array ends at its `]`, as arrow-json's does: a caller that writes a text file adds the
    /// final newline (the `quiver` command does).
    pub fn finish(&mut self) -> &'static [u8] {
        if self.finished {
            return b"";
        }
        self.finished = true;
        match self.format {
            JsonFormat::JsonArray if self.started => b"]",
            JsonFormat::JsonArray => b"[]",
            _ => b"",
        }
    }

    /// The document's format.
    pub fn format(&self) -> JsonFormat {
        self.format
    }

    /// The value conventions of every batch's encoder.
    pub fn options(&self) -> EncoderOptions {
        self.options
    }
}

impl<const DEPTH: usize, const PLAN: usize, F: Syntax> Encoder<'_, DEPTH, PLAN, F> {
    /// Writes all remaining output to `writer`, through a [`WRITE_BUFFER`]-byte stack buffer.
    pub fn write_to<W: embedded_io::Write>(&mut self, writer: &mut W) -> Result<(), W::Error> {
        self.write_through(writer, &mut [0u8; WRITE_BUFFER])
            .map(drop)
    }

    /// Writes all remaining output to an async `writer`, through a [`WRITE_BUFFER`]-byte buffer.
    #[cfg(feature = "async")]
    pub async fn write_to_async<W: embedded_io_async::Write>(
        &mut self,
        writer: &mut W,
    ) -> Result<(), W::Error> {
        let mut buffer = [0u8; WRITE_BUFFER];
        loop {
            let progress = self.encode(&mut buffer);
            writer
                .write_all(buffer.get(..progress.written).unwrap_or_default())
                .await?;
            if progress.done {
                return Ok(());
            }
        }
    }

    /// Appends all remaining output to `out`, encoding straight into its spare capacity: 16 KiB
    /// first (all of a small document), then, with the whole document's size estimated from
    /// those rows and reserved once, all of that in one call (growing by at least 64 KiB past
    /// it). Each chunk is zero-filled before it is lent to the encoder and cut back to what was
    /// written, so the output passes through no second buffer, a large batch does not regrow the
    /// `Vec` again and again, and few rows cross the end of a chunk (such a row is written by the
    /// slower resumable walk: at 2^18 rows of 100-byte strings, 64 KiB chunks cost 12.8 ns a row,
    /// one chunk 7.7).
    pub fn append_to(&mut self, out: &mut Vec<u8>) {
        let mut chunk = FIRST_CHUNK;
        let mut first = true;
        loop {
            let start = out.len();
            out.resize(start + chunk, 0);
            let progress = self.encode(out.get_mut(start..).unwrap_or_default());
            out.truncate(start + progress.written);
            if progress.done {
                return;
            }
            if first {
                first = false;
                let (done, rows) = self.rows_progress();
                out.reserve(reserve_estimate(progress.written, done, rows));
            }
            // All of the reserved capacity; past it, grow.
            let spare = out.capacity() - out.len();
            chunk = if spare >= 1024 { spare } else { APPEND_CHUNK };
        }
    }
}

/// Bytes [`Encoder::append_to`] lends the encoder in its first call.
const FIRST_CHUNK: usize = 16 * 1024;

/// The most [`Encoder::append_to`] reserves ahead of the output it has produced. A row count is
/// only a claim (a null column of 2^40 rows costs a file nothing), so past this the `Vec` grows
/// with the bytes actually written.
const RESERVE_LIMIT: usize = 64 * 1024 * 1024;

/// Bytes to reserve for the rest of a document after `written` bytes for `done` of `rows` rows:
/// the average row size times the rows left, plus an eighth, and at most [`RESERVE_LIMIT`].
fn reserve_estimate(written: usize, done: usize, rows: usize) -> usize {
    let per_row = written / done.max(1) + 1;
    (per_row.saturating_mul(rows.saturating_sub(done)) / 8 * 9).min(RESERVE_LIMIT)
}

/// Bytes [`Encoder::append_to`] grows the `Vec` by, at least, once past its reservation.
const APPEND_CHUNK: usize = 64 * 1024;

/// `batch` as one JSON document in a new `Vec` (the allocating convenience; the encoder itself
/// allocates nothing).
pub fn to_vec(
    batch: &RecordBatch<'_>,
    format: JsonFormat,
    options: EncoderOptions,
) -> Result<Vec<u8>, JsonError> {
    let mut out = Vec::new();
    Encoder::batch(batch, format, options)?.append_to(&mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_follow_the_output_not_the_claimed_rows() {
        assert_eq!(reserve_estimate(3_000, 1_000, 2_000), 4_500);
        assert_eq!(reserve_estimate(3, 1, 1 << 50), RESERVE_LIMIT);
        assert_eq!(reserve_estimate(0, 0, 0), 0);
    }
}
