//! [`ParallelWriter`]: one JSON document from many record batches, each batch's rows encoded on
//! several threads and written in order.
//!
//! A batch is cut into chunks of rows ([`RecordBatch::slice`]: views, no copies). The chunks'
//! encoders are made in order from one [`JsonWriter`], so the framing (`[`, `,`, `]`) is what a
//! single encoder would write. The chunks are dealt in turn to the caller's thread and to
//! `threads - 1` scoped workers; the workers encode theirs into buffers the caller's thread
//! lends them, and the caller's thread encodes its own when their turn to be written comes,
//! writing every chunk in order. At most two chunks per worker are in flight, so memory stays at
//! a few chunk buffers whatever the batch size: the JSON of a whole batch is never held.

use crate::json::{JsonWriteError, write_json_through};
use quiver::RecordBatch;
use quiver::json::{Encoder, EncoderOptions, JsonFormat, JsonWriter};
use std::io;
use std::sync::mpsc;

/// Output bytes per chunk a [`ParallelWriter`] aims for by default.
pub const DEFAULT_CHUNK_BYTES: usize = 256 * 1024;

/// Chunks in flight per worker: one being encoded, one waiting to be written.
const IN_FLIGHT: usize = 2;

/// Writes a JSON document (NDJSON or one array) to `W`, encoding each batch's rows on up to
/// `threads` threads (the caller's and scoped workers) and writing them in order; see the module
/// docs.
///
/// With one thread, or a batch that fits in one chunk, the batch is encoded on the caller's
/// thread straight into the writer. The output is the same bytes in every case.
#[derive(Debug)]
pub struct ParallelWriter<W> {
    out: W,
    document: JsonWriter,
    threads: usize,
    chunk_bytes: usize,
    /// Rows per chunk, re-estimated from the bytes per row seen so far.
    chunk_rows: usize,
    /// Chunk buffers kept between batches.
    buffers: Vec<Vec<u8>>,
    rows: u64,
    bytes_written: u64,
}

impl<W: io::Write> ParallelWriter<W> {
    /// A writer of one `format` document to `out`, with as many threads as the machine has
    /// cores and [`DEFAULT_CHUNK_BYTES`] chunks.
    pub fn new(out: W, format: JsonFormat, options: EncoderOptions) -> Self {
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        ParallelWriter {
            out,
            document: JsonWriter::new(format, options),
            threads,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            chunk_rows: rows_for(DEFAULT_CHUNK_BYTES, 128),
            buffers: Vec::new(),
            rows: 0,
            bytes_written: 0,
        }
    }

    /// Encodes on `threads` threads (1: on the caller's thread only; 0 counts as 1).
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Aims for chunks of about `bytes` bytes of JSON (at least one row each).
    #[must_use]
    pub fn with_chunk_bytes(mut self, bytes: usize) -> Self {
        self.chunk_bytes = bytes.max(1);
        self.chunk_rows = rows_for(self.chunk_bytes, 128);
        self
    }

    /// Writes `batch`'s rows as the next part of the document.
    pub fn write(&mut self, batch: &RecordBatch<'_>) -> Result<(), JsonWriteError> {
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let chunk_rows = self.chunk_rows;
        let written = if self.threads <= 1 || rows <= chunk_rows {
            let mut encoder = self.document.batch(batch)?;
            let mut buffer = self.buffers.pop().unwrap_or_default();
            if buffer.len() < self.chunk_bytes {
                buffer.resize(self.chunk_bytes, 0);
            }
            let written = write_json_through(&mut encoder, &mut self.out, &mut buffer);
            self.buffers.push(buffer);
            written?
        } else {
            self.write_chunks(batch, chunk_rows)?
        };
        self.rows += rows as u64;
        self.bytes_written += written;
        let per_row = (self.bytes_written / self.rows.max(1)).max(1);
        self.chunk_rows = rows_for(self.chunk_bytes, per_row);
        Ok(())
    }

