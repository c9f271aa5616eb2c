//! Tool-call actor: runs one user future (or blocking closure) under supervision.
//!
//! Started by [`RequestScope::supervise`](crate::RequestScope::supervise) when the future it
//! was given is still pending after its first poll (one that finishes at once needs no actor),
//! and by [`RequestScope::supervise_blocking`](crate::RequestScope::supervise_blocking) for
//! every blocking closure. Owns a child of the request's cancellation token and an optional
//! timeout.
//!
//! Lifecycle: `started` spawns the work → the work finishes, panics, times out, or the token is
//! cancelled → the outcome is sent to the waiting request → the actor stops, dropping the
//! user's future if it was still running. A panic never crosses this boundary: it becomes
//! [`SupervisedError::Panicked`].

use std::any::Any;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, ActorContext, ActorFutureExt, AsyncContext, Context, WrapFuture};
use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::metrics::{Gauge, Metrics};

/// How a supervised invocation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SupervisedError {
    /// The user's code panicked; the payload's message, when it had one.
    #[error("the invocation panicked: {0}")]
    Panicked(String),
    /// The invocation ran past its time limit and was cancelled.
    #[error("the invocation timed out after {0:?}")]
    TimedOut(Duration),
    /// The request was cancelled (or its session ended) before the invocation finished.
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
    token: CancellationToken,
    timeout: Option<Duration>,
    reply: Option<oneshot::Sender<Outcome<T>>>,
    metrics: Arc<Metrics>,
}

impl<T: Send + 'static> fmt::Debug for ToolCall<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCall")
            .field("running", &self.work.is_none())
            .field("cancelled", &self.token.is_cancelled())
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
    pub(crate) fn spawn(
        work: Supervised<T>,
        token: CancellationToken,
        timeout: Option<Duration>,
        reply: oneshot::Sender<Outcome<T>>,
        metrics: Arc<Metrics>,
    ) {
        metrics.inc(Gauge::ToolCalls);
        Self {
            work: Some(work),
            token,
            timeout,
            reply: Some(reply),
            metrics,
        }
        .start();
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

/// The work under a time limit and a cancellation token. The work is polled first: a handler
/// awaiting its own cancellation gets to finish its cleanup; one that ignores it is dropped at
/// its next await.
pub(crate) async fn supervised<T: Send + 'static>(
    work: Supervised<T>,
    token: CancellationToken,
    timeout: Option<Duration>,
) -> Outcome<T> {
    let limited = async {
        match timeout {
            Some(limit) => tokio::time::timeout(limit, run(work))
                .await
                .unwrap_or(Err(SupervisedError::TimedOut(limit))),
            None => run(work).await,
        }
    };
    tokio::select! {
        biased;
        outcome = limited => outcome,
        () = token.cancelled() => Err(SupervisedError::Cancelled),
    }
}

impl<T: Send + 'static> Actor for ToolCall<T> {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let Some(work) = self.work.take() else {
            ctx.stop();
            return;
        };
        let fut = supervised(work, self.token.clone(), self.timeout);
        ctx.spawn(fut.into_actor(self).map(|outcome, act, ctx| {
            if let Some(reply) = act.reply.take() {
                // The requester may be gone (its request was cancelled): nothing to do then.
                let _ = reply.send(outcome);
            }
            ctx.stop();
        }));
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        self.token.cancel();
        self.metrics.dec(Gauge::ToolCalls);
    }
}
