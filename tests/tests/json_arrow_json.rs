//! quiver's JSON against arrow-json 60's, on the same batches: every integration file is read
//! by arrow-rs (arrow-ipc) for arrow-json and by quiver for quiver, and each batch is written by
//! both as newline-delimited JSON, with nulls left out (arrow-json's default, quiver's
//! `omit_nulls`) and written, and extension types as their storage (as arrow-json writes them).
//!
//! Lines must be byte-identical, except that number text may differ in form when both parse to
//! the same value (floats: quiver writes the shortest round trip, arrow-json lexical-core's;
//! for a float32 the same value is the same f32),
//! and the differences quiver documents (see the `json` module):
//!
//! - a dictionary key pointing at a null value: quiver writes `null`, arrow-json the slot's
//!   stale contents;
//! - values arrow-json cannot write and replaces with `ERROR: …` or `<invalid>` text;
//! - map entries with a null value: quiver keeps the key (`"k":null`) whatever
//!   `explicit_nulls` says, arrow-json leaves them out unless nulls are explicit;
//! - intervals: quiver writes ISO 8601 durations (`P1Y2MT0.5S`), arrow-json its display form
//!   (`1 years 2 mons 0.500 secs`); both are parsed to months, days and nanoseconds and compared;
//! - a Date64 of whole days: quiver writes the date, arrow-json the date at `T00:00:00`;
//! - a zone's offset with seconds (local mean time before about 1900, `-04:56:02`): quiver writes
//!   the seconds, arrow-json (chrono) rounds the offset to the minute, the same local time;
//! - timestamps in a named zone after 2037: arrow-json's chrono-tz (enabled here, so named zones
//!   are compared in local time against quiver's `quiver_std::time_zones` resolver) has no
//!   daylight saving time past its tables, quiver's tz database applies the zone's rule.
//!
//! Batches arrow-json refuses (unions, maps with non-string keys) are counted and skipped.
//! Prints a one-line summary.
//!
//! The same comparison runs on random batches (`json/random.rs`: every type the generator
//! builds, nested, with nulls and slices), written by quiver's IPC writer and read by arrow-rs
//! for arrow-json.

use quiver_tests::json::arrays;
use quiver_tests::json::random;
use quiver_tests::json::same;

use arrow_json::WriterBuilder;
use arrow_json::writer::LineDelimited;
use proptest::prelude::*;
use quiver::ipc::{FileReader, ReaderOptions, StreamReader, StreamWriter, WriterOptions};
use quiver::json::{Encoder, EncoderOptions, JsonFormat};
use random::Ty;
use same::{f32_of, same_by};
use serde_json::Value;
use std::io::Cursor;
use std::path::Path;

type ArrowBatch = arrow_array::RecordBatch;

fn arrow_read(path: &Path, bytes: &[u8]) -> Result<Vec<ArrowBatch>, String> {
    let cursor = Cursor::new(bytes.to_vec());
    if path.extension().is_some_and(|e| e == "stream") {
        arrow_ipc::reader::StreamReader::try_new(cursor, None)
            .map_err(|e| e.to_string())?
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())
    } else {
        arrow_ipc::reader::FileReader::try_new(cursor, None)
            .map_err(|e| e.to_string())?
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())
    }
}

fn quiver_read(path: &Path, bytes: &[u8]) -> Vec<quiver::array::RecordBatch<'static>> {
    if path.extension().is_some_and(|e| e == "stream") {
        StreamReader::new(bytes, ReaderOptions::default())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    } else {
        FileReader::open(bytes.to_vec(), ReaderOptions::default())
            .unwrap()
            .batches()
            .collect::<Result<_, _>>()
            .unwrap()
    }
}

fn arrow_json(batch: &ArrowBatch, explicit_nulls: bool) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut writer = WriterBuilder::new()
        .with_explicit_nulls(explicit_nulls)
        .build::<_, LineDelimited>(&mut out);
    writer.write(batch).ok()?;
    writer.finish().ok()?;
    drop(writer);
    Some(out)
}

fn quiver_json(batch: &quiver::array::RecordBatch<'_>, explicit_nulls: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let options = EncoderOptions::default()
        .with_omit_nulls(!explicit_nulls)
        .with_extensions_as_storage(true)
        .with_time_zones(Some(quiver_std::time_zones()));
    Encoder::batch(batch, JsonFormat::LineDelimited, options)
        .unwrap()
        .append_to(&mut out);
    out
}

