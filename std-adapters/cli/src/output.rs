//! Where the JSON goes: stdout, or the file `--output FILE` names. FILE is never destroyed:
//!
//! It uses `remote`, `signals` and `upload`, and the crate root's `Failure`.
//!
//! - **Not a regular file.** A character device (`/dev/null`, a terminal), a FIFO, or a file
//!   descriptor's name (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`, whatever it refers to) is
//!   opened for writing and truncated, as the shell's `>` opens it: no temporary file, no rename.
//!   A socket cannot be opened and is refused with a message saying so; a folder is refused.
//! - **A regular file or a new name.** Symbolic links (and chains of them) are followed to the
//!   name they end at, the *target*; after a dangling link the target does not exist yet and is
//!   created, as `>` would create it. The JSON goes to a hidden `.NAME.XXXXXX.partial` in the
//!   target's folder, which is synced and renamed over the target only when the conversion has
//!   succeeded: a failed run leaves the old target as it was, and links stay links. The new file
//!   keeps the old one's permission bits and, where the process may set them, its owner and
//!   group (Unix); a new name gets 0666 less the umask, as with `>`.
//! - **The input.** An output that is the input file (the same device and inode, whatever the
//!   spelling or links of either path) is refused before anything is opened for writing: exit
//!   code 2. Stdin (`-`) has no path and is not checked.
//! - **A URL** (`s3://bucket/key`, any scheme the inputs take): an object uploaded as the JSON
//!   is produced, which appears only on success (`upload.rs`).
//! - **Signals (Unix).** Once a partial file is to be made, SIGINT, SIGTERM and SIGHUP go to a
//!   thread ([`signal_hook`]) that removes it and ends the process with 128 + the signal number
//!   (130, 143, 129); the target stays as it was. The handlers are in place before the file is
//!   created; the file is created and registered, and renamed and unregistered, under one lock
//!   that the thread takes and keeps until the exit. So a signal finds either no file or one
//!   still partial, never the output. Only SIGKILL (or a crash) can leave a `.partial` file.
//!   Without a partial file (stdout, a file written in place) signals keep their default action.

use crate::Failure;
use crate::upload::Upload;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use tempfile::NamedTempFile;

