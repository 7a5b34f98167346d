//! The Arrow C Data and C Stream Interface structures (`ArrowSchema`, `ArrowArray`,
//! `ArrowArrayStream`), laid out as the specification's C declarations, and the PyCapsules that
//! carry them between Python libraries.
//!
//! It uses nothing else of the crate: the bottom of it, with `error`.
//!
//! A structure whose `release` is set owns what it points to. Whoever holds one by value here
//! (an imported capsule's contents, or a structure about to be handed out) releases it on drop,
//! exactly once: moving it out sets the source's `release` to null, as the specification asks.

use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::{CStr, c_char, c_int, c_void};

/// `ArrowSchema.flags`: the dictionary's order is meaningful.
pub const FLAG_DICTIONARY_ORDERED: i64 = 1;
/// `ArrowSchema.flags`: the field may hold nulls.
pub const FLAG_NULLABLE: i64 = 2;
/// `ArrowSchema.flags`: a map's keys are sorted in each entry.
pub const FLAG_MAP_KEYS_SORTED: i64 = 4;

/// The capsule name of an `ArrowSchema`.
pub const SCHEMA_CAPSULE: &CStr = c"arrow_schema";
/// The capsule name of an `ArrowArray`.
pub const ARRAY_CAPSULE: &CStr = c"arrow_array";
/// The capsule name of an `ArrowArrayStream`.
pub const STREAM_CAPSULE: &CStr = c"arrow_array_stream";

/// `struct ArrowSchema`: one field's type, name, metadata and children.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowSchema {
    /// The type as a format string (`l`, `+s`, `tsu:UTC`, …).
    pub format: *const c_char,
    /// The field name, or null.
    pub name: *const c_char,
    /// Custom metadata in the interface's binary layout, or null.
    pub metadata: *const c_char,
    /// `FLAG_*` bits.
    pub flags: i64,
    /// Number of children.
    pub n_children: i64,
    /// The children.
    pub children: *mut *mut ArrowSchema,
    /// The dictionary's value type, for a dictionary-encoded field.
    pub dictionary: *mut ArrowSchema,
    /// Frees everything this structure owns; null once released.
    pub release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    /// The producer's own data.
    pub private_data: *mut c_void,
}

/// `struct ArrowArray`: one array's length, buffers and children.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArray {
    /// Number of slots.
    pub length: i64,
    /// Number of nulls, or -1 when unknown.
    pub null_count: i64,
    /// Slot offset into the buffers.
    pub offset: i64,
    /// Number of buffers.
    pub n_buffers: i64,
    /// Number of children.
    pub n_children: i64,
    /// The buffers (a pointer may be null for an absent validity bitmap).
    pub buffers: *mut *const c_void,
    /// The children.
    pub children: *mut *mut ArrowArray,
    /// The dictionary, for a dictionary-encoded array.
    pub dictionary: *mut ArrowArray,
    /// Frees everything this structure owns; null once released.
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    /// The producer's own data.
    pub private_data: *mut c_void,
}

/// `struct ArrowArrayStream`: a schema, then arrays until an empty one.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArrayStream {
    /// Writes the stream's schema; 0 or an errno value.
    pub get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    /// Writes the next array (released, `release` null, at the end); 0 or an errno value.
    pub get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    /// The last error's message, or null.
    pub get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    /// Frees the stream; null once released.
    pub release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    /// The producer's own data.
    pub private_data: *mut c_void,
}

/// A released (empty) structure: all pointers null, `release` null.
pub trait Empty {
    /// The empty structure.
    fn empty() -> Self;
}

impl Empty for ArrowSchema {
    fn empty() -> Self {
        ArrowSchema {
            format: std::ptr::null(),
            name: std::ptr::null(),
            metadata: std::ptr::null(),
            flags: 0,
            n_children: 0,
            children: std::ptr::null_mut(),
            dictionary: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }
}

impl Empty for ArrowArray {
    fn empty() -> Self {
        ArrowArray {
            length: 0,
            null_count: 0,
            offset: 0,
            n_buffers: 0,
            n_children: 0,
            buffers: std::ptr::null_mut(),
            children: std::ptr::null_mut(),
            dictionary: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }
}

impl Empty for ArrowArrayStream {
    fn empty() -> Self {
        ArrowArrayStream {
            get_schema: None,
            get_next: None,
            get_last_error: None,
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }
}

macro_rules! release_on_drop {
    ($($name:ident),*) => {$(
        impl Drop for $name {
            fn drop(&mut self) {
                if let Some(release) = self.release {
                    // SAFETY: a structure held by value here owns its contents (it was moved
                    // out of its capsule, or built here); `release` is the producer's callback
                    // for exactly this structure, called once: it sets `release` to null.
                    unsafe { release(self) };
                }
            }
        }
    )*};
}
release_on_drop!(ArrowSchema, ArrowArray, ArrowArrayStream);

// SAFETY: the interface lets a consumer move a structure to another thread and release it
// there ("the release callback may be called from any thread"); its buffers are immutable.
unsafe impl Send for ArrowSchema {}
// SAFETY: as above.
unsafe impl Send for ArrowArray {}
// SAFETY: a stream is not called from two threads at once (every use here goes through
// `&mut` or a mutex), and the interface does not tie it to the thread that made it.
unsafe impl Send for ArrowArrayStream {}

/// Moves the structure out of `capsule` (named `name`), leaving a released one behind so that
/// the capsule's destructor does not release it again.
pub fn take<T: Empty>(capsule: &Bound<'_, PyAny>, name: &CStr) -> PyResult<T> {
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "expected a PyCapsule named {:?}",
            name.to_string_lossy()
        ))
    })?;
    let pointer = capsule.pointer_checked(Some(name))?.as_ptr().cast::<T>();
    // SAFETY: a capsule of this name holds a `T` (the PyCapsule interface's contract) that the
    // capsule owns; reading it and writing an empty one back moves the ownership here, as the
    // C Data Interface's "moving" section describes, so that exactly one owner releases it.
    Ok(unsafe { std::ptr::replace(pointer, T::empty()) })
}

/// A new capsule named `name` that owns `value` (released by the capsule's destructor unless a
/// consumer moved it out).
pub fn capsule<'py, T: Send + 'static>(
    py: Python<'py>,
    value: T,
    name: &'static CStr,
) -> PyResult<Bound<'py, PyCapsule>> {
    PyCapsule::new(py, value, Some(name.to_owned()))
}
