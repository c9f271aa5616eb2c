//! The event store on Redis: stream events written behind, so a stream resumes on any node.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actix_mcp_actors::{
    EventId, EventStore, InMemoryEventStore, Replay, ReplayFuture, SessionEvents, SessionId,
};
use tokio::sync::mpsc;

use super::connection::{Batch, Redis, millis};

/// The [`EventStore`] on Redis: every event of every stream is written (behind, in pipelined
/// batches) to a capped list per session (the newest events of all its streams, as the
/// in-memory store keeps them), so a stream resumes on any node. The events of the streams
/// live on this node are also kept in this node's memory, so resuming those costs no round
/// trip.
///
/// A writer waits up to a [`linger`](Self::linger) (1 ms by default) after an event for more
/// to write with it: under load, one pipeline carries the events of many requests, so Redis
/// runs one `RPUSH` per session per batch rather than one per event. An event is therefore
/// resumable on another node up to the linger (and the round trip) after it was sent.
///
/// With [`request_streams_on_node`](Self::request_streams_on_node), only the standalone
/// streams' events are written to Redis, and a request's stream resumed on another node is
/// asked of the node that served it.
#[derive(Debug, Clone)]
pub struct RedisEventStore {
    redis: Redis,
    local: InMemoryEventStore,
    writers: Arc<Writers>,
    /// Whether requests' streams are kept in this node's memory only.
    requests_on_node: bool,
}

/// A [`RedisEventStore`]'s writers: one per live thread that appends events (on that thread's
/// runtime, with its own connection; it ends once the thread has gone and what it queued is
/// written, so the threads of a blocking pool, which come and go, leave none behind), and one
/// for threads with no runtime.
#[derive(Debug)]
struct Writers {
    /// Tells this store apart in a thread's writers.
    id: u64,
    max_events: usize,
    ttl: Duration,
    /// The writer of threads with no runtime.
    shared: mpsc::Sender<Job>,
    /// Every writer started and not ended, for [`EventStore::flush`]: its sender weakly, so
    /// that a thread's writer ends when the thread has gone (its own sender, in the thread's
    /// storage, goes with it) and it wrote what was queued.
    all: std::sync::Mutex<Vec<Writer>>,
    /// Writers running now.
    running: Arc<AtomicUsize>,
    /// The linger of every writer, in microseconds.
    linger: Arc<AtomicU64>,
}

thread_local! {
    /// This thread's event writers, per [`Writers::id`].
    static WRITERS: RefCell<Vec<(u64, mpsc::Sender<Job>)>> = const { RefCell::new(Vec::new()) };
}

/// The next [`Writers::id`].
static NEXT_WRITERS: AtomicU64 = AtomicU64::new(1);

/// Events waiting to be written, per writer.
const WRITE_QUEUE: usize = 16_384;

/// The most jobs one batch takes.
const BATCH: usize = 1024;

/// The default [`RedisEventStore::linger`].
const DEFAULT_LINGER: Duration = Duration::from_millis(1);

#[derive(Debug)]
enum Job {
    /// An event to write.
    Write {
        session: SessionId,
        id: EventId,
        data: Arc<str>,
    },
    /// Told once every event queued before it is written (or failed).
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// How long [`EventStore::flush`] waits for the writer.
const FLUSH_WAIT: Duration = Duration::from_secs(5);

impl RedisEventStore {
    /// The store on `redis`: the newest 1,024 events of each session, kept at least 30 minutes
    /// after the last one (as long as a session's default idle timeout).
    pub fn new(redis: Redis) -> Self {
        Self::with_limits(redis, 1024, Duration::from_secs(30 * 60))
    }

