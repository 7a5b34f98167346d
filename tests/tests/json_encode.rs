//! JSON encoding, value by value: every type in arrow-json 60's default form (checked against
//! the strings arrow-json's own tests expect), the options beyond it, document framing across
//! batches, construction errors, and the drivers. Every expected document is also produced with
//! 1-, 2-, 3-byte and irregular buffers, which must give the same bytes.

use quiver_tests::json::arrays;

use arrays::*;
use quiver::array::RecordBatch;
use quiver::datatype::{DataType, IntervalUnit, TimeUnit};
use quiver::json::{
    BinaryFormat, Encoder, EncoderBuilder, EncoderOptions, JsonError, JsonFormat, JsonWriter,
    to_vec,
};

/// Encodes with every buffer-size pattern and checks each against `expected`.
fn check_with(
    batch: &RecordBatch<'_>,
    format: JsonFormat,
    options: EncoderOptions,
    expected: &str,
) {
    for sizes in [
        &[1 << 16][..],
        &[1],
        &[2],
        &[3],
        &[5, 0, 1, 17, 64],
        &[250, 7],
    ] {
        let mut encoder = Encoder::batch(batch, format, options).unwrap();
        let out = String::from_utf8(drain(&mut encoder, sizes)).unwrap();
        assert_eq!(out, expected, "buffer sizes {sizes:?}");
        assert!(encoder.is_done());
        let again = encoder.encode(&mut [0u8; 8]);
        assert_eq!((again.written, again.done), (0, true));
    }
}

/// NDJSON with null members left out (arrow-json's form; `check_with` gives the default).
fn check(batch: &RecordBatch<'_>, expected: &str) {
    check_with(
        batch,
        JsonFormat::LineDelimited,
        EncoderOptions::default().with_omit_nulls(true),
        expected,
    );
}

const NANOS: i64 = 1_542_129_070_011_375_885; // 2018-11-13T17:11:10.011375885

#[test]
fn integers_booleans_and_floats() {
    let b = batch(vec![
        ("i8", prim(DataType::Int8, &[Some(i8::MIN), None])),
        ("i16", prim(DataType::Int16, &[Some(-300i16), None])),
        ("i32", int32(&[Some(i32::MAX), None])),
        ("i64", prim(DataType::Int64, &[Some(i64::MIN), None])),
        ("u8", prim(DataType::UInt8, &[Some(255u8), None])),
        ("u16", prim(DataType::UInt16, &[Some(0u16), None])),
        ("u32", prim(DataType::UInt32, &[Some(u32::MAX), None])),
        ("u64", prim(DataType::UInt64, &[Some(u64::MAX), None])),
        ("b", bools(&[Some(true), Some(false)])),
        ("f64", prim(DataType::Float64, &[Some(0.1f64), Some(-0.0)])),
        (
            "f32",
            prim(DataType::Float32, &[Some(1.5f32), Some(f32::NAN)]),
        ),
        // Float16 1.0 and 0.1 (0x2E66, exactly 0.0999755859375).
        (
            "f16",
            prim(DataType::Float16, &[Some(0x3C00u16), Some(0x2E66)]),
        ),
        (
            "inf",
            prim(
                DataType::Float64,
                &[Some(f64::INFINITY), Some(f64::NEG_INFINITY)],
            ),
        ),
    ]);
    check(
        &b,
        "{\"i8\":-128,\"i16\":-300,\"i32\":2147483647,\"i64\":-9223372036854775808,\"u8\":255,\
         \"u16\":0,\"u32\":4294967295,\"u64\":18446744073709551615,\"b\":true,\"f64\":0.1,\
         \"f32\":1.5,\"f16\":1.0,\"inf\":null}\n\
         {\"b\":false,\"f64\":-0.0,\"f32\":null,\"f16\":0.099975586,\"inf\":null}\n",
    );
}

#[test]
fn strings_escape_per_rfc_8259() {
    let tricky = "q\"b\\s/\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}é😀";
    let escaped = r#""q\"b\\s/\b\f\n\r\t\u0001\u001f"#.to_string() + "\u{7f}é😀\"";
    let long = "x".repeat(300) + "\n" + &"y".repeat(300);
    let b = batch(vec![
        ("s", utf8(&[Some(tricky), Some(""), Some(&long)])),
        (
            "l",
            var(DataType::LargeUtf8, &[Some(b"large"), None, Some(b"\x00")]),
        ),
        (
            "v",
            views(
                DataType::Utf8View,
                &[Some(b"inline"), Some(b"a view longer than twelve"), None],
            ),
        ),
    ]);
    let long_json = serde_json::to_string(&long).unwrap();
    check(
        &b,
        &format!(
            "{{\"s\":{escaped},\"l\":\"large\",\"v\":\"inline\"}}\n\
             {{\"s\":\"\",\"v\":\"a view longer than twelve\"}}\n\
             {{\"s\":{long_json},\"l\":\"\\u0000\"}}\n"
        ),
    );
    assert_eq!(serde_json::to_string(tricky).unwrap(), escaped);
}

#[test]
fn keys_that_need_escaping() {
    let b = batch(vec![
        ("plain", int32(&[Some(1)])),
        ("say \"hi\"\n", int32(&[Some(2)])),
    ]);
    check(&b, "{\"plain\":1,\"say \\\"hi\\\"\\n\":2}\n");
}

