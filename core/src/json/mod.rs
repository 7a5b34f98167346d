//! JSON output: record batches and arrays written as JSON into buffers the caller lends.
//!
//! It uses the view (and, with `alloc`, the arrays that hand one out), the format's checked
//! types, the columnar rules and the data types; nothing of the readers.
//!
//! Validated [`ArrayView`](crate::array::ArrayView)s enter an [`Encoder`]; bytes leave through
//! [`Encoder::encode`], one caller buffer at a time, resuming at any byte. Nothing allocates while
//! encoding, whatever the types or nesting.
//!
//! From the bottom of the ladder up (each uses only those above it in this list):
//!
//! - `escape`, `number`, `temporal`, `embedded`: the text of strings, numbers, dates and times,
//!   and the check of `arrow.json` values.
//! - `options`: [`JsonFormat`] (newline-delimited or one array) and [`EncoderOptions`].
//! - `framing`: the seam to the text format: [`Syntax`], the structural bytes (objects, lists,
//!   members, keys) of JSON ([`Compact`]) or of another format with its shape, and the bytes
//!   around and between rows.
//! - `sink`: the output cursor over the caller's buffer (its spill and the long value in
//!   progress).
//! - `plan`: how each Arrow type is written, `Form` (one exhaustive match, which a
//!   new type fails to compile without), the schema compiled from it once per encoder (every
//!   encoder has one), and the one resolver of a slot through dictionaries, unions and run ends.
//! - `value`: the one writer of each kind of value, which both loops over the plan call.
//! - `rows`: the fast path, whole rows written straight into the buffer while they fit,
//!   following the plan, with a loop of its own per flat type.
//! - `encoder`: the state machine, [`Encoder`] and [`Progress`]: the general walk over the same
//!   plan, resumable at any byte, which hands rows and members to `rows` while they fit.
//! - `writer`: [`JsonWriter`], a document across batches, and the drivers
//!   ([`Encoder::write_to`] for `embedded_io`, `write_to_async` with the `async` feature,
//!   [`Encoder::append_to`] for a `Vec`).
//!
//! An Arrow type gets its JSON in `plan::Form::of` (and, for a new kind of leaf value, a writer
//! in `value`); the compiler then points at every match that must handle it. Another text
//! format with JSON's shape implements [`Syntax`] and names it in the encoder's type; both
//! loops, fast path included, write it (a format whose values differ from JSON's adds their
//! writers in `value`).
//!
//! # Conventions
//!
//! By default the output is what users of pyarrow (`to_pylist`), polars (`write_ndjson`),
//! DuckDB and pandas expect, and arrow-json 60's byte for byte wherever that agrees (checked on
//! every integration file, `tests/tests/json_arrow_json.rs`):
//!
//! | Arrow type | JSON | changed by |
//! |---|---|---|
//! | a null member of a row or struct | `"k":null` | [`omit_nulls`](EncoderOptions::omit_nulls) leaves it out (arrow-json's default) |
//! | Null, a null slot in a list | `null` | |
//! | Boolean | `true` / `false` | |
//! | Int8–Int64, UInt8–UInt64 | `-12` | [`large_ints_as_strings`](EncoderOptions::large_ints_as_strings): beyond ±2^53, `"9007199254740993"` |
//! | Float16/32/64 | `1.5`, `1e300` (shortest round trip); NaN, ±∞ as `null` | [`non_finite_as_strings`](EncoderOptions::non_finite_as_strings): `"NaN"`, `"Infinity"`, `"-Infinity"` |
//! | Decimal32–256 | `-0.005` (every digit) | [`decimals_as_strings`](EncoderOptions::decimals_as_strings): `"-0.005"` |
//! | Utf8, LargeUtf8, Utf8View | `"text"` (RFC 8259 escapes) | |
//! | Binary, LargeBinary, BinaryView, FixedSizeBinary | `"00ff"` (lowercase hex) | [`binary`](EncoderOptions::binary): base64 |
//! | Date32 | `"2018-11-13"` | |
//! | Date64 | `"2018-11-13"`; one that is not a whole day (the format says it should be) `"2018-11-13T17:11:10.011"` | |
//! | Time32/64 | `"17:11:10.011375"` | |
//! | Timestamp, no zone | `"2018-11-13T17:11:10.011"` | [`timestamps_as_epoch`](EncoderOptions::timestamps_as_epoch): the stored integer |
//! | Timestamp with a zone | `"2018-11-13T17:11:10.011Z"`, `"…+05:30"`, local time in a named zone (below) | [`timestamps_utc`](EncoderOptions::timestamps_utc), [`timestamps_as_epoch`](EncoderOptions::timestamps_as_epoch) |
//! | Duration | `"PT3601.000005S"`, `"-PT0.5S"`, `"P0D"` (ISO 8601) | |
//! | Interval (all three) | `"P1Y2M"`, `"P1M2DT0.000003S"`, `"-P1DT61S"`, `"P1M-2D"`, `"P0D"` (ISO 8601) | |
//! | Struct | `{"x":1,"y":"a"}` | `omit_nulls` |
//! | List, LargeList, ListView, LargeListView, FixedSizeList | `[1,null,3]` | |
//! | Map with text keys | `{"k1":1,"k2":null}` (a null value is written whatever `omit_nulls` says: keys are data) | |
//! | Map with other keys | `[{"key":7,"value":"seven"}]` (arrow-json refuses it) | `omit_nulls` (the `value`) |
//! | Dictionary, Run-end encoded | the values (a null dictionary value as `null`) | |
//! | Union (sparse, dense) | the selected child's value (arrow-json refuses it) | |
//! | `arrow.uuid` (FixedSizeBinary(16)) | `"00000000-0000-0000-0000-000000000001"` | [`extensions_as_storage`](EncoderOptions::extensions_as_storage) |
//! | `arrow.json` (any text type) | the JSON value itself, without its tabs and line breaks; text that is not one JSON value (or nests deeper than 256) as a string | `extensions_as_storage` |
//! | `arrow.bool8` (Int8) | `true` (any non-zero) / `false` | `extensions_as_storage` |
//! | `arrow.opaque`, other extensions, a canonical one over other storage or dictionary-encoded | the storage's form | |
//!
//! Intervals are ISO 8601 durations, exact to the nanosecond: the months as years and months,
//! the days, the sub-day part as seconds (as durations are written). Arrow's parts are
//! independent and may differ in sign: when none is positive the whole interval is negated
//! (`-P1M2D`), else each negative part carries its own sign (`P1M-2D`, PostgreSQL's
//! `iso_8601` style and Java's `Period`).
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
//! assert_eq!(json, b"{\"a\":\"hi\"}\n{\"a\":null}\n");
//! let omitted = EncoderOptions::default().with_omit_nulls(true);
//! assert_eq!(to_vec(&batch, JsonFormat::LineDelimited, omitted)?, b"{\"a\":\"hi\"}\n{}\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Dates, times and timezones
//!
//! Values enter as the stored integers and their unit; text leaves into a small stack buffer
//! (the encoder adds the quotes). The forms are arrow-json 60's with its default options
//! (chrono's `Debug` and RFC 3339 forms) but for Date64, intervals and offsets with seconds,
//! computed here with plain integer arithmetic over the proleptic Gregorian calendar:
//!
//! - Date32 and whole-day Date64 `2018-11-13`; other Date64 and naive timestamps
//!   `2018-11-13T17:11:10.011`;
//! - timestamps with a timezone `2018-11-13T17:11:10.011Z` or `…+05:30`; a named zone's offset
//!   with seconds (local mean time before about 1900, Europe/London in 1677 is `-00:01:15`) is
//!   written with them (`…-00:01:15`, as Python's `isoformat` writes it), so that the text
//!   always names the exact instant (chrono rounds it to the minute);
//! - times `17:11:10.011375`; fractions have 3, 6 or 9 digits, the fewest that are exact;
//! - years outside 0..=9999 carry a sign and at least four digits (`+10000`, `-0001`);
//! - durations and intervals in ISO 8601 (`PT0.12S`, `-PT120S`, `P0D`, `P1Y2M`, `P3DT0.5S`).
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
//!   zoned timestamp as its UTC instant with `Z`; the zone is then neither checked nor looked
//!   up (the instant needs none), so an unknown name or a bad offset is no error.

