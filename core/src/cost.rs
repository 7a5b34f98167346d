//! The read planner's cost model: what a set of reads costs on a remote store, in modelled
//! microseconds and requests, so that the planner can compare the plans it could make and
//! pick the cheapest.
//!
//! It uses nothing of the crate: it is at the bottom of the ladder, with the errors and the bytes.
//!
//! A [`Network`] holds the figures the model is built from; a [`Cost`] is what one plan
//! costs. Everything here is plain integer arithmetic (saturating, `u128` inside a product),
//! with no I/O and no clock: the adapters measure the network and hand the figures in.
//!
//! # The model
//!
//! A request costs a time to first byte, then its bytes at the bandwidth one request gets.
//! Requests sent together (a *wave*) run side by side, up to `max_in_flight` at once; all of
//! them together share `total_bandwidth`. So a wave of `n` requests takes
//!
//! ```text
//! rounds x first_byte + max(largest / request_bandwidth,
//!                           total bytes / min(total_bandwidth, in flight x request_bandwidth))
//! ```
//!
//! with `rounds = ceil(n / max_in_flight)`. Plans whose reads depend on each other (block
//! metadata first, then the buffers it locates) are waves one after another: their times add.
//! A whole read in parts is not a wave: each part's successor is sent a first byte
//! ahead of the part's end, so its first bytes are waited for once and the rest is transfer
//! ([`Network::parts`]). Each request also carries `request_cost` (the store's price and per-request work, as time
//! the caller would give up to save one request). Plans are ranked by modelled time plus
//! request costs, then by the number of requests; a plan of more than `max_requests` requests
//! in one wave is not made while another is possible.
//!
//! # Where the default figures come from
//!
//! Durner, Leis and Neumann, "Exploiting Cloud Object Storage for High-Performance
//! Analytics" (VLDB 2023), measured S3 from EC2: about 30-50 ms to the first byte (a few
//! requests in a hundred take far longer), 25-95 MiB/s for one request, hundreds of requests
//! in flight to fill a 100 Gbit/s instance, and requests of 8-16 MiB the cheapest per byte
//! once the per-request price is counted. The defaults ([`Network::default`]) take 50 ms,
//! 64 MiB/s per request, 128 in flight, 1 GiB/s for the whole client (a 10 Gbit/s
//! instance) and 1 ms per request: S3's price of a GET ($0.0004 per 1,000) buys about 1 ms
//! of an instance that receives 3-6 GiB/s (25-50 Gbit/s, $1.4-2 an hour: the instances that
//! read S3 at its limits), and a request's own work (signing, a connection from the pool,
//! parsing its answer) is a fraction of that. With these figures the model reads a 300 MB
//! object in parts of 4 MiB, 16 at once within a 64 MiB window, and a 7.8 MB one in parts
//! of 512 KiB after its first 3.2 MiB. (At 3 ms, as on a 10 Gbit/s instance, the 7.8 MB
//! object took parts of 1 MiB, 16 ms of transfer each instead of 8: its whole read, two
//! first bytes and a part, 0.62-0.63x polars' three round trips; at 1 ms, 0.57-0.59x.)

/// Microseconds in a second.
const SECOND_US: u128 = 1_000_000;

/// A mebibyte.
const MIB: u64 = 1024 * 1024;

/// The figures of a network the planner decides by; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Network {
    /// Time from sending a request to its first byte, in microseconds.
    pub first_byte_us: u64,
    /// Bytes per second one request receives.
    pub request_bandwidth: u64,
    /// Bytes per second all requests together receive (the client's link).
    pub total_bandwidth: u64,
    /// Requests in flight at once, at most.
    pub max_in_flight: u64,
    /// What one request costs besides its time, in microseconds of modelled time.
    pub request_cost_us: u64,
    /// Most requests one wave of a plan may send.
    pub max_requests: u64,
}

impl Default for Network {
    /// The figures of S3 seen from EC2 (see the module docs).
    fn default() -> Self {
        Network {
            first_byte_us: 50_000,
            request_bandwidth: 64 * MIB,
            total_bandwidth: 1024 * MIB,
            max_in_flight: 128,
            request_cost_us: 1_000,
            max_requests: 128,
        }
    }
}

impl Network {
    /// Sets [`Network::first_byte_us`]: the time from sending a request to its first byte,
    /// in microseconds.
    #[must_use]
    pub fn with_first_byte_us(mut self, first_byte_us: u64) -> Self {
        self.first_byte_us = first_byte_us;
        self
    }

    /// Sets [`Network::request_bandwidth`]: the bytes per second one request receives.
    #[must_use]
    pub fn with_request_bandwidth(mut self, request_bandwidth: u64) -> Self {
        self.request_bandwidth = request_bandwidth;
        self
    }

