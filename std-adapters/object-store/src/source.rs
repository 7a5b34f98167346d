//! [`ObjectSource`]: one object of an [`ObjectStore`] as an [`AsyncRandomAccess`] source.
//!
//! It uses `read`, `head`, `request`, `log` and `error`.
//!
//! - **Opening is one request.** A suffix GET of the object's last [`SourceOptions::tail`]
//!   bytes returns them and the object's size, so there is no HEAD; the reader's first read
//!   (the footer, at most [`quiver::ipc::ReaderOptions::footer_read_size`] bytes from the end, which
//!   is the same 64 KiB by default) is then served from those bytes. A store that refuses suffix
//!   ranges (Azure), or an empty object, costs a HEAD and a bounded GET instead; a size the caller
//!   already knows (from a listing) costs nothing, and a scan's object within its head is then
//!   that one GET, footer and all.
//! - **A scan reads the file's start with its end** ([`Reading::Scan`], some columns of every
//!   batch; [`Reading::First`], the first batches or rows; [`SourceOptions::head`]): a GET of
//!   its first bytes goes out beside the opening one, so the scan's first reads (the schema,
//!   the first block's metadata that says where a projection's buffers lie, the first
//!   blocks, a stream's first messages) wait for no round trip of their own. Ranges are
//!   served from it as it arrives, and it is cut once the scan has read from it and moves
//!   past it (`head.rs`). One column of a 300 MB file: two round trips, not three;
//!   `--limit 10` of a 7.8 MB one: one, not two.
//! - **A whole read is parallel parts, in order.** A caller that reads every byte of the
//!   object front to back opens it with [`ObjectSource::open_whole`]: a ranged GET of its
//!   first part gives the size; the rest follows in parts of the cost model's size, as many
//!   in flight as [`SourceOptions::window`] holds, handed over in order.
//! - **The planner decides by a cost model** of the network ([`NetworkMetrics::model`]): the
//!   time to first byte measured on the opening request, the bandwidth of one request on any
//!   of 1 MiB or more, or both as the caller sets them ([`ObjectSource::scan_options`]).
//! - **Every planned range is one ranged GET**, up to [`SourceOptions::max_in_flight`] at once,
//!   each a task of its own: it goes out as soon as it is made, not after the whole list is
//!   (61 GETs took 6 ms to make on loopback, where each `connect` shakes hands at once).
//!   The reader's planner has already merged neighbours by its model, so the
//!   ranges are not passed through `ObjectStore::get_ranges`, which would merge them again at its
//!   own 1 MiB gap with no size cap. The GETs are spawned on the tokio runtime the source was
//!   opened on, so they progress while the caller decodes and encodes the batches it has.
//! - **Progress, not size** (`request.rs`): a ranged GET whose answer is late is sent again
//!   ([`SourceOptions::hedge`]), one whose body stalls is asked again for the rest
//!   ([`SourceOptions::stall_timeout`]); the opening and streaming GETs resume after stalls too.
//! - **Exactly the bytes asked for.** `object_store` retries transient failures (5xx, resets,
//!   timeouts) and refuses a `200` answer to a ranged GET; a body of the wrong length is an
//!   [`ObjectError::Length`] here, never data. Bodies are kept without copying.
//! - **Every request is logged** ([`RequestLog`]): how many were sent, the bytes they brought
//!   and how many round trips they took one after another.

use crate::ObjectError;
use crate::head::Head;
use crate::log::{RequestLog, RequestStats};
use crate::request::{Hedge, Policy, Resuming};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use quiver::bytes::Bytes;
use quiver::ipc::ScanOptions;
use quiver::source::{AsyncRandomAccess, SharedRanges};
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// Bytes read from the end of an object when it is opened: quiver's default footer read.
pub const DEFAULT_TAIL: u64 = 64 * 1024;

/// Ranged GETs in flight at once by default: the block metadata of a file of up to 128 batches
/// goes out in one wave.
///
/// `object_store`'s HTTP client (reqwest on hyper) opens a connection for every request in
/// flight: its pool settings bound only the idle connections it keeps. Measured
/// (`benches/README.md`, "Connections"): 32 and 128 concurrent ranged GETs from one S3 client
/// all reached the server within 2 and 25 ms, one wave. A server that answers one request at a
/// time (`moto_server`, about 6 ms of Python each) makes the answers come back spread out; that
/// is the server, not the client.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 128;

