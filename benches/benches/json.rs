//! JSON encoding: quiver against arrow-json 60 and a limit baseline, side by side in one run.
//!
//! - The matrix: one column `"a"` with 10% nulls — i32 over its full range, utf8 of exactly 100
//!   alphanumeric characters, f64 uniform in [0, 1) — at 2^10 … 2^18 rows, as one JSON array
//!   into a fresh `Vec` each iteration.
//! - Also at 2^16 rows: a mixed 6-column batch, 40 columns, struct, list, dictionary, map (text
//!   keys) and run-end encoded (text) columns, NDJSON.
//! - The limit: the same text from plain `Vec`s with no Arrow at all (itoa / zmij, a
//!   word-at-a-time escape scan), into a preallocated buffer.
//! - Formatters alone: quiver's integer formatter is compared with itoa's in the matrix (the
//!   limit formats with itoa); zmij against ryu for f64 is printed as its own line (the encoder
//!   writes zmij's digits).
//!
//! After criterion's report, `cargo bench` prints a ratio table (median ns/row of repeated runs):
//! quiver / arrow-json and quiver / limit for every case.

use quiver_tests::json::arrays;

use arrow_array::builder::{Int32Builder, MapBuilder, StringBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array, ListArray,
    RecordBatch as ArrowBatch, RunArray, StringArray, StructArray, TimestampMillisecondArray,
};
use arrow_schema::{DataType as ArrowType, Field as ArrowField, Fields, Schema as ArrowSchema};
use criterion::{BenchmarkId, Criterion, Throughput};
use quiver::json::{DEFAULT_DEPTH, Encoder, EncoderBuilder, EncoderOptions, JsonFormat};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// xorshift64*: deterministic data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn valid(&mut self) -> bool {
        !self.next().is_multiple_of(10)
    }

    fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn word(&mut self, len: usize) -> String {
        const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        (0..len)
            .map(|_| ALNUM[(self.next() % ALNUM.len() as u64) as usize] as char)
            .collect()
    }
}

/// The plain data of a one-column case, for the limit baseline.
enum Plain {
    I32(Vec<i32>, Vec<bool>),
    F64(Vec<f64>, Vec<bool>),
    Utf8(Vec<u8>, Vec<usize>, Vec<bool>),
}

struct Case {
    name: String,
    rows: usize,
    format: JsonFormat,
    quiver: quiver::array::RecordBatch<'static>,
    arrow: ArrowBatch,
    plain: Option<Plain>,
}

