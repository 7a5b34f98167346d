//! Exact read counts of the file reader, asserted with the counting source: opening is one read
//! (two when the footer is larger than the speculative read), and each batch is one read.

use quiver::ipc::{FileReader, ReaderOptions};
use quiver::source::{Counting, ReadCall};

fn golden(name: &str) -> Option<Vec<u8>> {
    let data = quiver_tests::arrow_testing_data()?;
    let path = data.join("arrow-ipc-stream/integration").join(name);
    Some(std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The footer's start, from the file's trailer.
fn footer_start(file: &[u8]) -> u64 {
    let len = file.len();
    let footer_len = i32::from_le_bytes(file[len - 10..len - 6].try_into().unwrap());
    (len - 10) as u64 - footer_len as u64
}

#[test]
fn open_is_one_read_of_the_tail() {
    let Some(file) = golden("1.0.0-littleendian/generated_primitive.arrow_file") else {
        return;
    };
    let len = file.len() as u64;
    for read_size in [len as usize, 4096, (len - footer_start(&file)) as usize] {
        let source = Counting::new(file.as_slice());
        let options = ReaderOptions::default().with_footer_read_size(read_size);
        FileReader::open(&source, options).unwrap();
        let want = read_size.min(len as usize) as u64;
        assert_eq!(
            source.reads(),
            [ReadCall {
                offset: len - want,
                len: want,
                round_trip: 0
            }],
            "footer_read_size {read_size}"
        );
        println!("read_counts: open with footer_read_size={read_size}: 1 read of {want} bytes");
    }
}

#[test]
fn footer_larger_than_the_speculative_read_costs_one_more_read_of_the_missing_part() {
    let Some(file) = golden("1.0.0-littleendian/generated_primitive.arrow_file") else {
        return;
    };
    let len = file.len() as u64;
    let footer_start = footer_start(&file);
    let read_size = 64usize;
    assert!(
        len - footer_start > read_size as u64,
        "footer must exceed the first read"
    );
    let source = Counting::new(file.as_slice());
    let reader = FileReader::open(
        &source,
        ReaderOptions::default().with_footer_read_size(read_size),
    )
    .unwrap();
    let tail_start = len - read_size as u64;
    assert_eq!(
        source.reads(),
        [
            ReadCall {
                offset: tail_start,
                len: read_size as u64,
                round_trip: 0
            },
            ReadCall {
                offset: footer_start,
                len: tail_start - footer_start,
                round_trip: 1
            },
        ]
    );
    assert_eq!(reader.num_batches(), 2);
    println!(
        "read_counts: footer of {} bytes with footer_read_size={read_size}: 2 reads ({read_size} + {})",
        len - 10 - footer_start,
        tail_start - footer_start
    );
}

#[test]
fn each_batch_is_one_read_of_metadata_and_body() {
    let Some(file) = golden("1.0.0-littleendian/generated_primitive.arrow_file") else {
        return;
    };
    let source = Counting::new(file.as_slice());
    let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
    let blocks = reader.record_batch_blocks().to_vec();
    for (i, block) in blocks.iter().enumerate().rev() {
        source.reset();
        reader.batch(i).unwrap();
        let want = block.meta_data_length as u64 + block.body_length as u64;
        assert_eq!(
            source.reads(),
            [ReadCall {
                offset: block.offset as u64,
                len: want,
                round_trip: 0
            }],
            "batch {i}"
        );
        println!(
            "read_counts: batch {i}: 1 read of {want} bytes at {}",
            block.offset
        );
    }
}

#[test]
fn dictionaries_are_read_once_when_first_needed() {
    let Some(file) = golden("1.0.0-littleendian/generated_dictionary.arrow_file") else {
        return;
    };
    let source = Counting::new(file.as_slice());
    let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
    let dictionaries = reader.dictionary_blocks().len();
    assert!(dictionaries > 0);
    source.reset();
    reader.batch(1).unwrap();
    assert_eq!(
        source.read_count(),
        dictionaries + 1,
        "first batch reads the dictionaries too"
    );
    source.reset();
    reader.batch(0).unwrap();
    assert_eq!(source.read_count(), 1, "later batches reuse them");
}