/// The line with every number token removed (string contents untouched), so two lines that
/// differ only in how numbers are spelled compare equal.
fn without_numbers(line: &str) -> String {
    let mut out = String::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in line.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')) {
            out.push(c);
        }
    }
    out
}

/// Whether two values are equal with numbers compared as f64, or as f32 (a float32 value's
/// shortest text, which quiver writes, can differ from arrow-json's in its last digits and
/// still parse to the same f32: -33894110.0 and -33894112.0).
fn same(a: &Value, b: &Value) -> bool {
    same_by(a, b, |x, y| {
        x == y || x.as_f64() == y.as_f64() || f32_of(x).is_some_and(|v| Some(v) == f32_of(y))
    })
}

#[derive(Default, Debug)]
struct Tally {
    batches: usize,
    refused: usize,
    identical_lines: usize,
    number_text_lines: usize,
    documented_lines: usize,
    failures: Vec<String>,
}

impl Tally {
    fn compare(&mut self, what: &str, arrow: &[u8], ours: &[u8]) {
        let arrow = std::str::from_utf8(arrow).unwrap();
        let ours = std::str::from_utf8(ours).unwrap();
        let (a_lines, q_lines): (Vec<&str>, Vec<&str>) =
            (arrow.lines().collect(), ours.lines().collect());
        if a_lines.len() != q_lines.len() {
            self.failures.push(format!(
                "{what}: {} lines vs {}",
                a_lines.len(),
                q_lines.len()
            ));
            return;
        }
        for (i, (a, q)) in a_lines.iter().zip(&q_lines).enumerate() {
            if a == q {
                self.identical_lines += 1;
                continue;
            }
            let (av, qv): (Value, Value) = (
                serde_json::from_str(a).unwrap(),
                serde_json::from_str(q).unwrap(),
            );
            if same(&av, &qv) && without_numbers(a) == without_numbers(q) {
                self.number_text_lines += 1;
            } else if documented(&av, &qv) {
                self.documented_lines += 1;
            } else if self.failures.len() < 20 {
                self.failures.push(format!(
                    "{what} line {i}:\n  arrow-json {a}\n  quiver     {q}"
                ));
            } else {
                self.failures.push(String::new());
            }
        }
    }
}

/// Whether `ours` differs from `arrow` only where quiver documents a difference: a value
/// arrow-json cannot write (its `ERROR: …` or `<invalid>` text), or a member quiver leaves out
/// or writes as `null` where arrow-json writes a null dictionary value's stale slot.
fn documented(arrow: &Value, ours: &Value) -> bool {
    let unwritable = |v: &Value| {
        v.as_str()
            .is_some_and(|s| s.starts_with("ERROR: ") || s == "<invalid>")
    };
    match (arrow, ours) {
        _ if same(arrow, ours) || unwritable(arrow) || past_chrono_tz(arrow, ours) => true,
        (Value::String(a), Value::String(q)) => {
            *a == format!("{q}T00:00:00")
                || interval_of_display(a).is_some_and(|v| Some(v) == interval_of_iso(q))
                || offset_rounded(q).is_some_and(|rounded| rounded == *a)
        }
        (_, Value::Null) => true,
        (Value::Object(a), Value::Object(q)) => {
            // A key of ours arrow-json leaves out is a map's whose value is null: quiver writes
            // map keys whatever `explicit_nulls` says (struct members follow the same rule in
            // both).
            q.iter().all(|(k, v)| a.contains_key(k) || v.is_null())
                && a.iter().all(|(k, v)| match q.get(k) {
                    Some(w) => documented(v, w),
                    // Left out: a null quiver sees where arrow-json wrote a stale value.
                    None => true,
                })
        }
        (Value::Array(a), Value::Array(q)) => {
            a.len() == q.len() && a.iter().zip(q).all(|(v, w)| documented(v, w))
        }
        _ => false,
    }
}

/// A timestamp whose offset has seconds (`…-04:56:02`) with the offset rounded to the minute, as
/// chrono writes it (`…-04:56`).
fn offset_rounded(timestamp: &str) -> Option<String> {
    let (time, offset) = timestamp.split_at_checked(timestamp.len().checked_sub(9)?)?;
    let [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2, b':', s1, s2] = *offset.as_bytes() else {
        return None;
    };
    let digits = |a: u8, b: u8| u32::from(a - b'0') * 10 + u32::from(b - b'0');
    let seconds = digits(h1, h2) * 3_600 + digits(m1, m2) * 60 + digits(s1, s2);
    let minutes = (seconds + 30) / 60;
    let sign = char::from(sign);
    Some(format!(
        "{time}{sign}{:02}:{:02}",
        minutes / 60,
        minutes % 60
    ))
}

