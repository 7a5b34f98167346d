//! A source of record batches ([`Batches`]), whatever the input, and the selection every
//! adapter applies on the way ([`Selected`]): the columns, a range of batches and a row limit
//! (the CLI's `--columns`, `--batches` and `--limit`, Python's `columns`, `batches`, `limit`).
//!
//! Batches enter from a source's own reader (a file's, a stream's, an object's, another
//! library's arrays) through [`Batches::next_batch`]; [`Selected`] hands on the selected ones,
//! each with its index in the source, cut to the rows still wanted. Errors are the source's
//! own ([`Batches::Error`]), returned unchanged, or made the caller's by [`MapErr`].
//!
//! It uses the core's readers' types only (no I/O of its own).

use quiver::array::RecordBatch;
use quiver::ipc::Projection;
use quiver::schema::Schema;
use std::ops::Range;
use std::sync::Arc;

/// A source of record batches of one schema, read once in order.
///
/// A consumer may [`project`](Self::project) it once, then (for a source that knows how many
/// batches it has, [`count`](Self::count)) [`start`](Self::start) it on a range of them, then
/// read batches until `None`.
pub trait Batches {
    /// What goes wrong when reading, in the source's own words.
    type Error;

    /// The schema of the batches, before any projection.
    fn schema(&self) -> &Arc<Schema>;

    /// The number of batches, when known before reading them (a file's footer says it);
    /// `None` for a stream, which is read in order from its first batch.
    fn count(&self) -> Option<usize> {
        None
    }

    /// Reads only the fields of `projection` (over [`Self::schema`]) from now on: at most once,
    /// before [`Self::start`] and the first batch.
    fn project(&mut self, projection: Projection);

    /// Starts reading a source's batches `range` (one whose [`Self::count`] is known); a
    /// stream reads all of its batches in order.
    fn start(&mut self, range: Range<usize>) {
        let _ = range;
    }

    /// The next batch, `None` at the end; `rows_left` rows are still wanted (a source read by
    /// ranges asks for no more batches than they need).
    fn next_batch(&mut self, rows_left: u64) -> Result<Option<RecordBatch<'static>>, Self::Error>;
}

/// The methods of [`Batches`] but `next_batch` for a source that wraps another, `|this| inner`
/// naming the one it wraps: passed on unchanged.
macro_rules! pass_on {
    (|$this:ident| $inner:expr) => {
        fn schema(&self) -> &Arc<Schema> {
            let $this = self;
            $inner.schema()
        }

        fn count(&self) -> Option<usize> {
            let $this = self;
            $inner.count()
        }

        fn project(&mut self, projection: Projection) {
            let $this = self;
            $inner.project(projection);
        }

        fn start(&mut self, range: Range<usize>) {
            let $this = self;
            $inner.start(range);
        }
    };
}

impl<B: Batches + ?Sized> Batches for Box<B> {
    type Error = B::Error;

    pass_on!(|this| (**this));

    fn next_batch(&mut self, rows_left: u64) -> Result<Option<RecordBatch<'static>>, Self::Error> {
        (**self).next_batch(rows_left)
    }
}

/// A source whose errors `map` turns into the caller's, given the source's schema (to name a
/// field by): a source shared by adapters that each have their own error.
pub struct MapErr<B, F> {
    inner: B,
    map: F,
}

impl<B, F> MapErr<B, F> {
    /// `inner`, its errors through `map`.
    pub fn new(inner: B, map: F) -> Self {
        MapErr { inner, map }
    }

    /// The source.
    pub fn inner(&self) -> &B {
        &self.inner
    }
}

impl<B: Batches, E, F: Fn(B::Error, &Schema) -> E> Batches for MapErr<B, F> {
    type Error = E;

    pass_on!(|this| this.inner);

    fn next_batch(&mut self, rows_left: u64) -> Result<Option<RecordBatch<'static>>, E> {
        match self.inner.next_batch(rows_left) {
            Ok(batch) => Ok(batch),
            Err(error) => Err((self.map)(error, self.inner.schema())),
        }
    }
}

