//! `quiver json`: batches from the reader into a [`ParallelWriter`], with `--columns`,
//! `--batches` and `--limit` applied on the way.
//!
//! A file is read with [`FileReader::scan`] and a readahead window of about one batch (the
//! largest block), whatever the source, so `--stats` counts the same requests with or without
//! `--mmap`. Positioned reads land in [`Recycling`] buffers, so memory stays at about one
//! batch plus the writer's chunk buffers however large the file; each window is read in parts
//! on every thread ([`Concurrent`]). A stream is read message by message. Reading stops as
//! soon as the batch range or the row limit is reached.

use crate::input::{self, CountingRead, Input, ReadStats};
use crate::output::{self, Output};
use crate::remote::Remote;
use crate::{Binary, Failure, Format, JsonArgs};
use indicatif::{ProgressBar, ProgressStyle};
use quiver::array::RecordBatch;
use quiver::format::Block;
use quiver::ipc::{FileReader, Projection, ReaderOptions, ScanOptions};
use quiver::ipc::{ProjectionError, ProjectionErrorKind};
use quiver::json::{BinaryFormat, EncoderOptions, JsonError, JsonFormat};
use quiver::schema::Schema;
use quiver::source::{Counting, RandomAccess};
use quiver_std::{Concurrent, JsonWriteError, ParallelWriter, Recycling};
use std::fmt::Display;
use std::io::{IsTerminal, Read, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// Bytes per positioned read of a local file: a window is read in parts of this size, in
/// parallel, so that the copy between batches does not leave all but one core waiting.
const LOCAL_PART: usize = 1 << 20;

/// Runs `quiver json`.
pub fn run(args: &JsonArgs) -> Result<(), Failure> {
    if let Some(path) = &args.output {
        output::refuse_input(path, &args.input)?;
    }
    let whole = args.columns.is_none() && args.batches.is_none() && args.limit.is_none();
    let input = input::open(&args.input, args.mmap, whole)?;
    let output = match &args.output {
        Some(path) => Output::file(path)?,
        None => Output::stdout()?,
    };
    let progress = (output.is_file() && std::io::stderr().is_terminal()).then(ProgressBar::hidden);
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        usize::from,
    );
    let writer =
        ParallelWriter::new(output, format(args), encoder_options(args)).with_threads(threads);
    let mut sink = Sink {
        input: &args.input,
        writer,
        rows_left: args.limit.unwrap_or(u64::MAX),
        batches: 0,
        progress,
    };
    let batches = args.batches.clone().unwrap_or(0..usize::MAX);
    let stats = match input {
        Input::Positioned(source) => {
            // Each window's block is copied out of the page cache in parts on every thread.
            let parts = Concurrent::with_in_flight(source, threads).with_part_size(LOCAL_PART);
            convert_file(args, Recycling::new(parts), batches, &mut sink)?
        }
        Input::Mapped(source) => convert_file(args, source, batches, &mut sink)?,
        Input::InMemory(bytes) => convert_file(args, bytes, batches, &mut sink)?,
        Input::Stream(reader) => convert_stream(args, reader, batches, &mut sink)?,
        Input::Remote(remote) => match remote.front_to_back()? {
            Some(stream) => convert_remote_stream(args, &remote, stream, batches, &mut sink)?,
            None => convert_remote(args, &remote, batches, &mut sink)?,
        },
    };
    if let Some(bar) = &sink.progress {
        bar.finish_and_clear();
    }
    let Sink {
        mut writer,
        batches,
        ..
    } = sink;
    writer.finish().map_err(|e| writer.inner().failed(e))?;
    let mut bytes_written = writer.bytes_written();
    if args.format == Format::Array {
        // The array (arrow-json's document, which ends at `]`) ends its line, like every
        // line-oriented tool's output.
        let out = writer.inner_mut();
        out.write_all(b"\n")
            .and_then(|()| out.flush())
            .map_err(|e| writer.inner().failed(e))?;
        bytes_written += 1;
    }
    let rows = writer.rows();
    writer.into_inner().commit()?;
    if args.stats {
        eprintln!(
            "reads={} round_trips={} bytes_read={} batches={batches} rows={rows} \
             bytes_written={bytes_written}{}",
            stats.reads,
            stats.round_trips,
            stats.bytes_read,
            stats
                .again
                .map_or(String::new(), |(hedges, retries)| format!(
                    " hedges={hedges} retries={retries}"
                )),
        );
    }
    Ok(())
}

fn format(args: &JsonArgs) -> JsonFormat {
    match args.format {
        Format::Ndjson => JsonFormat::LineDelimited,
        Format::Array => JsonFormat::JsonArray,
    }
}