/// How an [`ObjectSource`] reads.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SourceOptions {
    /// Bytes of the opening suffix GET (at least the reader's `footer_read_size`).
    pub tail: u64,
    /// Bytes of the object's start read by a GET sent with the opening one (0: none), for a
    /// scan of a file: its first reads (the schema, the first block's metadata, the first
    /// parts) then cost no round trip of their own (see `head.rs`). A scan's reads go
    /// through the file in order, so the GET is cut once a read goes past it.
    pub head: u64,
    /// Most ranged GETs in flight at once.
    pub max_in_flight: usize,
    /// Bytes a streaming GET ([`ObjectSource::reader`]) receives ahead of its reader, at most.
    pub read_ahead: usize,
    /// The object's size, when the caller knows it: opening then sends no request.
    pub size: Option<u64>,
    /// What the network gives, for the planner's limits ([`ObjectSource::scan_options`]); the
    /// time to first byte is measured on the opening request when not given.
    pub network: NetworkMetrics,
    /// Bytes a planned read holds in memory at once: a window of a scan, the parts in flight
    /// of a whole read.
    pub window: u64,
    /// How long a ranged GET may go without a byte (its answer, or its body's next bytes)
    /// before the rest is asked for again, from its first missing byte (at most
    /// [`crate::STALL_RETRIES`] times).
    pub stall_timeout: Duration,
    /// When a ranged GET whose answer is late is sent again; `None` never.
    pub hedge: Option<Hedge>,
}

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions {
            tail: DEFAULT_TAIL,
            head: 0,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            read_ahead: crate::READ_AHEAD,
            size: None,
            network: NetworkMetrics::default(),
            window: DEFAULT_WINDOW,
            stall_timeout: crate::request::DEFAULT_STALL_TIMEOUT,
            hedge: Some(Hedge::default()),
        }
    }
}

/// Bytes a planned read holds in memory at once by default ([`SourceOptions::window`]).
pub const DEFAULT_WINDOW: u64 = 64 * 1024 * 1024;

impl SourceOptions {
    /// Sets the bytes of the opening suffix GET.
    #[must_use]
    pub fn with_tail(mut self, bytes: u64) -> Self {
        self.tail = bytes;
        self
    }

    /// Sets the bytes of the object's start read with the opening request (0: none); a scan
    /// of a file takes [`NetworkMetrics::first_part`], as a whole read's first request does.
    #[must_use]
    pub fn with_head(mut self, bytes: u64) -> Self {
        self.head = bytes;
        self
    }

    /// Sets the most ranged GETs in flight at once (at least 1).
    #[must_use]
    pub fn with_max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests.max(1);
        self
    }

    /// Sets the bytes a streaming GET receives ahead of its reader (at least 1).
    #[must_use]
    pub fn with_read_ahead(mut self, bytes: usize) -> Self {
        self.read_ahead = bytes.max(1);
        self
    }

    /// Takes the object's size as given: opening sends no request.
    #[must_use]
    pub fn with_size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// Sets the network's time to first byte and bandwidth.
    #[must_use]
    pub fn with_network(mut self, network: NetworkMetrics) -> Self {
        self.network = network;
        self
    }

    /// Sets the bytes a planned read holds in memory at once (at least 1 MiB).
    #[must_use]
    pub fn with_window(mut self, bytes: u64) -> Self {
        self.window = bytes.max(1024 * 1024);
        self
    }

    /// Sets how long a ranged GET may go without a byte before the rest is asked for again
    /// (at least 1 ms).
    #[must_use]
    pub fn with_stall_timeout(mut self, wait: Duration) -> Self {
        self.stall_timeout = wait.max(Duration::from_millis(1));
        self
    }

    /// Sets when a late ranged GET is sent again (`None`: never).
    #[must_use]
    pub fn with_hedge(mut self, hedge: Option<Hedge>) -> Self {
        self.hedge = hedge;
        self
    }
}

/// A network's figures, from which the planner's cost model ([`quiver::cost::Network`]) and
/// limits follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetworkMetrics {
    /// Time from sending a request to its first byte; `None` measures it on the opening request.
    pub time_to_first_byte: Option<Duration>,
    /// Bytes per second one request receives.
    pub bandwidth: u64,
    /// Bytes per second all requests together receive.
    pub total_bandwidth: u64,
    /// What one request costs besides its time (its price, as time the caller would give).
    pub request_cost: Duration,
    /// Whether the bandwidth of one request is measured once a request of 1 MiB or more has
    /// been received (the fastest such request's body rate), replacing `bandwidth` for the
    /// plans made after it. Setting the bandwidth turns this off.
    pub measure_bandwidth: bool,
}

impl Default for NetworkMetrics {
    /// Time to first byte measured when opening; the other figures those of S3 from EC2
    /// ([`quiver::cost`]'s module docs): 64 MiB/s per request, 1 GiB/s in all, 1 ms a request.
    fn default() -> Self {
        let model = quiver::cost::Network::default();
        NetworkMetrics {
            time_to_first_byte: None,
            bandwidth: model.request_bandwidth,
            total_bandwidth: model.total_bandwidth,
            request_cost: Duration::from_micros(model.request_cost_us),
            measure_bandwidth: true,
        }
    }
}

/// Time to first byte assumed when none was given or measured.
const ASSUMED_TIME_TO_FIRST_BYTE: Duration = Duration::from_millis(50);

impl NetworkMetrics {
    /// Sets the time to first byte.
    #[must_use]
    pub fn with_time_to_first_byte(mut self, time: Duration) -> Self {
        self.time_to_first_byte = Some(time);
        self
    }

