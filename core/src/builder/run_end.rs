//! [`RunEndBuilder`]: run-end encoded arrays from logical values, equal neighbours merged into
//! one run.
//!
//! It uses, of the crate, the arrays, their bytes, the data types, the schema and the errors;
//! nothing else of `builder`.
//!
//! Each logical value enters with its [`ValueKey`]; a key equal to the previous one lengthens the
//! last run, any other key appends the value to the values child and starts a run. `finish`
//! writes the run ends as `Int16`, `Int32` or `Int64`.

use super::{AppendValue, ArrayBuilder, ValueKey, misuse, remember, remembered};
use crate::array::{ArrayParts, ArrayView};
use crate::bytes::Bytes;
use crate::datatype::DataType;
use crate::error::{FormatError, FormatErrorKind, FormatResult, Limit};
use crate::schema::Field;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// What the last run holds, for merging the next logical value into it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Last {
    /// No run, or one that must not merge (added by `append_run`).
    Nothing,
    /// A run of nulls.
    Null,
    /// A run of the value with this key.
    Key(Vec<u8>),
}

/// Builds a `RunEndEncoded` array: run ends (`Int16`/`Int32`/`Int64`) and one value per run.
///
/// ```
/// use quiver::builder::{AppendValue, ArrayBuilder, RunEndBuilder, StringBuilder};
///
/// let mut runs = RunEndBuilder::new(StringBuilder::new());
/// runs.extend_options([Some("a"), Some("a"), None, None, Some("b")]);
/// let array = runs.finish()?;
/// assert_eq!(array.child(1).unwrap().len(), 3); // "a", null, "b"
/// assert_eq!(array.run_index(4), 2);
/// # Ok::<(), quiver::error::FormatError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RunEndBuilder<V> {
    data_type: DataType,
    values: V,
    ends: Vec<usize>,
    last: Last,
    key: Vec<u8>,
    error: Option<FormatError>,
}

impl<V: ArrayBuilder> RunEndBuilder<V> {
    /// A builder with `Int32` run ends (`run_ends`, not null) and nullable `values`.
    pub fn new(values: V) -> Self {
        let fields = [
            Field::new("run_ends", DataType::Int32, false),
            values.field("values"),
        ];
        Self::with_data_type(DataType::RunEndEncoded(Arc::new(fields)), values)
    }

    /// A builder of `data_type`, a `RunEndEncoded` type whose values field describes `values`
    /// (or `finish` fails).
    pub fn with_data_type(data_type: DataType, values: V) -> Self {
        let mut builder = RunEndBuilder {
            data_type,
            values,
            ends: Vec::new(),
            last: Last::Nothing,
            key: Vec::new(),
            error: None,
        };
        builder.error = builder.run_end_type().is_none().then(|| {
            misuse(
                "run-end builder given a type without Int16/32/64 run ends",
                0,
            )
        });
        builder
    }

    /// This builder with run ends of `run_end_type`: `Int16`, `Int32` or `Int64`.
    #[must_use]
    pub fn with_run_end_type(self, run_end_type: DataType) -> Self {
        let fields = match &self.data_type {
            DataType::RunEndEncoded(pair) => {
                let [run_ends, values] = &**pair;
                [
                    Field::new(run_ends.name(), run_end_type, false),
                    values.clone(),
                ]
            }
            _ => [
                Field::new("run_ends", run_end_type, false),
                self.values.field("values"),
            ],
        };
        Self::with_data_type(DataType::RunEndEncoded(Arc::new(fields)), self.values)
    }

    /// The run ends' type and its largest value, if the type is a run-end type.
    fn run_end_type(&self) -> Option<(DataType, u64)> {
        let DataType::RunEndEncoded(pair) = &self.data_type else {
            return None;
        };
        let [run_ends, _] = &**pair;
        let max = match run_ends.data_type() {
            DataType::Int16 => i16::MAX as u64,
            DataType::Int32 => i32::MAX as u64,
            DataType::Int64 => i64::MAX as u64,
            _ => return None,
        };
        Some((run_ends.data_type().clone(), max))
    }

    /// The values builder: append one value here, then call [`append_run`](Self::append_run).
    pub fn values(&mut self) -> &mut V {
        &mut self.values
    }

    /// Number of runs so far.
    pub fn num_runs(&self) -> usize {
        self.ends.len()
    }

    /// Closes a run of `len` slots over the value last appended to [`values`](Self::values).
    /// The run is not merged with its neighbours; a run of length 0 makes `finish` fail.
    pub fn append_run(&mut self, len: usize) {
        if len == 0 {
            remember(&mut self.error, misuse("run of length 0", self.ends.len()));
        }
        self.push_run(len);
        self.last = Last::Nothing;
    }

    fn push_run(&mut self, len: usize) {
        let end = self.len().saturating_add(len);
        self.ends.push(end);
    }

