//! In-flight request actor: one per JSON-RPC request the server is still answering.
//!
//! When a request arrives ([`SessionHandle::request`](crate::SessionHandle::request), or a
//! stateless transport), its [`Dispatch::request`] future is polled once in place. A request
//! answered in that poll never waited and is done. A request still pending becomes this actor,
//! which takes over the future and enters its session's in-flight table (so a
//! `notifications/cancelled` finds it). The actor owns the request's [`RequestScope`]: its
//! cancellation token (a child of the session's), its progress token and its outlet.
//!
//! Lifecycle: Started (polls the handler future on) → Running → Stopped, when the handler
//! answers (the response is delivered first), on [`Cancel`] from the session, or when the token
//! is cancelled (session closed). Stopping drops the handler future at its next await, so a
//! cancelled request never sends a response. `stopped` cancels the token, leaves the in-flight
//! table and finishes the outlet, through the session ([`RequestFinished`]) when the request
//! made server-to-client requests that must be cancelled first.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use actix::{
    Actor, ActorContext, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message, WrapFuture,
};
use futures::FutureExt;
use futures::future::{BoxFuture, CatchUnwind};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::dispatch::{Dispatch, Reply};
use crate::jsonrpc::{ErrorObject, Frame, Request};
use crate::metrics::{Gauge, Metrics};
use crate::outlet::Outlet;
use crate::scope::RequestScope;
use crate::session::{RequestFinished, progress_token};
use crate::tool_call::panic_message;

/// A request's handler future, with panics caught.
type Work = CatchUnwind<AssertUnwindSafe<BoxFuture<'static, Reply>>>;

/// The in-flight request actor. See the module docs.
pub struct InFlight {
    work: Option<Work>,
    scope: RequestScope,
    cancellable: bool,
}

impl fmt::Debug for InFlight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InFlight")
            .field("id", self.scope.id())
            .field("cancelled", &self.scope.is_cancelled())
            .field("cancellable", &self.cancellable)
            .finish()
    }
}

impl InFlight {
    /// Starts answering `request`: its handler future is polled once in place. A request
    /// answered in that poll (it never had to wait) is done: its response goes out and `None`
    /// comes back. A request still pending becomes an in-flight actor on the current arbiter,
    /// which owns the future from then on and is returned.
    pub(crate) fn begin(
        request: Request,
        scope: RequestScope,
        dispatch: &Arc<dyn Dispatch>,
        cancellable: bool,
    ) -> Option<Addr<Self>> {
        let mut work = AssertUnwindSafe(dispatch.request(request, scope.clone())).catch_unwind();
        // Any waker the future registers here is replaced when the actor polls it again, which
        // it does as soon as it starts.
        let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
        match Pin::new(&mut work).poll(&mut cx) {
            Poll::Ready(outcome) => {
                respond(&scope, outcome, None);
                finish(&scope, None);
                None
            }
            Poll::Pending => Some(
                Self {
                    work: Some(work),
                    scope,
                    cancellable,
                }
                .start(),
            ),
        }
    }

    /// Answers one request outside any session (stateless mode): the request runs on the
    /// current arbiter (polled once in place, then an actor only if still pending) and its
    /// response goes to `outlet`. Dropping the returned guard cancels the request (the HTTP
    /// layer holds it for as long as the client waits).
    pub fn start_detached(
        request: Request,
        dispatch: Arc<dyn Dispatch>,
        outlet: Outlet,
        metrics: Arc<Metrics>,
    ) -> DropGuard {
        let token = CancellationToken::new();
        let progress = progress_token(request.params.as_ref());
        let scope = RequestScope::new(
            request.id.clone(),
            token.clone(),
            outlet,
            None,
            progress,
            metrics,
        );
        let cancellable = dispatch.is_cancellable(&request.method);
        Self::begin(request, scope, &dispatch, cancellable);
        token.drop_guard()
    }
}

/// Sends a finished request's response (or the error its panic becomes), unless the request
/// was cancelled meanwhile: a cancelled request sends nothing. `actor` is the request's actor,
/// when it became one.
fn respond(
    scope: &RequestScope,
    outcome: Result<Reply, Box<dyn Any + Send>>,
    actor: Option<&Addr<InFlight>>,
) {
    // Out of the in-flight table before the answer leaves, so whatever the peer sends after
    // reading it (a late cancellation, say) finds the table current.
    if let (Some(session), Some(actor)) = (scope.session(), actor) {
        session.forget_request(scope.id(), actor);
    }
    if scope.is_cancelled() {
        return;
    }
    let id = scope.id();
    let frame = match outcome {
        Ok(Ok(result)) => Frame::result(id, &*result),
        Ok(Err(error)) => Frame::error(Some(id), &error),
        Err(payload) => {
            let panic = panic_message(&*payload);
            tracing::error!(id = %id, panic, "a request handler panicked");
            Frame::error(
                Some(id),
                &ErrorObject::internal("the request handler failed"),
            )
        }
    };
    scope.outlet().deliver_or_log(frame, "response");
}

/// Ends a request, answered or not: its token is cancelled (work it started stops), it leaves
/// the in-flight table, and its outlet is finished, through the session ([`RequestFinished`])
/// when it made server-to-client requests that must be cancelled first.
fn finish(scope: &RequestScope, actor: Option<&Addr<InFlight>>) {
    scope.token().cancel();
    let Some(session) = scope.session() else {
        scope.outlet().finish();
        return;
    };
    if let Some(actor) = actor {
        session.forget_request(scope.id(), actor);
    }
    if scope.made_peer_requests() && session.addr().connected() {
        // The session finishes the outlet after cancelling this request's pending
        // server-to-client requests, so their `notifications/cancelled` come first.
        session.addr().do_send(RequestFinished {
            id: scope.id().clone(),
            outlet: scope.outlet().clone(),
        });
    } else {
        scope.outlet().finish();
    }
}

impl Actor for InFlight {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.scope.metrics().inc(Gauge::InFlight);
        let Some(work) = self.work.take() else {
            ctx.stop();
            return;
        };
        let token = self.scope.token().clone();
        // One future: the work, or the token's cancellation (the session ended), whichever
        // comes first. The work is polled first, so a finished answer is never lost to a race.
        let fut = async move {
            tokio::select! {
                biased;
                outcome = work => Some(outcome),
                () = token.cancelled() => None,
            }
        };
        ctx.spawn(fut.into_actor(self).map(|outcome, act, ctx| {
            if let Some(outcome) = outcome {
                respond(&act.scope, outcome, Some(&ctx.address()));
            }
            ctx.stop();
        }));
    }

    fn stopped(&mut self, ctx: &mut Self::Context) {
        self.scope.metrics().dec(Gauge::InFlight);
        finish(&self.scope, Some(&ctx.address()));
    }
}

/// Stop this request. Sent through the in-flight table on `notifications/cancelled`, and by the
/// [`Session`](crate::Session) when it closes. No reply: per spec the cancelled request then
/// sends no response at all.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Cancel {
    /// The reason the peer gave, if any.
    pub reason: Option<String>,
}

impl Handler<Cancel> for InFlight {
    type Result = ();

    fn handle(&mut self, msg: Cancel, ctx: &mut Self::Context) {
        if !self.cancellable
            && !self
                .scope
                .session()
                .is_some_and(|s| s.token().is_cancelled())
        {
            tracing::debug!(id = %self.scope.id(), "ignored a cancellation of a request that cannot be cancelled");
            return;
        }
        tracing::debug!(id = %self.scope.id(), reason = ?msg.reason, "request cancelled");
        self.scope.token().cancel();
        ctx.stop();
    }
}
