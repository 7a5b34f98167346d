//! What the JSON encoder writes: the document's framing ([`JsonFormat`]) and the value
//! conventions ([`EncoderOptions`]).
//!
//! The defaults are what users of pyarrow, polars, DuckDB and pandas expect: null members
//! written as `null`, NaN and ±infinity as `null`, binary as lowercase hex, decimals as numbers,
//! temporal values as ISO 8601 / RFC 3339 text, canonical extension types as their values.
//! [`EncoderOptions::omit_nulls`] gives arrow-json 60's form of objects.
//!
//! It uses the temporal text's zone resolver; the encoder's modules read these options.

use super::temporal::{ZoneResolver, Zones};

/// How rows are framed into a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum JsonFormat {
    /// Newline-delimited JSON: each row followed by `\n` (arrow-json's `LineDelimited`).
    #[default]
    LineDelimited,
    /// One JSON array of rows, `[{…},{…}]`; zero rows give `[]` (arrow-json's `JsonArray`).
    JsonArray,
}

/// How binary values (Binary, LargeBinary, BinaryView, FixedSizeBinary) are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum BinaryFormat {
    /// A string of lowercase hex digits, two per byte (arrow-json's form).
    #[default]
    Hex,
    /// A string of standard, padded base64 (RFC 4648 §4).
    Base64,
}

/// Value conventions of the encoder: [`Default`] is the [module's](super) conventions, `with_*`
/// changes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct EncoderOptions {
    /// Leave null members of objects (struct fields, row columns, the `value` of map entries
    /// written as `{"key":…,"value":…}`) out instead of writing them as `null` (arrow-json's
    /// default). Entries of maps written as objects are always written, `"key":null` for a
    /// null value: a map's keys are data.
    pub omit_nulls: bool,
    /// Write Int64 and UInt64 values whose magnitude exceeds 2^53 (beyond an IEEE double's exact
    /// integers) as JSON strings.
    pub large_ints_as_strings: bool,
    /// Write NaN, infinity and negative infinity as the strings `"NaN"`, `"Infinity"` and
    /// `"-Infinity"` instead of `null`.
    pub non_finite_as_strings: bool,
    /// Write timestamps as their stored integer (in the type's unit since the epoch) instead of
    /// ISO 8601 text.
    pub timestamps_as_epoch: bool,
    /// Write decimals (of every width) as JSON strings holding every digit
    /// (`"-99999999999999999999999999999999999.99"`) instead of numbers, which common parsers
    /// round to a double (polars' convention).
    pub decimals_as_strings: bool,
    /// Write every timestamp with a timezone as its UTC instant with `Z`, instead of the local
    /// time with the zone's offset.
    pub timestamps_utc: bool,
    /// Resolves IANA zone names (`America/New_York`) for timestamps in local time; without one,
    /// such timestamps are written as their UTC instant with `Z` (see
    /// [the timezone rules](super#timezones)).
    pub time_zones: Option<ZoneResolver>,
    /// How binary values are written.
    pub binary: BinaryFormat,
    /// Write values of canonical extension types (`arrow.uuid`, `arrow.json`, `arrow.bool8`)
    /// as their storage (hex bytes, a string, an integer) instead of as what they mean.
    pub extensions_as_storage: bool,
}

impl EncoderOptions {
    /// The default conventions (see the [module](super)).
    pub fn new() -> Self {
        Self::default()
    }

    /// The zones of an encoder with these options, none resolved yet: timestamps with a zone are
    /// written in local time unless in UTC or as epoch counts.
    pub(crate) fn zones<'s>(&self) -> Zones<'s> {
        Zones::new(
            self.time_zones,
            !self.timestamps_utc && !self.timestamps_as_epoch,
        )
    }
}

impl EncoderOptions {
    /// Sets [`EncoderOptions::omit_nulls`]: whether null members of objects are left out
    /// instead of written as `null`.
    #[must_use]
    pub fn with_omit_nulls(mut self, omit_nulls: bool) -> Self {
        self.omit_nulls = omit_nulls;
        self
    }

    /// Sets [`EncoderOptions::large_ints_as_strings`]: whether Int64 and UInt64 values
    /// beyond 2^53 are written as JSON strings.
    #[must_use]
    pub fn with_large_ints_as_strings(mut self, large_ints_as_strings: bool) -> Self {
        self.large_ints_as_strings = large_ints_as_strings;
        self
    }

    /// Sets [`EncoderOptions::non_finite_as_strings`]: whether NaN and ±infinity are
    /// written as strings instead of `null`.
    #[must_use]
    pub fn with_non_finite_as_strings(mut self, non_finite_as_strings: bool) -> Self {
        self.non_finite_as_strings = non_finite_as_strings;
        self
    }

    /// Sets [`EncoderOptions::timestamps_as_epoch`]: whether timestamps are written as
    /// their stored integer instead of ISO 8601 text.
    #[must_use]
    pub fn with_timestamps_as_epoch(mut self, timestamps_as_epoch: bool) -> Self {
        self.timestamps_as_epoch = timestamps_as_epoch;
        self
    }

    /// Sets [`EncoderOptions::decimals_as_strings`]: whether decimals are written as JSON
    /// strings holding every digit.
    #[must_use]
    pub fn with_decimals_as_strings(mut self, decimals_as_strings: bool) -> Self {
        self.decimals_as_strings = decimals_as_strings;
        self
    }

    /// Sets [`EncoderOptions::timestamps_utc`]: whether timestamps with a timezone are
    /// written as their UTC instant with `Z`.
    #[must_use]
    pub fn with_timestamps_utc(mut self, timestamps_utc: bool) -> Self {
        self.timestamps_utc = timestamps_utc;
        self
    }

    /// Sets [`EncoderOptions::time_zones`]: the resolver of IANA zone names for timestamps
    /// in local time.
    #[must_use]
    pub fn with_time_zones(mut self, time_zones: Option<ZoneResolver>) -> Self {
        self.time_zones = time_zones;
        self
    }

    /// Sets [`EncoderOptions::binary`]: how binary values are written.
    #[must_use]
    pub fn with_binary(mut self, binary: BinaryFormat) -> Self {
        self.binary = binary;
        self
    }

    /// Sets [`EncoderOptions::extensions_as_storage`]: whether values of canonical
    /// extension types are written as their storage.
    #[must_use]
    pub fn with_extensions_as_storage(mut self, extensions_as_storage: bool) -> Self {
        self.extensions_as_storage = extensions_as_storage;
        self
    }
}
