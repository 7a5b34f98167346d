//! [`FileDecoder`]: the Arrow IPC file reader as a state machine that plans byte ranges and is
//! handed their bytes; it does no I/O of its own.
//!
//! It uses `columns`, `pushed` and `projection` beside it and, of the crate, the read planner
//! (`read_plan`, `cost`), the format, the arrays, the schema and the errors.
//!
//! Bytes enter through [`FileDecoder::push_ranges`]; batches leave through
//! [`FileDecoder::try_decode`], which says [`DecodeResult::NeedsData`] with the ranges it lacks
//! whenever it cannot go on. Every reading decision lives here, and only here:
//!
//! - Opening asks for the file's last `footer_read_size` bytes, then, if the footer is longer,
//!   for exactly its missing start.
//! - A selection of batches is read in windows of `readahead` bytes of blocks. A window is one
//!   list of ranges, merged with [`coalesce`]: whole blocks, or, under a projection, every
//!   block's metadata first and then only the selected fields' buffers. The first list of a
//!   selection that starts near the file's start is stretched to offset 0 so the leading magic
//!   is checked.
//! - Under a network model ([`ScanOptions::network`]) each window's plan is the cheapest by
//!   [`crate::cost`]: whole blocks in parallel parts; every block's metadata, then the
//!   buffers; or, under a projection, the first block's metadata and buffers alone (to learn
//!   where the buffers lie), after which each block's metadata and its predicted buffers
//!   ([`predict`]) are read together, merged with the gap the model prefers
//!   ([`coalesce_for`]). Whatever a prediction missed is read once the metadata is known;
//!   nothing already fetched is asked for twice.
//! - Dictionary blocks ride along with the first window that needs them, once.
//! - One batch alone ([`FileDecoder::select_batch`]) is one range of its metadata and body,
//!   with the dictionary blocks listed beside it the first time.
//!
//! The [`FileReader`](super::FileReader) and the async reader are loops around it: ask, fetch,
//! push. A driver may also fetch ahead ([`FileDecoder::prefetch`]) while the caller works on
//! the batches it has.

use super::columns::{FetchedBody, buffer_ranges};
use super::pushed::Pushed;
use super::{MAGIC, Projection, ReadState, ReaderOptions, field_budget, unexpected};
use crate::array::RecordBatch;
use crate::bytes::Bytes;
use crate::cost::{Cost, Network};
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use crate::format::{self, Block, LEADING_LEN, TRAILER_LEN};
use crate::read_plan::{
    DEFAULT_HOLE_SIZE_LIMIT, DEFAULT_RANGE_SIZE_LIMIT, coalesce, coalesce_for, predict, split,
};
use crate::schema::{Metadata, Schema};
use alloc::collections::VecDeque;
use alloc::string::ToString;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Range;

/// How a [`Scan`](super::Scan) (or any driver of a [`FileDecoder`]) plans its reads.
///
/// Without a [`Network`] the limits are fixed: ranges are merged within `hole_size_limit` and
/// `range_size_limit`, and a projected window reads every block's metadata, then the selected
/// buffers. With one, the planner compares the plans it can make for each window by the model
/// ([`crate::cost`]) and takes the cheapest: whole blocks in parallel parts, metadata then
/// buffers, or (once one block's buffers are known) each block's metadata and its
/// predicted buffers together, merged with the gap the model prefers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScanOptions {
    /// Largest gap between two needed ranges that is read through rather than split.
    pub hole_size_limit: u64,
    /// Largest read that merging may produce (a single larger range stays whole).
    pub range_size_limit: u64,
    /// Bytes of blocks fetched per window (at least one block per window); under a network
    /// model, the bytes a window's plan reads.
    pub readahead: u64,
    /// The network the planner decides by, if any.
    pub network: Option<Network>,
    /// Bytes the source holds or is already bringing (an object store's first bytes, read
    /// with its footer): the model counts no request for them, so a plan that reads them
    /// (the first block's metadata, say) costs less. They are still asked for.
    pub held: Range<u64>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            hole_size_limit: DEFAULT_HOLE_SIZE_LIMIT,
            range_size_limit: DEFAULT_RANGE_SIZE_LIMIT,
            readahead: 64 * 1024 * 1024,
            network: None,
            held: 0..0,
        }
    }
}

impl ScanOptions {
    /// Sets [`ScanOptions::hole_size_limit`]: the largest gap between two needed ranges
    /// that is read through rather than split.
    #[must_use]
    pub fn with_hole_size_limit(mut self, hole_size_limit: u64) -> Self {
        self.hole_size_limit = hole_size_limit;
        self
    }

    /// Sets [`ScanOptions::range_size_limit`]: the largest read that merging may produce.
    #[must_use]
    pub fn with_range_size_limit(mut self, range_size_limit: u64) -> Self {
        self.range_size_limit = range_size_limit;
        self
    }

    /// Sets [`ScanOptions::readahead`]: the bytes of blocks fetched per window.
    #[must_use]
    pub fn with_readahead(mut self, readahead: u64) -> Self {
        self.readahead = readahead;
        self
    }

