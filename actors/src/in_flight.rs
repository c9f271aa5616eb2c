//! In-flight request actor: one per JSON-RPC request the server is still answering.
//!
//! When a request arrives ([`SessionHandle::request`](crate::SessionHandle::request), or
//! [`RegistryHandle::start_detached`](crate::RegistryHandle::start_detached) without a
//! session), its [`Dispatch::request`] future is polled
//! once in place. A request answered in that poll never waited: it is done, and no actor
//! starts. A request still pending becomes this actor, which takes the future over as it is
//! and is recorded in its session's in-flight table, where a `notifications/cancelled` finds
//! it (a request without a session is recorded in its registry's table the same way). The
//! actor owns the request's [`RequestScope`]: its cancellation token, its progress
//! token, its outlet and its running tool calls.
//!
//! Lifecycle: Started (polls the handler future on) → Running → Stopped, when the handler
//! answers (the response is delivered first) or on [`Cancel`] (from the session's table, or from
//! the session as it ends). Stopping drops the handler future, so a cancelled request never
//! sends a response. When the actor is gone (stopped, or killed by a panic) the request ends:
//! its token is cancelled, its tool calls receive `CancelCall`, its row leaves the table, and
//! its outlet is finished, through the session ([`RequestFinished`]) when it made
//! server-to-client requests that must be cancelled first.
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

use crate::dispatch::{Dispatch, Reply};
use crate::invocation::panic_message;
use crate::jsonrpc::{ErrorObject, Frame, FrameKind, Request};
use crate::metrics::Gauge;
use crate::scope::RequestScope;
use crate::session::RequestFinished;

/// A request's handler future, with panics caught.
type Work = CatchUnwind<AssertUnwindSafe<BoxFuture<'static, Reply>>>;

/// The in-flight request actor. See the module docs.
pub struct InFlight {
    work: Option<Work>,
    scope: RequestScope,
}

impl fmt::Debug for InFlight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InFlight")
            .field("id", self.scope.id())
            .field("cancelled", &self.scope.is_cancelled())
            .finish()
    }
}

impl InFlight {
    /// Starts answering `request`: its handler future is polled once in place. A request
    /// answered in that poll is done: its response goes out and `None` comes back. A request
    /// still pending becomes an in-flight actor on the current arbiter, which owns the future
    /// from then on and is returned.
    pub(crate) fn begin(
        request: Request,
        scope: RequestScope,
        dispatch: &Arc<dyn Dispatch>,
    ) -> Option<Addr<Self>> {
        let mut work = AssertUnwindSafe(dispatch.request(request, scope.clone())).catch_unwind();
        // Any waker the future registers here is replaced when the actor polls it again, which
        // it does as soon as it starts.
        let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
        match Pin::new(&mut work).poll(&mut cx) {
            Poll::Ready(outcome) => {
                respond(&scope, outcome);
                end(&scope);
                None
            }
            Poll::Pending => {
                scope.metrics().inc(Gauge::InFlight);
                Some(
                    Self {
                        work: Some(work),
                        scope,
                    }
                    .start(),
                )
            }
        }
    }
}

/// Cancels a request's actor when dropped (see
/// [`RegistryHandle::start_detached`](crate::RegistryHandle::start_detached)).
#[derive(Debug)]
#[must_use = "dropping the guard cancels the request"]
pub struct CancelOnDrop(Option<Addr<InFlight>>);

impl CancelOnDrop {
    pub(crate) fn new(actor: Option<Addr<InFlight>>) -> Self {
        Self(actor)
    }

    /// Lets the request run to its end whatever happens to the guard.
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(actor) = self.0.take() {
            actor.do_send(Cancel {
                reason: Some("the client went away".into()),
            });
        }
    }
}

/// Sends a finished request's response (or the error its panic becomes), unless the request
/// was cancelled meanwhile: a cancelled request sends nothing.
fn respond(scope: &RequestScope, outcome: Result<Reply, Box<dyn Any + Send>>) {
    // Out of the in-flight table before the answer leaves, so whatever the peer sends after
    // reading it (a new request reusing the id, a late cancellation) finds the table current.
    scope.forget();
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

/// Ends a request, answered or not: its token is cancelled and its tool calls are told (work
/// it started stops), it leaves the in-flight table, lets go of its holds, and its outlet is
/// finished, through the
/// session ([`RequestFinished`]) when it made server-to-client requests that must be
/// cancelled first.
fn end(scope: &RequestScope) {
    scope.cancel();
    scope.forget();
    scope.release_holds();
    match scope.session() {
        Some(session) if scope.made_peer_requests() && session.addr().connected() => {
            // The session finishes the outlet after cancelling this request's pending
            // server-to-client requests, so their `notifications/cancelled` come first.
            session.addr().do_send(RequestFinished {
                id: scope.id().clone(),
                outlet: scope.outlet().clone(),
            });
        }
        _ => scope.outlet().finish(),
    }
}

impl Actor for InFlight {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let Some(work) = self.work.take() else {
            ctx.stop();
            return;
        };
        ctx.spawn(work.into_actor(self).map(|outcome, act, ctx| {
            respond(&act.scope, outcome);
            ctx.stop();
        }));
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // Also after a panic in the actor, when it never reached `stopped`.
        self.scope.metrics().dec(Gauge::InFlight);
        end(&self.scope);
    }
}

/// Stop this request. Sent through the in-flight table on `notifications/cancelled`, by the
/// session when it ends, and by a stateless transport whose client went away. No reply: per
/// spec the cancelled request then sends no response at all.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Cancel {
    /// The reason the peer gave, if any.
    pub reason: Option<String>,
}

impl Handler<Cancel> for InFlight {
    type Result = ();

    fn handle(&mut self, msg: Cancel, ctx: &mut Self::Context) {
        tracing::debug!(id = %self.scope.id(), reason = ?msg.reason, "request cancelled");
        self.scope.cancel();
        ctx.stop();
    }
}

/// Stop this request and tell its peer: `notifications/cancelled` (with the request's id and
/// `reason`) goes out on the request's outlet first, then the request ends as on [`Cancel`]
/// and sends no response; or, for a request whose scope says so
/// ([`RequestScope::answer_aborts_with`]), an error response takes the notification's place. Sent by [`SessionHandle::abort_all`](crate::SessionHandle::abort_all)
/// when a draining server's deadline passes.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Abort {
    /// Why the request is stopped (sent to the peer).
    pub reason: String,
}

impl Handler<Abort> for InFlight {
    type Result = ();

    fn handle(&mut self, msg: Abort, ctx: &mut Self::Context) {
        tracing::debug!(id = %self.scope.id(), reason = %msg.reason, "request aborted");
        if let Some(code) = self.scope.abort_code() {
            // Its revision forbids a server's cancellation: it is answered with an error.
            self.scope.forget();
            let error = ErrorObject::new(code, format!("request cancelled: {}", msg.reason));
            let frame = Frame::error(Some(self.scope.id()), &error);
            self.scope.outlet().deliver_or_log(frame, "abort error");
        } else if self.scope.outlet().accepts(FrameKind::Notification) {
            // An outlet that carries only the response (a JSON answer) just finishes.
            let params = serde_json::json!({ "requestId": self.scope.id(), "reason": msg.reason });
            let frame = Frame::notification("notifications/cancelled", Some(&params));
            self.scope.outlet().deliver_or_log(frame, "cancellation");
        }
        self.scope.cancel();
        ctx.stop();
    }
}