fn arrow_batch(columns: Vec<(&str, ArrayRef)>) -> ArrowBatch {
    let fields: Vec<ArrowField> = columns
        .iter()
        .map(|(n, a)| ArrowField::new(*n, a.data_type().clone(), true))
        .collect();
    ArrowBatch::try_new(
        Arc::new(ArrowSchema::new(fields)),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

fn i32_case(rows: usize) -> Case {
    let mut rng = Rng(0x1234_5678 ^ rows as u64);
    let values: Vec<Option<i32>> = (0..rows)
        .map(|_| rng.valid().then(|| rng.next() as i32))
        .collect();
    Case {
        name: "i32".into(),
        rows,
        format: JsonFormat::JsonArray,
        quiver: arrays::batch(vec![("a", arrays::int32(&values))]),
        arrow: arrow_batch(vec![("a", Arc::new(Int32Array::from(values.clone())))]),
        plain: Some(Plain::I32(
            values.iter().map(|v| v.unwrap_or(0)).collect(),
            values.iter().map(Option::is_some).collect(),
        )),
    }
}

fn f64_case(rows: usize) -> Case {
    let mut rng = Rng(0x9876_5432 ^ rows as u64);
    let values: Vec<Option<f64>> = (0..rows).map(|_| rng.valid().then(|| rng.f64())).collect();
    Case {
        name: "f64".into(),
        rows,
        format: JsonFormat::JsonArray,
        quiver: arrays::batch(vec![(
            "a",
            arrays::prim(quiver::datatype::DataType::Float64, &values),
        )]),
        arrow: arrow_batch(vec![("a", Arc::new(Float64Array::from(values.clone())))]),
        plain: Some(Plain::F64(
            values.iter().map(|v| v.unwrap_or(0.0)).collect(),
            values.iter().map(Option::is_some).collect(),
        )),
    }
}

fn utf8_case(rows: usize) -> Case {
    let mut rng = Rng(0x5555_AAAA ^ rows as u64);
    let values: Vec<Option<String>> = (0..rows)
        .map(|_| rng.valid().then(|| rng.word(100)))
        .collect();
    let refs: Vec<Option<&str>> = values.iter().map(Option::as_deref).collect();
    let mut data = Vec::new();
    let mut offsets = vec![0];
    for v in &refs {
        data.extend_from_slice(v.unwrap_or("").as_bytes());
        offsets.push(data.len());
    }
    Case {
        name: "utf8".into(),
        rows,
        format: JsonFormat::JsonArray,
        quiver: arrays::batch(vec![("a", arrays::utf8(&refs))]),
        arrow: arrow_batch(vec![("a", Arc::new(StringArray::from(refs.clone())))]),
        plain: Some(Plain::Utf8(
            data,
            offsets,
            refs.iter().map(Option::is_some).collect(),
        )),
    }
}

/// The cases beyond the matrix, at `rows` rows.
fn extra_cases(rows: usize) -> Vec<Case> {
    let mut rng = Rng(42);
    let ints: Vec<Option<i32>> = (0..rows)
        .map(|_| rng.valid().then(|| rng.next() as i32))
        .collect();
    let longs: Vec<Option<i64>> = (0..rows)
        .map(|_| rng.valid().then(|| rng.next() as i64))
        .collect();
    let floats: Vec<Option<f64>> = (0..rows)
        .map(|_| rng.valid().then(|| rng.f64() * 1e6))
        .collect();
    let words: Vec<Option<String>> = (0..rows)
        .map(|_| {
            let len = 5 + (rng.next() % 20) as usize;
            rng.valid().then(|| rng.word(len))
        })
        .collect();
    let words: Vec<Option<&str>> = words.iter().map(Option::as_deref).collect();
    let flags: Vec<Option<bool>> = (0..rows)
        .map(|_| rng.valid().then(|| rng.next().is_multiple_of(2)))
        .collect();
    let times: Vec<Option<i64>> = (0..rows)
        .map(|_| {
            rng.valid()
                .then(|| 1_600_000_000_000 + (rng.next() % 100_000_000_000) as i64)
        })
        .collect();

    let mixed = Case {
        name: "mixed6".into(),
        rows,
        format: JsonFormat::JsonArray,
        quiver: arrays::batch(vec![
            ("i32", arrays::int32(&ints)),
            (
                "i64",
                arrays::prim(quiver::datatype::DataType::Int64, &longs),
            ),
            (
                "f64",
                arrays::prim(quiver::datatype::DataType::Float64, &floats),
            ),
            ("s", arrays::utf8(&words)),
            ("b", arrays::bools(&flags)),
            (
                "t",
                arrays::prim(
                    quiver::datatype::DataType::Timestamp(
                        quiver::datatype::TimeUnit::Millisecond,
                        None,
                    ),
                    &times,
                ),
            ),
        ]),
        arrow: arrow_batch(vec![
            ("i32", Arc::new(Int32Array::from(ints.clone()))),
            ("i64", Arc::new(Int64Array::from(longs.clone()))),
            ("f64", Arc::new(Float64Array::from(floats.clone()))),
            ("s", Arc::new(StringArray::from(words.clone()))),
            ("b", Arc::new(BooleanArray::from(flags.clone()))),
            (
                "t",
                Arc::new(TimestampMillisecondArray::from(times.clone())),
            ),
        ]),
        plain: None,
    };

    // Forty columns, the six above in turn, as NDJSON: wider than the encoder's fast-path plan
    // (24 arrays), like a wide table's export.
    let names: Vec<String> = (0..40).map(|i| format!("c{i}")).collect();
    let names = || names.iter().map(String::as_str);
    let wide = Case {
        name: "wide40".into(),
        rows,
        format: JsonFormat::LineDelimited,
        quiver: arrays::batch(
            names()
                .zip(mixed.quiver.columns().iter().cycle().cloned())
                .collect(),
        ),
        arrow: arrow_batch(
            names()
                .zip(mixed.arrow.columns().iter().cycle().cloned())
                .collect(),
        ),
        plain: None,
    };

    let valid: Vec<bool> = (0..rows).map(|_| rng.valid()).collect();
    let structs = Case {
        name: "struct".into(),
        rows,
        format: JsonFormat::JsonArray,
        quiver: arrays::batch(vec![(
            "a",
            arrays::structs(
                vec![("x", arrays::int32(&ints)), ("y", arrays::utf8(&words))],
                &valid,
            ),
        )]),
        arrow: arrow_batch(vec![(
            "a",
            Arc::new(
                StructArray::try_new(
                    Fields::from(vec![
                        ArrowField::new("x", ArrowType::Int32, true),
                        ArrowField::new("y", ArrowType::Utf8, true),
                    ]),
                    vec![
                        Arc::new(Int32Array::from(ints.clone())) as ArrayRef,
                        Arc::new(StringArray::from(words.clone())),
                    ],
                    Some(valid.clone().into()),
                )
                .unwrap(),
            ),
        )]),
        plain: None,
    };

    let lens: Vec<Option<usize>> = (0..rows)
        .map(|_| rng.valid().then(|| (rng.next() % 8) as usize))
        .collect();
    let items: Vec<Option<i32>> = (0..lens.iter().map(|l| l.unwrap_or(0)).sum::<usize>())
        .map(|_| rng.valid().then(|| (rng.next() % 100_000) as i32))
        .collect();
    let mut at = 0;
    let arrow_lists: Vec<Option<Vec<Option<i32>>>> = lens
        .iter()
        .map(|l| {
            l.map(|l| {
                at += l;
                items[at - l..at].to_vec()
            })
        })
        .collect();
    let lists = Case {
        name: "list".into(),
        rows,
        format: JsonFormat::JsonArray,
        quiver: arrays::batch(vec![(
            "a",
            arrays::list(false, arrays::int32(&items), &lens),
        )]),
        arrow: arrow_batch(vec![(
            "a",
            Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
                arrow_lists,
            )),
        )]),
        plain: None,
    };

    let vocabulary: Vec<String> = (0..16).map(|_| rng.word(12)).collect();
    let keys: Vec<Option<i32>> = (0..rows)
        .map(|_| rng.valid().then(|| (rng.next() % 16) as i32))
        .collect();
    let vocab_refs: Vec<Option<&str>> = vocabulary.iter().map(|w| Some(w.as_str())).collect();
    let dictionary = Case {
        name: "dictionary".into(),
        rows,
        format: JsonFormat::JsonArray,
        quiver: arrays::batch(vec![(
            "a",
            arrays::dictionary(&keys, arrays::utf8(&vocab_refs)),
        )]),
        arrow: arrow_batch(vec![(
            "a",
            Arc::new(
                DictionaryArray::<Int32Type>::try_new(
                    Int32Array::from(keys.clone()),
                    Arc::new(StringArray::from(vocab_refs.clone())),
                )
                .unwrap(),
            ),
        )]),
        plain: None,
    };

    // A map of 0-4 entries a row (10% null maps), text keys from the vocabulary to Int32 values
    // (none null: arrow-json leaves a null value's entry out, quiver writes `"key":null`).
    let entries: Vec<Option<usize>> = (0..rows)
        .map(|_| rng.valid().then(|| (rng.next() % 5) as usize))
        .collect();
    let total = entries.iter().map(|l| l.unwrap_or(0)).sum::<usize>();
    let map_keys: Vec<&str> = (0..total)
        .map(|_| vocabulary[(rng.next() % 16) as usize].as_str())
        .collect();
    let map_values: Vec<Option<i32>> = (0..total)
        .map(|_| Some((rng.next() % 100_000) as i32))
        .collect();
    let mut arrow_map = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    let mut at = 0;
    for len in &entries {
        for k in at..at + len.unwrap_or(0) {
            arrow_map.keys().append_value(map_keys[k]);
            arrow_map.values().append_option(map_values[k]);
        }
        at += len.unwrap_or(0);
        arrow_map.append(len.is_some()).unwrap();
    }
    let key_refs: Vec<Option<&str>> = map_keys.iter().copied().map(Some).collect();
    let map = Case {
        name: "map".into(),
        rows,
        format: JsonFormat::JsonArray,
        quiver: arrays::batch(vec![(
            "a",
            arrays::map(
                arrays::utf8(&key_refs),
                arrays::int32(&map_values),
                &entries,
            ),
        )]),
        arrow: arrow_batch(vec![("a", Arc::new(arrow_map.finish()))]),
        plain: None,
    };

    // Run-end encoded text: runs of 1-8 rows of a word (10% null).
    let mut ends: Vec<i32> = Vec::new();
    let mut run_words: Vec<Option<&str>> = Vec::new();
    while ends.last().map_or(0, |e| *e as usize) < rows {
        let end = ends.last().map_or(0, |e| *e as usize) + 1 + (rng.next() % 8) as usize;
        ends.push(end.min(rows) as i32);
        run_words.push(
            rng.valid()
                .then(|| vocabulary[(rng.next() % 16) as usize].as_str()),
        );
    }
    let runs = Case {
        name: "run-end".into(),
        rows,
        format: JsonFormat::JsonArray,
        quiver: arrays::batch(vec![(
            "a",
            arrays::run_ends(&ends, arrays::utf8(&run_words)),
        )]),
        arrow: arrow_batch(vec![(
            "a",
            Arc::new(
                RunArray::<Int32Type>::try_new(
                    &Int32Array::from(ends.clone()),
                    &StringArray::from(run_words.clone()),
                )
                .unwrap(),
            ),
        )]),
        plain: None,
    };

    let mut ndjson = i32_case(rows);
    ndjson.name = "i32 ndjson".into();
    ndjson.format = JsonFormat::LineDelimited;
    ndjson.plain = None;
    vec![mixed, wide, structs, lists, dictionary, map, runs, ndjson]
}

