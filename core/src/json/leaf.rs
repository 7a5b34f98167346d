//! Arrays prepared for the encoder: their buffers as plain slices (values, offsets, validity,
//! and the indices of a dictionary), read without going back to the [`ArrayView`].
//!
//! An [`ArrayView`] accessor finds its buffer anew on every call; a [`Leaf`] holds the slices
//! once, so reading a value costs a bounds check and a load. The fast path keeps one leaf per
//! array in its plan (the `plan` module); the general walk looks leaves up in the [`Leaves`]
//! cache, direct-mapped by address and held in the encoder: no allocation, and an array whose
//! slot is taken by another is simply prepared again.

use super::temporal::{Zone, Zones};
use crate::array::{ArrayView, Native, bit};
use crate::datatype::{DataType, IntType, TimeUnit};

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
    /// Days since the epoch (`i32`).
    Date32,
    /// Milliseconds since the epoch (`i64`).
    Date64,
    /// A count of the unit since the epoch (`i64`), in the zone (parsed once).
    Timestamp(TimeUnit, Zone),
    /// Anything else: nested, dictionary-encoded, times, decimal, binary, views, …
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
    /// Prepares `array` (any array: non-flat ones become [`Kind::Other`]); a timestamp finds
    /// its zone in `zones`.
    pub(crate) fn new(array: &'b ArrayView<'_>, zones: &Zones<'_>) -> Self {
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
                DataType::Date32 => Kind::Date32,
                DataType::Date64 => Kind::Date64,
                DataType::Timestamp(unit, timezone) => {
                    Kind::Timestamp(*unit, zones.zone(timezone.as_deref()))
                }
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

    /// A List or LargeList array, its offsets prepared for [`Leaf::text_range`] (which reads
    /// the range of child slots of a list slot as it reads the bytes of a text slot).
    pub(crate) fn list(array: &'b ArrayView<'_>) -> Self {
        Leaf {
            kind: Kind::Other,
            values: &[],
            offsets: array.buffer(0),
            validity: if array.null_count() > 0 {
                array.validity()
            } else {
                None
            },
            offset: array.offset(),
        }
    }

    /// The indices of a dictionary-encoded array, read as integers of its index type (`None` for
    /// an array that is not dictionary-encoded).
    pub(crate) fn keys(array: &'b ArrayView<'_>) -> Option<Self> {
        let IntType { bit_width, signed } = array.dictionary()?.index_type;
        let kind = match (bit_width, signed) {
            (8, true) => Kind::Int8,
            (16, true) => Kind::Int16,
            (32, true) => Kind::Int32,
            (64, true) => Kind::Int64,
            (8, false) => Kind::UInt8,
            (16, false) => Kind::UInt16,
            (32, false) => Kind::UInt32,
            (64, false) => Kind::UInt64,
            _ => return None,
        };
        Some(Leaf {
            kind,
            values: array.buffer(0),
            offsets: &[],
            validity: if array.null_count() > 0 {
                array.validity()
            } else {
                None
            },
            offset: array.offset(),
        })
    }

    /// The dictionary index in slot `i` of a [`Leaf::keys`] view (`usize::MAX` when negative,
    /// as [`ArrayView::dictionary_index`] reads it).
    #[inline(always)]
    pub(crate) fn index(&self, i: usize) -> usize {
        let key: i64 = match self.kind {
            Kind::Int8 => self.value::<i8>(i).into(),
            Kind::Int16 => self.value::<i16>(i).into(),
            Kind::Int32 => self.value::<i32>(i).into(),
            Kind::Int64 => self.value::<i64>(i),
            Kind::UInt8 => self.value::<u8>(i).into(),
            Kind::UInt16 => self.value::<u16>(i).into(),
            Kind::UInt32 => self.value::<u32>(i).into(),
            Kind::UInt64 => return usize::try_from(self.value::<u64>(i)).unwrap_or(usize::MAX),
            _ => return usize::MAX,
        };
        usize::try_from(key).unwrap_or(usize::MAX)
    }

    /// The slot offset into the buffers (struct children are indexed by their parent's).
    #[inline(always)]
    pub(crate) fn offset(&self) -> usize {
        self.offset
    }

    /// Whether slot `i` holds a value.
    #[inline(always)]
    pub(crate) fn is_valid(&self, i: usize) -> bool {
        match self.validity {
            None => true,
            Some(bitmap) => bit(bitmap, self.offset.wrapping_add(i)),
        }
    }

    /// The validity of slots `i..i + 64`, one bit each from the lowest (all set without a
    /// bitmap; slots past the bitmap read as null).
    #[inline(always)]
    pub(crate) fn validity_word(&self, i: usize) -> u64 {
        let Some(bitmap) = self.validity else {
            return u64::MAX;
        };
        let first = self.offset.wrapping_add(i);
        let (byte, shift) = (first / 8, first % 8);
        let word = match bitmap.get(byte..byte.wrapping_add(16)) {
            Some(bytes) => bytes.try_into().map_or(0, u128::from_le_bytes),
            None => {
                let mut bytes = [0; 16];
                for (b, s) in bytes.iter_mut().zip(bitmap.get(byte..).unwrap_or_default()) {
                    *b = *s;
                }
                u128::from_le_bytes(bytes)
            }
        };
        (word >> shift) as u64
    }

    /// Fixed-width value of slot `i`.
    #[inline(always)]
    pub(crate) fn value<T: Native>(&self, i: usize) -> T {
        let start = self.offset.wrapping_add(i).wrapping_mul(T::WIDTH);
        self.values
            .get(start..start.wrapping_add(T::WIDTH))
            .map_or_else(T::default, T::from_le_slice)
    }

    /// The fixed-width values of slots `range`, `W` bytes each (fewer if the buffer is short,
    /// which validation rules out).
    #[inline(always)]
    pub(crate) fn fixed<const W: usize>(&self, range: core::ops::Range<usize>) -> &'b [[u8; W]] {
        let start = self.offset.wrapping_add(range.start).wrapping_mul(W);
        let end = self.offset.wrapping_add(range.end).wrapping_mul(W);
        self.values
            .get(start..end)
            .map_or(&[][..], |bytes| bytes.as_chunks::<W>().0)
    }

    /// Boolean value of slot `i`.
    #[inline(always)]
    pub(crate) fn bool_value(&self, i: usize) -> bool {
        bit(self.values, self.offset.wrapping_add(i))
    }

    /// The bytes of text slot `i`.
    #[inline(always)]
    pub(crate) fn text(&self, i: usize) -> &'b [u8] {
        let j = self.offset.wrapping_add(i);
        let (start, end) = if self.kind == Kind::LargeUtf8 {
            (
                self.offset_at::<i64>(j) as usize,
                self.offset_at::<i64>(j.wrapping_add(1)) as usize,
            )
        } else {
            (
                self.offset_at::<i32>(j) as usize,
                self.offset_at::<i32>(j.wrapping_add(1)) as usize,
            )
        };
        self.values.get(start..end).unwrap_or_default()
    }

    /// The values buffer (the text of a Utf8 array).
    #[inline(always)]
    pub(crate) fn values(&self) -> &'b [u8] {
        self.values
    }

    /// Where the text of slot `i` lies in [`Leaf::values`], for offsets of width `O` (`i32` for
    /// Utf8, `i64` for LargeUtf8: the caller picks by [`Leaf::kind`]).
    #[inline(always)]
    pub(crate) fn text_range<O: Offset>(&self, i: usize) -> (usize, usize) {
        let at = self.offset.wrapping_add(i).wrapping_mul(O::WIDTH);
        let Some(pair) = self.offsets.get(at..at.wrapping_add(2 * O::WIDTH)) else {
            return (0, 0);
        };
        let (start, end) = pair.split_at(O::WIDTH);
        (
            O::from_le_slice(start).to_usize(),
            O::from_le_slice(end).to_usize(),
        )
    }

    #[inline(always)]
    fn offset_at<T: Native>(&self, j: usize) -> T {
        let start = j.wrapping_mul(T::WIDTH);
        self.offsets
            .get(start..start.wrapping_add(T::WIDTH))
            .map_or_else(T::default, T::from_le_slice)
    }
}

