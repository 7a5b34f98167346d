//! The no-alloc path allocates nothing: with a counting global allocator armed, files and streams
//! (the uncompressed, little-endian golden files, and quiver-written ones with every type,
//! together and each alone, nested, dictionary and union columns) are opened, every batch read
//! and encoded to NDJSON through a 256-byte buffer into an `embedded_io::Write`; the bytes equal
//! the alloc build's, and those written through 7-byte buffers (by the general walk).
#![allow(unsafe_code)]

use quiver_tests::json::arrays;

use quiver::datatype::{DataType, TimeUnit};
use quiver::error::{Error, Feature, FormatErrorKind};
use quiver::ipc::{FileReader, ReaderOptions, StreamReader, WriterOptions};
use quiver::json::{EncoderOptions, JsonFormat, to_vec};
use quiver::no_alloc::{self, Batch, Encoder};
use quiver_tests::{arrow_testing_data, integration_files, ten_columns};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts allocations made by the current thread while it is armed.
struct Armed;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    if ARMED.with(Cell::get) {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counters are
// thread-local `Cell`s with const initializers, which never allocate.
unsafe impl GlobalAlloc for Armed {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Armed = Armed;

/// Runs `f` armed; returns its result and the allocations it made.
fn armed<T>(f: impl FnOnce() -> T) -> (T, usize) {
    ALLOCATIONS.with(|c| c.set(0));
    ARMED.with(|a| a.set(true));
    let out = f();
    ARMED.with(|a| a.set(false));
    (out, ALLOCATIONS.with(Cell::get))
}

thread_local! {
    /// The encoder options of both paths, per test.
    static OPTIONS: Cell<EncoderOptions> = Cell::new(EncoderOptions::default());
}

fn options() -> EncoderOptions {
    OPTIONS.with(Cell::get)
}

/// Arrays per batch and dictionaries the tests allow (the golden files have up to ~100
/// arrays).
const ARRAYS: usize = 256;
const DICTIONARIES: usize = 16;
const SCRATCH: usize = 4 << 20;
const OUT: usize = 16 << 20;

/// What the no-alloc path made of an input: batches and bytes of JSON, or the error.
type Outcome = Result<(usize, usize), Error<String>>;

/// NDJSON of every batch, the alloc way.
fn alloc_json_file(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut reader =
        FileReader::open(bytes, ReaderOptions::default()).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for i in 0..reader.num_batches() {
        let batch = reader.batch(i).map_err(|e| e.to_string())?;
        out.extend(
            to_vec(&batch, JsonFormat::LineDelimited, options()).map_err(|e| e.to_string())?,
        );
    }
    Ok(out)
}

fn alloc_json_stream(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let reader = StreamReader::new(bytes, ReaderOptions::default()).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| e.to_string())?;
        out.extend(
            to_vec(&batch, JsonFormat::LineDelimited, options()).map_err(|e| e.to_string())?,
        );
    }
    Ok(out)
}

/// Encodes `batch` as NDJSON into `out` through a 256-byte buffer, and checks the bytes against
/// those written through 7-byte buffers (where no row fits, and the general walk writes them).
fn encode(batch: &Batch<'_, ARRAYS>, out: &mut &mut [u8]) -> Result<(), Error<String>> {
    let json = |e| harness(format!("json: {e:?}"));
    let new = || -> Result<Encoder<'_, { quiver::json::DEFAULT_DEPTH }, ARRAYS>, _> {
        Encoder::new(batch, JsonFormat::LineDelimited, options()).map_err(json)
    };
    let mut encoder = new()?;
    let room = out.len();
    let mut rest = &mut **out;
    encoder
        .write_through(&mut rest, &mut [0u8; 256])
        .map_err(|_| harness("output full".into()))?;
    let written = room - rest.len();
    let (planned, rest) = core::mem::take(out).split_at_mut(written);
    *out = rest;
    let mut chunked = new()?;
    let (mut at, mut chunk) = (0, [0u8; 7]);
    loop {
        let progress = chunked.encode(&mut chunk);
        let end = at + progress.written;
        assert!(
            planned.get(at..end) == Some(&chunk[..progress.written]),
            "7-byte buffers give other bytes from byte {at}"
        );
        at = end;
        if progress.done {
            assert_eq!(at, written, "7-byte buffers give other bytes");
            return Ok(());
        }
    }
}