fn encoder_options(args: &JsonArgs) -> EncoderOptions {
    EncoderOptions::default()
        .with_omit_nulls(args.omit_nulls)
        .with_extensions_as_storage(args.extensions_as_storage)
        .with_large_ints_as_strings(args.large_ints_as_strings)
        .with_non_finite_as_strings(args.non_finite_as_strings)
        .with_timestamps_as_epoch(args.timestamps_as_epoch)
        .with_timestamps_utc(args.timestamps_utc)
        .with_time_zones(Some(quiver_std::time_zones()))
        .with_decimals_as_strings(args.decimals_as_strings)
        .with_binary(match args.binary {
            Binary::Hex => BinaryFormat::Hex,
            Binary::Base64 => BinaryFormat::Base64,
        })
}

/// The readahead window for local files: the largest record batch block, so that each window
/// holds about one batch (at least one, and several only when they are small).
pub fn one_batch(blocks: &[Block]) -> u64 {
    blocks
        .iter()
        .map(|b| (b.meta_data_length as u64).saturating_add(b.body_length as u64))
        .max()
        .unwrap_or(0)
}

/// Converts an IPC file read from `source`.
fn convert_file<S>(
    args: &JsonArgs,
    source: S,
    batches: Range<usize>,
    sink: &mut Sink<'_>,
) -> Result<ReadStats, Failure>
where
    S: RandomAccess,
    S::Error: Display,
{
    let source = Counting::new(source);
    let mut reader = FileReader::open(&source, ReaderOptions::default())
        .map_err(|e| Failure::about(&args.input, e))?;
    // Errors name their field by the file's schema.
    let schema = Arc::clone(reader.schema());
    let failed =
        |e: quiver::error::Error<S::Error>| Failure::about(&args.input, e.display_with(&schema));
    let (projection, first) =
        selection(args, reader.schema(), reader.num_batches(), &batches, sink)?;
    if let Some(projection) = projection {
        reader.set_projection(projection);
    }
    let window = one_batch(reader.record_batch_blocks());
    let scan_options = ScanOptions::default().with_readahead(window);
    if sink.wants_more() {
        for (batch, index) in reader.scan(batches, scan_options).zip(first..) {
            sink.take(index, &batch.map_err(failed)?)?;
            if !sink.wants_more() {
                break;
            }
        }
    }
    Ok(ReadStats::of(&source))
}

/// What `--columns` and `--batches` ask of a file with `schema` and `count` batches: the
/// projection, if any, and the first batch read; shows the progress bar. A range starting past
/// the last batch is an error.
fn selection(
    args: &JsonArgs,
    schema: &Schema,
    count: usize,
    batches: &Range<usize>,
    sink: &Sink<'_>,
) -> Result<(Option<Projection>, usize), Failure> {
    if args.batches.is_some() && batches.start >= count {
        return Err(Failure::about(
            &args.input,
            past_the_end(batches, "file", count),
        ));
    }
    let projection = projection(args, schema)?;
    let first = batches.start.min(count);
    if let Some(bar) = &sink.progress {
        let end = batches.end.min(count);
        show(bar, Some(end.saturating_sub(first) as u64));
    }
    Ok((projection, first))
}

/// Converts an IPC file named by URL: the reader's windows arrive on the runtime's threads,
/// the next one in flight while this thread encodes the batches of the current one.
///
/// Under `--limit` the file is read in selections of the batches the rows still wanted
/// need, at the rows per batch seen so far (one batch first): a peek fetches the footer and
/// the blocks it uses, not a window of read-ahead.
fn convert_remote(
    args: &JsonArgs,
    remote: &Remote,
    batches: Range<usize>,
    sink: &mut Sink<'_>,
) -> Result<ReadStats, Failure> {
    let mut reader = remote.file_reader()?;
    let schema = Arc::clone(reader.schema());
    let (projection, first) =
        selection(args, reader.schema(), reader.num_batches(), &batches, sink)?;
    if let Some(projection) = projection {
        reader.set_projection(projection);
    }
    let end = batches.end.min(reader.num_batches());
    let options = remote.source.scan_options();
    remote.runtime.block_on(async {
        let mut index = first;
        // Rows per batch seen so far, at least 1; none seen yet: `None`.
        let mut rows_per_batch: Option<u64> = None;
        while sink.wants_more() && index < end {
            let selected = match (args.limit, rows_per_batch) {
                (None, _) => index..end,
                (Some(_), None) => index..index + 1,
                (Some(_), Some(rows)) => {
                    let wanted = sink.rows_left.div_ceil(rows.max(1));
                    let wanted = usize::try_from(wanted).unwrap_or(usize::MAX).max(1);
                    index..end.min(index.saturating_add(wanted))
                }
            };
            reader.select(selected.clone(), options.clone());
            let (mut rows, mut read) = (0u64, 0u64);
            while sink.wants_more() {
                let Some(batch) = reader.next_batch().await else {
                    break;
                };
                let batch = batch.map_err(|e| remote.failed(e, Some(&schema)))?;
                rows += batch.num_rows() as u64;
                read += 1;
                sink.take(index, &batch)?;
                fetched(sink, remote);
                index += 1;
            }
            if read == 0 {
                break;
            }
            rows_per_batch = Some((rows / read).max(1));
        }
        Ok::<_, Failure>(())
    })?;
    Ok(remote.stats())
}

