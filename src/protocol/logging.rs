//! Log messages from server to client and the minimum level.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging>

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::meta::Meta;

/// Severity of a log message (RFC 5424), ordered from `Debug` (least) to `Emergency` (most).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug-level detail.
    Debug,
    /// Informational.
    Info,
    /// Normal but significant.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical condition.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// The wire string, e.g. `"warning"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }
}

impl std::fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Params of `logging/setLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetLevelRequestParams {
    /// Minimum level the client wants to receive.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Name of the logger that emitted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON value to log.
    pub data: Value,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use LoggingLevel::*;

    #[test]
    fn levels_are_ordered_by_severity() {
        let levels = [
            Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency,
        ];
        assert!(levels.windows(2).all(|w| w[0] < w[1]));
        assert!(Warning >= Info);
    }

    #[test]
    fn levels_serialize_lowercase() {
        assert_eq!(
            serde_json::to_value(Emergency).ok(),
            Some(Value::from("emergency"))
        );
        assert_eq!(Notice.to_string(), "notice");
        assert!(serde_json::from_value::<LoggingLevel>(Value::from("verbose")).is_err());
    }
}
