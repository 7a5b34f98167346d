//! JSON output: record batches and arrays written as JSON into buffers the caller lends.
//!
//! Validated [`ArrayView`](crate::array::ArrayView)s enter an [`Encoder`]; bytes leave through
//! [`Encoder::encode`], one caller buffer at a time, resuming at any byte. Nothing allocates while
//! encoding, whatever the types or nesting.
//!
//! - `options`: [`JsonFormat`] (newline-delimited or one array) and [`EncoderOptions`].
//! - `encoder`: the state machine, [`Encoder`] and [`Progress`].
//! - `writer`: [`JsonWriter`], a document across batches, and the drivers
//!   ([`Encoder::write_to`] for `embedded_io`, `write_to_async` with the `async` feature,
//!   [`Encoder::append_to`] for a `Vec`).
//! - `plan` and `rows`: the fast path, whole rows written straight into the buffer while they
//!   fit, following the schema compiled once per encoder.
//! - `sink`, `escape`, `number`, `temporal`: the output cursor and the text of values.
//!
//! # Conventions
//!
//! By default the output is arrow-json 60's, byte for byte except the text of floats (quiver
//! writes the shortest round-trip form in ryu's notation, e.g. `1e300` where arrow-json writes
//! `1.0e300`; both parse to the same number; the digits come from zmij, the faster formatter):
//!
//! - rows are objects keyed by column name; null members are left out (unless
//!   [`EncoderOptions::explicit_nulls`]); nulls inside lists are `null`;
//! - NaN and ±infinity are `null`; binary is lowercase hex; decimals are exact numbers (strings
//!   with [`EncoderOptions::decimals_as_strings`]);
//! - dates, times, timestamps, durations and intervals are strings as arrow-json writes them
//!   (see [below](#dates-times-and-timezones) for the forms, the timezone rules and the values
//!   arrow-json cannot write);
//! - structs are objects, every kind of list is an array, maps with string keys are objects
//!   (an entry whose value is null is written `"key":null` whatever `explicit_nulls` says: a
//!   map's keys are data; arrow-json leaves such entries out);
//! - dictionaries are written as their values, run-end encoded arrays as their logical values,
//!   views as their values.
//!
//! Beyond arrow-json (which refuses them): unions are written as the selected child's value, and
//! maps whose keys are not strings as `[{"key":…,"value":…}]`. A null dictionary *value* is
//! written as `null` (arrow-json writes the value slot's stale contents).
//!
//! # Depth
//!
//! An encoder holds one frame per open object, list or map in a fixed stack of `DEPTH` frames
//! ([`DEFAULT_DEPTH`] = 32); a schema that needs more is refused when the encoder is built.
//!
//! ```
//! use quiver::json::{to_vec, EncoderOptions, JsonFormat};
//! # use quiver::array::{ArrayParts, ArrayView, RecordBatch};
//! # use quiver::{bytes::Bytes, datatype::DataType, schema::Field, schema::Schema};
//! # use std::sync::Arc;
//! # let column = ArrayView::try_new(ArrayParts {
//! #     data_type: Some(DataType::Utf8),
//! #     len: 2,
//! #     null_count: 1,
//! #     validity: Some(Bytes::from_vec(vec![0b01])),
//! #     buffers: vec![
//! #         Bytes::from_vec([0i32, 2, 2].iter().flat_map(|v| v.to_le_bytes()).collect()),
//! #         Bytes::from_vec(b"hi".to_vec()),
//! #     ],
//! #     ..ArrayParts::default()
//! # })?;
//! # let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Utf8, true)]));
//! # let batch = RecordBatch::try_new(schema, vec![column], 2)?;
//! // A batch with one column "a" holding "hi" and a null:
//! let json = to_vec(&batch, JsonFormat::LineDelimited, EncoderOptions::default())?;
//! assert_eq!(json, b"{\"a\":\"hi\"}\n{}\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Dates, times and timezones
//!
//! Values enter as the stored integers and their unit; text leaves into a small stack buffer
//! (the encoder adds the quotes). The formats are those of arrow-json 60 with its default options
//! (chrono's `Debug` and RFC 3339 forms, Arrow's interval display), computed here with plain
//! integer arithmetic over the proleptic Gregorian calendar:
//!
//! - Date32 `2018-11-13`; Date64 and naive timestamps `2018-11-13T17:11:10.011`;
//! - timestamps with a timezone `2018-11-13T17:11:10.011Z` or `…+05:30`;
//! - times `17:11:10.011375`; fractions have 3, 6 or 9 digits, the fewest that are exact;
//! - years outside 0..=9999 carry a sign and at least four digits (`+10000`, `-0001`);
//! - durations in ISO 8601 (`PT0.12S`, `-PT120S`, `P0D`);
//! - intervals as Arrow displays them (`1 years 2 mons`, `3 days 1 hours 0.500 secs`).
//!
//! Where arrow-json cannot write a value (a date beyond chrono's ±262,143 years, a time of day
//! outside 0–24 h, a duration beyond ±2^63 ms) it writes an error text; quiver continues the
//! same format instead: the calendar extends, times keep their sign and count hours past 24.
//!
//! ## Timezones
//!
//! - `±HH:MM`, `±HHMM` and `±HH` are fixed offsets, parsed as arrow-json parses them; any other
//!   text starting with a sign (`+25:00`) is refused when the encoder is built
//!   ([`JsonError::InvalidTimeZone`]).
//! - `UTC`, `Z`, `GMT` and their aliases, with or without `Etc/`, are offset 0 (`Z`);
//!   `Etc/GMT±N` is the fixed offset ∓N hours (the POSIX sign, as in the tz database).
//! - Any other name is an IANA zone (`America/New_York`). With a [`ZoneResolver`] in
//!   [`EncoderOptions::time_zones`] (quiver-std has one over
//!   a bundled tz database), its values are written in local time with the offset in effect at
//!   each instant (`1969-12-31T19:00:00-05:00`), as arrow-json with chrono-tz, pyarrow and
//!   polars write them; the name is resolved once when the encoder is built, and a name the
//!   resolver does not know is refused then
//!   ([`JsonError::UnknownTimeZone`]). Without a resolver (a
//!   `no_std` encoder carries no tz database) its instants are written in UTC with `Z`.
//! - [`EncoderOptions::timestamps_utc`] writes every
//!   zoned timestamp as its UTC instant with `Z`.

