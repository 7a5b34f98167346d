//! Hostile input: every case gives an `Err` naming what is wrong, never a panic, and the
//! allocations stay proportional to the input (checked with a counting allocator).

#![allow(unsafe_code)] // the counting global allocator only

use quiver::array::{ArrayParts, ArrayView, Dictionary};
use quiver::bytes::Bytes;
use quiver::datatype::{DataType, IntType};
use quiver::error::FormatErrorKind;
use quiver::ipc::{FileReader, ReaderOptions, StreamReader};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts the largest single allocation, to show no length from a file sizes one unchecked.
struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarding the caller's layout to the system allocator unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: as for `alloc`/`dealloc`; the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Largest = Largest;

/// Reads a file completely; returns the first error's text (naming fields from the schema).
fn read_file(bytes: &[u8]) -> Result<usize, String> {
    let mut reader =
        FileReader::open(bytes, ReaderOptions::default()).map_err(|e| e.to_string())?;
    let schema = Arc::clone(reader.schema());
    let mut rows = 0;
    for batch in reader.batches() {
        rows += batch
            .map_err(|e| e.display_with(&schema).to_string())?
            .num_rows();
    }
    Ok(rows)
}

/// Reads a stream completely; returns the first error's text.
fn read_stream(bytes: &[u8]) -> Result<usize, String> {
    let reader = StreamReader::new(bytes, ReaderOptions::default()).map_err(|e| e.to_string())?;
    let mut rows = 0;
    for batch in reader {
        rows += batch.map_err(|e| e.to_string())?.num_rows();
    }
    Ok(rows)
}

fn golden(name: &str) -> Option<Vec<u8>> {
    let data = quiver_tests::arrow_testing_data()?;
    Some(std::fs::read(data.join("arrow-ipc-stream/integration").join(name)).unwrap())
}

/// Asserts an error and that no single allocation exceeded `limit` bytes.
fn assert_bounded_err(result: Result<usize, String>, limit: usize, case: &str) -> String {
    let largest = LARGEST.swap(0, Ordering::Relaxed);
    assert!(
        largest <= limit,
        "{case}: allocated {largest} bytes at once (limit {limit})"
    );
    let err = result.expect_err(case);
    println!("hostile: {case}: {err}");
    err
}

#[test]
fn every_truncation_of_real_files_is_an_error_or_a_prefix_stream() {
    for name in [
        "1.0.0-littleendian/generated_nested.arrow_file",
        "2.0.0-compression/generated_lz4.arrow_file",
        "1.0.0-bigendian/generated_dictionary.arrow_file",
    ] {
        let Some(file) = golden(name) else { return };
        for len in 0..file.len() {
            assert!(read_file(&file[..len]).is_err(), "{name} cut at {len}");
        }
        println!("hostile: {name}: all {} truncations rejected", file.len());
    }
    for name in [
        "1.0.0-littleendian/generated_nested.stream",
        "2.0.0-compression/generated_zstd.stream",
    ] {
        let Some(stream) = golden(name) else { return };
        // A stream cut between messages is a shorter valid stream; anywhere else it is an error.
        let (mut ok, mut err) = (0, 0);
        for len in 0..stream.len() {
            match read_stream(&stream[..len]) {
                Ok(_) => ok += 1,
                Err(_) => err += 1,
            }
        }
        println!("hostile: {name}: {err} truncations rejected, {ok} ended between messages");
    }
}

/// Offset of the `Block` with these values inside the footer bytes.
fn find_block(file: &[u8], block: &quiver::format::Block) -> usize {
    let mut pattern = Vec::new();
    pattern.extend_from_slice(&block.offset.to_le_bytes());
    pattern.extend_from_slice(&block.meta_data_length.to_le_bytes());
    file.windows(12)
        .rposition(|w| w == pattern)
        .expect("block bytes in footer")
}