    /// Sets [`Network::total_bandwidth`]: the bytes per second all requests together receive.
    #[must_use]
    pub fn with_total_bandwidth(mut self, total_bandwidth: u64) -> Self {
        self.total_bandwidth = total_bandwidth;
        self
    }

    /// Sets [`Network::max_in_flight`]: the most requests in flight at once.
    #[must_use]
    pub fn with_max_in_flight(mut self, max_in_flight: u64) -> Self {
        self.max_in_flight = max_in_flight;
        self
    }

    /// Sets [`Network::request_cost_us`]: what one request costs besides its time, in
    /// microseconds of modelled time.
    #[must_use]
    pub fn with_request_cost_us(mut self, request_cost_us: u64) -> Self {
        self.request_cost_us = request_cost_us;
        self
    }

    /// Sets [`Network::max_requests`]: the most requests one wave of a plan may send.
    #[must_use]
    pub fn with_max_requests(mut self, max_requests: u64) -> Self {
        self.max_requests = max_requests;
        self
    }
}

/// What a plan costs: its modelled time, the requests it sends and the bytes they bring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cost {
    /// Modelled time from the first request to the last byte, in microseconds.
    pub time_us: u64,
    /// Requests sent.
    pub requests: u64,
    /// Bytes received.
    pub bytes: u64,
    /// Most requests in one wave.
    pub widest_wave: u64,
}

impl Cost {
    /// This plan, then `next` once it has ended: times, requests and bytes add.
    #[must_use]
    pub fn then(self, next: Cost) -> Cost {
        Cost {
            time_us: self.time_us.saturating_add(next.time_us),
            requests: self.requests.saturating_add(next.requests),
            bytes: self.bytes.saturating_add(next.bytes),
            widest_wave: self.widest_wave.max(next.widest_wave),
        }
    }
}

/// `bytes` at `bytes_per_second`, in microseconds (rounded up; a zero rate is the slowest).
fn transfer_us(bytes: u64, bytes_per_second: u64) -> u64 {
    let rate = u128::from(bytes_per_second.max(1));
    let us = (u128::from(bytes) * SECOND_US).div_ceil(rate);
    u64::try_from(us).unwrap_or(u64::MAX)
}

impl Network {
    /// The bytes that flow to one request during one time to first byte: the
    /// bandwidth-delay product. A gap between two reads shorter than this costs less to read
    /// through than a round trip waited for.
    pub fn bandwidth_delay(&self) -> u64 {
        let bytes = u128::from(self.first_byte_us) * u128::from(self.request_bandwidth);
        u64::try_from(bytes / SECOND_US).unwrap_or(u64::MAX)
    }

    /// The bytes one request could read in the time of its own cost: a gap shorter than this
    /// is cheaper to read through than to split off into a request sent alongside.
    pub fn request_cost_bytes(&self) -> u64 {
        let bytes = u128::from(self.request_cost_us) * u128::from(self.request_bandwidth);
        u64::try_from(bytes / SECOND_US).unwrap_or(u64::MAX)
    }

    /// The cost of the reads of `sizes` sent together, up to `max_in_flight` at once.
    pub fn wave(&self, sizes: impl IntoIterator<Item = u64>) -> Cost {
        self.wave_within(self.max_in_flight, sizes)
    }

    /// The cost of the reads of `sizes` sent together, up to `in_flight` at once.
    pub fn wave_within(&self, in_flight: u64, sizes: impl IntoIterator<Item = u64>) -> Cost {
        let (mut requests, mut bytes, mut largest) = (0u64, 0u64, 0u64);
        for size in sizes {
            requests += 1;
            bytes = bytes.saturating_add(size);
            largest = largest.max(size);
        }
        self.wave_of(in_flight, requests, bytes, largest)
    }

    /// The cost of `bytes` read front to back in parts of `part` bytes, `in_flight` of them
    /// receiving at once, each part's successor sent a first byte ahead of its end: one time
    /// to first byte, then the bytes at the rate that many requests get. (Sent only as each
    /// ends, the parts would wait for a first byte once a round.) Twice `in_flight` are sent
    /// at once, half of them waiting for their first byte.
    pub fn parts(&self, bytes: u64, part: u64, in_flight: u64) -> Cost {
        let part = part.max(1);
        let requests = bytes.div_ceil(part);
        if requests == 0 {
            return Cost::default();
        }
        let slots = in_flight.clamp(1, requests);
        let rate = self
            .total_bandwidth
            .min(slots.saturating_mul(self.request_bandwidth));
        let transfer =
            transfer_us(part.min(bytes), self.request_bandwidth).max(transfer_us(bytes, rate));
        Cost {
            time_us: self.first_byte_us.saturating_add(transfer),
            requests,
            bytes,
            widest_wave: requests.min(slots.saturating_mul(2)),
        }
    }

