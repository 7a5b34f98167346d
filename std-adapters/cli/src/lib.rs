//! `quiver`: Arrow IPC files and streams to JSON, and their schemas, from the command line.
//!
//! It is the crate root: it uses every module below, and they use its `Failure` and exit codes.
//!
//! The binary (`src/main.rs`) only calls [`main`]; everything else is here.
//!
//! - `lib.rs`: the arguments (clap), the exit codes and the one `error: …` line.
//! - `input.rs`: the input named on the command line, opened as a file (positioned reads, or a
//!   memory map) or a stream, by its leading bytes.
//! - `stats.rs`: the read counts behind `--stats`.
//! - `inputs.rs`: what the names on the command line expand to (folders, prefixes, globs),
//!   and the objects among them opened ahead of their turn.
//! - `convert.rs`: `quiver json`, the conversion loop around the reader and
//!   [`quiver_std::ParallelWriter`], over every input in turn.
//! - `many.rs`: what a run over many inputs keeps from one to the next: the schema they must
//!   share, the batches counted, the columns `--with-source` and `--hive-partitions` add.
//! - `output.rs`: stdout, or `--output FILE`: a device, FIFO or descriptor written in place, a
//!   regular file replaced by a temporary file renamed over it only on success (removed on
//!   SIGINT, SIGTERM or SIGHUP), never the input.
//! - `upload.rs`: `--output URL`, a multipart upload that appears only on success.
//! - `signals.rs`: SIGINT, SIGTERM and SIGHUP, after the cleanups `output` and `upload` register.
//! - `remote.rs`: an input named by URL (`s3://…`), read with ranged GETs on a tokio runtime.
//! - `schema.rs`: `quiver schema`.
//!
//! Exit codes: 0 on success (and when the reader of stdout goes away, as with `| head`), 1 on
//! any error, with one `error: …` line naming the input and the batch, byte offset or field, and
//! 2 on a usage error (also an `--output` that is the input); 128 + the signal number when
//! SIGINT, SIGTERM or SIGHUP ends a run writing to a file.

mod batches;
mod convert;
mod input;
mod inputs;
mod many;
mod output;
mod remote;
mod schema;
#[cfg(unix)]
mod signals;
mod stats;
mod upload;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arrow IPC files and streams to JSON.
#[derive(Debug, Parser)]
#[command(name = "quiver", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,

    /// On a store's error, print all it answered (its XML or HTML body, request ids).
    #[arg(long, global = true)]
    verbose: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Writes an Arrow IPC file or stream as JSON (NDJSON by default) to stdout or a file.
    Json(JsonArgs),
    /// Prints the schema (fields with types, nullability, dictionary encoding, metadata), then
    /// the batch and row counts.
    Schema(SchemaArgs),
    /// Prints a completion script for a shell, to source or install (bash: in
    /// ~/.local/share/bash-completion/completions/quiver; zsh: as _quiver in a folder of
    /// $fpath; fish: in ~/.config/fish/completions/quiver.fish).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Prints the manual page (roff), e.g. `quiver man > ~/.local/share/man/man1/quiver.1`.
    Man,
}

/// The options of `quiver json`.
#[derive(Debug, Args)]
struct JsonArgs {
    /// Arrow IPC files or streams (told apart by their leading bytes), `-` for stdin, or URLs:
    /// s3://, gs://, az://, abfs(s)://, http(s)://, file:// (credentials and endpoints from the
    /// usual AWS_*, GOOGLE_*, AZURE_* variables). A folder, a URL ending in `/` (a prefix) or
    /// a glob (`*`, `?`, `[…]`, `**`) stands for the files below it, sorted by path, without
    /// names starting with `.` or `_`; their rows are written in that order, as one document.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,

    /// Skip inputs of 0 bytes found in folders, prefixes and globs.
    #[arg(long)]
    skip_empty: bool,

    /// Add the input's path or URL to each row, as the string member `_source` (last).
    #[arg(long)]
    with_source: bool,

    /// Add the `KEY=VALUE` folders of each input's path (`date=2026-12-01/region=eu/…`) to its
    /// rows as string members KEY (after the columns, in the order of the path).
    #[arg(long)]
    hive_partitions: bool,

    /// How rows are framed: one JSON object per line, or one JSON array (ending with a
    /// newline).
    #[arg(long, value_enum, default_value_t = Format::Ndjson)]
    format: Format,

    /// Only these columns, by name; dotted paths select struct children (`c.x`). Output keys
    /// keep the file's order. A backslash escapes the next character: `a\.b` is the column
    /// named `a.b`, `a\,b` the column `a,b`, `a\\b` the column `a\b`.
    #[arg(long, value_parser = parse_columns, value_name = "A,B,C.X")]
    columns: Option<Columns>,

    /// Only record batches START..END (from 0, END excluded); also `START..`, `..END`, `N`.
    #[arg(long, value_parser = parse_batches, value_name = "START..END")]
    batches: Option<Range<usize>>,

