//! Bytes and text: [`BinaryBuilder`] and [`StringBuilder`] (one [`ByteArrayBuilder`]; offsets + data for `Binary`/`Utf8`
//! and their `Large` forms, 16-byte views + variadic data buffers for `BinaryView`/`Utf8View`),
//! and [`FixedSizeBinaryBuilder`].
//!
//! It uses `offsets` beside it and the builder traits of `builder`, and, of the crate, the arrays,
//! their bytes, the data types and the errors.
//!
//! A view holds values of up to 12 bytes inline; longer ones go to the current data buffer, and a
//! new buffer starts when the current one would pass the block size.

use super::offsets::Offsets;
use super::{ArrayBuilder, Slots, misuse};
use crate::array::ArrayView;
use crate::bytes::Bytes;
use crate::datatype::DataType;
use crate::error::{FormatError, FormatErrorKind, FormatResult, Limit};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::marker::PhantomData;

/// Values longer than this go to a data buffer of a view array.
const MAX_INLINE: usize = 12;

/// Default size at which a view array starts a new data buffer.
pub const VIEW_BLOCK_SIZE: usize = 32 * 1024;

/// Where the bytes go: offsets and one data buffer, or views and variadic data buffers.
#[derive(Debug, Clone)]
enum ByteStorage {
    Offsets {
        offsets: Offsets,
        data: Vec<u8>,
        large: bool,
    },
    Views {
        views: Vec<u8>,
        full: Vec<Vec<u8>>,
        current: Vec<u8>,
        block_size: usize,
    },
}

/// What `BinaryBuilder` and `StringBuilder` share: bytes per slot and validity.
#[derive(Debug, Clone)]
struct ByteBuilder {
    slots: Slots,
    layout: ByteStorage,
}

impl ByteBuilder {
    fn new(data_type: DataType, utf8: bool) -> Self {
        use DataType::*;
        let offsets = |large| ByteStorage::Offsets {
            offsets: Offsets::default(),
            data: Vec::new(),
            large,
        };
        let (layout, error) = match (&data_type, utf8) {
            (Binary, false) | (Utf8, true) => (offsets(false), None),
            (LargeBinary, false) | (LargeUtf8, true) => (offsets(true), None),
            (BinaryView, false) | (Utf8View, true) => (
                ByteStorage::Views {
                    views: Vec::new(),
                    full: Vec::new(),
                    current: Vec::new(),
                    block_size: VIEW_BLOCK_SIZE,
                },
                None,
            ),
            (_, false) => (
                offsets(false),
                Some(misuse("binary builder given a non-binary type", 0)),
            ),
            (_, true) => (
                offsets(false),
                Some(misuse("string builder given a non-string type", 0)),
            ),
        };
        ByteBuilder {
            slots: Slots::new(data_type, error),
            layout,
        }
    }

    fn set_block_size(&mut self, size: usize) {
        if let ByteStorage::Views { block_size, .. } = &mut self.layout {
            *block_size = size.clamp(1, i32::MAX as usize);
        }
    }

    fn append(&mut self, value: &[u8]) {
        if let Err(error) = self.append_bytes(value) {
            self.slots.remember(error);
            self.append_bytes(&[]).ok();
        }
        self.slots.validity.append(true);
    }

