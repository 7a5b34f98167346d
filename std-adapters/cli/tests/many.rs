//! Many local inputs in one run: folders, globs and several names expand to the files they
//! stand for (hidden and `_` names skipped, sorted by path), whose rows come out as one document
//! equal to converting each file alone and concatenating; `--limit` and `--batches` count
//! across the run; `--with-source` and `--hive-partitions` add their columns; a schema that
//! differs, a cut file or a name matching nothing is an error naming it, and leaves no `-o`
//! file behind; `quiver schema` describes them all.

use quiver::array::{ArrayView, RecordBatch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn quiver(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .output()
        .expect("run quiver")
}

fn ok(output: Output) -> Vec<u8> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert!(stderr.is_empty(), "{stderr}");
    output.stdout
}

/// Exit 1 with one `error:` line, returned.
fn fails(output: Output) -> String {
    let stderr = String::from_utf8(output.stderr).expect("utf-8 stderr");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

/// An IPC file of `batches` ten-column batches of `rows` rows, distinct for each `seed`.
fn ten_columns(batches: u64, rows: usize, seed: u64) -> Vec<u8> {
    let batches: Vec<RecordBatch<'static>> = (0..batches)
        .map(|i| quiver_tests::ten_columns::batch(rows, seed * 100 + i))
        .collect();
    quiver_tests::file_of(&batches)
}

fn write(path: &Path, bytes: &[u8]) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
    path.to_path_buf()
}

/// A folder of three files (one a folder down), with hidden, temporary and `_SUCCESS` names
/// beside them; returns the folder and the three files in the order they are read.
fn folder(root: &Path) -> (PathBuf, Vec<PathBuf>) {
    let dir = root.join("table");
    let files = vec![
        write(&dir.join("part-0.arrow"), &ten_columns(2, 50, 1)),
        write(&dir.join("part-1.arrow"), &ten_columns(1, 70, 2)),
        write(&dir.join("sub/part-2.arrow"), &ten_columns(3, 20, 3)),
    ];
    write(&dir.join("_SUCCESS"), b"");
    write(&dir.join(".part-9.arrow.tmp"), b"not arrow");
    write(&dir.join("_temporary/0/part-5.arrow"), b"not arrow");
    write(&dir.join(".hidden/part-6.arrow"), b"not arrow");
    (dir, files)
}

/// Each file converted alone with `args`, concatenated.
fn one_by_one(args: &[&str], files: &[PathBuf]) -> Vec<u8> {
    let mut all = Vec::new();
    for file in files {
        let mut with = args.to_vec();
        with.push(file.to_str().unwrap());
        all.extend(ok(quiver(&with)));
    }
    all
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

#[test]
fn folders_globs_and_names_read_their_files_in_path_order() {
    let temp = tempfile::tempdir().unwrap();
    let (dir, files) = folder(temp.path());
    let dir_text = dir.to_str().unwrap();
    let expected = one_by_one(&["json"], &files);
    assert_eq!(ok(quiver(&["json", dir_text])), expected, "the folder");
    let glob = format!("{dir_text}/**/*.arrow");
    assert_eq!(ok(quiver(&["json", &glob])), expected, "{glob}");
    let top = format!("{dir_text}/part-?.arrow");
    assert_eq!(
        ok(quiver(&["json", &top])),
        one_by_one(&["json"], &files[..2]),
        "{top}"
    );
    let class = format!("{dir_text}/part-[!0].arrow");
    assert_eq!(
        ok(quiver(&["json", &class])),
        one_by_one(&["json"], &files[1..2]),
        "{class}"
    );
    // Names given one by one are read in the order given, each kept even if hidden.
    let (a, b) = (files[2].to_str().unwrap(), files[0].to_str().unwrap());
    let reversed = [files[2].clone(), files[0].clone()];
    assert_eq!(
        ok(quiver(&["json", a, b])),
        one_by_one(&["json"], &reversed)
    );
    // A glob relative to the current folder names its matches relative too.
    let output = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["json", "--with-source", "*/part-1.arrow"])
        .current_dir(temp.path())
        .output()
        .unwrap();
    let rows = lines(&ok(output));
    assert_eq!(rows[0]["_source"], "table/part-1.arrow");
}

#[test]
fn one_array_and_the_options_span_the_run() {
    let temp = tempfile::tempdir().unwrap();
    let (dir, files) = folder(temp.path());
    let dir_text = dir.to_str().unwrap();
    // One array: every file's rows, in order.
    let array: Value =
        serde_json::from_slice(&ok(quiver(&["json", "--format", "array", dir_text]))).unwrap();
    let rows = lines(&one_by_one(&["json"], &files));
    assert_eq!(array, Value::Array(rows.clone()));
    // --limit across the run: 50 + 50 from the first file, 20 from the second.
    let limited = lines(&ok(quiver(&["json", "--limit", "120", dir_text])));
    assert_eq!(limited, rows[..120]);
    // --batches across the run: the files have 2, 1 and 3 batches; batches 1..4 are the
    // second of the first, the one of the second and the first of the third.
    let selected = lines(&ok(quiver(&["json", "--batches", "1..4", dir_text])));
    assert_eq!(selected, rows[50..50 + 70 + 20 + 50]);
    let past = fails(quiver(&["json", "--batches", "6..", dir_text]));
    assert!(
        past.contains("the 3 inputs have 6 record batches"),
        "{past}"
    );
    // --columns applies to every file.
    let columns = lines(&ok(quiver(&["json", "--columns", "i32", dir_text])));
    assert_eq!(columns.len(), rows.len());
    assert!(columns.iter().all(|r| r.as_object().unwrap().len() == 1));
}