#[test]
fn lying_lengths_are_errors_before_any_allocation() {
    let Some(file) = golden("1.0.0-littleendian/generated_primitive.arrow_file") else {
        return;
    };
    let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    let block = reader.record_batch_blocks()[0];
    let at = find_block(&file, &block);
    let limit = file.len() * 4 + (1 << 20);

    // bodyLength = 2^40 in a file of a few KB.
    let mut huge = file.clone();
    huge[at + 16..at + 24].copy_from_slice(&(1i64 << 40).to_le_bytes());
    LARGEST.store(0, Ordering::Relaxed);
    let err = assert_bounded_err(read_file(&huge), limit, "bodyLength = 2^40");
    assert!(err.contains("block"), "{err}");

    // Negative lengths.
    let mut negative = file.clone();
    negative[at + 16..at + 24].copy_from_slice(&(-1i64).to_le_bytes());
    assert_bounded_err(read_file(&negative), limit, "bodyLength = -1");
    let mut negative = file.clone();
    negative[at + 8..at + 12].copy_from_slice(&(-8i32).to_le_bytes());
    assert_bounded_err(read_file(&negative), limit, "metaDataLength = -8");

    // Footer length pointing before the file's start.
    let mut footer = file.clone();
    let n = footer.len();
    footer[n - 10..n - 6].copy_from_slice(&(i32::MAX).to_le_bytes());
    assert_bounded_err(
        read_file(&footer),
        limit,
        "footer length past the file start",
    );
    footer[n - 10..n - 6].copy_from_slice(&(-5i32).to_le_bytes());
    assert_bounded_err(read_file(&footer), limit, "negative footer length");

    // Bad magic.
    let mut magic = file.clone();
    magic[n - 1] = b'2';
    assert_bounded_err(read_file(&magic), limit, "trailing magic");
}

#[test]
fn buffer_offsets_past_the_body_are_errors() {
    let Some(file) = golden("1.0.0-littleendian/generated_primitive.arrow_file") else {
        return;
    };
    let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    let block = reader.record_batch_blocks()[0];
    // The metadata's Buffer structs are (offset, length) pairs of i64; move the last non-empty
    // buffer's offset far past the body.
    let meta =
        &file[block.offset as usize..(block.offset + block.meta_data_length as i64) as usize];
    let body = block.body_length;
    let mut patched = file.clone();
    let mut hit = false;
    for at in (0..meta.len() - 16).step_by(8).rev() {
        let offset = i64::from_le_bytes(meta[at..at + 8].try_into().unwrap());
        let length = i64::from_le_bytes(meta[at + 8..at + 16].try_into().unwrap());
        if length > 0 && offset >= 0 && offset + length == body {
            let abs = block.offset as usize + at;
            patched[abs..abs + 8].copy_from_slice(&(body * 4).to_le_bytes());
            hit = true;
            break;
        }
    }
    assert!(hit, "found the last buffer");
    let err = assert_bounded_err(
        read_file(&patched),
        file.len() * 4 + (1 << 20),
        "buffer past body",
    );
    assert!(err.contains("outside"), "{err}");
}

/// Compressed buffers may not add up to more bytes than the body: buffer entries pointing at
/// the same compressed bytes would have them decoded again and again (work and short-lived
/// allocations growing with the number of entries times the body).
#[test]
fn compressed_buffers_that_overlap_are_errors() {
    let values: Vec<Option<i32>> = (0..2_000)
        .map(|i| (i % 3 != 0).then_some(i * 7919))
        .collect();
    let batch = quiver::array::RecordBatch::from_columns([(
        "a",
        ArrayView::from_values(values.iter().copied()).unwrap(),
    )])
    .unwrap();
    let options = quiver::ipc::WriterOptions::default()
        .with_compression(Some(quiver::datatype::CompressionCodec::Lz4Frame));
    let mut writer =
        quiver::ipc::FileWriter::new(Vec::new(), batch.schema().clone(), options).unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
    let file = writer.into_inner();
    assert_eq!(read_file(&file), Ok(2_000));
    let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    let block = reader.record_batch_blocks()[0];
    // The Buffer structs are (offset, length) pairs of i64: the validity bitmap's, then the
    // values'. Point the bitmap's entry at the values' bytes.
    let start = block.offset as usize;
    let meta = &file[start..start + block.meta_data_length as usize];
    let pair = |at: usize| {
        let read = |at: usize| i64::from_le_bytes(meta[at..at + 8].try_into().unwrap());
        (read(at), read(at + 8))
    };
    let at = (0..meta.len() - 32)
        .step_by(8)
        .find(|&at| {
            let ((v_offset, v_len), (offset, len)) = (pair(at), pair(at + 16));
            v_offset == 0
                && v_len > 0
                && offset >= v_len
                && len > v_len
                && (block.body_length - 64..=block.body_length).contains(&(offset + len))
        })
        .expect("the two buffer entries");
    let mut patched = file.clone();
    patched[start + at..start + at + 16].copy_from_slice(&meta[at + 16..at + 32]);
    let err = assert_bounded_err(
        read_file(&patched),
        file.len() * 4 + (1 << 20),
        "overlapping compressed buffers",
    );
    assert!(err.contains("compressed buffers overlap"), "{err}");
}

