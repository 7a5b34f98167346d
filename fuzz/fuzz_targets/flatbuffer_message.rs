//! One IPC message: the first byte picks a schema, the next two split the rest into the
//! metadata flatbuffer and the body, and the message is decoded as a reader would.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::datatype::{IntType, TimeUnit, UnionMode};
use quiver::ipc::fuzzing::decode_message;
use quiver::schema::DictionaryEncoding;
use quiver::{DataType, Field, Schema};
use std::sync::{Arc, OnceLock};

fn schemas() -> &'static [Arc<Schema>] {
    static SCHEMAS: OnceLock<Vec<Arc<Schema>>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let f = |name: &str, t: DataType| Field::new(name, t, true);
        let item = |t: DataType| Arc::new(f("item", t));
        let schema = |fields: Vec<Field>| Arc::new(Schema::new(fields));
        vec![
            schema(vec![
                f("i", DataType::Int32),
                f("s", DataType::Utf8),
                f("b", DataType::Boolean),
            ]),
            schema(vec![f("l", DataType::List(item(DataType::Int64)))]),
            schema(vec![f(
                "st",
                DataType::Struct(
                    vec![f("x", DataType::Float64), f("y", DataType::LargeUtf8)].into(),
                ),
            )]),
            schema(vec![
                f("v", DataType::Utf8View),
                f("bv", DataType::BinaryView),
            ]),
            schema(vec![f(
                "u",
                DataType::Union(
                    vec![f("a", DataType::Int8), f("b", DataType::Utf8)].into(),
                    vec![3, 7].into(),
                    UnionMode::Dense,
                ),
            )]),
            schema(vec![f(
                "r",
                DataType::RunEndEncoded(Arc::new([
                    Field::new("run_ends", DataType::Int32, false),
                    f("values", DataType::Utf8),
                ])),
            )]),
            schema(vec![
                f("d", DataType::Utf8).with_dictionary(DictionaryEncoding {
                    id: 0,
                    index_type: IntType {
                        bit_width: 16,
                        signed: true,
                    },
                    ordered: false,
                }),
                f(
                    "t",
                    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                ),
            ]),
            schema(vec![
                f("lv", DataType::ListView(item(DataType::Int16))),
                f(
                    "fsl",
                    DataType::FixedSizeList(item(DataType::Decimal128(10, 2)), 3),
                ),
                f(
                    "m",
                    DataType::Map(
                        Arc::new(Field::new(
                            "entries",
                            DataType::Struct(
                                vec![
                                    Field::new("key", DataType::Utf8, false),
                                    f("value", DataType::Int32),
                                ]
                                .into(),
                            ),
                            false,
                        )),
                        false,
                    ),
                ),
            ]),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let [pick, a, b, rest @ ..] = data else {
        return;
    };
    let all = schemas();
    let schema = &all[usize::from(*pick) % all.len()];
    let split = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
    let (metadata, body) = rest.split_at(split);
    let _ = decode_message(schema, metadata, body);
});
