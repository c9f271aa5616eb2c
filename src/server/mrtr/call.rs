//! One implicit-style call of a 2026-07-28 request: a handler that asks the client for input
//! through [`RequestContext::elicit`](crate::RequestContext::elicit) and friends, run as an
//! `input_required` round trip instead of a server-to-client request.
//!
//! [`CallLink`] is what the handler's context and the requests serving the call share: the
//! answers known so far, the input requests still open, the request currently attached (its
//! scope carries the handler's progress and log messages, and it waits for the next
//! [`Step`]), and whether the call is parked. [`Driven`] wraps the handler's future so that after
//! every poll that leaves it waiting, the open input requests are reported to the attached
//! request as [`Step::Input`] and the call parks in the server's
//! [`ParkTable`](super::park::ParkTable) under its id (the id travels in the sealed
//! `requestState`), expires there, or stops when halted. The runtime's
//! [`Invocation`](actix_mcp_actors::dev::Invocation) runs it: polled once in place (a handler that
//! finishes at once needs no actor), then, across every round, in one invocation actor, which
//! isolates panics; [`CallLink::finish`] hands its outcome to the request attached when it ends.
//!
//! A call: begun by its first request → parked after each round → a retry takes it out of the
//! table and attaches, its `inputResponses` resolve the handler's awaited inputs, and the
//! handler goes on where it waited → ends when the handler finishes ([`Step::Done`] to the
//! attached request), when the park is full (the call stops at once; the retry replays it),
//! when it stays parked past its time to live, or when the attached request goes away
//! ([`CallLink::halt`]). Ending drops the handler's future and takes the call out of the table.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use indexmap::IndexMap;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use actix_mcp_actors::{
    PeerError,
    dev::{Metrics, RequestScope, SupervisedError},
};

use crate::protocol::{InputRequest, InputRequests, InputResponses, LoggingLevel};

use super::park::ParkTable;

/// A handler's output, its type erased while it crosses the call (the request that attaches
/// knows what to expect).
pub(crate) type Output = Box<dyn Any + Send>;

/// What the attached request learns from its call.
pub(crate) enum Step {
    /// The handler finished (or panicked).
    Done(Result<Output, SupervisedError>),
    /// The handler waits for these inputs; the call is parked under the id when `parked`.
    Input {
        requests: InputRequests,
        parked: Option<String>,
    },
}

impl fmt::Debug for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Done(outcome) => f.debug_tuple("Done").field(&outcome.is_ok()).finish(),
            Self::Input { requests, parked } => f
                .debug_struct("Input")
                .field("keys", &requests.keys().collect::<Vec<_>>())
                .field("parked", parked)
                .finish(),
        }
    }
}

/// An input the handler waits for.
struct Pending {
    request: InputRequest,
    /// Whether the attached request has been told about it.
    reported: bool,
    answer: Option<oneshot::Sender<Value>>,
}

#[derive(Default)]
struct LinkState {
    /// Every answer known: replayed from earlier rounds and given by retries.
    answers: InputResponses,
    pending: IndexMap<String, Pending>,
    /// The request waiting for this call's next step.
    waiter: Option<oneshot::Sender<Step>>,
    /// Set while the call is parked: when it expires.
    parked_until: Option<Instant>,
    /// Set when the call must stop (see [`CallLink::halt`]).
    halted: bool,
    /// Wakes the handler's future (to notice a halt).
    waker: Option<Waker>,
}

/// The state one implicit-style call shares between its handler and the requests serving it.
/// See the module docs.
pub(crate) struct CallLink {
    /// Minted when the call first parks (most calls never ask, and a random id costs a
    /// `getrandom` call).
    id: std::sync::OnceLock<String>,
    scope: Mutex<RequestScope>,
    /// The log level the request serving the call opted in to (2026: none, no log messages).
    log_level: Mutex<Option<LoggingLevel>>,
    /// Cancelled when the call stops early (halted): the handler's view of cancellation,
    /// which outlives each round's request.
    token: CancellationToken,
    next_key: AtomicU32,
    state: Mutex<LinkState>,
    table: Arc<ParkTable>,
    metrics: Arc<Metrics>,
}

impl fmt::Debug for CallLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("CallLink")
            .field("id", &self.minted_id())
            .field("answers", &state.answers.len())
            .field("pending", &state.pending.keys().collect::<Vec<_>>())
            .field("parked", &state.parked_until.is_some())
            .finish()
    }
}

