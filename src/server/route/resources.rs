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
    ForVersion, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, Resource, SubscribeRequestParams, method,
};
use crate::server::auth::{Identity, scopes};
use crate::server::catalog::Catalog;
use crate::server::context::RequestContext;
use crate::server::handler::{HandlerError, HandlerParts};
use crate::server::resource::into_read_result;
use crate::server::{ErrorSite, ServerInner, pagination};

use super::lists::list_page;
use crate::server::mrtr::Answer;

use super::support::{guarded, params, run_handler, to_raw};

/// `resources/list`: one page of the resources: the server's own, those its extensions serve,
/// then those the templates list (see [`template_resources`]).
pub(super) async fn resources_list(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
) -> Result<Reply, McpError> {
    let catalog = server.catalog();
    let own = &catalog.resources;
    let extended: Vec<Resource> = server
        .resource_sources
        .iter()
        .flat_map(|source| source.list())
        .collect();
    let listed = if catalog.templates.iter().any(|t| t.lister.is_some()) {
        // The page's end, plus one to tell whether another page follows: the templates are
        // asked for what the server's own resources do not fill. An invalid cursor is refused
        // by `list_page`, against the whole list.
        let p: PaginatedRequestParams = params(request)?;
        let start = match p.cursor.as_deref() {
            Some(cursor) => pagination::decode(cursor, usize::MAX)?,
            None => 0,
        };
        let wanted = start
            .saturating_add(server.config.page_size.unwrap_or(usize::MAX))
            .saturating_add(1);
        let before = own.len() + extended.len();
        template_resources(server, cx, &catalog, wanted.saturating_sub(before)).await?
    } else {
        Vec::new()
    };
    list_page(
        server,
        request,
        cx.protocol_version(),
        own.values()
            .map(|def| &def.definition)
            .chain(&extended)
            .chain(&listed),
        |resources, next_cursor| ListResourcesResult {
            resources,
            next_cursor,
            meta: None,
        },
    )
}

/// The resources the templates list ([`ResourceTemplateDef::list`]), template by template in
/// registration order, until there are `wanted`. On a protected endpoint a template whose
/// scopes the caller lacks is not asked, and a resource is kept only when the caller's scopes
/// cover a read of it. A lister's error (or panic) is the request's.
///
/// [`ResourceTemplateDef::list`]: crate::ResourceTemplateDef::list
async fn template_resources(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    catalog: &Catalog,
    wanted: usize,
) -> Result<Vec<Resource>, McpError> {
    let granted = cx.identity().map(Identity::scopes);
    let mut listed = Vec::new();
    for template in &catalog.templates {
        if listed.len() >= wanted {
            break;
        }
        let Some(lister) = &template.lister else {
            continue;
        };
        if granted.is_some_and(|granted| {
            !template
                .required_scopes
                .iter()
                .all(|scope| granted.contains(scope))
        }) {
            continue;
        }
        let site = ErrorSite::Request {
            method: method::RESOURCES_LIST.to_owned(),
        };
        let parts = HandlerParts::new(Value::Null, cx.clone());
        let resources = match guarded(server, cx, site, lister(parts)).await {
            Ok(resources) => resources,
            Err(HandlerError::Rejected(rejection)) => {
                return Err(McpError::invalid_params(rejection.to_string()));
            }
            Err(HandlerError::Failed(error)) => return Err(error),
        };
        listed.extend(
            resources
                .into_iter()
                .filter(|resource| {
                    granted.is_none_or(|granted| scopes::may_read(server, granted, &resource.uri))
                })
                .map(|mut resource| {
                    if resource.mime_type.is_none() {
                        resource
                            .mime_type
                            .clone_from(&template.definition.mime_type);
                    }
                    resource
                }),
        );
    }
    Ok(listed)
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
) -> Result<Answer, McpError> {
    let p: ReadResourceRequestParams = params(request)?;
    for source in &server.resource_sources {
        if let Some(read) = source.read(&p.uri) {
            let mut result = read?;
            result.adapt_to(cx.protocol_version());
            return Ok(Answer::Done(to_raw(&result)));
        }
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
    subscribe: bool,
) -> Result<Reply, McpError> {
    let p: SubscribeRequestParams = params(request)?;
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
