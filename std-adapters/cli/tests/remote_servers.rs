//! `quiver` against servers as they are found: one that ignores `Range` (every option works
//! from its one GET), one that demands a presigned URL's query string, stores that refuse
//! (no such bucket or key, access denied, a wrong signature, no credentials, plain http without
//! `AWS_ALLOW_HTTP`), each said in one line of words, and S3 keys with `?`, `#`, `%` and spaces
//! taken literally. Everything on loopback; the small servers are threads of the test.

use quiver_tests::moto::Moto;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// What a test server does.
#[derive(Clone, Default)]
struct Behaviour {
    /// Answer ranged GETs with `200` and the whole object (`python3 -m http.server`).
    ignore_range: bool,
    /// The query string every request must carry (else `403`).
    query: Option<&'static str>,
    /// Answer every request with this status and body.
    fail: Option<(u16, &'static str)>,
    /// The first this many ranged GETs send half their body, then nothing.
    stall_first: usize,
    /// Bodies go out in 8 pieces, 100 ms apart.
    trickle: bool,
}

/// A server of one object on a loopback port, logging `METHOD target range` per request.
struct Server {
    endpoint: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(object: Vec<u8>, behaviour: Behaviour) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let (object, shared) = (Arc::new(object), Arc::clone(&log));
        std::thread::spawn(move || {
            for socket in listener.incoming() {
                let Ok(socket) = socket else { return };
                let (object, log, behaviour) =
                    (Arc::clone(&object), Arc::clone(&shared), behaviour.clone());
                std::thread::spawn(move || serve(socket, &object, &log, &behaviour));
            }
        });
        Server { endpoint, log }
    }

