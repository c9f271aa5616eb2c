//! A session's in-flight table: which request ids are being answered, and by which actor.
//!
//! A request's id is reserved here, atomically with the duplicate and limit checks, before its
//! handler is first polled; the row then either goes (the request was answered in that poll) or
//! is filled with the request's [`InFlight`] actor. Every row carries a ticket, so only the
//! request that reserved a row can release it, even when a later request reuses the id.

use actix::Addr;

use crate::in_flight::InFlight;
use crate::jsonrpc::{ErrorCode, ErrorObject, RequestId};

/// JSON-RPC code for "this session has too many requests in flight" (implementation-defined,
/// in the server-error range JSON-RPC reserves).
pub const SERVER_BUSY: ErrorCode = ErrorCode(-32000);

enum RowState {
    /// Reserved: the handler's first poll is running. `cancel` holds a cancellation that
    /// arrived meanwhile (with its reason).
    Starting { cancel: Option<Option<String>> },
    /// The request waits, as this actor.
    Running(Addr<InFlight>),
}

struct Row {
    ticket: u64,
    cancellable: bool,
    state: RowState,
}

/// The in-flight table. See the module docs.
///
/// A vector searched from the end: a session has a handful of requests in flight at most
/// times (the limit is [`SessionConfig::max_in_flight`](crate::SessionConfig)), and an idle
/// session's table costs one small allocation, not a hash table's.
#[derive(Default)]
pub(crate) struct InFlightTable {
    rows: Vec<(RequestId, Row)>,
    next_ticket: u64,
}

/// What [`InFlightTable::cancel`] did.
#[derive(Debug)]
pub(crate) enum Cancelled {
    /// The request is running as this actor; its row is gone (the id is free again).
    Running(Addr<InFlight>),
    /// The request is in its first poll; it is cancelled as soon as that poll returns.
    Marked,
    /// The request may not be cancelled (`initialize`).
    Refused,
    /// No such request (finished already, or never seen): ignored, as the spec asks.
    Unknown,
}

impl InFlightTable {
    /// Reserves `id`, or refuses it: an id already in flight is an invalid request, and a full
    /// table answers [`SERVER_BUSY`].
    pub(crate) fn admit(
        &mut self,
        id: &RequestId,
        cancellable: bool,
        limit: usize,
    ) -> Result<u64, ErrorObject> {
        if self.position(id).is_some() {
            return Err(ErrorObject::invalid_request(format!(
                "request id {id} is already in flight"
            )));
        }
        if self.rows.len() >= limit {
            return Err(ErrorObject::new(
                SERVER_BUSY,
                format!("too many concurrent requests in this session (limit {limit})"),
            ));
        }
        if self.rows.capacity() == 0 {
            // Most sessions have one request in flight at a time: start with room for one.
            self.rows.reserve_exact(1);
        }
        self.next_ticket += 1;
        self.rows.push((
            id.clone(),
            Row {
                ticket: self.next_ticket,
                cancellable,
                state: RowState::Starting { cancel: None },
            },
        ));
        Ok(self.next_ticket)
    }

    fn position(&self, id: &RequestId) -> Option<usize> {
        self.rows.iter().rposition(|(row_id, _)| row_id == id)
    }

    fn remove(&mut self, index: usize) -> Row {
        self.rows.swap_remove(index).1
    }

    /// The request reserved under `ticket` waits, as `actor`. Returns the reason of a
    /// cancellation that arrived during its first poll (its row is then gone), or of the
    /// session's end (its row was drained): the caller cancels the actor.
    pub(crate) fn started(
        &mut self,
        id: &RequestId,
        ticket: u64,
        actor: Addr<InFlight>,
    ) -> Option<Option<String>> {
        let Some(index) = self
            .position(id)
            .filter(|i| self.rows[*i].1.ticket == ticket)
        else {
            return Some(Some("session closed".to_owned()));
        };
        match &mut self.rows[index].1.state {
            RowState::Starting {
                cancel: Some(reason),
            } => {
                let reason = reason.take();
                self.remove(index);
                Some(reason)
            }
            state => {
                *state = RowState::Running(actor);
                None
            }
        }
    }

