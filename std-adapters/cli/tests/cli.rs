//! The `quiver` command, driven as a process: every golden file converts, the output is JSON
//! line by line, the options select the rows they say, `schema` prints a known file, errors
//! exit 1 with a message and leave no output file, stdin works, and `--stats` matches the
//! library's own counts. `-o`'s rules (devices, FIFOs, descriptors, links, modes and owners,
//! the input refused, signals) have a test each in `mod output`.

use quiver::array::RecordBatch;
use quiver::format::Block;
use quiver::ipc::{
    FileReader, Projection, ReaderOptions, ScanOptions, StreamWriter, WriterOptions,
};
use quiver::json::{EncoderOptions, JsonFormat, JsonWriter};
use quiver::source::Counting;
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
    // A run that stops reading early (`--batches`, `--limit`, an error) closes the pipe.
    match feeder.join().expect("feeder") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
        _ => {}
    }
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
    // Starting past the last batch is an error naming the count; ending past it is not.
    let message = fails(run(&["json", "--batches", "7..9", str_arg(&trips())]));
    assert!(
        message.ends_with(
            "--batches 7..9 starts past the last batch: the file has 3 record batches\n"
        ),
        "{message}"
    );
    let message = fails(run(&["json", "--batches", "3..", str_arg(&trips())]));
    assert!(message.contains("--batches 3.. starts past"), "{message}");
    let last = ids(&ok(run(&["json", "--batches", "2..9", str_arg(&trips())])));
    assert_eq!(last.len(), 1000);
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
    let cut = &bytes[..bytes.len() / 2];
    std::fs::write(&input, cut).expect("write truncated file");
    let message = fails(run(&[
        "json",
        "--output",
        str_arg(&output),
        str_arg(&input),
    ]));
    assert!(message.contains("corrupt.arrow"), "{message}");
    assert!(
        message.contains(&format!(
            ": truncated Arrow IPC file: it starts with ARROW1, but its {} bytes do not end \
             with the footer length and ARROW1 magic (10 bytes)\n",
            cut.len()
        )),
        "{message}"
    );
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
    assert!(message.contains("this looks like JSON text"), "{message}");
    let message = fails(run_with_stdin(&["schema", "-"], b""));
    assert_eq!(message, "error: -: empty input\n");
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

/// `row` with only the member `names` leads to (through struct members), or `None` when the
/// row holds nothing there.
fn select(row: &Value, names: &[&str]) -> Option<Value> {
    let Some((name, rest)) = names.split_first() else {
        return Some(row.clone());
    };
    let Value::Object(members) = row else {
        return Some(row.clone()); // a null struct stays null
    };
    let value = members.get(*name)?;
    let selected = if rest.is_empty() {
        value.clone()
    } else {
        select(value, rest)?
    };
    Some(Value::Object(
        [(name.to_string(), selected)].into_iter().collect(),
    ))
}

#[test]
fn every_selection_of_every_golden_file_is_the_whole_read_cut_down() {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return;
    };
    let mut selections = 0;
    for file in quiver_tests::integration_files(&data, "arrow_file") {
        let reader = FileReader::open(
            std::fs::read(&file).expect("read"),
            ReaderOptions::default(),
        )
        .expect("open");
        let fields = reader.schema().fields().to_vec();
        for input in [file.clone(), file.with_extension("stream")] {
            let whole = lines(&ok(run(&["json", "--explicit-nulls", str_arg(&input)])));
            for (indexes, path) in quiver_tests::paths::selections(&fields) {
                if quiver_tests::paths::is_ambiguous(&fields, &indexes) {
                    let message = fails(run(&["json", "--columns", &path, str_arg(&input)]));
                    assert!(message.contains("more than one field"), "{message}");
                    continue;
                }
                let mut names = Vec::new();
                let mut level = fields.as_slice();
                for &i in &indexes {
                    names.push(level[i].name());
                    level = level[i].data_type().children();
                }
                let args = [
                    "json",
                    "--explicit-nulls",
                    "--columns",
                    &path,
                    str_arg(&input),
                ];
                let expected: Vec<Value> = whole
                    .iter()
                    .map(|row| select(row, &names).unwrap_or_else(|| serde_json::json!({})))
                    .collect();
                assert_eq!(
                    lines(&ok(run(&args))),
                    expected,
                    "{} {path}",
                    input.display()
                );
                if input == file {
                    let mapped = lines(&ok(run(&[&args[..], &["--mmap"]].concat())));
                    assert_eq!(mapped, expected, "{} --mmap {path}", input.display());
                }
                selections += 1;
            }
        }
    }
    println!("cli: {selections} selections of golden files (also --mmap) and streams equal");
}