fn utf8(offsets: &[i32], data: &[u8]) -> Result<ArrayView<'static>, quiver::error::FormatError> {
    let offsets: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    ArrayView::try_new(ArrayParts {
        data_type: Some(DataType::Utf8),
        len: offsets.len() / 4 - 1,
        buffers: vec![Bytes::from_vec(offsets), Bytes::from_vec(data.to_vec())],
        ..ArrayParts::default()
    })
}

fn kind_what(e: &quiver::error::FormatError) -> &'static str {
    match e.kind {
        FormatErrorKind::InvalidArray { what, .. } => what,
        _ => panic!("unexpected {e}"),
    }
}

#[test]
fn array_rules_are_enforced() {
    assert!(utf8(&[0, 2, 4], b"abcd").is_ok());
    let e = utf8(&[0, 3, 2], b"abcd").unwrap_err();
    assert_eq!(kind_what(&e), "offsets decrease");
    let e = utf8(&[0, 2, 9], b"abcd").unwrap_err();
    assert_eq!(kind_what(&e), "offset past the end of the values");
    let e = utf8(&[-1, 2], b"abcd").unwrap_err();
    assert_eq!(kind_what(&e), "negative offset");
    let e = utf8(&[0, 1, 3], b"a\xc3(").unwrap_err();
    assert_eq!(e.kind, FormatErrorKind::InvalidUtf8 { index: 1, byte: 0 });
    let e = utf8(&[0, 1, 2], "é".as_bytes()).unwrap_err();
    assert_eq!(kind_what(&e), "value boundary splits a UTF-8 character");

    let values = Arc::new(utf8(&[0, 1, 2], b"ab").unwrap());
    let keys = |k: &[i8]| {
        ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Utf8),
            len: k.len(),
            buffers: vec![Bytes::from_vec(k.iter().map(|k| *k as u8).collect())],
            dictionary: Some(Dictionary {
                index_type: IntType {
                    bit_width: 8,
                    signed: true,
                },
                values: Arc::clone(&values),
            }),
            ..ArrayParts::default()
        })
    };
    assert!(keys(&[0, 1, 1]).is_ok());
    assert_eq!(
        kind_what(&keys(&[0, 2]).unwrap_err()),
        "dictionary index out of range"
    );
    assert_eq!(
        kind_what(&keys(&[-1]).unwrap_err()),
        "dictionary index out of range"
    );
    println!(
        "hostile: array rules: decreasing/negative/overlong offsets, bad UTF-8, split chars, dictionary keys"
    );
}

/// A tiny forward flatbuffer writer for a footer whose schema nests fields `depth` deep, each
/// with `fanout` children entries pointing at the next level (fanout > 1 makes a DAG).
fn nested_footer(depth: usize, fanout: usize) -> Vec<u8> {
    let mut b: Vec<u8> = Vec::new();
    let u32_at =
        |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let push_u16 = |b: &mut Vec<u8>, v: u16| b.extend_from_slice(&v.to_le_bytes());
    b.extend_from_slice(&[0; 4]); // root offset, patched below
    // vtable for Footer and Schema: slot 1 (schema / fields) at +4.
    let vt_two = b.len();
    for v in [8u16, 8, 0, 4] {
        push_u16(&mut b, v);
    }
    // vtable for Field: type_type (slot 2) at +12, type (slot 3) at +4, children (slot 5) at +8.
    let vt_field = b.len();
    for v in [16u16, 16, 0, 0, 12, 4, 0, 8] {
        push_u16(&mut b, v);
    }
    // vtable for the empty Null type table.
    let vt_empty = b.len();
    for v in [4u16, 4] {
        push_u16(&mut b, v);
    }
    let table = |b: &mut Vec<u8>, vtable: usize| -> usize {
        let at = b.len();
        b.extend_from_slice(&((at - vtable) as i32).to_le_bytes());
        at
    };
    let footer = table(&mut b, vt_two);
    b.extend_from_slice(&[0; 4]);
    u32_at(&mut b, 0, footer as u32);
    let schema = table(&mut b, vt_two);
    u32_at(&mut b, footer + 4, (schema - (footer + 4)) as u32);
    b.extend_from_slice(&[0; 4]);
    let fields = b.len();
    u32_at(&mut b, schema + 4, (fields - (schema + 4)) as u32);
    b.extend_from_slice(&1u32.to_le_bytes());
    // uoffsets that must point at the next level's field, and at the shared Null type table.
    let mut pending = vec![b.len()];
    b.extend_from_slice(&[0; 4]);
    let mut type_slots = Vec::new();
    for level in 0..depth {
        let field = table(&mut b, vt_field);
        for at in pending.drain(..) {
            u32_at(&mut b, at, (field - at) as u32);
        }
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&[1, 0, 0, 0]); // type_type = Null
        type_slots.push(field + 4);
        let children = b.len();
        u32_at(&mut b, field + 8, (children - (field + 8)) as u32);
        let n = if level + 1 == depth { 0 } else { fanout };
        b.extend_from_slice(&(n as u32).to_le_bytes());
        for _ in 0..n {
            pending.push(b.len());
            b.extend_from_slice(&[0; 4]);
        }
    }
    let null_type = table(&mut b, vt_empty);
    for at in type_slots {
        u32_at(&mut b, at, (null_type - at) as u32);
    }
    b
}

