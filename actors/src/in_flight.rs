//! In-flight request actor: one per JSON-RPC request the server is answering.
//!
//! Started by [`SessionHandle::request`](crate::SessionHandle::request) when a request arrives
//! (entering its session's in-flight table), or directly by a stateless transport. Owns
//! the request's [`RequestScope`]: its cancellation token (a child of the session's), its
//! progress token and its outlet. Runs [`Dispatch::request`] as a future inside its context.
//!
//! Lifecycle: Started (spawns the handler future) → Running → Stopped, when the handler
//! answers (the response is delivered first), on [`Cancel`] from the session, or when the token
//! is cancelled (session closed). Stopping drops the handler future at its next await, so a
//! cancelled request never sends a response. `stopped` cancels the token, leaves the in-flight
//! table and finishes the outlet, through the session ([`RequestFinished`]) when the request
//! made server-to-client requests that must be cancelled first.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use actix::{
    Actor, ActorContext, ActorFutureExt, AsyncContext, Context, Handler, Message, WrapFuture,
};
use futures::FutureExt;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::dispatch::Dispatch;
use crate::jsonrpc::{ErrorObject, Frame, Request};
use crate::metrics::{Gauge, Metrics};
use crate::outlet::Outlet;
use crate::scope::RequestScope;
use crate::session::{RequestFinished, progress_token};
use crate::tool_call::panic_message;

/// The in-flight request actor. See the module docs.
pub struct InFlight {
    request: Option<Request>,
    scope: RequestScope,
    dispatch: Arc<dyn Dispatch>,
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
    pub(crate) fn new(
        request: Request,
        scope: RequestScope,
        dispatch: Arc<dyn Dispatch>,
        cancellable: bool,
    ) -> Self {
        Self {
            request: Some(request),
            scope,
            dispatch,
            cancellable,
        }
    }

    /// Answers one request outside any session (stateless mode): starts an in-flight actor on
    /// the current arbiter whose response goes to `outlet`. Dropping the returned guard cancels
    /// the request (the HTTP layer holds it for as long as the client waits).
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
        Self::new(request, scope, dispatch, cancellable).start();
        token.drop_guard()
    }

    fn respond(&self, outcome: Result<crate::dispatch::Reply, String>) {
        let id = self.scope.id();
        let frame = match outcome {
            Ok(Ok(result)) => Frame::result(id, &*result),
            Ok(Err(error)) => Frame::error(Some(id), &error),
            Err(panic) => {
                tracing::error!(id = %id, panic, "a request handler panicked");
                Frame::error(
                    Some(id),
                    &ErrorObject::internal("the request handler failed"),
                )
            }
        };
        self.scope.outlet().deliver_or_log(frame, "response");
    }
}

impl Actor for InFlight {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.scope.metrics().inc(Gauge::InFlight);
        let Some(request) = self.request.take() else {
            ctx.stop();
            return;
        };
        let fut =
            AssertUnwindSafe(self.dispatch.request(request, self.scope.clone())).catch_unwind();
        ctx.spawn(fut.into_actor(self).map(|outcome, act, ctx| {
            // Out of the in-flight table before the answer leaves, so whatever the peer sends
            // after reading it (a late cancellation, say) finds the table current.
            if let Some(session) = act.scope.session() {
                session.forget_request(act.scope.id());
            }
            // A request cancelled meanwhile sends nothing, even if its handler already answered.
            if !act.scope.is_cancelled() {
                act.respond(outcome.map_err(|payload| panic_message(&*payload)));
            }
            ctx.stop();
        }));
        let token = self.scope.token().clone();
        ctx.spawn(
            async move { token.cancelled().await }
                .into_actor(self)
                .map(|(), _, ctx| ctx.stop()),
        );
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        self.scope.token().cancel();
        self.scope.metrics().dec(Gauge::InFlight);
        let Some(session) = self.scope.session() else {
            self.scope.outlet().finish();
            return;
        };
        session.forget_request(self.scope.id());
        if self.scope.made_peer_requests() && session.addr().connected() {
            // The session finishes the outlet after cancelling this request's pending
            // server-to-client requests, so their `notifications/cancelled` come first.
            session.addr().do_send(RequestFinished {
                id: self.scope.id().clone(),
                outlet: self.scope.outlet().clone(),
            });
        } else {
            self.scope.outlet().finish();
        }
    }
}

/// Stop this request. Sent by [`Session`] on `notifications/cancelled` and when the session
/// closes. No reply: per spec the cancelled request then sends no response at all.
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