#[test]
fn column_paths_that_cannot_select_are_errors_naming_them() {
    for (path, says) in [
        ("trip_id.nope", "not a struct"),
        ("stops.name", "not a struct"),
        ("rider.nope", "no such field"),
    ] {
        let message = fails(run(&["json", "--columns", path, str_arg(&trips())]));
        assert!(
            message.contains(path) && message.contains(says),
            "{path}: {message}"
        );
    }
    let empty = run(&["json", "--columns", "city,", str_arg(&trips())]);
    assert_eq!(empty.status.code(), Some(2), "{empty:?}");
    let stderr = String::from_utf8_lossy(&empty.stderr);
    assert!(stderr.contains("entry 2 of `city,` is empty"), "{stderr}");
}

#[test]
fn escaped_paths_select_names_with_dots_commas_and_backslashes() {
    use quiver::datatype::DataType;
    use quiver::ipc::FileWriter;
    use quiver::schema::{Field, Schema};
    use quiver_tests::arbitrary::{Value, build};
    use std::sync::Arc;
    let point = DataType::Struct(
        vec![
            Field::new("x.y", DataType::Int32, true),
            Field::new(r"e\f", DataType::Int32, true),
        ]
        .into(),
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("a.b", DataType::Int32, true),
        Field::new("c,d", DataType::Int32, true),
        Field::new("s", point, true),
    ]));
    let int = |v: i32| Value::Fixed(v.to_le_bytes().to_vec());
    let columns = vec![
        build(&schema.fields()[0], &[int(1)]).expect("a.b"),
        build(&schema.fields()[1], &[int(2)]).expect("c,d"),
        build(&schema.fields()[2], &[Value::Struct(vec![int(3), int(4)])]).expect("s"),
    ];
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns, 1).expect("batch");
    let folder = tempfile::tempdir().expect("temp folder");
    let path = folder.path().join("names.arrow");
    let mut writer = FileWriter::new(Vec::new(), schema, WriterOptions::default()).expect("writer");
    writer.write(&batch).expect("write");
    writer.finish().expect("finish");
    std::fs::write(&path, writer.into_inner()).expect("write file");

    for (columns, expected) in [
        (r"a\.b", r#"{"a.b":1}"#),
        (r"c\,d", r#"{"c,d":2}"#),
        (r"s.x\.y,a\.b", r#"{"a.b":1,"s":{"x.y":3}}"#),
        (r"s.e\\f", r#"{"s":{"e\\f":4}}"#),
    ] {
        let stdout = ok(run(&["json", "--columns", columns, str_arg(&path)]));
        assert_eq!(
            String::from_utf8_lossy(&stdout).trim_end(),
            expected,
            "{columns}"
        );
    }
    // A name with a `.` or `,` typed as it is: what exists (escaped as `--columns` takes it),
    // and how to write the one meant.
    let message = fails(run(&["json", "--columns", "a.b", str_arg(&path)]));
    assert!(message.contains("no such field"), "{message}");
    assert!(
        message.contains(r"the fields there are: a\.b, c\,d, s"),
        "{message}"
    );
    assert!(
        message.contains(r"(`a.b` is one field: write it `a\.b`)"),
        "{message}"
    );
    let message = fails(run(&["json", "--columns", "c,d", str_arg(&path)]));
    assert!(message.contains(r"write it `c\,d`"), "{message}");
    let message = fails(run(&["json", "--columns", "s.z", str_arg(&path)]));
    assert!(
        message
            .trim_end()
            .ends_with(r"the fields there are: x\.y, e\\f"),
        "{message}"
    );
}

#[test]
fn completions_and_the_manual_page_are_printed() {
    for (shell, says) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef quiver"),
        ("fish", "complete -c quiver"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = String::from_utf8(ok(run(&["completions", shell]))).expect("utf-8");
        assert!(script.contains(says), "{shell}: {script}");
        assert!(
            script.contains("omit-nulls"),
            "{shell} completes the options"
        );
    }
    let page = String::from_utf8(ok(run(&["man"]))).expect("utf-8");
    assert!(
        page.starts_with(".ie") || page.contains(".TH quiver"),
        "{page}"
    );
    let unknown = run(&["completions", "tcsh"]);
    assert_eq!(unknown.status.code(), Some(2), "{unknown:?}");
}

/// `-o`'s rules, one test per kind of target; every file lives in the test's own folder.
#[cfg(unix)]
mod output {
    use super::*;
    use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};

    fn expected() -> Vec<u8> {
        library_json(&read_batches(&trips(), None), JsonFormat::LineDelimited)
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("metadata").mode() & 0o7777
    }

    fn json_to(output: &Path) -> Output {
        run(&["json", "-o", str_arg(output), str_arg(&trips())])
    }

    /// Exit 2 with one `error: …` line saying the output is the input.
    fn refused(output: Output) {
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stderr = String::from_utf8(output.stderr).expect("utf-8 stderr");
        assert!(stderr.starts_with("error: --output "), "{stderr}");
        assert!(stderr.contains("is the input"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(output.stdout.is_empty());
    }

    #[test]
    fn the_input_is_refused_under_any_name() {
        let folder = tempfile::tempdir().expect("temp folder");
        let dir = folder.path();
        std::fs::create_dir(dir.join("sub")).expect("sub folder");
        let input = dir.join("sub/in.arrow");
        let bytes = std::fs::read(trips()).expect("read trips");
        std::fs::write(&input, &bytes).expect("write input");
        std::os::unix::fs::symlink("sub/in.arrow", dir.join("link")).expect("link");
        std::os::unix::fs::symlink("link", dir.join("link2")).expect("link to the link");
        std::fs::hard_link(&input, dir.join("hard")).expect("hard link");
        let before = names_in(dir);
        for output in [
            input.clone(),
            dir.join("link"),
            dir.join("link2"),
            dir.join("hard"),
            dir.join("sub/../sub/./in.arrow"),
        ] {
            refused(run(&["json", "-o", str_arg(&output), str_arg(&input)]));
            // Also when the input is named through a link.
            refused(run(&["json", "-o", str_arg(&input), str_arg(&output)]));
            assert_eq!(std::fs::read(&input).expect("read input"), bytes);
            assert_eq!(names_in(dir), before);
            assert_eq!(names_in(&dir.join("sub")), ["in.arrow"]);
        }
        // The same path, even before it exists (the input's own error comes first otherwise).
        let missing = dir.join("missing.arrow");
        refused(run(&["json", "-o", str_arg(&missing), str_arg(&missing)]));
        // Stdin has no path: a file of the same name is an ordinary output.
        let out = dir.join("out.json");
        assert!(ok(run_with_stdin(&["json", "-o", str_arg(&out), "-"], &bytes)).is_empty());
        assert_eq!(std::fs::read(&out).expect("read output"), expected());
    }

    #[test]
    fn a_link_stays_a_link_and_its_target_is_replaced() {
        let folder = tempfile::tempdir().expect("temp folder");
        let dir = folder.path();
        std::fs::create_dir(dir.join("data")).expect("data folder");
        let real = dir.join("data/real.json");
        std::fs::write(&real, b"old").expect("write old target");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        // A chain: top -> data/middle -> real.json (relative to data/).
        std::os::unix::fs::symlink("data/middle", dir.join("top")).expect("link");
        std::os::unix::fs::symlink("real.json", dir.join("data/middle")).expect("link");
        for name in ["data/middle", "top"] {
            std::fs::write(&real, b"old").expect("write old target");
            assert!(ok(json_to(&dir.join(name))).is_empty(), "{name}");
            assert_eq!(std::fs::read(&real).expect("read target"), expected());
            assert_eq!(mode(&real), 0o600, "{name}");
            assert_eq!(
                std::fs::read_link(dir.join("top")).expect("top"),
                Path::new("data/middle")
            );
            assert_eq!(
                std::fs::read_link(dir.join("data/middle")).expect("middle"),
                Path::new("real.json")
            );
            assert_eq!(names_in(dir), ["data", "top"]);
            assert_eq!(names_in(&dir.join("data")), ["middle", "real.json"]);
        }

        // A dangling link: its target is created, as `>` would create it, with a new file's
        // permissions; the link stays.
        std::os::unix::fs::symlink("data/new.json", dir.join("dangling")).expect("link");
        assert!(ok(json_to(&dir.join("dangling"))).is_empty());
        assert_eq!(
            std::fs::read(dir.join("data/new.json")).expect("read"),
            expected()
        );
        assert!(
            std::fs::symlink_metadata(dir.join("dangling"))
                .expect("metadata")
                .is_symlink()
        );
        let reference = dir.join("reference");
        std::fs::write(&reference, b"").expect("write reference file");
        assert_eq!(mode(&dir.join("data/new.json")), mode(&reference));

        // A failed run leaves the target as it was, through the link.
        std::fs::write(&real, b"old").expect("write old target");
        let corrupt = dir.join("corrupt.arrow");
        let bytes = std::fs::read(trips()).expect("read trips");
        std::fs::write(&corrupt, &bytes[..bytes.len() / 2]).expect("write cut file");
        fails(run(&[
            "json",
            "-o",
            str_arg(&dir.join("top")),
            str_arg(&corrupt),
        ]));
        assert_eq!(std::fs::read(&real).expect("read target"), b"old");
        assert_eq!(
            names_in(&dir.join("data")),
            ["middle", "new.json", "real.json"]
        );
    }

    #[test]
    fn a_regular_file_keeps_its_mode_and_owner() {
        let folder = tempfile::tempdir().expect("temp folder");
        let out = folder.path().join("out.json");
        for bits in [0o600, 0o640, 0o444, 0o000] {
            std::fs::write(&out, b"old").expect("write old file");
            std::fs::set_permissions(&out, std::fs::Permissions::from_mode(bits)).expect("chmod");
            assert!(ok(json_to(&out)).is_empty());
            assert_eq!(mode(&out), bits, "{bits:o}");
            std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).expect("chmod");
            assert_eq!(std::fs::read(&out).expect("read output"), expected());
        }
        // Another owner and group, where this process may give them (as root); otherwise the
        // file stays ours.
        std::fs::write(&out, b"old").expect("write old file");
        let given = std::os::unix::fs::chown(&out, Some(4321), Some(4322));
        let before = std::fs::metadata(&out).expect("metadata");
        assert!(given.is_ok() == (before.uid() == 4321), "{given:?}");
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        assert!(ok(json_to(&out)).is_empty());
        let after = std::fs::metadata(&out).expect("metadata");
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
        assert_eq!(after.mode() & 0o7777, 0o640);
        assert_eq!(names_in(folder.path()), ["out.json"]);
    }

    #[test]
    fn a_fifo_is_written_through() {
        let folder = tempfile::tempdir().expect("temp folder");
        let fifo = folder.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .expect("mkfifo");
        // A second name for the FIFO: should the run replace `fifo`, opening this one for
        // writing releases the reader (with nothing), so the test fails instead of hanging.
        let keep = folder.path().join("keep");
        std::fs::hard_link(&fifo, &keep).expect("hard link");
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).expect("read the FIFO"))
        };
        let output = json_to(&fifo);
        let flags = rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::NONBLOCK;
        drop(rustix::fs::open(&keep, flags, rustix::fs::Mode::empty()));
        let received = reader.join().expect("reader");
        assert!(ok(output).is_empty());
        assert_eq!(received, expected());
        let kind = std::fs::symlink_metadata(&fifo)
            .expect("metadata")
            .file_type();
        assert!(kind.is_fifo(), "{kind:?}");
        assert_eq!(names_in(folder.path()), ["fifo", "keep"]);
    }

    /// Descriptor names: `/proc/self/fd/1`, and links in the test's folder standing for
    /// `/dev/stdout` and `/dev/fd` (the test never names a file under `/dev`, where a
    /// rename would replace the system's link).
    #[test]
    fn descriptor_names_are_written_through() {
        if !Path::new("/proc/self/fd").is_dir() {
            return;
        }
        let folder = tempfile::tempdir().expect("temp folder");
        let dir = folder.path();
        std::os::unix::fs::symlink("/proc/self/fd/1", dir.join("stdout")).expect("link");
        std::os::unix::fs::symlink("/proc/self/fd", dir.join("fd")).expect("link");
        let names = [
            PathBuf::from("/proc/self/fd/1"),
            dir.join("stdout"),
            dir.join("fd/1"),
        ];
        // The child's stdout is a pipe.
        for name in &names {
            let stdout = ok(run(&["json", "-o", str_arg(name), str_arg(&trips())]));
            assert!(stdout == expected(), "{}", name.display());
        }
        // The child's stdout is a regular file: written where it is (as `>` would), not
        // replaced by a rename, so the file keeps its inode and no partial file appears.
        let file = dir.join("out").join("stdout.json");
        std::fs::create_dir(dir.join("out")).expect("folder");
        for name in &names {
            std::fs::write(&file, b"old contents").expect("write");
            let inode = std::fs::metadata(&file).expect("metadata").ino();
            let handle = std::fs::OpenOptions::new()
                .write(true)
                .open(&file)
                .expect("open");
            let output = quiver()
                .args(["json", "-o", str_arg(name), str_arg(&trips())])
                .stdout(handle)
                .output()
                .expect("run quiver");
            assert!(output.status.success(), "{output:?}");
            assert_eq!(std::fs::read(&file).expect("read"), expected());
            assert_eq!(std::fs::metadata(&file).expect("metadata").ino(), inode);
            assert_eq!(names_in(&dir.join("out")), ["stdout.json"]);
            assert_eq!(names_in(dir), ["fd", "out", "stdout"]);
            assert!(
                std::fs::symlink_metadata(dir.join("stdout"))
                    .expect("metadata")
                    .is_symlink()
            );
        }
    }

    #[test]
    fn a_socket_is_refused_and_stays() {
        let folder = tempfile::tempdir().expect("temp folder");
        let socket = folder.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
        let message = fails(json_to(&socket));
        assert!(message.contains("socket"), "{message}");
        let kind = std::fs::symlink_metadata(&socket)
            .expect("metadata")
            .file_type();
        assert!(kind.is_socket(), "{kind:?}");
        assert_eq!(names_in(folder.path()), ["socket"]);
        // A folder is refused too.
        let message = fails(json_to(folder.path()));
        assert!(message.contains("directory"), "{message}");
    }

    #[test]
    fn signals_remove_the_partial_file() {
        let stream = trips_stream();
        let signals = [
            (rustix::process::Signal::INT, 130),
            (rustix::process::Signal::TERM, 143),
            (rustix::process::Signal::HUP, 129),
        ];
        for (signal, code) in signals {
            let folder = tempfile::tempdir().expect("temp folder");
            let out = folder.path().join("out.json");
            std::fs::write(&out, b"previous output").expect("write previous output");
            let mut child = quiver()
                .args(["json", "--threads", "1", "-o", str_arg(&out), "-"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn quiver");
            // The schema and the first batches; the rest never comes, so the run waits with
            // its partial file open.
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(&stream[..stream.len() / 3]).expect("write");
            stdin.flush().expect("flush");
            let partial = |names: &[String]| names.iter().any(|n| n.ends_with(".partial"));
            let mut polls = 0;
            while !partial(&names_in(folder.path())) {
                assert!(
                    polls < 10_000,
                    "no partial file in {:?}",
                    names_in(folder.path())
                );
                polls += 1;
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            let pid = rustix::process::Pid::from_child(&child);
            rustix::process::kill_process(pid, signal).expect("kill");
            let output = child.wait_with_output().expect("wait for quiver");
            drop(stdin);
            assert_eq!(output.status.code(), Some(code), "{signal:?}: {output:?}");
            assert_eq!(names_in(folder.path()), ["out.json"], "{signal:?}");
            assert_eq!(std::fs::read(&out).expect("read"), b"previous output");
        }
    }
}

/// The files the next tests write, in their own temporary folder.
fn write_in(folder: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = folder.join(name);
    std::fs::write(&path, bytes).expect("write test file");
    path
}

#[test]
fn other_formats_and_empty_inputs_say_what_they_are() {
    let folder = tempfile::tempdir().expect("temp folder");
    let mut parquet = b"PAR1".to_vec();
    parquet.extend((0..3_000u32).map(|i| (i % 251) as u8));
    parquet.extend_from_slice(b"\x00\x10\x00\x00PAR1");
    let mut feather = b"FEA1".to_vec();
    feather.extend((0..3_000u32).map(|i| (i % 13) as u8));
    feather.extend_from_slice(b"\x00\x10\x00\x00FEA1");
    let cases: [(&str, &[u8], &str); 5] = [
        ("data.parquet", &parquet, "a Parquet file"),
        ("data.feather", &feather, "a Feather version 1 file"),
        ("data.csv", b"id,name\n1,a\n2,b\n", "text (CSV or similar)"),
        ("data.json", b"[{\"id\": 1}]\n", "JSON text"),
        ("data.ndjson", b"{\"id\": 1}\n{\"id\": 2}\n", "JSON text"),
    ];
    for (name, bytes, looks_like) in cases {
        let path = write_in(folder.path(), name, bytes);
        let expected = format!(
            "error: {}: this looks like {looks_like}; quiver reads Arrow IPC files and streams\n",
            path.display()
        );
        assert_eq!(fails(run(&["json", str_arg(&path)])), expected);
        assert_eq!(fails(run(&["schema", str_arg(&path)])), expected);
        let from_stdin = fails(run_with_stdin(&["json", "-"], bytes));
        assert!(
            from_stdin.starts_with(&format!("error: -: this looks like {looks_like};")),
            "{from_stdin}"
        );
    }
    let empty = write_in(folder.path(), "empty.arrow", b"");
    let expected = format!("error: {}: empty input\n", empty.display());
    assert_eq!(fails(run(&["json", str_arg(&empty)])), expected);
    assert_eq!(fails(run(&["schema", str_arg(&empty)])), expected);
    assert_eq!(
        fails(run_with_stdin(&["json", "-"], b"")),
        "error: -: empty input\n"
    );
}

/// A file of two batches of `rows` rows: `n` (int32, row numbers) and `s` (utf8), where row 2
/// of each batch holds `needle`.
fn file_with_text(rows: usize, names: [&str; 2]) -> Vec<u8> {
    use quiver::array::{ArrayParts, ArrayView};
    use quiver::bytes::Bytes;
    use quiver::datatype::DataType;
    use quiver::ipc::FileWriter;
    use quiver::schema::{Field, Schema};
    let numbers: Vec<u8> = (0..rows as i32).flat_map(|n| n.to_le_bytes()).collect();
    let mut offsets = 0i32.to_le_bytes().to_vec();
    let mut data = Vec::new();
    for row in 0..rows {
        data.extend_from_slice(if row == 2 { b"needle" } else { b"ok" });
        offsets.extend_from_slice(&(data.len() as i32).to_le_bytes());
    }
    let column = |data_type, buffers| {
        ArrayView::try_new(ArrayParts {
            data_type: Some(data_type),
            len: rows,
            buffers,
            ..ArrayParts::default()
        })
        .expect("valid column")
    };
    let schema = std::sync::Arc::new(Schema::new(vec![
        Field::new(names[0], DataType::Int32, false),
        Field::new(names[1], DataType::Utf8, false),
    ]));
    let columns = vec![
        column(DataType::Int32, vec![Bytes::from_vec(numbers)]),
        column(
            DataType::Utf8,
            vec![Bytes::from_vec(offsets), Bytes::from_vec(data)],
        ),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns, rows).expect("batch");
    let mut writer = FileWriter::new(Vec::new(), schema, WriterOptions::default()).expect("writer");
    writer.write(&batch).expect("write batch");
    writer.write(&batch).expect("write batch");
    writer.finish().expect("finish file");
    writer.into_inner()
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
fn invalid_utf8_names_the_field_batch_and_row() {
    let folder = tempfile::tempdir().expect("temp folder");
    let mut bytes = file_with_text(10, ["n", "s"]);
    // The second batch's `needle`.
    let at = bytes
        .windows(6)
        .enumerate()
        .filter(|(_, w)| *w == b"needle")
        .map(|(i, _)| i)
        .nth(1)
        .expect("two needles");
    bytes[at + 4] = 0xFF;
    let path = write_in(folder.path(), "bad_text.arrow", &bytes);
    let message = fails(run(&["json", str_arg(&path)]));
    assert!(
        message.contains(": invalid UTF-8 in row 2, at byte 4 of the value (field `s`, batch 1,"),
        "{message}"
    );
}

#[test]
fn batches_past_the_end_of_a_stream() {
    let stream = trips_stream();
    let message = fails(run_with_stdin(&["json", "--batches", "5..", "-"], &stream));
    assert_eq!(
        message,
        "error: -: --batches 5.. starts past the last batch: the stream has 3 record batches\n"
    );
    let message = fails(run_with_stdin(&["json", "--batches", "3", "-"], &stream));
    assert!(
        message.contains("the stream has 3 record batches"),
        "{message}"
    );
    let last = ok(run_with_stdin(&["json", "--batches", "2..7", "-"], &stream));
    assert_eq!(lines(&last).len(), 1000);
    // Reading stops once the range is done: a stream cut inside its last batch still gives
    // its first batch, and fewer bytes are read than it has.
    let cut = &stream[..stream.len() * 5 / 6];
    let output = run_with_stdin(&["json", "--stats", "--batches", "0", "-"], cut);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(lines(&output.stdout).len(), 1000);
    let counted = stats(&output.stderr);
    assert_eq!(counted[3], ("batches".to_string(), 1));
    assert!(counted[2].1 < cut.len() as u64 / 2, "{counted:?}");
}

/// Exit 2 with one `error: …` line; returns it.
fn usage_error(output: Output) -> String {
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8(output.stderr).expect("utf-8 stderr");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(output.stdout.is_empty());
    stderr
}

#[test]
fn mmap_applies_only_to_regular_files_in_the_file_format() {
    let folder = tempfile::tempdir().expect("temp folder");
    let stream = write_in(folder.path(), "trips.arrows", &trips_stream());
    let message = usage_error(run(&["json", "--mmap", str_arg(&stream)]));
    assert_eq!(
        message,
        format!(
            "error: {}: --mmap does not apply to a stream (it maps files in the file format)\n",
            stream.display()
        )
    );
    let message = usage_error(run_with_stdin(&["json", "--mmap", "-"], &trips_stream()));
    assert!(
        message.contains("--mmap does not apply to a stream"),
        "{message}"
    );
    let file = std::fs::read(trips()).expect("read trips");
    let message = usage_error(run_with_stdin(&["json", "--mmap", "-"], &file));
    assert!(message.contains("--mmap needs a regular file"), "{message}");
    // Not a stream either: the input's own error, exit 1.
    let text = write_in(folder.path(), "notes.txt", b"hello\n");
    let message = fails(run(&["json", "--mmap", str_arg(&text)]));
    assert!(message.contains("this looks like text"), "{message}");
}

#[test]
fn a_negative_limit_is_refused_for_its_value() {
    let message = usage_error(run(&["json", "--limit", "-1", str_arg(&trips())]));
    assert!(
        message.starts_with(
            "error: invalid value '-1' for '--limit <N>': must be a whole number from 0 (the \
             most rows to write)\n"
        ),
        "{message}"
    );
    assert!(!message.contains("-- -1"), "{message}");
    let message = usage_error(run(&["json", "--limit", "many", str_arg(&trips())]));
    assert!(message.contains("'many'"), "{message}");
}

#[test]
fn schema_text_quotes_names_that_would_break_a_line() {
    use quiver::schema::Metadata;
    let folder = tempfile::tempdir().expect("temp folder");
    let bytes = file_with_text(3, ["line\nbreak", "nul\0"]);
    // Give the schema a metadata key with a newline: rewrite the file with that schema.
    let reader = FileReader::open(bytes.as_slice(), ReaderOptions::default()).expect("open");
    let metadata: Metadata = vec![("key\nx".into(), "value\nfake: int8".into())];
    let schema = std::sync::Arc::new(
        quiver::schema::Schema::new(reader.schema().fields().to_vec()).with_metadata(metadata),
    );
    let mut writer =
        quiver::ipc::FileWriter::new(Vec::new(), schema.clone(), WriterOptions::default())
            .expect("writer");
    let mut reader = reader;
    for batch in reader.batches() {
        let batch = batch.expect("batch");
        let batch =
            RecordBatch::try_new(schema.clone(), batch.columns().to_vec(), batch.num_rows())
                .expect("same columns");
        writer.write(&batch).expect("write");
    }
    writer.finish().expect("finish");
    let path = write_in(folder.path(), "names.arrow", &writer.into_inner());
    let text = String::from_utf8(ok(run(&["schema", str_arg(&path)]))).expect("utf-8");
    assert_eq!(
        text,
        r#"format: Arrow IPC file
fields:
  "line\nbreak": int32 not null
  "nul\0": string not null
metadata:
  "key\nx": "value\nfake: int8"
dictionary batches: 0
record batches: 2
rows: 6
"#
    );
    let document: Value =
        serde_json::from_slice(&ok(run(&["schema", "--format", "json", str_arg(&path)])))
            .expect("one JSON document");
    assert_eq!(document["fields"][0]["name"], "line\nbreak");
    assert_eq!(document["fields"][1]["name"], "nul\0");
    assert_eq!(document["metadata"]["key\nx"], "value\nfake: int8");
}

#[test]
fn schema_as_json_for_scripts() {
    let expected_fields = serde_json::json!([
        {"name": "trip_id", "type": "int64", "nullable": false, "metadata": {},
         "dictionary": null, "children": []},
        {"name": "city", "type": "string", "nullable": true, "metadata": {},
         "dictionary": {"id": 0, "index_type": "int32", "ordered": false}, "children": []},
        {"name": "started_at", "type": "timestamp[ms, tz=UTC]", "nullable": false,
         "metadata": {}, "dictionary": null, "children": []},
        {"name": "minutes", "type": "int32", "nullable": true, "metadata": {},
         "dictionary": null, "children": []},
        {"name": "distance_km", "type": "double", "nullable": true, "metadata": {},
         "dictionary": null, "children": []},
        {"name": "rider", "type": "struct<name: string, member: bool>", "nullable": true,
         "metadata": {}, "dictionary": null, "children": [
            {"name": "name", "type": "string", "nullable": true, "metadata": {},
             "dictionary": null, "children": []},
            {"name": "member", "type": "bool", "nullable": true, "metadata": {},
             "dictionary": null, "children": []},
        ]},
        {"name": "stops", "type": "list<item: string>", "nullable": false, "metadata": {},
         "dictionary": null, "children": [
            {"name": "item", "type": "string", "nullable": true, "metadata": {},
             "dictionary": null, "children": []},
        ]},
    ]);
    let stdout = ok(run(&["schema", "--format", "json", str_arg(&trips())]));
    assert_eq!(stdout.last(), Some(&b'\n'));
    assert_eq!(
        stdout.iter().filter(|b| **b == b'\n').count(),
        1,
        "one line"
    );
    let document: Value = serde_json::from_slice(&stdout).expect("one JSON document");
    assert_eq!(
        document,
        serde_json::json!({
            "format": "file",
            "fields": expected_fields,
            "metadata": {},
            "dictionary_batches": 1,
            "record_batches": 3,
            "rows": 3000,
        })
    );
    let stdout = ok(run_with_stdin(
        &["schema", "--format", "json", "-"],
        &trips_stream(),
    ));
    let document: Value = serde_json::from_slice(&stdout).expect("one JSON document");
    assert_eq!(
        document,
        serde_json::json!({
            "format": "stream",
            "fields": expected_fields,
            "metadata": {},
            "record_batches": 3,
            "rows": 3000,
        })
    );
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
    // decimal as a number with every digit; the map's key with a null value kept; a null
    // member written, unless nulls are omitted.
    assert_eq!(
        json(&[]),
        "{\"ts\":\"1969-12-31T19:00:00-05:00\",\"dec\":-99999999999999999999999999999999999.99,\
         \"m\":{\"k\":null,\"v\":1}}\n\
         {\"ts\":\"2024-03-10T03:00:00-04:00\",\"dec\":null,\"m\":{}}\n"
    );
    assert_eq!(json(&[]), json(&["--explicit-nulls"]));
    assert_eq!(
        json(&["--omit-nulls", "--timestamps-utc", "--decimals-as-strings"]),
        "{\"ts\":\"1970-01-01T00:00:00Z\",\"dec\":\"-99999999999999999999999999999999999.99\",\
         \"m\":{\"k\":null,\"v\":1}}\n\
         {\"ts\":\"2024-03-10T07:00:00Z\",\"m\":{}}\n"
    );
    assert!(json(&["--format", "array"]).ends_with("}]\n"));
    // A zone the database does not know, and an offset beyond a day: errors naming the field
    // and the way out; with `--timestamps-utc` the instant needs no zone, and no error.
    for zone in ["Invalid/Zone", "+25:00"] {
        let message = fails(run_with_stdin(&["json", "-"], &values_stream(zone)));
        assert!(message.contains("timezone"), "{message}");
        assert!(message.contains("field `ts`"), "{message}");
        assert!(message.contains(zone), "{message}");
        assert!(message.contains("--timestamps-utc writes"), "{message}");
        let args = ["json", "--timestamps-utc", "-"];
        let utc = String::from_utf8(ok(run_with_stdin(&args, &values_stream(zone)))).unwrap();
        assert!(utc.starts_with("{\"ts\":\"1970-01-01T00:00:00Z\""), "{utc}");
    }
}
