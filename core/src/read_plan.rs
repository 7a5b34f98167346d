//! The read planner's policy: turning the byte ranges a reader needs into as few reads as a
//! high-latency store wants.
//!
//! It uses the cost model ([`cost`](crate::cost)) and nothing else of the crate.
//!
//! A reader knows which byte ranges it needs (a footer, a batch's buffers, a dictionary). On a
//! store where every request costs a round trip, it is cheaper to read a few small gaps than to
//! issue one request per range. [`coalesce`] decides which reads to issue, and [`locate`] finds
//! each requested range again inside the bytes those reads return.
//!
//! Ranges go in as `&[Range<u64>]` of file offsets and come out as a new `Vec` of reads; the
//! functions are pure (no I/O, no state) so the policy can be tested on its own. The limits and
//! the merging rule follow Arrow C++'s `CoalesceReadRanges`. Under a [`Network`] model,
//! [`coalesce_for`] picks the gap to read through by the model (from none up to the
//! bandwidth-delay product) and [`split`] cuts long reads into parts sent side by side.

use crate::cost::{Cost, Network};
use alloc::vec::Vec;
use core::ops::Range;

/// Default largest gap between two ranges that is read through rather than split (Arrow C++'s 8 KiB).
pub const DEFAULT_HOLE_SIZE_LIMIT: u64 = 8 * 1024;

/// Default largest coalesced read (Arrow C++'s 32 MiB); a single larger range is kept whole.
pub const DEFAULT_RANGE_SIZE_LIMIT: u64 = 32 * 1024 * 1024;

/// Merges `ranges` into the fewest reads such that every requested byte is read exactly once,
/// no read fetches an unrequested gap longer than `hole_size_limit`, and no read grows past
/// `range_size_limit` by merging.
///
/// `ranges` may be in any order and may be empty (`start >= end`, reversed ones included),
/// duplicated or overlapping. First, ranges that overlap (share at least one byte) are joined
/// into one *piece*: they must end up in the same read. Ranges that only touch (`a.end ==
/// b.start`) stay separate pieces. Then the pieces are walked in order of offset. Each one joins
/// the current read when both hold:
///
/// - the gap between the read's end and the piece's start is at most `hole_size_limit`, and
/// - the read would then span at most `range_size_limit` bytes.
///
/// Otherwise the piece starts a new read.
///
/// The returned reads satisfy the following:
///
/// - They are non-empty, sorted by offset and pairwise disjoint (neighbours may touch).
/// - Each non-empty input range lies inside exactly one read; empty ranges are dropped.
/// - Each read starts at an input's start and ends at an input's end; nothing is read past the
///   requested bytes at either edge.
/// - Within a read, every run of bytes no input covers is at most `hole_size_limit` long.
/// - A read longer than `range_size_limit` is a single piece: one input range, or input ranges
///   that chain-overlap. Such a read holds no gap and no piece that could have been split off.
///   A read that joins two or more pieces is at most `range_size_limit` long.
/// - No two neighbouring reads could be joined into one within the limits.
/// - The number of reads is the smallest possible. Any run of pieces that fits the limits still
///   fits after dropping pieces from either end. So joining as much as possible from left to
///   right never costs a read.
///
/// When no two inputs partially overlap, the result equals Arrow C++'s
/// `internal::CoalesceReadRanges` for the same limits. Arrow C++ does not accept partial overlaps.
///
/// The result does not depend on the order of `ranges`. It costs one sort and one allocation
/// (the sorted copy, merged in place into the result). No arithmetic can overflow: ranges ending
/// at `u64::MAX` and limits of `u64::MAX` are fine.
#[must_use]
pub fn coalesce(
    ranges: &[Range<u64>],
    hole_size_limit: u64,
    range_size_limit: u64,
) -> Vec<Range<u64>> {
    let mut reads: Vec<Range<u64>> = ranges.iter().filter(|r| !r.is_empty()).cloned().collect();
    reads.sort_unstable_by_key(|r| r.start);
    // A range that overlaps the piece before it (the union of the ranges so far that
    // chain-overlap) joins it.
    reads.dedup_by(|range, piece| {
        let overlaps = range.start < piece.end;
        if overlaps {
            piece.end = piece.end.max(range.end);
        }
        overlaps
    });
    // A piece joins the read before it if the gap and the merged size allow it. Pieces are
    // disjoint and sorted, so `piece.start >= read.end` and `piece.end > read.start`: neither
    // subtraction saturates.
    reads.dedup_by(|piece, read| {
        let joins = piece.start.saturating_sub(read.end) <= hole_size_limit
            && piece.end.saturating_sub(read.start) <= range_size_limit;
        if joins {
            read.end = piece.end;
        }
        joins
    });
    reads
}

