//! The keyword arguments of `to_json`, `write_json`, `iter_json` and `read`: the CLI's options,
//! checked one by one; a bad value is a `ValueError` naming the argument.
//!
//! It uses `source` and `error`.

use crate::error::Failure;
use crate::source::Selection;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyRange, PyString, PyTuple};
use quiver::json::{BinaryFormat, EncoderOptions, JsonFormat};

/// What the JSON functions were asked for.
#[derive(Debug, Clone)]
pub struct JsonOptions {
    /// NDJSON or one array.
    pub format: JsonFormat,
    /// The encoder's value conventions.
    pub encoder: EncoderOptions,
    /// Threads that encode (the CLI's `--threads`; default: the cores).
    pub threads: usize,
}

/// The JSON options and the selection in `kwargs`; any other key is a `TypeError` naming it.
pub fn json_options(
    function: &str,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<(JsonOptions, Selection)> {
    let mut encoder = EncoderOptions::default().with_time_zones(Some(quiver_std::time_zones()));
    let mut format = JsonFormat::LineDelimited;
    let mut threads = std::thread::available_parallelism().map_or(1, usize::from);
    let mut selection = Selection::default();
    for (key, value) in kwargs.into_iter().flatten() {
        let key: String = key.extract()?;
        let flag = || flag(&key, &value);
        match key.as_str() {
            "format" => {
                format = match choice(&key, &value, &["ndjson", "array"])? {
                    "array" => JsonFormat::JsonArray,
                    _ => JsonFormat::LineDelimited,
                }
            }
            "omit_nulls" => encoder = encoder.with_omit_nulls(flag()?),
            "extensions_as_storage" => encoder = encoder.with_extensions_as_storage(flag()?),
            "large_ints_as_strings" => encoder = encoder.with_large_ints_as_strings(flag()?),
            "non_finite_as_strings" => encoder = encoder.with_non_finite_as_strings(flag()?),
            "timestamps_as_epoch" => encoder = encoder.with_timestamps_as_epoch(flag()?),
            "timestamps_utc" => encoder = encoder.with_timestamps_utc(flag()?),
            "decimals_as_strings" => encoder = encoder.with_decimals_as_strings(flag()?),
            "binary" => {
                encoder = encoder.with_binary(match choice(&key, &value, &["hex", "base64"])? {
                    "base64" => BinaryFormat::Base64,
                    _ => BinaryFormat::Hex,
                })
            }
            "threads" if value.is_none() => {}
            "threads" => {
                threads = count(&key, &value)?;
                if threads == 0 {
                    return Err(bad(&key, "at least 1", &value));
                }
            }
            _ => selection_option(function, &key, &value, &mut selection)?,
        }
    }
    Ok((
        JsonOptions {
            format,
            encoder,
            threads,
        },
        selection,
    ))
}

/// Reads `columns`, `batches` or `limit` into `selection`; any other key is a `TypeError`.
pub fn selection_option(
    function: &str,
    key: &str,
    value: &Bound<'_, PyAny>,
    selection: &mut Selection,
) -> PyResult<()> {
    match key {
        "columns" if value.is_none() => selection.columns = None,
        "columns" => {
            if value.is_instance_of::<PyString>() {
                return Err(bad(key, "a list of column paths, not one string", value));
            }
            let paths: Vec<String> = value
                .try_iter()
                .and_then(|items| items.map(|i| i?.extract::<String>()).collect())
                .map_err(|_| bad(key, "a list of column paths (str)", value))?;
            selection.columns = Some(paths);
        }
        "batches" if value.is_none() => selection.batches = None,
        "batches" => selection.batches = Some(batches(key, value)?),
        "limit" if value.is_none() => selection.limit = None,
        "limit" => selection.limit = Some(count(key, value)? as u64),
        _ => {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "{function}() got an unexpected keyword argument '{key}'"
            )));
        }
    }
    Ok(())
}

/// A `ValueError` saying that argument `key` must be `expected`, and what it was.
fn bad(key: &str, expected: &str, value: &Bound<'_, PyAny>) -> PyErr {
    let shown = value
        .repr()
        .map_or_else(|_| "?".to_owned(), |r| r.to_string());
    Failure::Value(format!("{key}: expected {expected}, got {shown}")).into()
}

/// A `bool` argument (`True`/`False` only).
fn flag(key: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    match value.cast::<pyo3::types::PyBool>() {
        Ok(b) => Ok(b.is_true()),
        Err(_) => Err(bad(key, "True or False", value)),
    }
}

/// One of `choices` (a `str`).
fn choice<'c>(key: &str, value: &Bound<'_, PyAny>, choices: &[&'c str]) -> PyResult<&'c str> {
    let text: Option<String> = value.extract().ok();
    let expected = choices
        .iter()
        .map(|c| format!("{c:?}"))
        .collect::<Vec<_>>()
        .join(" or ");
    text.and_then(|t| choices.iter().find(|c| **c == t).copied())
        .ok_or_else(|| bad(key, &expected, value))
}

/// A non-negative `int` (not a `bool`).
fn count(key: &str, value: &Bound<'_, PyAny>) -> PyResult<usize> {
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad(key, "a non-negative int", value));
    }
    value
        .extract::<usize>()
        .map_err(|_| bad(key, "a non-negative int", value))
}

/// A batch range: `N` (that batch), `range(start, stop)` or `(start, stop)` with `None` for
/// an open end.
fn batches(key: &str, value: &Bound<'_, PyAny>) -> PyResult<std::ops::Range<usize>> {
    let expected = "an int, range(start, stop) or (start, stop)";
    if let Ok(range) = value.cast::<PyRange>() {
        let (start, stop, step): (isize, isize, isize) = (
            range.getattr("start")?.extract()?,
            range.getattr("stop")?.extract()?,
            range.getattr("step")?.extract()?,
        );
        return match (usize::try_from(start), usize::try_from(stop), step) {
            (Ok(start), Ok(stop), 1) if start < stop => Ok(start..stop),
            _ => Err(bad(key, "a non-empty range of step 1", value)),
        };
    }
    if let Ok(pair) = value.cast::<PyTuple>() {
        let end = |i: usize, default: usize| -> PyResult<usize> {
            let item = pair.get_item(i)?;
            match item.is_none() {
                true => Ok(default),
                false => count(key, &item).map_err(|_| bad(key, expected, value)),
            }
        };
        if pair.len() == 2 {
            let (start, stop) = (end(0, 0)?, end(1, usize::MAX)?);
            if start < stop {
                return Ok(start..stop);
            }
        }
        return Err(bad(key, expected, value));
    }
    let one = count(key, value).map_err(|_| bad(key, expected, value))?;
    Ok(one..one.saturating_add(1))
}