    /// Sets [`ScanOptions::network`]: the network the planner decides by.
    #[must_use]
    pub fn with_network(mut self, network: Option<Network>) -> Self {
        self.network = network;
        self
    }

    /// Sets [`ScanOptions::held`]: bytes the source holds or is already bringing.
    #[must_use]
    pub fn with_held(mut self, held: Range<u64>) -> Self {
        self.held = held;
        self
    }

    /// What of `ranges` the source does not hold: each range less [`Self::held`].
    fn unheld(&self, ranges: &[Range<u64>]) -> Vec<Range<u64>> {
        let held = &self.held;
        if held.is_empty() {
            return ranges.to_vec();
        }
        let pieces = ranges.iter().flat_map(|range| {
            let before = range.start..range.end.min(held.start);
            let after = range.start.max(held.end)..range.end;
            [before, after].into_iter().filter(|r| !r.is_empty())
        });
        pieces.collect()
    }

    /// Whether the source holds every byte of `range`.
    fn holds(&self, range: &Range<u64>) -> bool {
        self.unheld(core::slice::from_ref(range)).is_empty()
    }
}

/// What [`FileDecoder::try_decode`] has for the caller.
#[derive(Debug)]
#[non_exhaustive]
#[must_use]
pub enum DecodeResult {
    /// Push the bytes of these ranges ([`FileDecoder::push_ranges`]), then call again. The
    /// list is sorted and each range is one read; it is asked for again until it is pushed.
    NeedsData(Vec<Range<u64>>),
    /// The footer has been read: the schema, metadata and blocks are known. Set a projection
    /// or a selection now, before the first batch is planned, and call again.
    Footer,
    /// The next selected record batch.
    Data(RecordBatch<'static>),
    /// Every selected batch has been returned.
    Finished,
}

/// The plans a window can be read by under a network model, compared by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WindowPlan {
    /// Whole blocks, in parallel parts of the model's size.
    Whole,
    /// Every block's metadata, then the selected buffers: two waves.
    Phases,
    /// The first block's metadata, then its buffers; the window ends there, and the next
    /// windows read the others' metadata and predicted buffers together.
    Learn,
    /// Each block's metadata and predicted buffers together, merged: one wave (and one more
    /// for what the prediction missed).
    Together,
}

/// Which batches are read, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Planned windows of coalesced reads.
    Scan,
    /// One batch, one read of its block (`batch` is the only one selected).
    Batch,
}

/// A record batch whose metadata (and, once read, body) wait to be decoded.
struct Pending {
    index: usize,
    block: Block,
    message: MessageBytes,
    body: FetchedBody<'static>,
    /// Under a projection, the body ranges of the selected buffers (file offsets).
    buffers: Vec<Range<u64>>,
}

/// Where a window is.
enum Stage {
    /// Needs the blocks (whole, or their metadata) and any dictionaries it carries.
    Blocks,
    /// Metadata decoded; needs the selected buffers.
    Buffers(Vec<Pending>),
    /// Every byte is here; batches wait to be decoded.
    Ready(VecDeque<Pending>),
}

/// Where the selected buffers lay in the body of the last block whose metadata was read: the
/// guess for the next blocks' ([`predict`]).
#[derive(Debug, Clone)]
struct LastBuffers {
    body_len: u64,
    /// Offsets in the body.
    buffers: Vec<Range<u64>>,
}

/// A run of blocks read together.
struct Window {
    blocks: Vec<(usize, Block)>,
    dictionaries: Vec<Block>,
    /// Whole blocks in one phase, or metadata and then buffers.
    whole: bool,
    stage: Stage,
    /// The reads of the current stage.
    reads: Vec<Range<u64>>,
    /// The first read starts at 0 to take the leading magic along.
    checks_magic: bool,
    /// The current stage's reads were handed to a driver by [`FileDecoder::prefetch`].
    asked: bool,
}

impl Window {
    /// Every byte the window still needs lies in these ranges.
    fn extent(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        let blocks = self.blocks.iter().map(|(_, b)| extent(b));
        self.dictionaries.iter().map(extent).chain(blocks)
    }
}

/// Reads an Arrow IPC file from bytes it is handed, planning which; see the module docs.
///
/// ```
/// # use quiver::ipc::{DecodeResult, FileDecoder};
/// # use quiver::{ipc::ReaderOptions, bytes::Bytes};
/// # fn rows(file: &'static [u8]) -> Result<usize, quiver::error::FormatError> {
/// let mut decoder = FileDecoder::new(file.len() as u64, ReaderOptions::default());
/// let mut rows = 0;
/// loop {
///     match decoder.try_decode()? {
///         DecodeResult::NeedsData(ranges) => {
///             // Fetch them any way you like: here, from memory.
///             let data = ranges
///                 .iter()
///                 .map(|r| Bytes::borrowed(&file[r.start as usize..r.end as usize]))
///                 .collect();
///             decoder.push_ranges(ranges, data)?;
///         }
///         DecodeResult::Data(batch) => rows += batch.num_rows(),
///         DecodeResult::Finished => return Ok(rows),
///         _ => {}
///     }
/// }
/// # }
/// ```
pub struct FileDecoder {
    file_len: u64,
    state: ReadState,
    metadata: Metadata,
    dictionary_blocks: Vec<Block>,
    record_batch_blocks: Vec<Block>,
    opened: bool,
    scan: ScanOptions,
    mode: Mode,
    /// The next batch to plan, and the end of the selection (clamped once the footer is read).
    next: usize,
    end: usize,
    /// No window of this selection has been planned yet.
    first_window: bool,
    windows: VecDeque<Window>,
    pushed: Pushed,
    /// The dictionary blocks have been decoded, or are carried by a planned window.
    dictionaries_read: bool,
    dictionaries_planned: bool,
    /// The error `try_decode` returned; it stays until a new selection.
    failed: Option<FormatError>,
    /// Where the projection's buffers lay in the last block read by metadata.
    layout: Option<LastBuffers>,
}