#[test]
fn binary_as_hex_or_base64() {
    let values: [Option<&[u8]>; 3] = [Some(b"\x00\x0f\xa0\xff"), Some(b""), None];
    let b = batch(vec![
        ("b", var(DataType::Binary, &values)),
        ("lb", var(DataType::LargeBinary, &values)),
        ("bv", views(DataType::BinaryView, &values)),
        (
            "fsb",
            prim(
                DataType::FixedSizeBinary(2),
                &[Some([0xABu8, 0x01]), Some([0, 0]), None],
            ),
        ),
    ]);
    check(
        &b,
        "{\"b\":\"000fa0ff\",\"lb\":\"000fa0ff\",\"bv\":\"000fa0ff\",\"fsb\":\"ab01\"}\n\
         {\"b\":\"\",\"lb\":\"\",\"bv\":\"\",\"fsb\":\"0000\"}\n{}\n",
    );
    check_with(
        &b,
        JsonFormat::LineDelimited,
        EncoderOptions::default().with_binary(BinaryFormat::Base64),
        "{\"b\":\"AA+g/w==\",\"lb\":\"AA+g/w==\",\"bv\":\"AA+g/w==\",\"fsb\":\"qwE=\"}\n\
         {\"b\":\"\",\"lb\":\"\",\"bv\":\"\",\"fsb\":\"AAA=\"}\n{\"b\":null,\"lb\":null,\"bv\":null,\"fsb\":null}\n",
    );
}

#[test]
fn decimals_are_exact_numbers() {
    let mut i256_min = [0u8; 32];
    i256_min[31] = 0x80;
    let b = batch(vec![
        (
            "d32",
            prim(DataType::Decimal32(9, 2), &[Some(12345i32), Some(-5)]),
        ),
        (
            "d64",
            prim(DataType::Decimal64(18, 3), &[Some(-5i64), Some(0)]),
        ),
        (
            "d128",
            prim(DataType::Decimal128(38, 38), &[Some(i128::MIN), Some(1)]),
        ),
        (
            "d256",
            prim(
                DataType::Decimal256(76, -2),
                &[Some(i256_min), Some([0u8; 32])],
            ),
        ),
    ]);
    check(
        &b,
        "{\"d32\":123.45,\"d64\":-0.005,\"d128\":-1.70141183460469231731687303715884105728,\
         \"d256\":-5789604461865809771178549250434395392663499233282028201972879200395656481996800}\n\
         {\"d32\":-0.05,\"d64\":0.000,\"d128\":0.00000000000000000000000000000000000001,\"d256\":0}\n",
    );
}

#[test]
fn decimals_as_strings_keep_every_digit() {
    let mut i256_min = [0u8; 32];
    i256_min[31] = 0x80;
    let b = batch(vec![
        (
            "d32",
            prim(DataType::Decimal32(9, 2), &[Some(12345i32), None]),
        ),
        (
            "d64",
            prim(DataType::Decimal64(18, 3), &[Some(-5i64), None]),
        ),
        (
            "d128",
            prim(
                DataType::Decimal128(37, 2),
                &[
                    Some(-9_999_999_999_999_999_999_999_999_999_999_999_999_i128),
                    None,
                ],
            ),
        ),
        (
            "d256",
            prim(DataType::Decimal256(76, -2), &[Some(i256_min), None]),
        ),
    ]);
    let options = EncoderOptions::default().with_decimals_as_strings(true);
    check_with(
        &b,
        JsonFormat::LineDelimited,
        options,
        "{\"d32\":\"123.45\",\"d64\":\"-0.005\",\"d128\":\"-99999999999999999999999999999999999.99\",\
         \"d256\":\"-5789604461865809771178549250434395392663499233282028201972879200395656481996800\"}\n{\"d32\":null,\"d64\":null,\"d128\":null,\"d256\":null}\n",
    );
    // Inside a list and a struct too (the plan's short values and the general walk).
    let nested = batch(vec![
        (
            "l",
            list(
                false,
                prim(DataType::Decimal128(5, 1), &[Some(-15i128), None]),
                &[Some(2), None],
            ),
        ),
        (
            "s",
            structs(
                vec![("d", prim(DataType::Decimal64(3, 0), &[Some(7i64), Some(8)]))],
                &[true, false],
            ),
        ),
    ]);
    check_with(
        &nested,
        JsonFormat::LineDelimited,
        options,
        "{\"l\":[\"-1.5\",null],\"s\":{\"d\":\"7\"}}\n{\"l\":null,\"s\":null}\n",
    );
    assert_eq!(
        values(&prim(DataType::Decimal32(3, 1), &[Some(5i32)]), options),
        "[\"0.5\"]"
    );
}

