//! `prompts/list` and `prompts/get` (required arguments checked before the handler runs).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/prompts>

use std::sync::Arc;

use serde_json::Value;

use actix_mcp_actors::dev::{Reply, Request};

use crate::error::McpError;
use crate::protocol::{ForVersion, GetPromptRequestParams, ListPromptsResult};
use crate::server::context::RequestContext;
use crate::server::handler::{HandlerError, HandlerParts};
use crate::server::{ErrorSite, ServerInner};

use super::lists::list_page;
use crate::server::mrtr::Answer;

use super::support::{params, run_handler, to_raw};

/// `prompts/list`: one page of the prompts.
pub(super) fn prompts_list(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
) -> Result<Reply, McpError> {
    let catalog = server.catalog();
    list_page(
        server,
        request,
        cx.protocol_version(),
        catalog.prompts.values().map(|def| &def.definition),
        |prompts, next_cursor| ListPromptsResult {
            prompts,
            next_cursor,
            meta: None,
        },
    )
}

/// `prompts/get`: checks the required arguments, then runs the prompt's handler.
pub(super) async fn get_prompt(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
) -> Result<Answer, McpError> {
    let p: GetPromptRequestParams = params(request)?;
    let Some(def) = server.catalog().prompts.get(&p.name).cloned() else {
        return Err(McpError::invalid_params(format!(
            "unknown prompt: {}",
            p.name
        )));
    };
    let arguments = Value::Object(
        p.arguments
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect(),
    );
    if let Some(missing) = def.missing_argument(&arguments) {
        return Err(McpError::invalid_params(format!(
            "missing required argument `{missing}` for prompt `{}`",
            p.name
        )));
    }
    let site = ErrorSite::Prompt {
        name: p.name.clone(),
    };
    let make = |hcx| (def.handler)(HandlerParts::new(arguments, hcx));
    let mut result = match run_handler(server, cx, site, make).await {
        Ok(Answer::Done(result)) => result,
        Ok(Answer::InputRequired(input)) => return Ok(Answer::InputRequired(input)),
        Err(HandlerError::Rejected(rejection)) => {
            return Err(McpError::invalid_params(rejection.to_string()));
        }
        Err(HandlerError::Failed(error)) => return Err(error),
    };
    result.adapt_to(cx.protocol_version());
    Ok(Answer::Done(to_raw(&result)))
}
