//! Writing the Arrow IPC file and stream formats.
//!
//! It uses, of `ipc`, only `delta` (the size of a view); of the crate, the arrays and their bytes,
//! `compression`, the flatbuffer builder, the format, the data types, the schema and the errors.
//!
//! Record batches enter as the same validated [`RecordBatch`](crate::array::RecordBatch) views the readers
//! yield (from a file, or built in memory); bytes leave through an [`embedded_io::Write`].
//!
//! - [`MessageEncoder`] is the core: a pure state machine that turns a schema and each batch into
//!   [`EncodedMessage`]s (the framed metadata flatbuffer, then the body's pieces, borrowed from the
//!   batch where no copy is needed), and remembers which dictionaries the reader has seen. It does
//!   no I/O, so any sink, blocking or not, can drive it.
//! - [`StreamWriter`] writes the stream format: the schema message, dictionary and record batch
//!   messages, then the end-of-stream marker.
//! - [`FileWriter`] writes the file format: the `ARROW1` magic, the same messages, then a footer
//!   listing the schema and where every block lies, its length, and the magic again.
//!
//! What is written: metadata version V5, little-endian, every message framed by the `0xFFFFFFFF`
//! continuation marker and its metadata length, metadata and body padded to the chosen alignment
//! (64 bytes by default), every [`DataType`](crate::datatype::DataType) with slice offsets applied (offsets
//! are rebased and bit ranges copied so that every array in the body starts at slot 0), custom
//! metadata of the schema and its fields, each dictionary once with delta batches when it grows,
//! and optionally LZ4_FRAME or ZSTD bodies (see [`WriterOptions`]).
//!
//! Sizes are checked rather than assumed: a flatbuffer past 2 GiB, an offset that does not fit its
//! type or a schema nested deeper than readers accept is an error, never a panic.
//!
//! ```
//! use quiver::array::{ArrayParts, ArrayView};
//! use quiver::bytes::Bytes;
//! use quiver::{datatype::DataType, schema::Field, ipc::FileReader, ipc::FileWriter, ipc::ReaderOptions, array::RecordBatch, schema::Schema};
//! use quiver::ipc::WriterOptions;
//! use std::sync::Arc;
//!
//! let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int32, false)]));
//! let values = [1i32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let column = ArrayView::try_new(ArrayParts {
//!     data_type: Some(DataType::Int32),
//!     len: 3,
//!     buffers: vec![Bytes::from_vec(values)],
//!     ..ArrayParts::default()
//! })?;
//! let batch = RecordBatch::try_new(Arc::clone(&schema), vec![column], 3)?;
//!
//! let mut writer = FileWriter::new(Vec::new(), schema, WriterOptions::default())?;
//! writer.write(&batch.column(0).unwrap().slice(1, 2).map(|c| {
//!     RecordBatch::try_new(Arc::clone(batch.schema()), vec![c], 2)
//! })??)?;
//! writer.finish()?;
//!
//! let mut reader = FileReader::open(writer.into_inner(), ReaderOptions::default())?;
//! let back = reader.batch(0)?;
//! assert_eq!(back.column(0).unwrap().value::<i32>(0), 2); // the slice starts at slot 0
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod body;
mod dictionary;
mod encoder;
mod file;
mod flatten;
mod message;
mod schema;

#[cfg(test)]
pub(super) use dictionary::slot_eq;
mod stream;

pub use encoder::{EncodedMessage, IpcFormat, MessageEncoder, MessageKind};
pub use file::FileWriter;
pub use stream::StreamWriter;

use crate::compression::CodecOptions;
use crate::datatype::CompressionCodec;
use crate::error::{Feature, FormatError, FormatErrorKind};
use core::fmt;

/// The body alignment the format recommends, and the default.
pub const DEFAULT_ALIGNMENT: usize = 64;

/// The end-of-stream marker: the continuation marker and a zero metadata length.
pub const END_OF_STREAM: [u8; 8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];