/// Converts an object named by URL front to back: [`quiver_object_store::ObjectBatches`]
/// over one streaming GET, whose body keeps arriving on the runtime's threads while this thread
/// encodes.
fn convert_remote_stream(
    args: &JsonArgs,
    remote: &Remote,
    mut stream: quiver_object_store::ObjectBatches,
    batches: Range<usize>,
    sink: &mut Sink<'_>,
) -> Result<ReadStats, Failure> {
    let schema = stream.schema().clone();
    if let Some(projection) = projection(args, stream.schema())? {
        stream.set_projection(projection);
    }
    if let Some(bar) = &sink.progress {
        show(bar, None);
    }
    remote.runtime.block_on(async {
        // Reading stops once the range or the limit is done: the rest stays unread.
        let mut index = 0;
        while sink.wants_more() && index < batches.end {
            let batch = stream.next_batch().await;
            let batch = batch.map_err(|e| remote.failed(e, Some(&schema)))?;
            if !take_from_stream(args, &batches, sink, index, batch)? {
                break;
            }
            fetched(sink, remote);
            index += 1;
        }
        Ok(())
    })?;
    Ok(remote.stats())
}

/// Shows the rows written and the bytes of `remote` fetched so far on the progress bar.
fn fetched(sink: &Sink<'_>, remote: &Remote) {
    if let Some(bar) = &sink.progress {
        let fetched = remote.source.bytes_received();
        bar.set_message(format!(
            "{} rows, {:.1} MiB fetched",
            sink.writer.rows(),
            fetched as f64 / (1024.0 * 1024.0)
        ));
    }
}

/// Converts an IPC stream.
fn convert_stream(
    args: &JsonArgs,
    reader: CountingRead<Box<dyn Read>>,
    batches: Range<usize>,
    sink: &mut Sink<'_>,
) -> Result<ReadStats, Failure> {
    let mut stream = input::stream_reader(&args.input, reader)?;
    let schema = Arc::clone(stream.schema());
    let failed = |e: quiver::error::Error<std::io::Error>| {
        Failure::about(&args.input, e.display_with(&schema))
    };
    if args.mmap {
        return Err(Failure::Usage(format!(
            "{}: --mmap does not apply to a stream (it maps files in the file format)",
            args.input.display()
        )));
    }
    if let Some(projection) = projection(args, stream.schema())? {
        stream.set_projection(projection);
    }
    if let Some(bar) = &sink.progress {
        show(bar, None);
    }
    // Reading stops once the range or the limit is done: the rest of the stream stays unread.
    let mut index = 0;
    while sink.wants_more() && index < batches.end {
        let batch = stream.next_batch().map_err(failed)?;
        if !take_from_stream(args, &batches, sink, index, batch)? {
            break;
        }
        index += 1;
    }
    Ok(stream.inner().inner().stats())
}

/// One step of a stream's loop, local or remote: batch `index` (`None` at the stream's end)
/// goes to the sink when `batches` selects it. Whether the stream goes on; a `--batches` range
/// that starts past the end is an error.
fn take_from_stream(
    args: &JsonArgs,
    batches: &Range<usize>,
    sink: &mut Sink<'_>,
    index: usize,
    batch: Option<RecordBatch<'_>>,
) -> Result<bool, Failure> {
    let Some(batch) = batch else {
        if args.batches.is_some() && index <= batches.start {
            return Err(Failure::about(
                &args.input,
                past_the_end(batches, "stream", index),
            ));
        }
        return Ok(false);
    };
    if index >= batches.start {
        sink.take(index, &batch)?;
    }
    Ok(true)
}

/// The projection `--columns` asks for over `schema`, if any.
fn projection(args: &JsonArgs, schema: &Schema) -> Result<Option<Projection>, Failure> {
    let Some(columns) = &args.columns else {
        return Ok(None);
    };
    Projection::from_paths(schema, &columns.0)
        .map(Some)
        .map_err(|e| Failure::about(&args.input, unknown_column(&e, schema)))
}

