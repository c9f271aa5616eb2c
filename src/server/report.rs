//! What a handler reports besides its result: [`Progress`] (`notifications/progress`) and
//! [`LogMessage`] (`notifications/message`), each built from what it needs with its optional
//! parts named, and sent by [`RequestContext::progress`](crate::RequestContext::progress),
//! [`RequestContext::log`](crate::RequestContext::log),
//! [`Server::notify_log_message`](crate::Server::notify_log_message) or
//! [`Server::notify_log_message_to`](crate::Server::notify_log_message_to).

use serde_json::Value;

use crate::protocol::LoggingLevel;

/// A progress report: how far the request has come, and optionally out of how much and what it
/// is doing.
///
/// ```
/// use actix_mcp::{Progress, RequestContext};
///
/// fn step(cx: &RequestContext, done: u32, of: u32) {
///     cx.progress(Progress::new(f64::from(done)).total(f64::from(of)).message("copying"));
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub(crate) progress: f64,
    pub(crate) total: Option<f64>,
    pub(crate) message: Option<String>,
}

impl Progress {
    /// Progress so far; it must increase from one report to the next.
    pub fn new(progress: f64) -> Self {
        Self {
            progress,
            total: None,
            message: None,
        }
    }

    /// Sets the total the progress counts towards.
    #[must_use]
    pub fn total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// Sets a human-readable message on what is happening.
    #[must_use]
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

impl From<f64> for Progress {
    /// Progress with neither a total nor a message.
    fn from(progress: f64) -> Self {
        Self::new(progress)
    }
}

/// A log message: its level and data, and optionally the name of the logger it comes from.
///
/// ```
/// use actix_mcp::LogMessage;
/// use actix_mcp::protocol::LoggingLevel;
///
/// let message = LogMessage::new(LoggingLevel::Warning, "slow query").logger("db");
/// # let _ = message;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LogMessage {
    pub(crate) level: LoggingLevel,
    pub(crate) data: Value,
    pub(crate) logger: Option<String>,
}

impl LogMessage {
    /// A message at `level` carrying `data` (any JSON value; a string for plain text).
    pub fn new(level: LoggingLevel, data: impl Into<Value>) -> Self {
        Self {
            level,
            data: data.into(),
            logger: None,
        }
    }

    /// Sets the name of the logger the message comes from.
    #[must_use]
    pub fn logger(mut self, logger: impl Into<String>) -> Self {
        self.logger = Some(logger.into());
        self
    }

    /// The message's level.
    pub fn level(&self) -> LoggingLevel {
        self.level
    }
}
