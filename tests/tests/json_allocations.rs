//! The JSON encoder allocates nothing: a counting global allocator sees zero allocations while
//! encoders are built, split and run, for every type (nested ones included), every option, both formats,
//! large buffers and 1-byte buffers.
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

/// Builds and runs an encoder with `size`-byte buffers, counting allocations; returns the
/// count and the output length.
fn encode_counting(
    b: &quiver::array::RecordBatch<'_>,
    format: JsonFormat,
    options: EncoderOptions,
    buffer: &mut [u8],
) -> (usize, usize) {
    let mut total = 0;
    let count = allocations_during(|| {
        let mut encoder = Encoder::batch(b, format, options).unwrap();
        loop {
            let progress = encoder.encode(buffer);
            total += progress.written;
            if progress.done {
                break;
            }
        }
    });
    (count, total)
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
                    let (count, written) = encode_counting(&b, format, options, buffer);
                    assert_eq!(
                        count,
                        0,
                        "{name} {format:?} {options:?}, {}-byte buffers",
                        buffer.len()
                    );
                    assert!(written > 0);
                    checked += 1;
                }
            }
        }
    }
    // Every column at once, in one batch.
    let everything = batch(columns.clone());
    for options in all_options() {
        let (count, written) =
            encode_counting(&everything, JsonFormat::JsonArray, options, &mut big);
        assert_eq!(count, 0);
        let (count, chunked) =
            encode_counting(&everything, JsonFormat::JsonArray, options, &mut seven);
        assert_eq!((count, chunked), (0, written));
    }
    println!(
        "json allocations: 0 in {checked} encodes of {} types",
        columns.len()
    );
}

#[test]
fn writers_and_drivers_allocate_nothing() {
    let columns = every_type();
    let b = batch(columns);
    let mut out = [0u8; 1 << 16];
    let count = allocations_during(|| {
        let mut writer = JsonWriter::new(JsonFormat::JsonArray, EncoderOptions::default());
        let mut slice: &mut [u8] = &mut out;
        for _ in 0..3 {
            // Each batch's rows written as the parallel writer cuts them: split off, in order.
            let mut rest = writer.batch(&b).unwrap();
            rest.split_rows(1).unwrap().write_to(&mut slice).unwrap();
            rest.write_to(&mut slice).unwrap();
        }
        embedded_io::Write::write_all(&mut slice, writer.finish()).unwrap();
    });
    assert_eq!(count, 0);
    let text = std::str::from_utf8(&out).unwrap().trim_end_matches('\0');
    let parsed: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(parsed.as_array().unwrap().len(), 9);
}
