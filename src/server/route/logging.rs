//! `logging/setLevel`: the lowest level of log messages a session receives.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging>

use serde_json::Map;

use actix_mcp_actors::dev::{Reply, Request};

use crate::error::McpError;
use crate::protocol::SetLevelRequestParams;
use crate::server::context::RequestContext;

use super::support::{params, to_raw};

/// `logging/setLevel`: records the session's level (refused outside a session); in a cluster,
/// answered once the level is stored.
pub(super) async fn set_level(cx: &RequestContext, request: &Request) -> Result<Reply, McpError> {
    let p: SetLevelRequestParams = params(request)?;
    let Some(state) = cx.session_state() else {
        return Err(McpError::invalid_params("logging/setLevel needs a session"));
    };
    if let Some(storing) = state.set_log_level(p.level) {
        storing.await.map_err(|why| {
            McpError::internal(format!("the session's new log level was not stored: {why}"))
        })?;
    }
    Ok(to_raw(&Map::new()))
}
