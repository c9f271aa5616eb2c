//! Required scopes: which scopes a request needs (the server's base set plus those of the tool,
//! prompt, resource or template it targets, or of every resource a `subscriptions/listen`
//! stream subscribes to), read from the catalog by the HTTP transport before it answers, so
//! that one `403 insufficient_scope` challenge names them all (SEP-2350). The syntax every
//! scope is checked against when it is registered is in [`scope_token`](super::scope_token),
//! which the definitions use without this module's catalog.

#[cfg(feature = "http")]
use serde_json::Value;

#[cfg(feature = "http")]
use crate::protocol::method;
use crate::server::ServerInner;
use crate::server::catalog::Catalog;

#[cfg(feature = "http")]
fn param<'a>(params: Option<&'a Value>, key: &str) -> Option<&'a str> {
    params?.get(key)?.as_str()
}

/// The scopes a resource read (or subscription) of `uri` needs: the static resource's, else
/// those of the first template that matches (the order reads are routed in).
fn resource_scopes<'a>(catalog: &'a Catalog, uri: &str) -> &'a [String] {
    if let Some(def) = catalog.resources.get(uri) {
        return &def.required_scopes;
    }
    catalog
        .templates
        .iter()
        .find(|t| t.matches(uri).is_some())
        .map_or(&[], |t| &t.required_scopes)
}

/// The scopes of the item a request targets (beyond the server's base set).
#[cfg(feature = "http")]
fn target_scopes<'a>(
    catalog: &'a Catalog,
    method_name: &str,
    params: Option<&Value>,
) -> &'a [String] {
    match method_name {
        method::TOOLS_CALL => param(params, "name")
            .and_then(|name| catalog.tools.get(name))
            .map_or(&[], |def| &def.required_scopes),
        method::PROMPTS_GET => param(params, "name")
            .and_then(|name| catalog.prompts.get(name))
            .map_or(&[], |def| &def.required_scopes),
        method::RESOURCES_READ | method::RESOURCES_SUBSCRIBE | method::RESOURCES_UNSUBSCRIBE => {
            param(params, "uri").map_or(&[], |uri| resource_scopes(catalog, uri))
        }
        method::COMPLETION_COMPLETE => {
            let reference = params.and_then(|p| p.get("ref"));
            match reference
                .and_then(|r| r.get("type"))
                .and_then(Value::as_str)
            {
                Some("ref/prompt") => param(reference, "name")
                    .and_then(|name| catalog.prompts.get(name))
                    .map_or(&[], |def| &def.required_scopes),
                Some("ref/resource") => param(reference, "uri").map_or(&[], |uri| {
                    catalog
                        .templates
                        .iter()
                        .find(|t| t.definition.uri_template == uri)
                        .map(|t| t.required_scopes.as_slice())
                        .unwrap_or_else(|| resource_scopes(catalog, uri))
                }),
                _ => &[],
            }
        }
        _ => &[],
    }
}

/// The scopes of every resource a `subscriptions/listen` request subscribes to by URI
/// (`notifications.resourceSubscriptions`), each as a read of it needs: the stream it opens
/// would deliver those updates only to a caller holding them. Empty for any other request.
#[cfg(feature = "http")]
fn listened_scopes<'a>(
    catalog: &'a Catalog,
    method_name: &str,
    params: Option<&Value>,
) -> Vec<&'a String> {
    if method_name != method::SUBSCRIPTIONS_LISTEN {
        return Vec::new();
    }
    params
        .and_then(|p| p.get("notifications"))
        .and_then(|n| n.get("resourceSubscriptions"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .flat_map(|uri| resource_scopes(catalog, uri))
        .collect()
}

/// The scopes a request needs: the server's base set, then those of its target (or targets,
/// for a `subscriptions/listen`), each once. `None` when it needs none.
#[cfg(feature = "http")]
pub(crate) fn required(
    server: &ServerInner,
    method_name: &str,
    params: Option<&Value>,
) -> Option<Vec<String>> {
    let base = &server.config.required_scopes;
    let catalog = server.catalog();
    let target = target_scopes(&catalog, method_name, params);
    let listened = listened_scopes(&catalog, method_name, params);
    if base.is_empty() && target.is_empty() && listened.is_empty() {
        return None;
    }
    let mut needed = base.clone();
    for scope in target.iter().chain(listened) {
        if !needed.contains(scope) {
            needed.push(scope.clone());
        }
    }
    Some(needed)
}

/// Whether `granted` covers every scope a read of `uri` needs (the server's base set and the
/// resource's or matching template's): the check each delivered resource update passes.
pub(crate) fn may_read(server: &ServerInner, granted: &[String], uri: &str) -> bool {
    let base = &server.config.required_scopes;
    let catalog = server.catalog();
    base.iter()
        .chain(resource_scopes(&catalog, uri))
        .all(|scope| granted.contains(scope))
}

/// Every scope the server names: its base set and those of every tool, prompt, resource and
/// template (the default `scopes_supported` of its protected resource metadata).
#[cfg(feature = "http")]
pub(crate) fn all(server: &ServerInner) -> Vec<String> {
    let catalog = server.catalog();
    let mut out: Vec<String> = Vec::new();
    let lists = std::iter::once(&server.config.required_scopes)
        .chain(catalog.tools.values().map(|d| &d.required_scopes))
        .chain(catalog.prompts.values().map(|d| &d.required_scopes))
        .chain(catalog.resources.values().map(|d| &d.required_scopes))
        .chain(catalog.templates.iter().map(|d| &d.required_scopes));
    for scope in lists.flatten() {
        if !out.contains(scope) {
            out.push(scope.clone());
        }
    }
    out
}