    /// Sets the bandwidth of one request, in bytes per second.
    #[must_use]
    pub fn with_bandwidth(mut self, bytes_per_second: u64) -> Self {
        self.bandwidth = bytes_per_second.max(1);
        self.measure_bandwidth = false;
        self
    }

    /// Sets the bandwidth of all requests together, in bytes per second.
    #[must_use]
    pub fn with_total_bandwidth(mut self, bytes_per_second: u64) -> Self {
        self.total_bandwidth = bytes_per_second.max(1);
        self
    }

    /// Sets what one request costs besides its time.
    #[must_use]
    pub fn with_request_cost(mut self, cost: Duration) -> Self {
        self.request_cost = cost;
        self
    }

    /// The time to first byte in force: as given or measured, else 50 ms.
    pub fn first_byte(&self) -> Duration {
        self.time_to_first_byte
            .unwrap_or(ASSUMED_TIME_TO_FIRST_BYTE)
    }

    /// The bytes of a whole read's first request ([`ObjectSource::open_whole`]), sent before
    /// the object's size is known: what flows to one request during one time to first byte
    /// (the bandwidth-delay product), between 1 and 16 MiB.
    pub fn first_part(&self) -> u64 {
        self.model(1).bandwidth_delay().clamp(1 << 20, 16 << 20)
    }

    /// The planner's cost model for this network with `max_in_flight` requests at once.
    pub fn model(&self, max_in_flight: usize) -> quiver::cost::Network {
        let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        quiver::cost::Network::default()
            .with_first_byte_us(micros(self.first_byte()))
            .with_request_bandwidth(self.bandwidth.max(1))
            .with_total_bandwidth(self.total_bandwidth.max(1))
            .with_max_in_flight(max_in_flight.max(1) as u64)
            .with_max_requests(max_in_flight.max(1) as u64)
            .with_request_cost_us(micros(self.request_cost))
    }

    /// The planner's limits for this network:
    ///
    /// - **range size**: a request should spend at least 90% of its time transferring, so it
    ///   carries 9x the bytes that flow during its time to first byte
    ///   (`ttfb x bandwidth x 0.9 / 0.1`), between 1 MiB and 64 MiB (Arrow C++'s rule and cap);
    /// - **window**: two such requests' worth, at least 8 MiB, so a window's reads go out
    ///   together and memory stays at about two windows (one decoded, one in flight) whatever
    ///   the object's size;
    /// - **hole size**: 8 KiB whatever the network. The ranges of a window go out at once, so a
    ///   gap read through saves a request but no round trip: it is worth it only when reading
    ///   it costs less than a request's own overhead (headers, the store's per-request work),
    ///   and merging wide gaps would fetch whole files for one column.
    pub fn scan_options(&self) -> ScanOptions {
        const MIB: u64 = 1024 * 1024;
        let ttfb = self
            .time_to_first_byte
            .unwrap_or(ASSUMED_TIME_TO_FIRST_BYTE);
        let in_flight_bytes = (ttfb.as_secs_f64() * self.bandwidth as f64) as u64;
        let range = in_flight_bytes.saturating_mul(9).clamp(MIB, 64 * MIB);
        ScanOptions::default()
            .with_hole_size_limit(8 * 1024)
            .with_range_size_limit(range)
            .with_readahead((2 * range).max(8 * MIB))
    }
}

/// How a caller will read an object, which decides how it is opened
/// ([`ObjectSource::open_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Every column of every batch: the object front to back, in parallel parts.
    Whole,
    /// Some columns of every batch: a file's planned ranges, its start read with its end; a
    /// stream front to back in parallel parts ([`ObjectSource::parts_reader`]).
    Scan,
    /// The first batches or rows: the object's start read with its end, then what the
    /// reader asks for (a stream's next bytes as it reads them, [`ObjectSource::reader`]).
    First,
    /// Batches after the first, or only the schema: the end, then what the reader asks for.
    Peek,
}

impl Reading {
    /// The reading of a selection of `all_columns` or not, of the `batches` in a range (all
    /// without one) and at most `limit` rows (all without one). A selection that starts at the
    /// first batch reads the object's start, so it is read with its end: the first block, or
    /// a stream's first messages, then cost no round trip of their own.
    pub fn of(all_columns: bool, batches: Option<&Range<usize>>, limit: Option<u64>) -> Self {
        let every_batch = batches.is_none() && limit.is_none();
        let from_first = batches.is_none_or(|b| b.start == 0 && !b.is_empty());
        match (all_columns, every_batch) {
            (true, true) => Reading::Whole,
            (false, true) => Reading::Scan,
            _ if from_first && limit != Some(0) => Reading::First,
            _ => Reading::Peek,
        }
    }

    /// Whether the object's start is read with its end.
    pub fn reads_start(self) -> bool {
        matches!(self, Reading::Scan | Reading::First)
    }