    /// The store on `redis`, keeping the newest `max_events` events of each session (of all
    /// its streams; a list is trimmed once it holds a quarter more) for at least `ttl` after
    /// the last one (a quarter of `ttl` more at most: a list's TTL is renewed once per quarter,
    /// not by every write).
    pub fn with_limits(redis: Redis, max_events: usize, ttl: Duration) -> Self {
        let max_events = max_events.max(1);
        let (shared, queue) = mpsc::channel(WRITE_QUEUE);
        let running = Arc::new(AtomicUsize::new(0));
        let linger = Arc::new(AtomicU64::new(micros(DEFAULT_LINGER)));
        let (guard, writer) = Running::new(&running, &shared);
        tokio::spawn(write_behind(
            redis.clone(),
            queue,
            Limits {
                max_events,
                ttl,
                linger: linger.clone(),
            },
            guard,
        ));
        Self {
            redis,
            local: InMemoryEventStore::default(),
            writers: Arc::new(Writers {
                id: NEXT_WRITERS.fetch_add(1, Ordering::Relaxed),
                max_events,
                ttl,
                all: std::sync::Mutex::new(vec![writer]),
                running,
                linger,
                shared,
            }),
            requests_on_node: false,
        }
    }

    /// How long a writer waits, after the first event it is given, for more to write in the
    /// same pipeline (1 ms by default; a [`flush`](EventStore::flush) cuts it short). Zero writes
    /// what each wake-up finds at once: under load that is a pipeline per event or so, and as
    /// many commands for Redis. Applies to every writer of this store, also those started
    /// already.
    #[must_use]
    pub fn linger(self, linger: Duration) -> Self {
        self.writers.linger.store(micros(linger), Ordering::Relaxed);
        self
    }

    /// Keeps the events of requests' streams (the SSE answer to a POST, with the progress and
    /// requests sent on it) in this node's memory only, and writes to Redis only those of
    /// sessions' standalone streams (HTTP GET), which a client may resume on any node.
    ///
    /// That spares Redis a write for every answer sent as SSE. A request's stream resumed on
    /// another node is asked of the node that served it, over the bus (one message each way;
    /// at most 1 s when no node answers). What it costs: that stream resumes only while its
    /// node lives and holds the session (a node that dies, or lets the session's actor go idle,
    /// takes those events with it; the client then gets the session's standalone stream
    /// instead, as for any stream the server does not know).
    #[must_use]
    pub fn request_streams_on_node(mut self) -> Self {
        self.requests_on_node = true;
        self
    }

    /// Whether `id` is written to Redis.
    fn shared(&self, id: EventId) -> bool {
        !self.requests_on_node || id.is_standalone()
    }

    /// How many writers run now: one per live thread that appended events (a thread's writer
    /// ends once the thread has gone and it wrote what was queued), and one for threads with no
    /// runtime.
    pub fn writers(&self) -> usize {
        self.writers.running.load(Ordering::Acquire)
    }

