//! The inputs of a run: what the names on the command line expand to, in the order they are
//! read, and the objects among them opened ahead of the one being converted.
//!
//! It uses `input` and `remote`, and the crate root's `Failure`.
//!
//! Each name is, in turn:
//!
//! - `-` (stdin), a URL naming one object, or an existing local file: itself (a name that
//!   exists nowhere is kept, so that opening it says why);
//! - a local folder: every file below it (links followed);
//! - a URL ending in `/`: every object under that prefix (the store's listing, in pages);
//! - a local path with `*`, `?` or `[…]` in it, or a URL with `*` or `[…]` (`**` for any
//!   number of folders): the files or objects below its longest literal folder that match the
//!   rest, one segment per `/` (`*` never crosses a `/`; `?` matches one character). A URL
//!   without `*` or `[` is no glob, whatever `?` it holds: `?` starts an HTTP URL's query and
//!   is a character of an object store's key (taken literally, as the AWS CLI takes keys).
//!
//! Below a folder, prefix or glob root, a name of which any segment starts with `.` or `_` is
//! skipped (hidden and temporary files, `_SUCCESS`, as pyarrow does), and with `--skip-empty`
//! so is a file of 0 bytes. Each name's matches are sorted by path, byte by byte; names are read
//! in the order given. A name that matches nothing is an error naming it.
//!
//! [`Ahead`] opens the inputs in that order: objects on threads of their own, up to [`AHEAD`]
//! past the one being read and no more than [`AHEAD_BYTES`] of them (an object's size as
//! listed, up to the [`READ_AHEAD`] its reader may buffer; an object not listed counts as that
//! much), so that their first requests overlap the conversion of earlier ones while memory
//! stays bounded whatever the number of objects; local files are opened when their turn comes.

use crate::Failure;
use crate::input::{self, Input};
use crate::remote;
use futures::StreamExt;
use quiver_object_store::Reading;
use std::collections::VecDeque;
use std::fs;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

/// Objects opened at once past the one being read, at most.
pub const AHEAD: usize = 32;

/// Bytes of the objects opened ahead, at most (one object is opened whatever its size).
pub const AHEAD_BYTES: u64 = 64 << 20;

/// The bytes an opened object's reader may hold.
const READ_AHEAD: u64 = quiver_object_store::READ_AHEAD as u64;

/// An input to read: its path or URL, and its size when a listing gave it.
pub type Found = (PathBuf, Option<u64>);

/// Folders followed below a root before giving up (a loop of links ends here).
const MAX_DEPTH: usize = 64;

/// Expands `names` by the rules of the module doc; `skip_empty` drops files of 0 bytes.
pub fn expand(names: &[PathBuf], skip_empty: bool) -> Result<Vec<Found>, Failure> {
    let mut all = Vec::new();
    for name in names {
        let mut found = match name.to_str() {
            Some(url) if remote::is_url(name) => expand_url(url, skip_empty)?,
            _ => expand_local(name, skip_empty)?,
        };
        if found.is_empty() {
            return Err(Failure::about(name, "matches no file"));
        }
        all.append(&mut found);
    }
    Ok(all)
}

/// Whether `text` has a glob character.
fn has_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// Whether a path below a root (segments split by `/`) is hidden: a segment starts with `.` or
/// `_`.
fn hidden(relative: &str) -> bool {
    relative
        .split('/')
        .any(|s| s.starts_with('.') || s.starts_with('_'))
}

/// A local name: a file, a folder walked, or a glob.
fn expand_local(name: &Path, skip_empty: bool) -> Result<Vec<Found>, Failure> {
    if name.as_os_str() == "-" {
        return Ok(vec![(name.to_path_buf(), None)]);
    }
    let text = name.to_string_lossy();
    let (root, pattern) = match fs::metadata(name) {
        Ok(meta) if meta.is_dir() => (name.to_path_buf(), None),
        Ok(meta) => return Ok(vec![(name.to_path_buf(), Some(meta.len()))]),
        Err(_) if has_glob(&text) => {
            let (root, pattern) = split_glob(&text);
            (PathBuf::from(root), Some(pattern.to_owned()))
        }
        // Opening it says why it cannot be read.
        Err(_) => return Ok(vec![(name.to_path_buf(), None)]),
    };
    let mut found = Vec::new();
    // A glob without a folder is relative to the current one, and its matches are named so.
    let folder = match root.as_os_str().is_empty() {
        true => Path::new("."),
        false => &root,
    };
    walk(folder, "", 0, &mut |relative, path, len| {
        let keep = !(hidden(relative) || skip_empty && len == 0)
            && pattern.as_deref().is_none_or(|p| glob_match(p, relative));
        if keep {
            let path = match root.as_os_str().is_empty() {
                true => PathBuf::from(relative),
                false => path,
            };
            found.push((path, Some(len)));
        }
    })
    .map_err(|e| Failure::about(name, e))?;
    found.sort_by(|(a, _), (b, _)| {
        let bytes = |p: &PathBuf| p.as_os_str().as_encoded_bytes().to_vec();
        bytes(a).cmp(&bytes(b))
    });
    Ok(found)
}

