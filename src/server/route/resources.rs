//! `resources/list`, `resources/templates/list`, `resources/read` (a resource's own
//! handler, a matching template's, or the fallback) and `resources/subscribe` /
//! `resources/unsubscribe`.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/resources>

use std::sync::Arc;

use serde_json::{Map, Value};

use actix_mcp_actors::dev::{Reply, Request};

use crate::error::McpError;
use crate::protocol::{
    ForVersion, ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    SubscribeRequestParams,
};
use crate::server::auth::Identity;
use crate::server::context::RequestContext;
use crate::server::handler::{HandlerError, HandlerParts};
use crate::server::resource::into_read_result;
use crate::server::{ErrorSite, RequestEvent, ServerInner};

use super::lists::list_page;
use crate::server::mrtr::Answer;

use super::support::{guarded, params, run_handler, to_raw};

/// `resources/list`: one page of the resources.
pub(super) fn resources_list(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
) -> Result<Reply, McpError> {
    let catalog = server.catalog();
    list_page(
        server,
        request,
        cx.protocol_version(),
        catalog.resources.values().map(|def| &def.definition),
        |resources, next_cursor| ListResourcesResult {
            resources,
            next_cursor,
            meta: None,
        },
    )
}

/// `resources/templates/list`: one page of the resource templates.
pub(super) fn templates_list(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
) -> Result<Reply, McpError> {
    let catalog = server.catalog();
    list_page(
        server,
        request,
        cx.protocol_version(),
        catalog.templates.iter().map(|def| &def.definition),
        |resource_templates, next_cursor| ListResourceTemplatesResult {
            resource_templates,
            next_cursor,
            meta: None,
        },
    )
}

/// `resources/read`: finds the handler (the listed resource's own, else a matching
/// template's, else the fallback) and reads; no contents is `-32002`. A listed resource without
/// a handler of its own (one defined at run time under a template's pattern, say) is read by
/// the template its uri matches.
pub(super) async fn read_resource(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
    event: Option<&mut RequestEvent>,
) -> Result<Answer, McpError> {
    let p: ReadResourceRequestParams = params(request)?;
    if let Some(event) = event {
        event.resource_uri = Some(p.uri.clone());
    }
    let catalog = server.catalog();
    let raw_params = request.params.clone().unwrap_or(Value::Null);
    let listed = catalog.resources.get(&p.uri);
    let listed_mime = listed.and_then(|def| def.definition.mime_type.clone());
    let (handler, mime_type, vars) =
        if let Some(handler) = listed.and_then(|def| def.handler.clone()) {
            (Some(handler), listed_mime, None)
        } else if let Some((def, vars)) = catalog
            .templates
            .iter()
            .find_map(|t| t.matches(&p.uri).map(|vars| (t, vars)))
        {
            (
                Some(def.handler.clone()),
                listed_mime.or_else(|| def.definition.mime_type.clone()),
                Some(Arc::new(vars)),
            )
        } else {
            (server.read_fallback.clone(), listed_mime, None)
        };
    let Some(handler) = handler else {
        return Err(McpError::resource_not_found(&p.uri));
    };
    let site = ErrorSite::Resource { uri: p.uri.clone() };
    let make = |hcx| {
        let mut parts = HandlerParts::new(raw_params, hcx);
        parts.uri_vars = vars;
        handler(parts)
    };
    let output = match run_handler(server, cx, site, make).await {
        Ok(Answer::Done(output)) => output,
        Ok(Answer::InputRequired(input)) => return Ok(Answer::InputRequired(input)),
        Err(HandlerError::Rejected(rejection)) => {
            return Err(McpError::invalid_params(rejection.to_string()));
        }
        Err(HandlerError::Failed(error)) => return Err(error),
    };
    let mut result = into_read_result(output, &p.uri, mime_type.as_deref());
    if result.contents.is_empty() {
        return Err(McpError::resource_not_found(&p.uri));
    }
    result.adapt_to(cx.protocol_version());
    Ok(Answer::Done(to_raw(&result)))
}

/// `resources/subscribe` (`subscribe`) or `resources/unsubscribe`: records the change in the
/// session (in a cluster: in the store too, before anything else), then runs the user's
/// handler, if any.
pub(super) async fn subscription(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
    event: Option<&mut RequestEvent>,
    subscribe: bool,
) -> Result<Reply, McpError> {
    let p: SubscribeRequestParams = params(request)?;
    if let Some(event) = event {
        event.resource_uri = Some(p.uri.clone());
    }
    let state = cx
        .session_state()
        .ok_or_else(|| McpError::invalid_params("subscriptions need a session"))?;
    let (storing, handler) = if subscribe {
        (
            state.subscribe(&p.uri, cx.identity().map(Identity::scopes)),
            &server.on_subscribe,
        )
    } else {
        (state.unsubscribe(&p.uri), &server.on_unsubscribe)
    };
    // In a cluster, answered once the change is stored.
    if let Some(storing) = storing {
        storing.await.map_err(|why| {
            McpError::internal(format!(
                "the session's subscriptions were not stored: {why}"
            ))
        })?;
    }
    if let Some(handler) = handler {
        guarded(
            server,
            cx,
            ErrorSite::Resource { uri: p.uri.clone() },
            handler(p.uri, cx.clone()),
        )
        .await?;
    }
    Ok(to_raw(&Map::new()))
}