    /// This reading of an object of `url`: a scan or the first batches of an `http(s)://`
    /// object open as a peek. Such a server may not serve ranges, and one request finds out;
    /// the two opening GETs of a scan, sent before that is known, would both bring the whole
    /// object. (Every other store's API serves ranges.)
    pub fn on(self, url: &crate::StoreUrl) -> Self {
        match (self, url.kind) {
            (Reading::Scan | Reading::First, "HTTP") => Reading::Peek,
            _ => self,
        }
    }
}

/// One object of an [`ObjectStore`], read with ranged GETs; see the module docs.
#[derive(Debug, Clone)]
pub struct ObjectSource {
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
    /// The object's last bytes, from the opening suffix GET (empty when none was sent).
    tail: bytes::Bytes,
    /// The object's first bytes, arriving, when the options asked for them.
    head: Option<Arc<Head>>,
    max_in_flight: usize,
    read_ahead: usize,
    network: NetworkMetrics,
    window: u64,
    /// When a ranged GET is hedged or resumed.
    policy: Policy,
    runtime: Handle,
    log: Arc<RequestLog>,
}

impl ObjectSource {
    /// Opens `path` in `store` on the current tokio runtime: one suffix GET (see the module
    /// docs), with the head's GET beside it when `options` ask for one. When `options` give
    /// the size: none, or, for an object within the head, the head's GET of all of it, which
    /// is then the tail.
    ///
    /// # Errors
    ///
    /// The store's error (a missing object, denied access, an unreachable endpoint), a response
    /// of the wrong length, or [`ObjectError::NoRuntime`] outside a tokio runtime.
    pub async fn open(
        store: Arc<dyn ObjectStore>,
        path: Path,
        options: SourceOptions,
    ) -> Result<Self, ObjectError> {
        let runtime = Handle::try_current().map_err(|_| ObjectError::NoRuntime)?;
        let log = Arc::new(RequestLog::default());
        let mut network = options.network;
        let head = (options.head > 0).then(|| {
            let object = (Arc::clone(&store), path.clone());
            let patience = (policy(&options, network), Arc::clone(&log));
            Head::start(&runtime, object, options.head, patience)
        });
        let (size, tail) = match (options.size, &head) {
            // A known size within the head: the head brings the whole object, which is then
            // the tail (ONE request, footer and all).
            (Some(size), Some(head)) if size > 0 && size <= options.head => {
                let whole = match head.bytes(0..size).await {
                    Some(whole) => whole,
                    None => get_range(&store, &path, 0..size, &log).await?,
                };
                (size, whole)
            }
            (Some(size), _) => (size, bytes::Bytes::new()),
            (None, _) => {
                let started = Instant::now();
                let patience = policy(&options, network);
                let opened = open_tail((&store, &path), options.tail, &log, patience).await?;
                // The answer's own wait: a hedged opening's copy from when it was sent, not
                // the time the first request waited in the slow tail.
                let measured = log.usual_first_byte().unwrap_or_else(|| started.elapsed());
                network.time_to_first_byte.get_or_insert(measured);
                opened
            }
        };
        // The head need not bring what the tail holds (nothing, if it holds the whole object).
        let tail_start = size - tail.len() as u64;
        if let Some(head) = &head {
            head.cut_at(tail_start);
        }
        let head = head.filter(|_| tail_start > 0).map(Arc::new);
        Ok(ObjectSource {
            store,
            path,
            size,
            tail,
            head,
            max_in_flight: options.max_in_flight.max(1),
            read_ahead: options.read_ahead.max(1),
            network,
            window: options.window,
            policy: policy(&options, network),
            runtime,
            log,
        })
    }

    /// Opens `path` in `store` as a caller who will read it as `reading` says: for a
    /// [`Reading::Whole`] read, as [`Self::open_whole`] does (the reader it returns is the
    /// object front to back); for a [`Reading::Scan`] or [`Reading::First`], as [`Self::open`]
    /// does with a head ([`SourceOptions::head`], a whole read's
    /// [`NetworkMetrics::first_part`] unless the options give one); for a [`Reading::Peek`],
    /// as [`Self::open`] does.
    ///
    /// # Errors
    ///
    /// As [`Self::open`].
    pub async fn open_for(
        store: Arc<dyn ObjectStore>,
        path: Path,
        options: SourceOptions,
        reading: Reading,
    ) -> Result<(Self, Option<crate::ObjectReader>), ObjectError> {
        match reading {
            Reading::Whole => {
                let (source, reader) = Self::open_whole(store, path, options).await?;
                Ok((source, Some(reader)))
            }
            Reading::Scan | Reading::First => {
                let head = match options.head {
                    0 => options.network.first_part(),
                    given => given,
                };
                let source = Self::open(store, path, options.with_head(head)).await?;
                Ok((source, None))
            }
            Reading::Peek => Ok((Self::open(store, path, options).await?, None)),
        }
    }