    /// Queues `job` with this thread's writer (started on first use), or the shared one on a
    /// thread with no runtime; `false` when the writer is too far behind to take it.
    fn queue(&self, job: Job) -> bool {
        if tokio::runtime::Handle::try_current().is_err() {
            return self.writers.shared.try_send(job).is_ok();
        }
        WRITERS.with_borrow_mut(|writers| {
            let mine = self.writers.id;
            if let Some((_, writer)) = writers
                .iter()
                .find(|(id, writer)| *id == mine && !writer.is_closed())
            {
                return writer.try_send(job).is_ok();
            }
            // None yet on this thread, or its runtime has gone: start one here.
            writers.retain(|(id, _)| *id != mine);
            let (writer, queue) = mpsc::channel(WRITE_QUEUE);
            let (guard, known) = Running::new(&self.writers.running, &writer);
            tokio::spawn(write_behind(
                self.redis.clone(),
                queue,
                Limits {
                    max_events: self.writers.max_events,
                    ttl: self.writers.ttl,
                    linger: self.writers.linger.clone(),
                },
                guard,
            ));
            let mut all = self
                .writers
                .all
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            all.retain(|writer| !writer.ended());
            all.push(known);
            drop(all);
            let queued = writer.try_send(job).is_ok();
            writers.push((mine, writer));
            queued
        })
    }
}

/// What a writer keeps to.
struct Limits {
    max_events: usize,
    ttl: Duration,
    /// [`RedisEventStore::linger`], in microseconds.
    linger: Arc<AtomicU64>,
}

/// `duration` in whole microseconds (saturating).
fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// Takes into `batch` what `queue` is given until the linger from now is over, the batch is
/// full, a flush is asked for or the queue has closed.
async fn linger(queue: &mut mpsc::Receiver<Job>, batch: &mut Vec<Job>, linger: Duration) {
    if linger.is_zero() || batch.iter().any(|job| matches!(job, Job::Flush(_))) {
        return;
    }
    let until = tokio::time::Instant::now() + linger;
    while batch.len() < BATCH {
        let from = batch.len();
        match tokio::time::timeout_at(until, queue.recv_many(batch, BATCH - from)).await {
            Ok(0) | Err(_) => return,
            Ok(_) if batch[from..].iter().any(|job| matches!(job, Job::Flush(_))) => return,
            Ok(_) => {}
        }
    }
}

/// Writes queued events in batches: one pipeline per batch (what the queue holds when the
/// writer wakes and what it is given within the linger after), with one `RPUSH` (of all its
/// events in the batch) per session. A list that has grown a quarter past `max_events` is
/// trimmed back to the newest `max_events` in the next batch (its length is the `RPUSH`'s
/// answer).
///
/// A list's TTL is set to `ttl` and a quarter (see [`Renewals`]) when this writer first writes
/// to it, then at most once per quarter of `ttl`: it always outlives its last event by at least
/// `ttl`, and a busy session's events cost one command per batch, not two. A list the `RPUSH`
/// created (it had expired or been deleted since) gets its TTL in a second pipeline at once,
/// and is deleted in a third when its session has no record (see [`orphans`]).
async fn write_behind(
    redis: Redis,
    mut queue: mpsc::Receiver<Job>,
    limits: Limits,
    _running: Running,
) {
    let Limits {
        max_events,
        ttl,
        linger: linger_us,
    } = limits;
    let mut batch = Vec::with_capacity(BATCH);
    let mut flushed = Vec::new();
    // Per session in this batch: its entries, in order.
    let mut sessions: HashMap<SessionId, Vec<Entry>> = HashMap::new();
    // Lists to trim with the next pipeline.
    let mut overfull: Vec<String> = Vec::new();
    let mut renewals = Renewals::new(ttl);
    let trim_at = max_events
        .saturating_add(max_events / 4)
        .max(max_events + 1);
    let keep = -i64::try_from(max_events).unwrap_or(i64::MAX);
    while queue.recv_many(&mut batch, BATCH).await > 0 {
        let wait = Duration::from_micros(linger_us.load(Ordering::Relaxed));
        linger(&mut queue, &mut batch, wait).await;
        for job in batch.drain(..) {
            match job {
                Job::Write { session, id, data } => {
                    sessions
                        .entry(session)
                        .or_default()
                        .push(Entry { id, data });
                }
                Job::Flush(done) => flushed.push(done),
            }
        }
        if !sessions.is_empty() || !overfull.is_empty() {
            let now = Instant::now();
            // One pipeline on one server; on a Redis Cluster, each session's commands on
            // their own (its keys are in its slot).
            let mut batch = Batch::default();
            let mut written = Vec::with_capacity(sessions.len());
            for (session, entries) in &sessions {
                let key = redis.events_key(session);
                let mut push = redis::cmd("RPUSH");
                push.arg(&key).arg(entries);
                batch.add(push);
                let renewed = renewals.due(session, now);
                if renewed {
                    let mut renew = redis::cmd("PEXPIRE");
                    renew.arg(&key).arg(millis(renewals.ttl));
                    batch.add_ignored(renew);
                }
                written.push((session, key, entries.len(), renewed));
            }
            for key in overfull.drain(..) {
                let mut trim = redis::cmd("LTRIM");
                trim.arg(key).arg(keep).arg(-1);
                batch.add_ignored(trim);
            }
            match redis.batch::<Vec<usize>>(batch).await {
                Ok(lengths) => {
                    let mut created = Batch::default();
                    let mut new_lists = Vec::new();
                    for ((session, key, pushed, renewed), length) in
                        written.into_iter().zip(lengths)
                    {
                        if length == pushed {
                            if !renewed {
                                let mut expire = redis::cmd("PEXPIRE");
                                expire.arg(&key).arg(millis(renewals.ttl));
                                created.add_ignored(expire);
                            }
                            let mut exists = redis::cmd("EXISTS");
                            exists.arg(redis.session_key_arg(session));
                            created.add(exists);
                            new_lists.push(key.clone());
                        }
                        if length >= trim_at {
                            overfull.push(key);
                        }
                    }
                    if !created.is_empty() {
                        orphans(&redis, created, new_lists).await;
                    }
                }
                Err(err) => {
                    tracing::warn!(%err, "could not store stream events; those cannot be resumed on another node");
                }
            }
            sessions.clear();
            renewals.prune(now);
        }
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
    }
}

/// Runs `created` (the TTLs of the lists an `RPUSH` created, and whether each one's session
/// still has its record), and deletes the lists of sessions that have none: their events
/// were written behind after the session was deleted (or had expired), and would otherwise
/// outlive it by the lists' TTL.
async fn orphans(redis: &Redis, created: Batch, lists: Vec<String>) {
    let alive = match redis.batch::<Vec<bool>>(created).await {
        Ok(alive) => alive,
        Err(err) => {
            tracing::warn!(%err, "could not set the TTL of new event lists");
            return;
        }
    };
    let mut orphans = Batch::default();
    for (list, alive) in lists.into_iter().zip(alive) {
        if !alive {
            let mut delete = redis::cmd("DEL");
            delete.arg(list);
            orphans.add_ignored(delete);
        }
    }
    if !orphans.is_empty()
        && let Err(err) = redis.batch::<()>(orphans).await
    {
        tracing::warn!(%err, "could not delete the events of ended sessions");
    }
}

/// An event as its session's list holds it: `<stream> <seq> <data>` (see [`stored_replay`]),
/// written straight into the command that stores it.
struct Entry {
    id: EventId,
    data: Arc<str>,
}

impl redis::ToRedisArgs for Entry {
    fn write_redis_args<W: ?Sized + redis::RedisWrite>(&self, out: &mut W) {
        let mut stream = itoa::Buffer::new();
        let mut seq = itoa::Buffer::new();
        let mut arg = out.writer_for_next_arg();
        for part in [
            stream.format(self.id.stream).as_bytes(),
            b" ",
            seq.format(self.id.seq).as_bytes(),
            b" ",
            self.data.as_bytes(),
        ] {
            // Writing to the command's own buffer, which cannot fail.
            let _ = std::io::Write::write_all(&mut arg, part);
        }
    }
}

/// A writer as [`Writers::all`] knows it.
#[derive(Debug)]
struct Writer {
    sender: mpsc::WeakSender<Job>,
    /// Turns `true` when the writer has ended.
    ended: tokio::sync::watch::Receiver<bool>,
}

impl Writer {
    fn ended(&self) -> bool {
        *self.ended.borrow()
    }
}

/// Counts a writer among a store's running ones while it lives, and says when it has ended.
struct Running {
    count: Arc<AtomicUsize>,
    ended: tokio::sync::watch::Sender<bool>,
}

impl Running {
    /// The guard of a writer about to start with `sender`, and how [`Writers::all`] knows it.
    fn new(count: &Arc<AtomicUsize>, sender: &mpsc::Sender<Job>) -> (Self, Writer) {
        count.fetch_add(1, Ordering::AcqRel);
        let (ended, ended_rx) = tokio::sync::watch::channel(false);
        let writer = Writer {
            sender: sender.downgrade(),
            ended: ended_rx,
        };
        (
            Self {
                count: count.clone(),
                ended,
            },
            writer,
        )
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
        self.ended.send_replace(true);
    }
}

/// When a writer last set the TTL of each session's event list.
struct Renewals {
    /// The TTL set: the store's TTL and a quarter, so that a list renewed a quarter of the TTL
    /// ago still outlives a new event by the store's TTL.
    ttl: Duration,
    /// How long after a renewal the next one is due.
    every: Duration,
    last: HashMap<SessionId, Instant>,
    /// The map's size after the last pruning: it is pruned again when it has doubled.
    pruned_at: usize,
}

impl Renewals {
    fn new(ttl: Duration) -> Self {
        Self {
            ttl: ttl.saturating_add(ttl / 4),
            every: ttl / 4,
            last: HashMap::new(),
            pruned_at: 0,
        }
    }

