//! Arbitrary ranges and limits: the planner's invariants must hold.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::read_plan::{coalesce, locate};

fn u64_at(data: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    for (i, b) in data.iter().skip(at).take(8).enumerate() {
        word[i] = *b;
    }
    u64::from_le_bytes(word)
}

fuzz_target!(|data: &[u8]| {
    // Small numbers make merges likely; the top bit of the selector allows huge ones.
    let scale = |v: u64| if v >> 63 == 1 { v } else { v % 4096 };
    let hole = scale(u64_at(data, 0));
    let limit = scale(u64_at(data, 8));
    let ranges: Vec<_> = data
        .get(16..)
        .unwrap_or_default()
        .chunks(16)
        .map(|c| {
            let start = scale(u64_at(c, 0));
            start..start.saturating_add(scale(u64_at(c, 8)) % 512)
        })
        .collect();
    let reads = coalesce(&ranges, hole, limit);
    for pair in reads.windows(2) {
        assert!(
            pair[0].end <= pair[1].start,
            "reads overlap or are unsorted"
        );
    }
    for read in &reads {
        assert!(!read.is_empty(), "empty read");
    }
    for range in ranges.iter().filter(|r| !r.is_empty()) {
        let covering = reads
            .iter()
            .filter(|r| r.start <= range.start && range.end <= r.end)
            .count();
        assert_eq!(covering, 1, "{range:?} is not covered by exactly one read");
        let (read, window) = locate(&reads, range).expect("locate finds every input");
        assert_eq!(window.len() as u64, range.end - range.start);
        assert!(reads[read].start + window.start as u64 == range.start);
    }
    // A read made of several separate pieces stays within the size limit.
    for read in &reads {
        let mut inside: Vec<_> = ranges
            .iter()
            .filter(|r| !r.is_empty() && read.start <= r.start && r.end <= read.end)
            .cloned()
            .collect();
        inside.sort_by_key(|r| r.start);
        let mut reach = read.start;
        let mut pieces = 0;
        for r in &inside {
            if pieces == 0 || r.start >= reach {
                pieces += 1;
                assert!(
                    r.start - reach <= hole || pieces == 1,
                    "a merged gap exceeds the hole limit"
                );
            }
            reach = reach.max(r.end);
        }
        if pieces > 1 {
            assert!(
                read.end - read.start <= limit,
                "a merged read exceeds the size limit"
            );
        }
    }
});