/// Options for the IPC writers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriterOptions {
    /// Alignment of every message and buffer, in bytes: 8, 16, 32 or 64 (64 by default).
    pub alignment: usize,
    /// Codec for record batch and dictionary bodies, or `None` (the default) for none.
    pub compression: Option<CompressionCodec>,
    /// Settings of the codecs.
    pub codec_options: CodecOptions,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            alignment: DEFAULT_ALIGNMENT,
            compression: None,
            codec_options: CodecOptions::default(),
        }
    }
}

impl WriterOptions {
    /// Sets [`WriterOptions::alignment`]: the alignment of every message and buffer, in bytes.
    #[must_use]
    pub fn with_alignment(mut self, alignment: usize) -> Self {
        self.alignment = alignment;
        self
    }

    /// Sets [`WriterOptions::compression`]: the codec for record batch and dictionary
    /// bodies, or `None`.
    #[must_use]
    pub fn with_compression(mut self, compression: Option<CompressionCodec>) -> Self {
        self.compression = compression;
        self
    }

    /// Sets [`WriterOptions::codec_options`]: the settings of the codecs.
    #[must_use]
    pub fn with_codec_options(mut self, codec_options: CodecOptions) -> Self {
        self.codec_options = codec_options;
        self
    }
}

impl WriterOptions {
    /// Checks the options: the alignment must be 8, 16, 32 or 64.
    fn validate(&self) -> Result<(), FormatError> {
        if matches!(self.alignment, 8 | 16 | 32 | 64) {
            Ok(())
        } else {
            Err(FormatErrorKind::InvalidValue {
                what: "WriterOptions.alignment (8, 16, 32 or 64)",
                value: i64::try_from(self.alignment).unwrap_or(i64::MAX),
            }
            .into())
        }
    }
}

/// What a writer can fail with: the sink's own error, or data that cannot be written.
#[derive(Debug)]
#[non_exhaustive]
pub enum WriteError<E = core::convert::Infallible> {
    /// The sink failed while writing `len` bytes at `offset`; its error is returned unchanged.
    TrackedWriter {
        /// The sink's own error.
        error: E,
        /// Where the failed write started.
        offset: u64,
        /// How many bytes were being written.
        len: u64,
    },
    /// The sink accepted no bytes (its `write` returned 0) at `offset`.
    SinkFull {
        /// Where the write was refused.
        offset: u64,
    },
    /// The options, schema or a batch cannot be written: what was wrong and where (field path,
    /// batch index). Nothing of that batch was written.
    Invalid(FormatError),
}

impl<E> From<FormatError> for WriteError<E> {
    fn from(error: FormatError) -> Self {
        WriteError::Invalid(error)
    }
}

impl<E> From<FormatErrorKind> for WriteError<E> {
    fn from(kind: FormatErrorKind) -> Self {
        WriteError::Invalid(kind.into())
    }
}

impl<E> WriteError<E> {
    /// The reason the data cannot be written, if that is the error.
    pub fn invalid(&self) -> Option<&FormatError> {
        match self {
            WriteError::Invalid(e) => Some(e),
            _ => None,
        }
    }
}

