//! Answering the server's requests (2025-11-25): `sampling/createMessage`, `elicitation/create`,
//! `roots/list` and `ping` run as futures of the session actor, each cancellable by the
//! server's `notifications/cancelled`, and answered on the connection. [`answer`] runs the
//! handler for one request; the 2026 era uses it for the input requests of a multi-round-trip
//! request too ([`mrtr`](crate::client::mrtr)).
//!
//! In the 2026 era a server sends no requests (its streams carry notifications and the
//! response, never requests) and a client sends no responses: a request that arrives anyway,
//! on an answer's stream or over stdio, is logged and dropped, no handler runs and nothing is
//! answered, and the stream is read on.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#receiving-messages>

use actix::{ActorFutureExt, AsyncContext, Context, WrapFuture};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use actix_mcp_actors::{
    ErrorObject,
    dev::{Frame, Request},
};

use super::ClientSession;
use crate::client::handlers::{Handlers, ServerRequest};
use crate::client::lifecycle::Era;
use crate::protocol::{ElicitRequestParams, method};

impl ClientSession {
    pub(super) fn on_request(&mut self, request: Request, ctx: &mut Context<Self>) {
        if self.envelope.is_some() {
            tracing::warn!(
                id = %request.id,
                method = %request.method,
                "ignored a request of the server: 2026-07-28 servers send none, and clients \
                 send no responses"
            );
            return;
        }
        #[cfg(feature = "otel")]
        let span = crate::telemetry::ServerSpan::start_handler(
            &request,
            if self.transport.mirrors_headers() {
                crate::telemetry::Network::Tcp
            } else {
                crate::telemetry::Network::Pipe
            },
        );
        let mut request = request;
        // Handlers read `_meta` in the params.
        request.inline_meta();
        let Request {
            id, method, params, ..
        } = request;
        let token = CancellationToken::new();
        let meta = params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
            .cloned();
        let info = ServerRequest {
            id: id.clone(),
            meta,
            cancellation: token.clone(),
        };
        let handlers = self.handlers.clone();
        let params = params.unwrap_or_else(|| Value::Object(Map::new()));
        let answer = async move {
            let answering = answer(&handlers, Era::V2025, &method, params, info);
            #[cfg(feature = "otel")]
            if let Some(span) = span {
                return span.run_handler(answering).await;
            }
            answering.await
        };
        let answered_id = id.clone();
        let handle = ctx.spawn(answer.into_actor(self).map(move |outcome, act, ctx| {
            act.serving.remove(&answered_id);
            let frame = Frame::response(&answered_id, &outcome);
            act.send_quietly(frame, None, ctx);
        }));
        if let Some((old, old_token)) = self.serving.insert(id, (handle, token)) {
            // The server reused the id of a request still being answered: the old one goes.
            old_token.cancel();
            ctx.cancel_future(old);
        }
    }
}

/// Runs the handler for one server-to-client request of a 2025-11-25 session, or one MRTR
/// input request of the 2026 era (`era`): a URL-mode elicitation without the `elicitationId`
/// 2025-11-25 requires is refused with `-32602`, as is a mode the client did not declare.
pub(crate) async fn answer(
    handlers: &Handlers,
    era: Era,
    method: &str,
    params: Value,
    info: ServerRequest,
) -> Result<Value, ErrorObject> {
    fn decode<T: serde::de::DeserializeOwned>(
        method: &str,
        params: Value,
    ) -> Result<T, ErrorObject> {
        serde_json::from_value(params).map_err(|err| {
            ErrorObject::invalid_params(format!("invalid params for {method}: {err}"))
        })
    }
    fn encode<T: serde::Serialize>(result: &T) -> Result<Value, ErrorObject> {
        serde_json::to_value(result)
            .map_err(|err| ErrorObject::internal(format!("unserialisable result: {err}")))
    }
    let unsupported = || {
        ErrorObject::method_not_found(method)
            .with_data(json!({"reason": "this client does not offer it"}))
    };
    match method {
        method::PING => Ok(Value::Object(Map::new())),
        method::SAMPLING_CREATE_MESSAGE => {
            let handler = handlers.sampling.as_ref().ok_or_else(unsupported)?;
            encode(&handler(decode(method, params)?, info).await?)
        }
        method::ELICITATION_CREATE => {
            let handler = handlers.elicitation.as_ref().ok_or_else(unsupported)?;
            let params: ElicitRequestParams = decode(method, params)?;
            let allowed = match &params {
                ElicitRequestParams::Form(_) => handlers.elicitation_form,
                ElicitRequestParams::Url(_) => handlers.elicitation_url,
            };
            if !allowed {
                return Err(ErrorObject::invalid_params(
                    "this client does not support that elicitation mode",
                ));
            }
            if era == Era::V2025
                && matches!(&params, ElicitRequestParams::Url(url) if url.elicitation_id.is_none())
            {
                return Err(ErrorObject::invalid_params(
                    "invalid params for elicitation/create: a URL-mode elicitation needs an \
                     elicitationId in 2025-11-25",
                ));
            }
            encode(&handler(params, info).await?)
        }
        method::ROOTS_LIST => {
            let handler = handlers.roots.as_ref().ok_or_else(unsupported)?;
            encode(&handler(info).await?)
        }
        _ => match handlers.requests.get(method) {
            Some(handler) => handler(params, info).await,
            None => Err(ErrorObject::method_not_found(method)),
        },
    }
}