/// Calls `found(relative, path, len)` for every file below `folder` (whose path below the root
/// is `relative`), links followed; hidden folders are not entered.
fn walk(
    folder: &Path,
    relative: &str,
    depth: usize,
    found: &mut dyn FnMut(&str, PathBuf, u64),
) -> std::io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(std::io::Error::other(format!(
            "{}: more than {MAX_DEPTH} levels of folders (a loop of links?)",
            folder.display()
        )));
    }
    for entry in fs::read_dir(folder)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.starts_with('_') {
            continue;
        }
        let path = entry.path();
        let below = match relative {
            "" => name,
            _ => format!("{relative}/{name}"),
        };
        let meta = fs::metadata(&path)?;
        if meta.is_dir() {
            walk(&path, &below, depth + 1, found)?;
        } else {
            found(&below, path, meta.len());
        }
    }
    Ok(())
}

/// Splits a glob at the last `/` before its first glob character: the literal folder (empty
/// for none) and the pattern below it.
fn split_glob(text: &str) -> (&str, &str) {
    let first = text.find(['*', '?', '[']).unwrap_or(text.len());
    match text.get(..first).and_then(|head| head.rfind('/')) {
        Some(slash) => (
            text.get(..slash).unwrap_or_default(),
            text.get(slash + 1..).unwrap_or_default(),
        ),
        None => ("", text),
    }
}

/// A URL: one object, a prefix listed (ending in `/`), or a glob.
fn expand_url(url: &str, skip_empty: bool) -> Result<Vec<Found>, Failure> {
    // The part after `scheme://host/`, where a glob may be.
    let path_start = url
        .find("://")
        .and_then(|i| url.get(i + 3..)?.find('/').map(|j| i + 3 + j + 1))
        .unwrap_or(url.len());
    let path = url.get(path_start..).unwrap_or_default();
    // Only `*` and `[` are glob characters in a URL: `?` starts an HTTP URL's query, and is
    // part of an object store's key, taken literally as the AWS CLI takes it.
    let globbed = path.contains(['*', '[']);
    let (prefix, pattern) = if globbed {
        let (folder, pattern) = split_glob(path);
        let prefix = match folder {
            "" => url.get(..path_start).unwrap_or(url).to_owned(),
            folder => format!("{}{folder}/", url.get(..path_start).unwrap_or(url)),
        };
        (prefix, Some(pattern))
    } else if url.ends_with('/') {
        (url.to_owned(), None)
    } else {
        return Ok(vec![(PathBuf::from(url), None)]);
    };
    let objects = list(&prefix)?;
    let mut found: Vec<(String, Found)> = objects
        .into_iter()
        .filter(|(relative, size)| {
            !(hidden(relative) || skip_empty && *size == 0)
                && pattern.is_none_or(|p| glob_match(p, relative))
        })
        .map(|(relative, size)| {
            let url = format!("{prefix}{}", encode(&relative));
            (relative, (PathBuf::from(url), Some(size)))
        })
        .collect();
    found.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(found.into_iter().map(|(_, found)| found).collect())
}

