//! [`ParallelWriter`]: one JSON document from many record batches, each batch's rows encoded on
//! several threads and written in order.
//!
//! It uses `json` and the crate root's worker pool.
//!
//! A batch's encoder, from one [`JsonWriter`], is cut into chunks of rows as they are claimed
//! ([`Encoder::split_rows`]: the batch is neither sliced nor planned again), as many rows as
//! fill about seven eighths of a chunk buffer at the bytes per row written so far (the document's
//! first 64 rows are written alone, on the caller's thread, for a first estimate); the chunks'
//! output in order is the batch's, framing (`[`, `,`, `]`) included. The chunks are claimed in
//! order by whichever thread is free, the caller's or one of `threads - 1` workers, and encoded
//! into buffers from a shared pool; the caller's thread writes them in order, and encodes a
//! chunk itself whenever the next one to write is not done yet. (Claimed, not dealt to fixed
//! threads: a thread the scheduler delays holds up only its own chunk, measured 2% faster than
//! dealing them in turn.) At most two chunks per thread past the last one written are claimed,
//! so memory stays at a few chunk buffers whatever the batch size: the JSON of a whole batch is
//! never held.
//!
//! The workers are a pool of threads the writer starts at its first parallel batch and keeps
//! until it is dropped, so no batch waits for a thread to start (0.2–0.7 ms a spawn on the
//! 2-core benchmark machine, longer than decoding the batch took).

use crate::json::{JsonWriteError, write_json_through};
use quiver::array::RecordBatch;
use quiver::json::{Encoder, EncoderOptions, JsonFormat, JsonWriter};
use rayon_core::ThreadPool;
use std::io;
use std::sync::{Condvar, Mutex, OnceLock};

/// Output bytes per chunk a [`ParallelWriter`] aims for by default.
pub const DEFAULT_CHUNK_BYTES: usize = 256 * 1024;

/// Rows written first, on the caller's thread, to estimate the bytes a row takes.
const PROBE_ROWS: usize = 64;

/// Chunks claimed per thread past the last one written: one being encoded, one waiting.
const IN_FLIGHT: usize = 2;