/// A failure of the test's own (not a reader's), carried as a source error.
fn harness(error: String) -> Error<String> {
    Error::Source {
        error,
        offset: 0,
        len: 0,
    }
}

fn no_alloc_file(bytes: &[u8], scratch: &mut [u8], out: &mut [u8]) -> Outcome {
    let total = out.len();
    let mut sink = out;
    let mut reader: no_alloc::FileReader<_, DICTIONARIES> =
        no_alloc::FileReader::open(bytes, scratch).map_err(source_dropped)?;
    let batches = reader.num_batches();
    for i in 0..batches {
        let batch: Batch<'_, ARRAYS> = reader.batch(i).map_err(source_dropped)?;
        encode(&batch, &mut sink)?;
    }
    Ok((batches, total - sink.len()))
}

fn no_alloc_stream(bytes: &[u8], scratch: &mut [u8], out: &mut [u8]) -> Outcome {
    let total = out.len();
    let mut sink = out;
    let mut reader: no_alloc::StreamReader<_, DICTIONARIES> =
        no_alloc::StreamReader::new(bytes, scratch).map_err(source_dropped)?;
    let mut batches = 0;
    while let Some(batch) = reader.next_batch::<ARRAYS>().map_err(source_dropped)? {
        encode(&batch, &mut sink)?;
        batches += 1;
    }
    Ok((batches, total - sink.len()))
}

/// A source error made printable (in-memory sources only fail on truncation).
fn source_dropped<E: core::fmt::Debug>(e: Error<E>) -> Error<String> {
    match e {
        Error::Format(f) => Error::Format(f),
        Error::Source { offset, len, .. } => Error::Source {
            error: String::new(),
            offset,
            len,
        },
        _ => Error::Source {
            error: String::new(),
            offset: 0,
            len: 0,
        },
    }
}

/// Whether the no-alloc path refused an input for needing the alloc feature.
fn needs_alloc(e: &Error<String>) -> bool {
    matches!(
        e.format().map(|f| &f.kind),
        Some(FormatErrorKind::Unsupported {
            what: Feature::CompressionWithoutAlloc
                | Feature::BigEndianWithoutAlloc
                | Feature::DeltaDictionaryWithoutAlloc
        })
    )
}

/// Runs one input both ways and compares; returns whether the no-alloc path wrote it.
fn check(
    name: &str,
    expected: Result<Vec<u8>, String>,
    run: impl FnOnce(&mut [u8], &mut [u8]) -> Outcome,
) -> bool {
    let mut scratch = vec![0u8; SCRATCH];
    let mut out = vec![0u8; OUT];
    let (outcome, allocations) = armed(|| run(&mut scratch, &mut out));
    assert_eq!(allocations, 0, "{name}: allocations while armed");
    match (outcome, expected) {
        (Ok((batches, written)), Ok(expected)) => {
            println!(
                "no_alloc: {name}: {batches} batches, {written} bytes of JSON, {allocations} allocations"
            );
            assert!(
                out[..written] == expected[..],
                "{name}: JSON differs from the alloc build's"
            );
            true
        }
        (Err(e), _) if needs_alloc(&e) => {
            println!("no_alloc: {name}: needs the alloc feature ({e})");
            false
        }
        (Err(e), Err(alloc)) => {
            println!("no_alloc: {name}: refused as by the alloc build ({e}; alloc: {alloc})");
            false
        }
        (outcome, expected) => panic!(
            "{name}: no-alloc {:?} but alloc {:?}",
            outcome.map(|o| o.0),
            expected.map(|e| e.len())
        ),
    }
}