/// Every object under the prefix `url` names (which ends in `/`): its path below the prefix,
/// and its size. The store's listing arrives in pages, each one request.
fn list(url: &str) -> Result<Vec<(String, u64)>, Failure> {
    let store = quiver_object_store::from_url(url).map_err(|e| match e {
        quiver_object_store::UrlError::Unsupported { .. } => Failure::Usage(e.to_string()),
        other => Failure::Error(format!("{url}: {other}")),
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Error(format!("{url}: starting the I/O runtime: {e}")))?;
    let prefix = store.path;
    let listed = runtime.block_on(async {
        let mut objects = Vec::new();
        let root = (!prefix.as_ref().is_empty()).then_some(&prefix);
        let mut pages = store.store.list(root);
        while let Some(meta) = pages.next().await {
            let meta = meta?;
            let key = meta.location.as_ref();
            let relative = match prefix.as_ref() {
                "" => key,
                p => key
                    .strip_prefix(p)
                    .and_then(|k| k.strip_prefix('/'))
                    .unwrap_or(key),
            };
            objects.push((relative.to_owned(), meta.size));
        }
        Ok::<_, object_store::Error>(objects)
    });
    listed.map_err(|e| {
        let message: Vec<String> = e.to_string().split_whitespace().map(String::from).collect();
        Failure::Error(format!(
            "{url}: listing: {} (endpoint {})",
            message.join(" "),
            store.endpoint
        ))
    })
}

/// `relative` as URL path text: bytes other than unreserved ones, `/` and a few sub-delimiters
/// written `%XX`, so that the URL names the key again.
fn encode(relative: &str) -> String {
    let mut text = String::with_capacity(relative.len());
    for byte in relative.bytes() {
        let plain = byte.is_ascii_alphanumeric() || b"-._~/=!$&'()+,;:@".contains(&byte);
        match plain {
            true => text.push(char::from(byte)),
            false => text.push_str(&format!("%{byte:02X}")),
        }
    }
    text
}

/// Whether `path` (segments split by `/`) matches `pattern`: `**` is any number of segments,
/// `*` any text within a segment, `?` one character, `[abc]`, `[a-z]`, `[!a]` (or `[^a]`) one
/// of a set.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let pattern: Vec<&str> = pattern.split('/').collect();
    let path: Vec<&str> = path.split('/').collect();
    segments_match(&pattern, &path)
}

fn segments_match(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => {
            (0..=path.len()).any(|i| segments_match(rest, path.get(i..).unwrap_or_default()))
        }
        Some((first, rest)) => path.split_first().is_some_and(|(name, tail)| {
            let p: Vec<char> = first.chars().collect();
            let n: Vec<char> = name.chars().collect();
            segment_match(&p, &n) && segments_match(rest, tail)
        }),
    }
}

fn segment_match(pattern: &[char], name: &[char]) -> bool {
    let next = |s: &[char]| s.get(1..).unwrap_or_default().to_vec();
    match pattern.split_first() {
        None => name.is_empty(),
        Some(('*', rest)) => {
            (0..=name.len()).any(|i| segment_match(rest, name.get(i..).unwrap_or_default()))
        }
        Some(('?', rest)) => !name.is_empty() && segment_match(rest, &next(name)),
        Some(('[', rest)) if rest.contains(&']') => {
            let Some((c, tail)) = name.split_first() else {
                return false;
            };
            let (negated, set) = match rest.first() {
                Some('!' | '^') => (true, rest.get(1..).unwrap_or_default()),
                _ => (false, rest),
            };
            // A `]` first in the set is one of its characters.
            let end = set
                .iter()
                .skip(1)
                .position(|&x| x == ']')
                .map_or(set.len(), |i| i + 1);
            let class = set.get(..end).unwrap_or_default();
            let mut inside = false;
            let mut i = 0;
            while let Some(&low) = class.get(i) {
                if class.get(i + 1) == Some(&'-')
                    && let Some(&high) = class.get(i + 2)
                {
                    inside |= (low..=high).contains(c);
                    i += 3;
                } else {
                    inside |= low == *c;
                    i += 1;
                }
            }
            inside != negated && segment_match(set.get(end + 1..).unwrap_or_default(), tail)
        }
        Some((p, rest)) => name.first() == Some(p) && segment_match(rest, &next(name)),
    }
}

/// An input opened, or on its way.
enum Pending {
    /// An object being opened on a thread of its own.
    Object(JoinHandle<Result<remote::Remote, Failure>>),
    /// A local input, opened when its turn comes.
    Local,
}

/// The inputs of a run opened in order, objects up to [`AHEAD`] and [`AHEAD_BYTES`] in
/// advance.
pub struct Ahead {
    names: Vec<Found>,
    /// Index of the next name to start opening.
    started: usize,
    /// The inputs started, with the bytes each counts against [`AHEAD_BYTES`].
    pending: VecDeque<(PathBuf, Pending, u64)>,
    /// The bytes of the objects pending.
    pending_bytes: u64,
    mmap: bool,
    reading: Reading,
}