    /// Opens `path` in `store` for a read of every byte, front to back, in parallel parts:
    /// a ranged GET of its first [`NetworkMetrics::first_part`] bytes, whose answer gives the
    /// object's size (and the time to first byte, unless given); then, if there is more,
    /// ranged GETs of the rest in parts of the cost model's size
    /// ([`quiver::cost::Network::part_size`]), as many in flight as
    /// [`SourceOptions::window`] holds receiving at once, each part's successor sent a
    /// bandwidth-delay product ahead of its end. The returned reader hands the bytes over in
    /// order, the first part as it arrives and each later one once received, up to
    /// [`SourceOptions::read_ahead`] bytes ahead of its reader (see [`crate::ObjectReader`]):
    /// memory stays within the window (three times it at most, when the reader falls behind
    /// or a part is late) and
    /// the read-ahead whatever the object's size. An object within the first part is ONE
    /// request. A store that refuses the ranged GET (not a missing object or denied access)
    /// is read with one plain GET. Ranges read from the source later are requests of their own.
    ///
    /// # Errors
    ///
    /// As [`Self::open`].
    pub async fn open_whole(
        store: Arc<dyn ObjectStore>,
        path: Path,
        options: SourceOptions,
    ) -> Result<(Self, crate::ObjectReader), ObjectError> {
        let runtime = Handle::try_current().map_err(|_| ObjectError::NoRuntime)?;
        let log = Arc::new(RequestLog::default());
        let mut network = options.network;
        let read_ahead = options.read_ahead.max(1);
        let object = (Arc::clone(&store), path.clone());
        let opening = policy(&options, network);
        let first = GetOptions {
            range: Some(GetRange::Bounded(0..network.first_part())),
            ..GetOptions::default()
        };
        let first_part = Some(0..network.first_part());
        let (answer, sent) = crate::request::patiently((&path, first_part), &log, opening, || {
            store.get_opts(&path, first.clone())
        })
        .await?;
        let answered = match answer {
            Ok(answered) => answered,
            Err(
                e @ (object_store::Error::NotFound { .. }
                | object_store::Error::PermissionDenied { .. }
                | object_store::Error::Unauthenticated { .. }),
            ) => return Err(e.into()),
            Err(_) => {
                // An empty object (no first byte to range over), or a store that does not
                // answer ranges: one GET of all of it.
                let (answered, sent) =
                    crate::request::answered(&store, &path, None, &log, opening).await?;
                network.time_to_first_byte.get_or_insert(sent.at.elapsed());
                let size = answered.meta.size;
                let reader = crate::ObjectReader::answered(
                    &runtime,
                    (object, answered, sent),
                    read_ahead,
                    (policy(&options, network), Arc::clone(&log)),
                );
                let mut source = Self::opened(store, path, &options, (network, runtime, log));
                source.size = size;
                return Ok((source, reader));
            }
        };
        network.time_to_first_byte.get_or_insert(sent.at.elapsed());
        let size = answered.meta.size;
        let first_end = answered.range.end;
        let policy = policy(&options, network);
        let reader = if first_end >= size {
            let log = Arc::clone(&log);
            crate::ObjectReader::answered(
                &runtime,
                (object, answered, sent),
                read_ahead,
                (policy, log),
            )
        } else {
            let model = network.model(options.max_in_flight);
            crate::ObjectReader::in_parts(
                &runtime,
                Some(crate::read::Leading::Answered(Box::new(answered), sent)),
                object,
                parts_of(&model, first_end..size, options.window),
                (bytes::Bytes::new(), read_ahead),
                (policy, Arc::clone(&log)),
            )
        };
        let mut source = Self::opened(store, path, &options, (network, runtime, log));
        source.size = size;
        Ok((source, reader))
    }

    /// A source of `path` in `store` opened with `options` and no tail, of unknown size yet.
    fn opened(
        store: Arc<dyn ObjectStore>,
        path: Path,
        options: &SourceOptions,
        (network, runtime, log): (NetworkMetrics, Handle, Arc<RequestLog>),
    ) -> Self {
        ObjectSource {
            store,
            path,
            size: 0,
            tail: bytes::Bytes::new(),
            head: None,
            max_in_flight: options.max_in_flight.max(1),
            read_ahead: options.read_ahead.max(1),
            network,
            window: options.window,
            policy: policy(options, network),
            runtime,
            log,
        }
    }

    /// The object's path in its store.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The object's last bytes, as the opening request returned them (empty if none was sent),
    /// or all of them once held ([`Self::hold`]).
    pub fn tail(&self) -> &[u8] {
        &self.tail
    }

