//! `subscriptions/listen` streams (2026-07-28): one [`Listener`] actor per open stream,
//! registered in the server's [`Listeners`] hub, which every server-wide change notification
//! reaches beside the sessions' standalone streams.
//!
//! A listener sends `notifications/subscriptions/acknowledged` first, then only the change
//! notifications its filter asked for, each tagged with its subscription id (the listen
//! request's JSON-RPC id). It stops when its request ends (the client closed the stream or
//! cancelled it) or its outlet refuses a frame.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use actix::{Actor, ActorContext, Addr, Context, Handler, Message};
use serde_json::{Map, Value, json};

use actix_mcp_actors::{
    RequestId,
    dev::{Counted, Counting, Frame, Metrics, Outlet},
};

use crate::protocol::SubscriptionFilter;
use crate::protocol::method;
use crate::protocol::v2026::META_SUBSCRIPTION_ID;
use crate::server::ServerInner;
use crate::server::auth::scopes;

/// A change a listener may be told about.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub(crate) enum Change {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/list_changed`.
    Resources,
    /// `notifications/resources/updated` for this URI.
    Updated(String),
    /// `notifications/tasks` for this task (its full state).
    Task { id: String, task: Value },
}

/// The open listeners of one server, and the places taken by those about to open: a place is
/// taken ([`reserve`](Listeners::reserve)) in the same step as the count is checked, before the
/// listen request looks anything up, so concurrent requests cannot all pass the check.
#[derive(Default)]
pub(crate) struct Listeners {
    /// By key: the listener, or `None` while its request is still preparing it.
    open: Mutex<HashMap<u64, Place>>,
    next: AtomicU64,
}

/// One taken place: its listener, once started, and its count in the gauges of the transport
/// its request came over (which identify the transport, so that its drain ends its own
/// listeners).
struct Place {
    listener: Option<Addr<Listener>>,
    counting: Counting,
}

impl fmt::Debug for Listeners {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listeners")
            .field("open", &self.len())
            .finish()
    }
}

impl Listeners {
    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Place>> {
        self.open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many places are taken (listeners open or being prepared).
    pub(crate) fn len(&self) -> usize {
        self.open().len()
    }

    /// Takes a place for a listener unless `limit` are taken, counting and taking under one
    /// lock; its key, to [`fill`](Self::fill) and [`remove`](Self::remove) it.
    pub(crate) fn reserve(&self, limit: usize, transport: Arc<Metrics>) -> Option<u64> {
        let mut open = self.open();
        if open.len() >= limit {
            return None;
        }
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        open.insert(
            key,
            Place {
                listener: None,
                counting: transport.hold(Counted::Listener),
            },
        );
        Some(key)
    }

    /// Puts a started listener in the place `key` reserved; `false` (and nothing kept) when the
    /// place was given up meanwhile.
    pub(crate) fn fill(&self, key: u64, addr: Addr<Listener>) -> bool {
        match self.open().get_mut(&key) {
            Some(place) => {
                place.listener = Some(addr);
                true
            }
            None => false,
        }
    }

    /// Ends the listeners of requests that came over `transport` (it drains): each answers its
    /// closing result at once. A place still being prepared is given up, so its listener stops
    /// as soon as it starts.
    pub(crate) fn stop_on(&self, transport: &Arc<Metrics>) {
        let mut stopped = Vec::new();
        self.open().retain(|_, place| {
            if !place.counting.metrics().same_as(transport) {
                return true;
            }
            stopped.extend(place.listener.take());
            false
        });
        for listener in stopped {
            listener.do_send(StopListening);
        }
    }

    /// Gives up a place, and forgets its listener.
    pub(crate) fn remove(&self, key: u64) {
        self.open().remove(&key);
    }

    /// Tells every open listener about `change`.
    pub(crate) fn publish(&self, change: &Change) {
        let open: Vec<Addr<Listener>> = self
            .open()
            .values()
            .filter_map(|place| place.listener.clone())
            .collect();
        for listener in open {
            listener.do_send(change.clone());
        }
    }
}

/// What a listener on a protected endpoint may be told of resources: the scopes its caller
/// held when it opened the stream.
pub(crate) struct ReadScopes {
    pub(crate) server: Weak<ServerInner>,
    pub(crate) granted: Vec<String>,
}

impl ReadScopes {
    /// Whether the caller may read `uri` (and so learn that it changed).
    fn cover(&self, uri: &str) -> bool {
        self.server
            .upgrade()
            .is_some_and(|server| scopes::may_read(&server, &self.granted, uri))
    }
}

/// One `subscriptions/listen` stream. See the module docs.
pub(crate) struct Listener {
    subscription: RequestId,
    filter: SubscriptionFilter,
    /// On a protected endpoint: resource updates are delivered only for URIs these cover.
    scopes: Option<ReadScopes>,
    outlet: Outlet,
    /// Told when the listener stops (its outlet refused a frame).
    stopped: Option<tokio::sync::oneshot::Sender<()>>,
}

impl fmt::Debug for Listener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listener")
            .field("subscription", &self.subscription)
            .field("filter", &self.filter)
            .finish()
    }
}

