//! The three drivers of the one stream decoder: the sync `StreamReader`, the
//! `AsyncStreamReader` (over a reader that hands out a few bytes at a time and is pending every
//! other read) and a `StreamDecoder` fed by hand in chunks of any size. For every golden stream
//! all three return the same batches, whole and projected, and a cut or lying stream the same
//! located error. Also: a chunk that holds a whole message is decoded without a copy, and the
//! async reader's futures are `Send` when the reader's are.

#![allow(clippy::single_range_in_vec_init)]

use proptest::prelude::*;
use quiver::array::RecordBatch;
use quiver::builder::{AppendValue, ArrayBuilder, PrimitiveBuilder};
use quiver::bytes::{Bytes, Owner};
use quiver::error::FormatErrorKind;
use quiver::ipc::{
    AsyncStreamReader, Projection, ReaderOptions, StreamDecodeResult, StreamDecoder, StreamReader,
    StreamWriter, WriterOptions,
};
use quiver_tests::{block_on, equal::assert_batches_equal};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The batches read before the end or the first error, and that error's text.
#[derive(Debug)]
struct Outcome {
    batches: Vec<RecordBatch<'static>>,
    error: Option<String>,
}

impl Outcome {
    fn assert_same(&self, other: &Outcome, what: &str) {
        assert_eq!(self.error, other.error, "{what}: errors differ");
        assert_batches_equal(&self.batches, &other.batches);
    }
}

fn golden_streams() -> Vec<PathBuf> {
    match quiver_tests::arrow_testing_data() {
        Some(data) => quiver_tests::integration_files(&data, "stream"),
        None => Vec::new(),
    }
}

/// The first field alone, or every field when the projection does not apply.
fn first_field(schema: &quiver::schema::Schema) -> Option<Projection> {
    let first = schema.fields().first()?.name().to_owned();
    Projection::from_paths(schema, &[first]).ok()
}

fn sync(stream: &[u8], project: bool) -> Outcome {
    let mut reader = match StreamReader::new(stream, ReaderOptions::default()) {
        Ok(reader) => reader,
        Err(e) => {
            return Outcome {
                batches: Vec::new(),
                error: Some(e.to_string()),
            };
        }
    };
    if project && let Some(p) = first_field(reader.schema()) {
        reader.set_projection(p);
    }
    let mut batches = Vec::new();
    for batch in reader {
        match batch {
            Ok(batch) => batches.push(batch),
            Err(e) => {
                return Outcome {
                    batches,
                    error: Some(e.to_string()),
                };
            }
        }
    }
    Outcome {
        batches,
        error: None,
    }
}

/// An async reader that gives at most `step` bytes per read and is pending before every
/// other read (it wakes itself, so `block_on` polls again).
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
    pending: bool,
}

impl embedded_io::ErrorType for Trickle<'_> {
    type Error = std::convert::Infallible;
}

/// Pending once, then ready.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl embedded_io_async::Read for Trickle<'_> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        self.pending = !self.pending;
        if self.pending {
            YieldOnce(false).await;
        }
        let n = buf.len().min(self.step).min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        buf[..n].copy_from_slice(head);
        self.data = rest;
        Ok(n)
    }
}

fn asynchronous(stream: &[u8], project: bool, step: usize) -> Outcome {
    block_on(async {
        let trickle = Trickle {
            data: stream,
            step,
            pending: false,
        };
        let mut reader = match AsyncStreamReader::new(trickle, ReaderOptions::default()).await {
            Ok(reader) => reader,
            Err(e) => {
                return Outcome {
                    batches: Vec::new(),
                    error: Some(e.to_string()),
                };
            }
        };
        if project && let Some(p) = first_field(reader.schema()) {
            reader.set_projection(p);
        }
        let mut batches = Vec::new();
        loop {
            match reader.next_batch().await {
                Ok(Some(batch)) => batches.push(batch),
                Ok(None) => break,
                Err(e) => {
                    return Outcome {
                        batches,
                        error: Some(e.to_string()),
                    };
                }
            }
        }
        Outcome {
            batches,
            error: None,
        }
    })
}

