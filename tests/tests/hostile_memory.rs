//! Memory on hostile input: reading any bytes allocates at most the input's length times a
//! small constant, plus the configured limits. A counting global allocator measures, per thread,
//! the total bytes allocated and the peak of live bytes while one input is read, on hand-made
//! hostile cases, on every file of the fuzz corpus and on deterministic mutations of each. The
//! bound (64 bytes per input byte beyond the fixed allowance) holds for both numbers and for
//! every input, ZSTD bodies and delta dictionaries of every type included. One case is measured
//! apart: ZSTD blocks coded with the predefined tables, whose decoder allocates and frees about
//! 940 bytes per block: at most about 91 bytes per input byte in all, the peak unaffected.

#![allow(unsafe_code)] // the counting global allocator only

use quiver::array::RecordBatch;
use quiver::builder::{
    AppendValue, ArrayBuilder, DictionaryBuilder, ListBuilder, NullBuilder, PrimitiveBuilder,
    RunEndBuilder, StringBuilder, StructBuilder, UnionBuilder,
};
use quiver::compression::{CodecOptions, EncodedBuffer, compress_buffer};
use quiver::datatype::{CompressionCodec, UnionMode};
use quiver::format::{Message, MessageHeader};
use quiver::ipc::fuzzing::{decode_message, schemas};
use quiver::ipc::{
    FileReader, FileWriter, Projection, ScanOptions, StreamReader, StreamWriter, WriterOptions,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;

/// Counts the calling thread's allocations: total bytes asked for, live bytes, their peak.
struct Counter;

thread_local! {
    static TOTAL: Cell<usize> = const { Cell::new(0) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn allocated(size: usize) {
    let _ = TOTAL.try_with(|t| t.set(t.get().saturating_add(size)));
    let _ = LIVE.try_with(|live| {
        let now = live.get().saturating_add(size as isize);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn freed(size: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(size as isize)));
}

unsafe impl GlobalAlloc for Counter {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        allocated(layout.size());
        // SAFETY: forwarding the caller's layout to the system allocator unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        allocated(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        freed(layout.size());
        // SAFETY: `ptr` came from this allocator with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A reallocation counts as a new allocation of the new size (it may copy).
        freed(layout.size());
        allocated(new_size);
        // SAFETY: the caller upholds `realloc`'s contract; forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counter = Counter;

/// What reading one input cost.
#[derive(Debug, Clone, Copy, Default)]
struct Usage {
    total: usize,
    peak: usize,
}

/// Runs `f` and returns the bytes this thread allocated in it, in all and at most at once.
fn measure(f: impl FnOnce()) -> Usage {
    TOTAL.with(|t| t.set(0));
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    f();
    Usage {
        total: TOTAL.with(Cell::get),
        peak: PEAK.with(Cell::get).saturating_sub(base).max(0) as usize,
    }
}

/// The limits every read here is configured with.
const MAX_DECOMPRESSED: u64 = 1024;
const MAX_METADATA: u64 = 64 * 1024;
const READAHEAD: u64 = 4096;

fn options() -> quiver::ipc::ReaderOptions {
    quiver::ipc::ReaderOptions::default()
        .with_max_decompressed_buffer(MAX_DECOMPRESSED)
        .with_max_metadata_size(MAX_METADATA)
}

/// Bytes allowed for reading `len` input bytes: `PER_BYTE × len + FIXED + LIMITS`.
///
/// `FIXED` is what a read may cost whatever its input: one 64 KiB step of a stream message
/// that declares more bytes than arrive (buffers grow only as bytes arrive, a step at a time,
/// even up to the metadata limit), plus the schema and the dictionary map. `LIMITS` are the
/// configured limits one read may reach: the scan's readahead window and one decompressed
/// buffer. Each further compressed buffer costs at least a 16-byte `Buffer` entry in the
/// metadata (entries may share one frame) and at most the decompression limit: at a 1 KiB limit,
/// `PER_BYTE` covers that.
///
/// ZSTD is held to the same bound: its decoder's tables (about 20 KiB) are allocated once per
/// reader and reused for every buffer, and its window and block scratch are sized from what the
/// buffer declares and the bytes that are there, never from what a header asks for.
const PER_BYTE: usize = 64;
const FIXED: usize = 72 * 1024;
const LIMITS: usize = (READAHEAD + MAX_DECOMPRESSED) as usize;

/// The ZSTD frame magic number, as it appears in a compressed buffer.
const ZSTD_MAGIC: [u8; 4] = 0xFD2F_B528u32.to_le_bytes();

/// Whether `bytes` holds a ZSTD frame anywhere; the report counts such inputs apart.
fn has_zstd_frame(bytes: &[u8]) -> bool {
    bytes.windows(4).any(|w| w == ZSTD_MAGIC)
}

fn allowed(len: usize) -> usize {
    PER_BYTE * len + FIXED + LIMITS
}

/// Allocated bytes per input byte beyond `FIXED + LIMITS`.
fn per_byte(bytes: usize, len: usize) -> f64 {
    bytes.saturating_sub(FIXED + LIMITS) as f64 / len.max(1) as f64
}

/// Reads `bytes` every way the readers can: as a file (batch by batch, then a planned scan of
/// its first column) and as a stream. Errors are expected; panics fail the test.
fn read_all(bytes: &[u8]) {
    if let Ok(mut reader) = FileReader::open(bytes, options()) {
        for batch in reader.batches() {
            if batch.is_err() {
                break;
            }
        }
        let first = reader
            .schema()
            .fields()
            .first()
            .map(|f| f.name().to_owned());
        if let Some(Ok(projection)) = first.map(|n| Projection::from_paths(reader.schema(), &[n])) {
            reader.set_projection(projection);
        }
        let scan = ScanOptions::default().with_readahead(READAHEAD);
        for batch in reader.scan(0..usize::MAX, scan) {
            if batch.is_err() {
                break;
            }
        }
    }
    if let Ok(reader) = StreamReader::new(bytes, options()) {
        for batch in reader {
            if batch.is_err() {
                break;
            }
        }
    }
}

/// The largest multiples of the input length seen, for the report.
#[derive(Debug, Default)]
struct Worst {
    cases: usize,
    zstd_cases: usize,
    max_total: usize,
    max_peak: usize,
    total_per_byte: f64,
    total_case: String,
    peak_per_byte: f64,
    zstd_max_total: usize,
    zstd_max_peak: usize,
    zstd_total_per_byte: f64,
    zstd_total_case: String,
    zstd_peak_per_byte: f64,
}

impl Worst {
    /// Measures `read` on `bytes`, asserts the bound, and remembers the worst ratios.
    fn check(&mut self, case: &str, bytes: &[u8], read: impl FnOnce(&[u8])) -> Usage {
        let usage = measure(|| read(bytes));
        let limit = allowed(bytes.len());
        assert!(
            usage.peak <= limit && usage.total <= limit,
            "{case}: {} input bytes: allocated {} in all, {} at once (allowed {limit} each)",
            bytes.len(),
            usage.total,
            usage.peak
        );
        let total = per_byte(usage.total, bytes.len());
        let peak = per_byte(usage.peak, bytes.len());
        if has_zstd_frame(bytes) {
            self.zstd_cases += 1;
            if total >= self.zstd_total_per_byte {
                self.zstd_total_per_byte = total;
                self.zstd_total_case = case.to_owned();
            }
            self.zstd_peak_per_byte = self.zstd_peak_per_byte.max(peak);
            self.zstd_max_total = self.zstd_max_total.max(usage.total);
            self.zstd_max_peak = self.zstd_max_peak.max(usage.peak);
        } else {
            if total >= self.total_per_byte {
                self.total_per_byte = total;
                self.total_case = case.to_owned();
            }
            self.peak_per_byte = self.peak_per_byte.max(peak);
            self.max_total = self.max_total.max(usage.total);
            self.max_peak = self.max_peak.max(usage.peak);
        }
        self.cases += 1;
        usage
    }

    fn report(&self, what: &str) {
        println!(
            "hostile_memory: {what}: {} inputs, {} with ZSTD, all within {PER_BYTE} bytes per input byte beyond {} bytes, in all and at once",
            self.cases,
            self.zstd_cases,
            FIXED + LIMITS,
        );
        println!(
            "hostile_memory: {what}: without ZSTD: at most {} bytes allocated in all ({:.1} per input byte beyond, {}), {} at once ({:.1} beyond)",
            self.max_total, self.total_per_byte, self.total_case, self.max_peak, self.peak_per_byte
        );
        println!(
            "hostile_memory: {what}: with ZSTD: at most {} bytes allocated in all ({:.1} per input byte beyond, {}), {} at once ({:.1} beyond)",
            self.zstd_max_total,
            self.zstd_total_per_byte,
            self.zstd_total_case,
            self.zstd_max_peak,
            self.zstd_peak_per_byte
        );
    }
}

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = format!("{target}/{}", p.file_name().unwrap().to_string_lossy());
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// A small xorshift generator for the mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// `count` copies of `original`, each with one to four edits: a byte set to a telling value,
/// or a 4- or 8-byte word (a length, an offset, a count) set to a large or negative one.
fn mutations(original: &[u8], count: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed | 1);
    let words: [i64; 8] = [
        -1,
        i32::MAX as i64,
        1 << 20,
        1 << 31,
        1 << 40,
        i64::MAX,
        original.len() as i64 * 2,
        8,
    ];
    (0..count)
        .map(|_| {
            let mut bytes = original.to_vec();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bytes.len());
                match rng.below(3) {
                    0 => bytes[at] = [0x00, 0xFF, 0x7F, 0x80, rng.next() as u8][rng.below(5)],
                    1 => {
                        let word = words[rng.below(words.len())].to_le_bytes();
                        let end = (at + 8).min(bytes.len());
                        bytes[at..end].copy_from_slice(&word[..end - at]);
                    }
                    _ => {
                        let word = (words[rng.below(words.len())] as i32).to_le_bytes();
                        let end = (at + 4).min(bytes.len());
                        bytes[at..end].copy_from_slice(&word[..end - at]);
                    }
                }
            }
            bytes
        })
        .collect()
}

/// A `flatbuffer_message` seed decoded as the target decodes it.
fn decode_seed(data: &[u8]) {
    let [pick, a, b, rest @ ..] = data else {
        return;
    };
    let all = schemas();
    let schema = &all[usize::from(*pick) % all.len()];
    let split = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
    let (metadata, body) = rest.split_at(split);
    let _ = decode_message(schema, metadata, body);
}

/// A `json_chunks` seed: its stream, after the options byte and the buffer sizes.
fn json_chunks_stream(data: &[u8]) -> &[u8] {
    let n = data.get(1).map_or(0, |n| usize::from(*n));
    data.get(2 + n..).unwrap_or_default()
}

#[test]
fn the_fuzz_corpus_and_its_mutations_read_within_the_bound() {
    let mut seeds = Worst::default();
    let mut mutated = Worst::default();
    for target in ["ipc_file", "ipc_stream", "json_chunks"] {
        for (name, bytes) in corpus(target) {
            let bytes = if target == "json_chunks" {
                json_chunks_stream(&bytes).to_vec()
            } else {
                bytes
            };
            seeds.check(&name, &bytes, read_all);
            for (i, m) in mutations(&bytes, 1000, bytes.len() as u64)
                .iter()
                .enumerate()
            {
                mutated.check(&format!("{name} mutation {i}"), m, read_all);
            }
        }
    }
    for (name, bytes) in corpus("flatbuffer_message") {
        seeds.check(&name, &bytes, decode_seed);
        for (i, m) in mutations(&bytes, 1000, 7).iter().enumerate() {
            mutated.check(&format!("{name} mutation {i}"), m, decode_seed);
        }
    }
    seeds.report("fuzz corpus");
    mutated.report("mutated corpus");
}

/// A one-column i32 batch with no nulls, so the column's data is the body's first buffer.
fn ints(rows: i32) -> RecordBatch<'static> {
    let mut column = PrimitiveBuilder::<i32>::new();
    for i in 0..rows {
        column.append_value(i % 7);
    }
    let field = quiver::schema::Field::new("a", quiver::datatype::DataType::Int32, false);
    RecordBatch::from_fields(vec![(field, column.finish().unwrap())]).unwrap()
}

fn file(batches: &[RecordBatch<'_>], options: WriterOptions) -> Vec<u8> {
    let mut writer = FileWriter::new(Vec::new(), batches[0].schema().clone(), options).unwrap();
    for batch in batches {
        writer.write(batch).unwrap();
    }
    writer.finish().unwrap();
    writer.into_inner()
}

fn stream(batches: &[RecordBatch<'_>], options: WriterOptions) -> Vec<u8> {
    let mut writer = StreamWriter::new(Vec::new(), batches[0].schema().clone(), options).unwrap();
    for batch in batches {
        writer.write(batch).unwrap();
    }
    writer.finish().unwrap();
    writer.into_inner()
}

/// Sets the `N` bytes at `at` to `value`'s little-endian bytes.
fn patch<const N: usize>(bytes: &[u8], at: usize, value: [u8; N]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out[at..at + N].copy_from_slice(&value);
    out
}

/// The position of the last occurrence of `needle` in `bytes`.
fn rfind(bytes: &[u8], needle: &[u8]) -> usize {
    bytes
        .windows(needle.len())
        .rposition(|w| w == needle)
        .expect("pattern present")
}

fn is_err_file(bytes: &[u8]) -> bool {
    let Ok(mut reader) = FileReader::open(bytes, options()) else {
        return true;
    };
    reader.batches().any(|b| b.is_err())
}

fn is_err_stream(bytes: &[u8]) -> bool {
    match StreamReader::new(bytes, options()) {
        Ok(mut reader) => reader.any(|b| b.is_err()),
        Err(_) => true,
    }
}

#[test]
fn lying_lengths_cost_no_more_than_their_input() {
    let mut worst = Worst::default();
    let plain = file(&[ints(1000), ints(10)], WriterOptions::default());
    assert!(!is_err_file(&plain));
    let reader = FileReader::open(plain.as_slice(), options()).unwrap();
    let block = reader.record_batch_blocks()[0];
    let mut key = block.offset.to_le_bytes().to_vec();
    key.extend_from_slice(&block.meta_data_length.to_le_bytes());
    let at = rfind(&plain, &key);
    let n = plain.len();
    let mut cases = vec![
        (
            "bodyLength 2^40".to_owned(),
            patch(&plain, at + 16, (1i64 << 40).to_le_bytes()),
        ),
        (
            "bodyLength -1".to_owned(),
            patch(&plain, at + 16, (-1i64).to_le_bytes()),
        ),
        (
            "metaDataLength i32::MAX".to_owned(),
            patch(&plain, at + 8, i32::MAX.to_le_bytes()),
        ),
        (
            "footer length i32::MAX".to_owned(),
            patch(&plain, n - 10, i32::MAX.to_le_bytes()),
        ),
    ];

    // A stream whose first message declares a metadata length far past the limit, and one whose
    // batch declares a body of 2^40 bytes that never arrives.
    let plain_stream = stream(&[ints(1000)], WriterOptions::default());
    assert!(!is_err_stream(&plain_stream));
    cases.push((
        "stream metadata length i32::MAX".to_owned(),
        patch(&plain_stream, 4, i32::MAX.to_le_bytes()),
    ));
    let body_len = 4000i64; // 1000 i32 values, no validity buffer
    let at = rfind(&plain_stream, &body_len.to_le_bytes());
    cases.push((
        "stream bodyLength 2^40".to_owned(),
        patch(&plain_stream, at, (1i64 << 40).to_le_bytes()),
    ));

    // LZ4 and ZSTD bodies whose first buffer declares 2^40 uncompressed bytes, or one more
    // than the limit.
    for codec in [CompressionCodec::Lz4Frame, CompressionCodec::Zstd] {
        let compressed = file(
            &[ints(1000)],
            WriterOptions::default().with_compression(Some(codec)),
        );
        read_with_default_limits(&compressed);
        let reader = FileReader::open(compressed.as_slice(), options()).unwrap();
        let block = reader.record_batch_blocks()[0];
        let body = (block.offset + i64::from(block.meta_data_length)) as usize;
        assert_eq!(
            i64::from_le_bytes(compressed[body..body + 8].try_into().unwrap()),
            4000,
            "{codec:?}: the body starts with the data buffer's uncompressed length"
        );
        for (what, value) in [
            ("of 2^40 bytes", 1i64 << 40),
            ("one past the limit", MAX_DECOMPRESSED as i64 + 1),
        ] {
            cases.push((
                format!("{codec:?} buffer {what}"),
                patch(&compressed, body, value.to_le_bytes()),
            ));
        }
    }

    // ZSTD frames whose headers ask for far more memory than their bytes could fill, in place of
    // the first buffer's frame, which now declares 1000 bytes (within the limit).
    let compressed = file(
        &[ints(1000)],
        WriterOptions::default().with_compression(Some(CompressionCodec::Zstd)),
    );
    let reader = FileReader::open(compressed.as_slice(), options()).unwrap();
    let block = reader.record_batch_blocks()[0];
    let body = (block.offset + i64::from(block.meta_data_length)) as usize;
    let data: Vec<u8> = (0..1000i32).flat_map(|i| (i % 7).to_le_bytes()).collect();
    let Ok(EncodedBuffer::Compressed(stored)) =
        compress_buffer(CompressionCodec::Zstd, &data, &CodecOptions::default())
    else {
        panic!("the data buffer compresses");
    };
    assert_eq!(&compressed[body..body + stored.len()], stored.as_slice());
    for (case, frame) in greedy_zstd_frames() {
        cases.push((
            case.to_owned(),
            splice_frame(&compressed, body, stored.len(), 1000, &frame),
        ));
    }

    for (case, bytes) in &cases {
        assert!(
            is_err_file(bytes) && is_err_stream(bytes),
            "{case}: not an error"
        );
        let usage = worst.check(case, bytes, read_all);
        println!(
            "hostile_memory: {case}: {} input bytes, {} allocated in all, {} at once",
            bytes.len(),
            usage.total,
            usage.peak
        );
    }
}

/// Hand-made ZSTD frames whose headers ask the decoder for far more memory than their bytes
/// could fill. Each has a 128 MiB window (`Window_Descriptor` 0x88), no content size and no
/// checksum, and ends with its first block, short of any declared size.
fn greedy_zstd_frames() -> Vec<(&'static str, Vec<u8>)> {
    let frame = |block: &[u8]| [&ZSTD_MAGIC[..], &[0x00, 0x88], block].concat();
    vec![
        // An empty last raw block: the window alone.
        (
            "ZSTD frame with a 128 MiB window",
            frame(&[0x01, 0x00, 0x00]),
        ),
        // A last compressed block of 5 bytes: RLE literals, 20-bit size 0xFFFFF, byte 'a';
        // no sequences.
        (
            "ZSTD block of 1 MiB of RLE literals",
            frame(&[0x2D, 0x00, 0x00, 0xFD, 0xFF, 0xFF, b'a', 0x00]),
        ),
        // A last compressed block of 9 bytes: no literals; 98,047 sequences, every code an RLE
        // table of symbol 0 (no bits each), then the bit stream's end marker.
        (
            "ZSTD block of 98,047 sequences",
            frame(&[
                0x4D, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x54, 0x00, 0x00, 0x00, 0x01,
            ]),
        ),
        // A last compressed block declaring 131,071 bytes, 3 of them present.
        (
            "ZSTD block declaring 128 KiB",
            frame(&[0xFD, 0xFF, 0x0F, 0x00, 0x00, 0x00]),
        ),
    ]
}

/// `file` with the buffer at `at` (`len` bytes, prefix included) declaring `declared` bytes and
/// holding `frame`, then a skippable frame to fill the buffer's length.
fn splice_frame(file: &[u8], at: usize, len: usize, declared: i64, frame: &[u8]) -> Vec<u8> {
    let skippable = len - 8 - frame.len() - 8;
    let mut buffer = declared.to_le_bytes().to_vec();
    buffer.extend_from_slice(frame);
    buffer.extend_from_slice(&0x184D_2A50u32.to_le_bytes());
    buffer.extend_from_slice(&(skippable as u32).to_le_bytes());
    buffer.resize(len, 0);
    let mut out = file.to_vec();
    out[at..at + len].copy_from_slice(&buffer);
    out
}

/// The file as written, read with the default limits (the compressed buffers here are larger
/// than this test's 1 KiB limit, so a default read proves the file itself is good).
fn read_with_default_limits(bytes: &[u8]) {
    let mut reader = FileReader::open(bytes, quiver::ipc::ReaderOptions::default()).unwrap();
    for batch in reader.batches() {
        batch.unwrap();
    }
}

/// A stream of `batches` batches whose one dictionary grows by a 100-byte word each batch, so
/// the writer sends a delta dictionary batch before every record batch after the first.
fn growing_dictionary_stream(batches: usize) -> Vec<u8> {
    let all: Vec<RecordBatch<'static>> = (0..batches)
        .map(|b| {
            let mut dictionary = DictionaryBuilder::new(StringBuilder::new()).with_id(0);
            for i in 0..=b {
                dictionary.values().append_value(word(i));
            }
            dictionary.append_index(b);
            let field = dictionary.field("d");
            RecordBatch::from_fields(vec![(field, dictionary.finish().unwrap())]).unwrap()
        })
        .collect();
    stream(&all, WriterOptions::default())
}

/// Each delta appends to the dictionary in place once the batch before it is dropped, so the
/// bytes allocated per input byte stay flat as deltas pile up (copying the whole dictionary at
/// every delta made them grow with the number of deltas: 4.9, 26.3 and 97.8 per input byte).
#[test]
fn delta_dictionaries_keep_memory_proportional() {
    let mut first = None;
    for batches in [10, 100, 400] {
        let bytes = growing_dictionary_stream(batches);
        let mut rows = 0;
        let usage = measure(|| {
            for batch in StreamReader::new(bytes.as_slice(), options()).unwrap() {
                rows += batch.unwrap().num_rows();
            }
        });
        assert_eq!(rows, batches);
        println!(
            "hostile_memory: {batches} delta dictionary batches: {} input bytes, {} allocated in all ({:.1} per input byte), {} at once ({:.1} per input byte)",
            bytes.len(),
            usage.total,
            usage.total as f64 / bytes.len() as f64,
            usage.peak,
            usage.peak as f64 / bytes.len() as f64
        );
        let limit = allowed(bytes.len());
        assert!(usage.peak <= limit, "peak {}", usage.peak);
        assert!(usage.total <= limit, "total {}", usage.total);
        let ratio = usage.total as f64 / bytes.len() as f64;
        let first = *first.get_or_insert(ratio);
        assert!(
            ratio <= first + 1.0,
            "{batches} deltas: {ratio:.1} bytes allocated per input byte, {first:.1} for 10"
        );
    }
}

/// Whether each dictionary batch of `stream` (an IPC stream) is a delta, in order.
fn dictionary_batches(stream: &[u8]) -> Vec<bool> {
    let mut deltas = Vec::new();
    let mut at = 0;
    while at + 8 <= stream.len() {
        assert_eq!(stream[at..at + 4], quiver::format::CONTINUATION);
        let len = i32::from_le_bytes(stream[at + 4..at + 8].try_into().unwrap()) as usize;
        if len == 0 {
            break;
        }
        let message = Message::parse(&stream[at + 8..at + 8 + len]).unwrap();
        if let MessageHeader::DictionaryBatch(batch) = message.header().unwrap() {
            deltas.push(batch.is_delta());
        }
        at += 8 + len + message.body_length() as usize;
    }
    deltas
}

/// A stream of `batches` batches whose one dictionary, of `values()`'s type, grows by one value
/// (`push(values, i)` appends value `i`) each batch: the writer sends the dictionary whole
/// first, then a delta of one value before every later record batch.
fn nested_dictionary_stream<V: ArrayBuilder>(
    batches: usize,
    values: impl Fn() -> V,
    push: impl Fn(&mut V, usize),
) -> Vec<u8> {
    let all: Vec<RecordBatch<'static>> = (0..batches)
        .map(|b| {
            let mut dictionary = DictionaryBuilder::new(values()).with_id(0);
            for i in 0..=b {
                push(dictionary.values(), i);
            }
            dictionary.append_index(b);
            let field = dictionary.field("d");
            RecordBatch::from_fields(vec![(field, dictionary.finish().unwrap())]).unwrap()
        })
        .collect();
    let bytes = stream(&all, WriterOptions::default());
    let mut expected = vec![true; batches];
    expected[0] = false;
    assert_eq!(
        dictionary_batches(&bytes),
        expected,
        "one whole, then deltas"
    );
    bytes
}

/// A 100-byte word, different for each `i`.
fn word(i: usize) -> String {
    format!("{i:0100}")
}

/// Makes a stream of that many batches.
type MakeStream = fn(usize) -> Vec<u8>;

/// The nested dictionary value types the test below reads deltas of, each with what makes its
/// streams.
fn nested_dictionary_streams() -> Vec<(&'static str, MakeStream)> {
    vec![
        ("struct<i32, utf8>", |batches| {
            nested_dictionary_stream(
                batches,
                || {
                    StructBuilder::new()
                        .with_child("n", PrimitiveBuilder::<i32>::new())
                        .with_child("s", StringBuilder::new())
                },
                |values, i| {
                    if i % 5 == 4 {
                        values.append_null();
                        return;
                    }
                    let n = values.field_builder::<PrimitiveBuilder<i32>>(0).unwrap();
                    n.append_value(i as i32);
                    let s = values.field_builder::<StringBuilder>(1).unwrap();
                    s.append_value(word(i));
                    values.append();
                },
            )
        }),
        ("list<i32>", |batches| {
            nested_dictionary_stream(
                batches,
                || ListBuilder::new(PrimitiveBuilder::<i32>::new()),
                |values, i| {
                    if i % 7 == 6 {
                        values.append_null();
                    } else {
                        values.append_value((0..25).map(|k| (i * 25 + k) as i32));
                    }
                },
            )
        }),
        ("utf8 view", |batches| {
            // One data buffer per value, so each delta carries only its own value's bytes (with
            // one 32 KiB block for all, every delta would carry the whole block its views use).
            nested_dictionary_stream(
                batches,
                || StringBuilder::new_view().with_block_size(100),
                |values, i| values.append_value(word(i)),
            )
        }),
        ("dense union<i32, utf8>", |batches| {
            nested_dictionary_stream(
                batches,
                || {
                    UnionBuilder::new(UnionMode::Dense)
                        .with_child(0, "n", PrimitiveBuilder::<i32>::new())
                        .with_child(1, "s", StringBuilder::new())
                },
                |values, i| {
                    if i % 2 == 0 {
                        values
                            .append::<PrimitiveBuilder<i32>>(0)
                            .unwrap()
                            .append_value(i as i32);
                    } else {
                        values
                            .append::<StringBuilder>(1)
                            .unwrap()
                            .append_value(word(i));
                    }
                },
            )
        }),
        ("run-end encoded<utf8>", |batches| {
            // Runs of three equal values: most deltas start inside a run of the dictionary.
            nested_dictionary_stream(
                batches,
                || RunEndBuilder::new(StringBuilder::new()),
                |values, i| values.append_value(word(i / 3)),
            )
        }),
    ]
}

/// Deltas of nested dictionary value types (struct, list, view, union, run-end encoded) append
/// in place too: the bytes allocated per input byte stay flat as deltas pile up (copying the
/// whole dictionary at every delta made them grow with the number of deltas: at 10, 100 and 400
/// deltas, struct 5.7, 19.5, 64.8; list 5.6, 12.1, 33.1; view 3.3, 12.7, 43.3; dense union 5.1,
/// 13.9, 43.0; run-end encoded 6.1, 25.1, 88.5 per input byte). Every type is measured before
/// any failure is reported, so a failure shows all the numbers.
#[test]
fn nested_delta_dictionaries_keep_memory_proportional() {
    let mut failures = Vec::new();
    for (what, make) in nested_dictionary_streams() {
        let mut first = None;
        for batches in [10, 100, 400] {
            let bytes = make(batches);
            let mut rows = 0;
            let mut dictionary_len = 0;
            let usage = measure(|| {
                for batch in StreamReader::new(bytes.as_slice(), options()).unwrap() {
                    let batch = batch.unwrap();
                    rows += batch.num_rows();
                    let column = &batch.columns()[0];
                    dictionary_len = column.dictionary().unwrap().values.len();
                }
            });
            assert_eq!((rows, dictionary_len), (batches, batches), "{what}");
            let ratio = usage.total as f64 / bytes.len() as f64;
            println!(
                "hostile_memory: {what}: {batches} delta dictionary batches: {} input bytes, {} allocated in all ({ratio:.1} per input byte), {} at once ({:.1} per input byte)",
                bytes.len(),
                usage.total,
                usage.peak,
                usage.peak as f64 / bytes.len() as f64
            );
            let limit = allowed(bytes.len());
            let first = *first.get_or_insert(ratio);
            if usage.peak > limit || usage.total > limit {
                failures.push(format!(
                    "{what}, {batches} deltas: {} in all, {} at once, allowed {limit}",
                    usage.total, usage.peak
                ));
            }
            if ratio > first + 1.0 {
                failures.push(format!(
                    "{what}, {batches} deltas: {ratio:.1} bytes allocated per input byte, {first:.1} for 10"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A file of 200 one-buffer columns, each buffer compressed.
fn many_compressed_buffers(codec: CompressionCodec) -> Vec<u8> {
    let fields: Vec<_> = (0..200)
        .map(|c| {
            let mut column = PrimitiveBuilder::<i32>::new();
            for i in 0..200 {
                column.append_value(i % 3);
            }
            let field = quiver::schema::Field::new(
                format!("c{c}"),
                quiver::datatype::DataType::Int32,
                false,
            );
            (field, column.finish().unwrap())
        })
        .collect();
    let batch = RecordBatch::from_fields(fields).unwrap();
    file(
        &[batch],
        WriterOptions::default().with_compression(Some(codec)),
    )
}

/// Many small compressed buffers cost their bytes, whatever the codec: the ZSTD decoder is set up
/// once per reader, not once per buffer (a fresh decoder per buffer cost 50.2 bytes per input
/// byte here).
#[test]
fn many_compressed_buffers_keep_memory_proportional() {
    for codec in [CompressionCodec::Lz4Frame, CompressionCodec::Zstd] {
        let bytes = many_compressed_buffers(codec);
        let usage = measure(|| read_all(&bytes));
        println!(
            "hostile_memory: 200 {codec:?} buffers: {} input bytes, {} allocated in all ({:.1} per input byte), {} at once ({:.1} per input byte)",
            bytes.len(),
            usage.total,
            usage.total as f64 / bytes.len() as f64,
            usage.peak,
            usage.peak as f64 / bytes.len() as f64
        );
        assert!(usage.peak <= allowed(bytes.len()), "peak {}", usage.peak);
        assert!(usage.total <= allowed(bytes.len()), "total {}", usage.total);
    }
}

/// A stream whose dictionary of `struct<n: null>` values holds one null slot, then gets a delta
/// of `valid` valid slots. Such slots hold no bytes, so the delta costs the input a few hundred
/// bytes whatever `valid` is.
fn unbacked_struct_dictionary(valid: usize) -> Vec<u8> {
    let batch = |slots: usize| {
        let values = StructBuilder::new().with_child("n", NullBuilder::new());
        let mut dictionary = DictionaryBuilder::new(values).with_id(0);
        dictionary.values().append_null();
        for _ in 1..slots {
            let values = dictionary.values();
            values
                .field_builder::<NullBuilder>(0)
                .unwrap()
                .append_null();
            values.append();
        }
        dictionary.append_index(0);
        let field = dictionary.field("d");
        RecordBatch::from_fields(vec![(field, dictionary.finish().unwrap())]).unwrap()
    };
    let bytes = stream(&[batch(1), batch(1 + valid)], WriterOptions::default());
    assert_eq!(
        dictionary_batches(&bytes),
        [false, true],
        "one whole, then a delta"
    );
    bytes
}

/// A dictionary's validity bitmap may not outgrow the bytes its slots hold (plus 64 KiB): a
/// delta of 2^22 slots of a struct of nulls would need a 512 KiB bitmap from a stream of a few
/// hundred bytes, and is refused before it is allocated; 2^16 such slots (8 KiB) are read.
#[test]
fn dictionary_bitmaps_stay_within_the_bytes_their_slots_hold() {
    for (valid, refused) in [(1 << 16, false), (1 << 22, true)] {
        let bytes = unbacked_struct_dictionary(valid);
        let mut error = None;
        let usage = measure(|| {
            for batch in StreamReader::new(bytes.as_slice(), options()).unwrap() {
                if let Err(e) = batch {
                    error = Some(e.to_string());
                    break;
                }
            }
        });
        println!(
            "hostile_memory: struct<null> dictionary, delta of {valid} valid slots: {} input bytes, {} allocated in all, {} at once: {}",
            bytes.len(),
            usage.total,
            usage.peak,
            error.as_deref().unwrap_or("read")
        );
        assert_eq!(error.is_some(), refused, "{error:?}");
        if let Some(error) = error {
            assert!(error.contains("dictionary validity bitmap"), "{error}");
        }
        assert!(usage.total <= allowed(bytes.len()), "total {}", usage.total);
    }
}

/// A ZSTD frame of `blocks` compressed blocks of 7 bytes, each a literal and one sequence coded
/// with the predefined FSE tables (the block the reference encoder writes for 16 repeated bytes),
/// after a raw block of 16 bytes: `16 * (blocks + 1)` bytes of output.
fn predefined_table_blocks(blocks: usize) -> Vec<u8> {
    let block_header = |len: usize, kind: usize, last: bool| {
        let h = (len << 3) | (kind << 1) | usize::from(last);
        [h as u8, (h >> 8) as u8, (h >> 16) as u8]
    };
    let mut frame = [&ZSTD_MAGIC[..], &[0x00, 0x58]].concat();
    frame.extend(block_header(16, 0, false));
    frame.extend(b'A'..=b'P');
    let block = [0x08, 0x41, 0x01, 0x00, 0x1d, 0x10, 0x02];
    for i in 0..blocks {
        frame.extend(block_header(block.len(), 2, i + 1 == blocks));
        frame.extend(block);
    }
    frame
}

/// Each ZSTD block that uses the predefined FSE tables makes ruzstd build them anew (about 940
/// bytes allocated and freed at once), so a frame of such 10-byte blocks is the most a ZSTD byte
/// can cost in all: about 91 bytes allocated per input byte, output included, against 64 for
/// every other input here. The tables are freed block by block, so at once it costs only the
/// output. Since the decoder decodes each compressed byte of a batch at most once (buffers that
/// add up to more than the body are refused), the churn stays linear in the input.
#[test]
fn zstd_blocks_with_predefined_tables_cost_a_bounded_amount_per_byte() {
    let frame = predefined_table_blocks(63);
    let declared = 16 * 64;
    let buffer = [&(declared as i64).to_le_bytes()[..], &frame].concat();
    let mut decompressor = quiver::compression::Decompressor::new();
    let once = |d: &mut quiver::compression::Decompressor| {
        let out = d
            .decompress(CompressionCodec::Zstd, &buffer, declared)
            .unwrap();
        assert_eq!(out.as_slice().len(), declared as usize);
    };
    once(&mut decompressor);
    let runs = 20;
    let usage = measure(|| {
        for _ in 0..runs {
            once(&mut decompressor);
        }
    });
    let per_byte = usage.total as f64 / (runs * buffer.len()) as f64;
    println!(
        "hostile_memory: ZSTD frame of 63 blocks with predefined tables: {} input bytes, {} allocated per frame ({per_byte:.1} per input byte, the output included), {} at once",
        buffer.len(),
        usage.total / runs,
        usage.peak
    );
    assert!(
        per_byte <= ZSTD_WORST_PER_BYTE,
        "{per_byte:.1} per input byte"
    );
    assert!(
        usage.peak <= declared as usize + 1024,
        "peak {}",
        usage.peak
    );
}

/// Bytes allocated in all per input byte that the worst ZSTD frame may cost (see above).
const ZSTD_WORST_PER_BYTE: f64 = 96.0;
