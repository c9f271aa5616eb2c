//! Application state: the typed [`StateMap`] registered with
//! [`ServerBuilder::state`](crate::ServerBuilder::state), read by handlers through
//! [`State<T>`](crate::State) and [`RequestContext::state`](crate::RequestContext::state).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// Typed application state, keyed by type (the Ruby SDK's `server_context`).
#[derive(Default, Clone)]
pub(crate) struct StateMap(HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl StateMap {
    /// The state of type `T`, if one was registered.
    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.0.get(&TypeId::of::<T>())?.clone().downcast::<T>().ok()
    }

    /// Whether state of the type `id` is registered.
    pub(crate) fn contains(&self, id: TypeId) -> bool {
        self.0.contains_key(&id)
    }

    /// Registers `value` as the state of the type `id` (which must be its type).
    pub(crate) fn insert_any(&mut self, id: TypeId, value: Arc<dyn Any + Send + Sync>) {
        self.0.insert(id, value);
    }

    /// Registers (or replaces) the state of type `T`.
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.0.insert(TypeId::of::<T>(), value);
    }
}