/// The async reader's batches through its `futures_core::Stream`.
fn async_stream(stream: &[u8]) -> Outcome {
    block_on(async {
        let trickle = Trickle {
            data: stream,
            step: 1000,
            pending: false,
        };
        let reader = match AsyncStreamReader::new(trickle, ReaderOptions::default()).await {
            Ok(reader) => reader,
            Err(e) => {
                return Outcome {
                    batches: Vec::new(),
                    error: Some(e.to_string()),
                };
            }
        };
        let mut stream = std::pin::pin!(reader.into_stream());
        let mut out = Outcome {
            batches: Vec::new(),
            error: None,
        };
        while let Some(item) =
            std::future::poll_fn(|cx| futures_core::Stream::poll_next(stream.as_mut(), cx)).await
        {
            match item {
                Ok(batch) => out.batches.push(batch),
                Err(e) => out.error = Some(e.to_string()),
            }
        }
        out
    })
}

/// The decoder fed by hand: `stream` pushed in chunks of the sizes `sizes` gives (windows of
/// one shared buffer), then the end.
fn hand_fed(stream: &[u8], project: bool, mut sizes: impl FnMut() -> usize) -> Outcome {
    let owner: Owner = Arc::new(stream.to_vec());
    let mut decoder = StreamDecoder::new(ReaderOptions::default());
    let mut at = 0;
    let mut batches = Vec::new();
    // Bytes fewer than the decoder asked for were pushed since the last call.
    let mut short = false;
    loop {
        let result = match decoder.try_decode() {
            Ok(result) => result,
            Err(e) => {
                // Errors stay: the next call says the same.
                assert_eq!(decoder.try_decode().unwrap_err(), e);
                return Outcome {
                    batches,
                    error: Some(
                        quiver::error::Error::<std::convert::Infallible>::from(e).to_string(),
                    ),
                };
            }
        };
        assert!(
            !short || matches!(result, StreamDecodeResult::NeedsData { .. }),
            "progress with fewer bytes than asked for"
        );
        short = false;
        match result {
            StreamDecodeResult::NeedsData { at_least } => {
                assert!(at_least > 0);
                if at == stream.len() {
                    decoder.finish();
                    continue;
                }
                let n = sizes().clamp(1, stream.len() - at);
                short = n < at_least;
                decoder.push(Bytes::from_owner(owner.clone(), at..at + n));
                at += n;
            }
            StreamDecodeResult::Schema => {
                assert!(decoder.schema().is_some());
                if project && let Some(p) = first_field(decoder.schema().unwrap()) {
                    decoder.set_projection(p);
                }
            }
            StreamDecodeResult::Data(batch) => batches.push(batch),
            StreamDecodeResult::Finished => {
                return Outcome {
                    batches,
                    error: None,
                };
            }
            _ => unreachable!("no other results"),
        }
    }
}

#[test]
fn every_golden_stream_reads_the_same_through_every_driver() {
    let streams = golden_streams();
    let mut read = 0;
    for path in &streams {
        let stream = std::fs::read(path).unwrap();
        let name = path.display();
        for project in [false, true] {
            let expected = sync(&stream, project);
            for step in [1, 7, 4096, usize::MAX] {
                expected.assert_same(
                    &asynchronous(&stream, project, step),
                    &format!("{name} async, {step}-byte reads, projected: {project}"),
                );
            }
            for chunk in [1, 5, 8, 1000, usize::MAX] {
                expected.assert_same(
                    &hand_fed(&stream, project, || chunk),
                    &format!("{name} hand-fed, {chunk}-byte chunks, projected: {project}"),
                );
            }
            if !project {
                expected.assert_same(&async_stream(&stream), &format!("{name} as a Stream"));
                assert_eq!(expected.error, None, "{name}");
            }
            read += expected.batches.len();
        }
    }
    println!(
        "stream drivers: {} golden streams, {read} batches, equal through every driver",
        streams.len()
    );
    assert!(streams.is_empty() || read > 0);
}