    /// Encodes `batch` in chunks of `chunk_rows` rows, the caller's thread and `threads - 1`
    /// scoped workers taking turns; returns the bytes written.
    fn write_chunks(
        &mut self,
        batch: &RecordBatch<'_>,
        chunk_rows: usize,
    ) -> Result<u64, JsonWriteError> {
        let rows = batch.num_rows();
        let chunks = (0..rows)
            .step_by(chunk_rows)
            .map(|start| batch.slice(start, chunk_rows.min(rows - start)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(io::Error::other)?;
        let mut encoders = Vec::with_capacity(chunks.len());
        for chunk in &chunks {
            encoders.push(Some(self.document.batch(chunk)?));
        }
        // Chunk i is encoded by lane i % lanes: lane 0 is the caller's thread, which encodes its
        // chunks when their turn to be written comes; each worker lane holds IN_FLIGHT chunks at
        // most, encoded ahead while the caller encodes and writes.
        let lanes = self.threads.min(chunks.len());
        let ahead = lanes * IN_FLIGHT;
        let chunk_bytes = self.chunk_bytes;
        let out = &mut self.out;
        let buffers = &mut self.buffers;
        let mut own = buffers.pop().unwrap_or_default();
        let written = std::thread::scope(|scope| {
            let mut workers = Vec::with_capacity(lanes.saturating_sub(1));
            for _ in 1..lanes {
                let (jobs, job_queue): (Jobs<'_, '_>, _) = mpsc::channel();
                let (done_queue, done) = mpsc::channel::<(Vec<u8>, usize)>();
                scope.spawn(move || {
                    for (mut encoder, mut buffer) in job_queue {
                        let filled = encode_into(&mut encoder, &mut buffer, chunk_bytes);
                        if done_queue.send((buffer, filled)).is_err() {
                            return;
                        }
                    }
                });
                workers.push((jobs, done));
            }
            let worker = |i: usize| workers.get((i % lanes).wrapping_sub(1));
            for i in (0..ahead.min(chunks.len())).filter(|i| i % lanes != 0) {
                let buffer = buffers.pop().unwrap_or_default();
                if let Some(buffer) = hand(worker(i), encoders.get_mut(i), buffer) {
                    buffers.push(buffer);
                }
            }
            let mut written = 0u64;
            for i in 0..chunks.len() {
                let filled = match worker(i) {
                    None => {
                        let Some(Some(encoder)) = encoders.get_mut(i) else {
                            break;
                        };
                        let filled = encode_into(encoder, &mut own, chunk_bytes);
                        out.write_all(own.get(..filled).unwrap_or_default())?;
                        filled
                    }
                    Some((_, done)) => {
                        // A worker only stops early by panicking, which the scope re-raises.
                        let Some((buffer, filled)) = receive(done) else {
                            break;
                        };
                        out.write_all(buffer.get(..filled).unwrap_or_default())?;
                        let next = i + ahead;
                        if let Some(buffer) = hand(worker(next), encoders.get_mut(next), buffer) {
                            buffers.push(buffer);
                        }
                        filled
                    }
                };
                written += filled as u64;
            }
            Ok::<_, io::Error>(written)
        });
        self.buffers.push(own);
        Ok(written?)
    }

    /// Ends the document (`]` or `[]` for an array) and flushes the writer; writes nothing more
    /// when called again.
    pub fn finish(&mut self) -> io::Result<()> {
        let end = self.document.finish();
        self.out.write_all(end)?;
        self.bytes_written += end.len() as u64;
        self.out.flush()
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The writer.
    pub fn inner(&self) -> &W {
        &self.out
    }

    /// The writer, mutably.
    pub fn inner_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Unwraps the writer (call [`ParallelWriter::finish`] first to end the document).
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The next chunk a worker encoded, waiting for it: first by polling for a little while (a
/// chunk is usually close to done), then by sleeping. Sleeping at once lets the scheduler wake
/// the caller's thread on the worker's core, where the two then take turns instead of running
/// side by side. `None` when the worker has stopped.
fn receive<T>(done: &mpsc::Receiver<T>) -> Option<T> {
    for _ in 0..SPINS {
        match done.try_recv() {
            Ok(chunk) => return Some(chunk),
            Err(mpsc::TryRecvError::Empty) => std::hint::spin_loop(),
            Err(mpsc::TryRecvError::Disconnected) => return None,
        }
    }
    done.recv().ok()
}

/// Polls of [`receive`] before it sleeps (some tens of microseconds).
const SPINS: usize = 4096;

/// Hands a chunk's encoder (taken from its slot) and `buffer` to the worker that encodes it;
/// the buffer comes back when there is no such worker or chunk.
fn hand<'b, 'a>(
    worker: Option<&Worker<'b, 'a>>,
    slot: Option<&mut Option<Encoder<'b, 'a>>>,
    buffer: Vec<u8>,
) -> Option<Vec<u8>> {
    let Some((jobs, _)) = worker else {
        return Some(buffer);
    };
    let Some(encoder) = slot.and_then(Option::take) else {
        return Some(buffer);
    };
    jobs.send((encoder, buffer)).err().map(|e| (e.0).1)
}

/// Where a worker takes chunks to encode from: each with the buffer to encode it into.
type Jobs<'b, 'a> = mpsc::Sender<(Encoder<'b, 'a>, Vec<u8>)>;

/// A worker as the caller's thread sees it: its jobs, and its encoded chunks (each buffer with
/// the bytes filled).
type Worker<'b, 'a> = (Jobs<'b, 'a>, mpsc::Receiver<(Vec<u8>, usize)>);

/// Encodes all of `encoder`'s output into `buffer`, straight into its initialised bytes (a
/// recycled buffer is not cleared or copied), growing it when full; returns the bytes filled.
fn encode_into(encoder: &mut Encoder<'_, '_>, buffer: &mut Vec<u8>, chunk_bytes: usize) -> usize {
    let mut filled = 0;
    loop {
        if buffer.len() - filled < MIN_ROOM {
            let grown = (buffer.len() + buffer.len() / 2)
                .max(chunk_bytes)
                .max(MIN_ROOM);
            buffer.resize(grown, 0);
        }
        let progress = encoder.encode(buffer.get_mut(filled..).unwrap_or_default());
        filled += progress.written;
        if progress.done {
            return filled;
        }
    }
}

/// The least free space an [`Encoder::encode`] call gets from [`encode_into`].
const MIN_ROOM: usize = 4096;

/// Rows per chunk for `chunk_bytes` of output at `per_row` bytes a row (at least 16 rows).
fn rows_for(chunk_bytes: usize, per_row: u64) -> usize {
    (chunk_bytes as u64 / per_row.max(1)).max(16) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver::ArrayView;
    use quiver::json::to_vec;

    fn batch(start: i64, rows: i64) -> RecordBatch<'static> {
        let ints = ArrayView::from_values(start..start + rows).unwrap();
        let text = ArrayView::from_values(
            (start..start + rows).map(|i| (i % 3 != 0).then(|| format!("row \"{i}\""))),
        )
        .unwrap();
        RecordBatch::from_columns([("a", ints), ("b", text)]).unwrap()
    }

    #[test]
    fn output_is_the_same_for_any_threads_and_chunks() {
        let batches = [
            batch(0, 1000),
            batch(1000, 0),
            batch(1000, 1),
            batch(1001, 777),
        ];
        for format in [JsonFormat::LineDelimited, JsonFormat::JsonArray] {
            let mut expected = Vec::new();
            let mut document = JsonWriter::new(format, EncoderOptions::default());
            for b in &batches {
                document.batch(b).unwrap().append_to(&mut expected);
            }
            expected.extend_from_slice(document.finish());
            for threads in [1, 2, 3, 8] {
                for chunk_bytes in [1, 100, 4096, 1 << 20] {
                    let mut writer = ParallelWriter::new(Vec::new(), format, Default::default())
                        .with_threads(threads)
                        .with_chunk_bytes(chunk_bytes);
                    for b in &batches {
                        writer.write(b).unwrap();
                    }
                    assert_eq!(writer.rows(), 1778);
                    let written = writer.bytes_written();
                    writer.finish().unwrap();
                    let out = writer.into_inner();
                    let closing = u64::from(format == JsonFormat::JsonArray);
                    assert_eq!(written + closing, out.len() as u64);
                    assert!(
                        out == expected,
                        "{format:?}, {threads} threads, {chunk_bytes}"
                    );
                }
            }
        }
        let mut empty = ParallelWriter::new(Vec::new(), JsonFormat::JsonArray, Default::default());
        empty.finish().unwrap();
        assert_eq!(empty.into_inner(), b"[]");
        let one = to_vec(&batch(5, 1), JsonFormat::JsonArray, Default::default()).unwrap();
        let mut writer = ParallelWriter::new(Vec::new(), JsonFormat::JsonArray, Default::default());
        writer.write(&batch(5, 1)).unwrap();
        writer.finish().unwrap();
        assert_eq!(writer.into_inner(), one);
    }

    /// A writer that fails after `left` bytes.
    struct Failing {
        left: usize,
    }

    impl io::Write for Failing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.left);
            self.left -= n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failing_writer_stops_every_thread_with_its_error() {
        for threads in [1, 2, 4] {
            let out = Failing { left: 5000 };
            let mut writer =
                ParallelWriter::new(out, JsonFormat::LineDelimited, Default::default())
                    .with_threads(threads)
                    .with_chunk_bytes(1000);
            let err = writer.write(&batch(0, 10_000)).unwrap_err();
            let JsonWriteError::Io(e) = err else {
                panic!("{err}")
            };
            assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
        }
    }
}
