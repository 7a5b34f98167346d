//! `quiver json URL` and `quiver schema URL` against `moto_server`, an S3 API on loopback: the
//! same JSON as the local file for every golden file and stream, `--stats` equal to the requests
//! the server logged, `schema` in one request, and one clear error line (exit 1) for a missing
//! object, an unreachable endpoint or a cut file, exit 2 for an unknown scheme.

use quiver_tests::moto::Moto;
use std::path::Path;
use std::process::{Command, Output};

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

/// Exit 1 and one `error: URL: …` line, returned.
fn fails(output: Output, url: &str) -> String {
    let stderr = String::from_utf8(output.stderr).expect("utf-8 stderr");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with(&format!("error: {url}: ")), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

/// The `reads=` count of a `--stats` line.
fn reads_of(stats: &str) -> usize {
    count_of(stats, "reads=")
}

/// The `key=N` count of `--stats`.
fn count_of(stats: &str, key: &str) -> usize {
    stats
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(key))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stats}"))
}

fn trips() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/trips.arrow")
}

fn local(args: &[&str], file: &Path) -> Vec<u8> {
    let output = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .arg(file)
        .output()
        .expect("run quiver");
    ok(output)
}

#[test]
fn every_golden_file_and_stream_converts_from_s3_as_it_does_locally() {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return;
    };
    let Some(moto) = Moto::start() else { return };
    let (mut objects, mut long_streams) = (0, 0);
    for extension in ["arrow_file", "stream"] {
        for (i, file) in quiver_tests::integration_files(&data, extension)
            .iter()
            .enumerate()
        {
            let url = moto.put(
                &format!("golden/{i}.{extension}"),
                &std::fs::read(file).unwrap(),
            );
            let key = url.trim_start_matches(&format!("s3://{}/", quiver_tests::moto::BUCKET));
            let remote = ok(quiver(&moto, &["json", "--explicit-nulls", &url]));
            let expected = local(&["json", "--explicit-nulls"], file);
            assert!(remote == expected, "{} from {url}", file.display());
            // Read whole, it came in the opening request.
            assert_eq!(moto.logged("GET", key), 1, "{url}");
            let len = std::fs::metadata(file).unwrap().len();
            if extension == "stream" && len > 64 * 1024 {
                // Not read whole (a batch range from the first batch, a scan): the 64 KiB tail
                // and, beside it, the object's start (3.2 MiB by the default network, which
                // holds every golden stream), through the async stream reader: one round trip.
                // Sent before the size is known, the start may bring some of the tail again.
                let output = quiver(&moto, &["json", "--stats", "--batches", "0..", &url]);
                let stats = String::from_utf8_lossy(&output.stderr).into_owned();
                assert!(ok(output) == local(&["json"], file), "{url}");
                assert!(stats.contains("reads=2 round_trips=1 "), "{url}: {stats}");
                let read = count_of(&stats, "bytes_read=") as u64;
                assert!(read >= len && read <= len + 65536, "{url}: {stats}");
                assert_eq!(moto.logged("GET", key), 3, "{url}");
                long_streams += 1;
            }
            objects += 1;
        }
    }
    assert!(long_streams > 0);
    println!(
        "remote: {objects} golden objects converted as locally, byte for byte, each in one \
         request; {long_streams} streams longer than 64 KiB in two (one round trip) when not \
         read whole"
    );
}

#[test]
fn stats_are_what_the_server_saw_and_schema_is_one_request() {
    let Some(moto) = Moto::start() else { return };
    let bytes = std::fs::read(trips()).unwrap();
    let url = moto.put("trips.arrow", &bytes);

    let schema = String::from_utf8(ok(quiver(&moto, &["schema", &url]))).unwrap();
    assert!(schema.contains("record batches: 3"), "{schema}");
    assert_eq!(moto.logged("GET", "trips.arrow"), 1, "schema: one request");
    assert_eq!(moto.logged("HEAD", "trips.arrow"), 0);

    let output = quiver(&moto, &["json", "--stats", &url]);
    let stats = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(ok(output) == local(&["json"], &trips()));
    let reads = reads_of(&stats);
    // Every column of every batch: the file arrives whole in the opening request.
    assert_eq!(moto.logged("GET", "trips.arrow"), 1 + reads, "{stats}");
    assert_eq!(reads, 1, "{stats}");
    assert!(stats.contains("round_trips=1"), "{stats}");
    assert!(
        stats.contains(&format!("bytes_read={} ", bytes.len())),
        "{stats}"
    );

    // A projection of every batch (a scan) opens with the 64 KiB tail and, at the same time,
    // the file's start (a whole read's first part, 3.2 MiB, cut where the tail starts): for a
    // file this small that is all of it, every byte once, so the columns need no second round
    // trip.
    let output = quiver(
        &moto,
        &["json", "--stats", "--columns", "rider.name,city", &url],
    );
    let stats = String::from_utf8_lossy(&output.stderr).into_owned();
    let projected = ok(output);
    assert!(projected == local(&["json", "--columns", "rider.name,city"], &trips()));
    assert_eq!(reads_of(&stats), 2, "{stats}");
    assert!(stats.contains("round_trips=1"), "{stats}");
    let read = count_of(&stats, "bytes_read=") as u64;
    assert!(
        read >= bytes.len() as u64 && read <= bytes.len() as u64 + 65536,
        "{stats}"
    );
    assert_eq!(moto.logged("GET", "trips.arrow"), 2 + 2, "{stats}");
    // The first rows, a selection from the first batch, open as a scan too: the first block
    // comes with the footer, in one round trip.
    let output = quiver(&moto, &["json", "--stats", "--limit", "5", &url]);
    let first = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(ok(output) == local(&["json", "--limit", "5"], &trips()));
    assert_eq!(reads_of(&first), 2, "{first}");
    assert!(first.contains("round_trips=1"), "{first}");
    let limited = ok(quiver(
        &moto,
        &["json", "--limit", "5", "--batches", "1..", &url],
    ));
    assert!(limited == local(&["json", "--limit", "5", "--batches", "1.."], &trips()));
    println!("remote: schema 1 request; json {stats}");
}