/// Cuts every read longer than `part` bytes into parts of `part` bytes (the last one
/// shorter), in order; shorter reads stay as they are. A `part` of 0 is taken as 1.
#[must_use]
pub fn split(reads: &[Range<u64>], part: u64) -> Vec<Range<u64>> {
    let part = part.max(1);
    let mut out = Vec::with_capacity(reads.len());
    for read in reads.iter().filter(|r| !r.is_empty()) {
        let mut start = read.start;
        while start < read.end {
            let end = start.saturating_add(part).min(read.end);
            out.push(start..end);
            start = end;
        }
    }
    out
}

/// Most gaps [`coalesce_for`] tries, besides none, a request's worth and the bandwidth-delay
/// product.
const GAPS_TRIED: usize = 16;

/// The reads for `ranges` sent together on `network`, and what they cost: [`coalesce`]d up to
/// `part` bytes a read (or the bandwidth-delay product, if larger) with the cheapest gap by
/// the model. The gaps tried are none, the bytes
/// a request's cost buys ([`Network::request_cost_bytes`]), the bandwidth-delay product
/// ([`Network::bandwidth_delay`], the most worth reading through: a longer gap costs more than
/// the round trip it saves) and up to 16 of the gaps between the ranges below it. Ties go to
/// the smaller gap (fewer bytes).
#[must_use]
pub fn coalesce_for(
    network: &Network,
    ranges: &[Range<u64>],
    part: u64,
) -> (Vec<Range<u64>>, Cost) {
    let most = network.bandwidth_delay();
    let pieces = coalesce(ranges, 0, 0);
    let mut gaps: Vec<u64> = pieces
        .windows(2)
        .filter_map(|pair| match pair {
            [a, b] => Some(b.start.saturating_sub(a.end)),
            _ => None,
        })
        .filter(|&gap| gap <= most)
        .collect();
    gaps.sort_unstable();
    gaps.dedup();
    let step = gaps.len().div_ceil(GAPS_TRIED).max(1);
    let sampled = gaps.iter().copied().skip(step - 1).step_by(step);
    let mut holes: Vec<u64> = [0, network.request_cost_bytes().min(most), most]
        .into_iter()
        .chain(sampled)
        .collect();
    holes.sort_unstable();
    holes.dedup();
    let mut best: Option<(Vec<Range<u64>>, Cost)> = None;
    // A read shorter than the bandwidth-delay product is not worth splitting.
    let part = part.max(most);
    for hole in holes {
        let reads = coalesce(&pieces, hole, part);
        let cost = network.wave(reads.iter().map(|r| r.end - r.start));
        if best
            .as_ref()
            .is_none_or(|(_, b)| network.compare(&cost, b).is_lt())
        {
            best = Some((reads, cost));
        }
    }
    best.unwrap_or_default()
}

