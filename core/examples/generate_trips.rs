//! Writes the bundled example file, `examples/data/trips.arrow`: 3,000 bike trips with nested,
//! dictionary-encoded, timestamp and null values, from a fixed seed (the bytes never change).
//!
//! `cargo run -p quiver --example generate_trips`

use quiver::array::RecordBatch;
use quiver::builder::{
    AppendValue, ArrayBuilder, BooleanBuilder, DictionaryBuilder, ListBuilder, PrimitiveBuilder,
    StringBuilder, StructBuilder,
};
use quiver::datatype::{DataType, TimeUnit};
use quiver::ipc::{FileWriter, WriterOptions};
use quiver::schema::Field;
use std::error::Error;
use std::path::PathBuf;

const CITIES: [&str; 6] = [
    "Lisbon",
    "Montréal",
    "Osaka",
    "Nairobi",
    "Oslo",
    "Valparaíso",
];
const RIDERS: [&str; 8] = [
    "Ada", "Brahim", "Chen", "Dagny", "Émile", "Farah", "Goran", "Hina",
];
const STOPS: [&str; 5] = ["bakery", "library", "harbour", "market", "park"];
const ROWS: usize = 3_000;
const BATCH: usize = 1_000;

fn main() -> Result<(), Box<dyn Error>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/data/trips.arrow");
    let mut seed = 0x5EED_u64;
    let mut batches = Vec::new();
    for start in (0..ROWS).step_by(BATCH) {
        batches.push(trips(start, BATCH, &mut seed)?);
    }
    let schema = batches[0].schema().clone();
    let mut writer = FileWriter::new(Vec::new(), schema, WriterOptions::default())?;
    for batch in &batches {
        writer.write(batch)?;
    }
    writer.finish()?;
    std::fs::write(&path, writer.into_inner())?;
    println!(
        "wrote {} ({ROWS} rows in {} batches)",
        path.display(),
        batches.len()
    );
    Ok(())
}

fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// Rows `start..start + rows` of the table.
fn trips(
    start: usize,
    rows: usize,
    seed: &mut u64,
) -> Result<RecordBatch<'static>, Box<dyn Error>> {
    let mut id = PrimitiveBuilder::<i64>::new();
    let mut city = DictionaryBuilder::new(StringBuilder::new()).with_id(0);
    let utc = DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
    let mut started = PrimitiveBuilder::<i64>::with_data_type(utc);
    let mut minutes = PrimitiveBuilder::<i32>::new();
    let mut km = PrimitiveBuilder::<f64>::new();
    let mut rider = StructBuilder::new()
        .with_child("name", StringBuilder::new())
        .with_child("member", BooleanBuilder::new());
    let mut stops = ListBuilder::new(StringBuilder::new());
    // Every batch lists the cities in one order, so the file holds one dictionary.
    for name in CITIES {
        city.append_value(name);
    }
    for row in start..start + rows {
        let r = next(seed);
        id.append_value(row as i64 + 1);
        city.append_value(CITIES[(r % 6) as usize]);
        // 2025-03-01T00:00:00Z plus up to ~30 days, to the second.
        started.append_value(1_740_787_200_000 + ((r >> 8) % 2_592_000) as i64 * 1000);
        minutes.append_option((!r.is_multiple_of(17)).then_some(3 + ((r >> 20) % 90) as i32));
        let distance = ((r >> 28) % 25_000) as f64 / 1000.0;
        km.append_option((!r.is_multiple_of(13)).then_some(distance));
        if r.is_multiple_of(29) {
            rider.append_null();
        } else {
            if let Some(name) = rider.field_builder::<StringBuilder>(0) {
                name.append_value(RIDERS[((r >> 36) % 8) as usize]);
            }
            if let Some(member) = rider.field_builder::<BooleanBuilder>(1) {
                member.append_value((r >> 40) & 1 == 1);
            }
            rider.append();
        }
        for k in 0..(r >> 44) % 3 {
            stops
                .values()
                .append_value(STOPS[((r >> (48 + 2 * k)) % 5) as usize]);
        }
        stops.append();
    }
    let cities = city.finish()?.slice(CITIES.len(), rows)?;
    Ok(RecordBatch::from_fields([
        (Field::new("trip_id", DataType::Int64, false), id.finish()?),
        (city.field("city"), cities),
        (
            Field::new("started_at", started.data_type().clone(), false),
            started.finish()?,
        ),
        (
            Field::new("minutes", DataType::Int32, true),
            minutes.finish()?,
        ),
        (
            Field::new("distance_km", DataType::Float64, true),
            km.finish()?,
        ),
        (
            Field::new("rider", rider.data_type().clone(), true),
            rider.finish()?,
        ),
        (
            Field::new("stops", stops.data_type().clone(), false),
            stops.finish()?,
        ),
    ])?)
}
