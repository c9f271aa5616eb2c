//! The actix system a client runs on when the application has none: a plain tokio
//! application (`#[tokio::main]`) connects a [`Client`](super::Client) as an actix one does.
//!
//! One thread, named `actix-mcp-rt`, runs the system. It is started when the first client
//! connects outside an actix system and shared by every client connected that way; it stops
//! once the last of them is dropped and its session has closed its transport (so an HTTP
//! session is still ended with its `DELETE`, and a child process still asked to exit).

use std::sync::{Arc, Mutex, PoisonError, Weak};

use actix_rt::{ArbiterHandle, System};

use super::error::ClientError;

/// The client system's handles. Dropping the last one stops the system.
#[derive(Debug)]
pub(crate) struct ClientRuntime {
    system: System,
    arbiter: ArbiterHandle,
}

/// The running client system, if any client still holds it.
static CURRENT: Mutex<Weak<ClientRuntime>> = Mutex::new(Weak::new());

impl ClientRuntime {
    /// The running client system, started when there is none.
    ///
    /// # Errors
    /// When its thread cannot be started.
    pub(crate) fn acquire() -> Result<Arc<Self>, ClientError> {
        let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(runtime) = current.upgrade() {
            return Ok(runtime);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("actix-mcp-rt".into())
            .spawn(move || {
                let system = System::new();
                // The receiver waits for exactly this message.
                let _ = tx.send((System::current(), actix_rt::Arbiter::current()));
                if let Err(err) = system.run() {
                    tracing::warn!(%err, "the client's actix system failed");
                }
            })
            .map_err(|err| {
                ClientError::TransportClosed(format!("cannot start the client's thread: {err}"))
            })?;
        let (system, arbiter) = rx.recv().map_err(|_| {
            ClientError::TransportClosed("the client's thread ended at its start".into())
        })?;
        let runtime = Arc::new(Self { system, arbiter });
        *current = Arc::downgrade(&runtime);
        Ok(runtime)
    }

    /// The arbiter the clients' actors run on.
    pub(crate) fn arbiter(&self) -> &ArbiterHandle {
        &self.arbiter
    }
}

impl Drop for ClientRuntime {
    fn drop(&mut self) {
        // Its thread returns from `run` once the system has stopped.
        self.system.stop();
    }
}