    /// Whether `session`'s list needs its TTL set now (it is then counted as set).
    fn due(&mut self, session: &SessionId, now: Instant) -> bool {
        match self.last.get_mut(session) {
            Some(at) if now.duration_since(*at) < self.every => false,
            Some(at) => {
                *at = now;
                true
            }
            None => {
                self.last.insert(session.clone(), now);
                true
            }
        }
    }

    /// Forgets the renewals that are due anyway (bounded by the sessions written to within
    /// a quarter of the TTL).
    fn prune(&mut self, now: Instant) {
        if self.last.len() > (2 * self.pruned_at).max(1024) {
            let every = self.every;
            self.last.retain(|_, at| now.duration_since(*at) < every);
            self.pruned_at = self.last.len();
        }
    }
}

impl EventStore for RedisEventStore {
    fn open(&self, session: &SessionId) -> Arc<dyn SessionEvents> {
        Arc::new(RedisSessionEvents {
            session: session.clone(),
            local: self.local.open(session),
            store: self.clone(),
        })
    }

    /// Waits (at most 5 s) until every event appended so far is written to Redis.
    fn flush(&self) -> futures::future::BoxFuture<'static, ()> {
        // A writer whose senders are all gone (its thread has) is waited for until it ends,
        // which is once it wrote what was queued.
        let writers: Vec<(
            Option<mpsc::Sender<Job>>,
            tokio::sync::watch::Receiver<bool>,
        )> = self
            .writers
            .all
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .filter(|writer| !writer.ended())
            .map(|writer| (writer.sender.upgrade(), writer.ended.clone()))
            .collect();
        Box::pin(async move {
            let flushed = futures::future::join_all(writers.into_iter().map(
                |(writer, mut ended)| async move {
                    if let Some(writer) = writer {
                        let (done, written) = tokio::sync::oneshot::channel();
                        if writer.send(Job::Flush(done)).await.is_ok() {
                            let _ = written.await;
                            return;
                        }
                    }
                    let _ = ended.wait_for(|ended| *ended).await;
                },
            ));
            if tokio::time::timeout(FLUSH_WAIT, flushed).await.is_err() {
                tracing::warn!("the stream events were not all written to redis in time");
            }
        })
    }
}