fn golden_bytes() -> Vec<Vec<u8>> {
    golden_streams()
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(quiver_tests::proptest_cases(64)))]

    /// Random chunk sizes, from 1 byte to more than a message.
    #[test]
    fn random_chunks_give_the_sync_readers_batches(
        which in any::<prop::sample::Index>(),
        sizes in prop::collection::vec(1usize..3000, 1..64),
        project in any::<bool>(),
    ) {
        let streams = golden_bytes();
        prop_assume!(!streams.is_empty());
        let stream = which.get(&streams);
        let mut next = sizes.iter().copied().cycle();
        let expected = sync(stream, project);
        expected.assert_same(&hand_fed(stream, project, || next.next().unwrap()), "random chunks");
    }

    /// A stream cut anywhere, fed in random chunks: the sync reader's batches and error.
    #[test]
    fn cut_streams_give_the_sync_readers_error(
        which in any::<prop::sample::Index>(),
        cut in any::<prop::sample::Index>(),
        sizes in prop::collection::vec(1usize..500, 1..16),
    ) {
        let streams = golden_bytes();
        prop_assume!(!streams.is_empty());
        let stream = which.get(&streams);
        let stream = &stream[..cut.index(stream.len() + 1)];
        let mut next = sizes.iter().copied().cycle();
        let expected = sync(stream, false);
        expected.assert_same(&hand_fed(stream, false, || next.next().unwrap()), "cut");
        expected.assert_same(&asynchronous(stream, false, 13), "cut, async");
    }
}

fn golden(name: &str) -> Option<Vec<u8>> {
    let data = quiver_tests::arrow_testing_data()?;
    Some(std::fs::read(data.join("arrow-ipc-stream/integration").join(name)).unwrap())
}

/// Whether every non-empty buffer of `array` (and its children) lies inside `within`.
fn borrows_from(array: &quiver::array::ArrayView<'_>, within: &std::ops::Range<usize>) -> bool {
    array
        .buffers()
        .iter()
        .filter(|b| !b.is_empty())
        .all(|b| within.contains(&(b.as_ptr() as usize)))
        && array.children().iter().all(|c| borrows_from(c, within))
}

#[test]
fn a_chunk_that_holds_a_whole_message_is_not_copied() {
    let Some(stream) = golden("1.0.0-littleendian/generated_primitive.stream") else {
        return;
    };
    let owner: Owner = Arc::new(stream.clone());
    let memory = {
        let bytes: &[u8] = (*owner).as_ref();
        bytes.as_ptr() as usize..bytes.as_ptr() as usize + bytes.len()
    };
    let read = |chunks: &[std::ops::Range<usize>]| {
        let mut decoder = StreamDecoder::new(ReaderOptions::default());
        for chunk in chunks {
            decoder.push(Bytes::from_owner(owner.clone(), chunk.clone()));
        }
        decoder.finish();
        let mut batches = Vec::new();
        loop {
            match decoder.try_decode().unwrap() {
                StreamDecodeResult::Data(batch) => batches.push(batch),
                StreamDecodeResult::Finished => return batches,
                _ => {}
            }
        }
    };
    let whole = read(&[0..stream.len()]);
    assert!(!whole.is_empty());
    for batch in &whole {
        assert!(batch.columns().iter().all(|c| borrows_from(c, &memory)));
    }
    // Chunks cut in the middle of every message: the messages are joined into new memory.
    let halves: Vec<_> = (0..stream.len())
        .step_by(7)
        .map(|s| s..(s + 7).min(stream.len()))
        .collect();
    let cut = read(&halves);
    assert_batches_equal(&whole, &cut);
    let copied = cut
        .iter()
        .flat_map(|b| b.columns())
        .filter(|c| !borrows_from(c, &memory))
        .count();
    assert!(copied > 0);
}

/// A stream of one schema and one batch of `n` i32 values, with its record batch message's
/// offset and the offset of that message's body.
fn ints_stream(n: i32) -> (Vec<u8>, usize, usize) {
    let mut column = PrimitiveBuilder::<i32>::new();
    for i in 0..n {
        column.append_value(i);
    }
    let field = quiver::schema::Field::new("x", quiver::datatype::DataType::Int32, false);
    let batch = RecordBatch::from_fields(vec![(field, column.finish().unwrap())]).unwrap();
    let mut writer =
        StreamWriter::new(Vec::new(), batch.schema().clone(), WriterOptions::default()).unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
    let bytes = writer.into_inner();
    let len = |at: usize| i32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
    let message = 8 + len(0); // the schema message has no body
    let body = message + 8 + len(message);
    (bytes, message, body)
}

