//! [`SourceOptions::with_environment`]: the network figures and limits a process's environment
//! sets, read the same way by every adapter (the `quiver` command, the Python package).
//!
//! Uses [`crate::source`] (the options it sets).

use crate::source::SourceOptions;
use std::fmt;
use std::time::Duration;

/// The variable that sets the stall timeout, in seconds (`0.3`, `30`).
pub const STALL_TIMEOUT_VARIABLE: &str = "QUIVER_STALL_TIMEOUT";

/// The variable that sets what a request costs besides its time, in milliseconds (`0`,
/// `0.25`, `3`).
const REQUEST_COST_VARIABLE: &str = "QUIVER_REQUEST_COST_MS";

/// A variable whose value is not one its setting takes: its name, its value and what it
/// takes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BadSetting {
    /// The variable.
    pub name: &'static str,
    /// Its value.
    pub value: String,
    /// What it takes.
    pub expected: &'static str,
}

impl fmt::Display for BadSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}: {}", self.name, self.value, self.expected)
    }
}

impl std::error::Error for BadSetting {}

impl SourceOptions {
    /// These options with the network figures and limits the environment sets (`var` reads a
    /// variable; `|name| std::env::var(name).ok()` for the process's), each a positive whole
    /// number but where said:
    ///
    /// - `QUIVER_FIRST_BYTE_MS`: time to first byte, ms (default: measured on the first request);
    /// - `QUIVER_REQUEST_MIBPS`: bandwidth of one request, MiB/s (default 64);
    /// - `QUIVER_TOTAL_MIBPS`: bandwidth of all requests together, MiB/s (default 1024);
    /// - `QUIVER_REQUEST_COST_MS`: what a request costs besides its time, ms, any number from
    ///   0 (`0`: requests are free, `0.25`; default 1);
    /// - `QUIVER_IN_FLIGHT`: requests in flight at once, at most (default 128);
    /// - `QUIVER_WINDOW_MIB`: memory a planned read holds at once, MiB (default 64);
    /// - `QUIVER_STALL_TIMEOUT`: how long a request may go without a byte before the rest is
    ///   asked for again, seconds (`0.3`, `30`; default 30).
    ///
    /// # Errors
    ///
    /// The first variable set to something else, as a [`BadSetting`].
    pub fn with_environment(
        self,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, BadSetting> {
        let number = |name: &'static str| -> Result<Option<u64>, BadSetting> {
            let Some(value) = var(name) else {
                return Ok(None);
            };
            match value.trim().parse::<u64>() {
                Ok(n) if n > 0 => Ok(Some(n)),
                _ => Err(BadSetting {
                    name,
                    value,
                    expected: "expected a positive whole number",
                }),
            }
        };
        // A time in units of which `per_second` make a second (a number with a fraction;
        // zero only if `zero` may be), or the error that says what the variable takes.
        let time = |name: &'static str, per_second: f64, zero: bool, expected: &'static str| {
            let Some(value) = var(name) else {
                return Ok(None);
            };
            let units = value.trim().parse::<f64>().ok();
            match units.and_then(|n| Duration::try_from_secs_f64(n / per_second).ok()) {
                Some(time) if zero || !time.is_zero() => Ok(Some(time)),
                _ => Err(BadSetting {
                    name,
                    value,
                    expected,
                }),
            }
        };
        const MIB: u64 = 1024 * 1024;
        let mut network = self.network;
        let mut options = self;
        if let Some(ms) = number("QUIVER_FIRST_BYTE_MS")? {
            network = network.with_time_to_first_byte(Duration::from_millis(ms));
        }
        if let Some(mibps) = number("QUIVER_REQUEST_MIBPS")? {
            network = network.with_bandwidth(mibps.saturating_mul(MIB));
        }
        if let Some(mibps) = number("QUIVER_TOTAL_MIBPS")? {
            network = network.with_total_bandwidth(mibps.saturating_mul(MIB));
        }
        let expected = "must be a number of milliseconds from 0 (what a request costs besides \
                        its time)";
        if let Some(cost) = time(REQUEST_COST_VARIABLE, 1000.0, true, expected)? {
            network = network.with_request_cost(cost);
        }
        if let Some(requests) = number("QUIVER_IN_FLIGHT")? {
            options = options.with_max_in_flight(usize::try_from(requests).unwrap_or(usize::MAX));
        }
        if let Some(mib) = number("QUIVER_WINDOW_MIB")? {
            options = options.with_window(mib.saturating_mul(MIB));
        }
        let expected = "must be a number of seconds above 0 (how long a request may go without \
                        a byte)";
        if let Some(wait) = time(STALL_TIMEOUT_VARIABLE, 1.0, false, expected)? {
            options = options.with_stall_timeout(wait);
        }
        Ok(options.with_network(network))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::NetworkMetrics;

    fn env<'a>(pairs: &'a [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn the_environment_sets_the_network() {
        let options = SourceOptions::default().with_environment(env(&[])).unwrap();
        assert_eq!(options.network, NetworkMetrics::default());
        let options = SourceOptions::default()
            .with_environment(env(&[
                ("QUIVER_FIRST_BYTE_MS", "30"),
                ("QUIVER_REQUEST_MIBPS", "95"),
                ("QUIVER_TOTAL_MIBPS", "2048"),
                ("QUIVER_REQUEST_COST_MS", "1"),
                ("QUIVER_IN_FLIGHT", "16"),
                ("QUIVER_WINDOW_MIB", "128"),
                ("QUIVER_STALL_TIMEOUT", "0.5"),
            ]))
            .unwrap();
        let model = options.network.model(options.max_in_flight);
        assert_eq!(model.first_byte_us, 30_000);
        assert_eq!(model.request_bandwidth, 95 << 20);
        assert_eq!(model.total_bandwidth, 2048 << 20);
        assert_eq!(model.request_cost_us, 1000);
        assert_eq!(model.max_in_flight, 16);
        assert_eq!(options.window, 128 << 20);
        assert_eq!(options.stall_timeout, Duration::from_millis(500));
        for bad in ["0", "-1", "fast", ""] {
            let pairs = [("QUIVER_REQUEST_MIBPS", bad)];
            let error = SourceOptions::default()
                .with_environment(env(&pairs))
                .unwrap_err();
            assert_eq!(error.name, "QUIVER_REQUEST_MIBPS");
            assert!(
                error.to_string().starts_with("QUIVER_REQUEST_MIBPS="),
                "{error}"
            );
        }
        for (ms, us) in [("0", 0), ("0.25", 250), (" 3 ", 3000)] {
            let pairs = [("QUIVER_REQUEST_COST_MS", ms)];
            let options = SourceOptions::default()
                .with_environment(env(&pairs))
                .unwrap();
            let model = options.network.model(options.max_in_flight);
            assert_eq!(model.request_cost_us, us, "{ms}");
        }
        for bad in ["-1", "free", "", "NaN", "1e400"] {
            let pairs = [("QUIVER_REQUEST_COST_MS", bad)];
            let error = SourceOptions::default()
                .with_environment(env(&pairs))
                .unwrap_err();
            assert!(error.to_string().contains("milliseconds from 0"), "{error}");
        }
        for bad in ["0", "-2", "soon", "1e400"] {
            let pairs = [("QUIVER_STALL_TIMEOUT", bad)];
            let error = SourceOptions::default()
                .with_environment(env(&pairs))
                .unwrap_err();
            assert!(error.to_string().contains("seconds above 0"), "{error}");
        }
    }
}