mod embedded;
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

pub use encoder::{Encoder, EncoderBuilder};
pub use framing::{Compact, Syntax, TOKEN};
#[doc(hidden)] // for the golden test
pub use number::f16_to_f32;
pub use options::{BinaryFormat, EncoderOptions, JsonFormat};
pub use temporal::{ZoneResolver, ZoneRules};
#[cfg(feature = "alloc")]
pub use writer::{JsonWriter, WRITE_BUFFER, to_vec};

/// The nesting depth an encoder supports unless told otherwise: 32 open objects, lists and
/// maps at once (a batch's row object counts as one; a map with non-string keys as two).
pub const DEFAULT_DEPTH: usize = 32;

/// The arrays (columns, children, dictionary values) an encoder's plan holds inline unless told
/// otherwise, about 184 bytes each. A `RecordBatch`'s wider plan goes on the heap; a no-alloc
/// batch of more arrays is refused ([`JsonError::TooManyArrays`]): its encoder names a larger
/// `PLAN`, as its `Batch` a larger `N`.
pub const DEFAULT_PLAN: usize = 32;

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
    /// The schema has more arrays (columns, their children and dictionaries' values) than the
    /// encoder's plan holds inline, and there is no heap to plan them on (a no-alloc batch):
    /// name a larger `PLAN` in the encoder's type.
    TooManyArrays {
        /// The arrays of the schema.
        arrays: usize,
        /// The encoder's `PLAN`.
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
            JsonError::TooManyArrays { arrays, limit } => write!(
                f,
                "the schema has {arrays} arrays (columns, children, dictionary values), more \
                 than the JSON encoder's plan holds ({limit}, its PLAN)"
            ),
        }
    }
}

impl core::error::Error for JsonError {}
