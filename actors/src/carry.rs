//! What a transport hands the runtime with one request besides the request itself ([`Carry`]):
//! where the request came from, as the transport decided it at its door (an opaque value the
//! protocol layer reads back with [`RequestScope::carried`](crate::dev::RequestScope::carried)), and
//! what the request's work keeps for as long as it runs ([`Holds`]).
//!
//! Holds are the transport's admission slots and its share of a byte budget. Handed to the
//! runtime with the request
//! ([`SessionHandle::request_with`](crate::SessionHandle::request_with),
//! [`RegistryHandle::start_detached`](crate::RegistryHandle::start_detached)), kept by the request's
//! [`RequestScope`](crate::dev::RequestScope) until the request ends (answered or cancelled), and
//! shared with work that outlives the request: a blocking closure still running on its thread,
//! a task of the Tasks extension. What it holds is released when the last of them lets go, so a
//! limit counts work, not connections: a client that goes away while its work runs on frees
//! nothing.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// What a transport hands the runtime with one request besides the request itself: where it
/// came from, as the transport decided it at its door (read back with
/// [`RequestScope::carried`](crate::dev::RequestScope::carried)), and what its work keeps until it
/// ends ([`Holds`]).
#[derive(Clone, Default)]
pub struct Carry {
    /// What the request's work keeps until it ends.
    pub holds: Holds,
    /// Where the request came from, as the transport decided it: a value of the protocol
    /// layer's own type, read back with
    /// [`RequestScope::carried`](crate::dev::RequestScope::carried).
    pub origin: Option<Arc<dyn Any + Send + Sync>>,
}

impl Carry {
    /// A carry with `origin` and no holds.
    pub fn origin(origin: impl Any + Send + Sync) -> Self {
        Self {
            holds: Holds::none(),
            origin: Some(Arc::new(origin)),
        }
    }

    /// The same, keeping `holds` until the request's work ends.
    #[must_use]
    pub fn holding(mut self, holds: Holds) -> Self {
        self.holds = holds;
        self
    }
}

impl fmt::Debug for Carry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Carry")
            .field("holds", &self.holds)
            .field("origin", &self.origin.is_some())
            .finish()
    }
}

/// A shared, type-erased guard a request's work keeps (a transport's admission slots, its share
/// of a byte budget): kept by the request's scope until the request ends, and shared with work
/// that outlives it (a blocking closure still running, a task), so a limit counts work, not
/// connections.
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