impl core::fmt::Debug for FileDecoder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FileDecoder")
            .field("file_len", &self.file_len)
            .field("opened", &self.opened)
            .field("batches", &(self.next..self.end))
            .field("windows", &self.windows.len())
            .finish_non_exhaustive()
    }
}

impl FileDecoder {
    /// A decoder for a file of `file_len` bytes, which selects every batch.
    pub fn new(file_len: u64, options: ReaderOptions) -> Self {
        FileDecoder {
            file_len,
            state: ReadState::new(Schema::new(Vec::new()), options),
            metadata: Metadata::new(),
            dictionary_blocks: Vec::new(),
            record_batch_blocks: Vec::new(),
            opened: false,
            scan: ScanOptions::default(),
            mode: Mode::Scan,
            next: 0,
            end: usize::MAX,
            first_window: true,
            windows: VecDeque::new(),
            pushed: Pushed::default(),
            dictionaries_read: false,
            dictionaries_planned: false,
            failed: None,
            layout: None,
        }
    }

    /// Hands the decoder the bytes of `ranges`, one buffer per range, kept without copying.
    /// They may split, overlap or exceed what was asked for, in any order. A range past the
    /// file's end, a buffer not as long as its range, or a count that differs is an error at
    /// that range, and then nothing of the push is kept.
    pub fn push_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
        data: Vec<Bytes<'static>>,
    ) -> FormatResult<()> {
        self.pushed.push(self.file_len, ranges, data)
    }

    /// Decodes what it can: the footer, then the selected batches in order. When it cannot go
    /// on it returns the ranges it lacks; push them and call again. After an error it returns
    /// the same error until a new selection ([`Self::select`], [`Self::select_batch`]).
    pub fn try_decode(&mut self) -> FormatResult<DecodeResult> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.step().inspect_err(|e| self.failed = Some(e.clone()))
    }

    /// Ranges to fetch ahead, while the caller works on batches it has: those of the windows
    /// after the current one, up to `windows` of them, each list returned once. Push them when
    /// they arrive. `None` when there is nothing more to ask ahead for.
    pub fn prefetch(&mut self, windows: usize) -> Option<Vec<Range<u64>>> {
        if !self.opened || self.failed.is_some() || self.windows.is_empty() {
            return None;
        }
        for i in 1..self.windows.len() {
            // A failure here comes back when the window is the current one.
            while let Ok(true) = self.advance(i) {}
            let pushed = &self.pushed;
            let Some(window) = self.windows.get_mut(i) else {
                break;
            };
            if !window.asked && !matches!(window.stage, Stage::Ready(_)) {
                window.asked = true;
                let missing = missing(pushed, &window.reads);
                if !missing.is_empty() {
                    return Some(missing);
                }
            }
        }
        if self.windows.len() > windows || self.learning() {
            return None;
        }
        let mut window = self.plan_window().ok()??;
        window.asked = true;
        let missing = missing(&self.pushed, &window.reads);
        self.windows.push_back(window);
        Some(missing).filter(|m| !m.is_empty())
    }

    /// Selects record batches `batches` (clamped to the file), read in planned windows with
    /// the current [`ScanOptions`]. Forgets planned windows and pushed bytes.
    pub fn select(&mut self, batches: Range<usize>) {
        self.reset();
        self.mode = Mode::Scan;
        self.next = batches.start;
        self.end = batches.end;
    }

    /// Selects record batch `index` alone: one range of its metadata and body (an index past
    /// the file is an error from [`Self::try_decode`]). Forgets planned windows and pushed bytes.
    pub fn select_batch(&mut self, index: usize) {
        self.reset();
        self.mode = Mode::Batch;
        self.next = index;
        self.end = index.saturating_add(1);
    }

    /// Sets how selections plan their reads from the next window on.
    pub fn set_scan_options(&mut self, options: ScanOptions) {
        self.scan = options;
    }

    /// How selections plan their reads.
    pub fn scan_options(&self) -> &ScanOptions {
        &self.scan
    }

    /// Decodes only the fields `projection` selects from the next batch on (windows already
    /// planned are planned again). Set before the footer is read, it applies once it is.
    pub fn set_projection(&mut self, projection: Projection) {
        let unreturned = self.windows.iter().find_map(|w| match &w.stage {
            Stage::Blocks => w.blocks.first().map(|(index, _)| *index),
            Stage::Buffers(pending) => pending.first().map(|p| p.index),
            Stage::Ready(ready) => ready.front().map(|p| p.index),
        });
        if let Some(index) = unreturned {
            self.next = index;
        }
        self.windows.clear();
        self.dictionaries_planned = self.dictionaries_read;
        self.layout = None;
        self.state.set_projection(projection);
    }

    /// Whether the footer has been read.
    pub fn is_open(&self) -> bool {
        self.opened
    }

    /// The file's schema (empty until the footer is read).
    pub fn schema(&self) -> &Arc<Schema> {
        &self.state.schema
    }

    /// The schema of the batches returned: the file's, projected.
    pub fn batch_schema(&self) -> &Arc<Schema> {
        &self.state.projected
    }

    /// The projection in force.
    pub fn projection(&self) -> &Projection {
        &self.state.projection
    }

    /// The footer's custom metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The record batch blocks listed in the footer.
    pub fn record_batch_blocks(&self) -> &[Block] {
        &self.record_batch_blocks
    }

    /// The dictionary blocks listed in the footer.
    pub fn dictionary_blocks(&self) -> &[Block] {
        &self.dictionary_blocks
    }

    /// The file's length, as given to [`Self::new`].
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    fn reset(&mut self) {
        self.windows.clear();
        self.pushed.clear();
        self.first_window = true;
        self.dictionaries_planned = self.dictionaries_read;
        self.failed = None;
    }

    fn step(&mut self) -> FormatResult<DecodeResult> {
        if !self.opened {
            return self.open();
        }
        loop {
            let Some(front) = self.windows.front_mut() else {
                match self.plan_window()? {
                    Some(window) => self.windows.push_back(window),
                    None => return Ok(DecodeResult::Finished),
                }
                continue;
            };
            if let Stage::Ready(ready) = &mut front.stage {
                let Some(p) = ready.pop_front() else {
                    self.windows.pop_front();
                    continue;
                };
                let exhausted = ready.is_empty();
                let state = &mut self.state;
                let batch = decode_block(p.index, p.block, &p.message, |m| {
                    state.record_batch(m, &p.body)
                })?;
                if exhausted {
                    // Gone at once, so a driver reading ahead plans the next window now.
                    self.windows.pop_front();
                }
                return Ok(DecodeResult::Data(batch));
            }
            if !self.advance(0)? {
                let front = self.windows.front().map_or(&[][..], |w| &w.reads);
                return Ok(DecodeResult::NeedsData(missing(&self.pushed, front)));
            }
        }
    }

    /// Reads the footer from the tail, asking for the tail or the footer's missing start.
    fn open(&mut self) -> FormatResult<DecodeResult> {
        let file_len = self.file_len;
        if file_len == 0 {
            return Err(FormatErrorKind::EmptyInput.into());
        }
        let least = TRAILER_LEN + LEADING_LEN as usize;
        let tail_len = (self.state.options.footer_read_size.max(least) as u64).min(file_len);
        let tail_start = file_len - tail_len;
        let Some(tail) = self.pushed.get(tail_start..file_len) else {
            return Ok(DecodeResult::NeedsData(
                self.pushed.missing(&(tail_start..file_len)),
            ));
        };
        let footer = match format::footer_range(&tail, tail_start, file_len) {
            Ok(footer) => footer,
            // Without the trailing magic, the file's first bytes tell what it is (one more
            // read, on this failure only).
            Err(e) if e.kind == FormatErrorKind::BadMagic && tail_start > 0 => {
                let leading = 0..file_len.min(16);
                let Some(leading_bytes) = self.pushed.get(leading.clone()) else {
                    return Ok(DecodeResult::NeedsData(self.pushed.missing(&leading)));
                };
                return Err(format::missing_trailer(&leading_bytes, file_len));
            }
            Err(e) => return Err(e),
        };
        let footer_start = footer.start;
        let Some(footer_bytes) = self.pushed.get(footer.clone()) else {
            return Ok(DecodeResult::NeedsData(self.pushed.missing(&footer)));
        };
        let footer = read_footer(&footer_bytes, footer_start)?;
        self.dictionary_blocks = footer.dictionaries;
        self.record_batch_blocks = footer.record_batches;
        self.metadata = footer.metadata;
        let schema = footer.schema;
        let projection = core::mem::take(&mut self.state.projection);
        self.state = ReadState::new(schema, self.state.options.clone());
        if !projection.is_all() {
            self.state.set_projection(projection);
        }
        self.opened = true;
        // The tail is not kept: blocks are planned reads of their own.
        self.pushed.clear();
        Ok(DecodeResult::Footer)
    }

    /// The next window of the selection, or `None` when every batch is planned.
    fn plan_window(&mut self) -> FormatResult<Option<Window>> {
        let batches = self.record_batch_blocks.len();
        let mut blocks = Vec::new();
        if self.mode == Mode::Batch {
            if self.next >= self.end {
                return Ok(None);
            }
            let block = self.record_batch_blocks.get(self.next).copied();
            blocks.push((self.next, block.ok_or(no_batch(self.next))?));
            self.next = self.end;
        } else {
            let end = self.end.min(batches);
            let mut bytes = 0u64;
            while let Some(block) = self
                .record_batch_blocks
                .get(self.next)
                .filter(|_| self.next < end)
            {
                let size = self.planned_bytes(block);
                if !blocks.is_empty() && bytes.saturating_add(size) > self.scan.readahead {
                    break;
                }
                bytes = bytes.saturating_add(size);
                blocks.push((self.next, *block));
                self.next += 1;
            }
            if blocks.is_empty() {
                return Ok(None);
            }
        }
        let dictionaries = if !self.dictionaries_planned && self.state.needs_dictionaries {
            self.dictionaries_planned = true;
            self.dictionary_blocks.clone()
        } else {
            Vec::new()
        };
        let mut whole = self.mode == Mode::Batch || self.state.projection.is_all();
        let mut checks_magic = false;
        let mut reads = match (self.mode, self.scan.network) {
            (Mode::Batch, _) => {
                let blocks_read = blocks.iter().map(|(_, b)| first_read(b, true));
                dictionaries.iter().map(extent).chain(blocks_read).collect()
            }
            (Mode::Scan, Some(network)) => {
                let (plan, reads) = self.plan_modelled(&network, &blocks, &dictionaries);
                whole = plan == WindowPlan::Whole;
                let keep = match plan {
                    WindowPlan::Whole => self.whole_blocks(&blocks),
                    WindowPlan::Learn => 1,
                    WindowPlan::Phases | WindowPlan::Together => blocks.len(),
                };
                if let Some(&(index, _)) = blocks.get(keep) {
                    blocks.truncate(keep);
                    self.next = index;
                }
                reads
            }
            (Mode::Scan, None) => {
                let blocks_read = blocks.iter().map(|(_, b)| first_read(b, whole));
                let wanted: Vec<Range<u64>> =
                    dictionaries.iter().map(extent).chain(blocks_read).collect();
                self.coalesce(&wanted)
            }
        };
        if self.mode == Mode::Scan
            && self.first_window
            && let Some(first) = reads.first_mut()
            && first.start <= self.scan.hole_size_limit
        {
            first.start = 0;
            checks_magic = true;
        }
        self.first_window = false;
        Ok(Some(Window {
            blocks,
            dictionaries,
            whole,
            stage: Stage::Blocks,
            reads,
            checks_magic,
            asked: false,
        }))
    }

    /// Whether a window planned by the model is reading a block's metadata to learn where
    /// the projection's buffers lie: the next window waits for it, to be planned with them.
    fn learning(&self) -> bool {
        self.scan.network.is_some()
            && !self.state.projection.is_all()
            && self.layout.is_none()
            && !self.windows.is_empty()
    }

    /// The bytes a window's plan is expected to read of `block`: all of it, or under a
    /// network model with a projection, its metadata and the buffers predicted (or, before
    /// any block's buffers are known, its share of the body by the fields selected).
    fn planned_bytes(&self, block: &Block) -> u64 {
        let all = extent(block).end - extent(block).start;
        if self.scan.network.is_none() || self.state.projection.is_all() {
            return all;
        }
        let meta = block.meta_data_length as u64;
        let body = block.body_length as u64;
        let buffers: u64 = match &self.layout {
            Some(layout) => predict(&layout.buffers, layout.body_len, body)
                .iter()
                .map(|r| r.end - r.start)
                .sum(),
            None => self.body_share(body),
        };
        meta.saturating_add(buffers).min(all)
    }

    /// The part of a body of `body` bytes the projection is expected to read, by the share
    /// of the top-level fields it selects.
    fn body_share(&self, body: u64) -> u64 {
        let fields = self.state.schema.fields().len().max(1) as u128;
        let selected = self.state.projected.fields().len() as u128;
        u64::try_from(u128::from(body) * selected / fields).unwrap_or(body)
    }

    /// The blocks of `blocks` (at least one) whose whole extents fit the readahead.
    fn whole_blocks(&self, blocks: &[(usize, Block)]) -> usize {
        let mut bytes = 0u64;
        let fits = blocks.iter().skip(1).take_while(|(_, b)| {
            bytes = bytes.saturating_add(extent(b).end - extent(b).start);
            bytes <= self.scan.readahead
        });
        1 + fits.count()
    }

    /// Compares the plans for a window of `blocks` (with `dictionaries`) on `network` and
    /// returns the cheapest and its first reads. See [`WindowPlan`].
    fn plan_modelled(
        &self,
        network: &Network,
        blocks: &[(usize, Block)],
        dictionaries: &[Block],
    ) -> (WindowPlan, Vec<Range<u64>>) {
        let dictionaries = || dictionaries.iter().map(extent);
        let window = self.scan.readahead;
        // Reads of `wanted`, priced without the bytes the source holds.
        let parts = |wanted: &[Range<u64>]| -> (Vec<Range<u64>>, Cost) {
            let merged = |wanted: &[Range<u64>]| {
                let bytes = wanted.iter().map(|r| r.end - r.start).sum::<u64>();
                let part = network.part_size(bytes, window.max(bytes));
                coalesce_for(network, wanted, part)
            };
            let (reads, cost) = merged(wanted);
            if self.scan.held.is_empty() {
                (reads, cost)
            } else {
                (reads, merged(&self.scan.unheld(wanted)).1)
            }
        };
        let whole_plan = |blocks: &[(usize, Block)]| -> (Vec<Range<u64>>, Cost) {
            let wanted: Vec<Range<u64>> = dictionaries()
                .chain(blocks.iter().map(|(_, b)| extent(b)))
                .collect();
            let runs = coalesce(&wanted, network.bandwidth_delay(), u64::MAX);
            let bytes = runs.iter().map(|r| r.end - r.start).sum::<u64>();
            let reads = split(&runs, network.part_size(bytes, window.max(bytes)));
            let unheld = self.scan.unheld(&reads);
            let cost = network.wave(unheld.iter().map(|r| r.end - r.start));
            (reads, cost)
        };
        if self.state.projection.is_all() {
            return (WindowPlan::Whole, whole_plan(blocks).0);
        }
        let (_, whole) = whole_plan(blocks);
        let metadata = |blocks: &[(usize, Block)]| -> Vec<Range<u64>> {
            dictionaries()
                .chain(blocks.iter().map(|(_, b)| first_read(b, false)))
                .collect()
        };
        if let Some(layout) = &self.layout {
            let mut wanted = metadata(blocks);
            for (_, block) in blocks {
                let body = body_extent(block);
                let guessed = predict(&layout.buffers, layout.body_len, body.end - body.start);
                wanted.extend(
                    guessed
                        .iter()
                        .map(|r| body.start + r.start..body.start + r.end),
                );
            }
            let (together, cost) = parts(&wanted);
            return if network.compare(&whole, &cost).is_lt() {
                (
                    WindowPlan::Whole,
                    whole_plan(blocks.get(..self.whole_blocks(blocks)).unwrap_or(blocks)).0,
                )
            } else {
                (WindowPlan::Together, together)
            };
        }
        // No block's buffers known yet: metadata first, then the buffers, for every block of
        // the window, or for its first block only (after which the others are read with their
        // buffers predicted, one request each).
        let share = |(_, b): &(usize, Block)| self.body_share(b.body_length as u64);
        // Blocks whose bodies (or whole extents) the source does not hold cost requests.
        let body_unheld = |(_, b): &&(usize, Block)| !self.scan.holds(&body_extent(b));
        let unheld = |(_, b): &&(usize, Block)| !self.scan.holds(&extent(b));
        let (meta_reads, meta_cost) = parts(&metadata(blocks));
        let phases = meta_cost.then(network.wave(blocks.iter().filter(body_unheld).map(share)));
        let first = blocks.get(..1).unwrap_or_default();
        let (learn_reads, learn_cost) = parts(&metadata(first));
        let rest = blocks.get(1..).unwrap_or_default().iter().filter(unheld);
        let rest = rest.map(|block| {
            let (_, b) = block;
            (b.meta_data_length as u64).saturating_add(share(block))
        });
        let learn = learn_cost
            .then(network.wave(first.iter().filter(body_unheld).map(share)))
            .then(network.wave(rest));
        let mut best = (WindowPlan::Whole, whole);
        for (plan, cost) in [(WindowPlan::Phases, phases), (WindowPlan::Learn, learn)] {
            if network.compare(&cost, &best.1).is_lt() {
                best = (plan, cost);
            }
        }
        let reads = match best.0 {
            WindowPlan::Whole => {
                whole_plan(blocks.get(..self.whole_blocks(blocks)).unwrap_or(blocks)).0
            }
            WindowPlan::Learn => learn_reads,
            WindowPlan::Phases | WindowPlan::Together => meta_reads,
        };
        (best.0, reads)
    }

    fn coalesce(&self, wanted: &[Range<u64>]) -> Vec<Range<u64>> {
        coalesce(
            wanted,
            self.scan.hole_size_limit,
            self.scan.range_size_limit,
        )
    }

    /// The reads for buffers still missing: merged by the network model when there is one,
    /// else within the fixed limits.
    fn coalesce_missing(&self, wanted: &[Range<u64>]) -> Vec<Range<u64>> {
        match &self.scan.network {
            Some(network) => {
                let bytes = wanted.iter().map(|r| r.end - r.start).sum::<u64>();
                let window = self.scan.readahead.max(bytes);
                coalesce_for(network, wanted, network.part_size(bytes, window)).0
            }
            None => self.coalesce(wanted),
        }
    }

    /// Moves window `i` to its next stage if its reads have all been pushed; whether it moved.
    /// On error the window stays as it was (dictionaries already decoded stay decoded).
    fn advance(&mut self, i: usize) -> FormatResult<bool> {
        let Some(window) = self.windows.get(i) else {
            return Ok(false);
        };
        if matches!(window.stage, Stage::Ready(_)) || !self.pushed.holds_all(&window.reads) {
            return Ok(false);
        }
        let pushed = &self.pushed;
        let mut learned = None;
        let (stage, reads) = match &window.stage {
            Stage::Blocks => {
                if window.checks_magic
                    && pushed.get(0..MAGIC.len() as u64).as_deref() != Some(&MAGIC[..])
                {
                    return Err(FormatError::from(FormatErrorKind::BadMagic).at(0));
                }
                for (d, block) in window.dictionaries.iter().enumerate() {
                    // Dictionaries outlive the window: an owned copy keeps them from pinning
                    // the window's memory for the rest of the reading.
                    let bytes = Bytes::from_vec(get(pushed, extent(block), d)?.to_vec());
                    let (message, body) = MessageBytes::of_block(d, *block, &bytes)?;
                    let state = &mut self.state;
                    decode_block(d, *block, &message, |m| {
                        state.dictionary_batch(m, &body, true)
                    })?;
                }
                let mut pending = Vec::with_capacity(window.blocks.len());
                for &(index, block) in &window.blocks {
                    let bytes = get(pushed, first_read(&block, window.whole), index)?;
                    let (message, body) = MessageBytes::of_block(index, block, &bytes)?;
                    pending.push(Pending {
                        index,
                        block,
                        message,
                        body: FetchedBody::Whole(body),
                        buffers: Vec::new(),
                    });
                }
                if window.whole {
                    (Stage::Ready(pending.into()), Vec::new())
                } else {
                    // Buffers a read of the window's first stage brought (a gap read through,
                    // or a prediction that held) are not asked for again.
                    let mut wanted = Vec::new();
                    for p in &mut pending {
                        p.buffers = selected_buffers(&self.state, p)?;
                        wanted.extend(p.buffers.iter().flat_map(|b| pushed.missing(b)));
                    }
                    learned = pending.last().map(|p| {
                        let body = body_extent(&p.block);
                        LastBuffers {
                            body_len: body.end - body.start,
                            buffers: p
                                .buffers
                                .iter()
                                .map(|r| r.start - body.start..r.end - body.start)
                                .collect(),
                        }
                    });
                    (Stage::Buffers(pending), self.coalesce_missing(&wanted))
                }
            }
            Stage::Buffers(pending) => {
                let mut ready = VecDeque::with_capacity(pending.len());
                for p in pending {
                    ready.push_back(Pending {
                        index: p.index,
                        block: p.block,
                        message: p.message.clone(),
                        body: chunks(pushed, p)?,
                        buffers: Vec::new(),
                    });
                }
                (Stage::Ready(ready), Vec::new())
            }
            Stage::Ready(_) => return Ok(false),
        };
        let Some(window) = self.windows.get_mut(i) else {
            return Ok(false);
        };
        if !window.dictionaries.is_empty() {
            self.dictionaries_read = true;
        }
        if learned.is_some() {
            self.layout = learned;
        }
        window.stage = stage;
        window.reads = reads;
        window.asked = false;
        self.prune();
        Ok(true)
    }

    /// Forgets pushed bytes no window will read.
    fn prune(&mut self) {
        let needed: Vec<Range<u64>> = self
            .windows
            .iter()
            .filter(|w| !matches!(w.stage, Stage::Ready(_)))
            .flat_map(|w| w.extent().chain(w.reads.iter().cloned()))
            .collect();
        self.pushed.retain(|piece| {
            needed
                .iter()
                .any(|n| n.start < piece.end && piece.start < n.end)
        });
    }
}