    /// Bytes a planned read holds in memory at once ([`SourceOptions::window`]).
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Holds the whole object in memory, read by `reader` from its first byte (a whole read's,
    /// [`Self::open_whole`]): every later read is served from it, with no request. The caller
    /// bounds the memory (an object within [`Self::window`]: a whole read has all its parts in
    /// flight then, so they cost no more request or round trip than reading them in order).
    ///
    /// # Errors
    ///
    /// The store's error, or a body of another length than the object's
    /// ([`ObjectError::Length`]).
    pub async fn hold(&mut self, mut reader: crate::ObjectReader) -> Result<(), ObjectError> {
        let wrong = |received: usize| ObjectError::Length {
            range: 0..self.size,
            received: received as u64,
        };
        let size = usize::try_from(self.size).map_err(|_| wrong(0))?;
        let whole = reader.read_bytes(size).await?;
        if whole.len() != size {
            return Err(wrong(whole.len()));
        }
        if let Some(more) = reader.next_chunk().await? {
            return Err(wrong(size + more.len()));
        }
        self.tail = whole;
        if let Some(head) = self.head.take() {
            head.cut();
        }
        Ok(())
    }

    /// The requests sent so far, this source's clones included.
    pub fn requests(&self) -> RequestStats {
        self.log.stats()
    }

    /// Bytes received so far, a streaming GET's included while it is still arriving.
    pub fn bytes_received(&self) -> u64 {
        self.log.bytes_received()
    }

    /// The requests so far, streaming GETs still arriving included
    /// ([`RequestLog::stats_so_far`]).
    pub fn requests_so_far(&self) -> RequestStats {
        self.log.stats_so_far()
    }

    /// The network metrics in force: as given, with the time to first byte measured when
    /// opening if none was given, and the bandwidth of one request measured once a request
    /// of 1 MiB or more has arrived ([`NetworkMetrics::measure_bandwidth`]).
    pub fn network(&self) -> NetworkMetrics {
        let mut network = self.network;
        if network.measure_bandwidth
            && let Some(measured) = self.log.bandwidth(1024 * 1024, network.first_byte())
        {
            network.bandwidth = measured.max(1);
        }
        network
    }

    /// How the planner reads from this source: by the cost model of its network
    /// ([`NetworkMetrics::model`], with this source's requests in flight), in windows of
    /// [`SourceOptions::window`] bytes, the head's bytes held ([`ScanOptions::held`]: the
    /// first block's metadata read from it costs no wave).
    pub fn scan_options(&self) -> ScanOptions {
        let held = self.head.as_ref().map_or(0, |h| h.will_bring());
        self.network()
            .scan_options()
            .with_network(Some(self.model()))
            .with_readahead(self.window)
            .with_held(0..held)
    }

    /// The cost model the planner decides by ([`Self::network`]).
    pub fn model(&self) -> quiver::cost::Network {
        self.network().model(self.max_in_flight)
    }

    /// The object from byte `offset` to its end, read in order through one streaming GET (for
    /// the IPC stream format; see [`crate::ObjectReader`]), for a reader that may stop early:
    /// the GET receives little ahead of what is read. The bytes the opening requests brought
    /// are not asked for again (its end, and its start from the head as it arrives, the GET
    /// of what lies between them sent at once), so an object they brought whole costs no
    /// request. The GET is logged with this source's requests.
    pub fn reader(&self, offset: u64) -> crate::ObjectReader {
        self.streaming(self.unread(offset))
    }

    /// The object from byte `offset` to its end, for a reader that reads all of it (every
    /// batch of a stream): as [`Self::reader`], but what the opening requests did not bring
    /// is read as a whole read's rest is ([`Self::open_whole`]): in parts of the cost model's
    /// size, as many in flight as [`SourceOptions::window`] holds, handed over in order.
    pub fn parts_reader(&self, offset: u64) -> crate::ObjectReader {
        let (from_head, fetch, rest) = self.unread(offset);
        if fetch.is_empty() {
            return self.streaming((from_head, fetch, rest));
        }
        crate::ObjectReader::in_parts(
            &self.runtime,
            from_head.map(|(head, range)| crate::read::Leading::Head(head, range)),
            (Arc::clone(&self.store), self.path.clone()),
            parts_of(&self.model(), fetch, self.window),
            (rest, self.read_ahead),
            (self.policy, Arc::clone(&self.log)),
        )
    }

    /// The reader of `unread` ([`Self::unread`]) through one streaming GET.
    fn streaming(
        &self,
        (from_head, fetch, rest): (crate::read::FromHead, Range<u64>, bytes::Bytes),
    ) -> crate::ObjectReader {
        crate::ObjectReader::new(
            &self.runtime,
            (Arc::clone(&self.store), self.path.clone()),
            (from_head, fetch, self.size),
            (rest, self.read_ahead),
            (self.policy, Arc::clone(&self.log)),
        )
    }

    /// Where the object's bytes from `offset` come from, in order: the head's (as they
    /// arrive), a range to ask for, then the tail's. The head is cut if none of its bytes are
    /// needed.
    fn unread(&self, offset: u64) -> (crate::read::FromHead, Range<u64>, bytes::Bytes) {
        let offset = offset.min(self.size);
        let (tail_start, head_end) = (self.tail_start(), self.head_end());
        let from_head = match &self.head {
            Some(head) if offset < head_end => Some((Arc::clone(head), offset..head_end)),
            // The GET brings the stream's bytes: the head's are not needed.
            Some(head) => {
                head.cut();
                None
            }
            None => None,
        };
        let start = if from_head.is_some() {
            head_end
        } else {
            offset
        };
        if start >= tail_start {
            let skip = offset.saturating_sub(tail_start) as usize;
            (from_head, tail_start..tail_start, self.tail.slice(skip..))
        } else {
            (from_head, start..tail_start, self.tail.clone())
        }
    }

    /// Where the bytes the opening request brought start in the object.
    fn tail_start(&self) -> u64 {
        self.size - self.tail.len() as u64
    }

    /// Where the bytes the head brings end, short of the tail (0 without a head).
    fn head_end(&self) -> u64 {
        let brought = self.head.as_ref().map_or(0, |head| head.will_bring());
        brought.min(self.tail_start())
    }

    /// Where the bytes of `range` come from: the head for its first bytes, the tail for its
    /// last, requests for the rest.
    fn pieces(&self, range: &Range<u64>) -> Pieces {
        let (tail_start, head_end) = (self.tail_start(), self.head_end());
        let piece = |from: u64, to: u64| (from < to).then_some(from..to);
        Pieces {
            head: piece(range.start, range.end.min(head_end)),
            middle: piece(range.start.max(head_end), range.end.min(tail_start)),
            tail: piece(range.start.max(tail_start), range.end),
        }
    }

    /// The bytes of `range` from the head, or from a request of their own if the head failed.
    async fn head_bytes(
        &self,
        head: &Head,
        range: Range<u64>,
    ) -> Result<bytes::Bytes, ObjectError> {
        match head.bytes(range.clone()).await {
            Some(bytes) => Ok(bytes),
            None => {
                let (store, path, log) = (&self.store, &self.path, &self.log);
                crate::request::get_range(store, path, range, log, self.policy).await
            }
        }
    }

    /// The bytes of `range` of the tail.
    fn tail_bytes(&self, range: Range<u64>) -> bytes::Bytes {
        let tail_start = self.tail_start();
        self.tail
            .slice((range.start - tail_start) as usize..(range.end - tail_start) as usize)
    }
}

/// Where a range's bytes come from, in order (see [`ObjectSource::pieces`]).
struct Pieces {
    head: Option<Range<u64>>,
    middle: Option<Range<u64>>,
    tail: Option<Range<u64>>,
}

/// `range` read front to back in parts ([`crate::ObjectReader::in_parts`]): the parts, of the
/// size `model` prices cheapest within `window`; how many of them the window holds in flight;
/// and how far ahead of a part's end its successor is sent (the bandwidth-delay product).
fn parts_of(
    model: &quiver::cost::Network,
    range: Range<u64>,
    window: u64,
) -> (Vec<Range<u64>>, usize, u64) {
    let part = model.part_size(range.end - range.start, window);
    let in_flight = model.in_flight_for(part, window);
    let parts = quiver::read_plan::split(std::slice::from_ref(&range), part);
    let in_flight = usize::try_from(in_flight).unwrap_or(1);
    (parts, in_flight, model.bandwidth_delay())
}

/// When `options` hedge and resume a ranged GET, on `network`.
fn policy(options: &SourceOptions, network: NetworkMetrics) -> Policy {
    let usual = network
        .time_to_first_byte
        .unwrap_or(ASSUMED_TIME_TO_FIRST_BYTE);
    Policy {
        stall: options.stall_timeout,
        hedge: options.hedge,
        usual,
    }
}

/// The suffix GET that opens an object: its size and last `tail` bytes. A store that refuses
/// it gets a HEAD and a bounded GET.
async fn open_tail(
    (store, path): (&Arc<dyn ObjectStore>, &Path),
    tail: u64,
    log: &Arc<RequestLog>,
    policy: Policy,
) -> Result<(u64, bytes::Bytes), ObjectError> {
    if tail == 0 {
        let start = Instant::now();
        let meta = store.head(path).await?;
        log.record(start, 0);
        return Ok((meta.size, bytes::Bytes::new()));
    }
    let options = GetOptions {
        range: Some(GetRange::Suffix(tail)),
        ..GetOptions::default()
    };
    let suffix = || store.get_opts(path, options.clone());
    let (answer, sent) = crate::request::patiently((path, None), log, policy, suffix).await?;
    let refused = match answer {
        Ok(result) => {
            let (size, range) = (result.meta.size, result.range.clone());
            let object = (Arc::clone(store), path.clone());
            let body = Resuming::new(object, range.clone(), result, policy, Arc::clone(log));
            let body = body.collect().await;
            log.record_sent(&sent, body.as_ref().map_or(0, |b| b.len() as u64));
            return Ok((size, exact(body?, range)?));
        }
        Err(
            e @ (object_store::Error::NotFound { .. }
            | object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. }),
        ) => return Err(e.into()),
        Err(e) => e,
    };
    // No suffix ranges here (Azure's client refuses them before sending anything, object_store
    // 0.14: `Error::NotSupported`), or an empty object (a 416): its size first, then its end.
    let start = Instant::now();
    let Ok(meta) = store.head(path).await else {
        log.record(start, 0);
        return Err(refused.into());
    };
    log.record(start, 0);
    let range = meta.size.saturating_sub(tail)..meta.size;
    if range.is_empty() {
        return Ok((meta.size, bytes::Bytes::new()));
    }
    let bytes = get_range(store, path, range, log).await?;
    Ok((meta.size, bytes))
}