    /// Releases the row reserved under `ticket`; `false` when it was gone already.
    pub(crate) fn forget(&mut self, id: &RequestId, ticket: u64) -> bool {
        match self.position(id) {
            Some(index) if self.rows[index].1.ticket == ticket => {
                self.remove(index);
                true
            }
            _ => false,
        }
    }

    /// A `notifications/cancelled` for `id`.
    pub(crate) fn cancel(&mut self, id: &RequestId, reason: Option<String>) -> Cancelled {
        let Some(index) = self.position(id) else {
            return Cancelled::Unknown;
        };
        let row = &mut self.rows[index].1;
        if !row.cancellable {
            return Cancelled::Refused;
        }
        if let RowState::Starting { cancel } = &mut row.state {
            *cancel = Some(reason);
            return Cancelled::Marked;
        }
        match self.remove(index).state {
            RowState::Running(actor) => Cancelled::Running(actor),
            RowState::Starting { .. } => Cancelled::Unknown,
        }
    }

    /// Empties the table (the session ends): the actors of the running requests.
    pub(crate) fn drain(&mut self) -> Vec<Addr<InFlight>> {
        self.rows
            .drain(..)
            .filter_map(|(_, row)| match row.state {
                RowState::Running(actor) => Some(actor),
                RowState::Starting { .. } => None,
            })
            .collect()
    }

    /// Removes the rows of the requests that wait as actors (a server that drains past its
    /// deadline): those actors. Rows in their first poll stay; they are answered or become
    /// actors at once.
    pub(crate) fn take_running(&mut self) -> Vec<Addr<InFlight>> {
        let mut running = Vec::new();
        self.rows.retain(|(_, row)| match &row.state {
            RowState::Running(actor) => {
                running.push(actor.clone());
                false
            }
            RowState::Starting { .. } => true,
        });
        running
    }

    /// Rows in the table (requests in flight, including those in their first poll).
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_reserved_until_its_ticket_releases_it() {
        let mut table = InFlightTable::default();
        let id = RequestId::Number(7);
        let first = table.admit(&id, true, 8).unwrap();
        let refused = table.admit(&id, true, 8).unwrap_err();
        assert_eq!(refused.code, ErrorCode::INVALID_REQUEST);
        // A stale ticket cannot release a row it does not own.
        assert!(!table.forget(&id, first + 1));
        assert!(table.forget(&id, first));
        assert_eq!(table.len(), 0);
        let second = table.admit(&id, true, 8).unwrap();
        assert_ne!(first, second);
        assert!(!table.forget(&id, first));
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn a_full_table_answers_busy() {
        let mut table = InFlightTable::default();
        table.admit(&RequestId::Number(1), true, 1).unwrap();
        let refused = table.admit(&RequestId::Number(2), true, 1).unwrap_err();
        assert_eq!(refused.code, SERVER_BUSY);
    }

    #[test]
    fn a_cancel_during_the_first_poll_is_marked_and_uncancellable_rows_refuse() {
        let mut table = InFlightTable::default();
        let id = RequestId::from("a");
        table.admit(&id, true, 8).unwrap();
        assert!(matches!(
            table.cancel(&id, Some("stop".into())),
            Cancelled::Marked
        ));
        let init = RequestId::from("init");
        table.admit(&init, false, 8).unwrap();
        assert!(matches!(table.cancel(&init, None), Cancelled::Refused));
        assert!(matches!(
            table.cancel(&RequestId::Number(9), None),
            Cancelled::Unknown
        ));
        assert!(table.take_running().is_empty());
        assert_eq!(table.len(), 2);
        let drained = table.drain();
        assert!(drained.is_empty());
        assert_eq!(table.len(), 0);
    }
}