/// Where the `ranges` of a body of `known_len` bytes (offsets in that body) probably lie in
/// another body of `body_len` bytes written the same way: at the same offsets when the
/// lengths are equal (fixed-width columns, equal row counts), else scaled by the ratio of the
/// lengths and widened on both sides by their difference. Clipped to `0..body_len`, merged
/// where they overlap, sorted; empty ranges dropped.
///
/// A guess to read a block's buffers with its metadata in one request: whatever it misses is
/// read once the metadata says where the buffers are.
#[must_use]
pub fn predict(ranges: &[Range<u64>], known_len: u64, body_len: u64) -> Vec<Range<u64>> {
    let scale = |offset: u64, up: bool| -> u64 {
        if known_len == body_len || known_len == 0 {
            return offset.min(body_len);
        }
        let product = u128::from(offset) * u128::from(body_len);
        let scaled = if up {
            product.div_ceil(u128::from(known_len))
        } else {
            product / u128::from(known_len)
        };
        u64::try_from(scaled).unwrap_or(u64::MAX).min(body_len)
    };
    let margin = known_len.abs_diff(body_len);
    let guessed: Vec<Range<u64>> = ranges
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| {
            let start = scale(r.start, false).saturating_sub(margin);
            let end = scale(r.end, true).saturating_add(margin).min(body_len);
            start..end
        })
        .collect();
    coalesce(&guessed, 0, u64::MAX)
}