#[test]
fn named_zones_are_local_time_with_a_resolver() {
    use TimeUnit::*;
    let ny = || DataType::Timestamp(Second, Some("America/New_York".into()));
    // 1970-01-01T00:00Z; 2024-03-10 either side of the spring gap; the hour of 2024-11-03 that
    // happens twice; a day in July 2100 (still daylight time); 1800 (local mean time).
    let instants = [
        Some(0i64),
        Some(1_710_053_999),
        Some(1_710_054_000),
        Some(1_730_611_800),
        Some(1_730_615_400),
        None,
        Some(4_118_169_600),
        Some(-5_364_662_400),
    ];
    let local = [
        "1969-12-31T19:00:00-05:00",
        "2024-03-10T01:59:59-05:00",
        "2024-03-10T03:00:00-04:00",
        "2024-11-03T01:30:00-04:00",
        "2024-11-03T01:30:00-05:00",
        "",
        "2100-07-01T20:00:00-04:00",
        "1799-12-31T19:03:58-04:56:02",
    ];
    let utc = [
        "1970-01-01T00:00:00Z",
        "2024-03-10T06:59:59Z",
        "2024-03-10T07:00:00Z",
        "2024-11-03T05:30:00Z",
        "2024-11-03T06:30:00Z",
        "",
        "2100-07-02T00:00:00Z",
        "1800-01-01T00:00:00Z",
    ];
    let rows = |texts: [&str; 8], key: &str| -> String {
        texts
            .iter()
            .map(|t| match t.is_empty() {
                true => format!("{{\"{key}\":null}}\n"),
                false => format!("{{\"{key}\":\"{t}\"}}\n"),
            })
            .collect()
    };
    let b = batch(vec![("t", prim(ny(), &instants))]);
    let resolving = EncoderOptions::default().with_time_zones(Some(quiver_std::time_zones()));
    check_with(&b, JsonFormat::LineDelimited, resolving, &rows(local, "t"));
    // Without a resolver, or with the UTC option: the instant with `Z`.
    check_with(
        &b,
        JsonFormat::LineDelimited,
        EncoderOptions::default(),
        &rows(utc, "t"),
    );
    check_with(
        &b,
        JsonFormat::LineDelimited,
        resolving.with_timestamps_utc(true),
        &rows(utc, "t"),
    );
    // The UTC option writes fixed offsets in UTC too.
    let india = batch(vec![(
        "t",
        prim(
            DataType::Timestamp(Second, Some("+05:30".into())),
            &[Some(0i64)],
        ),
    )]);
    check_with(
        &india,
        JsonFormat::LineDelimited,
        EncoderOptions::default().with_timestamps_utc(true),
        "{\"t\":\"1970-01-01T00:00:00Z\"}\n",
    );
    // Everywhere a timestamp can be: a struct member, list elements, dictionary values, a
    // union's child, a map's values (the plan and the general walk), and an array encoder.
    let values_of = |instants: &[Option<i64>]| prim(ny(), instants);
    let nested = batch(vec![
        ("s", structs(vec![("t", values_of(&[Some(0)]))], &[true])),
        ("l", list(false, values_of(&[Some(0), None]), &[Some(2)])),
        ("d", dictionary(&[Some(0)], values_of(&[Some(0)]))),
        ("u", union(vec![("t", values_of(&[Some(0)]))], &[0], None)),
        (
            "m",
            map(utf8(&[Some("k")]), values_of(&[Some(0)]), &[Some(1)]),
        ),
    ]);
    let t = "\"1969-12-31T19:00:00-05:00\"";
    check_with(
        &nested,
        JsonFormat::LineDelimited,
        resolving,
        &format!(
            "{{\"s\":{{\"t\":{t}}},\"l\":[{t},null],\"d\":{t},\"u\":{t},\"m\":{{\"k\":{t}}}}}\n"
        ),
    );
    assert_eq!(
        values(&values_of(&[Some(0), None]), resolving),
        format!("[{t},null]")
    );
    // Rows split off an encoder (as the parallel writer cuts batches) keep the resolved zone.
    let mut rest = Encoder::batch(&b, JsonFormat::LineDelimited, resolving).unwrap();
    let mut front = rest.split_rows(3).unwrap();
    let mut split = drain(&mut front, &[7]);
    split.extend(drain(&mut rest, &[5]));
    assert_eq!(String::from_utf8(split).unwrap(), rows(local, "t"));
    let no_alloc = std::mem::size_of::<quiver::no_alloc::Encoder<'_>>();
    println!("no_alloc encoder: {no_alloc} bytes");
}

