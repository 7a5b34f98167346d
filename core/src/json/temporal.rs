//! Dates, times, timestamps, durations and intervals as JSON text (ISO 8601 and RFC 3339; the forms
//! and the timezone rules are in the [`json`](super) module's documentation, "Dates, times and
//! timezones").
//!
//! Values enter as the stored integers and their unit; text leaves into a small stack buffer
//! (the encoder adds the quotes), computed with plain integer arithmetic over the proleptic
//! Gregorian calendar.

use super::number::{Scratch, padded_digits, two_digits};
use crate::datatype::TimeUnit;

/// Bytes of the longest temporal text (an interval with every part at its extreme).
pub(crate) const TEMPORAL_TEXT: usize = 96;

/// Temporal text under construction.
pub(crate) type Text = Scratch<TEMPORAL_TEXT>;

/// Bytes of the window that quoted dates and timestamps are written into: the longest such
/// text (46 bytes: a year past 9999, nanoseconds and an offset) and the eight-byte blocks the
/// common forms store past their end.
pub(crate) const WINDOW: usize = 64;

const SECONDS_PER_DAY: i64 = 86_400;

/// Units of the type in one second.
pub(crate) fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// Year, month (1–12) and day (1–31) of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`: the era of 400 years in 64 bits, so every day an `i64` timestamp can reach
/// is covered, and the day within it in 32).
#[inline(always)]
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097) as u32; // [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March first
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = i64::from(yoe) + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// [`civil_from_days`] for the years 0..=9999, in 32-bit arithmetic (Neri and Schneider's
/// Euclidean affine forms of the calendar, 2022); `None` outside those years.
#[inline(always)]
fn civil_in_four_digits(days: i64) -> Option<(u32, u32, u32)> {
    /// 0000-01-01 and 9999-12-31.
    const FIRST: i64 = -719_528;
    const LAST: i64 = 2_932_896;
    if !(FIRST..=LAST).contains(&days) {
        return None;
    }
    // Days since -0400-03-01: an era before the computational year 0 keeps them positive.
    let n = (days + 719_468 + 146_097) as u32;
    let n1 = 4 * n + 3;
    let century = n1 / 146_097;
    let p = u64::from((n1 % 146_097) | 3) * 2_939_745;
    let year_of_century = (p >> 32) as u32;
    let day_of_year = p as u32 / 2_939_745 / 4; // from March 1st
    let n3 = 2_141 * day_of_year + 197_913;
    let (month, day) = (n3 >> 16, (n3 & 0xFFFF) / 2_141 + 1);
    let january = day_of_year >= 306; // January or February: the next civil year
    let year = 100 * century + year_of_century + u32::from(january) - 400;
    Some((year, if january { month - 12 } else { month }, day))
}

/// The two decimal digits of each number below 100 placed in `lanes` (one at the lowest byte of
/// each lane, lanes at least 16 bits apart): tens in that byte, ones in the next, as byte values
/// 0–9. `tens` marks the lanes' lowest bytes with `0xF`.
#[inline(always)]
fn lane_digits(lanes: u64, tens: u64) -> u64 {
    // Per lane (< 100): lane / 10 == lane * 103 >> 10, exact, with no carry between lanes.
    let t = ((lanes * 103) >> 10) & tens;
    t | ((lanes - t * 10) << 8)
}

/// Writes `"YYYY-MM-DD` at `out[0..11]`.
#[inline(always)]
fn put_date(out: &mut [u8; WINDOW], (year, month, day): (u32, u32, u32)) {
    // `YYYY-MM-` from three pairs of digits and a mask of zeros and dashes; `DD` on its own.
    let lanes = u64::from(year / 100) | u64::from(year % 100) << 16 | u64::from(month) << 40;
    let head = lane_digits(lanes, 0x0000_0F00_000F_000F) + u64::from_le_bytes(*b"0000-00-");
    out[0] = b'"';
    if let Some(block) = out.get_mut(1..9).and_then(|b| b.first_chunk_mut::<8>()) {
        *block = head.to_le_bytes();
    }
    if let Some(block) = out.get_mut(9..11).and_then(|b| b.first_chunk_mut::<2>()) {
        *block = two_digits(day);
    }
}

/// Writes `THH:MM:SS` (a time of day, below 24 h) at `out[11..20]`.
#[inline(always)]
fn put_clock(out: &mut [u8; WINDOW], seconds: u32) {
    let hours = seconds / 3_600;
    let rest = seconds - hours * 3_600;
    let minutes = rest / 60;
    let lanes = u64::from(hours) | u64::from(minutes) << 24 | u64::from(rest - minutes * 60) << 48;
    let clock = lane_digits(lanes, 0x000F_0000_0F00_000F) + u64::from_le_bytes(*b"00:00:00");
    out[11] = b'T';
    if let Some(block) = out.get_mut(12..20).and_then(|b| b.first_chunk_mut::<8>()) {
        *block = clock.to_le_bytes();
    }
}

