//! Cancellation of in-flight requests.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>

use serde::{Deserialize, Serialize};

use super::RequestId;
use super::meta::Meta;

/// Params of `notifications/cancelled`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// Id of the request to cancel (required except for tasks, which use `tasks/cancel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why the request was cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
