//! [`MessageView`]: a request or notification as middleware see it, on either side: its
//! method and params (with `_meta`), to read and edit.

use serde_json::Value;

use super::Meta;

/// A message's method and params, as middleware see and edit them (the server's
/// [`Middleware`](crate::Middleware) and the client's
/// [`ClientMiddleware`](crate::client::ClientMiddleware)).
#[derive(Debug, Clone, PartialEq)]
pub struct MessageView {
    method: String,
    params: Option<Value>,
}

impl MessageView {
    /// A view of `method` with `params`.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Self {
        Self {
            method: method.into(),
            params,
        }
    }

    /// The method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The params (with `_meta`, in both protocol revisions).
    pub fn params(&self) -> Option<&Value> {
        self.params.as_ref()
    }

    /// The params, to edit.
    pub fn params_mut(&mut self) -> &mut Option<Value> {
        &mut self.params
    }

    /// One top-level param.
    pub fn param(&self, key: &str) -> Option<&Value> {
        self.params.as_ref()?.get(key)
    }

    /// The message's `_meta`.
    pub fn meta(&self) -> Option<&Meta> {
        self.params.as_ref()?.get("_meta")?.as_object()
    }

    /// The message's `_meta`, to edit (made when absent; params that are not an object are
    /// replaced by one).
    pub fn meta_mut(&mut self) -> &mut Meta {
        super::meta::meta_in(&mut self.params)
    }

    /// Its method and params.
    pub fn into_parts(self) -> (String, Option<Value>) {
        (self.method, self.params)
    }
}