/// Writes a fraction of a second at `out[at..]` (as [`fraction`] does, touching at most
/// `out[at..at + 10]`); returns its length.
#[inline(always)]
fn put_fraction(out: &mut [u8; WINDOW], at: usize, nanos: u32) -> usize {
    let (block, len) = if nanos == 0 {
        return 0;
    } else if nanos.is_multiple_of(1_000_000) {
        (padded_digits(nanos / 1_000_000, 3), 4)
    } else if nanos.is_multiple_of(1_000) {
        (padded_digits(nanos / 1_000, 6), 7)
    } else {
        // Nine digits: the first beside the point, then eight in a second block.
        (u64::from(b'0') + u64::from(nanos / 100_000_000), 10)
    };
    if let Some(dst) = out.get_mut(at..at + 8).and_then(|b| b.first_chunk_mut()) {
        *dst = (u64::from(b'.') | block << 8).to_le_bytes();
    }
    if len == 10
        && let Some(dst) = out
            .get_mut(at + 2..at + 10)
            .and_then(|b| b.first_chunk_mut())
    {
        *dst = padded_digits(nanos % 100_000_000, 8).to_le_bytes();
    }
    len
}

/// Temporal text that `write` builds in a [`Text`], between quotes.
#[inline(always)]
pub(crate) fn quote(write: impl FnOnce(&mut Text)) -> Text {
    let mut text = Text::new();
    text.push(b'"');
    write(&mut text);
    text.push(b'"');
    text
}

/// Writes temporal text built in a [`Text`] between quotes at the start of `out`; returns its
/// length.
#[cold]
fn quoted(out: &mut [u8; WINDOW], write: impl FnOnce(&mut Text)) -> usize {
    let text = quote(write);
    let n = text.as_bytes().len().min(WINDOW);
    if let (Some(dst), Some(src)) = (out.get_mut(..n), text.as_bytes().get(..n)) {
        dst.copy_from_slice(src);
    }
    n
}

/// `YYYY-MM-DD`, with a sign and at least four year digits outside 0..=9999.
#[inline(always)]
fn date(days: i64, text: &mut Text) {
    let (year, month, day) = civil_from_days(days);
    let [m1, m2] = two_digits(month);
    let [d1, d2] = two_digits(day);
    if !(0..=9999).contains(&year) {
        text.push(if year < 0 { b'-' } else { b'+' });
    }
    let magnitude = year.unsigned_abs();
    if magnitude < 10_000 {
        text.padded(magnitude, 4);
    } else {
        text.unsigned(magnitude);
    }
    text.extend(&[b'-', m1, m2, b'-', d1, d2]);
}

/// `.mmm`, `.uuuuuu` or `.nnnnnnnnn`: the shortest of the three that is exact; nothing for 0.
#[inline(always)]
fn fraction(nanos: u32, text: &mut Text) {
    if nanos == 0 {
        return;
    }
    text.push(b'.');
    if nanos.is_multiple_of(1_000_000) {
        text.padded(u64::from(nanos / 1_000_000), 3);
    } else if nanos.is_multiple_of(1_000) {
        text.padded(u64::from(nanos / 1_000), 6);
    } else {
        text.padded(u64::from(nanos), 9);
    }
}

/// `HH:MM:SS` and its fraction; hours are not limited to 24.
#[inline(always)]
fn clock(seconds: u64, nanos: u32, text: &mut Text) {
    if seconds < 100 * 3_600 {
        let seconds = seconds as u32;
        let [h1, h2] = two_digits(seconds / 3_600);
        let [m1, m2] = two_digits(seconds / 60 % 60);
        let [s1, s2] = two_digits(seconds % 60);
        text.extend(&[h1, h2, b':', m1, m2, b':', s1, s2]);
    } else {
        text.unsigned(seconds / 3_600);
        text.push(b':');
        text.padded(seconds / 60 % 60, 2);
        text.push(b':');
        text.padded(seconds % 60, 2);
    }
    fraction(nanos, text);
}

/// The day and the second of the day of a count of seconds since the epoch shifted by `shift`
/// seconds (less than a day either way).
#[inline(always)]
fn day_and_time(seconds: i64, shift: i64) -> (i64, i64) {
    let days = seconds.div_euclid(SECONDS_PER_DAY);
    // Shifted within a day of the day's start: never overflows, and at most one day off.
    let time = seconds.rem_euclid(SECONDS_PER_DAY) + shift;
    if time < 0 {
        (days - 1, time + SECONDS_PER_DAY)
    } else if time >= SECONDS_PER_DAY {
        (days + 1, time - SECONDS_PER_DAY)
    } else {
        (days, time)
    }
}

/// Seconds since the epoch and nanoseconds of a count of `unit`s (floored, so the nanoseconds
/// are never negative); each unit divides by a constant.
#[inline(always)]
fn split(value: i64, unit: TimeUnit) -> (i64, u32) {
    #[inline(always)]
    fn per<const UNITS: i64>(value: i64) -> (i64, u32) {
        let nanos = value.rem_euclid(UNITS) * (1_000_000_000 / UNITS);
        (value.div_euclid(UNITS), nanos as u32)
    }
    match unit {
        TimeUnit::Second => (value, 0),
        TimeUnit::Millisecond => per::<1_000>(value),
        TimeUnit::Microsecond => per::<1_000_000>(value),
        TimeUnit::Nanosecond => per::<1_000_000_000>(value),
    }
}

/// Date32 (days since the epoch) between quotes at the start of `out`; returns its length.
#[inline(always)]
pub(crate) fn date32(days: i32, out: &mut [u8; WINDOW]) -> usize {
    day(i64::from(days), out)
}