#[test]
fn bad_time_zones_are_refused_naming_the_column() {
    use TimeUnit::*;
    let with_zone = |tz: &str| {
        batch(vec![
            ("a", int32(&[Some(1)])),
            (
                "t",
                structs(
                    vec![(
                        "inner",
                        prim(DataType::Timestamp(Second, Some(tz.into())), &[Some(0i64)]),
                    )],
                    &[true],
                ),
            ),
        ])
    };
    let plain = EncoderOptions::default();
    let resolving = plain.with_time_zones(Some(quiver_std::time_zones()));
    let unknown = with_zone("Invalid/Zone");
    assert_eq!(
        Encoder::batch(&unknown, JsonFormat::LineDelimited, resolving).err(),
        Some(JsonError::UnknownTimeZone { column: 1 })
    );
    // Without a resolver the name cannot be checked: the instant in UTC.
    assert!(Encoder::batch(&unknown, JsonFormat::LineDelimited, plain).is_ok());
    for bad in ["+25:00", "+24:00", "+5"] {
        let b = with_zone(bad);
        for options in [plain, resolving] {
            assert_eq!(
                Encoder::batch(&b, JsonFormat::LineDelimited, options).err(),
                Some(JsonError::InvalidTimeZone { column: 1 }),
                "{bad}"
            );
        }
        // Every zoned timestamp in UTC needs no zone: nothing to refuse.
        let utc = resolving.with_timestamps_utc(true);
        assert!(Encoder::batch(&b, JsonFormat::LineDelimited, utc).is_ok());
    }
    // More distinct named zones than an encoder holds.
    let names = [
        "Europe/Paris",
        "Europe/London",
        "Asia/Tokyo",
        "Asia/Kolkata",
        "America/Chicago",
        "America/Denver",
        "Australia/Sydney",
        "Africa/Cairo",
        "America/Sao_Paulo",
    ];
    let many = batch(
        names
            .iter()
            .map(|name| {
                (
                    *name,
                    prim(
                        DataType::Timestamp(Second, Some((*name).into())),
                        &[Some(0i64)],
                    ),
                )
            })
            .collect(),
    );
    assert_eq!(
        Encoder::batch(&many, JsonFormat::LineDelimited, resolving).err(),
        Some(JsonError::TooManyTimeZones {
            column: 8,
            limit: 8
        })
    );
}

#[test]
fn temporal_values_match_arrow_json() {
    use TimeUnit::*;
    let ts = |unit, tz: Option<&str>, v: i64| {
        prim(
            DataType::Timestamp(unit, tz.map(Into::into)),
            &[Some(v), None],
        )
    };
    let b = batch(vec![
        ("nanos", ts(Nanosecond, None, NANOS)),
        ("micros", ts(Microsecond, None, NANOS / 1_000)),
        ("millis", ts(Millisecond, None, NANOS / 1_000_000)),
        ("secs", ts(Second, None, NANOS / 1_000_000_000)),
        ("utc", ts(Nanosecond, Some("+00:00"), NANOS)),
        ("india", ts(Second, Some("+05:30"), 0)),
        ("named", ts(Millisecond, Some("America/New_York"), 1)),
        ("date32", prim(DataType::Date32, &[Some(17_848i32), None])),
        (
            "date64",
            prim(DataType::Date64, &[Some(NANOS / 1_000_000), None]),
        ),
        (
            "t32s",
            prim(DataType::Time32(Second), &[Some(120i32), None]),
        ),
        (
            "t32ms",
            prim(DataType::Time32(Millisecond), &[Some(120i32), None]),
        ),
        (
            "t64us",
            prim(DataType::Time64(Microsecond), &[Some(120i64), None]),
        ),
        (
            "t64ns",
            prim(DataType::Time64(Nanosecond), &[Some(120i64), None]),
        ),
        (
            "ds",
            prim(DataType::Duration(Second), &[Some(120i64), Some(0)]),
        ),
        (
            "dms",
            prim(DataType::Duration(Millisecond), &[Some(120i64), None]),
        ),
        (
            "dus",
            prim(DataType::Duration(Microsecond), &[Some(120i64), None]),
        ),
        (
            "dns",
            prim(DataType::Duration(Nanosecond), &[Some(-120i64), None]),
        ),
        (
            "ym",
            prim(
                DataType::Interval(IntervalUnit::YearMonth),
                &[Some(14i32), Some(-1)],
            ),
        ),
        (
            "dt",
            prim(
                DataType::Interval(IntervalUnit::DayTime),
                &[Some(day_time(3, 3_600_500)), Some(day_time(0, 0))],
            ),
        ),
        (
            "mdn",
            prim(
                DataType::Interval(IntervalUnit::MonthDayNano),
                &[Some(month_day_nano(1, 2, 3_000_000_001)), None],
            ),
        ),
    ]);
    check(
        &b,
        "{\"nanos\":\"2018-11-13T17:11:10.011375885\",\"micros\":\"2018-11-13T17:11:10.011375\",\
         \"millis\":\"2018-11-13T17:11:10.011\",\"secs\":\"2018-11-13T17:11:10\",\
         \"utc\":\"2018-11-13T17:11:10.011375885Z\",\"india\":\"1970-01-01T05:30:00+05:30\",\
         \"named\":\"1970-01-01T00:00:00.001Z\",\"date32\":\"2018-11-13\",\
         \"date64\":\"2018-11-13T17:11:10.011\",\"t32s\":\"00:02:00\",\"t32ms\":\"00:00:00.120\",\
         \"t64us\":\"00:00:00.000120\",\"t64ns\":\"00:00:00.000000120\",\"ds\":\"PT120S\",\
         \"dms\":\"PT0.12S\",\"dus\":\"PT0.00012S\",\"dns\":\"-PT0.00000012S\",\
         \"ym\":\"P1Y2M\",\"dt\":\"P3DT3600.5S\",\"mdn\":\"P1M2DT3.000000001S\"}\n\
         {\"ds\":\"P0D\",\"ym\":\"-P1M\",\"dt\":\"P0D\"}\n",
    );
    check_with(
        &batch(vec![("t", ts(Nanosecond, Some("UTC"), NANOS))]),
        JsonFormat::LineDelimited,
        EncoderOptions::default()
            .with_timestamps_as_epoch(true)
            .with_large_ints_as_strings(true),
        "{\"t\":\"1542129070011375885\"}\n{\"t\":null}\n",
    );
    check_with(
        &batch(vec![("t", ts(Second, None, 1))]),
        JsonFormat::LineDelimited,
        EncoderOptions::default().with_timestamps_as_epoch(true),
        "{\"t\":1}\n{\"t\":null}\n",
    );
}