/// A projection error; for a name no field has, followed by the names that exist there (as
/// `--columns` takes them) and, when a name is one with a `.` or `,` written without its
/// backslash, how to write it.
fn unknown_column(error: &ProjectionError, schema: &Schema) -> String {
    if error.kind != ProjectionErrorKind::UnknownField {
        return error.to_string();
    }
    const SHOWN: usize = 24;
    let candidates = error.candidates(schema);
    let escaped = |name: &str| {
        let mut text = String::new();
        for c in name.chars() {
            if matches!(c, '\\' | '.' | ',') {
                text.push('\\');
            }
            text.push(c);
        }
        text
    };
    let mut names: Vec<String> = candidates
        .iter()
        .take(SHOWN)
        .map(|f| escaped(f.name()))
        .collect();
    if candidates.len() > SHOWN {
        names.push(format!("… {} more", candidates.len() - SHOWN));
    }
    let mut message = format!("{error}; the fields there are: {}", names.join(", "));
    // A name with a `.` or `,` typed without its backslashes: `a.b` (one path, two names) or
    // `a,b` (two entries, of which `a` failed).
    let typed = error.path.replace('\\', "");
    let meant = schema
        .fields()
        .iter()
        .chain(candidates.iter().copied())
        .find(|f| {
            let name = f.name();
            name.contains(['.', ',']) && (name == typed || name.split(',').next() == Some(&*typed))
        });
    if let Some(field) = meant {
        let name = field.name();
        message += &format!(" (`{name}` is one field: write it `{}`)", escaped(name));
    }
    message
}

/// The error for a `--batches` range that starts past the last of `count` batches.
fn past_the_end(batches: &Range<usize>, input: &str, count: usize) -> String {
    let range = match batches.end {
        usize::MAX => format!("{}..", batches.start),
        end => format!("{}..{end}", batches.start),
    };
    let plural = if count == 1 { "" } else { "es" };
    format!(
        "--batches {range} starts past the last batch: the {input} has {count} record batch{plural}"
    )
}

/// Where batches go: the writer, behind the row limit, with the progress bar.
struct Sink<'a> {
    input: &'a Path,
    writer: ParallelWriter<Output>,
    rows_left: u64,
    batches: u64,
    progress: Option<ProgressBar>,
}

impl Sink<'_> {
    /// Whether more rows are wanted (`--limit` not reached yet).
    fn wants_more(&self) -> bool {
        self.rows_left > 0
    }

    /// Writes batch `index`, cut to the rows still wanted.
    fn take(&mut self, index: usize, batch: &RecordBatch<'_>) -> Result<(), Failure> {
        let rows = batch.num_rows() as u64;
        let result = if rows > self.rows_left {
            let kept = self.rows_left as usize;
            let head = batch
                .slice(0, kept)
                .map_err(|e| Failure::about(self.input, e))?;
            self.writer.write(&head)
        } else {
            self.writer.write(batch)
        };
        result.map_err(|e| match e {
            JsonWriteError::Json(e) => self.json_failure(index, batch, &e),
            JsonWriteError::Io(e) => self.writer.inner().failed(e),
            other => Failure::about(self.input, other),
        })?;
        self.rows_left -= rows.min(self.rows_left);
        self.batches += 1;
        if let Some(bar) = &self.progress {
            bar.set_message(format!("{} rows", self.writer.rows()));
            bar.inc(1);
        }
        Ok(())
    }

    /// An encoder's refusal, with the batch and the field it concerns.
    fn json_failure(&self, index: usize, batch: &RecordBatch<'_>, error: &JsonError) -> Failure {
        let column = match error {
            JsonError::TooDeep { column, .. }
            | JsonError::NullMapKey { column }
            | JsonError::InvalidTimeZone { column }
            | JsonError::UnknownTimeZone { column }
            | JsonError::TooManyTimeZones { column, .. } => Some(*column),
            _ => None,
        };
        let zone = matches!(
            error,
            JsonError::InvalidTimeZone { .. } | JsonError::UnknownTimeZone { .. }
        );
        let field = column
            .and_then(|c| batch.field(c))
            .map(|f| match zone {
                // The type names the zone.
                true => format!(" (field `{}`: {})", f.name(), f.data_type()),
                false => format!(" (field `{}`)", f.name()),
            })
            .unwrap_or_default();
        let hint = match zone {
            true => {
                "; --timestamps-utc writes such timestamps as their UTC instant, which needs no zone"
            }
            false => "",
        };
        Failure::Error(format!(
            "{}: batch {index}: {error}{field}{hint}",
            self.input.display()
        ))
    }
}

/// Turns a hidden bar into a visible one: batches of a file (`total`), or a stream's spinner.
fn show(bar: &ProgressBar, total: Option<u64>) {
    let template = match total {
        Some(total) => {
            bar.set_length(total);
            "{elapsed_precise} [{bar:32}] {pos}/{len} batches, {msg}"
        }
        None => "{elapsed_precise} {spinner} {pos} batches, {msg}",
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
}