    fn append_bytes(&mut self, value: &[u8]) -> FormatResult<()> {
        match &mut self.layout {
            ByteStorage::Offsets { offsets, data, .. } => {
                data.extend_from_slice(value);
                offsets.push(data.len());
            }
            ByteStorage::Views {
                views,
                full,
                current,
                block_size,
            } => {
                let len = i32::try_from(value.len()).map_err(|_| {
                    FormatError::from(FormatErrorKind::LimitExceeded {
                        what: Limit::ViewValue,
                        requested: value.len() as u64,
                        limit: i32::MAX as u64,
                    })
                })?;
                let mut view = [0u8; 16];
                let (length, rest) = view.split_at_mut(4);
                length.copy_from_slice(&len.to_le_bytes());
                if value.len() <= MAX_INLINE {
                    for (d, s) in rest.iter_mut().zip(value) {
                        *d = *s;
                    }
                } else {
                    if !current.is_empty() && current.len() + value.len() > *block_size {
                        full.push(core::mem::take(current));
                    }
                    let index = i32::try_from(full.len())
                        .map_err(|_| misuse("too many view data buffers", full.len()))?;
                    // The block size keeps `current` within i32 (see `set_block_size`).
                    let offset = current.len() as i32;
                    let (prefix, location) = rest.split_at_mut(4);
                    for (d, s) in prefix.iter_mut().zip(value) {
                        *d = *s;
                    }
                    let (buffer, start) = location.split_at_mut(4);
                    buffer.copy_from_slice(&index.to_le_bytes());
                    start.copy_from_slice(&offset.to_le_bytes());
                    current.extend_from_slice(value);
                }
                views.extend_from_slice(&view);
            }
        }
        Ok(())
    }

    fn append_null(&mut self) {
        self.append_bytes(&[]).ok();
        self.slots.validity.append(false);
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let buffers = match &mut self.layout {
            ByteStorage::Offsets {
                offsets,
                data,
                large,
            } => {
                let data = Bytes::from_vec(core::mem::take(data));
                offsets.finish_offsets(*large).map(|o| vec![o, data])
            }
            ByteStorage::Views {
                views,
                full,
                current,
                ..
            } => {
                let mut buffers = vec![Bytes::from_vec(core::mem::take(views))];
                buffers.extend(core::mem::take(full).into_iter().map(Bytes::from_vec));
                if !current.is_empty() {
                    buffers.push(Bytes::from_vec(core::mem::take(current)));
                }
                Ok(buffers)
            }
        };
        self.slots
            .finish(buffers.map(|buffers| (buffers, Vec::new())))
    }
}

/// Builds a `Binary`, `LargeBinary` or `BinaryView` array from `&[u8]`, `Vec<u8>` or `&[u8; N]`.
pub type BinaryBuilder = ByteArrayBuilder<BinaryKind>;

/// Builds a `Utf8`, `LargeUtf8` or `Utf8View` array from `&str`, `String` or `&String`.
pub type StringBuilder = ByteArrayBuilder<TextKind>;

/// Builds an array of byte values of kind `K` (offsets and data, or views): written once for
/// [`BinaryBuilder`] and [`StringBuilder`], as [`super::PrimitiveBuilder`] is for numbers.
#[derive(Debug, Clone)]
pub struct ByteArrayBuilder<K> {
    bytes: ByteBuilder,
    kind: PhantomData<K>,
}

/// The values a [`ByteArrayBuilder`] takes: [`BinaryKind`] or [`TextKind`] (sealed).
pub trait ByteKind: sealed::Sealed + core::fmt::Debug + Clone + 'static {
    /// The type with i32 offsets (`Binary`, `Utf8`).
    const SMALL: DataType;
    /// The type with i64 offsets (`LargeBinary`, `LargeUtf8`).
    const LARGE: DataType;
    /// The view type (`BinaryView`, `Utf8View`).
    const VIEW: DataType;
    /// Whether the values are UTF-8 text.
    const TEXT: bool;
}

/// Binary values: [`BinaryBuilder`].
#[derive(Debug, Clone, Copy)]
pub struct BinaryKind;

/// UTF-8 text values: [`StringBuilder`].
#[derive(Debug, Clone, Copy)]
pub struct TextKind;

impl ByteKind for BinaryKind {
    const SMALL: DataType = DataType::Binary;
    const LARGE: DataType = DataType::LargeBinary;
    const VIEW: DataType = DataType::BinaryView;
    const TEXT: bool = false;
}

impl ByteKind for TextKind {
    const SMALL: DataType = DataType::Utf8;
    const LARGE: DataType = DataType::LargeUtf8;
    const VIEW: DataType = DataType::Utf8View;
    const TEXT: bool = true;
}