/// Writes a JSON document (NDJSON or one array) to `W`, encoding each batch's rows on up to
/// `threads` threads (the caller's and pooled workers) and writing them in order; see the module
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
    /// The `threads - 1` workers, started at the first batch of several chunks (`None` inside
    /// if they could not be: the caller's thread then encodes every chunk).
    workers: OnceLock<Option<ThreadPool>>,
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
            workers: OnceLock::new(),
            rows: 0,
            bytes_written: 0,
        }
    }

    /// Encodes on `threads` threads (1: on the caller's thread only; 0 counts as 1).
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self.workers = OnceLock::new();
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
        let mut rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let mut rest = self.document.batch(batch)?;
        if self.rows == 0 && self.threads > 1 && rows > PROBE_ROWS {
            // No bytes-per-row estimate before the first output: the first rows, written on
            // this thread, give one, so that chunks and their buffers are the size asked for
            // from the first batch on (a guess too small grew every buffer to twice that).
            if let Some(mut probe) = rest.split_rows(PROBE_ROWS) {
                let written = self.write_alone(&mut probe)?;
                self.count(PROBE_ROWS, written);
                rows -= PROBE_ROWS;
            }
        }
        let written = if self.threads <= 1 || rows <= self.chunk_rows {
            self.write_alone(&mut rest)?
        } else {
            self.write_chunks(rest, rows)?
        };
        self.count(rows, written);
        Ok(())
    }

    /// Writes all of `encoder`'s output on the caller's thread; returns the bytes written.
    fn write_alone(&mut self, encoder: &mut Encoder<'_>) -> io::Result<u64> {
        let mut buffer = self.buffers.pop().unwrap_or_default();
        if buffer.len() < self.chunk_bytes {
            buffer.resize(self.chunk_bytes, 0);
        }
        let written = write_json_through(encoder, &mut self.out, &mut buffer);
        self.buffers.push(buffer);
        written
    }

    /// Counts `rows` rows written in `bytes` bytes, and sizes the next chunks by the bytes per
    /// row so far.
    fn count(&mut self, rows: usize, bytes: u64) {
        self.rows += rows as u64;
        self.bytes_written += bytes;
        let per_row = (self.bytes_written / self.rows.max(1)).max(1);
        self.chunk_rows = rows_for(self.chunk_bytes, per_row);
    }

    /// Encodes the `rows` rows of `rest` in chunks of rows split off it, on the caller's thread
    /// and `threads - 1` workers, written in order; returns the bytes written.
    fn write_chunks(&mut self, rest: Encoder<'_>, rows: usize) -> io::Result<u64> {
        let chunk_rows = self.chunk_rows;
        let chunk_count = rows.div_ceil(chunk_rows);
        let threads = self.threads;
        let workers = self
            .workers
            .get_or_init(|| crate::start_workers(threads - 1, "quiver-json"))
            .as_ref();
        let lanes = workers.map_or(1, |_| threads.min(chunk_count));
        let board = Board {
            state: Mutex::new(State {
                next: 0,
                count: chunk_count,
                written: 0,
                ahead: lanes * IN_FLIGHT,
                stopped: false,
                rest: Some(rest),
                chunk_rows,
                done: (0..chunk_count).map(|_| None).collect(),
                buffers: std::mem::take(&mut self.buffers),
            }),
            changed: Condvar::new(),
        };
        let chunk_bytes = self.chunk_bytes;
        let out = &mut self.out;
        let mut write = || {
            // Done, failed or unwinding, the writer stops the workers as it leaves.
            let _stop = StopOnDrop(&board);
            write_in_order(&board, out, chunk_count, chunk_bytes)
        };
        let written = match workers {
            Some(workers) => workers.in_place_scope(|scope| {
                for _ in 1..lanes {
                    scope.spawn(|_| {
                        // A worker that unwinds stops the others and wakes the writer, so the
                        // scope can end and re-raise the panic.
                        let guard = StopOnDrop(&board);
                        while let Some((i, mut encoder, mut buffer)) = board.claim(true) {
                            let filled = encode_into(&mut encoder, &mut buffer, chunk_bytes);
                            board.finish(i, buffer, filled);
                        }
                        std::mem::forget(guard);
                    });
                }
                write()
            }),
            None => write(),
        };
        let state = board.state.into_inner().unwrap_or_else(|e| e.into_inner());
        self.buffers = state.buffers;
        written
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

/// Writes chunks `0..count` in order as they are done, the caller's thread encoding any chunk
/// it can claim while the next one to write is not done; returns the bytes written.
fn write_in_order<W: io::Write>(
    board: &Board<'_>,
    out: &mut W,
    count: usize,
    chunk_bytes: usize,
) -> io::Result<u64> {
    let mut written = 0u64;
    for i in 0..count {
        let (buffer, filled) = loop {
            if let Some(done) = board.take_done(i) {
                break done;
            }
            match board.claim(false) {
                Some((j, mut encoder, mut buffer)) => {
                    let filled = encode_into(&mut encoder, &mut buffer, chunk_bytes);
                    board.finish(j, buffer, filled);
                }
                None => match board.wait_done(i) {
                    Some(done) => break done,
                    // A worker stopped by panicking, which the scope re-raises.
                    None => return Ok(written),
                },
            }
        };
        let result = out.write_all(buffer.get(..filled).unwrap_or_default());
        board.written(i, buffer);
        result?;
        written += filled as u64;
    }
    Ok(written)
}

/// What the threads of one batch share: which chunk is next to claim, which is next to write,
/// the rows not claimed yet, finished buffers, and free buffers.
struct Board<'b> {
    state: Mutex<State<'b>>,
    /// Signalled when a chunk is done, one is written, or the work stops.
    changed: Condvar,
}

struct State<'b> {
    /// The next chunk to claim, of `count`.
    next: usize,
    count: usize,
    /// Chunks written so far: chunks `written + ahead` and later wait.
    written: usize,
    ahead: usize,
    stopped: bool,
    /// The rows not claimed yet. A chunk's encoder is split off it when the chunk is claimed,
    /// so that only the chunks in flight hold an encoder (each with its plan), whatever the
    /// batch's size.
    rest: Option<Encoder<'b>>,
    chunk_rows: usize,
    done: Vec<Option<(Vec<u8>, usize)>>,
    buffers: Vec<Vec<u8>>,
}