/// A file's footer, read: its schema, custom metadata and blocks.
pub(super) struct FooterIndex {
    pub(super) schema: Schema,
    pub(super) metadata: Metadata,
    pub(super) dictionaries: Vec<Block>,
    pub(super) record_batches: Vec<Block>,
}

/// Reads the footer flatbuffer `bytes`, which start at `footer_start` in the file: every block
/// must lie between the leading magic and the footer. Errors are located in the file.
pub(super) fn read_footer(bytes: &[u8], footer_start: u64) -> FormatResult<FooterIndex> {
    let located = |e: FormatError| e.rebase(footer_start);
    let footer = format::Footer::parse(bytes).map_err(located)?;
    let schema = Schema::from_fb(footer.schema().map_err(located)?, field_budget(bytes.len()))
        .map_err(located)?;
    let metadata = footer
        .custom_metadata()
        .and_then(|kvs| {
            kvs.iter()
                .map(|kv| kv.map(|kv| (kv.key.to_string(), kv.value.to_string())))
                .collect::<FormatResult<Metadata>>()
        })
        .map_err(located)?;
    let blocks = |list: FormatResult<format::Blocks<'_>>| -> FormatResult<Vec<Block>> {
        let list = list?;
        let mut out = Vec::with_capacity(list.len());
        for (i, block) in list.iter().enumerate() {
            block
                .check(footer_start)
                .map_err(|e| e.in_batch(i as u64))?;
            out.push(block);
        }
        Ok(out)
    };
    Ok(FooterIndex {
        schema,
        metadata,
        dictionaries: blocks(footer.dictionaries()).map_err(located)?,
        record_batches: blocks(footer.record_batches()).map_err(located)?,
    })
}

