//! Renewing an expired session (opt-in, [`ClientBuilder::renew_expired_sessions`]).
//!
//! A server over Streamable HTTP may forget a session (it restarted, the session idled out):
//! it answers the next request with `404`, which the transport reports as
//! [`ClientError::SessionExpired`]. With renewal on, the session actor then
//! initializes a new session with the same `initialize` params (`initialize`, then
//! `notifications/initialized`), and sends again each request the server refused meanwhile,
//! once. What it does not do:
//!
//! - re-send a request whose answer was lost with the old session (it may have run at the
//!   server): that one fails with [`ClientError::SessionExpired`];
//! - restore the old session's state at the server (resource subscriptions, the logging
//!   level): those are the application's to set again;
//! - accept a new session on another protocol version: the waiting requests then fail with
//!   [`ClientError::Protocol`].
//!
//! If the new `initialize` fails, the waiting requests fail with
//! [`ClientError::SessionExpired`] and the next refusal tries again.
//!
//! [`ClientBuilder::renew_expired_sessions`]: crate::client::ClientBuilder::renew_expired_sessions

use std::sync::Arc;
use std::time::Duration;

use actix::{ActorFutureExt, AsyncContext, Context, Handler, Message, WrapFuture};
use actix_mcp_actors::{RequestId, dev::Frame};
use serde_json::Value;
use tokio::sync::oneshot;

use super::{Call, ClientSession};
use crate::client::error::ClientError;
use crate::client::transport::Outgoing;
use crate::protocol::method;

/// Turns renewal on: what a new session's `initialize` sends, and the protocol version the
/// first handshake settled on (a new session must settle on it too).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(crate) struct EnableRenewal {
    /// The `initialize` params, as the first handshake sent them.
    pub(crate) params: Value,
    /// The protocol version of the first handshake.
    pub(crate) version: String,
    /// The time limit of the `initialize` request.
    pub(crate) timeout: Option<Duration>,
}

/// What renewal needs, and where it stands.
#[derive(Debug)]
pub(super) struct Renewal {
    params: Value,
    version: String,
    timeout: Option<Duration>,
    /// While a new session is being initialized: the requests waiting to be sent again.
    waiting: Option<Vec<RequestId>>,
}

impl Handler<EnableRenewal> for ClientSession {
    type Result = ();

    fn handle(&mut self, msg: EnableRenewal, _: &mut Self::Context) {
        self.renewal = Some(Renewal {
            params: msg.params,
            version: msg.version,
            timeout: msg.timeout,
            waiting: None,
        });
    }
}

impl ClientSession {
    /// The server refused request `id` for an expired session. `true` when it waits for a new
    /// session (renewal is on and it was not sent again already), or is settled meanwhile.
    pub(super) fn wait_for_new_session(&mut self, id: &RequestId, ctx: &mut Context<Self>) -> bool {
        if self.renewal.is_none() {
            return false;
        }
        let Some(pending) = self.pending.get(id) else {
            // Cancelled or timed out meanwhile: nothing is waiting for it.
            return true;
        };
        if pending.resend.is_none() {
            return false;
        }
        self.renew_session(ctx);
        if let Some(waiting) = self
            .renewal
            .as_mut()
            .and_then(|renewal| renewal.waiting.as_mut())
        {
            waiting.push(id.clone());
        }
        true
    }

    /// Starts initializing a new session, unless renewal is off or already under way.
    pub(super) fn renew_session(&mut self, ctx: &mut Context<Self>) {
        let Some(renewal) = &mut self.renewal else {
            return;
        };
        if renewal.waiting.is_some() || self.closed.is_some() {
            return;
        }
        renewal.waiting = Some(Vec::new());
        tracing::info!("the server ended the session; initializing a new one");
        let (reply, answer) = oneshot::channel();
        let call = Call {
            method: Arc::from(method::INITIALIZE),
            params: Some(renewal.params.clone()),
            timeout: renewal.timeout,
            progress: None,
            reply,
            listener: None,
        };
        if let Err(error) = Handler::<Call>::handle(self, call, ctx) {
            self.renewed(Err(error), ctx);
            return;
        }
        ctx.spawn(answer.into_actor(self).map(|answer, act, ctx| {
            let outcome = answer.unwrap_or_else(|_| {
                Err(ClientError::TransportClosed("the session stopped".into()))
            });
            act.renewed(outcome, ctx);
        }));
    }

    /// The new session's `initialize` answered: on success, the session is announced
    /// initialized and the waiting requests are sent again; otherwise they fail.
    fn renewed(&mut self, outcome: Result<Value, ClientError>, ctx: &mut Context<Self>) {
        let Some(renewal) = &mut self.renewal else {
            return;
        };
        let waiting = renewal.waiting.take().unwrap_or_default();
        let chosen = outcome.as_ref().ok().and_then(|result| {
            result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        let failure = match (&outcome, chosen) {
            (Ok(_), Some(chosen)) if chosen == renewal.version => None,
            (Ok(_), chosen) => Some(ClientError::Protocol(format!(
                "the new session settled on protocol version {chosen:?}, not {:?}",
                renewal.version
            ))),
            (Err(error), _) => {
                tracing::warn!(%error, "could not initialize a new session");
                Some(ClientError::SessionExpired)
            }
        };
        if let Some(error) = failure {
            for id in waiting {
                self.settle(&id, Err(error.clone()), ctx);
            }
            return;
        }
        self.transport.set_protocol_version(&renewal.version);
        let initialized = self.transport.send(Outgoing {
            frame: Frame::notification::<Value>(method::NOTIFICATION_INITIALIZED, None),
            method: Some(Arc::from(method::NOTIFICATION_INITIALIZED)),
            id: None,
            headers: Vec::new(),
        });
        // The waiting requests go after the server has the notification, as in a handshake.
        ctx.spawn(initialized.into_actor(self).map(move |sent, act, ctx| {
            if let Err(error) = sent {
                tracing::debug!(%error, "notifications/initialized could not be sent");
            }
            act.transport.initialized();
            for id in waiting {
                let resend = act
                    .pending
                    .get_mut(&id)
                    .and_then(|pending| pending.resend.take());
                if let Some(outgoing) = resend {
                    act.send_request(id, outgoing, ctx);
                }
            }
        }));
    }
}