/// The destination of a conversion.
pub enum Output {
    /// Standard output, unbuffered (the writers hand it large buffers).
    Stdout(File),
    /// An existing file that is not a regular file, written where it is.
    InPlace {
        /// The opened file.
        file: File,
        /// Its name on the command line.
        path: PathBuf,
    },
    /// An object uploaded to a store, which appears on [`Output::commit`] (`upload.rs`).
    Upload(Box<Upload>),
    /// A temporary file that replaces `target` on [`Output::commit`].
    Replace {
        /// The file being written, registered for removal on a signal.
        temp: Partial,
        /// The name the links of `path` end at.
        target: PathBuf,
        /// The name on the command line.
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

    /// Opens `path` by the rules of the module doc; a URL starts an upload.
    pub fn file(path: &Path) -> Result<Self, Failure> {
        if let Some(url) = path.to_str().filter(|_| crate::remote::is_url(path)) {
            return Upload::start(url).map(|u| Output::Upload(Box::new(u)));
        }
        let failed = |e: io::Error| Failure::about(path, e);
        let Some(target) = follow(path).map_err(failed)? else {
            return open_in_place(path).map(|file| Output::InPlace {
                file,
                path: path.to_path_buf(),
            });
        };
        let old = match fs::metadata(&target) {
            Ok(old) => Some(old),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(failed(e)),
        };
        let temp = Partial::beside(&target, old.as_ref()).map_err(failed)?;
        Ok(Output::Replace {
            temp,
            target,
            path: path.to_path_buf(),
        })
    }

    /// Whether the output is a file (not a terminal or pipe).
    pub fn is_file(&self) -> bool {
        match self {
            Output::Stdout(_) => false,
            Output::InPlace { file, .. } => !file.is_terminal(),
            Output::Replace { .. } | Output::Upload(_) => true,
        }
    }

    /// The failure to report when writing fails with `error`: a closed stdout ends quietly.
    pub fn failed(&self, error: io::Error) -> Failure {
        match self {
            Output::Stdout(_) if error.kind() == io::ErrorKind::BrokenPipe => Failure::ClosedPipe,
            Output::Stdout(_) => Failure::Error(format!("writing to stdout: {error}")),
            Output::InPlace { path, .. } | Output::Replace { path, .. } => {
                Failure::about(path, error)
            }
            Output::Upload(upload) => Failure::Error(format!("{}: {error}", upload.url)),
        }
    }

    /// Finishes the output: stdout or a file written in place is flushed; a partial file is
    /// synced and renamed over its target.
    pub fn commit(mut self) -> Result<(), Failure> {
        self.flush().map_err(|e| self.failed(e))?;
        match self {
            Output::Stdout(_) | Output::InPlace { .. } => Ok(()),
            Output::Replace { temp, target, path } => {
                temp.persist(&target).map_err(|e| Failure::about(&path, e))
            }
            Output::Upload(upload) => upload.complete(),
        }
    }

    /// Where the bytes go.
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Output::Stdout(file) | Output::InPlace { file, .. } => file,
            Output::Replace { temp, .. } => temp.file.as_file_mut(),
            Output::Upload(upload) => upload.as_mut(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer().flush()
    }
}

/// Refuses an `output` that is the `input` file or object (exit code 2), before anything is
/// written. A URL is the same object when its text is the same.
pub fn refuse_input(output: &Path, input: &Path) -> Result<(), Failure> {
    if input.as_os_str() == "-" || crate::remote::is_url(output) != crate::remote::is_url(input) {
        return Ok(());
    }
    let same = output == input
        || match (fs::metadata(output), fs::metadata(input)) {
            (Ok(a), Ok(b)) => same_file(&a, &b, output, input),
            _ => false,
        };
    if same {
        return Err(Failure::Usage(format!(
            "--output {} is the input {} (the same file); nothing was written",
            output.display(),
            input.display()
        )));
    }
    Ok(())
}

/// Whether `a` and `b` are the same file: the same device and inode.
#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata, _: &Path, _: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

/// Whether the paths `a` and `b` name the same file, once links and `..` are resolved.
#[cfg(not(unix))]
fn same_file(_: &Metadata, _: &Metadata, a: &Path, b: &Path) -> bool {
    matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(a), Ok(b)) if a == b)
}

/// Links followed before giving up, as Linux's `open` does (`ELOOP`).
const MAX_LINKS: usize = 40;

/// The name the symbolic links at `path` end at: a regular file or a name not taken yet
/// (`Some`); `None` for an existing file that is not a regular file, or a descriptor's name.
fn follow(path: &Path) -> io::Result<Option<PathBuf>> {
    let mut name = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if names_descriptor(&name) {
            return Ok(None);
        }
        let meta = match fs::symlink_metadata(&name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Some(name)),
            meta => meta?,
        };
        if !meta.is_symlink() {
            return Ok(meta.is_file().then_some(name));
        }
        // A relative link is relative to its own folder; an absolute one replaces the path.
        let link = fs::read_link(&name)?;
        name = match name.parent() {
            Some(folder) => folder.join(link),
            None => link,
        };
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Whether `name` is an entry of a descriptor folder (`/dev/fd`, `/proc/PID/fd`): it stands
/// for a file a process has open, not for a name in a folder that a rename could replace.
fn names_descriptor(name: &Path) -> bool {
    let Ok(folder) = fs::canonicalize(folder_of(name)) else {
        return false;
    };
    folder == Path::new("/dev/fd")
        || (folder.starts_with("/proc") && folder.file_name() == Some("fd".as_ref()))
}