#[test]
fn a_whole_file_is_read_in_parallel_parts() {
    let Some(moto) = Moto::start() else { return };
    let bytes = quiver_tests::ten_columns::file(100, 2000, Default::default());
    assert!(bytes.len() > 8 * 1024 * 1024, "{}", bytes.len());
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("large.arrow");
    std::fs::write(&file, &bytes).unwrap();
    let url = moto.put("large.arrow", &bytes);

    let output = quiver(&moto, &["json", "--stats", &url]);
    let stats = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(ok(output) == local(&["json"], &file));
    // The object in parallel ranged parts (its first, then the rest), decoded front to back
    // in order as they arrive: every byte once.
    let expected = format!("bytes_read={} ", bytes.len());
    assert!(stats.contains(&expected), "{stats}");
    // A loaded machine can make moto late enough to be hedged: the copies count among the
    // reads, and one that lost may have been dropped before it reached moto.
    let (reads, hedges) = (reads_of(&stats), count_of(&stats, "hedges="));
    let logged = moto.logged("GET", "large.arrow");
    assert!(logged <= reads && logged + hedges >= reads, "{stats}");
    assert!(reads - hedges <= 16, "{stats}");
    // A stream's every batch, some columns: its start with its end, then what lies between
    // in parallel parts (not one GET at one request's bandwidth), every byte once but what
    // the start brought of the end.
    let stream = quiver_tests::ten_columns::stream(100, 2000, Default::default());
    let local_stream = folder.path().join("large.stream");
    std::fs::write(&local_stream, &stream).unwrap();
    let url = moto.put("large.stream", &stream);
    // S3's figures, given (measured on loopback, they would make the parts whatever moto's
    // speed says): parts of at most 1 MiB.
    let output = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["json", "--stats", "--columns", "f64,utf8", &url])
        .envs(moto.env())
        .envs([
            ("QUIVER_FIRST_BYTE_MS", "50"),
            ("QUIVER_REQUEST_MIBPS", "64"),
        ])
        .output()
        .unwrap();
    let streamed = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(ok(output) == local(&["json", "--columns", "f64,utf8"], &local_stream));
    let (reads, hedges) = (reads_of(&streamed), count_of(&streamed, "hedges="));
    let parts = (stream.len() - (3_355_443 + 65_536)).div_ceil(1024 * 1024);
    assert!(reads - hedges >= 2 + parts, "{streamed}");
    assert!(
        count_of(&streamed, "round_trips=") <= 2 + hedges,
        "{streamed}"
    );
    let read = count_of(&streamed, "bytes_read=");
    assert!(
        read >= stream.len() && read <= stream.len() + 65536,
        "{streamed}"
    );
    std::fs::remove_file(&local_stream).unwrap();
    // Cut short, it is the local file's error, after the batches.
    let cut = &bytes[..bytes.len() - 100];
    std::fs::write(&file, cut).unwrap();
    let url = moto.put("cut.arrow", cut);
    let output = quiver(&moto, &["json", &url]);
    let message = fails(output, &url);
    let local = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .arg("json")
        .arg(&file)
        .output()
        .unwrap();
    let local = String::from_utf8(local.stderr).unwrap();
    assert!(local.contains("truncated Arrow IPC file"), "{local}");
    assert_eq!(
        message.trim_start_matches(&format!("error: {url}: ")),
        local.trim_start_matches(&format!("error: {}: ", file.display()))
    );
    // The batches came before the end was found missing: `-o` still writes nothing.
    let out = folder.path().join("out.json");
    let output = quiver(&moto, &["json", "-o", out.to_str().unwrap(), &url]);
    fails(output, &url);
    assert!(!out.exists());
    let leftovers = std::fs::read_dir(folder.path()).unwrap().count();
    assert_eq!(leftovers, 1, "only the local copy: no temporary file left");
    println!(
        "remote: {} bytes in {}; a stream's columns: {streamed}",
        bytes.len(),
        stats.trim()
    );
}