fn decode_all(decoder: &mut StreamDecoder) -> Result<usize, quiver::error::FormatError> {
    let mut batches = 0;
    loop {
        match decoder.try_decode()? {
            StreamDecodeResult::Data(_) => batches += 1,
            StreamDecodeResult::Finished => return Ok(batches),
            StreamDecodeResult::NeedsData { .. } => decoder.finish(),
            _ => {}
        }
    }
}

#[test]
fn lying_and_cut_streams_are_located_errors() {
    let (plain, message, body) = ints_stream(1000);
    let mut decoder = StreamDecoder::new(ReaderOptions::default());
    decoder.push(Bytes::from_vec(plain.clone()));
    assert_eq!(decode_all(&mut decoder), Ok(1));

    // A body of 2^40 bytes that never arrives: an error at the body once the input ends.
    let metadata = &plain[message + 8..body];
    let body_len = quiver::format::Message::parse(metadata)
        .unwrap()
        .body_length();
    let needle = body_len.to_le_bytes();
    let field = message
        + 8
        + metadata
            .windows(8)
            .position(|w| w == needle)
            .expect("bodyLength present");
    let mut lying = plain.clone();
    lying[field..field + 8].copy_from_slice(&(1i64 << 40).to_le_bytes());
    let mut decoder = StreamDecoder::new(ReaderOptions::default());
    for chunk in lying.chunks(100) {
        decoder.push(Bytes::from_vec(chunk.to_vec()));
    }
    let e = decode_all(&mut decoder).unwrap_err();
    assert!(
        matches!(e.kind, FormatErrorKind::Truncated { what: "message body", needed, .. } if needed == 1 << 40),
        "{e}"
    );
    assert_eq!(e.offset(), Some(body as u64));
    let sync = StreamReader::new(lying.as_slice(), ReaderOptions::default())
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(sync.format(), Some(&e));

    // A metadata length past the limit is refused from its 8 bytes alone, before the input
    // ends and before anything waits for it.
    let mut lying = plain.clone();
    lying[message + 4..message + 8].copy_from_slice(&i32::MAX.to_le_bytes());
    let mut decoder = StreamDecoder::new(ReaderOptions::default().with_max_metadata_size(1 << 16));
    decoder.push(Bytes::from_vec(lying[..message + 8].to_vec()));
    assert!(matches!(
        decoder.try_decode(),
        Ok(StreamDecodeResult::Schema)
    ));
    let e = decoder.try_decode().unwrap_err();
    assert!(
        matches!(
            e.kind,
            FormatErrorKind::LimitExceeded {
                what: quiver::error::Limit::MessageMetadata,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.offset(), Some(message as u64));

    // A negative metadata length.
    let mut negative = plain.clone();
    negative[message + 4..message + 8].copy_from_slice(&(-5i32).to_le_bytes());
    let mut decoder = StreamDecoder::new(ReaderOptions::default());
    decoder.push(Bytes::from_vec(negative));
    let e = decode_all(&mut decoder).unwrap_err();
    assert!(
        matches!(e.kind, FormatErrorKind::InvalidValue { value: -5, .. }),
        "{e}"
    );
    assert_eq!(e.offset(), Some(message as u64));

    // Cut inside the batch's metadata, and inside its body.
    for (cut, what, at) in [
        (message + 20, "message metadata", message + 8),
        (body + 10, "message body", body),
        (message + 6, "message length prefix", message),
    ] {
        let mut decoder = StreamDecoder::new(ReaderOptions::default());
        decoder.push(Bytes::from_vec(plain[..cut].to_vec()));
        let e = decode_all(&mut decoder).unwrap_err();
        assert!(
            matches!(e.kind, FormatErrorKind::Truncated { what: w, .. } if w == what),
            "{e}"
        );
        assert_eq!(e.offset(), Some(at as u64), "{e}");
    }

    // A record batch before the schema.
    let mut decoder = StreamDecoder::new(ReaderOptions::default());
    decoder.push(Bytes::from_vec(plain[message..].to_vec()));
    let e = decode_all(&mut decoder).unwrap_err();
    assert!(
        matches!(e.kind, FormatErrorKind::UnexpectedMessage { .. }),
        "{e}"
    );
    assert_eq!(e.offset(), Some(0));

    // Nothing, and only an end-of-stream marker.
    let mut decoder = StreamDecoder::new(ReaderOptions::default());
    decoder.finish();
    assert!(matches!(
        decode_all(&mut decoder).unwrap_err().kind,
        FormatErrorKind::EmptyInput
    ));
    let mut decoder = StreamDecoder::new(ReaderOptions::default());
    decoder.push(Bytes::borrowed(&[0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]));
    assert!(matches!(
        decode_all(&mut decoder).unwrap_err().kind,
        FormatErrorKind::Truncated {
            what: "stream (no schema message)",
            ..
        }
    ));
}

#[test]
fn the_no_alloc_reader_frames_messages_as_the_decoder_does() {
    // Both read every prefix, end marker and length through one framer: a stream cut anywhere
    // in the batch's message is the same located error from both.
    let (plain, message, body) = ints_stream(1000);
    for cut in [message + 2, message + 6, message + 20, body + 10] {
        let mut decoder = StreamDecoder::new(ReaderOptions::default());
        decoder.push(Bytes::from_vec(plain[..cut].to_vec()));
        let expected = decode_all(&mut decoder).unwrap_err();
        let mut scratch = vec![0u8; plain.len()];
        let mut reader =
            quiver::no_alloc::StreamReader::<_, 4>::new(&plain[..cut], &mut scratch).unwrap();
        let e = reader.next_batch::<4>().map(|_| ()).unwrap_err();
        assert_eq!(e.format(), Some(&expected), "cut at {cut}");
    }
    // The end-of-stream marker, and a clean end between messages, end both.
    for end in [plain.len(), plain.len() - 8] {
        let mut scratch = vec![0u8; plain.len()];
        let mut reader =
            quiver::no_alloc::StreamReader::<_, 4>::new(&plain[..end], &mut scratch).unwrap();
        assert!(reader.next_batch::<4>().unwrap().is_some());
        assert!(reader.next_batch::<4>().unwrap().is_none(), "{end}");
    }
}

#[test]
fn the_legacy_format_reads_like_the_current_one() {
    // The same stream with every continuation marker dropped (Arrow before 0.15).
    let (plain, ..) = ints_stream(100);
    let mut legacy = Vec::new();
    let mut at = 0;
    while at + 8 <= plain.len() {
        let len = i32::from_le_bytes(plain[at + 4..at + 8].try_into().unwrap()) as usize;
        let message = quiver::format::Message::parse(&plain[at + 8..at + 8 + len]);
        let body = message.map_or(0, |m| m.body_length() as usize);
        legacy.extend_from_slice(&plain[at + 4..at + 8 + len + body]);
        at += 8 + len + body;
    }
    let expected = sync(&plain, false);
    assert_eq!(expected.batches.len(), 1);
    expected.assert_same(&sync(&legacy, false), "legacy, sync");
    expected.assert_same(&hand_fed(&legacy, false, || 3), "legacy, hand-fed");
}

fn assert_send<T: Send>(_: &T) {}

#[test]
fn async_futures_are_send_when_the_readers_are() {
    let (plain, ..) = ints_stream(10);
    let open = AsyncStreamReader::new(plain.as_slice(), ReaderOptions::default());
    assert_send(&open);
    let mut reader = block_on(open).unwrap();
    {
        let next = reader.next_batch();
        assert_send(&next);
        assert_eq!(block_on(next).unwrap().unwrap().num_rows(), 10);
    }
    let stream = reader.into_stream();
    assert_send(&stream);

    // Nothing requires `Send`: a reader behind an `Rc` reads on one thread.
    struct Shared(std::rc::Rc<std::cell::RefCell<&'static [u8]>>);
    impl embedded_io::ErrorType for Shared {
        type Error = std::convert::Infallible;
    }
    impl embedded_io_async::Read for Shared {
        async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
            let mut data = self.0.borrow_mut();
            let n = buf.len().min(data.len());
            buf[..n].copy_from_slice(&data[..n]);
            *data = &data[n..];
            Ok(n)
        }
    }
    let leaked: &'static [u8] = Box::leak(plain.clone().into_boxed_slice());
    let shared = Shared(std::rc::Rc::new(std::cell::RefCell::new(leaked)));
    let rows = block_on(async {
        let mut reader = AsyncStreamReader::new(shared, ReaderOptions::default())
            .await
            .unwrap();
        reader.next_batch().await.unwrap().unwrap().num_rows()
    });
    assert_eq!(rows, 10);
}