    /// A wave of `requests` requests of `bytes` in all, the largest of `largest`.
    fn wave_of(&self, in_flight: u64, requests: u64, bytes: u64, largest: u64) -> Cost {
        if requests == 0 {
            return Cost::default();
        }
        let slots = in_flight.clamp(1, requests);
        let rounds = requests.div_ceil(slots);
        let rate = self
            .total_bandwidth
            .min(slots.saturating_mul(self.request_bandwidth));
        let transfer = transfer_us(largest, self.request_bandwidth).max(transfer_us(bytes, rate));
        Cost {
            time_us: rounds
                .saturating_mul(self.first_byte_us)
                .saturating_add(transfer),
            requests,
            bytes,
            widest_wave: requests,
        }
    }

    /// How `a` compares with `b`: by modelled time plus the requests' cost, then by
    /// requests; a plan over the request cap is worse than any within it.
    pub fn compare(&self, a: &Cost, b: &Cost) -> core::cmp::Ordering {
        let key = |c: &Cost| {
            (
                c.widest_wave > self.max_requests,
                c.time_us
                    .saturating_add(c.requests.saturating_mul(self.request_cost_us)),
                c.requests,
            )
        };
        key(a).cmp(&key(b))
    }

    /// The part size for reading `bytes` front to back with at most `window` bytes in
    /// flight: the cheapest of one request for all of it and parts of 256 KiB to 64 MiB
    /// (powers of two), as many in flight as the window holds.
    pub fn part_size(&self, bytes: u64, window: u64) -> u64 {
        let whole = (bytes.max(1), self.parts(bytes, bytes.max(1), 1));
        let candidates = (18..=26u32)
            .map(|shift| 1u64 << shift)
            .filter(|&p| p < bytes);
        candidates
            .map(|part| {
                (
                    part,
                    self.parts(bytes, part, self.in_flight_for(part, window)),
                )
            })
            .fold(whole, |best, next| {
                if self.compare(&next.1, &best.1).is_lt() {
                    next
                } else {
                    best
                }
            })
            .0
    }

