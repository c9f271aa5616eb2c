//! `initialize` and `ping`: version negotiation, the session's negotiated state, and the
//! capabilities derived from what the server registered.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/ping>

use std::sync::Arc;

use serde_json::Map;

use actix_mcp_actors::dev::{Reply, Request};

use crate::error::McpError;
use crate::protocol::{
    ForVersion, InitializeRequestParams, InitializeResult, PromptsCapability, ResourcesCapability,
    ServerCapabilities, ToolsCapability,
};
use crate::server::ServerInner;
use crate::server::context::RequestContext;
use crate::server::extension::advertise;
use crate::server::session::SessionState;

use super::support::{params, to_raw};

/// `initialize`: negotiates the version, records the session's state (in a session) and
/// answers with the server's identity and capabilities.
pub(super) fn initialize(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
) -> Result<Reply, McpError> {
    let p: InitializeRequestParams = params(request)?;
    let version = server.effective_version(&p.protocol_version);
    if let Some(session) = cx.scope().session() {
        session.set_data(SessionState::new(
            version,
            Some(p.client_info.clone()),
            p.capabilities.clone(),
        ));
    }
    let mut result = InitializeResult {
        protocol_version: version.as_str().to_owned(),
        capabilities: capabilities(server),
        server_info: server.info.clone(),
        instructions: server.instructions.clone(),
        meta: None,
    };
    result.adapt_to(version);
    Ok(to_raw(&result))
}

/// `ping`: an empty result.
pub(super) fn ping() -> Result<Reply, McpError> {
    Ok(to_raw(&Map::new()))
}

/// The capabilities derived from what is registered (or the builder's override), with the
/// extensions every revision sees (`server/discover` adds those of 2026-07-28 only).
pub(crate) fn capabilities(server: &ServerInner) -> ServerCapabilities {
    let mut capabilities = derived(server);
    advertise(&mut capabilities, &server.extensions, false);
    capabilities
}

fn derived(server: &ServerInner) -> ServerCapabilities {
    if let Some(capabilities) = &server.capabilities {
        return capabilities.clone();
    }
    let catalog = server.catalog();
    let has_resources = server.serves_resources(&catalog);
    ServerCapabilities {
        tools: (!catalog.tools.is_empty()).then_some(ToolsCapability {
            list_changed: Some(true),
        }),
        prompts: (!catalog.prompts.is_empty()).then_some(PromptsCapability {
            list_changed: Some(true),
        }),
        resources: has_resources.then_some(ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(true),
        }),
        logging: Some(Map::new()),
        completions: (server.completion.is_some()
            || !catalog.prompts.is_empty()
            || !catalog.templates.is_empty())
        .then(Map::new),
        ..ServerCapabilities::default()
    }
}
