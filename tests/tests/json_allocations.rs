//! The JSON encoder allocates nothing while it encodes: a counting global allocator sees zero
//! allocations while encoders run, for every type (nested ones included), every option, both
//! formats, large buffers and 1-byte buffers. Building and splitting them allocates nothing
//! either, but for the one allocation of the plan of a batch wider than the encoder holds
//! inline (more than 32 arrays by default).
#![allow(unsafe_code)]

use quiver_tests::json::arrays;

use arrays::*;
use quiver::json::{BinaryFormat, Encoder, EncoderOptions, JsonFormat, JsonWriter};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts allocations made by the current thread (tests run on several threads at once).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counter is a
// thread-local `Cell` with a const initializer, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

fn all_options() -> Vec<EncoderOptions> {
    vec![
        EncoderOptions::default(),
        EncoderOptions::default()
            .with_omit_nulls(true)
            .with_large_ints_as_strings(true)
            .with_non_finite_as_strings(true)
            .with_timestamps_as_epoch(true)
            .with_binary(BinaryFormat::Base64),
    ]
}

/// The arrays of `batch`: its columns, their children and dictionaries' values.
fn arrays(batch: &quiver::array::RecordBatch<'_>) -> usize {
    fn count(array: &quiver::array::ArrayView<'_>) -> usize {
        let values = array.dictionary().map_or(0, |d| count(&d.values));
        1 + values + array.children().iter().map(count).sum::<usize>()
    }
    batch.columns().iter().map(count).sum()
}

/// Allocations to build an encoder of `batch`: its plan's, when it has more arrays than an
/// encoder holds inline.
fn plan_allocations(batch: &quiver::array::RecordBatch<'_>) -> usize {
    usize::from(arrays(batch) > 32)
}

/// Builds and runs an encoder with `size`-byte buffers, counting allocations; returns the
/// counts while it was built and while it ran, and the output length.
fn encode_counting(
    b: &quiver::array::RecordBatch<'_>,
    format: JsonFormat,
    options: EncoderOptions,
    buffer: &mut [u8],
) -> (usize, usize, usize) {
    let mut total = 0;
    let mut encoder = None;
    let built = allocations_during(|| encoder = Some(Encoder::batch(b, format, options).unwrap()));
    let mut encoder = encoder.unwrap();
    let ran = allocations_during(|| {
        loop {
            let progress = encoder.encode(buffer);
            total += progress.written;
            if progress.done {
                break;
            }
        }
    });
    (built, ran, total)
}

#[test]
fn encoding_allocates_nothing_for_any_type() {
    // The counter sees allocations on this thread.
    assert_eq!(
        allocations_during(|| drop(std::hint::black_box(vec![1u8]))),
        1
    );
    let columns = every_type();
    let mut big = vec![0u8; 1 << 16];
    let mut one = [0u8; 1];
    let mut seven = [0u8; 7];
    let mut checked = 0;
    for (name, column) in &columns {
        let b = batch(vec![(name, column.clone())]);
        for options in all_options() {
            for format in [JsonFormat::LineDelimited, JsonFormat::JsonArray] {
                for buffer in [&mut big[..], &mut one[..], &mut seven[..]] {
                    let (built, ran, written) = encode_counting(&b, format, options, buffer);
                    assert_eq!(
                        (built, ran),
                        (0, 0),
                        "{name} {format:?} {options:?}, {}-byte buffers",
                        buffer.len()
                    );
                    assert!(written > 0);
                    checked += 1;
                }
            }
        }
    }
    // Every column at once, in one batch, wider than the inline plan: its plan on the heap.
    let everything = batch(columns.clone());
    assert!(arrays(&everything) > 32, "{} arrays", arrays(&everything));
    for options in all_options() {
        let (built, ran, written) =
            encode_counting(&everything, JsonFormat::JsonArray, options, &mut big);
        assert_eq!((built, ran), (1, 0));
        let (built, ran, chunked) =
            encode_counting(&everything, JsonFormat::JsonArray, options, &mut seven);
        assert_eq!((built, ran, chunked), (1, 0, written));
    }
    println!(
        "json allocations: 0 in {checked} encodes of {} types; a batch of all {} arrays: 1 to \
         build, 0 to encode",
        columns.len(),
        arrays(&everything)
    );
}

#[test]
fn writers_and_drivers_allocate_nothing() {
    let columns = every_type();
    let narrow = batch(columns.iter().take(8).cloned().collect());
    let wide = batch(columns);
    assert!(arrays(&narrow) <= 32);
    for b in [&narrow, &wide] {
        let mut out = [0u8; 1 << 16];
        let count = allocations_during(|| {
            let mut writer = JsonWriter::new(JsonFormat::JsonArray, EncoderOptions::default());
            let mut slice: &mut [u8] = &mut out;
            for _ in 0..3 {
                // Each batch's rows written as the parallel writer cuts them: split off, in
                // order (the split-off encoder shares the plan).
                let mut rest = writer.batch(b).unwrap();
                rest.split_rows(1).unwrap().write_to(&mut slice).unwrap();
                rest.write_to(&mut slice).unwrap();
            }
            embedded_io::Write::write_all(&mut slice, writer.finish()).unwrap();
        });
        assert_eq!(count, 3 * plan_allocations(b), "{} arrays", arrays(b));
        let text = std::str::from_utf8(&out).unwrap().trim_end_matches('\0');
        let parsed: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(parsed.as_array().unwrap().len(), 9);
    }
}
