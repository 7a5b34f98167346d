//! The `quiver` command, driven as a process: every golden file converts, the output is JSON
//! line by line, the options select the rows they say, `schema` prints a known file, errors
//! exit 1 with a message and leave no output file, stdin works, and `--stats` matches the
//! library's own counts.

use quiver::format::Block;
use quiver::ipc::{Projection, ScanOptions};
use quiver::json::{EncoderOptions, JsonFormat, JsonWriter};
use quiver::source::Counting;
use quiver::{FileReader, ReaderOptions, RecordBatch, StreamWriter, WriterOptions};
use quiver_std::FileSource;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn quiver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
}

/// The bundled example: 3,000 trips in 3 batches, with a dictionary, a struct and lists.
fn trips() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/trips.arrow")
}

fn run(args: &[&str]) -> Output {
    quiver().args(args).output().expect("run quiver")
}

fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = quiver()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn quiver");
    let mut input = child.stdin.take().expect("stdin");
    let bytes = stdin.to_vec();
    let feeder = std::thread::spawn(move || input.write_all(&bytes));
    let output = child.wait_with_output().expect("wait for quiver");
    feeder.join().expect("feeder").expect("write stdin");
    output
}

/// Exit 0 with nothing on stderr; returns stdout.
fn ok(output: Output) -> Vec<u8> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert!(stderr.is_empty(), "{stderr}");
    output.stdout
}