struct RedisSessionEvents {
    session: SessionId,
    local: Arc<dyn SessionEvents>,
    store: RedisEventStore,
}

impl fmt::Debug for RedisSessionEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSessionEvents")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl SessionEvents for RedisSessionEvents {
    fn append(&self, id: EventId, data: &Arc<str>) {
        self.local.append(id, data);
        if !self.store.shared(id) {
            return;
        }
        let write = Job::Write {
            session: self.session.clone(),
            id,
            data: data.clone(),
        };
        if !self.store.queue(write) {
            tracing::warn!(session = %self.session, %id, "the event writer is behind; an event will not be resumable on another node");
        }
    }

    fn replay_here(&self, after: EventId) -> Replay {
        self.local.replay_here(after)
    }

    fn replay(&self, after: EventId) -> ReplayFuture {
        let here = self.local.replay_here(after);
        if here != Replay::Unknown || !self.store.shared(after) {
            return Box::pin(std::future::ready(here));
        }
        let redis = self.store.redis.clone();
        let key = redis.events_key(&self.session);
        Box::pin(async move {
            let stored: Vec<String> = match redis
                .query(redis::cmd("LRANGE").arg(&key).arg(0).arg(-1))
                .await
            {
                Ok(stored) => stored,
                Err(err) => {
                    tracing::warn!(%err, "could not read stored events to resume a stream");
                    return Replay::Unknown;
                }
            };
            stored_replay(&stored, after)
        })
    }

    fn kept_on_its_node(&self, stream: u64) -> bool {
        !self.store.shared(EventId { stream, seq: 0 })
    }

    fn finish(&self, stream: u64) {
        self.local.finish(stream);
    }

    fn close(&self) {
        // This node's copy only: the session may live on elsewhere (its actor here may have
        // gone idle, or this node is draining); its stored events expire with it, or go with
        // its DELETE (a list an event written behind just after a DELETE creates again is
        // deleted by its writer, which finds no record).
        self.local.close();
    }
}