fn day_time(days: i32, millis: i32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&days.to_le_bytes());
    b[4..].copy_from_slice(&millis.to_le_bytes());
    b
}

fn month_day_nano(months: i32, days: i32, nanos: i64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..4].copy_from_slice(&months.to_le_bytes());
    b[4..8].copy_from_slice(&days.to_le_bytes());
    b[8..].copy_from_slice(&nanos.to_le_bytes());
    b
}

#[test]
fn options_beyond_arrow_json() {
    let b = batch(vec![
        (
            "big",
            prim(
                DataType::Int64,
                &[Some(1i64 << 53), Some(-(1i64 << 53) - 1)],
            ),
        ),
        ("ubig", prim(DataType::UInt64, &[Some(u64::MAX), None])),
        (
            "f",
            prim(
                DataType::Float32,
                &[Some(f32::NAN), Some(f32::NEG_INFINITY)],
            ),
        ),
        (
            "g",
            prim(DataType::Float64, &[Some(f64::INFINITY), Some(2.5)]),
        ),
    ]);
    check_with(
        &b,
        JsonFormat::LineDelimited,
        EncoderOptions::default()
            .with_large_ints_as_strings(true)
            .with_non_finite_as_strings(true)
            .with_omit_nulls(false),
        "{\"big\":9007199254740992,\"ubig\":\"18446744073709551615\",\"f\":\"NaN\",\"g\":\"Infinity\"}\n\
         {\"big\":\"-9007199254740993\",\"ubig\":null,\"f\":\"-Infinity\",\"g\":2.5}\n",
    );
}

#[test]
fn structs_lists_and_maps() {
    let inner = structs(
        vec![
            ("x", int32(&[Some(1), None, Some(3)])),
            ("y", utf8(&[Some("a"), Some("b"), None])),
        ],
        &[true, true, false],
    );
    let list_child = int32(&[Some(1), None, Some(3), Some(4)]);
    let b = batch(vec![
        ("s", inner),
        (
            "l",
            list(false, list_child.clone(), &[Some(2), Some(0), Some(2)]),
        ),
        (
            "ll",
            list(true, list_child.clone(), &[Some(4), None, Some(0)]),
        ),
        (
            "fsl",
            fixed_list(
                int32(&[Some(1), Some(2), Some(3), Some(4), Some(5), Some(6)]),
                2,
                &[true, false, true],
            ),
        ),
        (
            "lv",
            list_view(list_child, &[Some((2, 2)), Some((0, 3)), None]),
        ),
        (
            "m",
            map(
                utf8(&[Some("k1"), Some("k\"2"), Some("k3")]),
                int32(&[Some(1), None, Some(3)]),
                &[Some(2), None, Some(1)],
            ),
        ),
        (
            "mi",
            map(
                int32(&[Some(7), Some(8)]),
                utf8(&[Some("seven"), None]),
                &[Some(2), Some(0), None],
            ),
        ),
    ]);
    check(
        &b,
        "{\"s\":{\"x\":1,\"y\":\"a\"},\"l\":[1,null],\"ll\":[1,null,3,4],\"fsl\":[1,2],\"lv\":[3,4],\
         \"m\":{\"k1\":1,\"k\\\"2\":null},\"mi\":[{\"key\":7,\"value\":\"seven\"},{\"key\":8}]}\n\
         {\"s\":{\"y\":\"b\"},\"l\":[],\"lv\":[1,null,3],\"mi\":[]}\n\
         {\"l\":[3,4],\"ll\":[],\"fsl\":[5,6],\"m\":{\"k3\":3}}\n",
    );
    check_with(
        &b,
        JsonFormat::JsonArray,
        EncoderOptions::default().with_omit_nulls(false),
        "[{\"s\":{\"x\":1,\"y\":\"a\"},\"l\":[1,null],\"ll\":[1,null,3,4],\"fsl\":[1,2],\"lv\":[3,4],\
         \"m\":{\"k1\":1,\"k\\\"2\":null},\"mi\":[{\"key\":7,\"value\":\"seven\"},{\"key\":8,\"value\":null}]},\
         {\"s\":{\"x\":null,\"y\":\"b\"},\"l\":[],\"ll\":null,\"fsl\":null,\"lv\":[1,null,3],\"m\":null,\"mi\":[]},\
         {\"s\":null,\"l\":[3,4],\"ll\":[],\"fsl\":[5,6],\"lv\":null,\"m\":{\"k3\":3},\"mi\":null}]",
    );
}

