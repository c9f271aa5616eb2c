//! Custom methods and notifications: every method that is not a protocol method goes to the
//! handler registered under its name (`-32601` when there is none; an unknown notification is
//! ignored).

use std::sync::Arc;

use serde_json::Value;

use actix_mcp_actors::{
    RequestId, SessionHandle,
    dev::{Notification, Reply, Request, RequestScope, ResponseOutlet},
};

use crate::error::McpError;
use crate::protocol::ProtocolVersion;
use crate::server::context::{MetaCell, RequestContext};
use crate::server::handler::{HandlerError, HandlerParts};
use crate::server::origin::{Arrival, Origin};
use crate::server::{ErrorSite, ServerInner};

use super::support::{context_2025, context_2026, guarded, to_raw};

fn empty() -> Value {
    Value::Object(serde_json::Map::new())
}

/// A custom request: runs the handler registered under the method's name.
pub(super) async fn custom(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &mut Request,
) -> Result<Reply, McpError> {
    let Some(handler) = server.catalog().custom.get(&request.method).cloned() else {
        return Err(McpError::method_not_found(&request.method));
    };
    // Absent params read as an empty object, as a protocol method's do.
    let params = request.params.take().unwrap_or_else(empty);
    let parts = HandlerParts::new(params, cx.clone());
    let site = ErrorSite::Request {
        method: request.method.clone(),
    };
    let value = match guarded(server, cx, site, handler(parts)).await {
        Ok(value) => value,
        Err(HandlerError::Rejected(rejection)) => {
            return Err(McpError::invalid_params(rejection.to_string()));
        }
        Err(HandlerError::Failed(error)) => return Err(error),
    };
    Ok(to_raw(&value))
}

/// A custom notification: spawns the handler registered under its name (failures are
/// logged; there is no one to answer). Its context is that of a request of the same origin.
pub(super) fn custom_notification(
    server: &Arc<ServerInner>,
    arrival: &Arrival,
    notification: Notification,
    session: Option<&SessionHandle>,
) {
    let name = notification.method.as_str();
    let Some(handler) = server.catalog().custom.get(name).cloned() else {
        tracing::debug!(method = name, "ignored an unknown notification");
        return;
    };
    let scope = RequestScope::detached(
        RequestId::from("notification"),
        ResponseOutlet::channel().0,
        None,
    );
    let transport = arrival.transport.as_ref();
    let cx = match &arrival.origin {
        Origin::V2026(envelope) => {
            let meta = notification
                .params
                .as_ref()
                .and_then(|p| p.get("_meta"))
                .and_then(Value::as_object)
                .cloned()
                .map(MetaCell::Parsed);
            context_2026(server, &scope, name, meta, envelope, transport, None)
        }
        Origin::Session | Origin::Sessionless { .. } => {
            let version = match &arrival.origin {
                Origin::Sessionless { version } => *version,
                _ => ProtocolVersion::LATEST_WITH_HANDSHAKE,
            };
            let request = Request::new(
                RequestId::from("notification"),
                notification.method.clone(),
                notification.params.clone(),
            );
            let state = session.and_then(SessionHandle::data);
            context_2025(server, &scope, &request, state, version, transport)
        }
    };
    let fut = handler(HandlerParts::new(
        notification.params.unwrap_or_else(empty),
        cx,
    ));
    actix_rt::spawn(async move {
        if let Err(err) = fut.await {
            tracing::warn!(%err, "a custom notification handler failed");
        }
    });
}