/// The folder holding `name` (`.` for a bare name).
fn folder_of(name: &Path) -> &Path {
    match name.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Opens an existing file that is not a regular file for writing, as `>` does.
fn open_in_place(path: &Path) -> Result<File, Failure> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if fs::metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
            return Err(Failure::about(
                path,
                "is a socket, which cannot be opened for writing",
            ));
        }
    }
    OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| Failure::about(path, e))
}

/// The partial file a signal must remove, if any. It is locked while a partial file is created
/// and registered, and while it is renamed and unregistered, so that a signal finds either no
/// file or one that is still partial.
static PARTIAL: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Locks [`PARTIAL`] (a panic elsewhere does not keep a signal from removing the file).
fn partial() -> MutexGuard<'static, Option<PathBuf>> {
    PARTIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A hidden temporary file beside the target, removed on drop or on a signal.
pub struct Partial {
    /// Dropped first: the file is removed before it is unregistered, so that a signal in
    /// between cannot leave it behind.
    file: NamedTempFile,
    registration: Registration,
}

/// The registration of a [`Partial`] file in [`PARTIAL`], undone on drop.
struct Registration;

impl Drop for Registration {
    fn drop(&mut self) {
        *partial() = None;
    }
}

impl Partial {
    /// Creates `.NAME.XXXXXX.partial` in `target`'s folder with the owner and permission bits of
    /// the `old` file there, if any, and registers it for removal on a signal.
    #[cfg_attr(not(unix), allow(unused_variables))]
    fn beside(target: &Path, old: Option<&Metadata>) -> io::Result<Self> {
        #[cfg(unix)]
        crate::signals::watch(remove_on_signal)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".partial");
        // A new name gets the permissions `>` gives: 0666 less the umask (not tempfile's 0600).
        // Over an old file, only the owner may open it until its own bits are set below.
        #[cfg(unix)]
        if old.is_none() {
            builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        }
        let mut registered = partial();
        let file = builder.tempfile_in(folder_of(target))?;
        *registered = Some(file.path().to_path_buf());
        drop(registered);
        let partial = Partial {
            file,
            registration: Registration,
        };
        #[cfg(unix)]
        if let Some(old) = old {
            keep_owner_and_mode(partial.file.as_file(), old)?;
        }
        Ok(partial)
    }

    /// Syncs the file and renames it to `target`, unregistering it in the same step.
    fn persist(self, target: &Path) -> io::Result<()> {
        let Partial { file, registration } = self;
        file.as_file().sync_all()?;
        let mut registered = partial();
        let persisted = match file.persist(target) {
            Ok(_) => {
                // Renamed: from now on the name is the output, which no signal removes.
                *registered = None;
                Ok(())
            }
            // The file is removed here, before `registration` is undone.
            Err(e) => Err(e.error),
        };
        drop(registered);
        drop(registration);
        persisted
    }
}

/// Gives `file` the owner and group of `old` where the process may (`fchown`; without the
/// privilege, at least the group when it is one of the process's), then its permission bits
/// (after the owner, whose change clears the set-id bits).
#[cfg(unix)]
fn keep_owner_and_mode(file: &File, old: &Metadata) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, fchown};
    let new = file.metadata()?;
    if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
        let not_permitted = |r: io::Result<()>| match r {
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Ok(false),
            r => r.map(|()| true),
        };
        if !not_permitted(fchown(file, Some(old.uid()), Some(old.gid())))? {
            not_permitted(fchown(file, None, Some(old.gid())))?;
        }
    }
    file.set_permissions(fs::Permissions::from_mode(old.mode() & 0o7777))
}

/// Removes the registered partial file, if any, for a signal that ends the process (called on
/// the signal thread); the lock stays taken, so that no partial file is created or renamed
/// after.
#[cfg(unix)]
fn remove_on_signal() {
    let registered = partial();
    if let Some(path) = registered.as_ref() {
        let _ = fs::remove_file(path);
    }
    std::mem::forget(registered);
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