/// quiver's options for the same text as arrow-json's defaults: null members left out.
fn options() -> EncoderOptions {
    EncoderOptions::default().with_omit_nulls(true)
}

fn quiver_json(batch: &quiver::array::RecordBatch<'_>, format: JsonFormat) -> Vec<u8> {
    let mut out = Vec::new();
    Encoder::batch(batch, format, options())
        .unwrap()
        .append_to(&mut out);
    out
}

fn arrow_json(batch: &ArrowBatch, format: JsonFormat) -> Vec<u8> {
    let mut out = Vec::new();
    if format == JsonFormat::JsonArray {
        let mut writer = arrow_json::ArrayWriter::new(&mut out);
        writer.write(batch).unwrap();
        writer.finish().unwrap();
    } else {
        let mut writer = arrow_json::LineDelimitedWriter::new(&mut out);
        writer.write(batch).unwrap();
        writer.finish().unwrap();
    }
    out
}

/// Whether any of the eight bytes is a control character, `"` or `\`.
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let quote = word ^ (ONES * b'"' as u64);
    let backslash = word ^ (ONES * b'\\' as u64);
    ((word.wrapping_sub(ONES * 0x20) & !word)
        | (quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash))
        & (ONES * 0x80)
        != 0
}

fn push_escaped(out: &mut Vec<u8>, s: &[u8]) {
    let clean = s
        .chunks(8)
        .all(|c| c.len() < 8 || !needs_escape(u64::from_le_bytes(c.try_into().unwrap())))
        && s[s.len() - s.len() % 8..]
            .iter()
            .all(|b| *b >= 0x20 && *b != b'"' && *b != b'\\');
    if clean {
        out.extend_from_slice(s);
    } else {
        // Not reached with alphanumeric data; kept for a complete baseline.
        out.extend_from_slice(serde_escape(s).as_bytes());
    }
}

