//! The invocation actor: runs one piece of user code under supervision (a tool's, prompt's or
//! resource handler's future, one round of a task, a parked `input_required` call, a blocking
//! closure). Panic isolation, the time limit and cancellation exist here, once.
//!
//! [`Invocation::begin`] polls the future once in place: one that finishes in that poll (most
//! handlers never await) is delivered at once and no actor starts. One still pending moves, as
//! it is, into an invocation actor on the current arbiter, which polls it to its end.
//! [`Invocation::begin_blocking`] runs a closure on the blocking thread pool, always under an
//! actor. Whoever began it says where the outcome goes (a [`Deliver`] callback): the request
//! that waits for it ([`RequestScope::supervise`](crate::dev::RequestScope::supervise)), a task, or
//! the protocol layer's parked call, which hands it to whichever request is attached when it
//! ends.
//!
//! Lifecycle: Started (spawns the work and, with a time limit, a timer) → the work finishes or
//! panics (the outcome is delivered), the timer fires ([`SupervisedError::TimedOut`]), or
//! [`CancelCall`] arrives ([`SupervisedError::Cancelled`]) → Stopped, dropping the user's future
//! if it was still running. A panic never crosses this boundary: it becomes
//! [`SupervisedError::Panicked`]. A blocking closure cannot be interrupted: it runs to its end
//! on its thread, and its outcome is dropped. [`GetCallStatus`] reads the actor's state.

use std::any::Any;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use actix::{
    Actor, ActorContext, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message,
    MessageResult, WrapFuture,
};
use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::time::Instant;

use crate::metrics::{Gauge, Metrics};

/// How a supervised invocation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SupervisedError {
    /// The user's code panicked; the payload's message, when it had one.
    #[error("the invocation panicked: {0}")]
    Panicked(String),
    /// The invocation ran past its time limit and was stopped.
    #[error("the invocation timed out after {0:?}")]
    TimedOut(Duration),
    /// The request was cancelled (or ended, or its session did) before the invocation
    /// finished.
    #[error("the invocation was cancelled")]
    Cancelled,
}

/// The user code an invocation runs.
enum Work<T> {
    Async(BoxFuture<'static, T>),
    Blocking(Box<dyn FnOnce() -> T + Send>),
}

/// How an invocation ended: its output, or why it has none.
pub type Outcome<T> = Result<T, SupervisedError>;

/// Where an invocation's outcome goes, called once when it ends (also when it ends without
/// running to completion: cancelled, timed out, its arbiter gone).
pub type Deliver<T> = Box<dyn FnOnce(Outcome<T>) + Send>;

/// How [`Invocation::begin`] went.
#[derive(Debug)]
pub enum Begun<T: Send + 'static> {
    /// The work finished (or panicked) in its first poll: here is its outcome.
    Done(Outcome<T>),
    /// The work is pending: this actor runs it, and its outcome goes where `deliver` said.
    Running(Addr<Invocation<T>>),
}

/// One supervised invocation. See the module docs.
pub struct Invocation<T: Send + 'static> {
    work: Option<Work<T>>,
    blocking: bool,
    started: Instant,
    timeout: Option<Duration>,
    deliver: Option<Deliver<T>>,
    metrics: Arc<Metrics>,
}

impl<T: Send + 'static> fmt::Debug for Invocation<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Invocation")
            .field("blocking", &self.blocking)
            .field("running_for", &self.started.elapsed())
            .field("timeout", &self.timeout)
            .finish()
    }
}

pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// Polls `fut` once, here, with a waker that does nothing: its outcome if it finished (a panic
/// is caught and becomes [`SupervisedError::Panicked`]), `None` while it is pending. Whoever
/// polls it next registers the waker that counts ([`Invocation::begin`] does, when it takes a
/// pending future over).
pub fn poll_once<T>(fut: &mut BoxFuture<'_, T>) -> Option<Outcome<T>> {
    let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
    match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx))) {
        Ok(Poll::Ready(value)) => Some(Ok(value)),
        Ok(Poll::Pending) => None,
        Err(payload) => Some(Err(SupervisedError::Panicked(panic_message(&*payload)))),
    }
}

