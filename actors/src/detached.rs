//! A registry's table of the requests it runs without a session (2025 stateless mode, every
//! 2026-07-28 request, in-process calls): each one under a ticket while it runs, so that the
//! gauges, a drain and a shutdown see them as they see a session's requests.
//!
//! A request whose transport knows who sent it (an authenticated principal, its *owner*) is
//! also indexed under its owner and its id, so that the owner's `notifications/cancelled`
//! finds it ([`RegistryHandle::cancel_detached`](crate::RegistryHandle::cancel_detached)).
//! Request ids are chosen by clients, so only the pair says whose request it is: another
//! owner's cancellation naming the same id finds nothing. A request's index entry goes with its
//! ticket, when the request ends.
//!
//! As in a session's in-flight table, a ticket is reserved before the request's handler is
//! first polled, and a cancellation that arrives during that poll is kept and acted on as soon
//! as the request becomes an actor.

use std::collections::HashMap;
use std::sync::Arc;

use actix::Addr;

use crate::in_flight::InFlight;
use crate::jsonrpc::RequestId;

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Whose request (its owner) and its id: what a cancellation of a request without a session
/// names.
pub(crate) type Key = (Arc<str>, RequestId);

enum State {
    /// Reserved: the handler's first poll is running. `cancel` holds a cancellation that
    /// arrived meanwhile (with its reason).
    Starting { cancel: Option<Option<String>> },
    /// The request waits, as this actor.
    Running(Addr<InFlight>),
}

struct Row {
    state: State,
    /// Where the row is indexed for its owner's cancellations, if it is.
    key: Option<Key>,
}

/// The requests without a session running under a registry. See the module docs.
#[derive(Default)]
pub(crate) struct Detached {
    next: u64,
    rows: Map<u64, Row>,
    /// The tickets of each owner's cancellable requests, by id. Almost always one: two clients
    /// of one principal may use the same id at once, and a cancellation then names both.
    by_key: Map<Key, Vec<u64>>,
}

/// What [`Detached::cancel`] found.
#[derive(Debug)]
pub(crate) enum Cancelled {
    /// The actors of the requests it names that are running; those in their first poll (if
    /// any) are cancelled as soon as that poll returns.
    Found(Vec<Addr<InFlight>>),
    /// No request of that owner with that id (finished already, or never seen).
    Unknown,
}

impl Detached {
    /// Reserves a ticket for a request about to start, indexed under `key` when it has one.
    pub(crate) fn reserve(&mut self, key: Option<Key>) -> u64 {
        self.next += 1;
        let ticket = self.next;
        if let Some(key) = &key {
            self.by_key.entry(key.clone()).or_default().push(ticket);
        }
        self.rows.insert(
            ticket,
            Row {
                state: State::Starting { cancel: None },
                key,
            },
        );
        ticket
    }

    /// The request of `ticket` waits, as `actor`. Returns the reason of a cancellation that
    /// arrived during its first poll: the caller cancels the actor (the row stays until the
    /// request ends). Nothing when the row is gone (the request ended already).
    pub(crate) fn started(&mut self, ticket: u64, actor: Addr<InFlight>) -> Option<Option<String>> {
        let row = self.rows.get_mut(&ticket)?;
        match std::mem::replace(&mut row.state, State::Running(actor)) {
            State::Starting { cancel } => cancel,
            State::Running(_) => None,
        }
    }

    /// Forgets the request of `ticket`, which has ended, and its index entry.
    pub(crate) fn forget(&mut self, ticket: u64) {
        let Some(row) = self.rows.remove(&ticket) else {
            return;
        };
        if let Some(key) = row.key
            && let Some(tickets) = self.by_key.get_mut(&key)
        {
            tickets.retain(|kept| *kept != ticket);
            if tickets.is_empty() {
                self.by_key.remove(&key);
            }
        }
    }

    /// A cancellation by `owner` of its request `id`: every request of that owner with that id
    /// is cancelled (marked, when in its first poll).
    pub(crate) fn cancel(
        &mut self,
        owner: &str,
        id: &RequestId,
        reason: Option<String>,
    ) -> Cancelled {
        let key: Key = (Arc::from(owner), id.clone());
        let Some(tickets) = self.by_key.get(&key) else {
            return Cancelled::Unknown;
        };
        let mut running = Vec::with_capacity(tickets.len());
        for ticket in tickets {
            match self.rows.get_mut(ticket).map(|row| &mut row.state) {
                Some(State::Running(actor)) => running.push(actor.clone()),
                Some(State::Starting { cancel }) => *cancel = Some(reason.clone()),
                None => {}
            }
        }
        Cancelled::Found(running)
    }

    /// The actors of the requests running now (not those in their first poll).
    pub(crate) fn running(&self) -> Vec<Addr<InFlight>> {
        self.rows
            .values()
            .filter_map(|row| match &row.state {
                State::Running(actor) => Some(actor.clone()),
                State::Starting { .. } => None,
            })
            .collect()
    }

    /// Requests running now, including those in their first poll.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Entries of the index of owners' requests.
    #[cfg(test)]
    fn indexed(&self) -> usize {
        self.by_key.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(owner: &str, id: i64) -> Option<Key> {
        Some((Arc::from(owner), RequestId::Number(id)))
    }

    #[test]
    fn a_cancellation_finds_only_its_owners_request_and_the_index_empties() {
        let mut table = Detached::default();
        let alice = table.reserve(key("alice", 1));
        let bob = table.reserve(key("bob", 1));
        let anonymous = table.reserve(None);
        assert_eq!(table.len(), 3);
        assert_eq!(table.indexed(), 2);

        // Marked in its first poll; the other owner's request of the same id is untouched.
        assert!(matches!(
            table.cancel("bob", &RequestId::Number(1), Some("stop".into())),
            Cancelled::Found(running) if running.is_empty()
        ));
        assert!(matches!(
            table.cancel("carol", &RequestId::Number(1), None),
            Cancelled::Unknown
        ));
        assert!(matches!(
            table.cancel("alice", &RequestId::Number(2), None),
            Cancelled::Unknown
        ));
        let marked = |table: &Detached, ticket: u64| {
            matches!(
                table.rows.get(&ticket).map(|row| &row.state),
                Some(State::Starting { cancel: Some(_) })
            )
        };
        assert!(marked(&table, bob));
        assert!(!marked(&table, alice));

        for ticket in [alice, bob, anonymous] {
            table.forget(ticket);
        }
        assert_eq!(table.len(), 0);
        assert_eq!(
            table.indexed(),
            0,
            "the index keeps nothing of ended requests"
        );
        assert!(matches!(
            table.cancel("bob", &RequestId::Number(1), None),
            Cancelled::Unknown
        ));
    }

    #[test]
    fn one_owner_may_run_one_id_twice_and_each_end_is_forgotten_apart() {
        let mut table = Detached::default();
        let first = table.reserve(key("alice", 7));
        let second = table.reserve(key("alice", 7));
        assert_eq!(table.indexed(), 1);
        table.forget(first);
        assert_eq!(table.indexed(), 1);
        assert!(matches!(
            table.cancel("alice", &RequestId::Number(7), None),
            Cancelled::Found(_)
        ));
        table.forget(second);
        assert_eq!(table.indexed(), 0);
        // Forgetting twice (a late end) changes nothing.
        table.forget(second);
        assert_eq!(table.len(), 0);
    }
}