/// A text offset type: `i32` (Utf8) or `i64` (LargeUtf8).
pub(crate) trait Offset: Native {
    /// The offset as an index (a negative one, which validation rules out, becomes one past
    /// any buffer).
    fn to_usize(self) -> usize;
}

impl Offset for i32 {
    #[inline(always)]
    fn to_usize(self) -> usize {
        self as usize
    }
}

impl Offset for i64 {
    #[inline(always)]
    fn to_usize(self) -> usize {
        self as usize
    }
}

/// Slots in the cache (a power of two). The cache serves the general walk, which writes the rows
/// that the fast path (the `plan` and `rows` modules) does not.
const SLOTS: usize = 16;

/// Prepared leaves by array address, direct-mapped, and the zones timestamps are written in.
pub(crate) struct Leaves<'b, 'a> {
    slots: [Option<(&'b ArrayView<'a>, Leaf<'b>)>; SLOTS],
    zones: Zones<'b>,
}

impl<'b, 'a> Leaves<'b, 'a> {
    /// An empty cache over the encoder's resolved `zones`.
    pub(crate) fn new(zones: Zones<'b>) -> Self {
        Leaves {
            slots: [None; SLOTS],
            zones,
        }
    }

    /// An empty cache over the same zones.
    pub(crate) fn fresh(&self) -> Self {
        Leaves::new(self.zones.clone())
    }

    /// The prepared view of `array`, preparing it on a miss.
    #[inline(always)]
    pub(crate) fn get(&mut self, array: &'b ArrayView<'a>) -> Leaf<'b> {
        let address = core::ptr::from_ref(array) as usize;
        let slot = (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) % SLOTS;
        match self.slots.get_mut(slot) {
            Some(Some((cached, leaf))) if core::ptr::eq(*cached, array) => *leaf,
            Some(entry) => {
                let leaf = Leaf::new(array, &self.zones);
                *entry = Some((array, leaf));
                leaf
            }
            None => Leaf::new(array, &self.zones),
        }
    }
}