/// Keeps [`ByteKind`] to the two kinds here.
mod sealed {
    /// Implemented only by [`super::BinaryKind`] and [`super::TextKind`].
    pub trait Sealed {}
    impl Sealed for super::BinaryKind {}
    impl Sealed for super::TextKind {}
}

impl<K: ByteKind> Default for ByteArrayBuilder<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: ByteKind> ByteArrayBuilder<K> {
    /// An empty builder of `Binary` or `Utf8` arrays (i32 offsets).
    pub fn new() -> Self {
        Self::with_data_type(K::SMALL)
    }

    /// An empty builder of `LargeBinary` or `LargeUtf8` arrays (i64 offsets).
    pub fn new_large() -> Self {
        Self::with_data_type(K::LARGE)
    }

    /// An empty builder of `BinaryView` or `Utf8View` arrays (views).
    pub fn new_view() -> Self {
        Self::with_data_type(K::VIEW)
    }

    /// An empty builder of `data_type` arrays: one of the three above (another type makes
    /// `finish` fail).
    pub fn with_data_type(data_type: DataType) -> Self {
        ByteArrayBuilder {
            bytes: ByteBuilder::new(data_type, K::TEXT),
            kind: PhantomData,
        }
    }

    /// For a view type: start a new data buffer once the current one would pass `size` bytes
    /// (default [`VIEW_BLOCK_SIZE`]; at most `i32::MAX`).
    #[must_use]
    pub fn with_block_size(mut self, size: usize) -> Self {
        self.bytes.set_block_size(size);
        self
    }

    fn append_bytes(&mut self, value: &[u8]) {
        self.bytes.append(value);
    }
}

impl<K: ByteKind> ArrayBuilder for ByteArrayBuilder<K> {
    fn append_null(&mut self) {
        self.bytes.append_null();
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        self.bytes.finish()
    }

    slots!(bytes.slots);
}

append_by_ref!(BinaryBuilder, append_bytes, [&[u8], Vec<u8>, &Vec<u8>, const N => &[u8; N]]);
append_by_ref!(StringBuilder, append_bytes, [&str, String, &String]);

/// Builds a `FixedSizeBinary(width)` array; a value of another width makes `finish` fail.
#[derive(Debug, Clone)]
pub struct FixedSizeBinaryBuilder {
    slots: Slots,
    width: usize,
    values: Vec<u8>,
}

impl FixedSizeBinaryBuilder {
    /// An empty builder of `FixedSizeBinary(width)` arrays.
    pub fn new(width: i32) -> Self {
        Self::with_data_type(DataType::FixedSizeBinary(width))
    }

    /// An empty builder of `data_type` arrays, which must be `FixedSizeBinary` (or `finish` fails).
    pub fn with_data_type(data_type: DataType) -> Self {
        let width = match data_type {
            DataType::FixedSizeBinary(w) => usize::try_from(w).ok(),
            _ => None,
        };
        let error = width
            .is_none()
            .then(|| misuse("fixed-size binary builder given another type", 0));
        FixedSizeBinaryBuilder {
            slots: Slots::new(data_type, error),
            width: width.unwrap_or(0),
            values: Vec::new(),
        }
    }

    /// The width of every value in bytes.
    pub fn width(&self) -> usize {
        self.width
    }
}

append_by_ref!(
    FixedSizeBinaryBuilder,
    append_bytes,
    [&[u8], Vec<u8>, &Vec<u8>, const N => &[u8; N]]
);

impl FixedSizeBinaryBuilder {
    fn append_bytes(&mut self, value: &[u8]) {
        if value.len() == self.width {
            self.values.extend_from_slice(value);
        } else {
            let index = self.slots.validity.len();
            self.slots
                .remember(misuse("fixed-size binary value of another width", index));
            self.values.resize(self.values.len() + self.width, 0);
        }
        self.slots.validity.append(true);
    }
}

impl ArrayBuilder for FixedSizeBinaryBuilder {
    fn append_null(&mut self) {
        self.values.resize(self.values.len() + self.width, 0);
        self.slots.validity.append(false);
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let values = Bytes::from_vec(core::mem::take(&mut self.values));
        self.slots.finish(Ok((vec![values], Vec::new())))
    }

