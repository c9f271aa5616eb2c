//! Custom JSON-RPC methods and notifications: [`IntoJsonResult`], how a custom handler's
//! output becomes its result, and the erased handler the catalog stores.
//!
//! Registered with [`ServerBuilder::custom_method`](crate::ServerBuilder::custom_method) or
//! [`Server::define_custom_method`](crate::Server::define_custom_method); called by the router
//! for every method that is not a protocol method.

use serde::Serialize;
use serde_json::Value;

use crate::error::McpError;
use crate::server::handler::ErasedHandler;

/// A custom method's handler, its output already converted to JSON.
pub(crate) type CustomHandler = ErasedHandler<Value>;

/// Converts a custom method handler's output into its JSON result.
pub trait IntoJsonResult: Send + 'static {
    /// The conversion.
    ///
    /// # Errors
    /// When the output is an error, or does not serialise.
    fn into_json_result(self) -> Result<Value, McpError>;
}

impl IntoJsonResult for Value {
    fn into_json_result(self) -> Result<Value, McpError> {
        Ok(self)
    }
}

impl IntoJsonResult for () {
    fn into_json_result(self) -> Result<Value, McpError> {
        Ok(Value::Object(serde_json::Map::new()))
    }
}

impl<T: Serialize + Send + 'static, E: Into<McpError> + Send + 'static> IntoJsonResult
    for Result<T, E>
{
    fn into_json_result(self) -> Result<Value, McpError> {
        let value = self.map_err(Into::into)?;
        serde_json::to_value(value).map_err(McpError::from)
    }
}