/// The error for record batch `index` when the file has no such batch.
pub(super) fn no_batch(index: usize) -> FormatErrorKind {
    FormatErrorKind::InvalidValue {
        what: "record batch index",
        value: i64::try_from(index).unwrap_or(i64::MAX),
    }
}

/// The parts of `reads` not pushed yet.
fn missing(pushed: &Pushed, reads: &[Range<u64>]) -> Vec<Range<u64>> {
    reads.iter().flat_map(|r| pushed.missing(r)).collect()
}

/// The pushed bytes of `range`, which the window's reads hold.
fn get(pushed: &Pushed, range: Range<u64>, batch: usize) -> FormatResult<Bytes<'static>> {
    pushed.get(range.clone()).ok_or_else(|| {
        debug_assert!(false, "a window's ranges lie inside its reads");
        FormatError::from(FormatErrorKind::LayoutMismatch {
            what: "range outside the planned reads",
        })
        .at(range.start)
        .in_batch(batch as u64)
    })
}

/// The file ranges of the buffers the projection selects in a pending batch's body.
fn selected_buffers(state: &ReadState, p: &Pending) -> FormatResult<Vec<Range<u64>>> {
    let located = |e: FormatError| e.in_batch(p.index as u64);
    let message = p.message.parse(p.block).map_err(located)?;
    let format::MessageHeader::RecordBatch(header) = message.header().map_err(located)? else {
        return Err(located(unexpected("RecordBatch", message)));
    };
    let body = body_extent(&p.block);
    let ranges = buffer_ranges(
        state.schema.fields(),
        &state.projection,
        header,
        body.end - body.start,
        message.version().map_err(located)?,
    )
    .map_err(|e| located(e.rebase(body.start)))?;
    Ok(ranges
        .into_iter()
        .map(|r| body.start + r.start..body.start + r.end)
        .collect())
}

