//! [`time_zones`]: IANA zone names resolved against the tz database bundled into the binary
//! (jiff's `tzdb-bundle-always`: no system files are read), for
//! [`EncoderOptions::time_zones`](quiver::json::EncoderOptions::time_zones).
//!
//! It uses nothing else of the crate: quiver's `json` zone traits and `jiff`.
//!
//! jiff rather than chrono-tz: jiff follows a zone's POSIX rule past its last listed transition,
//! so daylight saving time stays right in any year (chrono-tz's tables end, and New York in July
//! 2100 comes out at -05:00), and an offset lookup costs about as much (45 ns against 36 ns).

use jiff::Timestamp;
use jiff::tz::TimeZone;
use quiver::json::{ZoneResolver, ZoneRules};
use std::sync::Mutex;

/// A zone's rules from the bundled database.
struct Rules(TimeZone);

impl ZoneRules for Rules {
    fn offset(&self, utc_seconds: i64) -> i32 {
        // jiff's instants span the years -9999..=9999; beyond them, the nearest one's offset.
        let seconds = utc_seconds.clamp(Timestamp::MIN.as_second(), Timestamp::MAX.as_second());
        Timestamp::from_second(seconds).map_or(0, |at| self.0.to_offset(at).seconds())
    }
}

/// Zones resolved so far, by the name asked for: each is looked up and kept once per process,
/// so an encoder built for every batch costs a lock and a comparison per zone.
static RESOLVED: Mutex<Vec<(Box<str>, &'static Rules)>> = Mutex::new(Vec::new());

/// The rules of zone `name` (as the tz database spells it, any case), or `None` when the
/// database does not have it.
fn resolve(name: &str) -> Option<&'static dyn ZoneRules> {
    let mut resolved = RESOLVED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, rules)) = resolved.iter().find(|(n, _)| **n == *name) {
        return Some(*rules);
    }
    let zone = jiff::tz::db().get(name).ok()?;
    let rules: &'static Rules = Box::leak(Box::new(Rules(zone)));
    resolved.push((name.into(), rules));
    Some(rules)
}

/// A resolver of IANA zone names over the tz database bundled into the binary. Set it with
/// [`EncoderOptions::with_time_zones`](quiver::json::EncoderOptions::with_time_zones) to write
/// timestamps in named zones in local time with their offset (`1969-12-31T19:00:00-05:00`); an
/// unknown name then fails the encoder's construction.
///
/// ```
/// use quiver::json::EncoderOptions;
///
/// let options = EncoderOptions::default().with_time_zones(Some(quiver_std::time_zones()));
/// let rules = quiver_std::time_zones().resolve("America/New_York").expect("in the database");
/// assert_eq!(rules.offset(0), -5 * 3600);
/// assert!(quiver_std::time_zones().resolve("Invalid/Zone").is_none());
/// # let _ = options;
/// ```
pub fn time_zones() -> ZoneResolver {
    ZoneResolver(resolve)
}
