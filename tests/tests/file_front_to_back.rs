//! An IPC file read front to back as the stream it holds (`StreamDecoder::for_file`), as a
//! reader does that has the file's bytes in order and cannot wait for its footer (one
//! streaming GET of an object): the same batches as the `FileReader` for every golden file,
//! fed whole or in chunks of any size, and the footer checked at the end. A footer that does
//! not describe the file's messages, a cut file and a file that is not one are located
//! errors.

use quiver::array::RecordBatch;
use quiver::bytes::Bytes;
use quiver::error::FormatErrorKind;
use quiver::ipc::{FileReader, ReaderOptions, StreamDecodeResult, StreamDecoder, StreamReader};
use quiver_tests::equal::assert_batches_equal;

fn local(file: &[u8]) -> Vec<RecordBatch<'static>> {
    let mut reader = FileReader::open(file, ReaderOptions::default()).unwrap();
    reader.batches().map(|b| b.unwrap()).collect()
}

/// The batches of `file` read front to back through the sync reader, or its error.
fn front_to_back(file: &[u8]) -> Result<Vec<RecordBatch<'static>>, String> {
    let decoder = StreamDecoder::for_file(ReaderOptions::default());
    let reader = StreamReader::with_decoder(file, decoder).map_err(|e| e.to_string())?;
    reader.map(|b| b.map_err(|e| e.to_string())).collect()
}

/// `file` pushed in chunks of `size` bytes: its batches, then its end or error.
fn hand_fed(
    file: &'static [u8],
    size: usize,
) -> (
    Vec<RecordBatch<'static>>,
    Result<(), quiver::error::FormatError>,
) {
    let mut decoder = StreamDecoder::for_file(ReaderOptions::default());
    let mut chunks = file.chunks(size);
    let mut batches = Vec::new();
    loop {
        match decoder.try_decode() {
            Ok(StreamDecodeResult::NeedsData { .. }) => match chunks.next() {
                Some(chunk) => decoder.push(Bytes::borrowed(chunk)),
                None => decoder.finish(),
            },
            Ok(StreamDecodeResult::Data(batch)) => batches.push(batch),
            Ok(StreamDecodeResult::Finished) => return (batches, Ok(())),
            Ok(_) => {}
            Err(e) => return (batches, Err(e)),
        }
    }
}

fn error_of(file: &[u8]) -> quiver::error::FormatError {
    let leaked: &'static [u8] = Vec::leak(file.to_vec());
    hand_fed(leaked, 1000).1.unwrap_err()
}

#[test]
fn every_golden_file_reads_front_to_back_as_the_file_reader_reads_it() {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return;
    };
    let files = quiver_tests::integration_files(&data, "arrow_file");
    let mut batches = 0;
    for path in &files {
        let bytes: &'static [u8] = Vec::leak(std::fs::read(path).unwrap());
        let expected = local(bytes);
        let read = front_to_back(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_batches_equal(&expected, &read);
        for size in [1, 7, 4096, bytes.len()] {
            let (read, end) = hand_fed(bytes, size);
            end.unwrap_or_else(|e| panic!("{} in {size}-byte chunks: {e}", path.display()));
            assert_batches_equal(&expected, &read);
        }
        batches += expected.len();
    }
    println!(
        "{} golden files, {batches} batches, read front to back",
        files.len()
    );
    assert!(files.is_empty() || batches > 0);
}

#[test]
fn dictionary_deltas_between_batches_give_the_file_readers_batches() {
    let file = quiver_tests::file_with_deltas();
    let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    assert!(reader.dictionary_blocks()[1].offset > reader.record_batch_blocks()[0].offset);
    assert_batches_equal(&local(&file), &front_to_back(&file).unwrap());
}

/// A file of three batches, and where its footer lies.
fn three_batches() -> (Vec<u8>, usize) {
    batches(3)
}