/// A projected batch's body: its selected buffers, merged where they touch, as chunks.
fn chunks(pushed: &Pushed, p: &Pending) -> FormatResult<FetchedBody<'static>> {
    let body = body_extent(&p.block);
    let mut out = Vec::new();
    for range in coalesce(&p.buffers, 0, u64::MAX) {
        let bytes = get(pushed, range.clone(), p.index)?;
        out.push((range.start - body.start, bytes));
    }
    Ok(FetchedBody::Chunks {
        len: body.end - body.start,
        chunks: out,
    })
}

fn extent(block: &Block) -> Range<u64> {
    let start = block.offset as u64;
    start..start + block.meta_data_length as u64 + block.body_length as u64
}

/// The bytes of `block` a window reads first: all of them when `whole`, else its metadata.
fn first_read(block: &Block, whole: bool) -> Range<u64> {
    let all = extent(block);
    if whole {
        return all;
    }
    all.start..all.start + block.meta_data_length as u64
}

fn body_extent(block: &Block) -> Range<u64> {
    let end = extent(block).end;
    end - block.body_length as u64..end
}

/// Decodes block `index` of its kind with `decode`, given its parsed message; errors are
/// located in the file and name the block.
fn decode_block<T>(
    index: usize,
    block: Block,
    message: &MessageBytes,
    decode: impl FnOnce(format::Message<'_>) -> FormatResult<T>,
) -> FormatResult<T> {
    let batch = index as u64;
    let parsed = message.parse(block).map_err(|e| e.in_batch(batch))?;
    decode(parsed).map_err(|e| e.rebase(body_extent(&block).start).in_batch(batch))
}

/// A message's flatbuffer and where it starts in the file.
#[derive(Clone)]
struct MessageBytes {
    bytes: Bytes<'static>,
    offset: u64,
}

impl MessageBytes {
    /// The flatbuffer inside the first `metaDataLength` bytes of `bytes`, which hold block
    /// `index` of its kind, and the body after them (if `bytes` hold it).
    fn of_block(
        index: usize,
        block: Block,
        bytes: &Bytes<'static>,
    ) -> FormatResult<(Self, Bytes<'static>)> {
        let flatbuffer = block
            .flatbuffer(bytes)
            .map_err(|e| e.in_batch(index as u64))?;
        let message = MessageBytes {
            offset: block.offset as u64 + flatbuffer.start as u64,
            bytes: bytes.slice(flatbuffer).unwrap_or_default(),
        };
        let meta_len = usize::try_from(block.meta_data_length).unwrap_or_default();
        Ok((
            message,
            bytes.slice(meta_len..bytes.len()).unwrap_or_default(),
        ))
    }

    /// The message view, checked to declare the body length its block does.
    fn parse(&self, block: Block) -> FormatResult<format::Message<'_>> {
        block.message(&self.bytes, self.offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_bytes_are_left_out_of_what_is_priced() {
        let options = ScanOptions::default().with_held(100..200);
        let ranges = [0..50, 50..150, 150..180, 180..300, 250..260];
        let unheld = options.unheld(&ranges);
        assert_eq!(unheld, [0..50, 50..100, 200..300, 250..260]);
        assert!(options.holds(&(120..200)));
        assert!(!options.holds(&(90..110)));
        let nothing_held = ScanOptions::default();
        assert_eq!(nothing_held.unheld(&ranges), ranges);
    }
}
