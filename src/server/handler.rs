//! Handlers as closures with extractors (cf. axum): each argument of a handler closure is built
//! from the request by its [`FromParts`] impl.
//!
//! | extractor | gives | input schema |
//! | --- | --- | --- |
//! | [`Params<T>`] | the arguments deserialised into `T` | `T`'s JSON schema (schemars) |
//! | [`Arguments`] | the raw arguments object | any object |
//! | [`RequestContext`] | the request's context | – |
//! | [`State<T>`] | application state registered on the builder | – |
//! | [`UriVars`] | variables a resource template matched | – |
//! | [`RequestMeta`] | the request's `_meta` | – |
//! | [`ResourceUri`] | the uri of a resource read | – |
//!
//! A failing extractor is a typed [`Rejection`]: `-32602` for prompts and other requests,
//! and an `isError` result for tool calls (so the model can correct its input, per the spec).
//!
//! Your own extractors implement [`FromParts`] too, reading the request through the
//! accessors of [`HandlerParts`].

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::protocol::{JsonObject, Meta};
use crate::server::context::RequestContext;

/// What a handler is called with: the request's arguments, its [`RequestContext`] and, in a
/// templated resource read, the variables the template matched.
///
/// Extractors read it through its accessors, so your own [`FromParts`] impls can too:
///
/// ```
/// use actix_mcp::{FromParts, HandlerParts, Rejection, ToolDef};
///
/// /// The `"user"` argument, upper-cased.
/// struct User(String);
///
/// impl FromParts for User {
///     fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
///         parts
///             .arguments()
///             .get("user")
///             .and_then(|user| user.as_str())
///             .map(|user| User(user.to_uppercase()))
///             .ok_or_else(|| Rejection::InvalidArguments("missing `user`".into()))
///     }
/// }
///
/// let greet = ToolDef::new("greet", |User(user): User| async move {
///     format!("hello, {user}")
/// })
/// .description("Greets the user");
/// # let _ = greet;
/// ```
#[derive(Debug, Clone)]
pub struct HandlerParts {
    pub(crate) arguments: Arc<Value>,
    pub(crate) cx: RequestContext,
    pub(crate) uri_vars: Option<Arc<BTreeMap<String, String>>>,
}

impl HandlerParts {
    pub(crate) fn new(arguments: Value, cx: RequestContext) -> Self {
        Self::shared(Arc::new(arguments), cx)
    }

    /// Parts whose arguments the caller keeps too (for error reports), without a copy.
    pub(crate) fn shared(arguments: Arc<Value>, cx: RequestContext) -> Self {
        Self {
            arguments,
            cx,
            uri_vars: None,
        }
    }

    /// The request's arguments: a tool call's `arguments` object (empty when it had none), a
    /// prompt's arguments (an object of strings), the params of a resource read (with its
    /// `uri`) or of a custom method (`null` when it had none).
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The request's context: its id, method, `_meta`, session, protocol version, client,
    /// application state, progress, logging and requests to the client.
    pub fn context(&self) -> &RequestContext {
        &self.cx
    }

    /// The variables a resource template matched (`{id}` in `test://item/{id}`), in a read of
    /// a templated resource; `None` in any other request.
    pub fn uri_vars(&self) -> Option<&BTreeMap<String, String>> {
        self.uri_vars.as_deref()
    }
}

/// Why an extractor could not build its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// The arguments did not deserialise into the handler's parameter type.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The arguments were not a JSON object.
    #[error("arguments must be a JSON object")]
    NotAnObject,
    /// No state of this type was registered with the server.
    #[error("no application state of type `{0}` is registered")]
    MissingState(&'static str),
    /// The handler asked for template variables outside a templated resource read.
    #[error("no uri template variables in this request")]
    NoUriVars,
}

/// Builds a handler argument from the request.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a handler argument: it does not implement `actix_mcp::FromParts`",
    label = "not an extractor",
    note = "handler arguments are extractors: `Params<T>` (with `T: serde::Deserialize + schemars::JsonSchema`), `Arguments`, `State<T>`, `RequestContext`, `UriVars`, `ResourceUri`, `RequestMeta`, or a type of your own implementing `actix_mcp::FromParts`"
)]
pub trait FromParts: Sized + Send + 'static {
    /// Extracts the value.
    ///
    /// # Errors
    /// A [`Rejection`] saying what was wrong with the request.
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection>;

    /// The JSON schema this extractor imposes on the arguments, if any.
    fn input_schema() -> Option<JsonObject> {
        None
    }

    /// The application state this extractor reads (its type and the type's name), if any:
    /// [`ServerBuilder::build`](crate::ServerBuilder::build) refuses a handler whose state
    /// was never registered.
    fn required_state() -> Option<StateNeed> {
        None
    }
}