/// What the park does when a call reports input requests.
enum Flush {
    /// Nothing to report, or reported and parked: the handler keeps waiting.
    Continue,
    /// Reported, but the call could not park: it must stop.
    Stop,
}

impl CallLink {
    /// A new call attached to `scope`, knowing `answers` (replayed from earlier rounds and
    /// this request's `inputResponses`).
    pub(crate) fn new(
        scope: RequestScope,
        log_level: Option<LoggingLevel>,
        answers: InputResponses,
        table: Arc<ParkTable>,
        metrics: Arc<Metrics>,
    ) -> Arc<Self> {
        Arc::new(Self {
            id: std::sync::OnceLock::new(),
            scope: Mutex::new(scope),
            log_level: Mutex::new(log_level),
            token: CancellationToken::new(),
            next_key: AtomicU32::new(0),
            state: Mutex::new(LinkState {
                answers,
                ..LinkState::default()
            }),
            table,
            metrics,
        })
    }

    fn lock(&self) -> MutexGuard<'_, LinkState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The call's id (what the sealed state names), minted on first use.
    pub(crate) fn id(&self) -> &str {
        self.id
            .get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
    }

    /// The call's id if it was ever minted (only then can it be in the park).
    fn minted_id(&self) -> Option<&str> {
        self.id.get().map(String::as_str)
    }