#[test]
fn golden_files_and_streams_read_and_encode_without_allocating() {
    let Some(data) = arrow_testing_data() else {
        return;
    };
    let mut written = 0;
    let mut inputs = 0;
    for (extension, stream) in [("arrow_file", false), ("stream", true)] {
        for path in integration_files(&data, extension) {
            let bytes = std::fs::read(&path).unwrap();
            let name = path.strip_prefix(&data).unwrap().display().to_string();
            inputs += 1;
            written += usize::from(if stream {
                check(&name, alloc_json_stream(&bytes), |s, o| {
                    no_alloc_stream(&bytes, s, o)
                })
            } else {
                check(&name, alloc_json_file(&bytes), |s, o| {
                    no_alloc_file(&bytes, s, o)
                })
            });
        }
    }
    println!("no_alloc: {written} of {inputs} golden inputs written with 0 allocations");
    // The rest are big-endian or compressed (each printed above), which need `alloc`.
    assert!(inputs > 100 && written >= 60, "{written} of {inputs}");
}

/// A file and a stream of `batches` written by quiver, uncompressed.
fn written_by_quiver(batches: &[quiver::array::RecordBatch<'_>]) -> (Vec<u8>, Vec<u8>) {
    let schema = batches[0].schema().clone();
    let mut file =
        quiver::ipc::FileWriter::new(Vec::new(), schema.clone(), WriterOptions::default()).unwrap();
    let mut stream =
        quiver::ipc::StreamWriter::new(Vec::new(), schema, WriterOptions::default()).unwrap();
    for batch in batches {
        file.write(batch).unwrap();
        stream.write(batch).unwrap();
    }
    file.finish().unwrap();
    stream.finish().unwrap();
    (file.into_inner(), stream.into_inner())
}

#[test]
fn quiver_files_with_every_type_read_and_encode_without_allocating() {
    let every = arrays::batch(arrays::every_type());
    let ten = [ten_columns::batch(1000, 1), ten_columns::batch(500, 2)];
    // The batch of every type (65 arrays) is wider than a default encoder's plan (the test's
    // holds 256 arrays); each type alone is planned as well.
    let alone = arrays::every_type()
        .into_iter()
        .map(|column| (column.0, vec![arrays::batch(vec![column])]));
    for (name, batches) in [
        ("every type", vec![every.clone(), every]),
        ("ten columns", ten.to_vec()),
    ]
    .into_iter()
    .chain(alone)
    {
        let (file, stream) = written_by_quiver(&batches);
        assert!(check(
            &format!("{name} (file)"),
            alloc_json_file(&file),
            |s, o| no_alloc_file(&file, s, o)
        ));
        assert!(check(
            &format!("{name} (stream)"),
            alloc_json_stream(&stream),
            |s, o| no_alloc_stream(&stream, s, o)
        ));
    }
}

#[test]
fn options_and_named_zones_give_the_same_bytes_without_allocating() {
    let resolver = quiver_std::time_zones();
    // The resolver keeps each zone from its first look-up on; that one allocates.
    for zone in ["Europe/Paris", "America/New_York"] {
        assert!(resolver.resolve(zone).is_some());
    }
    let ny = DataType::Timestamp(TimeUnit::Second, Some("America/New_York".into()));
    let mut columns = arrays::every_type();
    columns.push((
        "ny",
        arrays::prim(ny, &[Some(1_710_054_000i64), None, Some(0)]),
    ));
    columns.push((
        "m",
        arrays::map(
            arrays::utf8(&[Some("a"), Some("b"), Some("c")]),
            arrays::int32(&[None, Some(2), None]),
            &[Some(2), None, Some(1)],
        ),
    ));
    let batch = arrays::batch(columns);
    let (file, stream) = written_by_quiver(&[batch]);
    for options in [
        EncoderOptions::default().with_time_zones(Some(resolver)),
        EncoderOptions::default()
            .with_time_zones(Some(resolver))
            .with_decimals_as_strings(true)
            .with_omit_nulls(true),
        EncoderOptions::default().with_timestamps_utc(true),
    ] {
        OPTIONS.with(|o| o.set(options));
        let expected = alloc_json_file(&file).unwrap();
        let text = String::from_utf8(expected.clone()).unwrap();
        // The values this test is about are there.
        assert!(text.contains("\"m\":{\"a\":null,\"b\":2}"), "{text}");
        if options.time_zones.is_some() {
            assert!(
                text.contains("\"ny\":\"2024-03-10T03:00:00-04:00\""),
                "{text}"
            );
        }
        if options.decimals_as_strings {
            assert!(text.contains("\"d32\":\"123.45\""), "{text}");
        }
        assert!(check("options (file)", Ok(expected), |s, o| {
            no_alloc_file(&file, s, o)
        }));
        assert!(check(
            "options (stream)",
            alloc_json_stream(&stream),
            |s, o| no_alloc_stream(&stream, s, o)
        ));
    }
}

#[test]
fn a_small_scratch_or_capacity_is_an_error_saying_what_is_needed() {
    let (file, stream) = written_by_quiver(&[ten_columns::batch(1000, 1)]);
    // Each error names what did not fit and the size that does: the footer, then the
    // dictionary, then the batch.
    let mut size = 512;
    let needed = loop {
        let mut scratch = vec![0u8; size];
        match no_alloc::FileReader::<_>::open(&file[..], &mut scratch) {
            Ok(reader) => break reader.scratch_needed(),
            Err(err) => {
                println!("no_alloc: scratch of {size} bytes: {err}");
                let Some(FormatErrorKind::BufferTooSmall { needed, .. }) =
                    err.format().map(|e| e.kind.clone())
                else {
                    panic!("{err}");
                };
                assert!(needed as usize > size);
                size = needed as usize;
            }
        }
    };
    let mut scratch = vec![0u8; size];
    let mut reader = no_alloc::FileReader::<_>::open(&file[..], &mut scratch).unwrap();
    let err = reader.batch::<64>(0).unwrap_err();
    println!("no_alloc: small scratch for a batch: {err}");
    assert!(
        matches!(err.format().map(|e| &e.kind), Some(FormatErrorKind::BufferTooSmall { needed: n, .. }) if *n == needed as u64)
    );
    let mut scratch = vec![0u8; needed];
    let mut reader = no_alloc::FileReader::<_>::open(&file[..], &mut scratch).unwrap();
    reader.batch::<64>(0).unwrap();
    let err = reader.batch::<4>(0).unwrap_err();
    println!("no_alloc: small capacity: {err}");
    assert!(matches!(
        err.format().map(|e| &e.kind),
        Some(FormatErrorKind::CapacityExceeded { capacity: 4, .. })
    ));

    let mut scratch = vec![0u8; 64];
    let err = no_alloc::StreamReader::<_>::new(&stream[..], &mut scratch).unwrap_err();
    println!("no_alloc: small stream scratch: {err}");
    assert!(matches!(
        err.format().map(|e| &e.kind),
        Some(FormatErrorKind::BufferTooSmall { .. })
    ));
}

#[test]
fn compressed_files_need_the_alloc_feature() {
    let options = WriterOptions::default()
        .with_compression(Some(quiver::datatype::CompressionCodec::Lz4Frame));
    let file = ten_columns::file(1, 100, options);
    let mut scratch = vec![0u8; SCRATCH];
    let mut reader = no_alloc::FileReader::<_, DICTIONARIES>::open(&file[..], &mut scratch);
    let err = match &mut reader {
        Err(e) => e.to_string(),
        Ok(reader) => reader.batch::<64>(0).unwrap_err().to_string(),
    };
    println!("no_alloc: compressed: {err}");
    assert!(err.contains("without the alloc feature"), "{err}");
}
