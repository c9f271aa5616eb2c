//! `subscriptions/listen` (2026-07-28): opens a [`Listener`] for the request and keeps the
//! request open until the client ends it (closes the stream, or cancels on stdio).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>

use std::sync::Arc;

use actix::{Actor, Addr};
use serde_json::{Value, json};

use actix_mcp_actors::dev::{Reply, Request};

use crate::error::{McpError, code};
use crate::protocol::v2026::{META_SUBSCRIPTION_ID, TASKS_EXTENSION};
use crate::protocol::{ListenRequestParams, SubscriptionFilter};
use crate::server::ServerInner;
use crate::server::context::RequestContext;
use crate::server::listen::{Listener, ReadScopes, StopListening};

use super::lifecycle::capabilities;
use super::support::{take_params, to_raw};
use super::v2026::require;

/// Gives up a listener's place, and stops the listener once started, when its request ends,
/// however it ends.
struct Registration {
    server: Arc<ServerInner>,
    key: u64,
    listener: Option<Addr<Listener>>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.server.listeners.remove(self.key);
        if let Some(listener) = &self.listener {
            listener.do_send(StopListening);
        }
    }
}

/// The part of `asked` this server honours: list changes it announces, resource updates when
/// it offers subscriptions, task updates when it serves the Tasks extension.
fn honoured(server: &ServerInner, asked: SubscriptionFilter) -> SubscriptionFilter {
    let caps = capabilities(server);
    let yes = |asked: Option<bool>, offered: bool| (asked == Some(true) && offered).then_some(true);
    let tools = caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true);
    let prompts = caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true);
    let resources = caps.resources.as_ref();
    SubscriptionFilter {
        tools_list_changed: yes(asked.tools_list_changed, tools),
        prompts_list_changed: yes(asked.prompts_list_changed, prompts),
        resources_list_changed: yes(
            asked.resources_list_changed,
            resources.and_then(|r| r.list_changed) == Some(true),
        ),
        resource_subscriptions: asked
            .resource_subscriptions
            .filter(|_| resources.and_then(|r| r.subscribe) == Some(true)),
        task_ids: asked.task_ids.filter(|_| server.tasks.is_some()),
    }
}

/// `subscriptions/listen`: acknowledges, then streams the asked-for change notifications
/// until the client ends the request; a graceful end answers `{resultType: "complete"}` with
/// the subscription id.
pub(super) async fn listen(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &mut Request,
) -> Result<Reply, McpError> {
    if !cx.scope().can_notify() {
        // Its notifications would go nowhere: the transport answers with one body.
        return Err(McpError::code(
            actix_mcp_actors::ErrorCode::INVALID_REQUEST.0,
            "subscriptions/listen needs a stream for its notifications, and this transport \
             answers each request with a single response",
        ));
    }
    let p: ListenRequestParams = take_params(request)?;
    if p.notifications
        .task_ids
        .as_ref()
        .is_some_and(|ids| !ids.is_empty())
    {
        require(
            cx.client_capabilities(),
            &json!({ "extensions": { TASKS_EXTENSION: {} } }),
        )
        .map_err(McpError::from)?;
    }
    // The place is taken as the count is checked, before any await: requests arriving together
    // cannot all pass the check.
    let limit = server.config.max_listeners;
    let Some(key) = server
        .listeners
        .reserve(limit, cx.scope().metrics().clone())
    else {
        return Err(McpError::code(
            code::SERVER_BUSY.0,
            format!("too many open subscriptions/listen streams (limit {limit})"),
        ));
    };
    let mut registration = Registration {
        server: server.clone(),
        key,
        listener: None,
    };
    let mut filter = honoured(server, p.notifications);
    if let (Some(ids), Some(tasks)) = (filter.task_ids.take(), &server.tasks) {
        // Only live tasks are accepted (the acknowledgement lists them).
        let mut live = Vec::with_capacity(ids.len());
        let caller = super::tasks::caller(cx);
        for id in ids {
            if tasks.get(&id, caller.as_deref()).await.is_ok() {
                live.push(id);
            }
        }
        filter.task_ids = Some(live);
    }
    let (stopped_tx, stopped) = tokio::sync::oneshot::channel();
    let scopes = cx.identity().map(|identity| ReadScopes {
        server: Arc::downgrade(server),
        granted: identity.scopes().to_vec(),
    });
    let listener = Listener::new(
        cx.request_id().clone(),
        filter,
        scopes,
        cx.scope().outlet().clone(),
        stopped_tx,
    )
    .start();
    if !server.listeners.fill(key, listener.clone()) {
        // Its transport began draining while it was prepared: it ends at once.
        listener.do_send(StopListening);
    }
    registration.listener = Some(listener);
    tokio::select! {
        () = cx.cancelled() => {}
        _ = stopped => {}
    }
    let id = serde_json::to_value(cx.request_id()).unwrap_or(Value::Null);
    Ok(to_raw(&json!({ "_meta": { META_SUBSCRIPTION_ID: id } })))
}