#[test]
fn dictionaries_run_ends_and_unions_write_their_values() {
    let b = batch(vec![
        (
            "dict",
            dictionary(
                &[Some(1), None, Some(0), Some(2)],
                utf8(&[Some("zero"), Some("one"), None]),
            ),
        ),
        (
            "ree",
            run_ends(&[2, 3, 4], int32(&[Some(5), None, Some(6)])),
        ),
        (
            "sparse",
            union(
                vec![
                    ("i", int32(&[Some(1), Some(2), None, Some(4)])),
                    ("s", utf8(&[Some("a"), Some("b"), Some("c"), Some("d")])),
                ],
                &[0, 1, 0, 1],
                None,
            ),
        ),
        (
            "dense",
            union(
                vec![
                    ("i", int32(&[Some(10), None])),
                    ("l", list(false, int32(&[Some(1)]), &[Some(1)])),
                ],
                &[1, 0, 0, 1],
                Some(&[0, 0, 1, 0]),
            ),
        ),
    ]);
    check(
        &b,
        "{\"dict\":\"one\",\"ree\":5,\"sparse\":1,\"dense\":[1]}\n\
         {\"ree\":5,\"sparse\":\"b\",\"dense\":10}\n\
         {\"dict\":\"zero\"}\n\
         {\"ree\":6,\"sparse\":\"d\",\"dense\":[1]}\n",
    );
}

#[test]
fn sliced_arrays_write_their_window() {
    let s = structs(
        vec![("x", int32(&[Some(1), Some(2), Some(3), Some(4)]))],
        &[true, false, true, true],
    )
    .slice(1, 3)
    .unwrap();
    let l = list(
        false,
        int32(&[Some(1), Some(2), Some(3)]),
        &[Some(1), Some(2), Some(0), Some(0)],
    )
    .slice(1, 3)
    .unwrap();
    let d = dictionary(
        &[Some(0), Some(1), None, Some(1)],
        utf8(&[Some("a"), Some("b")]),
    )
    .slice(1, 3)
    .unwrap();
    let r = run_ends(&[1, 3, 4], int32(&[Some(7), Some(8), Some(9)]))
        .slice(1, 3)
        .unwrap();
    let b = batch(vec![("s", s), ("l", l), ("d", d), ("r", r)]);
    check(
        &b,
        "{\"l\":[2,3],\"d\":\"b\",\"r\":8}\n{\"s\":{\"x\":3},\"l\":[],\"r\":8}\n\
         {\"s\":{\"x\":4},\"l\":[],\"d\":\"b\",\"r\":9}\n",
    );
}

#[test]
fn null_type_columns_are_nulls() {
    let nulls = quiver::array::ArrayView::try_new(quiver::array::ArrayParts {
        data_type: Some(DataType::Null),
        len: 2,
        ..Default::default()
    })
    .unwrap();
    let b = batch(vec![("n", nulls.clone()), ("i", int32(&[Some(1), None]))]);
    check(&b, "{\"i\":1}\n{}\n");
    check_with(
        &b,
        JsonFormat::JsonArray,
        EncoderOptions::default().with_omit_nulls(false),
        "[{\"n\":null,\"i\":1},{\"n\":null,\"i\":null}]",
    );
    assert_eq!(values(&nulls, EncoderOptions::default()), "[null,null]");
}

#[test]
fn documents_span_batches() {
    let one = batch(vec![("a", int32(&[Some(1), Some(2)]))]);
    let empty = batch(vec![("a", int32(&[]))]);
    let two = batch(vec![("a", int32(&[Some(3)]))]);

    let run = |format, batches: &[&RecordBatch<'_>]| {
        let mut writer = JsonWriter::new(format, EncoderOptions::default());
        let mut out = Vec::new();
        for b in batches {
            let mut encoder = writer.batch(b).unwrap();
            out.extend(drain(&mut encoder, &[3]));
        }
        out.extend_from_slice(writer.finish());
        assert_eq!(writer.finish(), b"");
        String::from_utf8(out).unwrap()
    };
    use JsonFormat::*;
    assert_eq!(
        run(JsonArray, &[&one, &empty, &two]),
        "[{\"a\":1},{\"a\":2},{\"a\":3}]"
    );
    assert_eq!(run(JsonArray, &[&empty, &two, &empty]), "[{\"a\":3}]");
    assert_eq!(run(JsonArray, &[]), "[]");
    assert_eq!(run(JsonArray, &[&empty, &empty]), "[]");
    assert_eq!(
        run(LineDelimited, &[&one, &empty, &two]),
        "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n"
    );
    assert_eq!(run(LineDelimited, &[&empty]), "");

    check_with(&empty, JsonArray, EncoderOptions::default(), "[]");
    check_with(&empty, LineDelimited, EncoderOptions::default(), "");
    check_with(
        &one,
        JsonArray,
        EncoderOptions::default(),
        "[{\"a\":1},{\"a\":2}]",
    );
    let no_columns = quiver::array::RecordBatch::try_new(
        std::sync::Arc::new(quiver::schema::Schema::new(vec![])),
        vec![],
        2,
    )
    .unwrap();
    check_with(&no_columns, JsonArray, EncoderOptions::default(), "[{},{}]");
}

