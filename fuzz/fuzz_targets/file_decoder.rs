//! The file decoder driven by hand with fuzzer-chosen answers. Byte 0 picks the options
//! (footer read size, projection of the first column, window, hole limit), bytes 1–2 seed the
//! answers: each requested range is widened, split, reordered, and now and then preceded by a
//! hostile push (short, long, past the end, miscounted), which must be an error. The rest is
//! the file. The batches must be those of the sync reader with the same options.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::bytes::Bytes;
use quiver::ipc::{DecodeResult, FileDecoder, Projection, ScanOptions, FileReader, ReaderOptions};

/// A small xorshift generator for the answers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fuzz_target!(|data: &[u8]| {
    let [choice, seed0, seed1, file @ ..] = data else {
        return;
    };
    let footer_read_size = [64, 300, 4096, 65536][(choice & 3) as usize];
    let options = ReaderOptions::default()
        .with_max_decompressed_buffer(1 << 24)
        .with_footer_read_size(footer_read_size);
    let scan = ScanOptions::default()
        .with_readahead([u64::MAX, 1, 700, 4096][(choice >> 3 & 3) as usize])
        .with_hole_size_limit([0, 64, 8192, 1 << 20][(choice >> 5 & 3) as usize]);
    let project = choice & 4 != 0;

    // What the sync reader says.
    let expected = FileReader::open(file, options.clone()).map(|mut reader| {
        if project && let Some(first) = reader.schema().fields().first().map(|f| f.name().to_owned()) {
            if let Ok(p) = Projection::from_paths(reader.schema(), &[first]) {
                reader.set_projection(p);
            }
        }
        let mut rows = Vec::new();
        let mut failed = false;
        for batch in reader.scan(0..usize::MAX, scan.clone()) {
            match batch {
                Ok(batch) => rows.push(batch.num_rows()),
                Err(_) => failed = true,
            }
        }
        (rows, failed)
    });

    let len = file.len() as u64;
    let mut rng = Rng(u64::from(*seed0) << 8 | u64::from(*seed1) | 1 << 40);
    let mut decoder = FileDecoder::new(len, options);
    decoder.set_scan_options(scan);
    let mut rows = Vec::new();
    let slice = |r: &core::ops::Range<u64>| Bytes::from_vec(file[r.start as usize..r.end as usize].to_vec());
    let outcome = loop {
        let result = match decoder.try_decode() {
            Ok(result) => result,
            Err(e) => break Err(e),
        };
        match result {
            DecodeResult::NeedsData(ranges) => {
                assert!(!ranges.is_empty(), "asked for nothing");
                for r in &ranges {
                    assert!(r.start < r.end && r.end <= len, "asked for {r:?} of {len}");
                }
                if rng.next() % 4 == 0 {
                    let r = ranges[0].clone();
                    let hostile = match rng.next() % 4 {
                        0 => (vec![r.clone()], vec![Bytes::from_vec(vec![0; (r.end - r.start - 1) as usize])]),
                        1 => (vec![r.clone()], vec![Bytes::from_vec(vec![0; (r.end - r.start + 1) as usize])]),
                        2 => (vec![r.start..len + 1], vec![Bytes::from_vec(vec![0; (len + 1 - r.start) as usize])]),
                        _ => (vec![r.clone(), r.clone()], vec![slice(&r)]),
                    };
                    assert!(decoder.push_ranges(hostile.0, hostile.1).is_err());
                }
                let mut pieces: Vec<core::ops::Range<u64>> = Vec::new();
                for r in ranges {
                    let start = r.start.saturating_sub(rng.next() % 3 * 16);
                    let end = (r.end + rng.next() % 3 * 16).min(len);
                    let mid = start + rng.next() % (end - start + 1);
                    for piece in [start..mid, mid..end] {
                        let at = (rng.next() as usize) % (pieces.len() + 1);
                        pieces.insert(at, piece);
                    }
                }
                let data = pieces.iter().map(slice).collect();
                decoder.push_ranges(pieces, data).expect("honest push");
            }
            DecodeResult::Footer => {
                if project && let Some(first) = decoder.schema().fields().first().map(|f| f.name().to_owned()) {
                    if let Ok(p) = Projection::from_paths(decoder.schema(), &[first]) {
                        decoder.set_projection(p);
                    }
                }
            }
            DecodeResult::Data(batch) => rows.push(batch.num_rows()),
            DecodeResult::Finished => break Ok(()),
            _ => {}
        }
    };
    match (expected, outcome) {
        (Ok((want, failed)), got) => {
            assert_eq!(rows, want, "the same batches as the sync reader");
            assert_eq!(failed, got.is_err(), "the same failure as the sync reader");
        }
        (Err(_), got) => assert!(got.is_err() && rows.is_empty(), "opening fails alike"),
    }
});