/// The batches of a source in a range, of some columns, cut to a number of rows.
///
/// A source that knows its count (a file) reads only the batches of the range; a stream's
/// batches before it are read and passed over. Reading stops once the range or the rows are
/// done: the rest stays unread. The last batch is cut to the rows still wanted.
pub struct Selected<B> {
    inner: B,
    /// The schema of the selected columns.
    schema: Arc<Schema>,
    /// The batches wanted, by their index in the source (a file's within its count).
    range: Range<usize>,
    /// The index in the source of the next batch it gives.
    next: usize,
    rows_left: u64,
    /// The source's count, if it knows it.
    count: Option<usize>,
    /// The source said it has no more batches.
    ended: bool,
}

impl<B: Batches> Selected<B> {
    /// The batches `range` of `inner` (by their index in it; a range past a file's end is cut
    /// to it), of the fields of `projection`, at most `rows` rows; starts `inner`.
    pub fn new(mut inner: B, projection: Projection, range: Range<usize>, rows: u64) -> Self {
        let schema = match projection.is_all() {
            true => Arc::clone(inner.schema()),
            false => {
                let schema = Arc::new(projection.project_schema(inner.schema()));
                inner.project(projection);
                schema
            }
        };
        let count = inner.count();
        let (range, next) = match count {
            Some(count) => {
                let range = range.start.min(count)..range.end.min(count);
                inner.start(range.clone());
                (range.clone(), range.start)
            }
            None => (range, 0),
        };
        Selected {
            inner,
            schema,
            range,
            next,
            rows_left: rows,
            count,
            ended: false,
        }
    }

    /// The schema of the selected batches (the projection's).
    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    /// The next selected batch and its index in the source, `None` once the range, the rows
    /// or the source are done.
    pub fn next_batch(&mut self) -> Result<Option<(usize, RecordBatch<'static>)>, B::Error> {
        loop {
            if self.rows_left == 0 || self.next >= self.range.end || self.ended {
                return Ok(None);
            }
            let Some(batch) = self.inner.next_batch(self.rows_left)? else {
                self.ended = true;
                return Ok(None);
            };
            let index = self.next;
            self.next += 1;
            if index < self.range.start {
                // A stream's batch before the range.
                continue;
            }
            let rows = batch.num_rows() as u64;
            if rows <= self.rows_left {
                self.rows_left -= rows;
                return Ok(Some((index, batch)));
            }
            let kept = self.rows_left as usize;
            self.rows_left = 0;
            // In bounds: `kept` is less than the batch's rows.
            let head = batch.slice(0, kept);
            debug_assert!(head.is_ok(), "a batch's first rows are in bounds");
            return Ok(Some((index, head.unwrap_or(batch))));
        }
    }

    /// The number of batches selected, when the source knows its count (a file); `None` for a
    /// stream.
    pub fn selected_count(&self) -> Option<usize> {
        self.count.map(|_| self.range.len())
    }

    /// The batches of the source counted so far: all of a file's (its footer counts them), a
    /// stream's read so far, selected or not.
    pub fn seen(&self) -> usize {
        self.count.unwrap_or(self.next)
    }

    /// Whether the source said it has no more batches (not merely the range or the rows done).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// When the range starts past the source's last batch, the number of batches it has: a
    /// file's at once (its count), a stream's once it ended. A source whose range was not asked
    /// for (from 0) has no such end to pass, unless it has no batches at all.
    pub fn past_the_end(&self) -> Option<usize> {
        match self.count {
            Some(count) => (self.range.start >= count).then_some(count),
            None => (self.ended && self.next <= self.range.start).then_some(self.next),
        }
    }

    /// The rows still wanted.
    pub fn rows_left(&self) -> u64 {
        self.rows_left
    }

    /// The source.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// The source back.
    pub fn into_inner(self) -> B {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver::array::ArrayView;

    /// A batch of `rows` rows, columns `a` and `b`.
    fn batch(rows: usize) -> RecordBatch<'static> {
        let column = || ArrayView::from_values(0..rows as i32).unwrap();
        RecordBatch::from_columns([("a", column()), ("b", column())]).unwrap()
    }

    /// Batches of the given row counts, of one `int32` column; `known`: a file (it has a
    /// count); records what the selection asked of it.
    struct Counts {
        schema: Arc<Schema>,
        rows: Vec<usize>,
        known: bool,
        next: usize,
        end: usize,
        read: Vec<usize>,
        projected: bool,
    }

    impl Counts {
        fn new(rows: &[usize], known: bool) -> Self {
            Counts {
                schema: Arc::clone(batch(0).schema()),
                rows: rows.to_vec(),
                known,
                next: 0,
                end: rows.len(),
                read: Vec::new(),
                projected: false,
            }
        }
    }

