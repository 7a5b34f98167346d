//! The JSON encoder allocates nothing: a counting global allocator sees zero allocations while
//! encoders are built and run, for every type (nested ones included), every option, both formats,
//! large buffers and 1-byte buffers.
#![allow(unsafe_code)]

#[path = "json/arrays.rs"]
mod arrays;

use arrays::*;
use quiver::DataType;
use quiver::datatype::{IntervalUnit, TimeUnit};
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

/// One column of every type the encoder writes, each with a null.
fn every_type() -> Vec<(&'static str, Array)> {
    use TimeUnit::*;
    let long = "a string long enough to stream across many small buffers \"quoted\"\n";
    let ts = |unit, tz: Option<&str>| {
        prim(
            DataType::Timestamp(unit, tz.map(Into::into)),
            &[Some(1_542_129_070_011i64), None, Some(-1)],
        )
    };
    vec![
        ("bool", bools(&[Some(true), None, Some(false)])),
        ("i8", prim(DataType::Int8, &[Some(-1i8), None, Some(1)])),
        ("i16", prim(DataType::Int16, &[Some(-1i16), None, Some(1)])),
        ("i32", int32(&[Some(-1), None, Some(i32::MAX)])),
        (
            "i64",
            prim(DataType::Int64, &[Some(i64::MIN), None, Some(1)]),
        ),
        ("u8", prim(DataType::UInt8, &[Some(1u8), None, Some(2)])),
        ("u16", prim(DataType::UInt16, &[Some(1u16), None, Some(2)])),
        ("u32", prim(DataType::UInt32, &[Some(1u32), None, Some(2)])),
        (
            "u64",
            prim(DataType::UInt64, &[Some(u64::MAX), None, Some(2)]),
        ),
        (
            "f16",
            prim(DataType::Float16, &[Some(0x3C00u16), None, Some(0x7E00)]),
        ),
        (
            "f32",
            prim(
                DataType::Float32,
                &[Some(0.1f32), None, Some(f32::INFINITY)],
            ),
        ),
        (
            "f64",
            prim(DataType::Float64, &[Some(0.1f64), None, Some(f64::NAN)]),
        ),
        (
            "d32",
            prim(DataType::Decimal32(9, 2), &[Some(12345i32), None, Some(-1)]),
        ),
        (
            "d64",
            prim(DataType::Decimal64(18, -3), &[Some(5i64), None, Some(0)]),
        ),
        (
            "d128",
            prim(
                DataType::Decimal128(38, 10),
                &[Some(i128::MIN), None, Some(1)],
            ),
        ),
        (
            "d256",
            prim(
                DataType::Decimal256(76, 40),
                &[Some([0xFFu8; 32]), None, Some([1; 32])],
            ),
        ),
        (
            "date32",
            prim(DataType::Date32, &[Some(17_848i32), None, Some(-1)]),
        ),
        (
            "date64",
            prim(
                DataType::Date64,
                &[Some(1_542_129_070_011i64), None, Some(0)],
            ),
        ),
        (
            "t32",
            prim(
                DataType::Time32(Millisecond),
                &[Some(120i32), None, Some(-5)],
            ),
        ),
        (
            "t64",
            prim(DataType::Time64(Nanosecond), &[Some(120i64), None, Some(1)]),
        ),
        ("ts", ts(Millisecond, None)),
        ("tsz", ts(Microsecond, Some("+05:30"))),
        ("tsn", ts(Nanosecond, Some("Europe/Paris"))),
        (
            "dur",
            prim(
                DataType::Duration(Millisecond),
                &[Some(120i64), None, Some(-1)],
            ),
        ),
        (
            "ym",
            prim(
                DataType::Interval(IntervalUnit::YearMonth),
                &[Some(14i32), None, Some(0)],
            ),
        ),
        (
            "dt",
            prim(
                DataType::Interval(IntervalUnit::DayTime),
                &[Some([1u8; 8]), None, Some([0; 8])],
            ),
        ),
        (
            "mdn",
            prim(
                DataType::Interval(IntervalUnit::MonthDayNano),
                &[Some([1u8; 16]), None, Some([0xFF; 16])],
            ),
        ),
        ("utf8", utf8(&[Some(long), None, Some("\u{1}é")])),
        (
            "large",
            var(
                DataType::LargeUtf8,
                &[Some(long.as_bytes()), None, Some(b"x")],
            ),
        ),
        (
            "view",
            views(
                DataType::Utf8View,
                &[Some(long.as_bytes()), None, Some(b"short")],
            ),
        ),
        (
            "bin",
            var(
                DataType::Binary,
                &[Some(long.as_bytes()), None, Some(b"\xff")],
            ),
        ),
        (
            "lbin",
            var(DataType::LargeBinary, &[Some(b"\x00\x01"), None, Some(b"")]),
        ),
        (
            "bview",
            views(
                DataType::BinaryView,
                &[Some(long.as_bytes()), None, Some(b"\x01")],
            ),
        ),
        (
            "fsb",
            prim(
                DataType::FixedSizeBinary(3),
                &[Some([1u8, 2, 3]), None, Some([0; 3])],
            ),
        ),
        (
            "list",
            list(
                false,
                int32(&[Some(1), None, Some(3)]),
                &[Some(2), None, Some(1)],
            ),
        ),
        (
            "llist",
            list(
                true,
                utf8(&[Some(long), Some("b")]),
                &[Some(1), Some(0), Some(1)],
            ),
        ),
        (
            "fsl",
            fixed_list(
                int32(&[Some(1), Some(2), None, Some(4), Some(5), Some(6)]),
                2,
                &[true, false, true],
            ),
        ),
        (
            "lview",
            list_view(
                int32(&[Some(1), Some(2), Some(3)]),
                &[Some((1, 2)), None, Some((0, 3))],
            ),
        ),
        (
            "struct",
            structs(
                vec![
                    ("a", int32(&[Some(1), Some(2), None])),
                    ("b\"", utf8(&[Some(long), None, Some("z")])),
                ],
                &[true, false, true],
            ),
        ),
        (
            "map",
            map(
                utf8(&[Some("k"), Some(long), Some("m")]),
                int32(&[Some(1), None, Some(3)]),
                &[Some(2), None, Some(1)],
            ),
        ),
        (
            "imap",
            map(
                int32(&[Some(1), Some(2)]),
                utf8(&[Some(long), None]),
                &[Some(1), Some(1), None],
            ),
        ),
        (
            "dict",
            dictionary(&[Some(1), None, Some(0)], utf8(&[Some(long), Some("one")])),
        ),
        ("ree", run_ends(&[2, 3], utf8(&[Some(long), None]))),
        (
            "sparse",
            union(
                vec![
                    ("i", int32(&[Some(1), Some(2), Some(3)])),
                    ("s", utf8(&[Some("a"), Some(long), None])),
                ],
                &[0, 1, 1],
                None,
            ),
        ),
        (
            "dense",
            union(
                vec![
                    ("i", int32(&[Some(7)])),
                    (
                        "l",
                        list(false, int32(&[Some(1), Some(2)]), &[Some(2), Some(0)]),
                    ),
                ],
                &[1, 0, 1],
                Some(&[0, 0, 1]),
            ),
        ),
    ]
}

fn all_options() -> Vec<EncoderOptions> {
    vec![
        EncoderOptions::default(),
        EncoderOptions::default()
            .with_explicit_nulls(true)
            .with_large_ints_as_strings(true)
            .with_non_finite_as_strings(true)
            .with_timestamps_as_epoch(true)
            .with_binary(BinaryFormat::Base64),
    ]
}

/// Builds and runs an encoder with `size`-byte buffers, counting allocations; returns the
/// count and the output length.
fn encode_counting(
    b: &quiver::RecordBatch<'_>,
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
            writer.batch(&b).unwrap().write_to(&mut slice).unwrap();
        }
        embedded_io::Write::write_all(&mut slice, writer.finish()).unwrap();
    });
    assert_eq!(count, 0);
    let text = std::str::from_utf8(&out).unwrap().trim_end_matches('\0');
    let parsed: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(parsed.as_array().unwrap().len(), 9);
}