/// One ranged GET, logged, checked to hold exactly `range`, neither hedged nor resumed (the
/// opening's, alone, whose time is the usual one measured).
async fn get_range(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    range: Range<u64>,
    log: &Arc<RequestLog>,
) -> Result<bytes::Bytes, ObjectError> {
    let policy = Policy {
        stall: crate::request::DEFAULT_STALL_TIMEOUT,
        hedge: None,
        usual: ASSUMED_TIME_TO_FIRST_BYTE,
    };
    crate::request::get_range(store, path, range, log, policy).await
}

/// `body`, if it holds `range`'s length.
fn exact(body: bytes::Bytes, range: Range<u64>) -> Result<bytes::Bytes, ObjectError> {
    if body.len() as u64 == range.end - range.start {
        Ok(body)
    } else {
        Err(ObjectError::Length {
            received: body.len() as u64,
            range,
        })
    }
}

/// The spawned GETs of one `read_ranges` call; aborted when the reader drops the read.
struct Spawned(JoinHandle<Result<bytes::Bytes, ObjectError>>);

impl Drop for Spawned {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl AsyncRandomAccess for ObjectSource {
    type Error = ObjectError;
    type ReadRanges<'a>
        = Pin<Box<dyn Future<Output = Result<SharedRanges, ObjectError>> + Send + 'a>>
    where
        Self: 'a;

