//! The ten-column table the read and conversion tests and benchmarks share: i32, i64, f64,
//! utf8, bool, timestamp[us, UTC], date32, `list<i32>`, `struct<i32, utf8>` and
//! `dictionary<utf8>`, with about 10% nulls, from a seeded generator so every run sees the
//! same bytes.

use quiver::array::RecordBatch;
use quiver::builder::{
    AppendValue, ArrayBuilder, BooleanBuilder, DictionaryBuilder, ListBuilder, PrimitiveBuilder,
    StringBuilder, StructBuilder,
};
use quiver::datatype::{DataType, TimeUnit};
use quiver::schema::Field;

/// A small xorshift generator: deterministic, no dependencies.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// True about one time in ten.
    pub fn one_in_ten(&mut self) -> bool {
        self.next_u64().is_multiple_of(10)
    }
}

const WORDS: [&str; 8] = [
    "arrow", "quiver", "bolt", "fletch", "nock", "shaft", "point", "vane",
];

/// One batch of `rows` rows of the ten-column table.
pub fn batch(rows: usize, seed: u64) -> RecordBatch<'static> {
    let mut rng = Rng::new(seed);
    let mut i32s = PrimitiveBuilder::<i32>::new();
    let mut i64s = PrimitiveBuilder::<i64>::new();
    let mut f64s = PrimitiveBuilder::<f64>::new();
    let mut strings = StringBuilder::new();
    let mut bools = BooleanBuilder::new();
    let timestamp = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    let mut timestamps = PrimitiveBuilder::<i64>::with_data_type(timestamp);
    let mut dates = PrimitiveBuilder::<i32>::with_data_type(DataType::Date32);
    let mut lists = ListBuilder::new(PrimitiveBuilder::<i32>::new());
    let mut structs = StructBuilder::new()
        .with_child("id", PrimitiveBuilder::<i32>::new())
        .with_child("name", StringBuilder::new());
    let mut dictionary = DictionaryBuilder::new(StringBuilder::new()).with_id(0);
    // The dictionary's values in one fixed order, so every batch shares one dictionary.
    for word in WORDS {
        dictionary.append_value(word);
    }
    for row in 0..rows {
        let r = rng.next_u64();
        let null = |rng: &mut Rng| rng.one_in_ten();
        i32s.append_option((!null(&mut rng)).then_some(r as i32));
        i64s.append_option((!null(&mut rng)).then_some((r >> 3) as i64));
        f64s.append_option((!null(&mut rng)).then_some((r >> 11) as f64 / (1u64 << 53) as f64));
        let word = WORDS[(r % 8) as usize];
        if null(&mut rng) {
            strings.append_null();
        } else {
            strings.append_value(format!("{word} {row} \"{}\"", r % 1000));
        }
        bools.append_option((!null(&mut rng)).then_some(r & 1 == 1));
        let micros = 1_600_000_000_000_000 + (r % 100_000_000_000_000) as i64;
        timestamps.append_option((!null(&mut rng)).then_some(micros));
        dates.append_option((!null(&mut rng)).then_some(18_000 + (r % 4000) as i32));
        if null(&mut rng) {
            lists.append_null();
        } else {
            for k in 0..(r % 4) as i32 {
                lists.values().append_value(k * row as i32);
            }
            lists.append();
        }
        if null(&mut rng) {
            structs.append_null();
        } else {
            if let Some(id) = structs.field_builder::<PrimitiveBuilder<i32>>(0) {
                id.append_value(row as i32);
            }
            if let Some(name) = structs.field_builder::<StringBuilder>(1) {
                name.append_value(word);
            }
            structs.append();
        }
        if null(&mut rng) {
            dictionary.append_null();
        } else {
            dictionary.append_value(WORDS[((r >> 8) % 8) as usize]);
        }
    }
    // The fixed-order values above are rows too: drop them again by slicing.
    let dictionary_column = dictionary.finish().and_then(|d| d.slice(WORDS.len(), rows));
    let columns = [
        ("i32", i32s.finish()),
        ("i64", i64s.finish()),
        ("f64", f64s.finish()),
        ("utf8", strings.finish()),
        ("bool", bools.finish()),
        ("timestamp", timestamps.finish()),
        ("date32", dates.finish()),
        ("list", lists.finish()),
        ("struct", structs.finish()),
    ];
    let mut fields: Vec<(Field, _)> = columns
        .into_iter()
        .map(|(name, column)| {
            let column = column.expect("ten-column builders");
            (Field::new(name, column.data_type().clone(), true), column)
        })
        .collect();
    fields.push((
        dictionary.field("dictionary"),
        dictionary_column.expect("dictionary column"),
    ));
    RecordBatch::from_fields(fields).expect("ten-column batch")
}

/// An IPC file of `batches` batches of `rows` rows each, written by quiver.
pub fn file(batches: usize, rows: usize, options: quiver::ipc::WriterOptions) -> Vec<u8> {
    let first = batch(rows, 0);
    let mut writer = quiver::ipc::FileWriter::new(Vec::new(), first.schema().clone(), options)
        .expect("file writer");
    writer.write(&first).expect("write batch");
    for i in 1..batches {
        writer.write(&batch(rows, i as u64)).expect("write batch");
    }
    writer.finish().expect("finish file");
    writer.into_inner()
}

/// An IPC stream of `batches` batches of `rows` rows each (the batches of [`file`]), written
/// by quiver.
pub fn stream(batches: usize, rows: usize, options: quiver::ipc::WriterOptions) -> Vec<u8> {
    let first = batch(rows, 0);
    let mut writer = quiver::ipc::StreamWriter::new(Vec::new(), first.schema().clone(), options)
        .expect("stream writer");
    writer.write(&first).expect("write batch");
    for i in 1..batches {
        writer.write(&batch(rows, i as u64)).expect("write batch");
    }
    writer.finish().expect("finish stream");
    writer.into_inner()
}