    /// Parts of `part` bytes a window of `window` bytes holds in flight (at least one, at
    /// most `max_in_flight`).
    pub fn in_flight_for(&self, part: u64, window: u64) -> u64 {
        (window / part.max(1)).clamp(1, self.max_in_flight.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1000;

    fn s3() -> Network {
        Network::default()
    }

    #[test]
    fn a_wave_costs_its_rounds_of_first_bytes_and_its_transfer() {
        let net = s3();
        // One request of 64 MiB: 50 ms, then one second.
        let one = net.wave([64 * MIB]);
        assert_eq!(
            (one.time_us, one.requests, one.bytes),
            (1_050 * MS, 1, 64 * MIB)
        );
        // Eight of 8 MiB side by side: 50 ms, then 125 ms (8 x 64 MiB/s = 512 MiB/s).
        let eight = net.wave([8 * MIB; 8]);
        assert_eq!((eight.time_us, eight.requests), (175 * MS, 8));
        // Thirty-two of 8 MiB: the client's 1 GiB/s is the limit (250 ms).
        let many = net.wave([8 * MIB; 32]);
        assert_eq!(many.time_us, 300 * MS);
        // Two at a time: two rounds of first bytes.
        let narrow = net.wave_within(2, [MIB; 4]);
        assert_eq!(narrow.time_us, 2 * 50 * MS + 31_250);
        assert_eq!(net.wave([]), Cost::default());
        // Waves one after another add.
        let both = one.then(eight);
        assert_eq!(
            (both.time_us, both.requests, both.widest_wave),
            (1_225 * MS, 9, 8)
        );
    }

    #[test]
    fn gaps_follow_the_network() {
        let net = s3();
        assert_eq!(net.bandwidth_delay(), 64 * MIB / 20);
        assert_eq!(net.request_cost_bytes(), 64 * MIB / 1000);
        let near = net.with_first_byte_us(100);
        assert_eq!(near.bandwidth_delay(), 64 * MIB / 10_000);
    }

    #[test]
    fn plans_rank_by_time_and_request_cost_then_requests() {
        let net = s3();
        let (fast, slow) = (net.wave([MIB; 2]), net.wave([2 * MIB]));
        // Two requests of 1 MiB (50 + 15.6 ms, + 2 ms) beat one of 2 MiB (50 + 31.3 ms, + 1 ms).
        assert!(net.compare(&fast, &slow).is_lt());
        // Equal time: fewer requests win.
        let free = net.with_request_cost_us(0);
        let a = Cost {
            time_us: 5,
            requests: 2,
            bytes: 0,
            widest_wave: 2,
        };
        let b = Cost { requests: 3, ..a };
        assert!(free.compare(&a, &b).is_lt());
        // Over the cap: worse than anything within it.
        let capped = net.with_max_requests(2);
        let wide = Cost { time_us: 1, ..b };
        assert!(capped.compare(&a, &wide).is_lt());
    }

    /// Part sizes chosen for whole reads, with the figures they follow from.
    #[test]
    fn part_sizes() {
        type Case = (&'static str, Network, u64, u64, u64);
        let net = s3();
        #[rustfmt::skip]
        let cases: &[Case] = &[
            // Small objects: one request.
            ("64 KiB", net, 64 * 1024, 64 * MIB, 64 * 1024),
            ("300 KiB", net, 300 * 1024, 64 * MIB, 300 * 1024),
            // 7.8 MB: 15 parts of 512 KiB at once (50 + 7.8 ms, + 15 ms of request cost).
            ("7.8 MB", net, 7_800_000, 64 * MIB, MIB / 2),
            // 302 MB within a 64 MiB window: parts of 4 MiB, 16 in flight; within 128 MiB,
            // parts of 8 MiB (Durner et al.'s cost-optimal 8-16 MiB).
            ("302 MB", net, 302_000_000, 64 * MIB, 4 * MIB),
            ("302 MB, 128 MiB window", net, 302_000_000, 128 * MIB, 8 * MIB),
            // A window of 4 MiB: eight parts of 512 KiB receiving at once (512 MiB/s) beat one
            // request at 64 MiB/s, their successors sent ahead of their ends.
            ("302 MB, 4 MiB window", net, 302_000_000, 4 * MIB, MIB / 2),
            // A window of one part's bytes: one request.
            ("302 MB, 256 KiB window", net, 302_000_000, 256 * 1024, 302_000_000),
            // Requests that cost more: larger parts.
            ("302 MB, 20 ms a request", net.with_request_cost_us(20 * MS), 302_000_000, 64 * MIB, 8 * MIB),
            // A near, fast store: one request.
            ("7.8 MB, near", net.with_first_byte_us(100).with_request_bandwidth(1024 * MIB), 7_800_000, 64 * MIB, 7_800_000),
        ];
        for &(name, net, bytes, window, expected) in cases {
            assert_eq!(net.part_size(bytes, window), expected, "{name}");
        }
    }

    fn arb_network() -> impl Strategy<Value = Network> {
        (
            0u64..1_000_000,
            1u64..1 << 34,
            1u64..1 << 36,
            1u64..512,
            0u64..100_000,
            1u64..512,
        )
            .prop_map(|(fb, bw, total, in_flight, cost, cap)| Network {
                first_byte_us: fb,
                request_bandwidth: bw,
                total_bandwidth: total,
                max_in_flight: in_flight,
                request_cost_us: cost,
                max_requests: cap,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        #[test]
        fn model_invariants(
            net in arb_network(),
            sizes in proptest::collection::vec(0u64..1 << 40, 0..40),
            extra in 1u64..1 << 30,
            bytes in 0u64..1 << 40,
            window in 0u64..1 << 32,
        ) {
            let wave = net.wave(sizes.iter().copied());
            prop_assert_eq!(wave.requests, sizes.len() as u64);
            prop_assert_eq!(wave.bytes, sizes.iter().sum::<u64>());
            // More bytes never take less time; nor does one more request.
            let mut more = sizes.clone();
            if let Some(first) = more.first_mut() {
                *first += extra;
                prop_assert!(net.wave(more.iter().copied()).time_us >= wave.time_us);
            }
            more.push(extra);
            prop_assert!(net.wave(more.iter().copied()).time_us >= wave.time_us);
            // A wave is never faster than its largest request alone.
            if let Some(&largest) = sizes.iter().max() {
                prop_assert!(wave.time_us >= net.wave([largest]).time_us);
            }
            // The part size is a whole read or a power of two below it, and its plan is
            // never worse than one request for everything.
            let part = net.part_size(bytes, window);
            prop_assert!(part == bytes.max(1) || (part.is_power_of_two() && part < bytes));
            let chosen = net.parts(bytes, part, net.in_flight_for(part, window));
            let single = net.parts(bytes, bytes.max(1), 1);
            prop_assert!(!net.compare(&chosen, &single).is_gt());
        }
    }
}