/// A type of application state a handler needs: its id and its name (for errors).
pub type StateNeed = (std::any::TypeId, &'static str);

/// The request's arguments, deserialised into `T`; `T`'s JSON schema becomes the input schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Params<T>(pub T);

impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromParts for Params<T> {
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
        T::deserialize(&*parts.arguments)
            .map(Params)
            .map_err(|err| Rejection::InvalidArguments(err.to_string()))
    }

    fn input_schema() -> Option<JsonObject> {
        Some(schema_of::<T>())
    }
}

/// The JSON schema of `T` as a JSON object (draft 2020-12).
pub fn schema_of<T: JsonSchema>() -> JsonObject {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    match schema.to_value() {
        Value::Object(mut object) => {
            if !object.contains_key("type") && !object.contains_key("$ref") {
                object.insert("type".into(), Value::String("object".into()));
            }
            object
        }
        _ => JsonObject::from_iter([("type".to_owned(), Value::String("object".into()))]),
    }
}

/// The raw arguments object (an empty object when the request had none).
#[derive(Debug, Clone, PartialEq)]
pub struct Arguments(pub JsonObject);

impl FromParts for Arguments {
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
        match &*parts.arguments {
            Value::Object(map) => Ok(Arguments(map.clone())),
            Value::Null => Ok(Arguments(JsonObject::new())),
            _ => Err(Rejection::NotAnObject),
        }
    }

    fn input_schema() -> Option<JsonObject> {
        Some(JsonObject::from_iter([(
            "type".to_owned(),
            Value::String("object".into()),
        )]))
    }
}

impl FromParts for RequestContext {
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
        Ok(parts.cx.clone())
    }
}

/// Application state registered with [`ServerBuilder::state`](crate::ServerBuilder::state).
#[derive(Debug)]
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T: ?Sized> std::ops::Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Send + Sync + 'static> FromParts for State<T> {
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
        parts
            .cx
            .state::<T>()
            .map(State)
            .ok_or(Rejection::MissingState(std::any::type_name::<T>()))
    }

    fn required_state() -> Option<StateNeed> {
        Some((std::any::TypeId::of::<T>(), std::any::type_name::<T>()))
    }
}

/// The variables a resource template matched (`{id}` in `test://item/{id}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriVars(pub BTreeMap<String, String>);

impl UriVars {
    /// One variable's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

impl FromParts for UriVars {
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
        parts
            .uri_vars
            .as_ref()
            .map(|vars| UriVars((**vars).clone()))
            .ok_or(Rejection::NoUriVars)
    }
}

/// The uri of a `resources/read` (or subscription) request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceUri(pub String);

impl FromParts for ResourceUri {
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
        parts
            .arguments
            .get("uri")
            .and_then(Value::as_str)
            .map(|uri| ResourceUri(uri.to_owned()))
            .ok_or_else(|| Rejection::InvalidArguments("missing uri".into()))
    }
}

/// The request's `params._meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta(pub Option<Meta>);

impl FromParts for RequestMeta {
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
        Ok(RequestMeta(parts.cx.meta().cloned()))
    }
}

/// A completer's request (`completion/complete`): the argument being completed, the value
/// typed so far, the arguments already chosen. Extracted only in completers
/// ([`PromptDef::complete`](crate::PromptDef::complete),
/// [`ResourceTemplateDef::complete`](crate::ResourceTemplateDef::complete)).
impl FromParts for crate::protocol::CompleteRequestParams {
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
        <Self as serde::Deserialize>::deserialize(&*parts.arguments)
            .map_err(|err| Rejection::InvalidArguments(format!("not a completion request: {err}")))
    }
}

/// What a completer returns: the suggestions, best first (at most 100 are sent), or the
/// error to answer with.
#[diagnostic::on_unimplemented(
    message = "a completer returns `Vec<String>` or `Result<Vec<String>, E>` with `E: Into<McpError>`, not `{Self}`"
)]
pub trait IntoCompletion: Send + 'static {
    /// The suggestions, or the error to answer with.
    ///
    /// # Errors
    /// The completer's own error.
    fn into_completion(self) -> Result<Vec<String>, crate::error::McpError>;
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Vec<String>, crate::error::McpError> {
        Ok(self)
    }
}

impl<E: Into<crate::error::McpError> + Send + 'static> IntoCompletion for Result<Vec<String>, E> {
    fn into_completion(self) -> Result<Vec<String>, crate::error::McpError> {
        self.map_err(Into::into)
    }
}