mod encoder;
pub(crate) mod escape;
pub(crate) mod framing;
pub(crate) mod number;
mod options;
mod plan;
mod rows;
pub(crate) mod sink;
pub(crate) mod temporal;
pub(crate) mod value;
#[cfg(feature = "alloc")]
mod writer;

pub use encoder::Encoder;
#[doc(hidden)] // for the golden test
pub use number::f16_to_f32;
pub use options::{BinaryFormat, EncoderOptions, JsonFormat};
pub use temporal::{ZoneResolver, ZoneRules};
#[cfg(feature = "alloc")]
pub use writer::{JsonWriter, WRITE_BUFFER, to_vec};

/// The nesting depth an encoder supports unless told otherwise: 32 open objects, lists and
/// maps at once (a batch's row object counts as one; a map with non-string keys as two).
pub const DEFAULT_DEPTH: usize = 32;

/// What one `encode` call did (of an [`Encoder`] or a
/// [`no_alloc`](crate::no_alloc) encoder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "only `written` bytes of the buffer are output; call again until `done`"]
pub struct Progress {
    /// Bytes written at the start of the buffer.
    pub written: usize,
    /// Whether the encoder has written everything; further calls write nothing.
    pub done: bool,
}

/// Why an encoder could not be built (encoding itself cannot fail).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonError {
    /// The values of top-level column `column` nest deeper than the encoder's `limit`.
    TooDeep {
        /// Index of the column (0 for an array encoder).
        column: usize,
        /// The encoder's depth limit.
        limit: usize,
    },
    /// A map in top-level column `column` has null keys, which a JSON object cannot hold.
    NullMapKey {
        /// Index of the column (0 for an array encoder).
        column: usize,
    },
    /// A timestamp in top-level column `column` has a timezone that starts with a sign but is
    /// not a fixed offset within a day (`±HH:MM`, `±HHMM` or `±HH`), such as `+25:00`.
    InvalidTimeZone {
        /// Index of the column (0 for an array encoder).
        column: usize,
    },
    /// A timestamp in top-level column `column` has a timezone name that the
    /// [`EncoderOptions::time_zones`] resolver does not know.
    UnknownTimeZone {
        /// Index of the column (0 for an array encoder).
        column: usize,
    },
    /// Column `column` brings the schema's distinct named timezones past the `limit` an encoder
    /// holds.
    TooManyTimeZones {
        /// Index of the column (0 for an array encoder).
        column: usize,
        /// The most named zones an encoder holds.
        limit: usize,
    },
}

impl JsonError {
    /// The error for a timestamp's zone in `column`.
    pub(crate) fn zone(column: usize, error: temporal::ZoneError) -> Self {
        match error {
            temporal::ZoneError::InvalidOffset => JsonError::InvalidTimeZone { column },
            temporal::ZoneError::Unknown => JsonError::UnknownTimeZone { column },
            temporal::ZoneError::TooMany => JsonError::TooManyTimeZones {
                column,
                limit: temporal::ZONES,
            },
        }
    }
}

impl core::fmt::Display for JsonError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            JsonError::TooDeep { column, limit } => write!(
                f,
                "column {column}: values nest deeper than the JSON encoder's limit of {limit}"
            ),
            JsonError::NullMapKey { column } => {
                write!(f, "column {column}: a map has null keys")
            }
            JsonError::InvalidTimeZone { column } => write!(
                f,
                "column {column}: a timestamp's timezone is not a valid offset \
                 (±HH:MM within a day)"
            ),
            JsonError::UnknownTimeZone { column } => write!(
                f,
                "column {column}: a timestamp's timezone is not in the timezone database"
            ),
            JsonError::TooManyTimeZones { column, limit } => write!(
                f,
                "column {column}: timestamps use more than {limit} named timezones"
            ),
        }
    }
}

impl core::error::Error for JsonError {}
