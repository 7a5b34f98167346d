//! A `moto_server` (an S3 API server) on a free loopback port, for the object-store tests: one
//! bucket, objects put with plain HTTP requests (moto checks no signature), and the requests
//! it logged, to compare with what a reader counted.
//!
//! Without `moto_server` on the `PATH` the tests print that they skipped; with
//! `QUIVER_REQUIRE_MOTO=1` (set by `.ci/run`) a missing server is a failure.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The bucket every test server has.
pub const BUCKET: &str = "quiver";

/// A running `moto_server`, stopped when dropped.
pub struct Moto {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    log: Arc<Mutex<String>>,
}

impl Moto {
    /// Starts `moto_server` and makes [`BUCKET`], or returns `None` (printing that the test
    /// skipped) when it is not installed.
    pub fn start() -> Option<Moto> {
        Moto::start_with_env(&[])
    }

    /// [`Moto::start`] with `env` added to the server's environment (e.g.
    /// `MOTO_S3_DEFAULT_KEY_BUFFER_SIZE`, the bytes of an object moto keeps in memory before
    /// spilling it to a temporary file).
    pub fn start_with_env(env: &[(&str, &str)]) -> Option<Moto> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let spawned = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let required = std::env::var("QUIVER_REQUIRE_MOTO").is_ok_and(|v| v == "1");
                assert!(!required, "moto_server: {e}, and QUIVER_REQUIRE_MOTO=1");
                println!("skipped: moto_server not found ({e})");
                return None;
            }
        };
        // moto logs one line per request on stderr.
        let log = Arc::new(Mutex::new(String::new()));
        if let Some(mut stderr) = child.stderr.take() {
            let sink = Arc::clone(&log);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                    sink.lock().expect("log").push_str(&text);
                }
            });
        }
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "moto_server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
            log,
        };
        // A server that accepts connections may still reset the first ones while it starts
        // (seen with several servers starting at once): the bucket is asked for again.
        let bucket = format!("/{BUCKET}");
        while let Err(e) = moto.try_request("PUT", &bucket, &[]) {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "moto_server did not answer: {e}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(moto)
    }

    /// One plain HTTP request, which must be answered 200.
    fn request(&self, method: &str, path: &str, body: &[u8]) {
        self.try_request(method, path, body)
            .unwrap_or_else(|e| panic!("{method} {path} to moto_server: {e}"));
    }

    /// One plain HTTP request: the I/O error, or its answer, which must be 200.
    fn try_request(&self, method: &str, path: &str, body: &[u8]) -> std::io::Result<()> {
        let host = self.endpoint.trim_start_matches("http://");
        let mut stream = TcpStream::connect(host)?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n",
            body.len()
        )?;
        stream.write_all(body)?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer)?;
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "{method} {path}: {answer}"
        );
        Ok(())
    }

    /// Puts `bytes` at `key` in [`BUCKET`]; returns the object's `s3://` URL.
    pub fn put(&self, key: &str, bytes: &[u8]) -> String {
        self.request("PUT", &format!("/{BUCKET}/{key}"), bytes);
        format!("s3://{BUCKET}/{key}")
    }

    /// Puts the file at `file` at `key` in [`BUCKET`] with one PUT whose body is streamed from
    /// disk (for objects too large to hold in memory twice); returns the object's `s3://` URL.
    pub fn put_file(&self, key: &str, file: &std::path::Path) -> String {
        let host = self.endpoint.trim_start_matches("http://");
        let mut body = std::fs::File::open(file).expect("open the file to put");
        let len = body.metadata().expect("the file's size").len();
        let mut stream = TcpStream::connect(host).expect("connect to moto_server");
        write!(
            stream,
            "PUT /{BUCKET}/{key} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len}\r\n\
             Connection: close\r\n\r\n"
        )
        .and_then(|()| std::io::copy(&mut body, &mut stream).map(drop))
        .expect("send the file to moto_server");
        let mut answer = Vec::new();
        stream
            .read_to_end(&mut answer)
            .expect("read moto_server's answer");
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "PUT {key}: {answer}");
        format!("s3://{BUCKET}/{key}")
    }

    /// The environment that points an S3 client at this server, with dummy credentials (so
    /// that no client ever asks an instance-metadata address for some).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", "quiver".into()),
            ("AWS_SECRET_ACCESS_KEY", "quiver".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }

    /// The requests of `method` (`GET`, `HEAD`) moto logged for `key` so far.
    pub fn logged(&self, method: &str, key: &str) -> usize {
        // moto logs a request once it has answered it: give the line time to arrive.
        std::thread::sleep(Duration::from_millis(300));
        let needle = format!("\"{method} /{BUCKET}/{key} ");
        self.log.lock().expect("log").matches(&needle).count()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