    /// At most N rows.
    #[arg(long, value_name = "N", value_parser = parse_limit, allow_negative_numbers = true)]
    limit: Option<u64>,

    /// Leave null members out of objects instead of writing them as `null` (arrow-json's form).
    #[arg(long, overrides_with = "explicit_nulls")]
    omit_nulls: bool,

    /// Write null members as `null`: the default (kept for scripts written when it was not).
    #[arg(long, hide = true, overrides_with = "omit_nulls")]
    explicit_nulls: bool,

    /// Write values of canonical extension types (arrow.uuid, arrow.json, arrow.bool8) as their
    /// storage (hex bytes, a string, an integer) instead of a UUID string, the JSON value, or
    /// true/false.
    #[arg(long)]
    extensions_as_storage: bool,

    /// Write 64-bit integers beyond ±2^53 as strings.
    #[arg(long)]
    large_ints_as_strings: bool,

    /// Write NaN and infinities as the strings "NaN", "Infinity", "-Infinity" instead of null.
    #[arg(long)]
    non_finite_as_strings: bool,

    /// Write timestamps as their stored integer instead of ISO 8601 text.
    #[arg(long)]
    timestamps_as_epoch: bool,

    /// Write timestamps with a timezone as their UTC instant with `Z`, instead of the local
    /// time with the zone's offset (named zones are looked up in a bundled tz database). The
    /// zone is then not needed: one the database does not know is no error.
    #[arg(long)]
    timestamps_utc: bool,

    /// Write decimals as JSON strings with every digit, instead of numbers (which common
    /// parsers round to a double).
    #[arg(long)]
    decimals_as_strings: bool,

    /// How binary values are written.
    #[arg(long, value_enum, default_value_t = Binary::Hex)]
    binary: Binary,

    /// Write to FILE instead of stdout. A regular file (also at the end of symbolic links) is
    /// replaced only when the conversion succeeds, through a hidden `.FILE.*.partial` beside it,
    /// keeping its permissions and owner; links stay links. A device, FIFO or `/dev/fd/N` is
    /// written directly, as `>` would. FILE may not be an input. A URL (s3://bucket/key, …) is
    /// uploaded as it is written, in parts, and appears only when the run succeeds.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Threads that encode JSON [default: the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,

    /// Read a file through a memory map (zero-copy) instead of positioned reads of about one
    /// batch at a time. Memory then grows with the file's pages touched. Only for a regular
    /// file in the file format: a stream or a pipe is a usage error.
    #[arg(long)]
    mmap: bool,

    /// Print `reads=R round_trips=T bytes_read=B batches=N rows=M bytes_written=W` on stderr at
    /// the end: the reader's range requests, which the same run would make of remote storage;
    /// a URL adds `hedges=H retries=E`, the requests sent again because late or stalled.
    #[arg(long)]
    stats: bool,
}

/// The options of `quiver schema`.
#[derive(Debug, Args)]
struct SchemaArgs {
    /// Arrow IPC files or streams, `-` for stdin, or URLs, folders, prefixes and globs (as
    /// `quiver json` takes them). Over several, the schema they share, the number of files
    /// and each one's counts.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,

    /// Skip inputs of 0 bytes found in folders, prefixes and globs.
    #[arg(long)]
    skip_empty: bool,

    /// Text for people, or one JSON document for scripts.
    #[arg(long, value_enum, default_value_t = SchemaFormat::Text)]
    format: SchemaFormat,
}

/// `quiver schema --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SchemaFormat {
    /// One line per field, indented by depth; names that would break a line are quoted.
    Text,
    /// One JSON document: `format`, `fields` (each with `name`, `type`, `nullable`, `metadata`,
    /// `dictionary` and `children`), `metadata`, `record_batches`, `rows`, and for a file
    /// `dictionary_batches`.
    Json,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Newline-delimited JSON: one object per row, each followed by a newline.
    Ndjson,
    /// One JSON array of row objects.
    Array,
}

/// `--binary`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Binary {
    /// Lowercase hex digits, two per byte (arrow-json's form).
    Hex,
    /// Standard padded base64.
    Base64,
}

/// Parses `START..END`, `START..`, `..END` or a single batch index `N`.
fn parse_batches(text: &str) -> Result<Range<usize>, String> {
    let number = |s: &str, default: usize| -> Result<usize, String> {
        if s.is_empty() {
            return Ok(default);
        }
        s.parse()
            .map_err(|_| format!("`{s}` is not a batch index (a whole number from 0)"))
    };
    match text.split_once("..") {
        Some((start, end)) => {
            let range = number(start, 0)?..number(end, usize::MAX)?;
            if range.start > range.end {
                return Err(format!("{text}: START is after END"));
            }
            Ok(range)
        }
        None => {
            let n = number(text, 0)?;
            Ok(n..n.saturating_add(1))
        }
    }
}

/// `--columns`: the field paths, as `quiver::ipc::Projection::from_paths` reads them.
#[derive(Debug, Clone)]
struct Columns(Vec<String>);