#[test]
fn array_encoders_write_values_as_rows() {
    let a = list(false, int32(&[Some(1), Some(2)]), &[Some(2), None, Some(0)]);
    assert_eq!(values(&a, EncoderOptions::default()), "[[1,2],null,[]]");
    let mut encoder =
        Encoder::array(&a, JsonFormat::LineDelimited, EncoderOptions::default()).unwrap();
    assert_eq!(drain(&mut encoder, &[1]), b"[1,2]\nnull\n[]\n");
    let s = utf8(&[Some("x"), None]);
    assert_eq!(values(&s, EncoderOptions::default()), "[\"x\",null]");
}

/// A list nested `levels` deep around one Int32.
fn nested_lists(levels: usize) -> Array {
    let mut a = int32(&[Some(1)]);
    for _ in 0..levels {
        a = list(false, a, &[Some(1)]);
    }
    a
}

#[test]
fn depth_is_checked_at_construction() {
    let deep = batch(vec![("ok", int32(&[Some(1)])), ("deep", nested_lists(31))]);
    let mut encoder =
        Encoder::batch(&deep, JsonFormat::JsonArray, EncoderOptions::default()).unwrap();
    let text = String::from_utf8(drain(&mut encoder, &[1])).unwrap();
    assert_eq!(
        text,
        format!(
            "[{{\"ok\":1,\"deep\":{}1{}}}]",
            "[".repeat(31),
            "]".repeat(31)
        )
    );

    let too_deep = batch(vec![("ok", int32(&[Some(1)])), ("deep", nested_lists(32))]);
    let err =
        Encoder::batch(&too_deep, JsonFormat::JsonArray, EncoderOptions::default()).unwrap_err();
    assert_eq!(
        err,
        JsonError::TooDeep {
            column: 1,
            limit: 32
        }
    );
    assert!(err.to_string().contains("column 1"));
    // A bigger stack takes it.
    let mut bigger: Encoder<'_, 64> =
        EncoderBuilder::new(JsonFormat::JsonArray, EncoderOptions::default())
            .batch(&too_deep)
            .unwrap();
    let mut out = vec![0u8; 4096];
    let p = bigger.encode(&mut out);
    assert!(p.done);
    serde_json::from_slice::<serde_json::Value>(&out[..p.written]).unwrap();
    // An array encoder has no row object: 32 levels fit.
    let lists = nested_lists(32);
    assert_eq!(values(&lists, EncoderOptions::default()).len(), 2 + 64 + 1);
}

#[test]
fn null_map_keys_are_refused() {
    let m = map(
        utf8(&[Some("a"), None]),
        int32(&[Some(1), Some(2)]),
        &[Some(2)],
    );
    let b = batch(vec![("x", int32(&[Some(1)])), ("m", m)]);
    assert_eq!(
        Encoder::batch(&b, JsonFormat::JsonArray, EncoderOptions::default()).unwrap_err(),
        JsonError::NullMapKey { column: 1 }
    );
}

#[test]
fn drivers_write_everything() {
    let long = "é".repeat(700);
    let b = batch(vec![
        ("s", utf8(&[Some(&long), Some("short")])),
        ("i", int32(&[Some(1), Some(2)])),
    ]);
    let expected = encode(&b, JsonFormat::JsonArray, EncoderOptions::default());

    let mut sink: Vec<u8> = Vec::new();
    Encoder::batch(&b, JsonFormat::JsonArray, EncoderOptions::default())
        .unwrap()
        .write_to(&mut sink)
        .unwrap();
    assert_eq!(sink, expected.as_bytes());

    let mut appended = b"prefix".to_vec();
    Encoder::batch(&b, JsonFormat::JsonArray, EncoderOptions::default())
        .unwrap()
        .append_to(&mut appended);
    assert_eq!(&appended[6..], expected.as_bytes());

    assert_eq!(
        to_vec(&b, JsonFormat::JsonArray, EncoderOptions::default()).unwrap(),
        expected.as_bytes()
    );

    let mut async_sink: Vec<u8> = Vec::new();
    let mut encoder = Encoder::batch(&b, JsonFormat::JsonArray, EncoderOptions::default()).unwrap();
    block_on(encoder.write_to_async(&mut async_sink)).unwrap();
    assert_eq!(async_sink, expected.as_bytes());

    // A writer that fails hands its error back unchanged.
    let mut tiny = [0u8; 10];
    let mut slice: &mut [u8] = &mut tiny;
    let err = Encoder::batch(&b, JsonFormat::JsonArray, EncoderOptions::default())
        .unwrap()
        .write_to(&mut slice)
        .unwrap_err();
    assert_eq!(err, embedded_io::SliceWriteError::Full);
}

/// Polls a future that never waits (writing into a `Vec`) to completion.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

#[test]
fn the_encoder_is_small_enough_for_a_stack() {
    let size = std::mem::size_of::<Encoder<'_>>();
    let shallow = std::mem::size_of::<Encoder<'_, 4>>();
    println!("json encoder: {size} bytes with the default depth, {shallow} with depth 4");
    assert!(size <= 8 * 1024 && shallow < size);
}

/// A field of `array` named `name` with the extension type `extension`.
fn extension_field(name: &str, array: &Array, extension: &str) -> quiver::schema::Field {
    let metadata = vec![(
        quiver::schema::EXTENSION_NAME_KEY.to_string(),
        extension.to_string(),
    )];
    field(name, array).with_metadata(metadata)
}