fn serde_escape(s: &[u8]) -> String {
    let text = std::str::from_utf8(s).unwrap();
    let quoted = format!("{text:?}");
    quoted[1..quoted.len() - 1].to_string()
}

/// The limit: the same JSON array from plain vectors, into a preallocated buffer.
fn limit_json(plain: &Plain) -> Vec<u8> {
    match plain {
        Plain::I32(values, valid) => {
            let mut out = Vec::with_capacity(values.len() * 20 + 2);
            let mut itoa = itoa::Buffer::new();
            out.push(b'[');
            for (i, (v, ok)) in values.iter().zip(valid).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if *ok {
                    out.extend_from_slice(b"{\"a\":");
                    out.extend_from_slice(itoa.format(*v).as_bytes());
                    out.push(b'}');
                } else {
                    out.extend_from_slice(b"{}");
                }
            }
            out.push(b']');
            out
        }
        Plain::F64(values, valid) => {
            let mut out = Vec::with_capacity(values.len() * 32 + 2);
            let mut zmij = zmij::Buffer::new();
            out.push(b'[');
            for (i, (v, ok)) in values.iter().zip(valid).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if *ok {
                    out.extend_from_slice(b"{\"a\":");
                    out.extend_from_slice(zmij.format_finite(*v).as_bytes());
                    out.push(b'}');
                } else {
                    out.extend_from_slice(b"{}");
                }
            }
            out.push(b']');
            out
        }
        Plain::Utf8(data, offsets, valid) => {
            let mut out = Vec::with_capacity(data.len() + valid.len() * 10 + 2);
            out.push(b'[');
            for (i, ok) in valid.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if *ok {
                    out.extend_from_slice(b"{\"a\":\"");
                    push_escaped(&mut out, &data[offsets[i]..offsets[i + 1]]);
                    out.extend_from_slice(b"\"}");
                } else {
                    out.extend_from_slice(b"{}");
                }
            }
            out.push(b']');
            out
        }
    }
}