fn file_with_footer(footer: &[u8]) -> Vec<u8> {
    let mut file = b"ARROW1\0\0".to_vec();
    file.extend_from_slice(footer);
    file.extend_from_slice(&(footer.len() as i32).to_le_bytes());
    file.extend_from_slice(b"ARROW1");
    file
}

#[test]
fn deep_and_shared_schemas_are_errors() {
    // The builder is right: a shallow schema of the same shape reads.
    let shallow = file_with_footer(&nested_footer(3, 1));
    let reader = FileReader::open(shallow.as_slice(), ReaderOptions::default()).unwrap();
    assert_eq!(reader.schema().fields().len(), 1);
    assert_eq!(reader.num_batches(), 0);

    let deep = file_with_footer(&nested_footer(10_000, 1));
    let limit = deep.len() * 8 + (1 << 20);
    LARGEST.store(0, Ordering::Relaxed);
    let err = assert_bounded_err(read_file(&deep), limit, "schema nested 10,000 deep");
    assert!(err.contains("flatbuffer"), "{err}");

    let dag = file_with_footer(&nested_footer(60, 2));
    let err = assert_bounded_err(read_file(&dag), limit, "schema DAG of 2^60 paths");
    assert!(err.contains("flatbuffer"), "{err}");
}

/// A deterministic mutation sweep: every byte of real files set to a few telling values. Each
/// read must end in `Ok` or `Err`; a panic (or a debug-build overflow) fails the test.
#[test]
fn byte_mutations_never_panic() {
    let names = [
        "1.0.0-littleendian/generated_nested",
        "1.0.0-littleendian/generated_union",
        "1.0.0-bigendian/generated_dictionary",
        "1.0.0-littleendian/generated_nested_dictionary",
        "1.0.0-littleendian/generated_interval",
        "2.0.0-compression/generated_lz4",
        "2.0.0-compression/generated_zstd",
    ];
    let mut reads = 0;
    for name in names {
        for (ext, read) in [
            (
                "arrow_file",
                read_file as fn(&[u8]) -> Result<usize, String>,
            ),
            ("stream", read_stream),
        ] {
            let Some(original) = golden(&format!("{name}.{ext}")) else {
                return;
            };
            let mut bytes = original.clone();
            for at in 0..bytes.len() {
                for value in [0x00, 0xFF, 0x80, 0x7F, original[at] ^ 0x01] {
                    bytes[at] = value;
                    let _ = read(&bytes);
                    reads += 1;
                }
                bytes[at] = original[at];
            }
        }
    }
    println!(
        "hostile: byte mutations: {reads} mutated files and streams read without a panic; largest allocation {} bytes",
        LARGEST.load(Ordering::Relaxed)
    );
}

/// The ten-column file with one more column, `s` (utf8), whose row 2 is `"needle"`.
fn file_with_text(rows: usize) -> Vec<u8> {
    let ten = quiver_tests::ten_columns::batch(rows, 7);
    let mut fields: Vec<_> = ten
        .schema()
        .fields()
        .iter()
        .cloned()
        .zip(ten.columns().iter().cloned())
        .collect();
    let mut offsets = vec![0u8; 4];
    let mut data = Vec::new();
    for row in 0..rows {
        data.extend_from_slice(if row == 2 { b"needle" } else { b"ok" });
        offsets.extend_from_slice(&(data.len() as i32).to_le_bytes());
    }
    let text = ArrayView::try_new(ArrayParts {
        data_type: Some(DataType::Utf8),
        len: rows,
        buffers: vec![Bytes::from_vec(offsets), Bytes::from_vec(data)],
        ..ArrayParts::default()
    })
    .unwrap();
    fields.push((quiver::schema::Field::new("s", DataType::Utf8, false), text));
    let batch = quiver::array::RecordBatch::from_fields(fields).unwrap();
    let mut writer =
        quiver::ipc::FileWriter::new(Vec::new(), batch.schema().clone(), Default::default())
            .unwrap();
    writer.write(&batch).unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
    writer.into_inner()
}