/// Months, days and nanoseconds of an interval as arrow-json writes it (`1 years 2 mons
/// 3 days 4 hours 5 mins 6.000000007 secs`, zero parts left out, each part signed).
fn interval_of_display(text: &str) -> Option<(i64, i64, i128)> {
    let (mut months, mut days, mut nanos) = (0i64, 0i64, 0i128);
    let words: Vec<&str> = text.split(' ').collect();
    for pair in words.chunks(2) {
        let [number, unit] = pair else { return None };
        match *unit {
            "years" => months += 12 * number.parse::<i64>().ok()?,
            "mons" => months += number.parse::<i64>().ok()?,
            "days" => days += number.parse::<i64>().ok()?,
            "hours" => nanos += 3_600_000_000_000 * number.parse::<i128>().ok()?,
            "mins" => nanos += 60_000_000_000 * number.parse::<i128>().ok()?,
            "secs" => nanos += seconds_in_nanos(number)?,
            _ => return None,
        }
    }
    Some((months, days, nanos))
}

/// Months, days and nanoseconds of an ISO 8601 interval as quiver writes it (`-P1Y2M3DT4.5S`,
/// `P1M-2D`).
fn interval_of_iso(text: &str) -> Option<(i64, i64, i128)> {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text),
    };
    let rest = rest.strip_prefix('P')?;
    let (date, time) = rest.split_once('T').unwrap_or((rest, ""));
    let (mut months, mut days, mut nanos) = (0i64, 0i64, 0i128);
    let mut number = String::new();
    for c in date.chars() {
        match c {
            'Y' => months += 12 * std::mem::take(&mut number).parse::<i64>().ok()?,
            'M' => months += std::mem::take(&mut number).parse::<i64>().ok()?,
            'D' => days += std::mem::take(&mut number).parse::<i64>().ok()?,
            c => number.push(c),
        }
    }
    if !time.is_empty() {
        nanos = seconds_in_nanos(time.strip_suffix('S')?)?;
    }
    Some((sign * months, sign * days, i128::from(sign) * nanos))
}

/// `-12.5` seconds in nanoseconds.
fn seconds_in_nanos(text: &str) -> Option<i128> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let fraction = format!("{fraction:0<9}");
    let nanos = whole.parse::<i128>().ok()? * 1_000_000_000 + fraction.parse::<i128>().ok()?;
    Some(if negative { -nanos } else { nanos })
}

/// Whether two timestamps in a named zone are the same instant after 2037, in different local
/// times: chrono-tz's tables end in 2037 (later instants get the zone's standard offset), where
/// quiver's resolver (jiff) goes on applying the zone's rule, daylight saving time included.
fn past_chrono_tz(arrow: &Value, ours: &Value) -> bool {
    use chrono::{DateTime, Datelike};
    let (Some(a), Some(q)) = (arrow.as_str(), ours.as_str()) else {
        return false;
    };
    match (
        DateTime::parse_from_rfc3339(a),
        DateTime::parse_from_rfc3339(q),
    ) {
        (Ok(a), Ok(q)) => a == q && a.year() > 2037,
        _ => false,
    }
}

#[test]
fn quiver_writes_what_arrow_json_writes() {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return;
    };
    let mut files = quiver_tests::integration_files(&data, "arrow_file");
    files.extend(quiver_tests::integration_files(&data, "stream"));
    let mut tally = Tally::default();
    for path in &files {
        // arrow-rs misreads big-endian files; their little-endian twins cover them.
        if path.to_string_lossy().contains("bigendian") {
            continue;
        }
        let bytes = std::fs::read(path).unwrap();
        let Ok(arrow) = arrow_read(path, &bytes) else {
            continue;
        };
        let ours = quiver_read(path, &bytes);
        assert_eq!(arrow.len(), ours.len(), "{}", path.display());
        for (i, (a, q)) in arrow.iter().zip(&ours).enumerate() {
            for explicit in [false, true] {
                tally.batches += 1;
                let Some(expected) = arrow_json(a, explicit) else {
                    tally.refused += 1;
                    continue;
                };
                let what = format!("{} batch {i} explicit_nulls={explicit}", path.display());
                tally.compare(&what, &expected, &quiver_json(q, explicit));
            }
        }
    }
    println!(
        "json vs arrow-json: {} batches ({} refused by arrow-json); lines: {} identical, \
         {} differ in number text only, {} documented differences, {} failures",
        tally.batches,
        tally.refused,
        tally.identical_lines,
        tally.number_text_lines,
        tally.documented_lines,
        tally.failures.len()
    );
    for f in tally.failures.iter().filter(|f| !f.is_empty()) {
        println!("{f}");
    }
    assert!(tally.failures.is_empty());
    assert!(tally.identical_lines > 1000);
}

