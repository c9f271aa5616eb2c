//! One `subscriptions/listen` stream for every task a client waits for: the task handles of
//! a client follow their tasks' `notifications/tasks` through one stream whose filter names
//! them all, rather than a stream each (a client waiting for a thousand tasks holds one
//! stream, not a thousand).
//!
//! A handle that starts waiting joins the watch ([`TaskWatch::follow`]); the watch's runner
//! (one tokio task per client, while any task is followed) listens with the ids of every task
//! followed, and listens again with the new set whenever it changes (a handle joins, or its
//! [`Follower`] is dropped), then tells each follower of its task's changes. Notifications
//! sent while the stream is being replaced are not lost to the handles: each acknowledgement
//! of the stream tells every follower to read its task again (`tasks/get`). A server that
//! refuses the stream, or a stream that fails for good, leaves the handles polling, and no
//! stream is opened again for this client.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::StreamExt;
use tokio::sync::{Notify, watch};

use super::Client;
use super::listen::{ListenEvent, Subscription};
use crate::protocol::{DetailedTask, SubscriptionFilter, method};

/// What a follower learns of its task.
#[derive(Debug, Clone)]
pub(crate) enum Signal {
    /// Nothing yet.
    Quiet,
    /// The task's new state, from its notification.
    Changed(Box<DetailedTask>),
    /// The stream was (re)opened: what changed before is read with `tasks/get`.
    Reread,
    /// The stream is gone for good: poll.
    Broken,
}

#[derive(Default)]
struct State {
    /// The followed tasks, each with its followers' channel and how many follow it.
    tasks: HashMap<String, (watch::Sender<Signal>, usize)>,
    /// Whether the runner runs.
    running: bool,
    /// Listening failed for good: followers poll.
    broken: bool,
}

/// A client's watch of the tasks its handles wait for. See the [module docs](self).
#[derive(Default)]
pub(crate) struct TaskWatch {
    state: Mutex<State>,
    /// Wakes the runner when the set of followed tasks changes.
    changed: Notify,
}

impl std::fmt::Debug for TaskWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("TaskWatch")
            .field("tasks", &state.tasks.len())
            .field("running", &state.running)
            .field("broken", &state.broken)
            .finish()
    }
}

/// A handle's place in its client's [`TaskWatch`]; leaves it when dropped.
#[derive(Debug)]
pub(crate) struct Follower {
    client: Client,
    task_id: String,
    signals: watch::Receiver<Signal>,
}

impl TaskWatch {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Follows `task_id` for a handle of `client`; `None` when the client's listening failed
    /// for good (the handle polls).
    pub(crate) fn follow(client: &Client, task_id: &str) -> Option<Follower> {
        let watch = &client.inner.task_watch;
        let (signals, start) = {
            let mut state = watch.lock();
            if state.broken {
                return None;
            }
            let (sender, followers) = state
                .tasks
                .entry(task_id.to_owned())
                .or_insert_with(|| (watch::channel(Signal::Quiet).0, 0));
            *followers += 1;
            let signals = sender.subscribe();
            let start = !state.running;
            state.running = true;
            (signals, start)
        };
        if start {
            tokio::spawn(run(client.clone()));
        } else {
            watch.changed.notify_one();
        }
        Some(Follower {
            client: client.clone(),
            task_id: task_id.to_owned(),
            signals,
        })
    }

    /// Tells every follower `signal`.
    fn tell_all(&self, signal: &Signal) {
        for (sender, _) in self.lock().tasks.values() {
            sender.send_replace(signal.clone());
        }
    }

    /// The followed tasks' ids, in order; the runner stops (and says so) when there are none.
    fn ids_or_stop(&self) -> Option<Vec<String>> {
        let mut state = self.lock();
        if state.tasks.is_empty() {
            state.running = false;
            return None;
        }
        let mut ids: Vec<String> = state.tasks.keys().cloned().collect();
        ids.sort();
        Some(ids)
    }

    /// Listening failed for good: every follower polls from now on.
    fn break_down(&self) {
        self.tell_all(&Signal::Broken);
        let mut state = self.lock();
        state.broken = true;
        state.running = false;
    }
}

impl Follower {
    /// Waits for the next signal about the task.
    pub(crate) async fn next(&mut self) -> Signal {
        if self.signals.changed().await.is_err() {
            // The watch dropped the task (it cannot while this follower lives): poll.
            return Signal::Broken;
        }
        self.signals.borrow_and_update().clone()
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let watch = &self.client.inner.task_watch;
        {
            let mut state = watch.lock();
            if let Some((_, followers)) = state.tasks.get_mut(&self.task_id) {
                *followers -= 1;
                if *followers == 0 {
                    state.tasks.remove(&self.task_id);
                }
            }
        }
        watch.changed.notify_one();
    }
}

/// The runner: listens for the followed tasks, again whenever the set changes, until none is
/// followed or listening fails for good.
async fn run(client: Client) {
    let watch = &client.inner.task_watch;
    while let Some(ids) = watch.ids_or_stop() {
        let filter = SubscriptionFilter {
            task_ids: Some(ids),
            ..SubscriptionFilter::default()
        };
        let Ok(mut subscription) = client.listen(filter).await else {
            watch.break_down();
            return;
        };
        if !follow_until_changed(watch, &mut subscription).await {
            watch.break_down();
            return;
        }
    }
}

/// Tells the followers what `subscription` brings until the set of followed tasks changes
/// (`true`) or the stream ends (`false`).
async fn follow_until_changed(watch: &TaskWatch, subscription: &mut Subscription) -> bool {
    loop {
        let event = tokio::select! {
            () = watch.changed.notified() => return true,
            event = subscription.next() => event,
        };
        match event {
            Some(Ok(ListenEvent::Other { method, params }))
                if method == method::NOTIFICATION_TASKS =>
            {
                let Some(task) =
                    params.and_then(|p| serde_json::from_value::<DetailedTask>(p).ok())
                else {
                    continue;
                };
                if let Some((sender, _)) = watch.lock().tasks.get(&task.task_id) {
                    sender.send_replace(Signal::Changed(Box::new(task)));
                }
            }
            Some(Ok(ListenEvent::Acknowledged(_))) => watch.tell_all(&Signal::Reread),
            Some(Ok(_)) => {}
            Some(Err(error)) => {
                tracing::debug!(%error, "the tasks' listen stream failed; polling only");
                return false;
            }
            None => return false,
        }
    }
}