/// The date of day `days` since the epoch between quotes at the start of `out`; returns its
/// length.
#[inline(always)]
fn day(days: i64, out: &mut [u8; WINDOW]) -> usize {
    match civil_in_four_digits(days) {
        Some(civil) => {
            put_date(out, civil);
            out[11] = b'"';
            12
        }
        None => quoted(out, |text| date(days, text)),
    }
}

/// Date64 (milliseconds since the epoch) between quotes at the start of `out`: a date, as the
/// format means a Date64 to be (a whole number of days), else the naive date-time it names;
/// returns its length.
#[inline(always)]
pub(crate) fn date64(millis: i64, out: &mut [u8; WINDOW]) -> usize {
    const MILLIS_PER_DAY: i64 = SECONDS_PER_DAY * 1_000;
    if millis % MILLIS_PER_DAY == 0 {
        day(millis / MILLIS_PER_DAY, out)
    } else {
        timestamp(millis, TimeUnit::Millisecond, Zone::Naive, out)
    }
}

/// Time32/Time64: time of day; outside 0–24 h, signed and with hours past 24.
pub(crate) fn time(value: i64, unit: TimeUnit, text: &mut Text) {
    let (seconds, nanos) = signed_seconds(value, unit, text);
    clock(seconds, nanos as u32, text);
}

/// Writes `-` before a negative count of `unit`s; returns its magnitude's whole seconds and
/// nanoseconds.
fn signed_seconds(value: i64, unit: TimeUnit, text: &mut Text) -> (u64, u64) {
    if value < 0 {
        text.push(b'-');
    }
    let magnitude = value.unsigned_abs();
    let per = per_second(unit) as u64;
    (magnitude / per, magnitude % per * (1_000_000_000 / per))
}

/// The rules of a named timezone: its offset from UTC at any instant. An
/// [`EncoderOptions::time_zones`](super::EncoderOptions::time_zones) resolver hands them out;
/// quiver-std implements them over a bundled tz database.
pub trait ZoneRules: Sync {
    /// Seconds east of UTC in effect at `utc_seconds` since the epoch (any `i64`: beyond the
    /// zone's data, the nearest rule). Offsets of a day or more are taken as less than a day.
    fn offset(&self, utc_seconds: i64) -> i32;
}

/// Looks up an IANA zone name (`America/New_York`): its rules, or `None` when the name is
/// unknown. Called once per distinct zone name when an encoder is built, never while encoding.
#[derive(Clone, Copy, Eq)]
pub struct ZoneResolver(pub fn(&str) -> Option<&'static dyn ZoneRules>);

impl ZoneResolver {
    /// The rules of zone `name`, if the resolver knows it.
    pub fn resolve(&self, name: &str) -> Option<&'static dyn ZoneRules> {
        (self.0)(name)
    }
}

/// Resolvers are equal when they are the same function.
impl PartialEq for ZoneResolver {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::fn_addr_eq(self.0, other.0)
    }
}

impl core::hash::Hash for ZoneResolver {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        (self.0 as usize).hash(state);
    }
}

impl core::fmt::Debug for ZoneResolver {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ZoneResolver(..)")
    }
}

/// A timestamp's timezone, ready for its values.
#[derive(Clone, Copy)]
pub(crate) enum Zone {
    /// No timezone: a naive date-time.
    Naive,
    /// A fixed offset east of UTC, in minutes (0 is written `Z`).
    Offset(i32),
    /// A named zone's rules: local time with the offset in effect at each instant.
    Named(&'static dyn ZoneRules),
}

impl PartialEq for Zone {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Zone::Naive, Zone::Naive) => true,
            (Zone::Offset(a), Zone::Offset(b)) => a == b,
            (Zone::Named(a), Zone::Named(b)) => core::ptr::addr_eq(*a, *b),
            _ => false,
        }
    }
}

impl Eq for Zone {}

impl core::fmt::Debug for Zone {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Zone::Naive => f.write_str("Naive"),
            Zone::Offset(minutes) => f.debug_tuple("Offset").field(minutes).finish(),
            Zone::Named(_) => f.write_str("Named"),
        }
    }
}

/// Why a timestamp's timezone cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZoneError {
    /// It starts with `+` or `-` but is not `±HH:MM`, `±HHMM` or `±HH` within a day.
    InvalidOffset,
    /// The resolver does not know the name.
    Unknown,
    /// More distinct named zones than an encoder holds ([`ZONES`]).
    TooMany,
}

/// What a timezone string is, before any name is resolved.
enum Parsed<'s> {
    Zone(Zone),
    Name(&'s str),
}

