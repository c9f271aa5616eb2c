//! Multi round-trip requests (MRTR): one handler code for both eras.
//!
//! A 2026-07-28 client is never sent a server-to-client request: a `tools/call`, `prompts/get`
//! or `resources/read` that needs input answers `input_required` instead, and the client
//! retries with `inputResponses` and the echoed `requestState`. Handlers meet this in two
//! styles:
//!
//! - **explicit**: the handler returns [`McpError::input_required`] and reads the retry's
//!   answers from its context ([`RequestContext::input_response`]);
//! - **implicit**: the handler calls [`RequestContext::elicit`], `create_message` or
//!   `list_roots` as it would in a session. The call becomes an `input_required` round: the
//!   handler's future waits, parked in a [`ParkedCall`](call::ParkedCall) actor under an id
//!   sealed into the `requestState`, and the retry resumes it where it waited, so it runs
//!   once. When the parked call is gone (expired, the park was full, the retry reached
//!   another node), the retry runs the handler again and its earlier asks are answered, in
//!   order, from the answers the sealed state carries and the retry's `inputResponses`.
//!
//! Every `requestState` is sealed ([`seal`]); a 2025-11-25 session client gets explicit-style
//! rounds as real server-to-client requests instead ([`shim`]).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>
//!
//! [`McpError::input_required`]: crate::McpError::input_required
//! [`RequestContext::input_response`]: crate::RequestContext::input_response
//! [`RequestContext::elicit`]: crate::RequestContext::elicit

pub(crate) mod call;
pub(crate) mod park;
pub(crate) mod round;
pub(crate) mod seal;
pub(crate) mod seen;
pub(crate) mod shim;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use actix_mcp_actors::dev::{Begun, Invocation, Reply, SupervisedError, poll_once};

use crate::error::McpError;
use crate::protocol::InputRequiredResult;
use crate::server::ServerInner;
use crate::server::context::RequestContext;

pub(crate) use self::round::{Mrtr, RoundInput};

use self::call::{CallLink, Driven, Output, Step};

/// What a request's handler answered: its output, or a round of `input_required` (a handler
/// asks with [`McpError::input_required`], or its asks for input became a round). The error
/// becomes this answer where the handler's result is first seen and travels up as a success:
/// a 2026-07-28 request answers it as its result, a session's shim asks the client.
#[derive(Debug)]
pub(crate) enum Answer<T = Reply> {
    /// The handler finished.
    Done(T),
    /// The handler needs input first.
    InputRequired(Box<InputRequiredResult>),
}

impl<T> Answer<T> {
    /// A handler's error: an `input_required` answer becomes one, any other error stays one.
    pub(crate) fn from_error(error: McpError) -> Result<Self, McpError> {
        match error.as_input_required() {
            Some(result) => Ok(Self::InputRequired(Box::new(result))),
            None => Err(error),
        }
    }

    /// The answer of a request that has no rounds (a 2025 request outside a session's shim):
    /// `input_required` is the error it always was.
    pub(crate) fn into_result(self) -> Result<T, McpError> {
        match self {
            Self::Done(output) => Ok(output),
            Self::InputRequired(result) => Err(McpError::input_required(*result)),
        }
    }
}

/// The MRTR settings and state of one server.
#[derive(Debug)]
pub(crate) struct MrtrState {
    pub(crate) keys: seal::StateKeys,
    pub(crate) park: Arc<park::ParkTable>,
    /// Most rounds the session shim drives before giving up.
    pub(crate) max_rounds: usize,
    /// Whether each sealed state is good for one retry only.
    pub(crate) single_use: bool,
    /// The single-use states this process has seen used, until they expire.
    pub(crate) seen: seen::SeenStates,
}

/// MRTR settings the builder collects.
#[derive(Debug, Clone)]
pub(crate) struct MrtrConfig {
    pub(crate) keys: seal::StateKeys,
    pub(crate) configured_key: bool,
    pub(crate) max_parked: usize,
    pub(crate) park_ttl: Duration,
    pub(crate) max_rounds: usize,
    pub(crate) single_use: bool,
}

impl Default for MrtrConfig {
    fn default() -> Self {
        Self {
            keys: seal::StateKeys::default(),
            configured_key: false,
            max_parked: 1024,
            park_ttl: call::DEFAULT_PARK_TTL,
            max_rounds: 10,
            single_use: true,
        }
    }
}

impl MrtrConfig {
    pub(crate) fn build(self) -> MrtrState {
        MrtrState {
            keys: self.keys,
            park: Arc::new(park::ParkTable::new(self.max_parked, self.park_ttl)),
            max_rounds: self.max_rounds,
            single_use: self.single_use,
            seen: seen::SeenStates::new(seen::MAX_SEEN),
        }
    }
}