#[test]
fn a_file_whose_stream_does_not_start_as_a_stream_costs_no_more_than_a_whole_read() {
    let Some(moto) = Moto::start() else { return };
    let folder = tempfile::tempdir().unwrap();
    // S3's figures, given, so that both files are read in the same parts.
    let network = [
        ("QUIVER_FIRST_BYTE_MS", "50"),
        ("QUIVER_REQUEST_MIBPS", "64"),
    ];
    let json = |url: &str, window: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_quiver"))
            .args(["json", "--stats", url])
            .envs(moto.env())
            .envs(network)
            .env("QUIVER_WINDOW_MIB", window)
            .output()
            .unwrap();
        let stats = String::from_utf8_lossy(&output.stderr).into_owned();
        (ok(output), stats)
    };
    let requests = |stats: &str| reads_of(stats) - count_of(stats, "hedges=");
    let small = std::fs::read(trips()).unwrap();
    let large = quiver_tests::ten_columns::file(100, 2000, Default::default());
    for (name, bytes) in [("small", small), ("large", large)] {
        let polars = quiver_tests::polars_like(&bytes);
        let file = folder.path().join(format!("{name}.arrow"));
        std::fs::write(&file, &polars).unwrap();
        let expected = local(&["json"], &file);
        let (url, polars_url) = (
            moto.put(&format!("{name}.arrow"), &bytes),
            moto.put(&format!("{name}-polars.arrow"), &polars),
        );
        // Held whole from the whole read's parts, then read from memory: the same requests
        // as the file whose stream is read front to back, every byte once (one GET for the
        // small one), no footer or block asked for again.
        let (_, usual) = json(&url, "64");
        let (out, stats) = json(&polars_url, "64");
        assert!(out == expected, "{name}");
        assert!(
            stats.contains(&format!("bytes_read={} ", bytes.len())),
            "{stats}"
        );
        assert_eq!(
            requests(&stats),
            requests(&usual),
            "{name}: {stats} / {usual}"
        );
        let logged = moto.logged("GET", &format!("{name}-polars.arrow"));
        assert!(
            logged <= reads_of(&stats) && logged >= requests(&stats),
            "{stats}"
        );
        if name == "small" {
            assert_eq!(reads_of(&stats), 1, "{stats}");
        } else {
            // Larger than a window of 1 MiB: the stream fails at its first message, its GET
            // is dropped, and the footer and blocks are read by ranges.
            assert!(bytes.len() > 8 * 1024 * 1024, "{}", bytes.len());
            let (out, stats) = json(&polars_url, "1");
            assert!(out == expected, "{stats}");
            assert!(requests(&stats) >= 3, "{stats}");
        }
        println!("remote: {name} polars-like file read whole: {stats}");
    }
}

#[test]
fn bad_urls_objects_and_endpoints_are_one_error_line() {
    let Some(moto) = Moto::start() else { return };
    let unknown = quiver(&moto, &["json", "ftp://host/file.arrow"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("s3://"));

    let missing = "s3://quiver/no/such.arrow";
    let message = fails(quiver(&moto, &["json", missing]), missing);
    assert!(message.contains(&moto.endpoint), "{message}");
    let message = fails(
        quiver(&moto, &["schema", "s3://no-bucket/x.arrow"]),
        "s3://no-bucket/x.arrow",
    );
    assert!(message.contains(&moto.endpoint), "{message}");

    let bytes = std::fs::read(trips()).unwrap();
    let cut = moto.put("cut.arrow", &bytes[..bytes.len() / 2]);
    let message = fails(quiver(&moto, &["json", &cut]), &cut);
    assert!(message.contains("truncated"), "{message}");
    let text = moto.put("notes.csv", b"a,b\n1,2\n");
    let message = fails(quiver(&moto, &["json", &text]), &text);
    assert!(message.contains("looks like"), "{message}");

    // A refused connection (a port nothing listens on), after object_store's few retries.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["json", "s3://quiver/trips.arrow"])
        .envs(moto.env())
        .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
        .output()
        .expect("run quiver");
    let message = fails(output, "s3://quiver/trips.arrow");
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");

    // --output stays atomic: nothing is written when the object is missing.
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("out.json");
    std::fs::write(&out, b"previous").unwrap();
    fails(
        quiver(&moto, &["json", "-o", out.to_str().unwrap(), missing]),
        missing,
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 1);

    let mmap = quiver(&moto, &["json", "--mmap", &cut]);
    assert_eq!(mmap.status.code(), Some(2));
}