/// Parses an Arrow timezone string.
///
/// - `±HH:MM`, `±HHMM` and `±HH` are fixed offsets, as arrow-json parses them; anything else
///   starting with a sign is an error.
/// - `UTC`, `Z`, `GMT` (and `UCT`, `Universal`, `Zulu`, `Greenwich`, `GMT0`) with or without
///   `Etc/` are offset 0; `Etc/GMT±N` is the fixed offset ∓N hours (the POSIX sign, as in the
///   tz database).
/// - Any other name is an IANA zone for the resolver.
fn parse(timezone: &str) -> Result<Parsed<'_>, ZoneError> {
    if timezone.starts_with(['+', '-']) {
        return fixed_offset(timezone)
            .map(|minutes| Parsed::Zone(Zone::Offset(minutes)))
            .ok_or(ZoneError::InvalidOffset);
    }
    let name = timezone.strip_prefix("Etc/").unwrap_or(timezone);
    // A list, not one string split at spaces: this runs for every timestamp the walk writes.
    const UTC: [&str; 11] = [
        "UTC",
        "Z",
        "GMT",
        "UCT",
        "Universal",
        "Zulu",
        "Greenwich",
        "GMT0",
        "GMT+0",
        "GMT-0",
        "Zero",
    ];
    if UTC.iter().any(|alias| alias.eq_ignore_ascii_case(name)) {
        return Ok(Parsed::Zone(Zone::Offset(0)));
    }
    if let Some(hours) = name.strip_prefix("GMT")
        && let Some(sign @ (b'+' | b'-')) = hours.bytes().next()
        && let Some(h) = hours.get(1..).and_then(|h| h.parse::<i32>().ok())
        && (0..=14).contains(&h)
    {
        let east = if sign == b'+' { -h } else { h };
        return Ok(Parsed::Zone(Zone::Offset(east * 60)));
    }
    Ok(Parsed::Name(timezone))
}

/// Named zones an encoder holds at most (distinct names across its schema).
pub(crate) const ZONES: usize = 8;

/// The named zones of an encoder's schema, resolved once when it is built; values then find
/// their zone by name here, without calling the resolver.
#[derive(Clone)]
pub(crate) struct Zones<'s> {
    named: heapless::Vec<(&'s str, &'static dyn ZoneRules), ZONES>,
    /// The first timezone added and its zone: the walk finds a timestamp's zone for each value,
    /// and a schema's timestamps mostly share one, found here by address without parsing it.
    first: Option<(&'s str, Zone)>,
    /// The resolver of names, unless zones are not written in local time.
    resolver: Option<ZoneResolver>,
    /// Zoned timestamps are written in local time: not every one in UTC
    /// ([`EncoderOptions::timestamps_utc`](super::EncoderOptions)) nor as epoch counts. When
    /// they are not, a zone is neither checked nor resolved (the instant needs none).
    local: bool,
}

impl<'s> Zones<'s> {
    /// No zones yet: zoned timestamps are written in `local` time (else no zone is checked or
    /// resolved), their zone names resolved by `resolver` (see `EncoderOptions::zones`).
    pub(crate) fn new(resolver: Option<ZoneResolver>, local: bool) -> Self {
        Zones {
            named: heapless::Vec::new(),
            first: None,
            resolver: resolver.filter(|_| local),
            local,
        }
    }

    /// Checks `timezone` (of a timestamp type in the schema) and resolves it if it is a name
    /// not seen before.
    pub(crate) fn add(&mut self, timezone: Option<&'s str>) -> Result<(), ZoneError> {
        if !self.local {
            return Ok(());
        }
        let parsed = timezone.map(parse).transpose()?;
        if let (Some(Parsed::Name(name)), Some(resolve)) = (parsed, self.resolver)
            && !self.named.iter().any(|(n, _)| *n == name)
        {
            let rules = resolve.resolve(name).ok_or(ZoneError::Unknown)?;
            self.named
                .push((name, rules))
                .map_err(|_| ZoneError::TooMany)?;
        }
        if let (None, Some(tz)) = (self.first, timezone) {
            self.first = Some((tz, self.zone(Some(tz))));
        }
        Ok(())
    }

    /// The zone of a timestamp type whose timezone was [added](Zones::add).
    pub(crate) fn zone(&self, timezone: Option<&str>) -> Zone {
        let Some(tz) = timezone else {
            return Zone::Naive;
        };
        if !self.local {
            return Zone::Offset(0);
        }
        if let Some((first, zone)) = self.first
            && core::ptr::eq(first, tz)
        {
            return zone;
        }
        match parse(tz) {
            Ok(Parsed::Zone(zone)) => zone,
            Ok(Parsed::Name(name)) => {
                let found = self.named.iter().find(|(n, _)| {
                    core::ptr::eq(n.as_ptr(), name.as_ptr()) && n.len() == name.len() || *n == name
                });
                debug_assert!(
                    found.is_some() || self.resolver.is_none(),
                    "every named zone of the schema is resolved when the encoder is built"
                );
                found.map_or(Zone::Offset(0), |(_, rules)| Zone::Named(*rules))
            }
            // Refused when the encoder was built.
            Err(_) => Zone::Offset(0),
        }
    }
}

/// `±HH:MM`, `±HHMM` or `±HH` in minutes east of UTC (strictly within a day, as chrono allows).
fn fixed_offset(tz: &str) -> Option<i32> {
    let (sign, digits) = match *tz.as_bytes() {
        [sign, h1, h2, b':', m1, m2] | [sign, h1, h2, m1, m2] => (sign, [h1, h2, m1, m2]),
        [sign, h1, h2] => (sign, [h1, h2, b'0', b'0']),
        _ => return None,
    };
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let [h1, h2, m1, m2] = digits.map(|d| i32::from(d - b'0'));
    let minutes = (h1 * 10 + h2) * 60 + m1 * 10 + m2;
    if minutes * 60 >= SECONDS_PER_DAY as i32 {
        return None;
    }
    match sign {
        b'+' => Some(minutes),
        b'-' => Some(-minutes),
        _ => None,
    }
}