/// `-32021` unless the request declared the capability each of `requests` needs: nothing is
/// asked of a client that cannot answer.
pub(crate) fn require_declared(
    caps: &crate::protocol::ClientCapabilities,
    requests: &crate::protocol::InputRequests,
) -> Result<(), McpError> {
    for request in requests.values() {
        let (required, declared) = request.capability(caps);
        if !declared {
            let what = required
                .as_object()
                .and_then(|m| m.keys().next().cloned())
                .unwrap_or_default();
            return Err(McpError::from(crate::protocol::v2026::missing_capability(
                required, &what,
            )));
        }
    }
    Ok(())
}

/// Runs (or resumes) a 2026-07-28 MRTR request's handler as an implicit-style call: `make`
/// builds the handler's future from the context it gets (only when the call is not resumed).
/// [`Answer::Done`] when the handler finished, [`Answer::InputRequired`] when it waits for
/// input (the call is parked when the park has room).
///
/// # Errors
/// [`SupervisedError`] when the handler panicked, ran past `timeout` in this round, or the
/// request was cancelled (the call then stops).
///
/// # Cancel safety
/// Dropping the future stops the call.
pub(crate) async fn run<T: Send + 'static>(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    mrtr: &Mrtr,
    timeout: Option<Duration>,
    make: impl FnOnce(RequestContext) -> BoxFuture<'static, T>,
) -> Result<Answer<T>, SupervisedError> {
    // The request's own scope: the call's may be another request's (a resumed call's).
    let scope = cx.request_scope();
    let park = &server.mrtr.park;
    let resumed = mrtr
        .opened
        .parked
        .as_deref()
        .and_then(|id| park.take(id))
        .and_then(|link| {
            let rx = link.attach(scope.clone(), cx.request_log_level(), &mrtr.responses)?;
            Some((link, rx))
        });
    let (link, rx) = match resumed {
        Some(resumed) => resumed,
        None => {
            // Polled once in place: a handler that finishes at once (most never ask) needs no
            // call link (the context makes one when the handler asks, logs or watches for
            // cancellation) and no actor.
            let mut work = make(cx.clone());
            match poll_once(&mut work) {
                Some(Ok(output)) => {
                    // A link made meanwhile knows these answers and no more (only a retry that
                    // attaches adds any).
                    mrtr.record(None, mrtr.known_answers());
                    return Ok(Answer::Done(output));
                }
                Some(Err(panicked)) => return Err(panicked),
                None => {}
            }
            // Still pending: it goes on as a call, which it may have begun already by asking.
            let link = cx.call_link_of(mrtr).clone();
            let rx = link.wait();
            let work: BoxFuture<'static, Output> =
                Box::pin(async move { Box::new(work.await) as Output });
            // It moves, as it is, into an invocation actor, which runs it across its rounds;
            // its outcome goes to the request attached when it ends.
            let driven = Box::pin(Driven::new(work, link.clone()));
            let finisher = link.clone();
            let begun = Invocation::begin(driven, None, scope.metrics(), || {
                Box::new(move |outcome| finisher.finish(outcome))
            });
            if let Begun::Done(outcome) = begun {
                match outcome {
                    Ok(Ok(output)) => {
                        mrtr.record(None, link.answers());
                        return done::<T>(Ok(output));
                    }
                    // It asked for input and found the park full: the round is in `rx`.
                    other => link.finish(other),
                }
            }
            (link, rx)
        }
    };
    let mut halt = HaltOnDrop(Some(link.clone()));
    let wait = async {
        tokio::select! {
            biased;
            step = rx => step.ok(),
            () = scope.token().cancelled() => None,
        }
    };
    let step = match timeout {
        Some(limit) => tokio::time::timeout(limit, wait)
            .await
            .map_err(|_| SupervisedError::TimedOut(limit))?,
        None => wait.await,
    };
    let step = step.ok_or(SupervisedError::Cancelled)?;
    match step {
        Step::Done(outcome) => {
            halt.0 = None;
            mrtr.record(None, link.answers());
            done::<T>(outcome)
        }
        Step::Input { requests, parked } => {
            // Parked or not, the call no longer belongs to this request.
            halt.0 = None;
            mrtr.record(parked, link.answers());
            Ok(Answer::InputRequired(Box::new(InputRequiredResult {
                input_requests: Some(requests),
                request_state: None,
                meta: None,
            })))
        }
    }
}

/// A finished handler's output, as the type the request expects.
fn done<T: 'static>(
    outcome: Result<Output, SupervisedError>,
) -> Result<Answer<T>, SupervisedError> {
    outcome?
        .downcast::<T>()
        .map(|output| Answer::Done(*output))
        .map_err(|_| SupervisedError::Panicked("the handler changed meanwhile".into()))
}

/// Stops a call whose request went away before its next step.
struct HaltOnDrop(Option<Arc<CallLink>>);

impl Drop for HaltOnDrop {
    fn drop(&mut self) {
        if let Some(link) = self.0.take() {
            link.halt();
        }
    }
}
