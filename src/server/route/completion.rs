//! `completion/complete`: the reference is checked against the registered prompts and
//! templates, and the answer is capped at 100 values.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion>

use std::sync::Arc;

use actix_mcp_actors::dev::{Reply, Request};

use crate::error::McpError;
use crate::protocol::{CompleteRequestParams, CompleteResult, Completion, Reference};
use crate::server::context::RequestContext;
use crate::server::handler::{HandlerError, HandlerParts};
use crate::server::{ErrorSite, ServerInner};

use super::support::{guarded, params, to_raw};

/// Most completion values one answer carries (spec: at most 100).
const MAX_COMPLETIONS: usize = 100;

/// `completion/complete`: checks the reference, runs the argument's own completer (the
/// prompt's or the template's), else the server's completion handler (none: no values), and
/// caps the values.
pub(super) async fn complete(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
) -> Result<Reply, McpError> {
    let p: CompleteRequestParams = params(request)?;
    let catalog = server.catalog();
    let own = match &p.r#ref {
        Reference::Prompt(prompt) => {
            let Some(def) = catalog.prompts.get(&prompt.name) else {
                return Err(McpError::invalid_params(format!(
                    "unknown prompt: {}",
                    prompt.name
                )));
            };
            let known = def
                .definition
                .arguments
                .as_ref()
                .is_none_or(|args| args.iter().any(|a| a.name == p.argument.name));
            if !known {
                return Err(McpError::invalid_params(format!(
                    "prompt `{}` has no argument `{}`",
                    prompt.name, p.argument.name
                )));
            }
            def.completers.get(&p.argument.name).cloned()
        }
        Reference::Resource(resource) => {
            let template = catalog
                .templates
                .iter()
                .find(|t| t.definition.uri_template == resource.uri);
            if template.is_none() && !catalog.resources.contains_key(&resource.uri) {
                return Err(McpError::invalid_params(format!(
                    "unknown resource template: {}",
                    resource.uri
                )));
            }
            template.and_then(|t| t.completers.get(&p.argument.name).cloned())
        }
    };
    let site = || ErrorSite::Request {
        method: request.method.clone(),
    };
    let mut result = match (own, &server.completion) {
        (Some(completer), _) => {
            let parts = HandlerParts::new(serde_json::to_value(&p)?, cx.clone());
            let values = match guarded(server, cx, site(), completer(parts)).await {
                Ok(values) => values,
                Err(HandlerError::Rejected(rejection)) => {
                    return Err(McpError::invalid_params(rejection.to_string()));
                }
                Err(HandlerError::Failed(error)) => return Err(error),
            };
            CompleteResult {
                completion: Completion {
                    total: Some(u64::try_from(values.len()).unwrap_or(u64::MAX)),
                    has_more: Some(false),
                    values,
                },
                meta: None,
            }
        }
        (None, Some(handler)) => guarded(server, cx, site(), handler(p, cx.clone())).await?,
        (None, None) => CompleteResult {
            completion: Completion {
                values: Vec::new(),
                total: None,
                has_more: Some(false),
            },
            meta: None,
        },
    };
    let values = &mut result.completion.values;
    if values.len() > MAX_COMPLETIONS {
        let total = values.len();
        values.truncate(MAX_COMPLETIONS);
        result.completion.has_more = Some(true);
        result
            .completion
            .total
            .get_or_insert(u64::try_from(total).unwrap_or(u64::MAX));
    }
    Ok(to_raw(&result))
}