/// A timestamp between quotes at the start of `out`: naive ISO 8601, or RFC 3339 in the
/// zone's offset (`Z` for UTC); returns its length. The years 0..=9999 are written in place;
/// others (with a sign and more digits) through a [`Text`].
#[inline(always)]
pub(crate) fn timestamp(value: i64, unit: TimeUnit, zone: Zone, out: &mut [u8; WINDOW]) -> usize {
    let (seconds, nanos) = split(value, unit);
    let shift = zone.seconds(seconds);
    let (days, time) = day_and_time(seconds, shift);
    // Offsets with seconds (local mean time) go the way of other years.
    let Some(civil) = civil_in_four_digits(days).filter(|_| shift % 60 == 0) else {
        return quoted(out, |text| date_time(days, time, nanos, zone, shift, text));
    };
    put_date(out, civil);
    put_clock(out, time as u32);
    let at = 20 + put_fraction(out, 20, nanos);
    let (end, len) = zone.end(shift);
    if let Some(dst) = out
        .get_mut(at..at + 8)
        .and_then(|b| b.first_chunk_mut::<8>())
    {
        *dst = end;
    }
    at + len
}

/// [`timestamp`]'s text in any year and at any offset, through a [`Text`]: the day, the second
/// of the day, its nanoseconds and the zone's suffix at offset `shift` (`±HH:MM:SS` when it has
/// seconds).
fn date_time(days: i64, time: i64, nanos: u32, zone: Zone, shift: i64, text: &mut Text) {
    date(days, text);
    text.push(b'T');
    clock(time as u64, nanos, text);
    if shift % 60 == 0 {
        let (end, len) = zone.end(shift);
        text.extend(end.get(..len - 1).unwrap_or_default());
    } else {
        let magnitude = shift.unsigned_abs();
        text.push(if shift < 0 { b'-' } else { b'+' });
        text.padded(magnitude / 3_600, 2);
        text.push(b':');
        text.padded(magnitude / 60 % 60, 2);
        text.push(b':');
        text.padded(magnitude % 60, 2);
    }
}

impl Zone {
    /// Seconds east of UTC at `utc_seconds` since the epoch (0 when naive), less than a day.
    #[inline(always)]
    fn seconds(self, utc_seconds: i64) -> i64 {
        match self {
            Zone::Naive => 0,
            Zone::Offset(minutes) => i64::from(minutes) * 60,
            Zone::Named(rules) => named_offset(rules, utc_seconds),
        }
    }

    /// What follows the time up to the closing quote, given the zone's offset `shift` in
    /// whole minutes of seconds: `"` (naive), `Z"` or `±HH:MM"`, in eight bytes, and how many of
    /// them count.
    #[inline(always)]
    fn end(self, shift: i64) -> ([u8; 8], usize) {
        match self {
            Zone::Naive => (*b"\"\0\0\0\0\0\0\0", 1),
            Zone::Offset(0) => (*b"Z\"\0\0\0\0\0\0", 2),
            Zone::Offset(minutes) => offset_end(minutes < 0, minutes.unsigned_abs()),
            // `Z` for exactly 0; an offset with seconds (local mean time such as -04:56:02) is
            // written by `date_time`, whole, so that the text names the exact instant.
            Zone::Named(_) if shift == 0 => (*b"Z\"\0\0\0\0\0\0", 2),
            Zone::Named(_) => offset_end(shift < 0, shift.unsigned_abs() as u32 / 60),
        }
    }
}

/// A named zone's offset at `utc_seconds`, kept within a day either way.
#[inline(never)]
fn named_offset(rules: &dyn ZoneRules, utc_seconds: i64) -> i64 {
    const LIMIT: i64 = SECONDS_PER_DAY - 1;
    i64::from(rules.offset(utc_seconds)).clamp(-LIMIT, LIMIT)
}

/// `±HH:MM"` for an offset of `minutes`, in eight bytes, and how many of them count.
#[inline(always)]
fn offset_end(negative: bool, minutes: u32) -> ([u8; 8], usize) {
    let [h1, h2] = two_digits(minutes / 60);
    let [m1, m2] = two_digits(minutes % 60);
    let sign = if negative { b'-' } else { b'+' };
    ([sign, h1, h2, b':', m1, m2, b'"', 0], 7)
}

/// A duration in ISO 8601 as chrono writes it: `PT<seconds>[.<fraction>]S`, `-` before a
/// negative one, `P0D` for zero; the fraction has no trailing zeros.
pub(crate) fn duration(value: i64, unit: TimeUnit, text: &mut Text) {
    if value == 0 {
        text.extend(b"P0D");
        return;
    }
    let (seconds, nanos) = signed_seconds(value, unit, text);
    text.extend(b"PT");
    exact_seconds(seconds, nanos, text);
}

/// `<seconds>[.<fraction>]S`, the fraction of `nanos` without trailing zeros.
fn exact_seconds(seconds: u64, mut nanos: u64, text: &mut Text) {
    text.unsigned(seconds);
    if nanos > 0 {
        let mut width = 9;
        while nanos.is_multiple_of(10) {
            nanos /= 10;
            width -= 1;
        }
        text.push(b'.');
        text.padded(nanos, width);
    }
    text.push(b'S');
}

/// Interval(YEAR_MONTH) in ISO 8601: `P1Y2M`.
pub(crate) fn interval_year_month(months: i32, text: &mut Text) {
    interval(months.into(), 0, 0, 1, text);
}

/// Interval(DAY_TIME) in ISO 8601: `P2DT0.003S`.
pub(crate) fn interval_day_time(days: i32, millis: i32, text: &mut Text) {
    interval(0, days.into(), millis.into(), 1_000, text);
}