    /// The scope of the request currently serving the call.
    pub(crate) fn scope(&self) -> RequestScope {
        self.scope
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The log level of the request serving the call now.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        *self
            .log_level
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The call's cancellation token: cancelled when the request serving it goes away or is
    /// cancelled, not when a round ends.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Every answer known so far (sealed into the next state, for replay).
    pub(crate) fn answers(&self) -> InputResponses {
        self.lock().answers.clone()
    }

    /// Waits for the next step of the call (the first request, which starts it).
    pub(crate) fn wait(&self) -> oneshot::Receiver<Step> {
        let (tx, rx) = oneshot::channel();
        self.lock().waiter = Some(tx);
        rx
    }

    /// The handler asks for one input. Its key follows the order of the handler's asks
    /// (`{kind}-{n}`), so a run of the same handler asks under the same keys and replays the
    /// answers given before. Returns at once with a known answer; otherwise the input becomes
    /// part of the next `input_required` round and this waits for the retry that answers it.
    ///
    /// # Errors
    /// [`PeerError::Cancelled`] when the call stops first.
    ///
    /// # Cancel safety
    /// Dropping the future withdraws the input request (a later round no longer asks it).
    pub(crate) async fn ask(&self, kind: &str, request: InputRequest) -> Result<Value, PeerError> {
        let n = self.next_key.fetch_add(1, Ordering::Relaxed);
        let key = format!("{kind}-{n}");
        let rx = {
            let mut state = self.lock();
            if let Some(answer) = state.answers.get(&key) {
                return Ok(answer.clone());
            }
            let (tx, rx) = oneshot::channel();
            state.pending.insert(
                key.clone(),
                Pending {
                    request,
                    reported: false,
                    answer: Some(tx),
                },
            );
            rx
        };
        let mut withdraw = Withdraw {
            link: self,
            key: Some(key),
        };
        let answer = rx.await.map_err(|_| PeerError::Cancelled);
        withdraw.key = None;
        answer
    }

    /// A retry attaches: it serves the call from now on (its scope carries the handler's
    /// notifications), its answers resolve the inputs the handler waits for, and it waits for
    /// the next step. When none of them is answered, the next step is the same round again.
    ///
    /// `None` when the call stopped meanwhile (it expired as the retry came): the retry
    /// replays it instead.
    pub(crate) fn attach(
        self: &Arc<Self>,
        scope: RequestScope,
        log_level: Option<LoggingLevel>,
        responses: &InputResponses,
    ) -> Option<oneshot::Receiver<Step>> {
        let mut state = self.lock();
        if state.halted {
            return None;
        }
        *self
            .scope
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = scope;
        *self
            .log_level
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = log_level;
        let (tx, rx) = oneshot::channel();
        state.waiter = Some(tx);
        state.parked_until = None;
        let mut resolved = false;
        let keys: Vec<String> = state.pending.keys().cloned().collect();
        for key in keys {
            let Some(answer) = responses.get(&key) else {
                continue;
            };
            state.answers.insert(key.clone(), answer.clone());
            if let Some(mut pending) = state.pending.shift_remove(&key)
                && let Some(tx) = pending.answer.take()
            {
                resolved |= tx.send(answer.clone()).is_ok();
            }
        }
        for pending in state.pending.values_mut() {
            pending.reported = false;
        }
        if resolved {
            // The handler goes on; its future reports what it waits for next.
            if let Some(waker) = state.waker.take() {
                waker.wake();
            }
        } else if let Flush::Stop = self.flush_locked(&mut state) {
            state.halted = true;
            if let Some(waker) = state.waker.take() {
                waker.wake();
            }
        }
        Some(rx)
    }

    /// Stops the call: its handler is dropped at its next poll. Used when the attached request
    /// goes away.
    pub(crate) fn halt(&self) {
        self.token.cancel();
        let mut state = self.lock();
        state.halted = true;
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
    }

    /// The call ended (its invocation's outcome): the request attached now gets the handler's
    /// output or panic, and the call leaves the park. A halt, an expiry or a cancellation
    /// answers nobody (the call's request is gone, or a retry replays it).
    pub(crate) fn finish(&self, outcome: Result<Result<Output, Halt>, SupervisedError>) {
        let waiter = {
            let mut state = self.lock();
            state.halted = true;
            state.waiter.take()
        };
        if let Some(id) = self.minted_id() {
            self.table.remove(id);
        }
        let done = match outcome {
            Ok(Ok(output)) => Ok(output),
            Err(SupervisedError::Panicked(message)) => Err(SupervisedError::Panicked(message)),
            Ok(Err(halt)) => {
                tracing::debug!(id = ?self.minted_id(), ?halt, "an input_required call stopped");
                return;
            }
            Err(other) => {
                tracing::debug!(id = ?self.minted_id(), %other, "an input_required call stopped");
                return;
            }
        };
        if let Some(waiter) = waiter {
            // The request may be gone: the outcome is dropped then.
            let _ = waiter.send(Step::Done(done));
        }
    }

    /// Reports the open input requests to the attached request, if there are new ones, and
    /// parks the call.
    fn flush(self: &Arc<Self>) -> Flush {
        let mut state = self.lock();
        self.flush_locked(&mut state)
    }

    fn flush_locked(self: &Arc<Self>, state: &mut LinkState) -> Flush {
        if state.pending.values().all(|p| p.reported) || state.waiter.is_none() {
            return Flush::Continue;
        }
        let Some(waiter) = state.waiter.take() else {
            return Flush::Continue;
        };
        let mut requests = InputRequests::new();
        for (key, pending) in &mut state.pending {
            pending.reported = true;
            requests.insert(key.clone(), pending.request.clone());
        }
        let parked = self
            .table
            .park(self.clone(), &self.metrics)
            .then(|| self.id().to_owned());
        let flush = if parked.is_some() {
            state.parked_until = Some(Instant::now() + self.table.ttl());
            Flush::Continue
        } else {
            Flush::Stop
        };
        // The request may be gone; the call is parked all the same (a retry may still come).
        let _ = waiter.send(Step::Input { requests, parked });
        flush
    }
}

/// Withdraws an input request whose wait was dropped.
struct Withdraw<'a> {
    link: &'a CallLink,
    key: Option<String>,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.link.lock().pending.shift_remove(&key);
        }
    }
}

/// Why a call stopped without an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Halt {
    /// Halted by the request that served it, or it could not park.
    Stopped,
    /// Parked past its time to live.
    Expired,
}

/// The handler's future, driven so that the call reports its input requests after every poll,
/// parks, expires and halts. See the module docs.
pub(crate) struct Driven {
    work: BoxFuture<'static, Output>,
    link: Arc<CallLink>,
    expiry: Option<(Instant, Pin<Box<tokio::time::Sleep>>)>,
}

impl Driven {
    pub(crate) fn new(work: BoxFuture<'static, Output>, link: Arc<CallLink>) -> Self {
        Self {
            work,
            link,
            expiry: None,
        }
    }
}