impl Listener {
    /// A listener for the request `subscription`, delivering what `filter` honours to
    /// `outlet`; `stopped` fires when it stops on its own.
    pub(crate) fn new(
        subscription: RequestId,
        filter: SubscriptionFilter,
        scopes: Option<ReadScopes>,
        outlet: Outlet,
        stopped: tokio::sync::oneshot::Sender<()>,
    ) -> Self {
        Self {
            subscription,
            filter,
            scopes,
            outlet,
            stopped: Some(stopped),
        }
    }

    fn frame(&self, method: &str, mut params: Map<String, Value>) -> Frame {
        params.insert(
            "_meta".into(),
            json!({ META_SUBSCRIPTION_ID: self.subscription }),
        );
        Frame::notification(method, Some(&Value::Object(params)))
    }

    fn wants(&self, change: &Change) -> bool {
        let on = |flag: Option<bool>| flag.unwrap_or(false);
        match change {
            Change::Tools => on(self.filter.tools_list_changed),
            Change::Prompts => on(self.filter.prompts_list_changed),
            Change::Resources => on(self.filter.resources_list_changed),
            Change::Updated(uri) => {
                self.filter
                    .resource_subscriptions
                    .as_ref()
                    .is_some_and(|uris| {
                        uris.iter().any(|s| {
                            uri == s
                                || (uri.starts_with(s.as_str()) && uri[s.len()..].starts_with('/'))
                        })
                    })
                    && self.scopes.as_ref().is_none_or(|scopes| scopes.cover(uri))
            }
            Change::Task { id, .. } => self
                .filter
                .task_ids
                .as_ref()
                .is_some_and(|ids| ids.contains(id)),
        }
    }

    fn send(&mut self, frame: Frame, ctx: &mut Context<Self>) {
        if self.outlet.deliver(frame).is_err() {
            ctx.stop();
        }
    }
}

impl Actor for Listener {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // The acknowledgement is the first frame of the subscription (MUST).
        let honoured = serde_json::to_value(&self.filter)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default();
        let ack = self.frame(
            method::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
            Map::from_iter([("notifications".to_owned(), Value::Object(honoured))]),
        );
        self.send(ack, ctx);
        // Mailbox capacity: a burst of changes is kept, not dropped.
        ctx.set_mailbox_capacity(1024);
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        if let Some(stopped) = self.stopped.take() {
            let _ = stopped.send(());
        }
    }
}

impl Handler<Change> for Listener {
    type Result = ();

    fn handle(&mut self, change: Change, ctx: &mut Self::Context) {
        if !self.wants(&change) {
            return;
        }
        let frame = match change {
            Change::Tools => self.frame(method::NOTIFICATION_TOOLS_LIST_CHANGED, Map::new()),
            Change::Prompts => self.frame(method::NOTIFICATION_PROMPTS_LIST_CHANGED, Map::new()),
            Change::Resources => {
                self.frame(method::NOTIFICATION_RESOURCES_LIST_CHANGED, Map::new())
            }
            Change::Updated(uri) => self.frame(
                method::NOTIFICATION_RESOURCES_UPDATED,
                Map::from_iter([("uri".to_owned(), Value::String(uri))]),
            ),
            Change::Task { task, .. } => {
                let params = task.as_object().cloned().unwrap_or_default();
                self.frame(method::NOTIFICATION_TASKS, params)
            }
        };
        self.send(frame, ctx);
    }
}

/// Stop listening (the listen request ended).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(crate) struct StopListening;

impl Handler<StopListening> for Listener {
    type Result = ();

    fn handle(&mut self, _: StopListening, ctx: &mut Self::Context) {
        ctx.stop();
    }
}
