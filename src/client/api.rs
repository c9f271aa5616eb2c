//! The typed calls of a [`Client`]: one method per MCP request, with the page-walking helpers.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::error::ClientError;
use super::headers;
use super::session::{KnowsTool, ProgressCallback};
use super::{CallOutcome, Client, InputRetry, lifecycle};
use crate::error::ErrorCode;
use crate::protocol::{
    CallToolResult, CompleteResult, CompletionArgument, CompletionContext, DiscoverResult,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LoggingLevel, ProgressNotificationParams, Prompt, ReadResourceResult,
    Reference, Resource, ResourceTemplate, Tool, method,
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

fn prompt_params<K: Into<String>, V: Into<String>>(
    name: &str,
    arguments: impl IntoIterator<Item = (K, V)>,
) -> Value {
    let arguments: Map<String, Value> = arguments
        .into_iter()
        .map(|(k, v)| (k.into(), Value::String(v.into())))
        .collect();
    json!({ "name": name, "arguments": arguments })
}

/// Drops (and logs) the tools whose `x-mcp-header` annotations break the rules.
fn keep_valid_tools(tools: &mut Vec<Tool>) {
    tools.retain(|tool| match headers::param_headers(&tool.input_schema) {
        Ok(_) => true,
        Err(invalid) => {
            tracing::warn!(
                tool = %tool.name,
                reason = %invalid.0,
                "dropped a tool whose x-mcp-header annotations are invalid"
            );
            false
        }
    });
}

impl Client {
    /// `ping`: checks the server answers. In the 2026 era, which has no `ping`, this is a
    /// `server/discover`.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.is_v2026() {
            return self.discover().await.map(|_| ());
        }
        let _: Map<String, Value> = self
            .request(method::PING, None, CallOptions::default())
            .await?;
        Ok(())
    }

    /// `server/discover` (2026 era): the server's versions, capabilities, instructions and
    /// info, now (the result the client connected with is [`Client::discover_result`]).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        let value: Value = self
            .request(method::SERVER_DISCOVER, None, CallOptions::default())
            .await?;
        lifecycle::read_discover(value)
    }

    /// One page of `tools/list` (`cursor` from the previous page's `next_cursor`). In the
    /// 2026 era, tools whose `x-mcp-header` annotations break the rules are dropped (and
    /// logged), as the spec requires of HTTP clients.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult, ClientError> {
        let mut page: ListToolsResult = self
            .request(
                method::TOOLS_LIST,
                cursor_params(cursor),
                CallOptions::default(),
            )
            .await?;
        if self.is_v2026() {
            keep_valid_tools(&mut page.tools);
        }
        Ok(page)
    }

    /// Every tool, reading page after page (at most [`DEFAULT_PAGE_LIMIT`]); in the 2026 era
    /// without the tools [`list_tools`](Self::list_tools) drops.
    ///
    /// # Errors
    /// See [`ClientError`]; a server that repeats a cursor or never stops paging is a
    /// [`ClientError::Protocol`].
    pub async fn tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut tools = self
            .all_pages(method::TOOLS_LIST, |page: ListToolsResult| {
                (page.tools, page.next_cursor)
            })
            .await?;
        if self.is_v2026() {
            keep_valid_tools(&mut tools);
        }
        Ok(tools)
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

    /// Every page of `method`. With the cache on (2026 era), a cursor the server refuses as
    /// invalid (`-32602`) restarts the walk once from the first page: the cache dropped the
    /// list's pages, one of which carried that cursor.
    pub(crate) async fn all_pages<P, T>(
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
        let mut restarted = self.inner.cache.is_none() || !self.is_v2026();
        for _ in 0..DEFAULT_PAGE_LIMIT {
            let answer = self
                .request(
                    method,
                    cursor_params(cursor.as_deref()),
                    CallOptions::default(),
                )
                .await;
            let page: P = match answer {
                Err(ClientError::Rpc(error))
                    if error.code == ErrorCode::INVALID_PARAMS
                        && cursor.is_some()
                        && !restarted =>
                {
                    tracing::debug!(method, "the server refused a cursor; listing again");
                    restarted = true;
                    items.clear();
                    seen.clear();
                    cursor = None;
                    continue;
                }
                answer => answer?,
            };
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
    /// In the 2026 era over HTTP the call carries an `Mcp-Param-*` header for each argument
    /// the tool's input schema marks with `x-mcp-header`, as every `tools/call` does whichever
    /// call sends it ([`Client::request`], [`Client::start_request`], ...): the client learns
    /// those marks from `tools/list` results, reads `tools/list` first when the tool was not
    /// listed yet, and on a `-32020` (header mismatch) answer reads it again and retries once.
    /// A tool the server asks input for is driven to its end ([`mrtr`](super::mrtr)).
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

    /// One round of `tools/call` (2026 era, manual input mode): `retry` answers the previous
    /// round's input requests. See [`mrtr`](super::mrtr).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn call_tool_step(
        &self,
        name: &str,
        arguments: impl Serialize,
        retry: Option<InputRetry>,
    ) -> Result<CallOutcome<CallToolResult>, ClientError> {
        let params = Self::call_tool_params(name, arguments)?;
        self.request_step(
            method::TOOLS_CALL,
            Some(params),
            retry,
            CallOptions::default(),
        )
        .await
    }

    /// Before a `tools/call` (2026 era, over a transport that sends headers): reads
    /// `tools/list` when the session does not know the named tool's `x-mcp-header` marks.
    pub(super) async fn learn_tool_headers(
        &self,
        method_name: &str,
        params: Option<&Value>,
    ) -> Result<(), ClientError> {
        if method_name != method::TOOLS_CALL {
            return Ok(());
        }
        let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return Ok(());
        };
        let known = self
            .inner
            .session
            .send(KnowsTool(name.to_owned()))
            .await
            .map_err(|_| ClientError::TransportClosed("the client session has stopped".into()))?;
        if known == Some(false) {
            self.relist_tools().await?;
        }
        Ok(())
    }

    /// Reads `tools/list` again, past the cache, so that the session learns the tools'
    /// `x-mcp-header` marks (before a call of an unknown tool, after a `-32020`).
    pub(super) async fn relist_tools(&self) -> Result<(), ClientError> {
        self.forget_cached(method::TOOLS_LIST);
        // Boxed: listing is itself a request, whose path leads back here.
        Box::pin(self.tools()).await.map(|_| ())
    }

    /// Drops the cached results of `method_name`.
    fn forget_cached(&self, method_name: &str) {
        if let Some(cache) = &self.inner.cache {
            cache.forget(method_name);
        }
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
        let params = prompt_params(name, arguments);
        self.request(method::PROMPTS_GET, Some(params), CallOptions::default())
            .await
    }

    /// One round of `prompts/get` (2026 era, manual input mode). See
    /// [`call_tool_step`](Self::call_tool_step).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn get_prompt_step<K, V>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
        retry: Option<InputRetry>,
    ) -> Result<CallOutcome<GetPromptResult>, ClientError>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let params = prompt_params(name, arguments);
        self.request_step(
            method::PROMPTS_GET,
            Some(params),
            retry,
            CallOptions::default(),
        )
        .await
    }

    /// One round of `resources/read` (2026 era, manual input mode). See
    /// [`call_tool_step`](Self::call_tool_step).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn read_resource_step(
        &self,
        uri: &str,
        retry: Option<InputRetry>,
    ) -> Result<CallOutcome<ReadResourceResult>, ClientError> {
        self.request_step(
            method::RESOURCES_READ,
            Some(json!({ "uri": uri })),
            retry,
            CallOptions::default(),
        )
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
    /// (see [`ClientBuilder::on_log_message`](super::ClientBuilder::on_log_message)). In the
    /// 2026 era, which has no `logging/setLevel`, every later request carries `level` in its
    /// `_meta` instead (nothing is sent now).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.is_v2026() {
            return self
                .update_envelope(|envelope| envelope.log_level = Some(level))
                .await;
        }
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
