//! What a request's work keeps for as long as it runs: the transport's admission slots, its
//! share of a byte budget. Handed to the runtime with the request
//! ([`SessionHandle::request_with`](crate::SessionHandle::request_with),
//! [`InFlight::start_detached`](crate::InFlight::start_detached)), kept by the request's
//! [`RequestScope`](crate::RequestScope) until the request ends (answered or cancelled), and
//! shared with work that outlives the request: a blocking closure still running on its thread,
//! a task of the Tasks extension. What it holds is released when the last of them lets go, so a
//! limit counts work, not connections: a client that goes away while its work runs on frees
//! nothing.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A shared, type-erased guard a request's work keeps (see the [module docs](self)).
/// Cloning shares it; the guard is dropped with the last clone.
#[derive(Clone, Default)]
pub struct Holds(Option<Arc<dyn Any + Send + Sync>>);

impl Holds {
    /// Holds `guard` (dropped with the last clone).
    pub fn new(guard: impl Any + Send + Sync) -> Self {
        Self(Some(Arc::new(guard)))
    }

    /// Holds nothing.
    pub fn none() -> Self {
        Self(None)
    }

    /// Whether this holds nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

impl fmt::Debug for Holds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Holds")
            .field("empty", &self.is_empty())
            .finish()
    }
}
