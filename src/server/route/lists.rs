//! Paged `*/list` results: [`list_page`] reads the cursor, cuts one page of a catalog's items
//! and adapts the result to the request's protocol version. Used by `tools/list`,
//! `prompts/list`, `resources/list` and `resources/templates/list`.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination>

use serde::Serialize;

use actix_mcp_actors::dev::{Reply, Request};

use crate::error::McpError;
use crate::protocol::{ForVersion, PaginatedRequestParams, ProtocolVersion};
use crate::server::{ServerInner, pagination};

use super::support::{params, to_raw};

/// One page of a `*/list` result: reads the cursor, pages `items`, builds the result with
/// `build` and adapts it to the request's protocol version.
pub(super) fn list_page<'a, T, R>(
    server: &ServerInner,
    request: &Request,
    version: ProtocolVersion,
    items: impl Iterator<Item = &'a T>,
    build: impl FnOnce(Vec<T>, Option<String>) -> R,
) -> Result<Reply, McpError>
where
    T: Clone + 'a,
    R: ForVersion + Serialize,
{
    let p: PaginatedRequestParams = params(request)?;
    let items: Vec<&T> = items.collect();
    let (page, next_cursor) =
        pagination::page(&items, p.cursor.as_deref(), server.config.page_size)?;
    let mut result = build(page.into_iter().cloned().collect(), next_cursor);
    result.adapt_to(version);
    Ok(to_raw(&result))
}
