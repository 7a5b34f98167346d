//! Appending arrays (how delta dictionaries grow): for random arrays of every type, nested and
//! sliced, the joined array holds the first one's values then the second one's.

use proptest::prelude::*;
use quiver::ipc::fuzzing::concat;
use quiver_tests::arbitrary::{self, Options};
use std::sync::Arc;

fn options() -> Options {
    // Nested dictionary-encoded values only join when both sides share one dictionary, which
    // independently generated arrays never do; the shared case has its own test in core.
    Options {
        dictionaries: false,
        ..Options::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(quiver_tests::proptest_cases(128)))]

    #[test]
    fn joined_arrays_hold_both_sides_values(
        (schema, a, b) in arbitrary::schema(options()).prop_flat_map(|schema| {
            let schema = Arc::new(schema);
            (
                Just(Arc::clone(&schema)),
                arbitrary::batch(Arc::clone(&schema), options()),
                arbitrary::batch(schema, options()),
            )
        })
    ) {
        for (i, field) in schema.fields().iter().enumerate() {
            let (x, y) = (&a.batch.columns()[i], &b.batch.columns()[i]);
            let joined = concat(x, y).map_err(|e| TestCaseError::fail(format!("{field:?}: {e}")))?;
            let mut want = arbitrary::column_values(x);
            want.extend(arbitrary::column_values(y));
            prop_assert_eq!(arbitrary::column_values(&joined), want, "{:?}", field);
        }
    }
}
