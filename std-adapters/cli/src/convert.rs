//! `quiver json`: batches from the reader into a [`ParallelWriter`], with `--columns`,
//! `--batches` and `--limit` applied on the way ([`Selected`]): one loop ([`convert`]) over a
//! source of batches ([`Batches`]), whatever the input.
//!
//! It uses `batches`, `input`, `inputs`, `many`, `output` and `stats`: the top of the crate, with
//! `schema`.
//!
//! A file is read with [`FileReader::scan`] and a readahead window of about one batch (the
//! largest block), whatever the source, so `--stats` counts the same requests with or without
//! `--mmap`. Positioned reads land in [`Recycling`] buffers, so memory stays at about one
//! batch plus the writer's chunk buffers however large the file; each window is read in parts
//! on every thread ([`Concurrent`]). A stream is read message by message. Reading stops as
//! soon as the batch range or the row limit is reached.

use crate::batches::{self, LocalFile, Stream};
use crate::input::{self, Input};
use crate::inputs;
use crate::many::Run;
use crate::output::{self, Output};
use crate::stats::{Cost, ReadStats};
use crate::{Binary, Failure, Format, JsonArgs};
use indicatif::{ProgressBar, ProgressStyle};
use quiver::array::RecordBatch;
use quiver::ipc::{FileReader, Projection, ReaderOptions};
use quiver::ipc::{ProjectionError, ProjectionErrorKind};
use quiver::json::{BinaryFormat, EncoderOptions, JsonError, JsonFormat};
use quiver::schema::Schema;
use quiver::source::{Counting, RandomAccess};
use quiver_object_store::{BlockingBatches, Reading};
use quiver_std::{Batches, Concurrent, JsonWriteError, ParallelWriter, Recycling, Selected};
use std::fmt::Display;
use std::io::{IsTerminal, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes per positioned read of a local file: a window is read in parts of this size, in
/// parallel, so that the copy between batches does not leave all but one core waiting.
const LOCAL_PART: usize = 1 << 20;

/// Runs `quiver json`.
pub fn run(args: &JsonArgs) -> Result<(), Failure> {
    let names = inputs::expand(&args.inputs, args.skip_empty)?;
    if let Some(path) = &args.output {
        for (name, _) in &names {
            output::refuse_input(path, name)?;
        }
    }
    let reading = Reading::of(args.columns.is_none(), args.batches.as_ref(), args.limit);
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
    let files = names.len();
    let mut sink = Destination {
        input: PathBuf::new(),
        writer,
        rows_left: args.limit.unwrap_or(u64::MAX),
        batches: 0,
        progress,
        run: Run::new(args, files),
    };
    if let (Some(bar), true) = (&sink.progress, files > 1) {
        show_files(bar, files as u64);
    }
    let batches = args.batches.clone().unwrap_or(0..usize::MAX);
    let mut stats = ReadStats::default();
    let mut ahead = inputs::Ahead::new(names, args.mmap, reading);
    let mut kind = "file";
    let mut opened = 0usize;
    let exhausted = loop {
        // `--limit` and `--batches` stop the opening of further files (the first is always
        // opened, so that a name that cannot be read is an error even then).
        if opened > 0 && !(sink.wants_more() && sink.run.seen < batches.end) {
            break false;
        }
        let Some((name, input)) = ahead.next_input() else {
            break true;
        };
        opened += 1;
        sink.start(name)?;
        let input = input?;
        kind = match input {
            Input::Stream(_) => "stream",
            Input::Remote(_) | Input::Positioned(_) | Input::Mapped(_) | Input::InMemory(_) => {
                "file"
            }
        };
        let input_path = sink.input.clone();
        let read = match input {
            Input::Positioned(source) => {
                // Each window's block is copied out of the page cache in parts on every thread.
                let parts = Concurrent::with_in_flight(source, threads).with_part_size(LOCAL_PART);
                convert_file(
                    args,
                    &input_path,
                    Recycling::new(parts),
                    &batches,
                    &mut sink,
                )?
            }
            Input::Mapped(source) => convert_file(args, &input_path, source, &batches, &mut sink)?,
            Input::InMemory(bytes) => convert_file(args, &input_path, bytes, &batches, &mut sink)?,
            Input::Stream(reader) => {
                let stream = input::stream_reader(&input_path, reader)?;
                if args.mmap {
                    return Err(Failure::Usage(format!(
                        "{}: --mmap does not apply to a stream (it maps files in the file format)",
                        input_path.display()
                    )));
                }
                let stream = Stream::new(&input_path, stream);
                convert(args, stream, &batches, &mut sink)?
            }
            Input::Remote(mut remote) => match remote.front_to_back()? {
                Some(stream) => {
                    kind = "stream";
                    let stream = BlockingBatches::stream(&remote.runtime, &remote.source, stream);
                    convert(args, batches::object(&remote, stream), &batches, &mut sink)?
                }
                None => {
                    // Under `--limit`, a few batches at a time (as many as the rows need).
                    let reader = remote.file_reader()?;
                    let (runtime, source) = (&remote.runtime, &remote.source);
                    let file = BlockingBatches::file(runtime, source, reader, args.limit.is_some());
                    convert(args, batches::object(&remote, file), &batches, &mut sink)?
                }
            },
        };
        stats.add(&read);
        sink.file_done(stats.bytes_read);
    };
    if exhausted && args.batches.is_some() && batches.start >= sink.run.seen {
        return Err(match files {
            1 => Failure::about(
                &sink.input,
                past_the_end(&batches, &format!("{kind} has"), sink.run.seen),
            ),
            n => Failure::Error(past_the_end(
                &batches,
                &format!("{n} inputs have"),
                sink.run.seen,
            )),
        });
    }
    if let Some(bar) = &sink.progress {
        bar.finish_and_clear();
    }
    let Destination {
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

/// Converts an IPC file read from a local `source`.
fn convert_file<S>(
    args: &JsonArgs,
    input: &Path,
    source: S,
    batches: &Range<usize>,
    sink: &mut Destination,
) -> Result<ReadStats, Failure>
where
    S: RandomAccess,
    S::Error: Display,
{
    let source = Counting::new(source);
    let mut reader = FileReader::open(&source, ReaderOptions::default())
        .map_err(|e| Failure::about(input, e))?;
    let file = LocalFile::new(input, &source, &mut reader);
    convert(args, file, batches, sink)
}

/// The one loop: the batches of `source` the run's `batches` select ([`Selected`]: the range
/// counted from the batches the run saw before this input), into the sink until the rows
/// wanted are written, with `--columns` applied. A file's batches outside the range are not
/// read; a stream's before it are read and counted, and reading stops once the range or the
/// limit is done: the rest stays unread. What reading cost.
fn convert<B>(
    args: &JsonArgs,
    source: B,
    batches: &Range<usize>,
    sink: &mut Destination,
) -> Result<ReadStats, Failure>
where
    B: Batches<Error = Failure> + Cost,
{
    let schema = Arc::clone(source.schema());
    sink.run.check_schema(&sink.input, &schema)?;
    let projection = projection(args, &sink.input, &schema)?.unwrap_or(Projection::All);
    let seen = sink.run.seen;
    let range = batches.start.saturating_sub(seen)..batches.end.saturating_sub(seen);
    let mut source = Selected::new(source, projection, range, sink.rows_left);
    if let (Some(bar), false) = (&sink.progress, sink.run.many()) {
        show(bar, source.selected_count().map(|n| n as u64));
    }
    while let Some((index, batch)) = source.next_batch()? {
        sink.take(index, &batch)?;
        if let Some(bytes) = source.inner().fetched() {
            sink.fetched(bytes);
        }
    }
    // A file's batches all count in the run; a stream's, those read.
    sink.run.seen = seen.saturating_add(source.seen());
    Ok(source.inner().stats())
}

/// The projection `--columns` asks for over `schema` of `input`, if any.
fn projection(
    args: &JsonArgs,
    input: &Path,
    schema: &Schema,
) -> Result<Option<Projection>, Failure> {
    let Some(columns) = &args.columns else {
        return Ok(None);
    };
    Projection::from_paths(schema, &columns.0)
        .map(Some)
        .map_err(|e| Failure::about(input, unknown_column(&e, schema)))
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

/// The error for a `--batches` range that starts past the last of `count` batches; `input` is
/// the subject and its verb (`file has`).
fn past_the_end(batches: &Range<usize>, input: &str, count: usize) -> String {
    let range = match batches.end {
        usize::MAX => format!("{}..", batches.start),
        end => format!("{}..{end}", batches.start),
    };
    let plural = if count == 1 { "" } else { "es" };
    format!(
        "--batches {range} starts past the last batch: the {input} {count} record batch{plural}"
    )
}

/// Where batches go: the writer, behind the row limit, with the progress bar.
struct Destination {
    /// The input being read.
    input: PathBuf,
    writer: ParallelWriter<Output>,
    rows_left: u64,
    batches: u64,
    progress: Option<ProgressBar>,
    /// What the run keeps from input to input.
    run: Run,
}

impl Destination {
    /// Whether more rows are wanted (`--limit` not reached yet).
    fn wants_more(&self) -> bool {
        self.rows_left > 0
    }

    /// Starts reading the input `name`.
    fn start(&mut self, name: PathBuf) -> Result<(), Failure> {
        self.run.start(&name)?;
        self.input = name;
        Ok(())
    }

    /// Counts an input done, `bytes_read` read from the inputs so far.
    fn file_done(&mut self, bytes_read: u64) {
        self.run.bytes_before = bytes_read;
        if let (Some(bar), true) = (&self.progress, self.run.many()) {
            bar.inc(1);
            bar.set_message(format!(
                "{} rows, {:.1} MiB read",
                self.writer.rows(),
                bytes_read as f64 / (1024.0 * 1024.0)
            ));
        }
    }

    /// Writes batch `index` of the input (cut to the rows still wanted: [`Selected`]), with the
    /// columns the run adds.
    fn take(&mut self, index: usize, batch: &RecordBatch<'_>) -> Result<(), Failure> {
        let rows = batch.num_rows() as u64;
        let extended = self.run.extend(&self.input, batch)?;
        let batch = extended.as_ref().unwrap_or(batch);
        self.writer.write(batch).map_err(|e| match e {
            JsonWriteError::Json(e) => self.json_failure(index, batch, &e),
            JsonWriteError::Io(e) => self.writer.inner().failed(e),
            other => Failure::about(&self.input, other),
        })?;
        self.rows_left -= rows.min(self.rows_left);
        self.batches += 1;
        if let Some(bar) = &self.progress {
            bar.set_message(format!("{} rows", self.writer.rows()));
            if !self.run.many() {
                bar.inc(1);
            }
        }
        Ok(())
    }

    /// Shows the rows written and the bytes of an object fetched so far on the progress bar.
    fn fetched(&self, bytes: u64) {
        if let Some(bar) = &self.progress {
            let fetched = self.run.bytes_before + bytes;
            bar.set_message(format!(
                "{} rows, {:.1} MiB fetched",
                self.writer.rows(),
                fetched as f64 / (1024.0 * 1024.0)
            ));
        }
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

/// Turns a hidden bar into a visible one counting the run's `total` inputs.
fn show_files(bar: &ProgressBar, total: u64) {
    bar.set_length(total);
    let template = "{elapsed_precise} [{bar:32}] {pos}/{len} files, {msg}";
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
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