    impl Batches for Counts {
        type Error = ();

        fn schema(&self) -> &Arc<Schema> {
            &self.schema
        }

        fn count(&self) -> Option<usize> {
            self.known.then_some(self.rows.len())
        }

        fn project(&mut self, _: Projection) {
            self.projected = true;
        }

        fn start(&mut self, range: Range<usize>) {
            (self.next, self.end) = (range.start, range.end);
        }

        fn next_batch(&mut self, _: u64) -> Result<Option<RecordBatch<'static>>, ()> {
            if self.next >= self.end {
                return Ok(None);
            }
            let rows = self.rows[self.next];
            self.read.push(self.next);
            self.next += 1;
            Ok(Some(batch(rows)))
        }
    }

    /// The indices and row counts `selected` gives, and the source's batches read.
    fn run(mut selected: Selected<Counts>) -> (Vec<(usize, usize)>, Vec<usize>, usize, bool) {
        let mut out = Vec::new();
        while let Some((index, batch)) = selected.next_batch().unwrap() {
            out.push((index, batch.num_rows()));
        }
        let (seen, ended) = (selected.seen(), selected.ended());
        (out, selected.into_inner().read, seen, ended)
    }

    #[test]
    fn a_file_reads_only_its_range() {
        let file = Counts::new(&[3, 3, 3, 3], true);
        let (out, read, seen, _) = run(Selected::new(file, Projection::All, 1..3, u64::MAX));
        assert_eq!(out, [(1, 3), (2, 3)]);
        assert_eq!(read, [1, 2]);
        assert_eq!(seen, 4);
    }

    #[test]
    fn a_stream_reads_and_passes_over_the_batches_before_the_range() {
        let stream = Counts::new(&[3, 3, 3, 3], false);
        let (out, read, seen, ended) = run(Selected::new(stream, Projection::All, 1..3, 100));
        assert_eq!(out, [(1, 3), (2, 3)]);
        assert_eq!(read, [0, 1, 2]);
        assert_eq!((seen, ended), (3, false));
    }

    #[test]
    fn the_row_limit_cuts_the_last_batch_and_stops_reading() {
        for known in [true, false] {
            let source = Counts::new(&[3, 3, 3, 3], known);
            let (out, read, _, ended) = run(Selected::new(source, Projection::All, 0..9, 5));
            assert_eq!(out, [(0, 3), (1, 2)]);
            assert_eq!(read, [0, 1]);
            assert!(!ended);
        }
    }

    #[test]
    fn a_range_past_the_end() {
        let mut stream = Selected::new(Counts::new(&[3, 3], false), Projection::All, 2..9, 100);
        assert_eq!(stream.past_the_end(), None);
        assert!(stream.next_batch().unwrap().is_none());
        assert_eq!(
            (stream.seen(), stream.ended(), stream.past_the_end()),
            (2, true, Some(2))
        );
        let file = Selected::new(Counts::new(&[3, 3], true), Projection::All, 2..9, 100);
        assert_eq!(file.past_the_end(), Some(2));
        let (out, read, seen, _) = run(file);
        assert_eq!((out, read, seen), (vec![], vec![], 2));
        // Within the range, or stopped by the row limit before the stream's end: no error.
        let mut within = Selected::new(Counts::new(&[3, 3], false), Projection::All, 1..9, 100);
        while within.next_batch().unwrap().is_some() {}
        assert_eq!(within.past_the_end(), None);
        let mut limited = Selected::new(Counts::new(&[3, 3], false), Projection::All, 5..9, 0);
        assert!(limited.next_batch().unwrap().is_none());
        assert_eq!(limited.past_the_end(), None);
    }

    #[test]
    fn a_projection_reaches_the_source_and_names_the_schema() {
        let stream = Counts::new(&[1], false);
        let schema = Arc::clone(stream.schema());
        let projection = Projection::from_paths(&schema, &["b"]).unwrap();
        let selected = Selected::new(stream, projection, 0..9, 100);
        assert_eq!(selected.schema().fields().len(), 1);
        assert_eq!(selected.schema().fields()[0].name(), "b");
        assert!(selected.inner().projected);
        let all = Selected::new(Counts::new(&[1], false), Projection::All, 0..9, 100);
        assert!(!all.inner().projected);
    }
}
