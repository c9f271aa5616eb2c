//! The typed calls of a [`Client`]: one method per MCP request, with the page-walking helpers.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::Client;
use super::error::ClientError;
use super::session::ProgressCallback;
use crate::protocol::{
    CallToolResult, CompleteResult, CompletionArgument, CompletionContext, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    LoggingLevel, ProgressNotificationParams, Prompt, ReadResourceResult, Reference, Resource,
    ResourceTemplate, Tool, method,
};

/// Pages a `tools()`-style helper reads at most before it gives up.
pub const DEFAULT_PAGE_LIMIT: usize = 1000;

/// Options of one call.
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) progress: Option<ProgressCallback>,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl CallOptions {
    /// Default options: the client's timeout, no progress.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long this call waits for its answer (instead of the client's default).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Asks for progress (`_meta.progressToken`) and calls `callback` with each
    /// `notifications/progress` until the answer.
    #[must_use]
    pub fn progress(
        mut self,
        callback: impl Fn(ProgressNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.progress = Some(Arc::new(callback));
        self
    }
}

fn to_params<T: Serialize>(value: &T) -> Result<Value, ClientError> {
    serde_json::to_value(value)
        .map_err(|err| ClientError::Protocol(format!("unserialisable params: {err}")))
}

fn cursor_params(cursor: Option<&str>) -> Option<Value> {
    cursor.map(|cursor| json!({ "cursor": cursor }))
}

impl Client {
    /// `ping`: checks the server answers.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn ping(&self) -> Result<(), ClientError> {
        let _: Map<String, Value> = self
            .request(method::PING, None, CallOptions::default())
            .await?;
        Ok(())
    }

    /// One page of `tools/list` (`cursor` from the previous page's `next_cursor`).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult, ClientError> {
        self.request(
            method::TOOLS_LIST,
            cursor_params(cursor),
            CallOptions::default(),
        )
        .await
    }

    /// Every tool, reading page after page (at most [`DEFAULT_PAGE_LIMIT`]).
    ///
    /// # Errors
    /// See [`ClientError`]; a server that repeats a cursor or never stops paging is a
    /// [`ClientError::Protocol`].
    pub async fn tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.all_pages(method::TOOLS_LIST, |page: ListToolsResult| {
            (page.tools, page.next_cursor)
        })
        .await
    }

    /// One page of `prompts/list`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_prompts(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListPromptsResult, ClientError> {
        self.request(
            method::PROMPTS_LIST,
            cursor_params(cursor),
            CallOptions::default(),
        )
        .await
    }

    /// Every prompt, reading page after page.
    ///
    /// # Errors
    /// As [`tools`](Self::tools).
    pub async fn prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.all_pages(method::PROMPTS_LIST, |page: ListPromptsResult| {
            (page.prompts, page.next_cursor)
        })
        .await
    }

    /// One page of `resources/list`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_resources(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourcesResult, ClientError> {
        self.request(
            method::RESOURCES_LIST,
            cursor_params(cursor),
            CallOptions::default(),
        )
        .await
    }

    /// Every resource, reading page after page.
    ///
    /// # Errors
    /// As [`tools`](Self::tools).
    pub async fn resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.all_pages(method::RESOURCES_LIST, |page: ListResourcesResult| {
            (page.resources, page.next_cursor)
        })
        .await
    }

    /// One page of `resources/templates/list`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.request(
            method::RESOURCES_TEMPLATES_LIST,
            cursor_params(cursor),
            CallOptions::default(),
        )
        .await
    }

    /// Every resource template, reading page after page.
    ///
    /// # Errors
    /// As [`tools`](Self::tools).
    pub async fn resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.all_pages(
            method::RESOURCES_TEMPLATES_LIST,
            |page: ListResourceTemplatesResult| (page.resource_templates, page.next_cursor),
        )
        .await
    }

    async fn all_pages<P, T>(
        &self,
        method: &str,
        split: impl Fn(P) -> (Vec<T>, Option<String>),
    ) -> Result<Vec<T>, ClientError>
    where
        P: DeserializeOwned,
    {
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..DEFAULT_PAGE_LIMIT {
            let page: P = self
                .request(
                    method,
                    cursor_params(cursor.as_deref()),
                    CallOptions::default(),
                )
                .await?;
            let (page_items, next) = split(page);
            items.extend(page_items);
            match next {
                None => return Ok(items),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(ClientError::Protocol(format!(
                        "{method}: the server repeated the cursor {next:?}"
                    )));
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(ClientError::Protocol(format!(
            "{method}: more than {DEFAULT_PAGE_LIMIT} pages"
        )))
    }

    /// `tools/call` with `arguments` (any `Serialize` that is a JSON object, or `()` for
    /// none). A tool that fails answers with `isError: true`: that is an `Ok` result.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::default())
            .await
    }

    /// `tools/call` with options (progress callback, timeout).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        let params = Self::call_tool_params(name, arguments)?;
        self.request(method::TOOLS_CALL, Some(params), options)
            .await
    }

    /// The params of a `tools/call`, for [`start_request`](Self::start_request).
    ///
    /// # Errors
    /// When `arguments` is neither a JSON object nor `()`/`null`.
    pub fn call_tool_params(name: &str, arguments: impl Serialize) -> Result<Value, ClientError> {
        let arguments = to_params(&arguments)?;
        let arguments = match arguments {
            Value::Null => Map::new(),
            Value::Object(map) => map,
            other => {
                return Err(ClientError::Protocol(format!(
                    "tool arguments must be a JSON object, not {other}"
                )));
            }
        };
        Ok(json!({ "name": name, "arguments": arguments }))
    }

    /// `prompts/get` with string `arguments`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn get_prompt<K, V>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<GetPromptResult, ClientError>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let arguments: Map<String, Value> = arguments
            .into_iter()
            .map(|(k, v)| (k.into(), Value::String(v.into())))
            .collect();
        let params = json!({ "name": name, "arguments": arguments });
        self.request(method::PROMPTS_GET, Some(params), CallOptions::default())
            .await
    }

    /// `resources/read`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.request(
            method::RESOURCES_READ,
            Some(json!({ "uri": uri })),
            CallOptions::default(),
        )
        .await
    }

    /// `resources/subscribe`: the server sends `notifications/resources/updated` for `uri`
    /// (see [`ClientBuilder::on_resource_updated`](super::ClientBuilder::on_resource_updated)).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        let _: Map<String, Value> = self
            .request(
                method::RESOURCES_SUBSCRIBE,
                Some(json!({ "uri": uri })),
                CallOptions::default(),
            )
            .await?;
        Ok(())
    }

    /// `resources/unsubscribe`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        let _: Map<String, Value> = self
            .request(
                method::RESOURCES_UNSUBSCRIBE,
                Some(json!({ "uri": uri })),
                CallOptions::default(),
            )
            .await?;
        Ok(())
    }

    /// `completion/complete`: values for `argument` of a prompt or resource template, given
    /// what is typed so far and, optionally, the arguments already chosen.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn complete(
        &self,
        reference: Reference,
        argument: CompletionArgument,
        context: Option<CompletionContext>,
    ) -> Result<CompleteResult, ClientError> {
        let mut params = json!({ "ref": reference, "argument": argument });
        if let (Some(context), Some(object)) = (context, params.as_object_mut()) {
            object.insert("context".into(), to_params(&context)?);
        }
        self.request(
            method::COMPLETION_COMPLETE,
            Some(params),
            CallOptions::default(),
        )
        .await
    }

    /// `logging/setLevel`: the server sends logs at `level` and above
    /// (see [`ClientBuilder::on_log_message`](super::ClientBuilder::on_log_message)).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        let _: Map<String, Value> = self
            .request(
                method::LOGGING_SET_LEVEL,
                Some(json!({ "level": level })),
                CallOptions::default(),
            )
            .await?;
        Ok(())
    }

    /// `notifications/roots/list_changed`: the roots changed; the server may ask again.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn notify_roots_list_changed(&self) -> Result<(), ClientError> {
        self.notify(method::NOTIFICATION_ROOTS_LIST_CHANGED, None)
            .await
    }
}
