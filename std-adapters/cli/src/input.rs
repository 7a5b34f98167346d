//! The input named on the command line: a path or `-` (stdin), opened by what its leading bytes
//! say it is. `ARROW1` opens the file format; anything else is read as the stream format.
//!
//! A regular file in the file format is read with positioned reads ([`FileSource`]) or, with
//! `--mmap`, through a memory map ([`MmapSource`]). The file format arriving on stdin or a pipe
//! cannot be read at offsets, so its bytes are read into memory first. A stream is read in
//! order from wherever it comes, through [`CountingRead`], which counts the reads `--stats`
//! reports. A URL (`s3://…`) opens an object ([`crate::remote`]).
//!
//! It uses `remote` and the read counts of `stats`.

use crate::Failure;
use crate::remote::{self, Remote};
use crate::stats::CountingRead;
use quiver::format::MAGIC;
use quiver_mmap::MmapSource;
use quiver_object_store::Reading;
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

/// Opens `path` (`-` is stdin) and tells the file format from the stream format. `reading`:
/// how the caller reads an object, which decides how it is opened ([`remote::open`]).
pub fn open(path: &Path, mmap: bool, reading: Reading) -> Result<Input, Failure> {
    let failed = |e: io::Error| Failure::about(path, e);
    if let Some(url) = path.to_str().filter(|_| remote::is_url(path)) {
        if mmap {
            return Err(Failure::Usage(format!(
                "{url}: --mmap needs a local file (an object is read with ranged requests)"
            )));
        }
        return remote::open(url, reading, None).map(|r| Input::Remote(Box::new(r)));
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
        .map_err(|e| Failure::not_a_stream(path, e))
}
