//! The master a set of Redis Sentinels names, followed through failovers.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, Instant};

use actix_mcp_actors::StoreError;
use redis::sentinel::{SentinelClient, SentinelServerType};

use super::connection::{RESPONSE_TIMEOUT, Server, open_server, redacted_all};

/// How often the Sentinels are asked which server is the master, besides each time a command
/// finds it gone.
const POLL: Duration = Duration::from_secs(1);

/// The least time between two questions to the Sentinels.
const MIN_ASK: Duration = Duration::from_millis(200);

/// The Sentinels, the master they named last and its connection.
pub(super) struct SentinelBackend {
    /// Asks the Sentinels (one question at a time).
    sentinels: tokio::sync::Mutex<Asker>,
    /// The master's server now.
    current: RwLock<Arc<Server>>,
    /// Whether a [`follow_soon`](Self::follow_soon) is under way (the others are not needed).
    following: AtomicBool,
    /// The master's name, and the Sentinels' URLs (as logs may show them).
    master: String,
    shown: String,
}

/// The Sentinels' client, and when it last asked them.
struct Asker {
    client: SentinelClient,
    asked: Instant,
}

impl fmt::Debug for SentinelBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sentinel")
            .field("sentinels", &self.shown)
            .field("master", &self.master)
            .field(
                "server",
                &self
                    .current()
                    .client
                    .get_connection_info()
                    .addr()
                    .to_string(),
            )
            .finish()
    }
}

impl SentinelBackend {
    /// Asks the Sentinels at `urls` for the master `master` and connects to it; then follows
    /// it (every [`POLL`], by a task that ends with the last handle on this backend).
    pub(super) async fn connect(urls: &[&str], master: &str) -> Result<Arc<Self>, StoreError> {
        let shown = redacted_all(urls);
        if urls.is_empty() {
            return Err(StoreError::Unavailable(
                "redis sentinel: no sentinel url given".into(),
            ));
        }
        let mut client = SentinelClient::build(
            urls.to_vec(),
            master.to_owned(),
            None,
            SentinelServerType::Master,
        )
        .map_err(|err| StoreError::Unavailable(format!("redis sentinel url {shown}: {err}")))?;
        let found = ask(&mut client).await.map_err(|err| {
            StoreError::Unavailable(format!(
                "could not find the redis master {master:?} through the sentinels at {shown}: \
                 {err}"
            ))
        })?;
        let address = found.get_connection_info().addr().to_string();
        let server = open_server(found, &address, 0).await?;
        let backend = Arc::new(Self {
            sentinels: tokio::sync::Mutex::new(Asker {
                client,
                asked: Instant::now(),
            }),
            current: RwLock::new(Arc::new(server)),
            following: AtomicBool::new(false),
            master: master.to_owned(),
            shown,
        });
        tokio::spawn(poll(Arc::downgrade(&backend)));
        Ok(backend)
    }

    /// The master's server as the Sentinels named it last.
    pub(super) fn current(&self) -> Arc<Server> {
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Asks the Sentinels again, now, in the background (unless a question is on its way).
    pub(super) fn follow_soon(self: &Arc<Self>) {
        if tokio::runtime::Handle::try_current().is_err()
            || self.following.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let backend = self.clone();
        tokio::spawn(async move {
            backend.follow().await;
            backend.following.store(false, Ordering::Release);
        });
    }

    /// Asks the Sentinels which server is the master (unless they were asked a moment ago, or
    /// are being asked), and moves to it when it is another one than the current master.
    pub(super) async fn follow(&self) {
        let Ok(mut asker) = self.sentinels.try_lock() else {
            // A question is on its way: wait for its answer.
            let _ = self.sentinels.lock().await;
            return;
        };
        if asker.asked.elapsed() < MIN_ASK {
            return;
        }
        let found = ask(&mut asker.client).await;
        asker.asked = Instant::now();
        let found = match found {
            Ok(found) => found,
            Err(err) => {
                tracing::debug!(%err, master = %self.master, "the sentinels named no master");
                return;
            }
        };
        let current = self.current();
        if found.get_connection_info().addr() == current.client.get_connection_info().addr() {
            return;
        }
        let address = found.get_connection_info().addr().to_string();
        match open_server(found, &address, current.generation + 1).await {
            Ok(server) => {
                tracing::warn!(master = %self.master, %address, "the redis master moved (sentinel failover); following it");
                *self
                    .current
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(server);
            }
            Err(err) => {
                tracing::warn!(%err, master = %self.master, "could not connect to the new redis master yet");
            }
        }
    }
}

/// The master's client as the Sentinels name it (checked to be a master), within twice the
/// response timeout.
async fn ask(client: &mut SentinelClient) -> Result<redis::Client, String> {
    match tokio::time::timeout(RESPONSE_TIMEOUT * 2, client.async_get_client()).await {
        Ok(Ok(found)) => Ok(found),
        Ok(Err(err)) => Err(err.to_string()),
        Err(_) => Err("timed out".into()),
    }
}

/// Asks the Sentinels every [`POLL`] while the backend lives.
async fn poll(backend: Weak<SentinelBackend>) {
    loop {
        tokio::time::sleep(POLL).await;
        let Some(backend) = backend.upgrade() else {
            return;
        };
        backend.follow().await;
    }
}