    fn len(&self) -> u64 {
        self.size
    }

    fn read_ranges(&self, ranges: Vec<Range<u64>>) -> Self::ReadRanges<'_> {
        let pieces: Vec<Pieces> = ranges.iter().map(|r| self.pieces(r)).collect();
        if let Some(head) = &self.head {
            for piece in pieces.iter().filter_map(|p| p.head.as_ref()) {
                head.asked(piece.end);
            }
            let past = |p: &Pieces| p.middle.as_ref().is_some_and(|m| m.end > head.requested());
            if pieces.iter().any(past) {
                head.passed();
            }
        }
        let wanted: Vec<(usize, Range<u64>)> = pieces
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((i, p.middle.clone()?)))
            .collect();
        // Each GET a task of its own, so that each goes out as soon as it is made, and the
        // runtime's threads share making them.
        let limit = Arc::new(tokio::sync::Semaphore::new(self.max_in_flight));
        let spawned: Vec<(usize, Spawned)> = wanted
            .into_iter()
            .map(|(i, range)| {
                let (store, path, log) = (
                    Arc::clone(&self.store),
                    self.path.clone(),
                    Arc::clone(&self.log),
                );
                let (limit, policy) = (Arc::clone(&limit), self.policy);
                let read = self.runtime.spawn(async move {
                    let _permit = limit.acquire_owned().await;
                    crate::request::get_range(&store, &path, range, &log, policy).await
                });
                (i, Spawned(read))
            })
            .collect();
        Box::pin(async move {
            let mut middles: Vec<Option<bytes::Bytes>> = vec![None; pieces.len()];
            for (i, mut read) in spawned {
                middles[i] = Some((&mut read.0).await.map_err(ObjectError::Task)??);
            }
            let mut out = Vec::with_capacity(pieces.len());
            for (piece, middle) in pieces.into_iter().zip(middles) {
                let mut parts = Vec::with_capacity(3);
                if let (Some(range), Some(head)) = (piece.head, &self.head) {
                    parts.push(self.head_bytes(head, range).await?);
                }
                parts.extend(middle);
                parts.extend(piece.tail.map(|range| self.tail_bytes(range)));
                let body = crate::request::join(parts);
                let len = body.len();
                out.push(Bytes::from_owner(Arc::new(body), 0..len));
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planner_limits_follow_the_network() {
        let slow = NetworkMetrics::default()
            .with_time_to_first_byte(Duration::from_millis(50))
            .with_bandwidth(100 * 1024 * 1024);
        let options = slow.scan_options();
        assert_eq!(options.hole_size_limit, 8 * 1024);
        assert_eq!(options.range_size_limit, 45 * 1024 * 1024);
        assert_eq!(options.readahead, 90 * 1024 * 1024);
        let near = slow.with_time_to_first_byte(Duration::from_micros(100));
        assert_eq!(near.scan_options().range_size_limit, 1024 * 1024);
        assert_eq!(near.scan_options().readahead, 8 * 1024 * 1024);
        let far = slow.with_time_to_first_byte(Duration::from_secs(1));
        assert_eq!(far.scan_options().range_size_limit, 64 * 1024 * 1024);
    }
}