/// Interval(MONTH_DAY_NANO) in ISO 8601: `P1M2DT0.000003S`.
pub(crate) fn interval_month_day_nano(months: i32, days: i32, nanos: i64, text: &mut Text) {
    interval(months.into(), days.into(), nanos, 1_000_000_000, text);
}

/// An interval as an ISO 8601 duration, exact: `P<y>Y<m>M<d>DT<s>[.<fraction>]S` with zero
/// parts left out (`P0D` when all are), the months as years and months, the sub-day count of
/// `1 / per_second` seconds as seconds with the fewest fraction digits that are exact (as
/// durations are written). Arrow's three parts are independent and may differ in sign: when
/// none is positive the whole interval is negated (`-P1M2D`, as a negative duration), else each
/// negative part carries its own sign (`P1M-2D`, PostgreSQL's `iso_8601` style and Java's).
fn interval(months: i64, days: i64, sub_day: i64, per_second: i64, text: &mut Text) {
    if months == 0 && days == 0 && sub_day == 0 {
        text.extend(b"P0D");
        return;
    }
    let negated = months <= 0 && days <= 0 && sub_day <= 0;
    if negated {
        text.push(b'-');
    }
    text.push(b'P');
    let part = |value: i64, unit: u8, text: &mut Text| {
        if value != 0 {
            if negated {
                text.unsigned(value.unsigned_abs());
            } else {
                text.signed(value);
            }
            text.push(unit);
        }
    };
    part(months / 12, b'Y', text);
    part(months % 12, b'M', text);
    part(days, b'D', text);
    if sub_day != 0 {
        text.push(b'T');
        if sub_day < 0 && !negated {
            text.push(b'-');
        }
        let (magnitude, per) = (sub_day.unsigned_abs(), per_second as u64);
        exact_seconds(
            magnitude / per,
            magnitude % per * (1_000_000_000 / per),
            text,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::number::tests::{scratch as text, written, xorshift};
    use super::*;
    use std::string::String;

    /// The text a quoted writer puts in a window, without its quotes.
    fn window(f: impl FnOnce(&mut [u8; WINDOW]) -> usize) -> String {
        let quoted = written(f);
        assert!(quoted.len() > 1 && quoted.starts_with('"') && quoted.ends_with('"'));
        quoted[1..quoted.len() - 1].into()
    }

    // 2018-11-13T17:11:10.011375885 UTC, as in arrow-json's writer tests.
    const NANOS: i64 = 1_542_129_070_011_375_885;

    #[test]
    fn timestamps_match_arrow_json() {
        use TimeUnit::*;
        // The instant in each unit, naive and at offset 0.
        for (unit, fraction) in [
            (Nanosecond, ".011375885"),
            (Microsecond, ".011375"),
            (Millisecond, ".011"),
            (Second, ""),
        ] {
            let value = NANOS / (1_000_000_000 / per_second(unit));
            let naive = std::format!("2018-11-13T17:11:10{fraction}");
            assert_eq!(window(|w| timestamp(value, unit, Zone::Naive, w)), naive);
            let utc = window(|w| timestamp(value, unit, zone(Some("+00:00")), w));
            assert_eq!(utc, naive + "Z");
        }
        // Zoned ("" for none).
        for (value, unit, tz, expected) in [
            (0, Second, "+05:30", "1970-01-01T05:30:00+05:30"),
            (-1, Millisecond, "-0800", "1969-12-31T15:59:59.999-08:00"),
            (0, Second, "Etc/GMT+5", "1969-12-31T19:00:00-05:00"),
            // The days of an i64's extremes (see also `dates_cover_every_day_an_i64_reaches`).
            (i64::MAX, Second, "Z", "+292277026596-12-04T15:30:07Z"),
            (i64::MIN, Second, "", "-292277022657-01-27T08:29:52"),
        ] {
            let zone = zone(Some(tz).filter(|tz| !tz.is_empty()));
            assert_eq!(window(|w| timestamp(value, unit, zone, w)), expected);
        }
        assert_eq!(zone(Some("America/New_York")), Zone::Offset(0));
        assert_eq!(zone(Some("UTC")), Zone::Offset(0));
        assert_eq!(zone(Some("-01")), Zone::Offset(-60));
        assert_eq!(zone(None), Zone::Naive);
    }

    /// The zone of `tz` for an encoder without a resolver.
    fn zone(tz: Option<&str>) -> Zone {
        let options = crate::json::EncoderOptions::default();
        let mut zones = options.zones();
        zones.add(tz).unwrap();
        zones.zone(tz)
    }

    /// New York's rules since 2007 (a test stand-in for a tz database): UTC-5, and UTC-4 from
    /// the second Sunday of March 07:00 UTC to the first Sunday of November 06:00 UTC; before
    /// 1883-11-18 17:00 UTC local mean time, -4:56:02.
    struct NewYork;

    impl ZoneRules for NewYork {
        fn offset(&self, utc: i64) -> i32 {
            if utc < -2_717_650_800 {
                return -17_762;
            }
            let days = utc.div_euclid(SECONDS_PER_DAY);
            let (year, ..) = civil_from_days(days);
            // Day count of the n-th Sunday of a month.
            let sunday = |month: u32, n: i64| {
                let first = days_from_civil(year, month, 1);
                let weekday = (first + 4).rem_euclid(7); // 0 = Sunday
                first + (7 - weekday) % 7 + 7 * (n - 1)
            };
            let start = sunday(3, 2) * SECONDS_PER_DAY + 7 * 3_600;
            let end = sunday(11, 1) * SECONDS_PER_DAY + 6 * 3_600;
            if (start..end).contains(&utc) {
                -14_400
            } else {
                -18_000
            }
        }
    }

    fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
        let y = if month <= 2 { year - 1 } else { year };
        let era = y.div_euclid(400);
        let yoe = y.rem_euclid(400);
        let mp = i64::from((month + 9) % 12);
        let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    fn new_york(_: &str) -> Option<&'static dyn ZoneRules> {
        Some(&NewYork)
    }

    #[test]
    fn named_zones_are_local_time_with_the_offset_in_effect() {
        let options =
            crate::json::EncoderOptions::default().with_time_zones(Some(ZoneResolver(new_york)));
        let mut zones = options.zones();
        let tz = Some("America/New_York");
        zones.add(tz).unwrap();
        let ny = zones.zone(tz);
        assert!(matches!(ny, Zone::Named(_)));
        let at = |seconds: i64| window(|w| timestamp(seconds, TimeUnit::Second, ny, w));
        assert_eq!(at(0), "1969-12-31T19:00:00-05:00");
        // 2024-03-10: 06:59:59 UTC is 01:59:59 EST, a second later 03:00:00 EDT.
        assert_eq!(at(1_710_053_999), "2024-03-10T01:59:59-05:00");
        assert_eq!(at(1_710_054_000), "2024-03-10T03:00:00-04:00");
        // 2024-11-03: 01:30 happens twice, first in EDT, then in EST.
        assert_eq!(at(1_730_611_800), "2024-11-03T01:30:00-04:00");
        assert_eq!(at(1_730_615_400), "2024-11-03T01:30:00-05:00");
        // Local mean time, -4:56:02: the offset is written with its seconds, so that the text
        // names the exact instant (chrono rounds it to the minute).
        assert_eq!(at(-3_000_000_000), "1874-12-07T13:43:58-04:56:02");
        assert_eq!(
            at(-3_000_000_000 - 86_400 * 365 * 9000),
            "-7120-11-27T13:43:58-04:56:02"
        );
        // Past 9999 through the slow path, with the offset.
        assert_eq!(
            at(253_402_318_800 + 86_400 * 200),
            "+10000-07-19T01:00:00-04:00"
        );
        // The UTC option and the epoch option resolve nothing.
        for options in [
            options.with_timestamps_utc(true),
            options.with_timestamps_as_epoch(true),
        ] {
            let mut zones = options.zones();
            // Neither checks a zone: the instant needs none.
            for tz in ["Invalid/Zone", "+25:00"] {
                zones.add(Some(tz)).unwrap();
                assert_eq!(zones.zone(Some(tz)), Zone::Offset(0));
            }
        }
        assert_eq!(
            options
                .with_timestamps_utc(true)
                .zones()
                .zone(Some("+05:30")),
            Zone::Offset(0)
        );
    }

    #[test]
    fn bad_zones_are_refused() {
        fn none(_: &str) -> Option<&'static dyn ZoneRules> {
            None
        }
        let plain = crate::json::EncoderOptions::default();
        let resolving = plain.with_time_zones(Some(ZoneResolver(none)));
        for options in [plain, resolving] {
            for bad in ["+25:00", "+24:00", "-1", "+5:30", "+05:3x", "-"] {
                assert_eq!(
                    options.zones().add(Some(bad)),
                    Err(ZoneError::InvalidOffset),
                    "{bad}"
                );
            }
            for exact in ["UTC", "Etc/UTC", "utc", "Z", "GMT", "Etc/GMT-3", "+23:59"] {
                assert_eq!(options.zones().add(Some(exact)), Ok(()), "{exact}");
            }
        }
        assert_eq!(plain.zones().add(Some("Invalid/Zone")), Ok(()));
        assert_eq!(
            resolving.zones().add(Some("Invalid/Zone")),
            Err(ZoneError::Unknown)
        );
    }

    #[test]
    fn dates_cover_every_day_an_i64_reaches() {
        assert_eq!(window(|w| date32(17_848, w)), "2018-11-13");
        assert_eq!(window(|w| date32(0, w)), "1970-01-01");
        assert_eq!(window(|w| date32(-719_528, w)), "0000-01-01");
        assert_eq!(window(|w| date32(-719_529, w)), "-0001-12-31");
        assert_eq!(window(|w| date32(2_932_897, w)), "+10000-01-01");
        assert_eq!(window(|w| date32(i32::MAX, w)), "+5881580-07-11");
        assert_eq!(window(|w| date32(i32::MIN, w)), "-5877641-06-23");
        // A Date64 of whole days is a date; one that is not keeps the time it names.
        for (millis, expected) in [
            (1_542_129_070_011, "2018-11-13T17:11:10.011"),
            (-1, "1969-12-31T23:59:59.999"),
            (951_782_400_000, "2000-02-29"),
            (-86_400_000, "1969-12-31"),
            (0, "1970-01-01"),
            (i64::MIN / 86_400_000 * 86_400_000, "-292275055-05-17"),
            (i64::MAX / 86_400_000 * 86_400_000, "+292278994-08-17"),
        ] {
            assert_eq!(window(|w| date64(millis, w)), expected, "{millis}");
        }
        // Every day of 1600–2400 against a day-by-day walk.
        let (mut y, mut m, mut d) = (1600i64, 1u32, 1u32);
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        for days in -135_140..157_000 {
            assert_eq!(civil_from_days(days), (y, m, d), "{days}");
            const DAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
            d += 1;
            if d > DAYS[m as usize - 1] + u32::from(m == 2 && leap(y)) {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    #[test]
    fn written_in_place_as_through_text() {
        let through_text = |days: i64| window(|w| quoted(w, |t| date(days, t)));
        // Every day of 0000..=9999 and beyond both ends.
        for days in -720_000..2_933_500 {
            let days32 = days as i32;
            assert_eq!(window(|w| date32(days32, w)), through_text(days), "{days}");
        }
        // Timestamps of every unit and zone kind, over the years 0..=9999 and past them.
        use {TimeUnit::*, Zone::*};
        let zones = [Naive, Offset(0), Offset(330), Offset(-1_439)];
        let units = [Second, Millisecond, Microsecond, Nanosecond];
        for (n, x) in xorshift(0x9E37_79B9_7F4A_7C15).take(200_000).enumerate() {
            let unit = units[n % 4];
            let zone = zones[n / 4 % 4];
            // 10,000 years either side of the epoch, some values a whole number of ms or us.
            let span = 20_000 * 366 * 86_400 * per_second(unit) as i128;
            let mut value = (i128::from(x) % span - span / 2) as i64;
            value -= value % [1_000, 1_000_000, 1][n / 16 % 3];
            let (seconds, nanos) = split(value, unit);
            let shift = zone.seconds(seconds);
            let (days, time) = day_and_time(seconds, shift);
            let expected = window(|w| quoted(w, |t| date_time(days, time, nanos, zone, shift, t)));
            assert_eq!(
                window(|w| timestamp(value, unit, zone, w)),
                expected,
                "{value} {unit:?} {zone:?}"
            );
        }
    }

    #[test]
    fn times_and_durations_match_arrow_json() {
        use TimeUnit::*;
        assert_eq!(text(|t| time(120, Second, t)), "00:02:00");
        assert_eq!(text(|t| time(120, Millisecond, t)), "00:00:00.120");
        assert_eq!(text(|t| time(120, Microsecond, t)), "00:00:00.000120");
        assert_eq!(text(|t| time(120, Nanosecond, t)), "00:00:00.000000120");
        assert_eq!(text(|t| time(86_399_999, Millisecond, t)), "23:59:59.999");
        assert_eq!(text(|t| time(-1, Second, t)), "-00:00:01");
        assert_eq!(text(|t| time(90_000, Second, t)), "25:00:00");
        assert_eq!(text(|t| duration(120, Second, t)), "PT120S");
        assert_eq!(text(|t| duration(120, Millisecond, t)), "PT0.12S");
        assert_eq!(text(|t| duration(120, Microsecond, t)), "PT0.00012S");
        assert_eq!(text(|t| duration(120, Nanosecond, t)), "PT0.00000012S");
        assert_eq!(text(|t| duration(0, Nanosecond, t)), "P0D");
        assert_eq!(text(|t| duration(-1_500, Millisecond, t)), "-PT1.5S");
        assert_eq!(
            text(|t| duration(i64::MIN, Second, t)),
            "-PT9223372036854775808S"
        );
    }

    #[test]
    fn intervals_are_iso_8601_durations() {
        let year_month = |months| text(|t| interval_year_month(months, t));
        let day_time = |days, millis| text(|t| interval_day_time(days, millis, t));
        let nano = |months, days, nanos| text(|t| interval_month_day_nano(months, days, nanos, t));
        for (written, expected) in [
            (year_month(14), "P1Y2M"),
            (year_month(12), "P1Y"),
            (year_month(1), "P1M"),
            (year_month(-14), "-P1Y2M"),
            (year_month(0), "P0D"),
            (year_month(i32::MAX), "P178956970Y7M"),
            (year_month(i32::MIN), "-P178956970Y8M"),
            (day_time(0, 0), "P0D"),
            (day_time(3, 3_600_500), "P3DT3600.5S"),
            (day_time(0, -1), "-PT0.001S"),
            (day_time(-1, -61_000), "-P1DT61S"),
            (day_time(1, -1), "P1DT-0.001S"),
            (day_time(i32::MIN, i32::MIN), "-P2147483648DT2147483.648S"),
            (nano(1, 2, 3_000), "P1M2DT0.000003S"),
            (nano(1, 2, 3_000_000_001), "P1M2DT3.000000001S"),
            (nano(0, 0, 1), "PT0.000000001S"),
            (nano(-1, 2, 0), "P-1M2D"),
            (nano(13, -2, -5), "P1Y1M-2DT-0.000000005S"),
            (nano(-1, -2, -5), "-P1M2DT0.000000005S"),
            (nano(0, 0, 86_400_000_000_000), "PT86400S"),
            (
                nano(i32::MIN, i32::MIN, i64::MIN),
                "-P178956970Y8M2147483648DT9223372036.854775808S",
            ),
            (
                nano(i32::MAX, i32::MAX, i64::MAX),
                "P178956970Y7M2147483647DT9223372036.854775807S",
            ),
        ] {
            assert_eq!(written, expected);
        }
    }
}
