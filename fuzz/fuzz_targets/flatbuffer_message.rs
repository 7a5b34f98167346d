//! One IPC message: the first byte picks a schema, the next two split the rest into the
//! metadata flatbuffer and the body, and the message is decoded as a reader would.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::schema::Schema;
use quiver::ipc::fuzzing::{decode_message, schemas};
use std::sync::{Arc, OnceLock};

fuzz_target!(|data: &[u8]| {
    let [pick, a, b, rest @ ..] = data else {
        return;
    };
    static SCHEMAS: OnceLock<Vec<Arc<Schema>>> = OnceLock::new();
    let all = SCHEMAS.get_or_init(schemas);
    let schema = &all[usize::from(*pick) % all.len()];
    let split = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
    let (metadata, body) = rest.split_at(split);
    let _ = decode_message(schema, metadata, body);
});
