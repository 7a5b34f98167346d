//! [`FileSource`]: a local file read with positioned reads.
//!
//! It uses `task` and quiver's `source`.

use crate::ReadTask;
use quiver::bytes::Bytes;
use quiver::source::{AsyncRandomAccess, RandomAccess, SharedRanges};
use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::Path;

/// A file as a [`RandomAccess`] source: each range is one positioned read, with no seek, so one
/// file can serve many readers and threads at once.
#[derive(Debug)]
pub struct FileSource {
    file: File,
    len: u64,
}

impl FileSource {
    /// Opens the file at `path` for reading.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        Self::new(File::open(path)?)
    }

    /// Wraps an open file; its length is read once, now.
    pub fn new(file: File) -> io::Result<Self> {
        let len = file.metadata()?.len();
        Ok(FileSource { file, len })
    }

    /// The file.
    pub fn inner(&self) -> &File {
        &self.file
    }

    /// The file, mutably.
    pub fn inner_mut(&mut self) -> &mut File {
        &mut self.file
    }

    /// Unwraps the file.
    pub fn into_inner(self) -> File {
        self.file
    }
}

impl RandomAccess for FileSource {
    type Error = io::Error;

    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        read_exact_at(&self.file, offset, buf)
    }
}

/// Each call reads its ranges on a thread of its own, through a second handle to the file, into
/// one buffer per range.
impl AsyncRandomAccess for FileSource {
    type Error = io::Error;
    type ReadRanges<'a> = ReadTask<io::Result<SharedRanges>>;

    fn len(&self) -> u64 {
        self.len
    }

    fn read_ranges(&self, ranges: Vec<Range<u64>>) -> ReadTask<io::Result<SharedRanges>> {
        match self.file.try_clone() {
            Ok(file) => ReadTask::spawn(move || {
                ranges
                    .iter()
                    .map(|range| {
                        let len = usize::try_from(range.end.saturating_sub(range.start))
                            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
                        let mut buf = vec![0; len];
                        read_exact_at(&file, range.start, &mut buf)?;
                        Ok(Bytes::from_vec(buf))
                    })
                    .collect()
            }),
            Err(e) => ReadTask::ready(Err(e)),
        }
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut offset: u64, mut buf: &mut [u8]) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}
