//! Tool-call actor: runs one user future (or blocking closure) under supervision.
//!
//! Started by [`RequestScope::supervise`](crate::RequestScope::supervise) when the future it
//! was given is still pending after its first poll (one that finishes at once needs no actor),
//! and by [`RequestScope::supervise_blocking`](crate::RequestScope::supervise_blocking) for
//! every blocking closure. The request that started it holds its address and stops it with
//! [`CancelCall`] when the request is cancelled or ends; [`GetCallStatus`] reads its state.
//!
//! Lifecycle: `started` spawns the work and, with a time limit, a timer → the work finishes or
//! panics (the outcome goes to the waiting request), the timer fires
//! ([`SupervisedError::TimedOut`]), or [`CancelCall`] arrives ([`SupervisedError::Cancelled`])
//! → the actor stops, dropping the user's future if it was still running. A panic never
//! crosses this boundary: it becomes [`SupervisedError::Panicked`]. A blocking closure cannot
//! be interrupted: it runs to its end on its thread, and its outcome is dropped.

use std::any::Any;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use actix::{
    Actor, ActorContext, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message,
    MessageResult, WrapFuture,
};
use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::oneshot;
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

pub(crate) enum Supervised<T> {
    Async(BoxFuture<'static, T>),
    Blocking(Box<dyn FnOnce() -> T + Send>),
}

type Outcome<T> = Result<T, SupervisedError>;

/// One supervised invocation. See the module docs.
pub struct ToolCall<T: Send + 'static> {
    work: Option<Supervised<T>>,
    blocking: bool,
    started: Instant,
    timeout: Option<Duration>,
    reply: Option<oneshot::Sender<Outcome<T>>>,
    metrics: Arc<Metrics>,
}

impl<T: Send + 'static> fmt::Debug for ToolCall<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCall")
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

impl<T: Send + 'static> ToolCall<T> {
    /// Starts the actor on the current arbiter; the outcome arrives on `reply`.
    pub(crate) fn spawn(
        work: Supervised<T>,
        timeout: Option<Duration>,
        reply: oneshot::Sender<Outcome<T>>,
        metrics: Arc<Metrics>,
    ) -> Addr<Self> {
        metrics.inc(Gauge::ToolCalls);
        Self {
            blocking: matches!(work, Supervised::Blocking(_)),
            work: Some(work),
            started: Instant::now(),
            timeout,
            reply: Some(reply),
            metrics,
        }
        .start()
    }

    /// Sends the outcome (once) and stops.
    fn conclude(&mut self, outcome: Outcome<T>, ctx: &mut Context<Self>) {
        if let Some(reply) = self.reply.take() {
            // The requester may be gone (its request was cancelled): nothing to do then.
            let _ = reply.send(outcome);
        }
        ctx.stop();
    }
}

async fn run<T: Send + 'static>(work: Supervised<T>) -> Outcome<T> {
    match work {
        Supervised::Async(fut) => AssertUnwindSafe(fut)
            .catch_unwind()
            .await
            .map_err(|payload| SupervisedError::Panicked(panic_message(&*payload))),
        Supervised::Blocking(f) => {
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

impl<T: Send + 'static> Actor for ToolCall<T> {
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
        // Stopped without an outcome (its arbiter is going away): the waiter sees a cancel.
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(Err(SupervisedError::Cancelled));
        }
    }
}

impl<T: Send + 'static> Drop for ToolCall<T> {
    fn drop(&mut self) {
        self.metrics.dec(Gauge::ToolCalls);
    }
}

/// Stop the invocation: the waiting request gets [`SupervisedError::Cancelled`]. Sent by the
/// request that started it, when that request is cancelled or ends. The request's token is
/// cancelled before this is sent, and the work is polled once more before it is dropped, so a
/// handler that awaits its own cancellation gets to run its cleanup up to its next await.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct CancelCall;

impl<T: Send + 'static> Handler<CancelCall> for ToolCall<T> {
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

impl<T: Send + 'static> Handler<GetCallStatus> for ToolCall<T> {
    type Result = MessageResult<GetCallStatus>;

    fn handle(&mut self, _: GetCallStatus, _: &mut Self::Context) -> Self::Result {
        MessageResult(CallStatus {
            running_for: self.started.elapsed(),
            timeout: self.timeout,
            blocking: self.blocking,
        })
    }
}
