//! JSON into a `std::io::Write`: [`write_json`], the driver that moves an [`Encoder`]'s output
//! to a writer, and [`JsonWriteError`], what the std JSON writers fail with.
//!
//! It uses nothing else of the crate: quiver's `json` encoder and `embedded-io-adapters`.
//!
//! The driver is the core's [`Encoder::write_through`] over one stack buffer, its writer a
//! `std::io::Write` through `embedded-io-adapters`' `FromStd`: nothing here formats JSON.

use embedded_io_adapters::std::FromStd;
use quiver::json::{Encoder, JsonError};
use std::fmt;
use std::io;

/// Bytes of the stack buffer [`write_json`] encodes into between writes.
pub const IO_BUFFER: usize = 32 * 1024;

/// Writes all of `encoder`'s remaining output to `out`, [`IO_BUFFER`] bytes per `write_all`;
/// returns the number of bytes written. No other buffering: give it a raw file or pipe.
pub fn write_json<W: io::Write + ?Sized, const DEPTH: usize, const PLAN: usize>(
    encoder: &mut Encoder<'_, DEPTH, PLAN>,
    out: &mut W,
) -> io::Result<u64> {
    write_json_through(encoder, out, &mut [0u8; IO_BUFFER])
}

/// [`write_json`] through a buffer of the caller's (one `write_all` per buffer filled).
pub fn write_json_through<W: io::Write + ?Sized, const DEPTH: usize, const PLAN: usize>(
    encoder: &mut Encoder<'_, DEPTH, PLAN>,
    out: &mut W,
    buffer: &mut [u8],
) -> io::Result<u64> {
    encoder.write_through(&mut FromStd::new(out), buffer)
}

/// Why a std JSON writer stopped: the encoder refused the batch, or the writer failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum JsonWriteError {
    /// The batch cannot be written as JSON (see [`JsonError`]).
    Json(JsonError),
    /// The output failed; the writer's own error, unchanged.
    Io(io::Error),
}

impl From<JsonError> for JsonWriteError {
    fn from(e: JsonError) -> Self {
        JsonWriteError::Json(e)
    }
}

impl From<io::Error> for JsonWriteError {
    fn from(e: io::Error) -> Self {
        JsonWriteError::Io(e)
    }
}

impl fmt::Display for JsonWriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonWriteError::Json(e) => e.fmt(f),
            JsonWriteError::Io(e) => write!(f, "writing JSON: {e}"),
        }
    }
}

impl std::error::Error for JsonWriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            JsonWriteError::Json(e) => Some(e),
            JsonWriteError::Io(e) => Some(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver::array::{ArrayView, RecordBatch};
    use quiver::json::{EncoderOptions, JsonFormat, to_vec};

    #[test]
    fn the_driver_writes_what_the_encoder_makes() {
        let batch =
            RecordBatch::from_columns([("a", ArrayView::from_values(0..10_000i64).unwrap())])
                .unwrap();
        let expected = to_vec(&batch, JsonFormat::JsonArray, EncoderOptions::default()).unwrap();
        let mut encoder =
            Encoder::batch(&batch, JsonFormat::JsonArray, EncoderOptions::default()).unwrap();
        let mut out = Vec::new();
        let written = write_json(&mut encoder, &mut out).unwrap();
        assert_eq!(out, expected);
        assert_eq!(written, expected.len() as u64);
        assert!(expected.len() > IO_BUFFER, "several buffers' worth");
    }
}