/// Exit 1 with one `error: …` line; returns that line.
fn fails(output: Output) -> String {
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8(output.stderr).expect("utf-8 stderr");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// Every line of NDJSON, parsed.
fn lines(stdout: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(stdout).expect("utf-8 JSON");
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The library's JSON for `batches` (the reference the command must match).
fn library_json(batches: &[RecordBatch<'_>], format: JsonFormat) -> Vec<u8> {
    let mut document = JsonWriter::new(format, EncoderOptions::default());
    let mut out = Vec::new();
    for batch in batches {
        document.batch(batch).expect("encoder").append_to(&mut out);
    }
    out.extend_from_slice(document.finish());
    out
}

fn read_batches(path: &Path, projection: Option<&[&str]>) -> Vec<RecordBatch<'static>> {
    let bytes = std::fs::read(path).expect("read file");
    let mut reader = FileReader::open(bytes, ReaderOptions::default()).expect("open file");
    if let Some(paths) = projection {
        let projection = Projection::from_paths(reader.schema(), paths).expect("projection");
        reader.set_projection(projection);
    }
    reader
        .batches()
        .collect::<Result<_, _>>()
        .expect("read batches")
}

fn str_arg(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

#[test]
fn every_golden_file_converts() {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return;
    };
    let mut files = quiver_tests::integration_files(&data, "arrow_file");
    files.extend(quiver_tests::integration_files(&data, "stream"));
    assert!(
        !files.is_empty(),
        "no golden files under {}",
        data.display()
    );
    for file in &files {
        let stdout = ok(run(&["json", str_arg(file)]));
        let rows = lines(&stdout).len();
        let text = String::from_utf8(ok(run(&["schema", str_arg(file)]))).expect("utf-8");
        let expected = text
            .lines()
            .find_map(|l| l.strip_prefix("rows: "))
            .and_then(|n| n.parse::<usize>().ok());
        assert_eq!(Some(rows), expected, "{}", file.display());
    }
    println!("cli golden: {} files converted", files.len());
}

#[test]
fn ndjson_is_the_library_json_with_any_threads() {
    let expected = library_json(&read_batches(&trips(), None), JsonFormat::LineDelimited);
    assert_eq!(lines(&expected).len(), 3000);
    for threads in ["1", "2", "3"] {
        let stdout = ok(run(&["json", "--threads", threads, str_arg(&trips())]));
        assert!(stdout == expected, "--threads {threads}");
    }
    let mapped = ok(run(&["json", "--mmap", str_arg(&trips())]));
    assert!(mapped == expected, "--mmap");
}

#[test]
fn columns_keep_the_file_order_and_select_struct_children() {
    let stdout = ok(run(&[
        "json",
        "--columns",
        "rider.name,city,trip_id",
        str_arg(&trips()),
    ]));
    let projected = read_batches(&trips(), Some(&["rider.name", "city", "trip_id"]));
    assert_eq!(stdout, library_json(&projected, JsonFormat::LineDelimited));
    let first = std::str::from_utf8(&stdout)
        .expect("utf-8")
        .lines()
        .next()
        .expect("a row");
    assert!(
        first.starts_with(r#"{"trip_id":1,"city":"Oslo","rider":{"name":"#),
        "{first}"
    );
    assert!(!first.contains("member"), "{first}");
}

#[test]
fn batches_and_limit_select_rows() {
    let ids = |stdout: &[u8]| -> Vec<i64> {
        lines(stdout)
            .iter()
            .map(|row| row["trip_id"].as_i64().expect("trip_id"))
            .collect()
    };
    let second = ids(&ok(run(&["json", "--batches", "1..2", str_arg(&trips())])));
    assert_eq!(second, (1001..=2000).collect::<Vec<_>>());
    let tail = ids(&ok(run(&["json", "--batches", "2..", str_arg(&trips())])));
    assert_eq!(tail, (2001..=3000).collect::<Vec<_>>());
    let five = ids(&ok(run(&["json", "--limit", "5", str_arg(&trips())])));
    assert_eq!(five, [1, 2, 3, 4, 5]);
    let across = ids(&ok(run(&[
        "json",
        "--batches",
        "1..",
        "--limit",
        "1500",
        str_arg(&trips()),
    ])));
    assert_eq!(across, (1001..=2500).collect::<Vec<_>>());
    let past_the_end = ok(run(&["json", "--batches", "7..9", str_arg(&trips())]));
    assert!(past_the_end.is_empty());
}

#[test]
fn array_format_is_one_json_array() {
    let stdout = ok(run(&["json", "--format", "array", str_arg(&trips())]));
    let rows: Vec<Value> = serde_json::from_slice(&stdout).expect("one JSON array");
    assert_eq!(rows.len(), 3000);
    // The library's array (arrow-json's document) and the newline that ends the output.
    let mut expected = library_json(&read_batches(&trips(), None), JsonFormat::JsonArray);
    assert_eq!(expected.last(), Some(&b']'));
    expected.push(b'\n');
    assert_eq!(stdout, expected);
    let limited = ok(run(&[
        "json",
        "--format",
        "array",
        "--limit",
        "2",
        "--explicit-nulls",
        str_arg(&trips()),
    ]));
    let rows: Vec<Value> = serde_json::from_slice(&limited).expect("one JSON array");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["trip_id"], 1);
    let none = ok(run(&[
        "json",
        "--format",
        "array",
        "--limit",
        "0",
        str_arg(&trips()),
    ]));
    assert_eq!(none, b"[]\n");
}

#[test]
fn schema_of_the_bundled_file() {
    let stdout = ok(run(&["schema", str_arg(&trips())]));
    let expected = "\
format: Arrow IPC file
fields:
  trip_id: int64 not null
  city: dictionary<values=string, indices=int32, ordered=0> (dictionary id 0)
  started_at: timestamp[ms, tz=UTC] not null
  minutes: int32
  distance_km: double
  rider: struct<name: string, member: bool>
  stops: list<item: string> not null
dictionary batches: 1
record batches: 3
rows: 3000
";
    assert_eq!(String::from_utf8(stdout).expect("utf-8"), expected);
}

/// The files a folder holds, by name.
fn names_in(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .expect("read folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_corrupt_input_exits_1_and_leaves_no_output_file() {
    let folder = tempfile::tempdir().expect("temp folder");
    let bytes = std::fs::read(trips()).expect("read trips");
    let blocks: Vec<Block> = FileReader::open(bytes.as_slice(), ReaderOptions::default())
        .expect("open trips")
        .record_batch_blocks()
        .to_vec();

    // Batch 1's message is garbage: batch 0 converts, then the run fails.
    let mut corrupt = bytes.clone();
    let at = blocks[1].offset as usize;
    corrupt[at..at + 16].fill(0x5A);
    let input = folder.path().join("corrupt.arrow");
    std::fs::write(&input, &corrupt).expect("write corrupt file");
    let output = folder.path().join("out.json");
    let message = fails(run(&[
        "json",
        "--output",
        str_arg(&output),
        str_arg(&input),
    ]));
    assert!(message.contains("corrupt.arrow"), "{message}");
    assert!(message.contains("batch 1"), "{message}");
    assert!(message.contains("byte offset"), "{message}");
    assert_eq!(names_in(folder.path()), ["corrupt.arrow"]);

    // Cut short: no footer.
    std::fs::write(&input, &bytes[..bytes.len() / 2]).expect("write truncated file");
    let message = fails(run(&[
        "json",
        "--output",
        str_arg(&output),
        str_arg(&input),
    ]));
    assert!(message.contains("corrupt.arrow"), "{message}");
    assert_eq!(names_in(folder.path()), ["corrupt.arrow"]);

    // The same bytes as a stream, cut inside a body: an error after some rows.
    let stream = trips_stream();
    let cut = &stream[..stream.len() * 2 / 3];
    let output_of_stdin = run_with_stdin(&["json", "-"], cut);
    let message = fails(output_of_stdin);
    assert!(message.starts_with("error: -: "), "{message}");

    // Not Arrow at all.
    std::fs::write(&input, b"{\"this is\": \"json\"}\n").expect("write text");
    let message = fails(run(&["json", str_arg(&input)]));
    assert!(message.contains("corrupt.arrow"), "{message}");
    assert!(message.contains("neither an Arrow IPC file"), "{message}");
    let message = fails(run_with_stdin(&["schema", "-"], b""));
    assert!(message.contains("neither an Arrow IPC file"), "{message}");
}

#[test]
fn output_files_appear_whole() {
    let folder = tempfile::tempdir().expect("temp folder");
    let output = folder.path().join("trips.json");
    std::fs::write(&output, b"old contents").expect("write old file");
    let stdout = ok(run(&[
        "json",
        "--output",
        str_arg(&output),
        str_arg(&trips()),
    ]));
    assert!(stdout.is_empty());
    let written = std::fs::read(&output).expect("read output");
    assert_eq!(
        written,
        library_json(&read_batches(&trips(), None), JsonFormat::LineDelimited)
    );
    assert_eq!(names_in(folder.path()), ["trips.json"]);
    // The permissions of any new file (not a temporary file's 0600).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let reference = folder.path().join("reference");
        std::fs::write(&reference, b"").expect("write reference file");
        let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode();
        assert_eq!(mode(&output), mode(&reference));
    }
}

/// The bundled file's batches as an IPC stream.
fn trips_stream() -> Vec<u8> {
    let batches = read_batches(&trips(), None);
    let mut writer = StreamWriter::new(
        Vec::new(),
        batches[0].schema().clone(),
        WriterOptions::default(),
    )
    .expect("stream writer");
    for batch in &batches {
        writer.write(batch).expect("write batch");
    }
    writer.finish().expect("finish stream");
    writer.into_inner()
}

#[test]
fn stdin_takes_streams_and_files() {
    let expected = ok(run(&["json", str_arg(&trips())]));
    let from_stream = ok(run_with_stdin(&["json", "-"], &trips_stream()));
    assert!(from_stream == expected);
    let file = std::fs::read(trips()).expect("read trips");
    let from_file = ok(run_with_stdin(&["json", "-"], &file));
    assert!(from_file == expected);
    let limited = ok(run_with_stdin(
        &["json", "--batches", "1..", "--limit", "3", "-"],
        &trips_stream(),
    ));
    let ids: Vec<i64> = lines(&limited)
        .iter()
        .map(|row| row["trip_id"].as_i64().expect("trip_id"))
        .collect();
    assert_eq!(ids, [1001, 1002, 1003]);
    let schema = ok(run_with_stdin(&["schema", "-"], &trips_stream()));
    let schema = String::from_utf8(schema).expect("utf-8");
    assert!(schema.starts_with("format: Arrow IPC stream\n"), "{schema}");
    assert!(
        schema.ends_with("record batches: 3\nrows: 3000\n"),
        "{schema}"
    );
}

/// The `key=value` pairs of a `--stats` line.
fn stats(stderr: &[u8]) -> Vec<(String, u64)> {
    let text = std::str::from_utf8(stderr).expect("utf-8 stderr");
    let line = text.lines().last().expect("a stats line");
    line.split(' ')
        .map(|pair| {
            let (key, value) = pair.split_once('=').expect("key=value");
            (key.to_string(), value.parse().expect("a count"))
        })
        .collect()
}

/// What the library's own [`Counting`] records for the scan the command makes: the same
/// readahead (the largest block), the same projection.
fn library_stats(path: &Path, columns: Option<&[&str]>) -> Vec<(String, u64)> {
    let source = Counting::new(FileSource::open(path).expect("open file"));
    let mut reader = FileReader::open(&source, ReaderOptions::default()).expect("open reader");
    if let Some(paths) = columns {
        let projection = Projection::from_paths(reader.schema(), paths).expect("projection");
        reader.set_projection(projection);
    }
    let window = reader
        .record_batch_blocks()
        .iter()
        .map(|b| b.meta_data_length as u64 + b.body_length as u64)
        .max()
        .unwrap_or(0);
    let options = ScanOptions::default().with_readahead(window);
    let batches = reader.num_batches();
    let mut rows = 0;
    let mut json = Vec::new();
    let mut document = JsonWriter::new(JsonFormat::LineDelimited, EncoderOptions::default());
    for batch in reader.scan(0..batches, options) {
        let batch = batch.expect("batch");
        rows += batch.num_rows() as u64;
        document
            .batch(&batch)
            .expect("encoder")
            .append_to(&mut json);
    }
    [
        ("reads", source.read_count() as u64),
        ("round_trips", source.round_trips() as u64),
        ("bytes_read", source.bytes_read()),
        ("batches", batches as u64),
        ("rows", rows),
        ("bytes_written", json.len() as u64),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

#[test]
fn stats_match_the_library_counts() {
    let big = tempfile::tempdir().expect("temp folder");
    let ten = big.path().join("ten_columns.arrow");
    let bytes = quiver_tests::ten_columns::file(6, 2_000, WriterOptions::default());
    std::fs::write(&ten, bytes).expect("write ten-column file");
    for file in [trips(), ten] {
        let expected = library_stats(&file, None);
        for mode in [&[][..], &["--mmap"], &["--threads", "1"]] {
            let mut args = vec!["json", "--stats"];
            args.extend_from_slice(mode);
            args.push(str_arg(&file));
            let output = run(&args);
            assert!(output.status.success(), "{output:?}");
            assert_eq!(
                stats(&output.stderr),
                expected,
                "{} {mode:?}",
                file.display()
            );
            assert_eq!(expected[5].1, output.stdout.len() as u64);
        }
        let columns = [
            "struct.id",
            "i32",
            "dictionary",
            "trip_id",
            "rider.name",
            "city",
        ];
        let schema = String::from_utf8(ok(run(&["schema", str_arg(&file)]))).expect("utf-8");
        let present: Vec<&str> = columns
            .into_iter()
            .filter(|c| schema.contains(&format!("  {}: ", c.split('.').next().unwrap_or(c))))
            .collect();
        let output = run(&[
            "json",
            "--stats",
            "--columns",
            &present.join(","),
            str_arg(&file),
        ]);
        assert!(output.status.success(), "{output:?}");
        assert_eq!(
            stats(&output.stderr),
            library_stats(&file, Some(&present)),
            "{} --columns {present:?}",
            file.display()
        );
    }
    // A stream counts its read calls and bytes.
    let stream = trips_stream();
    let output = run_with_stdin(&["json", "--stats", "-"], &stream);
    let counted = stats(&output.stderr);
    assert_eq!(counted[2], ("bytes_read".to_string(), stream.len() as u64));
    assert_eq!(
        counted[3..5],
        [("batches".into(), 3), ("rows".into(), 3000)]
    );
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let mut child = quiver()
        .args(["json", str_arg(&trips())])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn quiver");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 100];
    stdout.read_exact(&mut first).expect("read the start");
    drop(stdout); // like `| head -c 100`
    let output = child.wait_with_output().expect("wait for quiver");
    assert!(output.status.success(), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
}

#[test]
fn usage_errors_exit_2_and_data_errors_exit_1() {
    assert_eq!(run(&["json"]).status.code(), Some(2));
    assert_eq!(run(&["convert", "x"]).status.code(), Some(2));
    let bad_range = run(&["json", "--batches", "5..2", str_arg(&trips())]);
    assert_eq!(bad_range.status.code(), Some(2));
    assert_eq!(run(&["json", "--threads", "0", "x"]).status.code(), Some(2));

    let message = fails(run(&["json", "no/such/file.arrow"]));
    assert!(message.contains("no/such/file.arrow"), "{message}");
    let message = fails(run(&["json", "--columns", "rider.age", str_arg(&trips())]));
    assert!(message.contains("rider.age"), "{message}");
}

/// A stream of one batch: a timestamp in `zone`, a decimal and a map with a null value.
fn values_stream(zone: &str) -> Vec<u8> {
    use quiver::builder::{AppendValue, ArrayBuilder, MapBuilder, PrimitiveBuilder, StringBuilder};
    use quiver::datatype::{DataType, TimeUnit};
    let mut ts = PrimitiveBuilder::<i64>::with_data_type(DataType::Timestamp(
        TimeUnit::Second,
        Some(zone.into()),
    ));
    ts.extend_options([Some(0i64), Some(1_710_054_000)]);
    let mut dec = PrimitiveBuilder::<i128>::with_data_type(DataType::Decimal128(37, 2));
    dec.extend_options([
        Some(-9_999_999_999_999_999_999_999_999_999_999_999_999_i128),
        None,
    ]);
    let mut map = MapBuilder::new(StringBuilder::new(), PrimitiveBuilder::<i32>::new());
    map.extend_options([Some(vec![("k", None), ("v", Some(1))]), Some(vec![])]);
    let batch = RecordBatch::from_columns([
        ("ts", ts.finish().expect("timestamps")),
        ("dec", dec.finish().expect("decimals")),
        ("m", map.finish().expect("map")),
    ])
    .expect("batch");
    let mut writer =
        StreamWriter::new(Vec::new(), batch.schema().clone(), WriterOptions::default())
            .expect("stream writer");
    writer.write(&batch).expect("write batch");
    writer.finish().expect("finish stream");
    writer.into_inner()
}

#[test]
fn zones_decimals_and_map_keys_as_users_expect() {
    let stream = values_stream("America/New_York");
    let json = |extra: &[&str]| {
        let mut args = vec!["json"];
        args.extend_from_slice(extra);
        args.push("-");
        String::from_utf8(ok(run_with_stdin(&args, &stream))).expect("utf-8")
    };
    // Local time with the offset in effect (daylight time from 2024-03-10T03:00 local); the
    // decimal as a number with every digit; the map's key with a null value kept.
    assert_eq!(
        json(&[]),
        "{\"ts\":\"1969-12-31T19:00:00-05:00\",\"dec\":-99999999999999999999999999999999999.99,\
         \"m\":{\"k\":null,\"v\":1}}\n\
         {\"ts\":\"2024-03-10T03:00:00-04:00\",\"m\":{}}\n"
    );
    assert_eq!(
        json(&["--timestamps-utc", "--decimals-as-strings"]),
        "{\"ts\":\"1970-01-01T00:00:00Z\",\"dec\":\"-99999999999999999999999999999999999.99\",\
         \"m\":{\"k\":null,\"v\":1}}\n\
         {\"ts\":\"2024-03-10T07:00:00Z\",\"m\":{}}\n"
    );
    assert!(json(&["--format", "array"]).ends_with("}]\n"));
    // A zone the database does not know, and an offset beyond a day: errors naming the field.
    for zone in ["Invalid/Zone", "+25:00"] {
        let message = fails(run_with_stdin(&["json", "-"], &values_stream(zone)));
        assert!(message.contains("timezone"), "{message}");
        assert!(message.contains("field `ts`"), "{message}");
        assert!(message.contains(zone), "{message}");
    }
}