#[test]
fn named_zones_are_arrow_json_local_times_byte_for_byte() {
    use arrow_array::{ArrayRef, TimestampMillisecondArray};
    use quiver::datatype::{DataType, TimeUnit};
    use std::sync::Arc;
    // Zones with daylight saving time in either hemisphere, half- and quarter-hour offsets, a
    // 30-minute DST shift, offset 0 in winter (written `Z`), and a local mean time before 1883.
    let zones = [
        "America/New_York",
        "Europe/Paris",
        "Europe/London",
        "Asia/Kolkata",
        "Asia/Kathmandu",
        "America/St_Johns",
        "Australia/Lord_Howe",
        "Australia/Sydney",
        "America/Sao_Paulo",
        "UTC",
    ];
    // Instants from 1850 to 2037 (where chrono-tz has every transition): a spread, and each
    // side of New York's and Sydney's 2024 transitions.
    let mut millis: Vec<Option<i64>> = (0..2_000i64)
        .map(|k| Some(-3_786_825_600_000 + k * 2_965_123_457_333 % 5_930_000_000_000))
        .collect();
    for transition in [1_710_054_000_000i64, 1_730_613_600_000, 1_712_419_200_000] {
        millis.extend([-1_000, -1, 0, 1, 3_599_999].map(|d| Some(transition + d)));
    }
    millis.push(None);
    let (mut identical, mut lmt) = (0, 0);
    for zone in zones {
        let arrow_column: ArrayRef =
            Arc::new(TimestampMillisecondArray::from(millis.clone()).with_timezone(zone));
        let arrow = ArrowBatch::try_from_iter([("t", arrow_column)]).unwrap();
        let ours = arrays::batch(vec![(
            "t",
            arrays::prim(
                DataType::Timestamp(TimeUnit::Millisecond, Some(zone.into())),
                &millis,
            ),
        )]);
        for explicit in [false, true] {
            let expected = arrow_json(&arrow, explicit).expect("arrow-json writes named zones");
            let written = quiver_json(&ours, explicit);
            // Byte for byte but where quiver writes an offset's seconds (local mean time).
            let (written, expected) = (
                String::from_utf8(written).unwrap(),
                String::from_utf8(expected).unwrap(),
            );
            assert_eq!(written.lines().count(), expected.lines().count(), "{zone}");
            for (ours, theirs) in written.lines().zip(expected.lines()) {
                if ours != theirs {
                    let value = |line: &str| {
                        line.trim_start_matches("{\"t\":\"")
                            .trim_end_matches("\"}")
                            .to_string()
                    };
                    let rounded = offset_rounded(&value(ours));
                    assert_eq!(rounded, Some(value(theirs)), "{zone}: {ours}");
                    lmt += 1;
                }
            }
            identical += expected.lines().count();
        }
    }
    println!(
        "named zones vs arrow-json (chrono-tz): {identical} lines, {lmt} with an offset's seconds"
    );
    assert!(lmt > 0, "some instants are in local mean time");
}

/// Whether arrow-json refuses a column of `ty` (it writes no unions).
fn refused(ty: &Ty) -> bool {
    match ty {
        Ty::Union(_) => true,
        Ty::List(t) | Ty::LargeList(t) | Ty::FixedList(t, _) | Ty::Map(t) => refused(t),
        Ty::Struct(ts) => ts.iter().any(refused),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(quiver_tests::proptest_cases(512)))]

    #[test]
    fn random_batches_give_what_arrow_json_gives(case in random::case(), explicit in any::<bool>()) {
        let batch = case.batch();
        let mut writer =
            StreamWriter::new(Vec::new(), batch.schema().clone(), WriterOptions::default()).unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        let bytes = writer.into_inner();
        let arrow: Vec<ArrowBatch> = arrow_ipc::reader::StreamReader::try_new(Cursor::new(bytes), None)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(arrow.len(), 1);
        let Some(expected) = arrow_json(&arrow[0], explicit) else {
            prop_assert!(case.types.iter().any(refused), "arrow-json refused {:?}", case.types);
            return Ok(());
        };
        let mut tally = Tally::default();
        tally.compare("random batch", &expected, &quiver_json(&batch, explicit));
        prop_assert!(tally.failures.is_empty(), "{:?}: {}", case.types, tally.failures.join("\n"));
    }
}