const SIZES: [usize; 5] = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18];

fn matrix() -> Vec<Case> {
    let mut cases = Vec::new();
    for rows in SIZES {
        cases.extend([i32_case(rows), utf8_case(rows), f64_case(rows)]);
    }
    cases
}

fn check_same_output(case: &Case) {
    let ours = quiver_json(&case.quiver, case.format);
    let theirs = arrow_json(&case.arrow, case.format);
    let parse = |b: &[u8]| -> Vec<String> {
        std::str::from_utf8(b)
            .unwrap()
            .split(['\n', ',', '[', ']', '{', '}', ':'])
            .map(|t| match t.parse::<f64>() {
                Ok(f) => f.to_bits().to_string(),
                Err(_) => t.to_string(),
            })
            .collect()
    };
    assert_eq!(parse(&ours), parse(&theirs), "{} {}", case.name, case.rows);
    if let Some(plain) = &case.plain {
        assert_eq!(
            parse(&ours),
            parse(&limit_json(plain)),
            "{} limit",
            case.name
        );
    }
}

fn bench_case(c: &mut Criterion, case: &Case) {
    let mut group = c.benchmark_group(format!("json/{}", case.name));
    group.throughput(Throughput::Elements(case.rows as u64));
    group.bench_with_input(BenchmarkId::new("quiver", case.rows), case, |b, case| {
        b.iter(|| black_box(quiver_json(&case.quiver, case.format)))
    });
    group.bench_with_input(
        BenchmarkId::new("arrow-json", case.rows),
        case,
        |b, case| b.iter(|| black_box(arrow_json(&case.arrow, case.format))),
    );
    if let Some(plain) = &case.plain {
        group.bench_with_input(BenchmarkId::new("limit", case.rows), plain, |b, plain| {
            b.iter(|| black_box(limit_json(plain)))
        });
    }
    group.finish();
}