    /// The requests of `method` logged so far.
    fn count(&self, method: &str) -> usize {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter(|l| l.starts_with(&format!("{method} ")))
            .count()
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

/// Answers the requests of one connection (kept alive) until it closes.
fn serve(socket: TcpStream, object: &[u8], log: &Mutex<Vec<String>>, behaviour: &Behaviour) {
    let mut write = socket.try_clone().unwrap();
    let mut read = BufReader::new(socket);
    loop {
        let mut line = String::new();
        if read.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut words = line.split_whitespace();
        let (method, target) = (
            words.next().unwrap_or("").to_owned(),
            words.next().unwrap_or("").to_owned(),
        );
        let (mut range, mut body_len) = (None, 0usize);
        loop {
            let mut header = String::new();
            if read.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header == "\r\n" {
                break;
            }
            let lower = header.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("range:") {
                range = Some(value.trim().trim_start_matches("bytes=").to_owned());
            }
            if let Some(value) = lower.strip_prefix("content-length:") {
                body_len = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; body_len];
        if read.read_exact(&mut body).is_err() {
            return;
        }
        let ranged = {
            let mut log = log.lock().unwrap();
            log.push(format!(
                "{method} {target} {}",
                range.as_deref().unwrap_or("-")
            ));
            log.iter().filter(|l| !l.ends_with(" -")).count()
        };
        let stall = range.is_some() && ranged <= behaviour.stall_first;
        let (status, headers, body) = answer(object, &method, &target, range.as_deref(), behaviour);
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{headers}\r\n",
            if method == "HEAD" {
                object.len()
            } else {
                body.len()
            }
        );
        let body = if method == "HEAD" { &[][..] } else { &body[..] };
        if stall {
            let _ = write.write_all(head.as_bytes());
            let _ = write.write_all(&body[..body.len() / 2]);
            let _ = write.flush();
            std::thread::sleep(std::time::Duration::from_secs(20));
            return;
        }
        if write.write_all(head.as_bytes()).is_err() {
            return;
        }
        let pieces = if behaviour.trickle { 8 } else { 1 };
        for piece in body.chunks(body.len().div_ceil(pieces).max(1)) {
            if write.write_all(piece).is_err() || write.flush().is_err() {
                return;
            }
            if behaviour.trickle {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }
}

/// Status, headers (each ending in CRLF) and body of the answer.
fn answer(
    object: &[u8],
    method: &str,
    target: &str,
    range: Option<&str>,
    behaviour: &Behaviour,
) -> (String, String, Vec<u8>) {
    let meta = "Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\nETag: \"q\"\r\n".to_owned();
    if let Some((status, body)) = behaviour.fail {
        return (format!("{status} Refused"), String::new(), body.into());
    }
    if let Some(query) = behaviour.query
        && target.split_once('?').map(|(_, q)| q) != Some(query)
    {
        let body = "<Error><Code>AccessDenied</Code><RequestId>R9</RequestId></Error>";
        return ("403 Forbidden".into(), String::new(), body.into());
    }
    let len = object.len();
    let range = range.filter(|_| method == "GET" && !behaviour.ignore_range);
    let Some((start, end)) = range.and_then(|r| r.split_once('-')) else {
        return ("200 OK".into(), meta, object.to_vec());
    };
    let (start, end) = match (start.parse::<usize>().ok(), end.parse::<usize>().ok()) {
        (None, Some(suffix)) => (len.saturating_sub(suffix), len - 1),
        (Some(start), Some(end)) => (start, end.min(len - 1)),
        (Some(start), None) => (start, len - 1),
        (None, None) => (0, len - 1),
    };
    let headers = format!("{meta}Content-Range: bytes {start}-{end}/{len}\r\n");
    (
        "206 Partial Content".into(),
        headers,
        object[start..=end].to_vec(),
    )
}

fn trips() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/trips.arrow")
}

fn quiver(args: &[&str], env: &[(&str, String)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
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

fn local(args: &[&str], file: &Path) -> Vec<u8> {
    let mut all: Vec<&str> = args.to_vec();
    let file = file.to_str().unwrap();
    all.push(file);
    ok(quiver(&all, &[]))
}

/// The output of `args` for `file` served by a server that answers ranges; the JSON is also
/// the local file's (`schema` of a URL counts no rows).
fn ranged(args: &[&str], file: &Path) -> Vec<u8> {
    let server = Server::start(std::fs::read(file).unwrap(), Behaviour::default());
    let url = format!("{}/data/f.arrow", server.endpoint);
    let mut with_url = args.to_vec();
    with_url.push(&url);
    let remote = ok(quiver(&with_url, &[]));
    if args[0] == "json" {
        assert!(remote == local(args, file), "{args:?} {}", file.display());
    }
    remote
}

/// Every option of the CLI that reads less than the whole object, and the whole read.
const OPTIONS: [&[&str]; 7] = [
    &["json"],
    &["json", "--columns", "city,rider.name"],
    &["json", "--limit", "5"],
    &["json", "--batches", "1.."],
    &[
        "json",
        "--batches",
        "2",
        "--limit",
        "1",
        "--columns",
        "city",
    ],
    &["schema"],
    &["schema", "--format", "json"],
];

#[test]
fn a_server_without_range_support_is_read_from_one_get_for_every_option() {
    let folder = tempfile::tempdir().unwrap();
    let polars = folder.path().join("polars-like.arrow");
    std::fs::write(
        &polars,
        quiver_tests::polars_like(&std::fs::read(trips()).unwrap()),
    )
    .unwrap();
    for file in [trips(), polars] {
        for args in OPTIONS {
            let object = std::fs::read(&file).unwrap();
            let server = Server::start(
                object.clone(),
                Behaviour {
                    ignore_range: true,
                    ..Behaviour::default()
                },
            );
            let url = format!("{}/data/f.arrow", server.endpoint);
            let mut with_url = args.to_vec();
            with_url.push(&url);
            let remote = ok(quiver(&with_url, &[]));
            assert!(remote == ranged(args, &file), "{args:?} {}", file.display());
            // The whole object came in the first answer (a whole read's first part is a ranged
            // GET too, so a polars-like file, whose stream cannot be read from its start, is
            // read by ranges cut from that same answer).
            assert_eq!(server.count("GET"), 1, "{args:?}: {:?}", server.log());
            assert_eq!(server.count("HEAD"), 0, "{args:?}: {:?}", server.log());
            // `--stats` says what the server saw: one request, and the object's bytes (the
            // ranges cut from it are no requests).
            if args[0] == "json" {
                let output = quiver(&[&["json", "--stats"], &with_url[1..]].concat(), &[]);
                let (requests, round_trips, bytes) = stats_of(&output.stderr);
                assert!(ok(output) == remote, "{args:?}");
                assert_eq!((requests, round_trips), (1, 1), "{args:?}");
                // All of it, but for a read that ends before the object has all come.
                let size = object.len() as u64;
                assert!(
                    bytes <= size && (bytes == size || args.len() > 1),
                    "{args:?}"
                );
                assert_eq!(server.count("GET"), 2, "{args:?}: {:?}", server.log());
            }
        }
    }
    println!(
        "servers: a Range-less server read with one GET for each of {} options, polars-like \
         files included",
        OPTIONS.len()
    );
}

/// The request, round trip and bytes `--stats` printed (its first three figures).
fn stats_of(stderr: &[u8]) -> (u64, u64, u64) {
    let stats = String::from_utf8_lossy(stderr);
    let figure = |name: &str| {
        stats
            .split_whitespace()
            .find_map(|f| f.strip_prefix(name)?.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {stats}"))
    };
    (
        figure("reads="),
        figure("round_trips="),
        figure("bytes_read="),
    )
}

#[test]
fn a_range_less_stream_costs_one_request_in_stats_too() {
    // A stream's reader streams what the opening did not bring: from a Range-less server,
    // cut from the object the opening's GET brought whole, which is no request.
    let folder = tempfile::tempdir().unwrap();
    let object = quiver_tests::ten_columns::stream(20, 1000, Default::default());
    let file = folder.path().join("ten.arrows");
    std::fs::write(&file, &object).unwrap();
    let size = object.len() as u64;
    for args in [
        &["json"][..],
        &["json", "--limit", "3"],
        &["json", "--batches", "2..3"],
        &["json", "--columns", "i32"],
    ] {
        let behaviour = Behaviour {
            ignore_range: true,
            ..Behaviour::default()
        };
        let server = Server::start(object.clone(), behaviour);
        let url = format!("{}/data/ten.arrows", server.endpoint);
        let output = quiver(&[&["json", "--stats"], &args[1..], &[&url]].concat(), &[]);
        let (requests, round_trips, bytes) = stats_of(&output.stderr);
        assert!(ok(output) == local(args, &file), "{args:?}");
        assert_eq!(server.count("GET"), 1, "{args:?}: {:?}", server.log());
        assert_eq!((requests, round_trips), (1, 1), "{args:?}");
        // All of it, but for a read that ends before the object has all come.
        assert!(
            bytes <= size && (bytes == size || args.len() > 1),
            "{args:?}"
        );
    }
}

#[test]
fn a_presigned_url_keeps_its_query_on_every_request() {
    let query = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abc%2Fdef&X-Amz-Expires=60";
    let object = std::fs::read(trips()).unwrap();
    let server = Server::start(
        object,
        Behaviour {
            query: Some(query),
            ..Behaviour::default()
        },
    );
    let url = format!("{}/bucket/trips.arrow?{query}", server.endpoint);
    for args in OPTIONS {
        let mut with_url = args.to_vec();
        with_url.push(&url);
        assert!(
            ok(quiver(&with_url, &[])) == ranged(args, &trips()),
            "{args:?}"
        );
    }
    let log = server.log();
    assert!(log.len() > OPTIONS.len(), "ranged reads too: {log:?}");
    for request in &log {
        assert!(
            request.contains(&format!("/bucket/trips.arrow?{query} ")),
            "{request}"
        );
    }
    // Without it, the server's refusal, in words.
    let bare = format!("{}/bucket/trips.arrow", server.endpoint);
    let message = fails(quiver(&["schema", &bare], &[]), &bare);
    assert!(message.contains("access denied"), "{message}");
    assert!(!message.contains("R9"), "no request id: {message}");
    let verbose = fails(quiver(&["schema", "--verbose", &bare], &[]), &bare);
    assert!(verbose.contains("R9"), "{verbose}");
    println!(
        "servers: {} requests, each with the query: {message}",
        log.len()
    );
}

/// The environment of an S3 client of `endpoint`.
fn s3_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID", "quiver".into()),
        ("AWS_SECRET_ACCESS_KEY", "quiver".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ENDPOINT_URL", endpoint.into()),
        ("AWS_ALLOW_HTTP", "true".into()),
    ]
}

#[test]
fn store_refusals_are_said_in_words() {
    let url = "s3://quiver/data/trips.arrow";
    let cases = [
        (
            403,
            "<?xml version=\"1.0\"?>\n<Error><Code>AccessDenied</Code><Message>Access \
             Denied</Message><RequestId>REQ1</RequestId></Error>",
            "access denied",
        ),
        (
            403,
            "<Error><Code>SignatureDoesNotMatch</Code><RequestId>REQ1</RequestId></Error>",
            "signature does not match",
        ),
        (
            403,
            "<Error><Code>InvalidAccessKeyId</Code><RequestId>REQ1</RequestId></Error>",
            "does not know this access key id",
        ),
    ];
    for (status, body, says) in cases {
        let server = Server::start(
            Vec::new(),
            Behaviour {
                fail: Some((status, body)),
                ..Behaviour::default()
            },
        );
        let env = s3_env(&server.endpoint);
        let message = fails(quiver(&["json", url], &env), url);
        assert!(message.contains(says), "{message}");
        assert!(
            message.contains("key `data/trips.arrow` in bucket `quiver`"),
            "{message}"
        );
        assert!(message.contains(&server.endpoint), "{message}");
        assert!(
            !message.contains("REQ1") && !message.contains('<'),
            "{message}"
        );
        let verbose = fails(quiver(&["json", "--verbose", url], &env), url);
        assert!(verbose.contains("REQ1"), "{verbose}");
        println!("servers: {message}");
    }

    // No credentials: the instance-metadata service (here a loopback server) gives none.
    let metadata = Server::start(
        Vec::new(),
        Behaviour {
            fail: Some((403, "denied")),
            ..Behaviour::default()
        },
    );
    let store = Server::start(Vec::new(), Behaviour::default());
    let mut env = s3_env(&store.endpoint);
    env.retain(|(k, _)| !k.starts_with("AWS_ACCESS") && !k.starts_with("AWS_SECRET"));
    env.push(("AWS_METADATA_ENDPOINT", metadata.endpoint.clone()));
    let output = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["schema", url])
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_WEB_IDENTITY_TOKEN_FILE")
        .env_remove("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        .env_remove("AWS_CONTAINER_CREDENTIALS_FULL_URI")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    let message = fails(output, url);
    assert!(
        message.contains("no credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
        "{message}"
    );
    assert!(!message.contains("169.254"), "{message}");
    assert_eq!(store.count("GET"), 0, "nothing was sent unsigned");
    println!("servers: {message}");

    // Plain http without AWS_ALLOW_HTTP: said before any request.
    let mut env = s3_env(&store.endpoint);
    env.retain(|(k, _)| *k != "AWS_ALLOW_HTTP");
    let output = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["schema", url])
        .env_remove("AWS_ALLOW_HTTP")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    let message = fails(output, url);
    assert!(
        message.contains("is plain HTTP: set AWS_ALLOW_HTTP=true"),
        "{message}"
    );
    assert!(store.log().is_empty());
    println!("servers: {message}");
}

#[test]
fn missing_buckets_and_keys_and_literal_keys_on_moto() {
    let Some(moto) = Moto::start() else { return };
    let env = moto.env();
    let bytes = std::fs::read(trips()).unwrap();
    let nob = "s3://no-bucket/x.arrow";
    let message = fails(quiver(&["schema", nob], &env), nob);
    assert!(
        message.ends_with(&format!(
            ": no such bucket `no-bucket` (S3 endpoint {})\n",
            moto.endpoint
        )),
        "{message}"
    );
    let nok = "s3://quiver/no/such.arrow";
    let message = fails(quiver(&["json", nok], &env), nok);
    assert!(
        message.contains("no such object: key `no/such.arrow` in bucket `quiver`"),
        "{message}"
    );
    assert!(
        !message.contains("<?xml") && !message.contains("RequestId"),
        "{message}"
    );

    // A key with `?`, `#`, `%` and a space is the key, byte for byte (as the AWS CLI reads it).
    let key = "dir/a b?v=1#x%20y.arrow";
    let encoded: String = key
        .bytes()
        .map(|b| match b {
            b'/' | b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'_' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    moto.put(&encoded, &bytes);
    let url = format!("s3://quiver/{key}");
    assert!(ok(quiver(&["json", &url], &env)) == local(&["json"], &trips()));
    let schema = String::from_utf8(ok(quiver(&["schema", &url], &env))).unwrap();
    assert!(schema.contains("record batches: 3"), "{schema}");
    // As object_store encodes the key in the request's path.
    let sent = "dir/a%20b%3Fv=1%23x%2520y.arrow";
    assert_eq!(moto.logged("GET", sent), 2, "the key as it is, twice");
    println!("servers: {message}; the key `{key}` read as it is");
}

#[test]
fn stalls_resume_and_time_out_as_quiver_stall_timeout_says() {
    let env = [("QUIVER_STALL_TIMEOUT", "0.3".to_owned())];
    // The opening suffix GET and the next ranged GET stall halfway: each resumes.
    let server = Server::start(
        std::fs::read(trips()).unwrap(),
        Behaviour {
            stall_first: 2,
            ..Behaviour::default()
        },
    );
    let url = format!("{}/data/trips.arrow", server.endpoint);
    let output = quiver(&["json", "--stats", "--columns", "city", &url], &env);
    let stats = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(ok(output) == local(&["json", "--columns", "city"], &trips()));
    assert!(stats.contains(" hedges=0 retries=2"), "{stats}");
    let gets = server.count("GET");
    assert!(
        stats.contains(&format!("reads={gets} ")),
        "{stats} {:?}",
        server.log()
    );

    // Always stalling: one line saying it timed out, with the object and the wait.
    let server = Server::start(
        std::fs::read(trips()).unwrap(),
        Behaviour {
            stall_first: usize::MAX,
            ..Behaviour::default()
        },
    );
    let url = format!("{}/data/trips.arrow", server.endpoint);
    let message = fails(quiver(&["schema", &url], &env), &url);
    assert!(
        message.contains("timed out: no byte of `data/trips.arrow` bytes "),
        "{message}"
    );
    assert!(message.contains("arrived for 300ms, 4 times"), "{message}");
    assert_eq!(server.count("GET"), 4, "{:?}", server.log());
    let usage = quiver(
        &["schema", &url],
        &[("QUIVER_STALL_TIMEOUT", "soon".to_owned())],
    );
    assert_eq!(usage.status.code(), Some(2));
    println!("servers: {stats}; {message}");
}

#[test]
fn a_range_less_body_that_keeps_arriving_is_read_as_it_arrives() {
    // 8 pieces 100 ms apart: 700 ms for the body, never 300 ms without a byte.
    let server = Server::start(
        std::fs::read(trips()).unwrap(),
        Behaviour {
            ignore_range: true,
            trickle: true,
            ..Behaviour::default()
        },
    );
    let url = format!("{}/data/trips.arrow", server.endpoint);
    let env = [("QUIVER_STALL_TIMEOUT", "0.3".to_owned())];
    let output = quiver(&["json", "--stats", "--columns", "city", &url], &env);
    let stats = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(ok(output) == local(&["json", "--columns", "city"], &trips()));
    assert!(stats.starts_with("reads=1 round_trips=1 "), "{stats}");
    assert!(stats.contains(" hedges=0 retries=0"), "{stats}");
    assert_eq!(server.count("GET"), 1, "{:?}", server.log());
    println!("servers: a trickling Range-less server, one GET: {stats}");
}

#[test]
fn a_body_that_keeps_arriving_outlasts_any_request_timeout() {
    // object_store's overall request timeout, here 200 ms from the environment, would cut this
    // 700 ms body; a body is cut only when it stalls (300 ms without a byte).
    let server = Server::start(
        std::fs::read(trips()).unwrap(),
        Behaviour {
            trickle: true,
            ..Behaviour::default()
        },
    );
    let url = "s3://quiver/trips.arrow";
    let mut env = s3_env(&server.endpoint);
    env.push(("AWS_TIMEOUT", "200ms".into()));
    env.push(("QUIVER_STALL_TIMEOUT", "0.3".into()));
    let output = quiver(&["json", "--stats", url], &env);
    let stats = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(ok(output) == local(&["json"], &trips()));
    assert!(stats.starts_with("reads=1 round_trips=1 "), "{stats}");
    assert!(stats.contains(" hedges=0 retries=0"), "{stats}");
    assert_eq!(server.count("GET"), 1, "{:?}", server.log());
    println!("servers: a 700 ms body under a 200 ms request timeout, one GET: {stats}");
}