/// A closure usable as a handler: `Fn(E1, ..., En) -> impl Future` where each `Ei` implements
/// [`FromParts`] (up to six). `M` is a marker that keeps the impls apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an MCP handler (`actix_mcp::Handler`, not actix-web's)",
    label = "not an MCP handler",
    note = "a handler is a closure or `async fn` taking up to six extractors (`Params<T>`, `Arguments`, `State<T>`, `RequestContext`, ...) and returning a future",
    note = "the future must be `Send`: hold no `Rc`, `RefCell` borrow or `std::sync::MutexGuard` across an `.await`",
    note = "`Params<T>` needs `T: serde::Deserialize + schemars::JsonSchema` (derive both; `#[schemars(crate = \"actix_mcp::schemars\")]` without a schemars dependency of your own)"
)]
pub trait Handler<M>: Clone + Send + Sync + 'static {
    /// What the closure's future yields.
    type Output: Send + 'static;

    /// Extracts the arguments and runs the closure.
    fn call(&self, parts: HandlerParts) -> BoxFuture<'static, Result<Self::Output, Rejection>>;

    /// The input schema its extractors impose (the last one that has one wins).
    fn input_schema() -> Option<JsonObject>;

    /// The application state its extractors read.
    fn required_state() -> Vec<StateNeed> {
        Vec::new()
    }
}

macro_rules! impl_handler {
    ($($ty:ident),*) => {
        #[allow(non_snake_case, unused_variables, unused_mut)]
        impl<F, Fut, O, $($ty,)*> Handler<($($ty,)*)> for F
        where
            F: Fn($($ty),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = O> + Send + 'static,
            O: Send + 'static,
            $($ty: FromParts,)*
        {
            type Output = O;

            fn call(&self, parts: HandlerParts) -> BoxFuture<'static, Result<O, Rejection>> {
                $(
                    let $ty = match $ty::from_parts(&parts) {
                        Ok(value) => value,
                        Err(rejection) => return Box::pin(std::future::ready(Err(rejection))),
                    };
                )*
                let fut = (self)($($ty),*);
                Box::pin(async move { Ok(fut.await) })
            }

            fn input_schema() -> Option<JsonObject> {
                let mut schema = None;
                $(
                    if let Some(found) = $ty::input_schema() {
                        schema = Some(found);
                    }
                )*
                schema
            }

            fn required_state() -> Vec<StateNeed> {
                let mut needs = Vec::new();
                $(
                    needs.extend($ty::required_state());
                )*
                needs
            }
        }
    };
}

impl_handler!();
impl_handler!(T1);
impl_handler!(T1, T2);
impl_handler!(T1, T2, T3);
impl_handler!(T1, T2, T3, T4);
impl_handler!(T1, T2, T3, T4, T5);
impl_handler!(T1, T2, T3, T4, T5, T6);

/// A per-argument completer ([`PromptDef::complete`](crate::PromptDef::complete),
/// [`ResourceTemplateDef::complete`](crate::ResourceTemplateDef::complete)): a handler whose
/// parts' arguments are the `completion/complete` params.
pub(crate) type Completer = ErasedHandler<Vec<String>>;

/// The completers of a prompt's arguments or of a template's variables, by name.
pub(crate) type Completers = std::collections::HashMap<String, Completer>;

/// Makes a [`Completer`] of a handler.
pub(crate) fn completer<H, M>(completer: H) -> Completer
where
    H: Handler<M>,
    H::Output: IntoCompletion,
    M: 'static,
{
    erase(completer, IntoCompletion::into_completion)
}

/// The `complete` builder method of a definition with `completers: Completers` and
/// `state_needs` fields ([`PromptDef`](crate::PromptDef),
/// [`ResourceTemplateDef`](crate::ResourceTemplateDef)): one signature for both. Takes the
/// method's doc and the name of what is completed (the method's first parameter).
macro_rules! complete_method {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[must_use]
        pub fn complete<H, M>(mut self, $name: impl Into<String>, completer: H) -> Self
        where
            H: $crate::Handler<M>,
            H::Output: $crate::IntoCompletion,
            M: 'static,
        {
            self.state_needs.extend(H::required_state());
            self.completers
                .insert($name.into(), $crate::server::handler::completer(completer));
            self
        }
    };
}
pub(crate) use complete_method;

/// A type-erased async handler producing `R`.
pub(crate) type ErasedHandler<R> =
    Arc<dyn Fn(HandlerParts) -> BoxFuture<'static, Result<R, HandlerError>> + Send + Sync>;

/// How an erased handler failed.
#[derive(Debug)]
pub(crate) enum HandlerError {
    Rejected(Rejection),
    Failed(crate::error::McpError),
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rejected(rejection) => rejection.fmt(f),
            Self::Failed(error) => error.fmt(f),
        }
    }
}

/// Erases a closure handler whose output converts into `R`.
pub(crate) fn erase<H, M, R>(
    handler: H,
    convert: fn(H::Output) -> Result<R, crate::error::McpError>,
) -> ErasedHandler<R>
where
    H: Handler<M>,
    M: 'static,
    R: Send + 'static,
{
    Arc::new(move |parts| {
        let fut = handler.call(parts);
        Box::pin(async move {
            match fut.await {
                Ok(output) => convert(output).map_err(HandlerError::Failed),
                Err(rejection) => Err(HandlerError::Rejected(rejection)),
            }
        })
    })
}