    slots!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::AppendValue;
    use alloc::string::String;

    fn strings() -> Vec<Option<String>> {
        let mut out = Vec::new();
        for i in 0..40 {
            out.push(match i % 4 {
                0 => None,
                1 => Some(String::new()),
                2 => Some("é".repeat(i % 9)),
                _ => Some("twelve bytes".repeat(1 + i % 3)),
            });
        }
        out
    }

    #[test]
    fn every_string_layout_reads_back() {
        let input = strings();
        for mut builder in [
            StringBuilder::new(),
            StringBuilder::new_large(),
            StringBuilder::new_view(),
            StringBuilder::new_view().with_block_size(40),
        ] {
            builder.extend_options(input.iter().map(Option::as_deref));
            let array = builder.finish().unwrap();
            assert_eq!(array.len(), input.len());
            assert_eq!(array.null_count(), 10);
            for (i, s) in input.iter().enumerate() {
                let got = array.is_valid(i).then(|| array.str_value(i));
                assert_eq!(got, s.as_deref(), "{:?} slot {i}", array.data_type());
            }
            let sliced = array.slice(5, 30).unwrap();
            for i in 0..30 {
                assert_eq!(sliced.str_value(i), input[i + 5].as_deref().unwrap_or(""));
            }
        }
    }

    #[test]
    fn views_inline_short_values_and_split_long_ones_into_blocks() {
        let mut builder = BinaryBuilder::new_view().with_block_size(20);
        builder.extend_values([
            &b"exactly12byt"[..],
            b"thirteen byte",
            b"fourteen bytes",
            b"x",
        ]);
        let array = builder.finish().unwrap();
        // views + two data buffers: 13 bytes, then 14 would pass 20.
        assert_eq!(array.buffers().len(), 3);
        assert_eq!(array.buffer(1), b"thirteen byte");
        assert_eq!(array.bytes_value(0), b"exactly12byt");
        assert_eq!(array.bytes_value(2), b"fourteen bytes");
        assert_eq!(array.bytes_value(3), b"x");

        let mut short = BinaryBuilder::new_view();
        short.extend_values([b"abc"]);
        assert_eq!(
            short.finish().unwrap().buffers().len(),
            1,
            "no empty data buffer"
        );
    }

    #[test]
    fn binary_and_wrong_types() {
        let mut builder = BinaryBuilder::new_large();
        builder.extend_options([Some(vec![0u8, 255]), None, Some(vec![])]);
        let array = builder.finish().unwrap();
        assert_eq!(array.data_type(), &DataType::LargeBinary);
        assert_eq!(
            (array.bytes_value(0), array.bytes_value(2)),
            (&[0u8, 255][..], &[][..])
        );
        assert!(array.is_null(1));

        assert!(
            StringBuilder::with_data_type(DataType::Binary)
                .finish()
                .is_err()
        );
        assert!(
            BinaryBuilder::with_data_type(DataType::Utf8)
                .finish()
                .is_err()
        );
    }

    #[test]
    fn fixed_size_binary_checks_widths() {
        let mut builder = FixedSizeBinaryBuilder::new(3);
        builder.extend_options([Some(b"abc"), None, Some(b"xyz")]);
        let array = builder.finish().unwrap();
        assert_eq!(
            (array.bytes_value(0), array.fixed_bytes(2)),
            (&b"abc"[..], &b"xyz"[..])
        );
        assert!(array.is_null(1));
        builder.append_value(b"toolong");
        builder.append_value(b"abc");
        assert!(matches!(
            builder.finish().unwrap_err().kind,
            FormatErrorKind::InvalidArray { index: 0, .. }
        ));
        assert!(
            builder.finish().unwrap().is_empty(),
            "the error is reported once"
        );
        let mut zero = FixedSizeBinaryBuilder::new(0);
        zero.extend_values([b""; 3]);
        assert_eq!(zero.finish().unwrap().len(), 3);
        assert!(FixedSizeBinaryBuilder::new(-1).finish().is_err());
    }
}