impl<T: Send + 'static> Invocation<T> {
    /// Begins an invocation of `fut`: polls it once here (a panic is caught). Finished, its
    /// outcome comes back at once ([`Begun::Done`]): no actor, task or channel. Still pending,
    /// an invocation actor on the current arbiter takes the future over as it is (any waker
    /// registered in this poll is replaced when the actor polls it, which it does as soon as it
    /// starts), `timeout` counting from then, and its outcome will go where `deliver` (asked for
    /// only then) says ([`Begun::Running`]).
    pub fn begin(
        fut: BoxFuture<'static, T>,
        timeout: Option<Duration>,
        metrics: &Arc<Metrics>,
        deliver: impl FnOnce() -> Deliver<T>,
    ) -> Begun<T> {
        let mut fut = fut;
        match poll_once(&mut fut) {
            Some(outcome) => Begun::Done(outcome),
            None => Begun::Running(Self::spawn(
                Work::Async(fut),
                timeout,
                metrics.clone(),
                deliver(),
            )),
        }
    }

    /// Begins an invocation of the blocking closure `f` on the blocking thread pool, always under
    /// an actor. A closure cannot be interrupted: cancelled or timed out, it runs to its end on
    /// its thread, and its outcome is dropped.
    pub fn begin_blocking(
        f: impl FnOnce() -> T + Send + 'static,
        timeout: Option<Duration>,
        metrics: &Arc<Metrics>,
        deliver: Deliver<T>,
    ) -> Addr<Self> {
        Self::spawn(
            Work::Blocking(Box::new(f)),
            timeout,
            metrics.clone(),
            deliver,
        )
    }

    fn spawn(
        work: Work<T>,
        timeout: Option<Duration>,
        metrics: Arc<Metrics>,
        deliver: Deliver<T>,
    ) -> Addr<Self> {
        metrics.inc(Gauge::ToolCalls);
        Self {
            blocking: matches!(work, Work::Blocking(_)),
            work: Some(work),
            started: Instant::now(),
            timeout,
            deliver: Some(deliver),
            metrics,
        }
        .start()
    }

    /// Delivers the outcome (once) and stops.
    fn conclude(&mut self, outcome: Outcome<T>, ctx: &mut Context<Self>) {
        if let Some(deliver) = self.deliver.take() {
            deliver(outcome);
        }
        ctx.stop();
    }
}

async fn run<T: Send + 'static>(work: Work<T>) -> Outcome<T> {
    match work {
        Work::Async(fut) => AssertUnwindSafe(fut)
            .catch_unwind()
            .await
            .map_err(|payload| SupervisedError::Panicked(panic_message(&*payload))),
        Work::Blocking(f) => {
            match tokio::task::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(f)))
                .await
            {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(payload)) => Err(SupervisedError::Panicked(panic_message(&*payload))),
                Err(join) => Err(SupervisedError::Panicked(join.to_string())),
            }
        }
    }
}

impl<T: Send + 'static> Actor for Invocation<T> {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let Some(work) = self.work.take() else {
            ctx.stop();
            return;
        };
        ctx.spawn(
            run(work)
                .into_actor(self)
                .map(|outcome, act, ctx| act.conclude(outcome, ctx)),
        );
        if let Some(limit) = self.timeout {
            ctx.run_later(limit, move |act, ctx| {
                tracing::debug!(?limit, "a supervised invocation timed out");
                act.conclude(Err(SupervisedError::TimedOut(limit)), ctx);
            });
        }
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        // Stopped without an outcome (its arbiter is going away): it was cancelled.
        if let Some(deliver) = self.deliver.take() {
            deliver(Err(SupervisedError::Cancelled));
        }
    }
}

impl<T: Send + 'static> Drop for Invocation<T> {
    fn drop(&mut self) {
        self.metrics.dec(Gauge::ToolCalls);
    }
}

/// Stop the invocation: its outcome is [`SupervisedError::Cancelled`]. Sent by the request (or
/// task) that began it, when that request is cancelled or ends. The request's token is
/// cancelled before this is sent, and the work is polled once more before it is dropped, so a
/// handler that awaits its own cancellation gets to run its cleanup up to its next await.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct CancelCall;

impl<T: Send + 'static> Handler<CancelCall> for Invocation<T> {
    type Result = ();

    fn handle(&mut self, _: CancelCall, ctx: &mut Self::Context) {
        // Spawned after the work, so the context polls the work first in its next round.
        let last_round = ActorFutureExt::map(
            actix::fut::ready::<()>(()),
            |(), act: &mut Self, ctx: &mut Context<Self>| {
                act.conclude(Err(SupervisedError::Cancelled), ctx);
            },
        );
        ctx.spawn(last_round);
    }
}

/// What a running invocation is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallStatus {
    /// How long it has been running.
    pub running_for: Duration,
    /// Its time limit, if any.
    pub timeout: Option<Duration>,
    /// Whether it is a blocking closure on the blocking thread pool.
    pub blocking: bool,
}

/// Query a running invocation's status.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "CallStatus")]
pub struct GetCallStatus;

impl<T: Send + 'static> Handler<GetCallStatus> for Invocation<T> {
    type Result = MessageResult<GetCallStatus>;

    fn handle(&mut self, _: GetCallStatus, _: &mut Self::Context) -> Self::Result {
        MessageResult(CallStatus {
            running_for: self.started.elapsed(),
            timeout: self.timeout,
            blocking: self.blocking,
        })
    }
}

/// The invocation actor under its former name.
#[deprecated(since = "0.2.0", note = "renamed `Invocation`")]
pub type ToolCall<T> = Invocation<T>;
