//! The input named on the command line: a path or `-` (stdin), opened by what its leading bytes
//! say it is. `ARROW1` opens the file format; anything else is read as the stream format.
//!
//! A regular file in the file format is read with positioned reads ([`FileSource`]) or, with
//! `--mmap`, through a memory map ([`MmapSource`]). The file format arriving on stdin or a pipe
//! cannot be read at offsets, so its bytes are read into memory first. A stream is read in
//! order from wherever it comes, through [`CountingRead`], which counts the reads `--stats`
//! reports. A URL (`s3://…`) opens an object ([`crate::remote`]).

use crate::Failure;
use crate::remote::{self, Remote};
use quiver::error::FormatErrorKind;
use quiver::format::MAGIC;
use quiver::source::Counting;
use quiver_mmap::MmapSource;
use quiver_std::FileSource;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// An opened input.
pub enum Input {
    /// The file format in a regular file, read with positioned reads.
    Positioned(FileSource),
    /// The file format in a regular file, memory-mapped (`--mmap`).
    Mapped(MmapSource),
    /// The file format from stdin or a pipe, read whole into memory.
    InMemory(Vec<u8>),
    /// The stream format, with its leading bytes put back in front.
    Stream(CountingRead<Box<dyn Read>>),
    /// An object named by URL, in either format ([`Remote::front_to_back`]).
    Remote(Box<Remote>),
}

/// Opens `path` (`-` is stdin) and tells the file format from the stream format. `whole`: the
/// caller reads every column of every batch (an object is then one GET, [`remote::open`]).
pub fn open(path: &Path, mmap: bool, whole: bool) -> Result<Input, Failure> {
    let failed = |e: io::Error| Failure::about(path, e);
    if let Some(url) = path.to_str().filter(|_| remote::is_url(path)) {
        if mmap {
            return Err(Failure::Usage(format!(
                "{url}: --mmap needs a local file (an object is read with ranged requests)"
            )));
        }
        return remote::open(url, whole).map(|r| Input::Remote(Box::new(r)));
    }
    let mut magic = [0u8; MAGIC.len()];
    let mut reader: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(io::stdin().lock())
    } else {
        let file = File::open(path).map_err(failed)?;
        if file.metadata().map_err(failed)?.is_file() {
            let leading = read_up_to(&file, &mut magic).map_err(failed)?;
            if leading == MAGIC {
                return if mmap {
                    MmapSource::new(&file).map(Input::Mapped).map_err(failed)
                } else {
                    FileSource::new(file).map(Input::Positioned).map_err(failed)
                };
            }
            // The file continues after the leading bytes, which go back in front.
            return Ok(stream(leading, Box::new(file)));
        }
        Box::new(file)
    };
    let leading = read_up_to(&mut reader, &mut magic).map_err(failed)?;
    if leading == MAGIC {
        if mmap {
            return Err(Failure::Usage(format!(
                "{}: --mmap needs a regular file (this input is read into memory)",
                path.display()
            )));
        }
        let mut bytes = leading.to_vec();
        reader.read_to_end(&mut bytes).map_err(failed)?;
        return Ok(Input::InMemory(bytes));
    }
    Ok(stream(leading, reader))
}

/// A stream input: `leading`, the bytes already read, then the rest of `reader`.
fn stream(leading: &[u8], reader: Box<dyn Read>) -> Input {
    let whole = io::Cursor::new(leading.to_vec()).chain(reader);
    Input::Stream(CountingRead::new(Box::new(whole)))
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub fn read_up_to(mut reader: impl Read, buf: &mut [u8]) -> io::Result<&[u8]> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(buf.get(..filled).unwrap_or_default())
}

/// The reader of a stream input.
pub type StreamInput = quiver::ipc::StreamReader<quiver_std::FromStd<CountingRead<Box<dyn Read>>>>;

/// Opens the stream of an [`Input::Stream`]; a failure here means the input was neither format
/// (an empty input, or another format, says so itself).
pub fn stream_reader(
    path: &Path,
    reader: CountingRead<Box<dyn Read>>,
) -> Result<StreamInput, Failure> {
    quiver_std::stream_reader(reader, quiver::ipc::ReaderOptions::default())
        .map_err(|e| not_a_stream(path, e))
}

/// The failure of a stream's opening read: an empty input or another format says so itself;
/// anything else was neither format.
pub fn not_a_stream<E: std::fmt::Display>(path: &Path, e: quiver::error::Error<E>) -> Failure {
    let whole_input = e.format().is_some_and(|e| {
        matches!(
            e.kind,
            FormatErrorKind::EmptyInput | FormatErrorKind::NotArrow { .. }
        )
    });
    if whole_input {
        Failure::about(path, e)
    } else {
        Failure::about(
            path,
            format!("neither an Arrow IPC file (no ARROW1 magic) nor a stream: {e}"),
        )
    }
}

/// The reads a run made of its input, as `--stats` prints them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Byte ranges requested (a stream: read calls).
    pub reads: u64,
    /// Calls to the source, each a round trip on remote storage (a stream: read calls).
    pub round_trips: u64,
    /// Bytes requested.
    pub bytes_read: u64,
    /// Of a URL: the requests sent again because their answer was late (hedges), and for the
    /// rest of a response that stalled (retries).
    pub again: Option<(u64, u64)>,
}

impl ReadStats {
    /// What a [`Counting`] source recorded.
    pub fn of<S>(source: &Counting<S>) -> Self {
        ReadStats {
            reads: source.read_count() as u64,
            round_trips: source.round_trips() as u64,
            bytes_read: source.bytes_read(),
            ..ReadStats::default()
        }
    }

    /// Adds another input's counts (the hedges and retries of URLs among them).
    pub fn add(&mut self, other: &ReadStats) {
        self.reads += other.reads;
        self.round_trips += other.round_trips;
        self.bytes_read += other.bytes_read;
        if let Some((hedges, retries)) = other.again {
            let (h, r) = self.again.get_or_insert((0, 0));
            (*h, *r) = (*h + hedges, *r + retries);
        }
    }
}

/// A `Read` that counts its calls and bytes: for a stream, each read is a round trip.
pub struct CountingRead<R> {
    inner: R,
    stats: ReadStats,
}

impl<R> CountingRead<R> {
    /// Wraps `inner` with zero counts.
    pub fn new(inner: R) -> Self {
        CountingRead {
            inner,
            stats: ReadStats::default(),
        }
    }

    /// The counts so far.
    pub fn stats(&self) -> ReadStats {
        self.stats
    }
}

impl<R: Read> Read for CountingRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.stats.reads += 1;
        self.stats.round_trips += 1;
        self.stats.bytes_read += n as u64;
        Ok(n)
    }
}