impl<E: fmt::Display> fmt::Display for WriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::TrackedWriter { error, offset, len } => {
                write!(f, "writing {len} bytes at offset {offset}: {error}")
            }
            WriteError::SinkFull { offset } => {
                write!(f, "the sink accepted no more bytes at offset {offset}")
            }
            WriteError::Invalid(e) => write!(f, "cannot write: {e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for WriteError<E> {}

/// A sink plus how many bytes went into it; the shared tail of both writers.
#[derive(Debug)]
struct TrackedWriter<W> {
    inner: W,
    position: u64,
    /// Set once a write failed: the output is cut short and later writes are refused.
    broken: bool,
    /// Set once the writer finished: later batches are refused.
    finished: bool,
}

impl<W: embedded_io::Write> TrackedWriter<W> {
    fn new(inner: W) -> Self {
        TrackedWriter {
            inner,
            position: 0,
            broken: false,
            finished: false,
        }
    }

    /// Refuses to go on after `finish`, or after a failed write (the output would be corrupt).
    fn check(&self) -> Result<(), WriteError<W::Error>> {
        let what = if self.finished {
            Feature::WriteAfterFinish
        } else if self.broken {
            Feature::WriteAfterError
        } else {
            return Ok(());
        };
        Err(FormatErrorKind::Unsupported { what }.into())
    }

    /// Writes all of `bytes`, looping over partial writes.
    fn write_all(&mut self, mut bytes: &[u8]) -> Result<(), WriteError<W::Error>> {
        while !bytes.is_empty() {
            match self.inner.write(bytes) {
                Ok(0) => {
                    self.broken = true;
                    return Err(WriteError::SinkFull {
                        offset: self.position,
                    });
                }
                Ok(n) => {
                    let n = n.min(bytes.len());
                    self.position += n as u64;
                    bytes = bytes.get(n..).unwrap_or_default();
                }
                Err(error) => {
                    self.broken = true;
                    return Err(WriteError::TrackedWriter {
                        error,
                        offset: self.position,
                        len: bytes.len() as u64,
                    });
                }
            }
        }
        Ok(())
    }

    /// Writes one encoded message: its metadata, then its body's pieces.
    fn write_message(&mut self, message: &EncodedMessage<'_>) -> Result<(), WriteError<W::Error>> {
        self.write_all(&message.metadata)?;
        for piece in &message.body {
            self.write_all(piece)?;
        }
        Ok(())
    }

    /// Whether the output still has to be ended: false once finished, an error after a failed
    /// write.
    fn unfinished(&self) -> Result<bool, WriteError<W::Error>> {
        if self.finished {
            return Ok(false);
        }
        self.check().map(|()| true)
    }

    /// Ends the output: the end-of-stream marker, then `tail` (nothing for a stream; a file's
    /// footer, its length and the magic), then a flush; later batches are refused.
    fn finish(&mut self, tail: &[&[u8]]) -> Result<(), WriteError<W::Error>> {
        self.write_all(&END_OF_STREAM)?;
        for piece in tail {
            self.write_all(piece)?;
        }
        self.inner.flush().map_err(|error| {
            self.broken = true;
            WriteError::TrackedWriter {
                error,
                offset: self.position,
                len: 0,
            }
        })?;
        self.finished = true;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::array::{ArrayParts, ArrayView, RecordBatch};
    use crate::bytes::Bytes;
    use crate::datatype::DataType;
    use crate::schema::{Field, Schema};
    use alloc::sync::Arc;
    use alloc::vec;
    use alloc::vec::Vec;
    use embedded_io::ErrorKind;

    fn batch() -> RecordBatch<'static> {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        let offsets = [0i32, 1, 3, 6]
            .iter()
            .flat_map(|o| o.to_le_bytes())
            .collect();
        let column = ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Utf8),
            len: 3,
            null_count: 1,
            validity: Some(Bytes::from_vec(vec![0b101])),
            buffers: vec![Bytes::from_vec(offsets), Bytes::borrowed(b"abbccc")],
            ..ArrayParts::default()
        })
        .unwrap();
        RecordBatch::try_new(schema, vec![column], 3).unwrap()
    }

    /// A sink that takes at most `step` bytes per call and fails after `limit` bytes.
    struct Trickle {
        out: Vec<u8>,
        step: usize,
        limit: usize,
        zero_when_full: bool,
    }

    /// The error of a full `Trickle`.
    const FULL: ErrorKind = ErrorKind::WriteZero;

    impl embedded_io::ErrorType for Trickle {
        type Error = ErrorKind;
    }

    impl embedded_io::Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> Result<usize, ErrorKind> {
            let room = self.limit - self.out.len();
            if room == 0 {
                return if self.zero_when_full {
                    Ok(0)
                } else {
                    Err(FULL)
                };
            }
            let n = buf.len().min(self.step).min(room);
            self.out.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> Result<(), ErrorKind> {
            Ok(())
        }
    }

    fn trickle(step: usize, limit: usize, zero_when_full: bool) -> Trickle {
        Trickle {
            out: Vec::new(),
            step,
            limit,
            zero_when_full,
        }
    }

    fn file_through(sink: Trickle) -> Result<Vec<u8>, WriteError<ErrorKind>> {
        let batch = batch();
        let mut writer =
            FileWriter::new(sink, Arc::clone(batch.schema()), WriterOptions::default())?;
        writer.write(&batch)?;
        writer.write(&batch)?;
        writer.finish()?;
        Ok(writer.into_inner().out)
    }

    #[test]
    fn output_is_the_same_for_any_write_sizes() {
        let whole = file_through(trickle(usize::MAX, usize::MAX, false)).unwrap();
        for step in [1, 3, 7, 64, 1000] {
            assert_eq!(
                file_through(trickle(step, usize::MAX, false)).unwrap(),
                whole
            );
        }
        let batch = batch();
        let mut writer = StreamWriter::new(
            Vec::new(),
            Arc::clone(batch.schema()),
            WriterOptions::default(),
        )
        .unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        let stream = writer.into_inner();
        assert_eq!(&stream[stream.len() - 8..], &END_OF_STREAM);
    }

    #[test]
    fn sink_errors_come_back_with_their_offset() {
        let whole = file_through(trickle(usize::MAX, usize::MAX, false))
            .unwrap()
            .len();
        for limit in [0, 5, 64, 200, whole - 1] {
            match file_through(trickle(10, limit, false)) {
                Err(WriteError::TrackedWriter { error, offset, .. }) => {
                    assert_eq!((error, offset), (FULL, limit as u64));
                }
                other => panic!("{limit}: {other:?}"),
            }
            match file_through(trickle(10, limit, true)) {
                Err(WriteError::SinkFull { offset }) => assert_eq!(offset, limit as u64),
                other => panic!("{limit}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_broken_sink_is_not_written_again() {
        let batch = batch();
        // Room for the magic and the schema message only.
        let mut writer = StreamWriter::new(
            trickle(usize::MAX, 200, false),
            Arc::clone(batch.schema()),
            WriterOptions::default(),
        )
        .unwrap();
        assert!(matches!(
            writer.write(&batch),
            Err(WriteError::TrackedWriter { .. })
        ));
        let written = writer.bytes_written();
        let err = writer.write(&batch).unwrap_err();
        assert!(err.invalid().is_some(), "{err}");
        assert!(writer.finish().is_err());
        assert_eq!(writer.bytes_written(), written);
    }

    #[test]
    fn batches_after_finish_are_refused_and_finish_is_once() {
        let batch = batch();
        let after_finish = |err: WriteError| {
            let kind = err.invalid().map(|e| e.kind.clone());
            assert_eq!(
                kind,
                Some(FormatErrorKind::Unsupported {
                    what: Feature::WriteAfterFinish
                })
            );
        };
        let (schema, options) = (batch.schema(), WriterOptions::default);
        let mut file = FileWriter::new(Vec::new(), Arc::clone(schema), options()).unwrap();
        file.finish().unwrap();
        let written = file.bytes_written();
        after_finish(file.write(&batch).unwrap_err());
        file.finish().unwrap();
        assert_eq!(file.bytes_written(), written);
        let mut stream = StreamWriter::new(Vec::new(), Arc::clone(schema), options()).unwrap();
        stream.finish().unwrap();
        let written = stream.bytes_written();
        after_finish(stream.write(&batch).unwrap_err());
        stream.finish().unwrap();
        assert_eq!(stream.bytes_written(), written);
    }

    #[test]
    fn options_are_checked() {
        for (alignments, ok) in [(&[8, 16, 32, 64][..], true), (&[0, 1, 4, 24, 128], false)] {
            for &alignment in alignments {
                let options = WriterOptions::default().with_alignment(alignment);
                assert_eq!(options.validate().is_ok(), ok, "{alignment}");
            }
        }
    }
}