/// Finds `range` inside the reads returned by [`coalesce`]. Returns the index of the read that
/// holds it and where its bytes sit inside that read's bytes. Uses a binary search.
///
/// `coalesced` must be sorted and pairwise disjoint, as [`coalesce`] returns it. Otherwise the
/// answer is unspecified, but the function still does not panic.
///
/// Returns `None` in these cases:
///
/// - No single read holds the whole of `range`.
/// - `range` is reversed (`start > end`).
/// - The window does not fit in `usize`. A read that large cannot be in memory anyway.
///
/// An empty range `p..p` is found in a read when `read.start <= p <= read.end`. When two reads
/// touch at `p`, it is found at the start of the later one.
#[must_use]
pub fn locate(coalesced: &[Range<u64>], range: &Range<u64>) -> Option<(usize, Range<usize>)> {
    if range.start > range.end {
        return None;
    }
    // The last read starting at or before `range.start` is the only one that can hold it.
    let index = coalesced
        .partition_point(|read| read.start <= range.start)
        .checked_sub(1)?;
    let read = coalesced.get(index)?;
    if range.end > read.end {
        return None;
    }
    let start = usize::try_from(range.start.checked_sub(read.start)?).ok()?;
    let end = usize::try_from(range.end.checked_sub(read.start)?).ok()?;
    Some((index, start..end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use proptest::prelude::*;

    const MAX: u64 = u64::MAX;

    /// Converts `(start, end)` pairs to ranges; a pair may be reversed.
    fn ranges(pairs: &[(u64, u64)]) -> Vec<Range<u64>> {
        pairs.iter().map(|&(start, end)| start..end).collect()
    }

    /// Converts Arrow C++'s `ReadRange {offset, length}` pairs to ranges.
    fn from_offset_len(pairs: &[(u64, u64)]) -> Vec<Range<u64>> {
        pairs
            .iter()
            .map(|&(offset, len)| offset..offset + len)
            .collect()
    }

    /// Every case of Arrow C++'s `TEST(CoalesceReadRanges, Basics)` (interfaces_test.cc), with
    /// its limits: hole 9, range 99.
    #[test]
    fn arrow_cpp_basics() {
        /// Name, input, expected reads; ranges as Arrow's `(offset, length)`.
        type ArrowCase = (&'static str, &'static [(u64, u64)], &'static [(u64, u64)]);
        #[rustfmt::skip]
        let cases: &[ArrowCase] = &[
            ("empty", &[], &[]),
            ("zero-sized only", &[(110, 0)], &[]),
            ("zero-sized and non-zero", &[(110, 10), (120, 0)], &[(110, 10)]),
            ("one range", &[(110, 10)], &[(110, 10)]),
            ("no holes, unordered", &[(130, 10), (110, 10), (120, 10)], &[(110, 30)]),
            ("no holes", &[(110, 10), (120, 10), (130, 10)], &[(110, 30)]),
            ("small holes only", &[(110, 11), (130, 11), (150, 11)], &[(110, 51)]),
            ("large holes", &[(110, 10), (130, 10)], &[(110, 10), (130, 10)]),
            (
                "large and small holes",
                &[(110, 11), (130, 11), (150, 10), (170, 11), (190, 11)],
                &[(110, 50), (170, 31)],
            ),
            (
                "with zero-sized ranges",
                &[(110, 11), (130, 0), (130, 11), (145, 0), (150, 11), (200, 0)],
                &[(110, 51)],
            ),
            ("no holes, large ranges", &[(110, 100), (210, 100)], &[(110, 100), (210, 100)]),
            (
                "small holes, large range in the middle",
                &[(110, 10), (120, 11), (140, 100), (240, 11), (260, 11)],
                &[(110, 21), (140, 100), (240, 31)],
            ),
            ("mid-size ranges that would turn large", &[(100, 50), (150, 50)], &[(100, 50), (150, 50)]),
            (
                "mid-size ranges, several",
                &[(100, 30), (130, 30), (160, 30), (190, 30), (220, 30)],
                &[(100, 90), (190, 60)],
            ),
            (
                "large range in the middle, unsorted",
                &[(140, 100), (120, 11), (240, 11), (110, 10), (260, 11)],
                &[(110, 21), (140, 100), (240, 31)],
            ),
        ];
        for &(name, input, expected) in cases {
            let got = coalesce(&from_offset_len(input), 9, 99);
            assert_eq!(got, from_offset_len(expected), "{name}");
        }
    }

    /// A table case: a name, ranges as `(start, end)`, two figures, and the expected ranges.
    type Case = (
        &'static str,
        &'static [(u64, u64)],
        u64,
        u64,
        &'static [(u64, u64)],
    );

    #[test]
    fn hand_checked() {
        // Name, input, hole limit, range limit, expected reads.
        #[rustfmt::skip]
        let cases: &[Case] = &[
            ("empty input", &[], 9, 99, &[]),
            ("all empty, one reversed", &[(5, 5), (9, 9), (7, 3)], 9, 99, &[]),
            ("unsorted", &[(40, 50), (0, 10), (20, 30)], 10, 100, &[(0, 50)]),
            ("duplicates", &[(10, 20), (10, 20), (10, 20)], 9, 99, &[(10, 20)]),
            ("contained", &[(10, 20), (0, 100), (0, 100), (50, 100)], 9, 99, &[(0, 100)]),
            ("same start, different ends", &[(0, 10), (0, 30), (0, 20)], 0, 99, &[(0, 30)]),
            ("partial overlaps chain", &[(12, 20), (0, 10), (5, 15)], 0, 99, &[(0, 20)]),
            ("overlap beyond the limit is forced", &[(0, 60), (50, 120)], 9, 99, &[(0, 120)]),
            // 11..60 and 50..120 are one 109-byte piece; 0..10 may not join it (120 > 99).
            (
                "overlapping piece measured whole",
                &[(0, 10), (11, 60), (50, 120)], 9, 99,
                &[(0, 10), (11, 120)],
            ),
            ("single huge range", &[(0, 1_000_000)], 9, 99, &[(0, 1_000_000)]),
            (
                "huge range keeps neighbours apart",
                &[(0, 5), (6, 1000), (1001, 1005)], 9, 99,
                &[(0, 5), (6, 1000), (1001, 1005)],
            ),
            ("adjacent, gap 0", &[(0, 10), (10, 20), (20, 30)], 0, 100, &[(0, 30)]),
            ("adjacent, split by size", &[(0, 10), (10, 20), (20, 30)], 0, 20, &[(0, 20), (20, 30)]),
            ("zero limits keep pieces apart", &[(0, 10), (10, 20)], 0, 0, &[(0, 10), (10, 20)]),
            ("gap exactly the hole limit", &[(0, 10), (19, 29)], 9, 99, &[(0, 29)]),
            ("gap one past the hole limit", &[(0, 10), (20, 30)], 9, 99, &[(0, 10), (20, 30)]),
            ("read exactly the range limit", &[(0, 50), (60, 99)], 10, 99, &[(0, 99)]),
            ("read one past the range limit", &[(0, 50), (60, 100)], 10, 99, &[(0, 50), (60, 100)]),
            (
                "greedy restarts at the refused piece",
                &[(0, 40), (45, 80), (85, 120), (125, 130)], 5, 90,
                &[(0, 80), (85, 130)],
            ),
            ("near u64::MAX", &[(MAX - 10, MAX), (MAX - 30, MAX - 20)], 10, 100, &[(MAX - 30, MAX)]),
            ("whole address space", &[(0, 1), (MAX - 1, MAX)], MAX, MAX, &[(0, MAX)]),
            (
                "overlaps at u64::MAX",
                &[(MAX - 5, MAX), (MAX - 9, MAX - 2), (MAX - 1, MAX)], 0, 0,
                &[(MAX - 9, MAX)],
            ),
        ];
        for &(name, input, hole, limit, expected) in cases {
            assert_eq!(
                coalesce(&ranges(input), hole, limit),
                ranges(expected),
                "{name}"
            );
        }
    }

    #[test]
    fn default_limits() {
        const KIB: u64 = 1024;
        const MIB: u64 = 1024 * KIB;
        let input = ranges(&[
            (0, 4 * KIB),
            (12 * KIB, 16 * KIB),       // gap 8 KiB: read through
            (24 * KIB + 1, 28 * KIB),   // gap 8 KiB + 1: split
            (28 * KIB, 28 * KIB + MIB), // adjacent
            (32 * MIB, 64 * MIB + 1),   // larger than 32 MiB: whole
            (64 * MIB + 2, 64 * MIB + 3),
        ]);
        let reads = coalesce(&input, DEFAULT_HOLE_SIZE_LIMIT, DEFAULT_RANGE_SIZE_LIMIT);
        let expected = ranges(&[
            (0, 16 * KIB),
            (24 * KIB + 1, 28 * KIB + MIB),
            (32 * MIB, 64 * MIB + 1),
            (64 * MIB + 2, 64 * MIB + 3),
        ]);
        assert_eq!(reads, expected);
    }

    #[test]
    fn locate_cases() {
        /// A `(start, end)` to find, and the `(read, window start, window end)` expected.
        type LocateCase = ((u64, u64), Option<(usize, usize, usize)>);
        let reads = ranges(&[(10, 20), (20, 30), (40, 50), (MAX - 5, MAX)]);
        let cases: &[LocateCase] = &[
            ((10, 20), Some((0, 0, 10))),
            ((12, 15), Some((0, 2, 5))),
            ((20, 25), Some((1, 0, 5))),
            ((45, 50), Some((2, 5, 10))),
            ((MAX - 3, MAX), Some((3, 2, 5))),
            ((15, 25), None), // straddles two reads
            ((30, 40), None), // in the gap
            ((35, 45), None), // starts in the gap
            ((0, 5), None),   // before the first read
            ((50, 51), None), // after a read
            ((15, 15), Some((0, 5, 5))),
            ((20, 20), Some((1, 0, 0))), // touching reads: the later one
            ((30, 30), Some((1, 10, 10))),
            ((35, 35), None),
            ((18, 12), None), // reversed
        ];
        for &((start, end), expected) in cases {
            let expected = expected.map(|(read, from, to)| (read, from..to));
            assert_eq!(locate(&reads, &(start..end)), expected, "{start}..{end}");
        }
        assert_eq!(locate(&[], &(0..1)), None);
        let whole = ranges(&[(0, MAX)]);
        let window = usize::try_from(MAX).ok().map(|m| (0, 0..m));
        assert_eq!(locate(&whole, &(0..MAX)), window);
    }

    /// Ranges near 0 or near `u64::MAX`, with many overlaps, touches and empty ones.
    fn arb_ranges() -> impl Strategy<Value = Vec<Range<u64>>> {
        let base = prop_oneof![3 => Just(0u64), 1 => Just(MAX - 400)];
        base.prop_flat_map(|base| {
            let range = prop_oneof![
                8 => (0u64..300, 0u64..60).prop_map(move |(a, len)| base + a..base + a + len),
                1 => (0u64..300, 0u64..300).prop_map(move |(a, b)| base + a..base + b),
                1 => (0u64..300).prop_map(move |a| base + a..MAX),
            ];
            proptest::collection::vec(range, 0..14)
        })
    }

    fn arb_limit() -> impl Strategy<Value = u64> {
        prop_oneof![6 => 0u64..40, 3 => 0u64..200, 1 => Just(MAX)]
    }

    /// The inputs inside `read`, sorted by start.
    fn inputs_in(ranges: &[Range<u64>], read: &Range<u64>) -> Vec<Range<u64>> {
        let mut inside: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| !r.is_empty() && read.start <= r.start && r.end <= read.end)
            .cloned()
            .collect();
        inside.sort_by_key(|r| r.start);
        inside
    }

    /// The fewest reads any valid plan needs, by dynamic programming over the pieces (unions of
    /// chain-overlapping inputs). A run of pieces may share a read when every gap is within the
    /// hole limit and the run is one piece or spans at most the range limit.
    fn fewest_reads(ranges: &[Range<u64>], hole: u64, limit: u64) -> usize {
        let mut sorted: Vec<Range<u64>> =
            ranges.iter().filter(|r| !r.is_empty()).cloned().collect();
        sorted.sort_by_key(|r| r.start);
        let mut pieces: Vec<Range<u64>> = Vec::new();
        for r in sorted {
            match pieces.last_mut() {
                Some(p) if r.start < p.end => p.end = p.end.max(r.end),
                _ => pieces.push(r),
            }
        }
        let n = pieces.len();
        // best[j]: fewest reads for the first j pieces.
        let mut best = vec![usize::MAX; n + 1];
        best[0] = 0;
        for j in 1..=n {
            for i in 0..j {
                let run = &pieces[i..j];
                let gaps_ok = run.windows(2).all(|w| w[1].start - w[0].end <= hole);
                let size_ok = run.len() == 1 || run[run.len() - 1].end - run[0].start <= limit;
                if gaps_ok && size_ok && best[i] != usize::MAX {
                    best[j] = best[j].min(best[i] + 1);
                }
            }
        }
        best[n]
    }

    #[test]
    fn split_cases() {
        let reads = ranges(&[(0, 10), (10, 11), (20, 45), (50, 50)]);
        assert_eq!(
            split(&reads, 10),
            ranges(&[(0, 10), (10, 11), (20, 30), (30, 40), (40, 45)])
        );
        assert_eq!(split(&reads, 0).len(), 10 + 1 + 25);
        assert_eq!(
            split(&ranges(&[(MAX - 3, MAX)]), 2),
            ranges(&[(MAX - 3, MAX - 1), (MAX - 1, MAX)])
        );
    }

    #[test]
    fn predict_cases() {
        // Name, known ranges, known body, other body, expected.
        #[rustfmt::skip]
        let cases: &[Case] = &[
            ("same length: same offsets", &[(0, 128), (128, 4128)], 8000, 8000, &[(0, 4128)]),
            ("apart stay apart", &[(0, 10), (100, 200)], 1000, 1000, &[(0, 10), (100, 200)]),
            ("longer: scaled, widened", &[(100, 200)], 1000, 1100, &[(10, 320)]),
            ("shorter: scaled, widened", &[(500, 600)], 1000, 500, &[(0, 500)]),
            ("shorter, near the start", &[(10, 20)], 1000, 900, &[(0, 118)]),
            ("clipped to the body", &[(900, 1000)], 1000, 990, &[(881, 990)]),
            ("empty ranges dropped", &[(5, 5)], 10, 10, &[]),
            ("an empty known body", &[(0, 0)], 0, 10, &[]),
        ];
        for &(name, known, known_len, body_len, expected) in cases {
            assert_eq!(
                predict(&ranges(known), known_len, body_len),
                ranges(expected),
                "{name}"
            );
        }
    }

    #[test]
    fn coalesce_for_cases() {
        const MIB: u64 = 1024 * 1024;
        let s3 = Network::default();
        // Block metadata 40 KiB apart, in one wave: a gap of 32 KiB costs 0.5 ms at 64 MiB/s,
        // less than a request (1 ms), so they are read through into one read.
        let metadata: Vec<Range<u64>> = (0..100)
            .map(|i| i * 40 * 1024..i * 40 * 1024 + 8 * 1024)
            .collect();
        let (reads, cost) = coalesce_for(&s3, &metadata, 64 * MIB);
        assert_eq!(reads, ranges(&[(0, 99 * 40 * 1024 + 8 * 1024)]));
        assert_eq!(cost.requests, 1);
        // On a network where bytes cost more than requests, each is a read of its own.
        let thin = s3
            .with_request_bandwidth(MIB)
            .with_total_bandwidth(MIB)
            .with_request_cost_us(100);
        let (reads, _) = coalesce_for(&thin, &metadata, 64 * MIB);
        assert_eq!(reads.len(), 100);
        // ... unless the cap says fewer (and the gaps are within the bandwidth-delay product,
        // 100 KiB at 100 ms).
        let capped = thin.with_first_byte_us(100_000).with_max_requests(50);
        let (reads, cost) = coalesce_for(&capped, &metadata, 64 * MIB);
        assert!(
            reads.len() <= 50 && cost.widest_wave <= 50,
            "{}",
            reads.len()
        );
        // Gaps beyond the bandwidth-delay product (3.2 MiB here) are never read through.
        let far = ranges(&[(0, 10), (4 * MIB, 4 * MIB + 10)]);
        assert_eq!(coalesce_for(&s3, &far, u64::MAX).0, far);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn coalesce_invariants(ranges in arb_ranges(), hole in arb_limit(), limit in arb_limit()) {
            let reads = coalesce(&ranges, hole, limit);

            // Non-empty, sorted, pairwise disjoint.
            for read in &reads {
                prop_assert!(read.start < read.end, "empty read {read:?}");
            }
            for pair in reads.windows(2) {
                prop_assert!(pair[0].end <= pair[1].start, "overlap or unsorted: {pair:?}");
            }

            // Every non-empty input lies in exactly one read, and `locate` finds it there.
            for r in ranges.iter().filter(|r| !r.is_empty()) {
                let holders: Vec<usize> = (0..reads.len())
                    .filter(|&i| reads[i].start <= r.start && r.end <= reads[i].end)
                    .collect();
                prop_assert_eq!(holders.len(), 1, "{:?} held by {:?}", r, holders);
                let i = holders[0];
                let start = usize::try_from(r.start - reads[i].start).ok();
                let end = usize::try_from(r.end - reads[i].start).ok();
                prop_assert_eq!(locate(&reads, r), start.zip(end).map(|(s, e)| (i, s..e)));
            }

            for read in &reads {
                let inside = inputs_in(&ranges, read);
                // Tight edges: starts at an input's start, ends at an input's end.
                prop_assert_eq!(inside.first().map(|r| r.start), Some(read.start));
                prop_assert_eq!(inside.iter().map(|r| r.end).max(), Some(read.end));

                // Every uncovered run inside the read is within the hole limit; a read beyond
                // the range limit has no break at all (its inputs chain-overlap).
                let mut covered_to = read.start;
                for (k, r) in inside.iter().enumerate() {
                    if k > 0 && read.end - read.start > limit {
                        prop_assert!(r.start < covered_to, "{read:?} > {limit} is split at {covered_to}");
                    }
                    if r.start > covered_to {
                        prop_assert!(r.start - covered_to <= hole, "hole {covered_to}..{} in {read:?}", r.start);
                    }
                    covered_to = covered_to.max(r.end);
                }
                prop_assert_eq!(covered_to, read.end);
            }

            // No two neighbours could have been joined.
            for pair in reads.windows(2) {
                let gap = pair[1].start - pair[0].end;
                let span = pair[1].end - pair[0].start;
                prop_assert!(gap > hole || span > limit, "{pair:?} could be one read");
            }

            // The fewest reads possible.
            prop_assert_eq!(reads.len(), fewest_reads(&ranges, hole, limit));

            // Order and duplicates do not matter.
            let mut shuffled: Vec<Range<u64>> = ranges.iter().rev().cloned().collect();
            shuffled.extend(ranges.iter().cloned());
            prop_assert_eq!(coalesce(&shuffled, hole, limit), reads);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        #[test]
        fn model_plans_hold_every_range(
            input in arb_ranges(),
            part in 1u64..400,
            fb in 0u64..200_000,
            bw in 1u64..1 << 30,
            cost in 0u64..10_000,
            cap in 1u64..20,
        ) {
            let network = Network::default()
                .with_first_byte_us(fb)
                .with_request_bandwidth(bw)
                .with_request_cost_us(cost)
                .with_max_requests(cap);
            let (reads, modelled) = coalesce_for(&network, &input, part);
            // A valid plan: sorted, disjoint, every range inside one read, gaps within the
            // bandwidth-delay product (or at most part of a single piece).
            for pair in reads.windows(2) {
                prop_assert!(pair[0].end <= pair[1].start);
            }
            for r in input.iter().filter(|r| !r.is_empty()) {
                prop_assert!(locate(&reads, r).is_some(), "{r:?} not in {reads:?}");
            }
            prop_assert_eq!(modelled.requests, reads.len() as u64);
            // Never worse by the model than merging nothing or merging all it may.
            let most = network.bandwidth_delay();
            for hole in [0, most] {
                let other = coalesce(&input, hole, part.max(most));
                let other = network.wave(other.iter().map(|r| r.end - r.start));
                prop_assert!(!network.compare(&modelled, &other).is_gt());
            }
            // Parts (of reads short enough to cut here): the same bytes, none longer than
            // the part, in order.
            let short: Vec<Range<u64>> =
                reads.iter().filter(|r| r.end - r.start < 1 << 16).cloned().collect();
            let parts = split(&short, part);
            prop_assert_eq!(
                parts.iter().map(|r| r.end - r.start).sum::<u64>(),
                short.iter().map(|r| r.end - r.start).sum::<u64>()
            );
            prop_assert!(parts.iter().all(|r| r.end - r.start <= part && !r.is_empty()));
            for pair in parts.windows(2) {
                prop_assert!(pair[0].end <= pair[1].start);
            }
        }

        #[test]
        fn predictions_lie_in_the_body(
            known in proptest::collection::vec((0u64..1000, 0u64..100), 0..8),
            known_len in 0u64..1100,
            body_len in 0u64..2000,
        ) {
            let known: Vec<Range<u64>> = known.iter().map(|&(s, l)| s..s + l).collect();
            let guess = predict(&known, known_len, body_len);
            for pair in guess.windows(2) {
                prop_assert!(pair[0].end < pair[1].start);
            }
            prop_assert!(guess.iter().all(|r| !r.is_empty() && r.end <= body_len));
            if known_len == body_len {
                // The same length: every known range (within the body) is predicted.
                for r in known.iter().filter(|r| !r.is_empty() && r.end <= body_len) {
                    prop_assert!(locate(&guess, r).is_some());
                }
            }
        }
    }
}
