//! Many objects in one run, and `-o` to an object store, against `moto_server` on loopback: a
//! prefix of more than 1,000 keys (the listing's pages) and globs read as the same files
//! stored locally; hidden and `_` keys skipped; an empty prefix, a schema that differs and a
//! cut object in the middle are errors naming them, after which no object and no multipart
//! upload is left; `-o s3://…` uploads what `-o FILE` writes; a SIGTERM during the upload
//! leaves nothing.

use quiver::array::{ArrayView, RecordBatch};
use quiver_tests::moto::{BUCKET, Moto};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Output, Stdio};

fn quiver(moto: &Moto, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .envs(moto.env())
        .output()
        .expect("run quiver")
}

fn ok(output: Output) -> Vec<u8> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    output.stdout
}

/// Exit 1 and one `error:` line, returned.
fn fails(output: Output) -> String {
    let stderr = String::from_utf8(output.stderr).expect("utf-8 stderr");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

/// A plain GET of `path` from moto: the status line's code and the body.
fn get(moto: &Moto, path: &str) -> (u16, Vec<u8>) {
    let host = moto.endpoint.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).expect("connect to moto_server");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read");
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("headers end");
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let code = head[9..12].parse().expect("status code");
    let mut body = answer[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = unchunk(&body);
    }
    (code, body)
}

fn unchunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line = body.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&body[..line]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[line + 2..line + 2 + size]);
        body = &body[line + 2 + size + 2..];
    }
}

/// The multipart uploads moto has open in the bucket (ListMultipartUploads).
fn open_uploads(moto: &Moto) -> usize {
    let (code, body) = get(moto, &format!("/{BUCKET}?uploads"));
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    String::from_utf8_lossy(&body).matches("<Upload>").count()
}

fn exists(moto: &Moto, key: &str) -> bool {
    get(moto, &format!("/{BUCKET}/{key}")).0 == 200
}

/// A tiny IPC file of one batch, distinct for each `seed`.
fn tiny(seed: u64) -> Vec<u8> {
    quiver_tests::file_of(&[quiver_tests::ten_columns::batch(2, seed)])
}

/// The number after `key` in `--stats`' line.
fn stats_count(stats: &str, key: &str) -> u64 {
    stats
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {stats}"))
}

fn local_quiver(args: &[&str]) -> Vec<u8> {
    let output = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .output()
        .expect("run quiver");
    ok(output)
}

/// Puts `objects` (key, bytes) on 8 threads.
fn put_all(moto: &Moto, objects: &[(String, Vec<u8>)]) {
    std::thread::scope(|scope| {
        for chunk in objects.chunks(objects.len().div_ceil(8)) {
            scope.spawn(move || {
                for (key, bytes) in chunk {
                    moto.put(key, bytes);
                }
            });
        }
    });
}

