//! Where the JSON goes: stdout, or a file that appears whole or not at all.
//!
//! `--output FILE` writes to a hidden temporary file in FILE's folder (`.FILE.XXXXXX.partial`),
//! which is synced and renamed over FILE only when the conversion has succeeded. On an error
//! the temporary file is removed; a run killed outright leaves at most a `.partial` file, never a
//! truncated FILE.

use crate::Failure;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// The destination of a conversion.
pub enum Output {
    /// Standard output, unbuffered (the writers hand it large buffers).
    Stdout(File),
    /// A temporary file that becomes `path` on [`Output::commit`].
    File {
        /// The file being written.
        temp: NamedTempFile,
        /// Where it goes when complete.
        path: PathBuf,
    },
}

impl Output {
    /// Standard output.
    pub fn stdout() -> Result<Self, Failure> {
        stdout_file()
            .map(Output::Stdout)
            .map_err(|e| Failure::Error(format!("stdout: {e}")))
    }

    /// A new temporary file beside `path`, to be renamed to `path` on success.
    pub fn file(path: &Path) -> Result<Self, Failure> {
        let folder = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".partial");
        // The permissions of a file made with `>`: 0666 less the umask (not tempfile's 0600).
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let temp = builder
            .tempfile_in(folder)
            .map_err(|e| Failure::about(path, e))?;
        Ok(Output::File {
            temp,
            path: path.to_path_buf(),
        })
    }

    /// Whether the output is a file (not a terminal or pipe).
    pub fn is_file(&self) -> bool {
        matches!(self, Output::File { .. })
    }

    /// The failure to report when writing fails with `error`: a closed stdout ends quietly.
    pub fn failed(&self, error: io::Error) -> Failure {
        match self {
            Output::Stdout(_) if error.kind() == io::ErrorKind::BrokenPipe => Failure::ClosedPipe,
            Output::Stdout(_) => Failure::Error(format!("writing to stdout: {error}")),
            Output::File { path, .. } => Failure::about(path, error),
        }
    }

    /// Finishes the output: stdout is flushed; a file is synced and renamed into place.
    pub fn commit(mut self) -> Result<(), Failure> {
        self.flush().map_err(|e| self.failed(e))?;
        match self {
            Output::Stdout(_) => Ok(()),
            Output::File { temp, path } => {
                temp.as_file()
                    .sync_all()
                    .map_err(|e| Failure::about(&path, e))?;
                temp.persist(&path)
                    .map(drop)
                    .map_err(|e| Failure::about(&path, e.error))
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(file) => file.write(buf),
            Output::File { temp, .. } => temp.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(file) => file.write_all(buf),
            Output::File { temp, .. } => temp.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(file) => file.flush(),
            Output::File { temp, .. } => temp.flush(),
        }
    }
}

/// Stdout as a `File` of its own (a duplicate descriptor), so writes skip the line buffer
/// `std::io::Stdout` keeps.
#[cfg(unix)]
fn stdout_file() -> io::Result<File> {
    use std::os::fd::AsFd;
    Ok(File::from(io::stdout().as_fd().try_clone_to_owned()?))
}

/// Stdout as a `File` of its own (a duplicate handle), so writes skip the line buffer
/// `std::io::Stdout` keeps.
#[cfg(windows)]
fn stdout_file() -> io::Result<File> {
    use std::os::windows::io::AsHandle;
    Ok(File::from(io::stdout().as_handle().try_clone_to_owned()?))
}