impl Future for Driven {
    type Output = Result<Output, Halt>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let halted = {
            let mut state = this.link.lock();
            if !state.halted {
                state.waker = Some(cx.waker().clone());
            }
            state.halted
        };
        if halted {
            if this.link.token.is_cancelled() {
                // Cancelled: as in every era, the handler is polled once more, so that one
                // awaiting its own cancellation runs its cleanup up to its next await; its
                // output is dropped (a cancelled request is not answered).
                let _ = this.work.as_mut().poll(cx);
            }
            return Poll::Ready(Err(Halt::Stopped));
        }
        // A panic unwinds to the invocation running this future, which isolates it.
        if let Poll::Ready(output) = this.work.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        if let Flush::Stop = this.link.flush() {
            return Poll::Ready(Err(Halt::Stopped));
        }
        let until = this.link.lock().parked_until;
        match until {
            None => this.expiry = None,
            Some(until) => {
                if this.expiry.as_ref().is_none_or(|(at, _)| *at != until) {
                    let sleep = tokio::time::sleep_until(tokio::time::Instant::from_std(until));
                    this.expiry = Some((until, Box::pin(sleep)));
                }
                if let Some((_, sleep)) = &mut this.expiry
                    && sleep.as_mut().poll(cx).is_ready()
                {
                    // Decided under the link's lock, where a retry attaches: either the retry
                    // came first (the call is no longer parked, and goes on), or the call
                    // expires here and a retry that comes after finds it halted (and replays).
                    let mut state = this.link.lock();
                    if state.parked_until == Some(until) {
                        state.halted = true;
                        return Poll::Ready(Err(Halt::Expired));
                    }
                    drop(state);
                    this.expiry = None;
                }
            }
        }
        Poll::Pending
    }
}

/// How long a parked call waits for its retry by default.
pub(crate) const DEFAULT_PARK_TTL: Duration = Duration::from_secs(600);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use actix_mcp_actors::{RequestId, dev::ChannelOutlet};

    fn scope(id: i64) -> RequestScope {
        RequestScope::detached(RequestId::Number(id), ChannelOutlet::channel().0, None)
    }

    fn poll(driven: &mut Driven) -> Poll<Result<Output, Halt>> {
        let mut cx = TaskContext::from_waker(futures::task::noop_waker_ref());
        Pin::new(driven).poll(&mut cx)
    }

    /// A call parked past its time to live expires under the link's lock: a retry that comes
    /// as it expires either attaches first (and the call goes on) or finds it halted (and
    /// replays it); it is never attached to a call that then drops it as expired.
    #[tokio::test]
    async fn a_call_that_expires_is_never_attached_to() {
        let table = Arc::new(ParkTable::new(8, Duration::from_millis(10)));
        let link = CallLink::new(
            scope(1),
            None,
            InputResponses::new(),
            table.clone(),
            Arc::default(),
        );
        let mut first = link.wait();
        let asking = link.clone();
        let work: BoxFuture<'static, Output> = Box::pin(async move {
            let request = InputRequest::list_roots();
            Box::new(asking.ask("roots", request).await.is_ok()) as Output
        });
        let mut driven = Driven::new(work, link.clone());
        assert!(poll(&mut driven).is_pending());
        let Ok(Step::Input { parked, .. }) = first.try_recv() else {
            panic!("the round was not reported");
        };
        let id = parked.unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        // The call notices its expiry first...
        assert!(matches!(poll(&mut driven), Poll::Ready(Err(Halt::Expired))));
        // ...so the retry, still finding it in the table, cannot attach: it replays instead.
        let taken = table.take(&id).unwrap();
        assert!(
            taken
                .attach(scope(2), None, &InputResponses::new())
                .is_none(),
            "a retry attached to a call that has expired"
        );
    }

    /// A retry that attaches before the expiry is noticed keeps the call going.
    #[tokio::test]
    async fn a_retry_that_attaches_in_time_keeps_the_call() {
        let table = Arc::new(ParkTable::new(8, Duration::from_millis(10)));
        let link = CallLink::new(
            scope(1),
            None,
            InputResponses::new(),
            table.clone(),
            Arc::default(),
        );
        let _first = link.wait();
        let asking = link.clone();
        let work: BoxFuture<'static, Output> = Box::pin(async move {
            Box::new(
                asking
                    .ask("roots", InputRequest::list_roots())
                    .await
                    .is_ok(),
            ) as Output
        });
        let mut driven = Driven::new(work, link.clone());
        assert!(poll(&mut driven).is_pending());
        tokio::time::sleep(Duration::from_millis(30)).await;
        let mut answers = InputResponses::new();
        answers.insert("roots-0".into(), serde_json::json!({"roots": []}));
        let mut retry = link.attach(scope(2), None, &answers).unwrap();
        let Poll::Ready(Ok(output)) = poll(&mut driven) else {
            panic!("the call did not go on");
        };
        assert!(*output.downcast::<bool>().unwrap());
        assert!(
            retry.try_recv().is_err(),
            "the step is the caller's to send"
        );
    }
}