    fn extend_last(&mut self) {
        if let Some(end) = self.ends.last_mut() {
            *end = end.saturating_add(1);
        }
    }

    /// Appends one logical slot of the value whose identity is `key`: it lengthens the last run
    /// if that holds the same key, and otherwise `append` adds the value (exactly one slot) to
    /// the values builder for a new run.
    pub fn append_with(&mut self, key: &[u8], append: impl FnOnce(&mut V)) {
        if matches!(&self.last, Last::Key(last) if last == key) {
            self.extend_last();
            return;
        }
        let runs = self.values.len();
        append(&mut self.values);
        if self.values.len() != runs + 1 {
            remember(
                &mut self.error,
                misuse("run value not exactly one slot", runs),
            );
        }
        self.push_run(1);
        self.last = Last::Key(key.to_vec());
    }
}

append_by_key!(RunEndBuilder);

impl<V: ArrayBuilder> ArrayBuilder for RunEndBuilder<V> {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// The logical length (the last run end).
    fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// A logical null: lengthens a run of nulls, or starts one with a null value.
    fn append_null(&mut self) {
        if self.last == Last::Null {
            self.extend_last();
        } else {
            self.values.append_null();
            self.push_run(1);
            self.last = Last::Null;
        }
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let len = self.len();
        let ends = core::mem::take(&mut self.ends);
        self.last = Last::Nothing;
        let error = self.error.take();
        let values = self.values.finish();
        remembered(error)?;
        let (run_end_type, max) = self
            .run_end_type()
            .ok_or_else(|| misuse("run-end builder given a non-run-end type", 0))?;
        if len as u64 > max {
            return Err(FormatErrorKind::LimitExceeded {
                what: Limit::RunEnd,
                requested: len as u64,
                limit: max,
            }
            .into());
        }
        let width = run_end_type.byte_width().unwrap_or(8);
        let mut bytes = Vec::with_capacity(ends.len() * width);
        for end in &ends {
            let end = (*end as u64).to_le_bytes();
            bytes.extend_from_slice(end.get(..width).unwrap_or_default());
        }
        let run_ends = ArrayView::try_new(ArrayParts {
            data_type: Some(run_end_type),
            len: ends.len(),
            buffers: vec![Bytes::from_vec(bytes)],
            ..ArrayParts::default()
        })?;
        ArrayView::try_new(ArrayParts {
            data_type: Some(self.data_type.clone()),
            len,
            children: vec![run_ends, values?],
            ..ArrayParts::default()
        })
    }

    as_any!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{PrimitiveBuilder, StringBuilder};

    #[test]
    fn equal_neighbours_merge_for_every_run_end_type() {
        let input = [
            Some(1),
            Some(1),
            Some(1),
            None,
            None,
            Some(2),
            Some(1),
            Some(1),
        ];
        for run_end_type in [DataType::Int16, DataType::Int32, DataType::Int64] {
            let mut builder =
                RunEndBuilder::new(PrimitiveBuilder::<i64>::new()).with_run_end_type(run_end_type);
            builder.extend_options(input);
            assert_eq!((builder.len(), builder.num_runs()), (8, 4));
            let array = builder.finish().unwrap();
            let (ends, values) = (array.child(0).unwrap(), array.child(1).unwrap());
            let ends: Vec<i64> = (0..ends.len()).map(|i| ends.integer(i)).collect();
            assert_eq!(ends, [3, 5, 6, 8]);
            for (i, expected) in input.iter().enumerate() {
                let run = array.run_index(i);
                assert_eq!(
                    values.is_valid(run).then(|| values.value::<i64>(run)),
                    *expected
                );
            }
            let sliced = array.slice(4, 3).unwrap();
            assert_eq!(sliced.run_index(1), 2);
        }
    }

    #[test]
    fn explicit_runs_and_limits() {
        let mut builder = RunEndBuilder::new(StringBuilder::new());
        builder.values().append_value("x");
        builder.append_run(3);
        builder.append_value("x");
        let array = builder.finish().unwrap();
        assert_eq!((array.len(), array.child(1).unwrap().len()), (4, 2));

        builder.values().append_value("y");
        builder.append_run(0);
        assert!(builder.finish().is_err());

        let mut short =
            RunEndBuilder::new(PrimitiveBuilder::<u8>::new()).with_run_end_type(DataType::Int16);
        short.values().append_value(1);
        short.append_run(40_000);
        assert!(matches!(
            short.finish().unwrap_err().kind,
            FormatErrorKind::LimitExceeded { .. }
        ));
        let bad =
            RunEndBuilder::new(PrimitiveBuilder::<u8>::new()).with_run_end_type(DataType::UInt8);
        assert!(RunEndBuilder::finish(&mut { bad }).is_err());
        let mut empty = RunEndBuilder::new(PrimitiveBuilder::<u8>::new());
        assert!(empty.finish().unwrap().is_empty());
    }
}