/// A file of `count` batches, and where its footer lies.
fn batches(count: i32) -> (Vec<u8>, usize) {
    use quiver::builder::{AppendValue, ArrayBuilder, PrimitiveBuilder};
    let field = quiver::schema::Field::new("numbers", quiver::datatype::DataType::Int32, false);
    let schema = std::sync::Arc::new(quiver::schema::Schema::new(vec![field.clone()]));
    let mut writer = quiver::ipc::FileWriter::new(Vec::new(), schema, Default::default()).unwrap();
    for n in 1..=count {
        let mut column = PrimitiveBuilder::<i32>::new();
        for i in 0..n * 10 {
            column.append_value(i);
        }
        let batch =
            RecordBatch::from_fields(vec![(field.clone(), column.finish().unwrap())]).unwrap();
        writer.write(&batch).unwrap();
    }
    writer.finish().unwrap();
    let file = writer.into_inner();
    let footer_len = i32::from_le_bytes(file[file.len() - 10..file.len() - 6].try_into().unwrap());
    let footer_start = file.len() - 10 - footer_len as usize;
    (file, footer_start)
}

/// Where `needle` is in `haystack` after `from`.
fn find(haystack: &[u8], needle: &[u8], from: usize) -> usize {
    from + haystack[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
}

#[test]
fn a_footer_that_lists_other_blocks_is_an_error_after_the_batches() {
    let (file, footer_start) = three_batches();
    let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    let blocks = reader.record_batch_blocks().to_vec();
    assert_eq!(front_to_back(&file).unwrap().len(), 3);
    // The footer lists the second and third batches the other way round.
    let at = |i: usize| find(&file, &blocks[i].offset.to_le_bytes(), footer_start);
    let mut swapped = file.clone();
    let (second, third) = (at(1), at(2));
    swapped[second..second + 24].copy_from_slice(&file[third..third + 24]);
    swapped[third..third + 24].copy_from_slice(&file[second..second + 24]);
    let leaked: &'static [u8] = Vec::leak(swapped);
    let (batches, end) = hand_fed(leaked, 100);
    assert_eq!(batches.len(), 3, "the batches come before the footer");
    let e = end.unwrap_err();
    assert_eq!(
        e.kind,
        FormatErrorKind::FooterMismatch {
            what: "record batch"
        }
    );
    assert_eq!(e.offset(), Some(footer_start as u64));
    assert_eq!(e.batch(), Some(1));
    assert!(e.to_string().contains("record batch"), "{e}");
    // A body length one short, as listed.
    let mut short = file.clone();
    let body = at(2) + 16;
    short[body] -= 1;
    let e = error_of(&short);
    assert_eq!(e.batch(), Some(2));
    // A footer of two batches in a file of three.
    let mut fewer = file.clone();
    let count = find(&file, &3u32.to_le_bytes(), footer_start);
    assert_eq!(
        count + 4,
        at(0),
        "the vector's length precedes its first block"
    );
    fewer[count] = 2;
    let e = error_of(&fewer);
    assert_eq!(
        (e.kind.clone(), e.batch()),
        (
            FormatErrorKind::FooterMismatch {
                what: "record batch"
            },
            Some(2)
        )
    );
    // The footer's schema names the field otherwise.
    let mut renamed = file.clone();
    let name = find(&file, b"numbers", footer_start);
    renamed[name] = b'N';
    let e = error_of(&renamed);
    assert_eq!(e.kind, FormatErrorKind::FooterMismatch { what: "schema" });
    assert!(
        local(&renamed).len() == 3,
        "the file reader trusts its footer"
    );
}

#[test]
fn a_cut_file_or_no_file_is_a_located_error() {
    let (file, footer_start) = three_batches();
    let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    let blocks = reader.record_batch_blocks().to_vec();
    // Cut within the footer or its trailer, and right after the end-of-stream marker: the
    // file reader's error.
    for cut in [
        file.len() - 1,
        file.len() - 10,
        footer_start + 5,
        footer_start,
    ] {
        let e = error_of(&file[..cut]);
        assert_eq!(
            e.kind,
            FormatErrorKind::TruncatedFile { len: cut as u64 },
            "cut at {cut}"
        );
        let local = FileReader::open(&file[..cut], ReaderOptions::default()).unwrap_err();
        assert_eq!(local.to_string(), e.to_string(), "cut at {cut}");
    }
    // Cut within a batch's body: where it was cut.
    let body = (blocks[1].offset + i64::from(blocks[1].meta_data_length)) as usize;
    let e = error_of(&file[..body + 3]);
    assert!(
        matches!(
            e.kind,
            FormatErrorKind::Truncated {
                what: "message body",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.offset(), Some(body as u64));
    // Cut between messages, before the end-of-stream marker.
    let e = error_of(&file[..blocks[1].offset as usize]);
    assert_eq!(
        e.kind,
        FormatErrorKind::TruncatedFile {
            len: blocks[1].offset as u64
        }
    );
    // Not a file.
    assert_eq!(error_of(b"").kind, FormatErrorKind::EmptyInput);
    assert_eq!(
        error_of(b"ARROW").kind,
        FormatErrorKind::TruncatedFile { len: 5 }
    );
    let e = error_of(b"PAR1 and the rest of a parquet file");
    assert!(matches!(e.kind, FormatErrorKind::NotArrow { .. }), "{e}");
    let e = error_of(b"\xff\xff\xff\xff\x10\x00\x00\x00 a stream");
    assert_eq!(
        (e.kind.clone(), e.offset()),
        (FormatErrorKind::BadMagic, Some(0))
    );
}

#[test]
fn a_footer_length_that_reaches_into_the_stream_or_a_trailer_beyond_the_limit_is_refused() {
    let (file, footer_start) = three_batches();
    let mut long = file.clone();
    let len_at = file.len() - 10;
    let footer_len = (file.len() - 10 - footer_start) as i32;
    long[len_at..len_at + 4].copy_from_slice(&(footer_len + 16).to_le_bytes());
    let e = error_of(&long);
    assert!(
        matches!(
            e.kind,
            FormatErrorKind::InvalidValue {
                what: "footer length",
                ..
            }
        ),
        "{e}"
    );
    // Bytes after the end-of-stream marker are the footer: no more than the metadata limit
    // (here above each message's metadata, below the footer of 30 blocks), whose bytes before
    // the limit's last are let go as they come. The same error whatever the chunks, the sync
    // reader's too (a fuzzer found the sync reader reading a trailer longer than the limit
    // whole, where small chunks were refused at the limit).
    let (file, footer_start) = batches(30);
    let footer_len = file.len() - footer_start - 10;
    assert!(footer_len > 700);
    let leaked: &'static [u8] = Vec::leak(file);
    let options = ReaderOptions::default().with_max_metadata_size(400);
    let expected = FormatErrorKind::LimitExceeded {
        what: quiver::error::Limit::FileFooter,
        requested: footer_len as u64,
        limit: 400,
    };
    for chunk in [1, 7, 64, 401, leaked.len()] {
        let mut decoder = StreamDecoder::for_file(options.clone());
        let mut chunks = leaked.chunks(chunk);
        let e = loop {
            match decoder.try_decode() {
                Ok(StreamDecodeResult::NeedsData { .. }) => match chunks.next() {
                    Some(bytes) => decoder.push(Bytes::borrowed(bytes)),
                    None => decoder.finish(),
                },
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(e.kind, expected, "{chunk}-byte chunks: {e}");
        assert_eq!(e.offset(), Some(footer_start as u64));
    }
    let e = quiver::ipc::StreamReader::with_decoder(leaked, StreamDecoder::for_file(options))
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert!(
        matches!(e, quiver::error::Error::Format(ref f) if f.kind == expected),
        "{e}"
    );
}

#[test]
fn zeros_that_pad_the_magic_further_are_skipped() {
    // As arrow-rs writes a file at its default alignment (64), and as quiver did before.
    use arrow_array::{ArrayRef, Int32Array, RecordBatch as ArrowBatch};
    let column: ArrayRef = std::sync::Arc::new(Int32Array::from(vec![1, 2, 3]));
    let batch = ArrowBatch::try_from_iter([("x", column)]).unwrap();
    let mut writer = arrow_ipc::writer::FileWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(&batch).unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
    let file = writer.into_inner().unwrap();
    assert_eq!(&file[..6], b"ARROW1");
    assert!(file[6..64].iter().all(|b| *b == 0));
    let read = front_to_back(&file).unwrap();
    assert_eq!(read.len(), 2);
    assert_batches_equal(&local(&file), &read);
}

#[test]
fn a_file_without_the_end_of_stream_marker_reads_to_its_footer() {
    let (file, footer_start) = three_batches();
    assert_eq!(
        &file[footer_start - 8..footer_start],
        &[0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]
    );
    let mut cut = file[..footer_start - 8].to_vec();
    cut.extend_from_slice(&file[footer_start..]);
    assert_eq!(
        local(&cut).len(),
        3,
        "the file reader never reads the marker"
    );
    assert_batches_equal(&local(&cut), &front_to_back(&cut).unwrap());
    // Its footer renamed: still checked.
    let name = find(&cut, b"numbers", footer_start - 8);
    cut[name] = b'N';
    let e = error_of(&cut);
    assert_eq!(e.kind, FormatErrorKind::FooterMismatch { what: "schema" });
}

/// Where the `isDelta` byte of the dictionary batch message at `offset` lies: the message's
/// flatbuffer after its 8-byte prefix, its `header` table (field 2 of `Message`), and that
/// table's field 2 (`isDelta`), each found through its vtable.
fn is_delta_at(file: &[u8], offset: usize) -> usize {
    let u32_at = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap()) as usize;
    let i32_at = |at: usize| i32::from_le_bytes(file[at..at + 4].try_into().unwrap()) as isize;
    let field = |table: usize, k: usize| {
        let vtable = (table as isize - i32_at(table)) as usize;
        let at = u16::from_le_bytes(
            file[vtable + 4 + 2 * k..vtable + 6 + 2 * k]
                .try_into()
                .unwrap(),
        );
        assert_ne!(at, 0, "field {k} is present");
        table + at as usize
    };
    let flatbuffer = offset + 8;
    let message = flatbuffer + u32_at(flatbuffer);
    let header_at = field(message, 2);
    let header = header_at + u32_at(header_at);
    field(header, 2)
}

#[test]
fn a_dictionary_replaced_in_a_file_is_an_error_both_ways() {
    use quiver_tests::json::arrays::{dictionary, utf8};
    // Dictionary ["a"], then a delta ["b"] before the second batch, which uses key 0 only: with
    // the delta flag cleared, the second dictionary batch is a valid replacement of ["a"] by
    // ["b"], which a stream may hold and a file may not (the format reads a file's blocks in
    // any order, so a file has one dictionary per id).
    let batch = |values: &[Option<&str>]| {
        RecordBatch::from_columns([("word", dictionary(&[Some(0)], utf8(values)))]).unwrap()
    };
    let mut file = quiver_tests::file_of(&[batch(&[Some("a")]), batch(&[Some("a"), Some("b")])]);
    assert_batches_equal(&local(&file), &front_to_back(&file).unwrap());
    let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    let delta = reader.dictionary_blocks()[1].offset as usize;
    let at = is_delta_at(&file, delta);
    assert_eq!(file[at], 1, "the writer wrote a delta");
    file[at] = 0;
    let replaced = "replaced dictionaries in a file";
    let mut reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    let local_error = reader.batches().find_map(Result::err).unwrap().to_string();
    assert!(local_error.contains(replaced), "{local_error}");
    let e = error_of(&file);
    assert!(
        matches!(
            e.kind,
            FormatErrorKind::Unsupported {
                what: quiver::error::Feature::ReplacedDictionaryInFile
            }
        ),
        "{e}"
    );
    // As a stream, the same messages replace the dictionary: the second batch reads "b".
    let stream = file[8..].to_vec();
    let mut reader = StreamReader::new(stream.as_slice(), ReaderOptions::default()).unwrap();
    let second = reader.nth(1).unwrap().unwrap();
    assert_eq!(
        quiver_tests::json::arrays::lines(&second),
        "{\"word\":\"b\"}\n"
    );
}