/// Median nanoseconds per row of `f` over repeated runs (at least 5, about 0.3 s).
fn ns_per_row(rows: usize, mut f: impl FnMut() -> Vec<u8>) -> f64 {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (start.elapsed() < Duration::from_millis(300) && times.len() < 1000) {
        let t = Instant::now();
        black_box(f());
        times.push(t.elapsed().as_nanos() as f64 / rows as f64);
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn ratio_table(cases: &[Case]) {
    println!();
    println!(
        "| case | rows | quiver ns/row | arrow-json ns/row | limit ns/row | quiver/arrow-json | quiver/limit |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for case in cases {
        let q = ns_per_row(case.rows, || quiver_json(&case.quiver, case.format));
        let a = ns_per_row(case.rows, || arrow_json(&case.arrow, case.format));
        let (limit, vs_limit) = match &case.plain {
            Some(plain) => {
                let l = ns_per_row(case.rows, || limit_json(plain));
                (format!("{l:.1}"), format!("{:.2}", q / l))
            }
            None => ("–".into(), "–".into()),
        };
        println!(
            "| {} | {} | {q:.1} | {a:.1} | {limit} | {:.2} | {vs_limit} |",
            case.name,
            case.rows,
            q / a
        );
        // The forty columns again, with a plan that holds them all (as the `quiver` command's
        // writer has): no column is left to the general walk.
        if case.name == "wide40" {
            let wide = ns_per_row(case.rows, || {
                let mut out = Vec::new();
                let mut encoder: Encoder<'_, DEFAULT_DEPTH, 128> =
                    EncoderBuilder::new(case.format, options())
                        .batch(&case.quiver)
                        .unwrap();
                encoder.append_to(&mut out);
                out
            });
            println!(
                "| wide40, plan of 128 arrays | {} | {wide:.1} | {a:.1} | – | {:.2} | – |",
                case.rows,
                wide / a
            );
        }
    }
    // The two shortest-round-trip float formatters alone, each in a loop of its own (through
    // `&dyn Fn` the compiler cannot inline zmij, which then looks slower than ryu).
    let mut rng = Rng(7);
    let floats: Vec<f64> = (0..1 << 16).map(|_| rng.f64()).collect();
    let zmij_ns = format_floats(&floats, |f, out| {
        out.extend_from_slice(zmij::Buffer::new().format_finite(f).as_bytes());
    });
    let ryu_ns = format_floats(&floats, |f, out| {
        out.extend_from_slice(ryu::Buffer::new().format_finite(f).as_bytes());
    });
    println!("\nf64 formatting alone, uniform [0,1): zmij {zmij_ns:.1} ns, ryu {ryu_ns:.1} ns");
}

/// Median nanoseconds per value of `format` over `floats`, into a preallocated `Vec`.
fn format_floats(floats: &[f64], format: impl Fn(f64, &mut Vec<u8>)) -> f64 {
    ns_per_row(floats.len(), || {
        let mut out = Vec::with_capacity(floats.len() * 24);
        for f in floats {
            format(*f, &mut out);
        }
        out
    })
}

fn main() {
    let mut cases = matrix();
    cases.extend(extra_cases(1 << 16));
    // Every case writes the same JSON in all three (numbers compared by value); skipped under a
    // profiler with QUIVER_BENCH_NO_CHECK=1.
    if std::env::var_os("QUIVER_BENCH_NO_CHECK").is_none() {
        for case in &cases {
            check_same_output(case);
        }
    }
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    for case in &cases {
        bench_case(&mut criterion, case);
    }
    criterion.final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` runs each benchmark once, no table.
    if std::env::args().any(|a| a == "--bench")
        && std::env::var_os("QUIVER_BENCH_NO_TABLE").is_none()
    {
        ratio_table(&cases);
    }
}
