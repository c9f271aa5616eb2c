//! Cursor-based pagination of list requests.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination>

use serde::{Deserialize, Serialize};

use super::meta::Meta;

/// An opaque pagination cursor.
pub type Cursor = String;

/// Params of any paginated list request (`tools/list`, `resources/list`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedRequestParams {
    /// Where to continue; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