impl<'b> State<'b> {
    /// Chunk `i`'s encoder: its rows split off the rest, or the rest for the last chunk.
    fn split(&mut self, i: usize) -> Option<Encoder<'b>> {
        if i + 1 < self.count {
            if let Some(front) = self.rest.as_mut()?.split_rows(self.chunk_rows) {
                return Some(front);
            }
            // Cannot happen: the rest has written nothing. This chunk takes all its rows, and
            // the later ones are empty.
            debug_assert!(false, "an encoder that has written nothing splits");
            for later in self.done.iter_mut().skip(i + 1) {
                *later = Some((Vec::new(), 0));
            }
            self.next = self.count;
        }
        self.rest.take()
    }
}

impl<'b> Board<'b> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<'b>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next chunk to encode, its encoder and a buffer; `None` when there is none to claim
    /// now (`wait`: until there is, or every chunk is claimed or the work stopped).
    fn claim(&self, wait: bool) -> Option<(usize, Encoder<'b>, Vec<u8>)> {
        let mut state = self.lock();
        loop {
            if state.stopped || state.next >= state.count {
                return None;
            }
            if state.next < state.written + state.ahead {
                let i = state.next;
                state.next += 1;
                let encoder = state.split(i)?;
                let buffer = state.buffers.pop().unwrap_or_default();
                return Some((i, encoder, buffer));
            }
            if !wait {
                return None;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Hands in chunk `i`'s encoded `buffer` with `filled` bytes.
    fn finish(&self, i: usize, buffer: Vec<u8>, filled: usize) {
        if let Some(slot) = self.lock().done.get_mut(i) {
            *slot = Some((buffer, filled));
        }
        self.changed.notify_all();
    }

    /// Chunk `i`'s buffer and bytes, if it is done.
    fn take_done(&self, i: usize) -> Option<(Vec<u8>, usize)> {
        self.lock().done.get_mut(i).and_then(Option::take)
    }

    /// Waits for chunk `i` (claimed by a worker); `None` if the work stopped first.
    fn wait_done(&self, i: usize) -> Option<(Vec<u8>, usize)> {
        let mut state = self.lock();
        loop {
            if let Some(done) = state.done.get_mut(i).and_then(Option::take) {
                return Some(done);
            }
            if state.stopped {
                return None;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Records chunk `i` as written and its buffer as free.
    fn written(&self, i: usize, buffer: Vec<u8>) {
        let mut state = self.lock();
        state.written = i + 1;
        state.buffers.push(buffer);
        drop(state);
        self.changed.notify_all();
    }

    /// Stops the work: no more chunks are claimed.
    fn stop(&self) {
        self.lock().stopped = true;
        self.changed.notify_all();
    }
}

/// Stops a board's work when dropped (by the writer as it leaves, or a worker's unwinding).
struct StopOnDrop<'r, 'b>(&'r Board<'b>);

impl Drop for StopOnDrop<'_, '_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Encodes all of `encoder`'s output into `buffer`, straight into its initialised bytes (a
/// recycled buffer is not cleared or copied), growing it when full; returns the bytes filled.
fn encode_into(encoder: &mut Encoder<'_>, buffer: &mut Vec<u8>, chunk_bytes: usize) -> usize {
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

/// Rows per chunk for `chunk_bytes` of output at `per_row` bytes a row (at least 16 rows),
/// aiming at seven eighths of it so that a chunk of longer rows than the average still fits
/// its buffer rather than growing it.
fn rows_for(chunk_bytes: usize, per_row: u64) -> usize {
    (chunk_bytes as u64 / 8 * 7 / per_row.max(1)).max(16) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver::array::ArrayView;
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

    #[test]
    fn a_wide_batch_is_written_as_the_default_encoder_writes_it() {
        // Forty columns: past the default encoder's plan, within the parallel writer's.
        let columns: Vec<_> = (0..40)
            .map(|k: i64| {
                let values = (0..300).map(move |i| (i % 7 != k % 7).then_some(i * k));
                (format!("c{k}"), ArrayView::from_values(values).unwrap())
            })
            .collect();
        let batch = RecordBatch::from_columns(columns).unwrap();
        let expected = to_vec(&batch, JsonFormat::LineDelimited, Default::default()).unwrap();
        for (threads, chunk_bytes) in [(1, 1 << 20), (2, 1000), (3, 1)] {
            let mut writer =
                ParallelWriter::new(Vec::new(), JsonFormat::LineDelimited, Default::default())
                    .with_threads(threads)
                    .with_chunk_bytes(chunk_bytes);
            writer.write(&batch).unwrap();
            writer.finish().unwrap();
            assert!(
                writer.into_inner() == expected,
                "{threads} threads, {chunk_bytes}"
            );
        }
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