#[test]
fn prefixes_of_more_than_a_page_and_globs_read_as_local_folders() {
    let Some(moto) = Moto::start() else { return };
    let temp = tempfile::tempdir().unwrap();
    let local = temp.path().join("many");
    // 1,001 objects: more than one page of a listing (1,000 keys).
    let mut objects: Vec<(String, Vec<u8>)> = (0..1001)
        .map(|i| (format!("many/part-{i:04}.arrow"), tiny(i)))
        .collect();
    objects.push(("many/sub/part-x.arrow".into(), tiny(5000)));
    for (key, bytes) in &objects {
        let path = temp.path().join(key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    // Skipped: hidden and `_` names, at any depth.
    objects.push(("many/_SUCCESS".into(), Vec::new()));
    objects.push(("many/.part-1.arrow.crc".into(), b"x".to_vec()));
    objects.push(("many/_temporary/0/part-9.arrow".into(), b"x".to_vec()));
    put_all(&moto, &objects);
    let prefix = format!("s3://{BUCKET}/many/");
    let remote = ok(quiver(&moto, &["json", &prefix]));
    let expected = local_quiver(&["json", local.to_str().unwrap()]);
    assert_eq!(remote.split(|&b| b == b'\n').count(), 1002 * 2 + 1);
    assert!(
        remote == expected,
        "the prefix differs from the local folder"
    );
    // Globs.
    let glob = format!("s3://{BUCKET}/many/part-00[0-4]?.arrow");
    let local_glob = format!("{}/part-00[0-4]?.arrow", local.display());
    assert_eq!(
        ok(quiver(&moto, &["json", &glob])),
        local_quiver(&["json", &local_glob])
    );
    // One column of each: a scan of an object whose size the listing gave is ONE request,
    // the GET of its start bringing it whole, footer and all; every byte once. (`moto_server`
    // answering 32 objects opened at once can be late enough for copies to be sent; the
    // copies that lost bring no bytes.)
    let output = quiver(&moto, &["json", "--stats", "--columns", "i32", &glob]);
    let stats = String::from_utf8_lossy(&output.stderr).into_owned();
    let local_columns = local_quiver(&["json", "--columns", "i32", &local_glob]);
    assert!(ok(output) == local_columns, "{stats}");
    let bytes: usize = objects[..50].iter().map(|(_, b)| b.len()).sum();
    let count = |key| stats_count(&stats, key);
    assert_eq!(count("reads=") - count("hedges="), 50, "{stats}");
    assert_eq!(count("bytes_read="), bytes as u64, "{stats}");
    let deep = format!("s3://{BUCKET}/many/**/part-x.arrow");
    assert_eq!(
        ok(quiver(&moto, &["json", &deep])),
        local_quiver(&["json", local.join("sub/part-x.arrow").to_str().unwrap()])
    );
    // Nothing under a prefix, or matching a glob.
    for nothing in [
        format!("s3://{BUCKET}/none/"),
        format!("s3://{BUCKET}/many/*.parquet"),
    ] {
        let error = fails(quiver(&moto, &["json", &nothing]));
        assert!(
            error.starts_with(&format!("error: {nothing}: matches no file")),
            "{error}"
        );
    }
    // The schema over the prefix.
    let schema = String::from_utf8(ok(quiver(&moto, &["schema", &prefix]))).unwrap();
    assert!(
        schema.contains("inputs: 1002\nrecord batches: 1002\n"),
        "{schema}"
    );
}

#[test]
fn uploads_appear_only_when_the_run_succeeds() {
    let Some(moto) = Moto::start() else { return };
    let temp = tempfile::tempdir().unwrap();
    let objects: Vec<(String, Vec<u8>)> = (0..5)
        .map(|i| (format!("t/part-{i}.arrow"), tiny(i)))
        .collect();
    put_all(&moto, &objects);
    let prefix = format!("s3://{BUCKET}/t/");
    // A large output, several parts: 40,000 rows of the ten columns.
    let big = quiver_tests::ten_columns::file(10, 4000, Default::default());
    let big_path = temp.path().join("big.arrow");
    std::fs::write(&big_path, &big).unwrap();
    let big_url = moto.put("big/big.arrow", &big);
    for (input, key) in [(&prefix, "out/small.json"), (&big_url, "out/big.json")] {
        let url = format!("s3://{BUCKET}/{key}");
        let local_out = temp.path().join("local.json");
        ok(quiver(
            &moto,
            &["json", input, "-o", local_out.to_str().unwrap()],
        ));
        ok(quiver(&moto, &["json", input, "-o", &url]));
        let (code, body) = get(&moto, &format!("/{BUCKET}/{key}"));
        assert_eq!(code, 200);
        assert!(body == std::fs::read(&local_out).unwrap(), "{url}");
    }
    assert!(std::fs::read(temp.path().join("local.json")).unwrap().len() > 8 << 20);
    assert_eq!(open_uploads(&moto), 0);
    // An output that is an input.
    let output = quiver(
        &moto,
        &["json", &prefix, "-o", &format!("{prefix}part-3.arrow")],
    );
    assert_eq!(output.status.code(), Some(2));
    // A schema that differs, then a cut object, in the middle: nothing is left.
    let other = quiver_tests::file_of(&[RecordBatch::from_columns([(
        "x",
        ArrayView::from_values([1i64]).unwrap(),
    )])
    .unwrap()]);
    let cut = tiny(7);
    put_all(
        &moto,
        &[
            ("s/part-0.arrow".into(), tiny(0)),
            ("s/part-1.arrow".into(), other),
            ("s/part-2.arrow".into(), tiny(2)),
            ("c/part-0.arrow".into(), tiny(0)),
            ("c/part-1.arrow".into(), cut[..cut.len() - 20].to_vec()),
            ("c/part-2.arrow".into(), tiny(2)),
        ],
    );
    let url = format!("s3://{BUCKET}/out/failed.json");
    let error = fails(quiver(
        &moto,
        &["json", &format!("s3://{BUCKET}/s/"), "-o", &url],
    ));
    assert!(
        error.starts_with(&format!(
            "error: s3://{BUCKET}/s/part-1.arrow: its schema is not that of \
             s3://{BUCKET}/s/part-0.arrow"
        )),
        "{error}"
    );
    let cut_prefix = format!("s3://{BUCKET}/c/");
    let error = fails(quiver(&moto, &["json", &cut_prefix, "-o", &url]));
    assert!(
        error.starts_with(&format!("error: {cut_prefix}part-1.arrow: ")),
        "{error}"
    );
    assert!(!exists(&moto, "out/failed.json"));
    assert_eq!(open_uploads(&moto), 0);
    let local_out = temp.path().join("failed.json");
    fails(quiver(
        &moto,
        &["json", &cut_prefix, "-o", local_out.to_str().unwrap()],
    ));
    assert!(!local_out.exists());
    let left = std::fs::read_dir(temp.path()).unwrap().count();
    assert_eq!(left, 2, "only big.arrow and local.json");
}

#[cfg(unix)]
#[test]
fn a_signal_during_an_upload_leaves_no_object_and_no_parts() {
    use quiver::ipc::{StreamWriter, WriterOptions};
    let Some(moto) = Moto::start() else { return };
    let batch = quiver_tests::ten_columns::batch(4000, 1);
    let mut writer =
        StreamWriter::new(Vec::new(), batch.schema().clone(), WriterOptions::default()).unwrap();
    for _ in 0..8 {
        writer.write(&batch).unwrap();
    }
    let stream = writer.into_inner();
    for (signal, code) in [
        (rustix::process::Signal::TERM, 143),
        (rustix::process::Signal::INT, 130),
    ] {
        let url = format!("s3://{BUCKET}/out/interrupted.json");
        let mut child = Command::new(env!("CARGO_BIN_EXE_quiver"))
            .args(["json", "-", "-o", &url])
            .envs(moto.env())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Every batch but the stream's end: the run waits for more, with parts sent.
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&stream).unwrap();
        let started = std::time::Instant::now();
        while open_uploads(&moto) == 0 {
            assert!(started.elapsed().as_secs() < 30, "no upload started");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        std::thread::sleep(std::time::Duration::from_millis(1500));
        rustix::process::kill_process(rustix::process::Pid::from_child(&child), signal).unwrap();
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(code));
        assert_eq!(open_uploads(&moto), 0, "{signal:?}");
        assert!(!exists(&moto, "out/interrupted.json"));
    }
}