impl Ahead {
    /// Opens `names` in order (`--mmap` and `reading` as [`input::open`] takes them).
    pub fn new(names: Vec<Found>, mmap: bool, reading: Reading) -> Self {
        Ahead {
            names,
            started: 0,
            pending: VecDeque::new(),
            pending_bytes: 0,
            mmap,
            reading,
        }
    }

    /// The next input and its name, once opened; `None` after the last.
    pub fn next_input(&mut self) -> Option<(PathBuf, Result<Input, Failure>)> {
        while self.pending.len() <= AHEAD {
            let Some((name, size)) = self.names.get(self.started).cloned() else {
                break;
            };
            let object = remote::is_url(&name);
            let bytes = match object {
                true => size.unwrap_or(READ_AHEAD).min(READ_AHEAD),
                false => 0,
            };
            if !self.pending.is_empty() && self.pending_bytes + bytes > AHEAD_BYTES {
                break;
            }
            self.started += 1;
            let url = name.to_str().filter(|_| object && !self.mmap);
            let pending = if let Some(url) = url {
                // With its size, if a listing gave it.
                let (url, reading) = (url.to_owned(), self.reading);
                let thread = std::thread::Builder::new()
                    .name("quiver-open".into())
                    .spawn(move || remote::open(&url, reading, size));
                match thread {
                    Ok(handle) => Pending::Object(handle),
                    // No thread: opened when its turn comes.
                    Err(_) => Pending::Local,
                }
            } else {
                Pending::Local
            };
            self.pending_bytes += bytes;
            self.pending.push_back((name, pending, bytes));
        }
        let (name, pending, bytes) = self.pending.pop_front()?;
        self.pending_bytes -= bytes;
        let opened = match pending {
            Pending::Local => input::open(&name, self.mmap, self.reading),
            Pending::Object(handle) => match handle.join() {
                Ok(opened) => opened.map(|r| Input::Remote(Box::new(r))),
                Err(_) => Err(Failure::about(&name, "the thread opening it panicked")),
            },
        };
        Some((name, opened))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_by_segment() {
        let yes = [
            ("*.arrow", "a.arrow"),
            ("*", "a.arrow"),
            ("**", "x/y/a.arrow"),
            ("**/*.arrow", "a.arrow"),
            ("**/*.arrow", "x/y/a.arrow"),
            ("x/**/a.arrow", "x/a.arrow"),
            ("part-?.arrow", "part-1.arrow"),
            ("part-[0-4].arrow", "part-3.arrow"),
            ("part-[!0-4].arrow", "part-7.arrow"),
            ("part-[^0-4].arrow", "part-7.arrow"),
            ("d=*/*", "d=1/p.arrow"),
            ("[]]", "]"),
            ("a[", "a["),
        ];
        for (pattern, path) in yes {
            assert!(glob_match(pattern, path), "{pattern} {path}");
        }
        let no = [
            ("*.arrow", "x/a.arrow"),
            ("*.arrow", "a.arrows"),
            ("part-?.arrow", "part-10.arrow"),
            ("part-[0-4].arrow", "part-7.arrow"),
            ("part-[!0-4].arrow", "part-3.arrow"),
            ("x/**/a.arrow", "y/a.arrow"),
            ("", "a"),
        ];
        for (pattern, path) in no {
            assert!(!glob_match(pattern, path), "{pattern} {path}");
        }
    }

    #[test]
    fn globs_split_at_their_literal_folder() {
        assert_eq!(split_glob("data/x/*.arrow"), ("data/x", "*.arrow"));
        assert_eq!(split_glob("*.arrow"), ("", "*.arrow"));
        assert_eq!(split_glob("/d/**/p?.arrow"), ("/d", "**/p?.arrow"));
        assert_eq!(split_glob("a/b[0]/c"), ("a", "b[0]/c"));
    }

    #[test]
    fn hidden_names_have_a_segment_starting_with_a_dot_or_underscore() {
        assert!(hidden("_SUCCESS"));
        assert!(hidden("x/.tmp/a.arrow"));
        assert!(hidden("_temporary/0/a.arrow"));
        assert!(!hidden("x/a_b.arrow"));
        assert!(!hidden("date=1/a.arrow"));
    }

    #[test]
    fn keys_are_written_back_as_url_paths() {
        assert_eq!(encode("d=1/a b.arrow"), "d=1/a%20b.arrow");
        assert_eq!(encode("x?#%"), "x%3F%23%25");
        assert_eq!(encode("é"), "%C3%A9");
    }
}
