//! A session's in-flight table: which request ids are being answered, and by which actor.
//!
//! A request's id is reserved here, atomically with the duplicate and limit checks, before its
//! handler is first polled; the row then either goes (the request was answered in that poll) or
//! is filled with the request's [`InFlight`] actor. Every row carries a ticket, so only the
//! request that reserved a row can release it, even when a later request reuses the id.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

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
#[derive(Default)]
pub(crate) struct InFlightTable {
    rows: HashMap<RequestId, Row, foldhash::fast::RandomState>,
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
        if self.rows.len() >= limit && !self.rows.contains_key(id) {
            return Err(ErrorObject::new(
                SERVER_BUSY,
                format!("too many concurrent requests in this session (limit {limit})"),
            ));
        }
        match self.rows.entry(id.clone()) {
            Entry::Occupied(_) => Err(ErrorObject::invalid_request(format!(
                "request id {id} is already in flight"
            ))),
            Entry::Vacant(slot) => {
                self.next_ticket += 1;
                slot.insert(Row {
                    ticket: self.next_ticket,
                    cancellable,
                    state: RowState::Starting { cancel: None },
                });
                Ok(self.next_ticket)
            }
        }
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
        let Some(row) = self.rows.get_mut(id).filter(|row| row.ticket == ticket) else {
            return Some(Some("session closed".to_owned()));
        };
        match &mut row.state {
            RowState::Starting {
                cancel: Some(reason),
            } => {
                let reason = reason.take();
                self.rows.remove(id);
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
        match self.rows.get(id) {
            Some(row) if row.ticket == ticket => {
                self.rows.remove(id);
                true
            }
            _ => false,
        }
    }

    /// A `notifications/cancelled` for `id`.
    pub(crate) fn cancel(&mut self, id: &RequestId, reason: Option<String>) -> Cancelled {
        let Some(row) = self.rows.get_mut(id) else {
            return Cancelled::Unknown;
        };
        if !row.cancellable {
            return Cancelled::Refused;
        }
        match &mut row.state {
            RowState::Starting { cancel } => {
                *cancel = Some(reason);
                Cancelled::Marked
            }
            RowState::Running(_) => match self.rows.remove(id).map(|row| row.state) {
                Some(RowState::Running(actor)) => Cancelled::Running(actor),
                _ => Cancelled::Unknown,
            },
        }
    }

    /// Empties the table (the session ends): the actors of the running requests.
    pub(crate) fn drain(&mut self) -> Vec<Addr<InFlight>> {
        self.rows
            .drain()
            .filter_map(|(_, row)| match row.state {
                RowState::Running(actor) => Some(actor),
                RowState::Starting { .. } => None,
            })
            .collect()
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
        let drained = table.drain();
        assert!(drained.is_empty());
        assert_eq!(table.len(), 0);
    }
}
