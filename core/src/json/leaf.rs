//! Flat arrays prepared for the encoder's fast path: their buffers as plain slices, looked up by
//! the array's address in a small fixed cache.
//!
//! An [`ArrayView`] accessor finds its buffer anew on every call; a [`Leaf`] holds the slices
//! (values, offsets, validity) once, so writing a value costs a bounds check and a load. The
//! [`Leaves`] cache is direct-mapped by address and lives in the encoder: no allocation, and an
//! array whose slot is taken by another is simply prepared again.

use crate::array::{ArrayView, Native, bit};
use crate::datatype::DataType;

/// The kinds of flat arrays the fast path writes itself; [`Kind::Other`] goes the general way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float32,
    Float64,
    Boolean,
    /// UTF-8 text with i32 offsets.
    Utf8,
    /// UTF-8 text with i64 offsets.
    LargeUtf8,
    /// Anything else: nested, dictionary-encoded, temporal, decimal, binary, views, …
    Other,
}

/// A flat array's buffers as slices.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Leaf<'b> {
    pub(crate) kind: Kind,
    values: &'b [u8],
    offsets: &'b [u8],
    validity: Option<&'b [u8]>,
    offset: usize,
}

impl<'b> Leaf<'b> {
    /// Prepares `array` (any array: non-flat ones become [`Kind::Other`]).
    pub(crate) fn new(array: &'b ArrayView<'_>) -> Self {
        let kind = if array.dictionary().is_some() {
            Kind::Other
        } else {
            match array.data_type() {
                DataType::Int8 => Kind::Int8,
                DataType::Int16 => Kind::Int16,
                DataType::Int32 => Kind::Int32,
                DataType::Int64 => Kind::Int64,
                DataType::UInt8 => Kind::UInt8,
                DataType::UInt16 => Kind::UInt16,
                DataType::UInt32 => Kind::UInt32,
                DataType::UInt64 => Kind::UInt64,
                DataType::Float32 => Kind::Float32,
                DataType::Float64 => Kind::Float64,
                DataType::Boolean => Kind::Boolean,
                DataType::Utf8 => Kind::Utf8,
                DataType::LargeUtf8 => Kind::LargeUtf8,
                _ => Kind::Other,
            }
        };
        let (values, offsets) = match kind {
            Kind::Utf8 | Kind::LargeUtf8 => (array.buffer(1), array.buffer(0)),
            _ => (array.buffer(0), &[][..]),
        };
        Leaf {
            kind,
            values,
            offsets,
            validity: if array.null_count() > 0 {
                array.validity()
            } else {
                None
            },
            offset: array.offset(),
        }
    }

    /// Whether slot `i` holds a value.
    #[inline(always)]
    pub(crate) fn is_valid(&self, i: usize) -> bool {
        match self.validity {
            None => true,
            Some(bitmap) => bit(bitmap, self.offset + i),
        }
    }

    /// Fixed-width value of slot `i`.
    #[inline(always)]
    pub(crate) fn value<T: Native>(&self, i: usize) -> T {
        let start = (self.offset + i) * T::WIDTH;
        self.values
            .get(start..start + T::WIDTH)
            .map_or_else(T::default, T::from_le_slice)
    }

    /// Boolean value of slot `i`.
    #[inline(always)]
    pub(crate) fn bool_value(&self, i: usize) -> bool {
        bit(self.values, self.offset + i)
    }

    /// The bytes of text slot `i`.
    #[inline(always)]
    pub(crate) fn text(&self, i: usize) -> &'b [u8] {
        let j = self.offset + i;
        let (start, end) = if self.kind == Kind::LargeUtf8 {
            (
                self.offset_at::<i64>(j) as usize,
                self.offset_at::<i64>(j + 1) as usize,
            )
        } else {
            (
                self.offset_at::<i32>(j) as usize,
                self.offset_at::<i32>(j + 1) as usize,
            )
        };
        self.values.get(start..end).unwrap_or_default()
    }

    #[inline(always)]
    fn offset_at<T: Native>(&self, j: usize) -> T {
        let start = j * T::WIDTH;
        self.offsets
            .get(start..start + T::WIDTH)
            .map_or_else(T::default, T::from_le_slice)
    }
}

/// Slots in the cache (a power of two).
const SLOTS: usize = 32;

/// Prepared leaves by array address, direct-mapped.
pub(crate) struct Leaves<'b, 'a> {
    slots: [Option<(&'b ArrayView<'a>, Leaf<'b>)>; SLOTS],
}

impl<'b, 'a> Leaves<'b, 'a> {
    /// An empty cache.
    pub(crate) fn new() -> Self {
        Leaves {
            slots: [None; SLOTS],
        }
    }

    /// The prepared view of `array`, preparing it on a miss.
    #[inline(always)]
    pub(crate) fn get(&mut self, array: &'b ArrayView<'a>) -> Leaf<'b> {
        let address = core::ptr::from_ref(array) as usize;
        let slot = (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) % SLOTS;
        match self.slots.get_mut(slot) {
            Some(Some((cached, leaf))) if core::ptr::eq(*cached, array) => *leaf,
            Some(entry) => {
                let leaf = Leaf::new(array);
                *entry = Some((array, leaf));
                leaf
            }
            None => Leaf::new(array),
        }
    }
}