#[test]
fn invalid_utf8_names_the_field_and_row() {
    let mut file = file_with_text(50);
    let at = file.windows(6).position(|w| w == b"needle").unwrap();
    file[at + 3] = 0xFF;
    let e = read_file(&file).unwrap_err();
    assert!(
        e.starts_with("invalid UTF-8 in row 2, at byte 3 of the value (field `s`, batch 0"),
        "{e}"
    );
    println!("hostile: {e}");
}

#[test]
fn other_formats_empty_and_cut_inputs_say_what_they_are() {
    use quiver::format::Foreign;
    use quiver::source::Counting;
    fn kind<E: std::fmt::Debug>(e: quiver::error::Error<E>) -> FormatErrorKind {
        e.format().expect("a format error").kind.clone()
    }
    let not_arrow = |looks_like| FormatErrorKind::NotArrow { looks_like };
    let open = |bytes: &[u8], options: ReaderOptions| {
        FileReader::open(bytes, options).map(|_| ()).unwrap_err()
    };

    // A file cut short: its start says ARROW1, its end has no footer. With the tail the whole
    // file, or with one more read of the start.
    let file = file_with_text(2_000);
    let cut = &file[..file.len() / 2];
    let small_tail = ReaderOptions::default().with_footer_read_size(256);
    assert!(cut.len() > 256);
    for options in [ReaderOptions::default(), small_tail.clone()] {
        let e = open(cut, options);
        assert_eq!(
            kind(e),
            FormatErrorKind::TruncatedFile {
                len: cut.len() as u64
            }
        );
    }
    let counted = Counting::new(cut);
    let e = FileReader::open(&counted, small_tail.clone()).unwrap_err();
    assert!(e.to_string().starts_with("truncated Arrow IPC file"), "{e}");
    assert_eq!(counted.read_count(), 2, "the tail, then the first bytes");

    // Other formats, from their first bytes or their last, as a file and as a stream.
    let mut parquet = b"PAR1".to_vec();
    parquet.extend((0..5_000u32).map(|i| (i % 251) as u8));
    parquet.extend_from_slice(b"\x00\x10\x00\x00PAR1");
    let mut feather = b"FEA1".to_vec();
    feather.extend((0..5_000u32).map(|i| (i % 13) as u8));
    feather.extend_from_slice(b"\x00\x10\x00\x00FEA1");
    let csv = b"id,name\n1,a\n2,b\n".repeat(400);
    let json = b"{\"id\": 1, \"name\": \"a\"}\n".repeat(400);
    let cases: [(&[u8], Foreign); 4] = [
        (&parquet, Foreign::Parquet),
        (&feather, Foreign::FeatherV1),
        (&csv, Foreign::Text),
        (&json, Foreign::Json),
    ];
    for (bytes, looks_like) in cases {
        for options in [ReaderOptions::default(), small_tail.clone()] {
            assert_eq!(kind(open(bytes, options)), not_arrow(looks_like));
        }
        let e = StreamReader::new(bytes, ReaderOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("this looks like {looks_like}; quiver reads Arrow IPC files and streams")
        );
        let mut scratch = [0u8; 1024];
        let e = quiver::no_alloc::StreamReader::<_, 4>::new(bytes, &mut scratch)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(kind(e), not_arrow(looks_like));
    }

    // Empty input.
    assert_eq!(
        kind(open(b"", ReaderOptions::default())),
        FormatErrorKind::EmptyInput
    );
    let e = StreamReader::new(&b""[..], ReaderOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "empty input");
    let mut scratch = [0u8; 64];
    let e = quiver::no_alloc::StreamReader::<_, 4>::new(&b""[..], &mut scratch)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(kind(e), FormatErrorKind::EmptyInput);
    let mut scratch = [0u8; 64];
    let e = quiver::no_alloc::FileReader::<_, 4>::open(&b""[..], &mut scratch)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(kind(e), FormatErrorKind::EmptyInput);
}