#[test]
fn canonical_extension_types_are_written_as_what_they_mean() {
    use quiver::ipc::{FileWriter, WriterOptions};
    use quiver::schema::Schema;
    use std::sync::Arc;
    let first: [u8; 16] = core::array::from_fn(|i| i as u8);
    let one = 1u128.to_be_bytes();
    let uuids = prim(
        DataType::FixedSizeBinary(16),
        &[Some(first), Some(one), None, Some(one)],
    );
    let json_text = utf8(&[
        Some("{\"a\": [1, 2.5e3],\n\t\"b\": null}"),
        Some("not json"),
        None,
        Some(" \"x\\ny\" "),
    ]);
    let bool8 = prim(DataType::Int8, &[Some(1i8), Some(0), None, Some(-3)]);
    let opaque = prim(DataType::Int8, &[Some(1i8), Some(0), None, Some(2)]);
    let wrong_storage = prim(DataType::Int16, &[Some(1i16), Some(0), None, Some(2)]);
    let fields = vec![
        extension_field("u", &uuids, "arrow.uuid"),
        extension_field("j", &json_text, "arrow.json"),
        extension_field("b", &bool8, "arrow.bool8"),
        extension_field("o", &opaque, "arrow.opaque"),
        extension_field("w", &wrong_storage, "arrow.bool8"),
    ];
    let columns = vec![uuids, json_text, bool8, opaque, wrong_storage];
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns, 4).unwrap();
    let expected = "{\"u\":\"00010203-0405-0607-0809-0a0b0c0d0e0f\",\"j\":{\"a\": [1, 2.5e3],\"b\": null},\"b\":true,\"o\":1,\"w\":1}\n\
         {\"u\":\"00000000-0000-0000-0000-000000000001\",\"j\":\"not json\",\"b\":false,\"o\":0,\"w\":0}\n\
         {\"u\":null,\"j\":null,\"b\":null,\"o\":null,\"w\":null}\n\
         {\"u\":\"00000000-0000-0000-0000-000000000001\",\"j\":\"x\\ny\",\"b\":true,\"o\":2,\"w\":2}\n";
    let lines = JsonFormat::LineDelimited;
    check_with(&batch, lines, EncoderOptions::default(), expected);
    for line in expected.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("each line is one JSON value");
    }
    // Storage only: hex bytes, the text as a string, the integer.
    let storage = "{\"u\":\"000102030405060708090a0b0c0d0e0f\",\"j\":\"{\\\"a\\\": [1, 2.5e3],\\n\\t\\\"b\\\": null}\",\"b\":1,\"o\":1,\"w\":1}\n";
    let as_storage = EncoderOptions::default().with_extensions_as_storage(true);
    assert!(encode(&batch, lines, as_storage).starts_with(storage));
    // Through an IPC file, the reader's schema and the no-alloc view (the extension name read
    // from the flatbuffer field): the same text.
    let mut writer =
        FileWriter::new(Vec::new(), batch.schema().clone(), WriterOptions::default()).unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
    let file = writer.into_inner();
    let read = quiver::ipc::FileReader::open(file.clone(), Default::default())
        .unwrap()
        .batch(0)
        .unwrap();
    check_with(&read, lines, EncoderOptions::default(), expected);
    let mut scratch = [0u8; 8192];
    let mut reader: quiver::no_alloc::FileReader<_> =
        quiver::no_alloc::FileReader::open(&file[..], &mut scratch).unwrap();
    let view: quiver::no_alloc::Batch = reader.batch(0).unwrap();
    let mut encoder: quiver::no_alloc::Encoder =
        quiver::no_alloc::Encoder::new(&view, lines, EncoderOptions::default()).unwrap();
    let mut out = Vec::new();
    encoder.write_through(&mut out, &mut [0u8; 7]).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), expected);
    // Nested: a list of UUIDs and a struct member of JSON.
    let retyped = |array: &Array, data_type: DataType| {
        quiver::array::ArrayView::try_new(quiver::array::ArrayParts {
            data_type: Some(data_type),
            len: array.len(),
            null_count: array.null_count(),
            validity: array
                .validity()
                .map(|v| quiver::bytes::Bytes::from_vec(v.to_vec())),
            buffers: array.buffers().to_vec(),
            children: array.children().to_vec(),
            ..Default::default()
        })
        .unwrap()
    };
    let items = prim(DataType::FixedSizeBinary(16), &[Some(one), None]);
    let item = extension_field("item", &items, "arrow.uuid");
    let uuid_list = retyped(
        &list(false, items, &[Some(2)]),
        DataType::List(Arc::new(item)),
    );
    let member = utf8(&[Some("[true]")]);
    let inner = extension_field("m", &member, "arrow.json");
    let s = retyped(
        &structs(vec![("m", member)], &[true]),
        DataType::Struct(vec![inner].into()),
    );
    let nested = arrays::batch(vec![("l", uuid_list), ("s", s)]);
    check_with(
        &nested,
        lines,
        EncoderOptions::default(),
        "{\"l\":[\"00000000-0000-0000-0000-000000000001\",null],\"s\":{\"m\":[true]}}\n",
    );
}