/// Splits `--columns` at each `,` that no `\` escapes. The escapes stay in the paths, for the
/// projection to read (`\,` is a `,` in a name, `\.` a `.`). An empty entry is an error.
fn parse_columns(text: &str) -> Result<Columns, String> {
    let mut paths = Vec::new();
    let mut path = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == ',' {
            paths.push(std::mem::take(&mut path));
            continue;
        }
        path.push(c);
        if c == '\\'
            && let Some(escaped) = chars.next()
        {
            path.push(escaped);
        }
    }
    paths.push(path);
    if let Some(empty) = paths.iter().position(String::is_empty) {
        return Err(format!(
            "entry {} of `{text}` is empty (name each column once, separated by `,`)",
            empty + 1
        ));
    }
    Ok(Columns(paths))
}

/// Parses `--limit`: a whole number from 0, with a message about the value otherwise (a
/// negative number included, which clap would otherwise take for an option).
fn parse_limit(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| "must be a whole number from 0 (the most rows to write)".to_string())
}

/// Why a command stopped early.
#[derive(Debug)]
enum Failure {
    /// Reported as `error: {0}` with exit code 1.
    Error(String),
    /// A usage error found after parsing (an output that is the input, an option that does not
    /// apply to this input): `error: {0}` with exit code 2.
    Usage(String),
    /// The reader of stdout went away (`| head`): stop quietly with exit code 0.
    ClosedPipe,
}

impl Failure {
    /// An error about `subject` (an input or output path).
    fn about(subject: &std::path::Path, error: impl std::fmt::Display) -> Self {
        Failure::Error(format!("{}: {error}", subject.display()))
    }

    /// The failure of a stream's opening read: an empty input or another format says so itself;
    /// anything else was neither format.
    fn not_a_stream<E: std::fmt::Display>(
        path: &std::path::Path,
        e: quiver::error::Error<E>,
    ) -> Self {
        let whole_input = e.format().is_some_and(|e| {
            matches!(
                e.kind,
                quiver::error::FormatErrorKind::EmptyInput
                    | quiver::error::FormatErrorKind::NotArrow { .. }
            )
        });
        if whole_input {
            Failure::about(path, e)
        } else {
            Failure::about(
                path,
                format!("neither an Arrow IPC file (no ARROW1 magic) nor a stream: {e}"),
            )
        }
    }
}

/// Runs the command line of this process: parses the arguments (exiting with code 2 on a usage
/// error), runs the command, and returns its exit code after printing any `error: …` line.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    remote::VERBOSE.store(cli.verbose, std::sync::atomic::Ordering::Relaxed);
    let result = match cli.command {
        Command::Json(args) => convert::run(&args),
        Command::Schema(args) => schema::run(&args),
        Command::Completions { shell } => print_completions(shell),
        Command::Man => print_man_page(),
    };
    match result {
        Ok(()) | Err(Failure::ClosedPipe) => ExitCode::SUCCESS,
        Err(Failure::Error(message)) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
        Err(Failure::Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// `quiver completions SHELL`: the shell's completion script on stdout.
fn print_completions(shell: clap_complete::Shell) -> Result<(), Failure> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "quiver", &mut script);
    write_stdout(&script)
}

/// `quiver man`: the manual page on stdout.
fn print_man_page() -> Result<(), Failure> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|e| Failure::Error(format!("writing the manual page: {e}")))?;
    write_stdout(&page)
}

/// Writes `bytes` to stdout (a closed pipe ends quietly).
fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure::ClosedPipe),
        Err(e) => Err(Failure::Error(format!("writing to stdout: {e}"))),
        Ok(()) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn batch_ranges_parse() {
        assert_eq!(parse_batches("3..7"), Ok(3..7));
        assert_eq!(parse_batches("3.."), Ok(3..usize::MAX));
        assert_eq!(parse_batches("..2"), Ok(0..2));
        assert_eq!(parse_batches("5"), Ok(5..6));
        assert!(parse_batches("7..3").is_err());
        assert!(parse_batches("a..3").is_err());
        assert!(parse_batches("-1").is_err());
    }

    #[test]
    fn columns_split_at_unescaped_commas() {
        let paths = |text| parse_columns(text).map(|c| c.0);
        assert_eq!(paths("a,b.c"), Ok(vec!["a".into(), "b.c".into()]));
        assert_eq!(
            paths(r"a\,b,c\.d"),
            Ok(vec![r"a\,b".into(), r"c\.d".into()])
        );
        assert_eq!(paths(r"a\\,b"), Ok(vec![r"a\\".into(), "b".into()]));
        let empty = paths("a,").unwrap_err();
        assert!(empty.contains("entry 2 of `a,` is empty"), "{empty}");
        assert!(paths(",a").unwrap_err().contains("entry 1"));
        assert!(paths("").is_err());
    }

    #[test]
    fn limits_parse() {
        assert_eq!(parse_limit("0"), Ok(0));
        assert_eq!(parse_limit("12"), Ok(12));
        let message = parse_limit("-1").unwrap_err();
        assert!(
            message.starts_with("must be a whole number from 0"),
            "{message}"
        );
    }
}