/// What a session's stored list (`<stream> <seq> <data>` entries, oldest first) holds of
/// `after.stream` after `after`.
fn stored_replay(stored: &[String], after: EventId) -> Replay {
    let mut events = Vec::new();
    let mut first = None;
    for entry in stored {
        let mut parts = entry.splitn(3, ' ');
        let (Some(stream), Some(seq), Some(data)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(stream), Ok(seq)) = (stream.parse::<u64>(), seq.parse::<u64>()) else {
            continue;
        };
        if stream != after.stream {
            continue;
        }
        first = Some(first.map_or(seq, |first: u64| first.min(seq)));
        if seq > after.seq {
            events.push((EventId { stream, seq }, Arc::from(data)));
        }
    }
    let Some(first) = first else {
        return Replay::Unknown;
    };
    // Each thread writes its own events in order; events of one stream appended on two
    // threads may interleave.
    events.sort_by_key(|(id, _)| id.seq);
    // A stream's events are numbered from 1 and the list loses its oldest first: when the
    // stream's first kept event comes after the one that follows `after`, events were trimmed
    // before they could be replayed.
    Replay::Events {
        events,
        gap: first > after.seq + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(seq: u64) -> EventId {
        EventId { stream: 7, seq }
    }

    #[test]
    fn replays_what_follows_and_tells_trimmed_events() {
        // Stream 7's events 3 to 5 (1 and 2 trimmed), among another stream's.
        let stored: Vec<String> = (3..=5)
            .flat_map(|seq| [format!("7 {seq} data {seq}"), format!("8 {seq} other")])
            .collect();
        match stored_replay(&stored, id(3)) {
            Replay::Events { events, gap } => {
                assert_eq!(events.len(), 2);
                assert_eq!(events[0].0, id(4));
                assert_eq!(&*events[0].1, "data 4");
                assert_eq!(events[1].0, id(5));
                assert!(!gap);
            }
            Replay::Unknown => panic!("a known stream"),
        }
        match stored_replay(&stored, id(1)) {
            Replay::Events { events, gap } => {
                assert_eq!(events.len(), 3);
                assert!(gap, "event 2 was trimmed");
            }
            Replay::Unknown => panic!("a known stream"),
        }
        assert!(matches!(
            stored_replay(&stored, id(2)),
            Replay::Events { gap: false, .. }
        ));
        assert!(matches!(
            stored_replay(&stored, id(5)),
            Replay::Events { ref events, gap: false } if events.is_empty()
        ));
        assert_eq!(
            stored_replay(&stored, EventId { stream: 9, seq: 1 }),
            Replay::Unknown
        );
        assert_eq!(stored_replay(&[], id(1)), Replay::Unknown);
        // Written by two threads: out of order in the list, in order in the replay.
        let mixed = vec!["7 3 c".to_owned(), "7 2 b".to_owned(), "7 4 d".to_owned()];
        match stored_replay(&mixed, id(1)) {
            Replay::Events { events, gap } => {
                assert!(!gap);
                let seqs: Vec<u64> = events.iter().map(|(id, _)| id.seq).collect();
                assert_eq!(seqs, [2, 3, 4]);
            }
            Replay::Unknown => panic!("a known stream"),
        }
        // Data with spaces survives; malformed entries are skipped.
        let odd = vec![
            "garbage".to_owned(),
            "7 x y".to_owned(),
            "7 1 a b c".to_owned(),
        ];
        match stored_replay(&odd, id(0)) {
            Replay::Events { events, .. } => assert_eq!(&*events[0].1, "a b c"),
            Replay::Unknown => panic!("a known stream"),
        }
    }
}