#[test]
fn sources_and_partitions_are_added_as_columns() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("t");
    let a = write(
        &dir.join("date=2026-12-01/region=eu/part-0.arrow"),
        &ten_columns(1, 3, 1),
    );
    let b = write(
        &dir.join("date=2026-12-02/region=us/part-0.arrow"),
        &ten_columns(1, 2, 2),
    );
    let dir_text = dir.to_str().unwrap();
    let text = ok(quiver(&[
        "json",
        "--with-source",
        "--hive-partitions",
        "--columns",
        "i32",
        dir_text,
    ]));
    let rows = lines(&text);
    assert_eq!(rows.len(), 5);
    // After the file's columns, in the order of the path, the source last.
    let first = String::from_utf8_lossy(text.split(|&b| b == b'\n').next().unwrap());
    let at = |key: &str| first.find(&format!("\"{key}\":")).unwrap();
    assert!(at("i32") < at("date") && at("date") < at("region") && at("region") < at("_source"));
    assert_eq!(rows[0]["date"], "2026-12-01");
    assert_eq!(rows[0]["region"], "eu");
    assert_eq!(rows[0]["_source"], a.to_str().unwrap());
    assert_eq!(rows[4]["date"], "2026-12-02");
    assert_eq!(rows[4]["_source"], b.to_str().unwrap());
    // Without the options, the rows are the files'.
    let plain = lines(&ok(quiver(&["json", "--columns", "i32", dir_text])));
    assert!(plain.iter().all(|r| r.as_object().unwrap().len() == 1));
}

#[test]
fn what_cannot_be_read_is_an_error_naming_it_and_leaves_no_output() {
    let temp = tempfile::tempdir().unwrap();
    let (dir, files) = folder(temp.path());
    let dir_text = dir.to_str().unwrap();
    // Nothing matches.
    let nothing = format!("{dir_text}/*.parquet");
    let error = fails(quiver(&["json", &nothing]));
    assert!(
        error.contains(&format!("{nothing}: matches no file")),
        "{error}"
    );
    let empty = temp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let error = fails(quiver(&["json", empty.to_str().unwrap()]));
    assert!(error.contains("matches no file"), "{error}");
    // A schema that differs, after the first file.
    let other = quiver_tests::file_of(&[RecordBatch::from_columns([(
        "x",
        ArrayView::from_values([1i64, 2]).unwrap(),
    )])
    .unwrap()]);
    let odd = write(&dir.join("part-1b.arrow"), &other);
    let out = temp.path().join("out.json");
    let out_text = out.to_str().unwrap();
    let error = fails(quiver(&["json", "-o", out_text, dir_text]));
    assert!(
        error.contains(&format!(
            "{}: its schema is not that of {}",
            odd.display(),
            files[0].display()
        )),
        "{error}"
    );
    assert!(
        error.contains("field 0 is `x: int64` here, `i32: int32` there"),
        "{error}"
    );
    std::fs::remove_file(&odd).unwrap();
    // A file cut short, in the middle of the run.
    let whole = ten_columns(2, 50, 7);
    let cut = write(&dir.join("part-1c.arrow"), &whole[..whole.len() - 100]);
    let error = fails(quiver(&["json", "-o", out_text, dir_text]));
    assert!(
        error.starts_with(&format!("error: {}: ", cut.display())),
        "{error}"
    );
    // Neither the output nor a partial file was left.
    let left: Vec<_> = std::fs::read_dir(temp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    // An empty file is an error unless skipped.
    std::fs::remove_file(&cut).unwrap();
    let blank = write(&dir.join("part-1d.arrow"), b"");
    let error = fails(quiver(&["json", dir_text]));
    assert!(
        error.starts_with(&format!("error: {}: ", blank.display())),
        "{error}"
    );
    assert_eq!(
        ok(quiver(&["json", "--skip-empty", dir_text])),
        one_by_one(&["json"], &files)
    );
    // The output may not be one of the inputs.
    let output = quiver(&["json", "-o", files[1].to_str().unwrap(), dir_text]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn schema_describes_every_input() {
    let temp = tempfile::tempdir().unwrap();
    let (dir, files) = folder(temp.path());
    let text = String::from_utf8(ok(quiver(&["schema", dir.to_str().unwrap()]))).unwrap();
    assert!(text.starts_with("fields:\n  i32: int32\n"), "{text}");
    assert!(
        text.contains("inputs: 3\nrecord batches: 6\nrows: 230\n"),
        "{text}"
    );
    let line = format!(
        "  {}: file, 3 record batches, 60 rows\n",
        files[2].display()
    );
    assert!(text.contains(&line), "{text}");
    let json: Value = serde_json::from_slice(&ok(quiver(&[
        "schema",
        "--format",
        "json",
        dir.to_str().unwrap(),
    ])))
    .unwrap();
    assert_eq!(json["inputs"], 3);
    assert_eq!(json["rows"], 230);
    assert_eq!(json["files"][1]["rows"], 70);
    assert_eq!(json["files"][1]["input"], files[1].to_str().unwrap());
}
