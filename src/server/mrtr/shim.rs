//! The shim for 2025-11-25 (and older) session clients: a handler that answers
//! `input_required` (explicit style) to a client of a session has each input request sent as a
//! real server-to-client request on that request's stream; the answers are collected and the
//! handler is called again with them (and its own state, unsealed: nothing leaves the
//! process), up to the server's round limit.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>

use futures::future::try_join_all;

use crate::error::McpError;
use crate::protocol::{InputRequest, InputRequiredResult, InputResponses};
use crate::server::context::RequestContext;
use crate::server::mrtr::RoundInput;

/// Asks the session's client every input request of `result`, at once, and returns the round
/// input the handler is called again with.
///
/// # Errors
/// `-32021` when the client did not declare what a request needs (nothing is sent then); the
/// error of a server-to-client request that failed (see [`McpError`]'s `From<PeerError>`).
///
/// # Cancel safety
/// Dropping the future cancels the server-to-client requests still waiting.
pub(crate) async fn ask(
    cx: &RequestContext,
    result: InputRequiredResult,
) -> Result<RoundInput, McpError> {
    let requests = result.input_requests.unwrap_or_default();
    super::require_declared(cx.client_capabilities(), &requests)?;
    let answers = try_join_all(requests.into_iter().map(|(key, request)| async move {
        let answer = cx
            .request_client(&request.method, request.params)
            .await
            .map_err(McpError::from)?;
        InputRequest::check_response(&request.method, &answer).map_err(|err| {
            McpError::invalid_params(format!(
                "the client's answer to {} is {err}",
                request.method
            ))
        })?;
        Ok::<_, McpError>((key, answer))
    }))
    .await?;
    let responses: InputResponses = answers.into_iter().collect();
    Ok(RoundInput {
        responses,
        state: result.request_state,
    })
}
