//! stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! One session serves the connection, under a registry of its own (which supervises it, as
//! every session is supervised). A reader loop parses each line and hands it to the session
//! actor (with backpressure); every outgoing frame goes through one [`StdioWriter`] actor, so
//! lines never interleave; a peer that stops reading stdout pauses the writer, and once its
//! bounded mailbox is full further frames are dropped (and logged) rather than held without
//! bound. Requests are handled concurrently: a slow tool never blocks `ping`.
//! Logs go to stderr only (the library never prints to stdout). End of input cancels the work
//! in flight, flushes what was already answered, and returns.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio>

use std::fmt;
use std::io;
use std::sync::Arc;

use actix::io::{FramedWrite, WriteHandler};
use actix::{Actor, ActorContext, Addr, Context, Handler, Message};
use bytes::{BufMut, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio_util::codec::Encoder;

use actix_mcp_actors::{
    ErrorCode, ErrorObject, SessionId,
    dev::{
        Frame, FrameSink, Incoming, Metrics, Outlet, Registry, RegistryConfig, SessionConfig,
        SessionParts,
    },
};

use crate::protocol::ProtocolVersion;
use crate::server::Server;
use crate::server::origin::{Arrival, Origin};
use crate::server::route::{McpDispatch, Network};
use crate::transport::lines::{Line, read_line};

/// How long [`Server::serve_stdio`] lets requests in flight finish after SIGTERM or SIGINT.
pub const STDIO_DRAIN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Settings of the stdio transport. Defaults are not part of semver.
#[derive(Debug, Clone)]
pub struct StdioConfig {
    /// Longest accepted line in bytes (default 4 MiB); a longer one is answered with an error
    /// and skipped.
    pub max_line_bytes: usize,
}

impl Default for StdioConfig {
    fn default() -> Self {
        Self {
            max_line_bytes: 4 * 1024 * 1024,
        }
    }
}

/// Encodes frames as lines.
#[derive(Debug, Default, Clone, Copy)]
struct LineEncoder;

impl Encoder<Frame> for LineEncoder {
    type Error = io::Error;

    fn encode(&mut self, frame: Frame, dst: &mut BytesMut) -> Result<(), io::Error> {
        dst.reserve(frame.json.len() + 1);
        dst.put_slice(frame.json.as_bytes());
        dst.put_u8(b'\n');
        Ok(())
    }
}

/// The writer actor: owns the output stream; one line per frame, in arrival order.
pub struct StdioWriter<W: AsyncWrite + Unpin + 'static> {
    framed: FramedWrite<Frame, W, LineEncoder>,
}

impl<W: AsyncWrite + Unpin + 'static> fmt::Debug for StdioWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioWriter")
            .field("closed", &self.framed.closed())
            .finish()
    }
}

impl<W: AsyncWrite + Unpin + 'static> Actor for StdioWriter<W> {
    type Context = Context<Self>;
}

impl<W: AsyncWrite + Unpin + 'static> WriteHandler<io::Error> for StdioWriter<W> {
    fn error(&mut self, err: io::Error, _: &mut Self::Context) -> actix::Running {
        tracing::error!(%err, "stdout failed; stopping the writer");
        actix::Running::Stop
    }

    fn finished(&mut self, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

/// Write one frame as a line. Sent through the writer's outlet.
#[derive(Debug, Message)]
#[rtype(result = "()")]
struct WriteFrame(Frame);

impl<W: AsyncWrite + Unpin + 'static> Handler<WriteFrame> for StdioWriter<W> {
    type Result = ();

    fn handle(&mut self, msg: WriteFrame, _: &mut Self::Context) {
        self.framed.write(msg.0);
    }
}

/// Flush what is queued and close the output. Sent at end of input.
#[derive(Debug, Message)]
#[rtype(result = "()")]
struct CloseOutput;

impl<W: AsyncWrite + Unpin + 'static> Handler<CloseOutput> for StdioWriter<W> {
    type Result = ();

    fn handle(&mut self, _: CloseOutput, _: &mut Self::Context) {
        self.framed.close();
    }
}

/// Frames the writer may have queued while stdout is blocked (its buffer past its high
/// watermark pauses it) before further frames are dropped.
const WRITER_MAILBOX: usize = 1024;

struct WriterOutlet<W: AsyncWrite + Unpin + 'static>(Addr<StdioWriter<W>>);

impl<W: AsyncWrite + Unpin + 'static> FrameSink for WriterOutlet<W> {
    fn deliver(&self, frame: Frame) -> Result<(), Frame> {
        self.0.try_send(WriteFrame(frame)).map_err(|err| {
            if matches!(err, actix::prelude::SendError::Full(_)) {
                tracing::error!("the peer is not reading stdout; dropping an outgoing frame");
            }
            err.into_inner().0
        })
    }
}

/// Standard input, read on a thread of its own: unlike `tokio::io::stdin`, whose blocking read
/// runs on the runtime's blocking pool and holds the runtime's shutdown (so the process) until
/// the peer writes again or closes stdin, a server that has finished (a drain) exits at once
/// while stdin stays open. Falls back to `tokio::io::stdin` when no thread can be started.
fn stdin() -> Box<dyn AsyncRead + Unpin + Send> {
    use std::io::Read as _;

    let (tx, mut rx) = tokio::sync::mpsc::channel::<io::Result<bytes::Bytes>>(8);
    let started = std::thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0; 64 * 1024];
            loop {
                let chunk = match stdin.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => Ok(bytes::Bytes::copy_from_slice(&buf[..n])),
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    Err(err) => Err(err),
                };
                let failed = chunk.is_err();
                // The server is gone once nobody receives: so is this thread's work.
                if tx.blocking_send(chunk).is_err() || failed {
                    return;
                }
            }
        });
    match started {
        Ok(_) => Box::new(tokio_util::io::StreamReader::new(futures::stream::poll_fn(
            move |cx| rx.poll_recv(cx),
        ))),
        Err(err) => {
            tracing::warn!(%err, "no thread for stdin; reading it on the blocking pool");
            Box::new(tokio::io::stdin())
        }
    }
}

impl Server {
    /// Serves this server on stdin and stdout until stdin ends. Must run inside an actix
    /// system (e.g. `#[actix_web::main]` or `#[actix::main]`).
    ///
    /// # Errors
    /// When reading stdin fails.
    ///
    /// On SIGTERM or SIGINT ([`shutdown_signal`](crate::transport::shutdown_signal)) it drains:
    /// stops reading, lets the requests in flight finish for up to [`STDIO_DRAIN_DEADLINE`],
    /// cancels the rest, flushes what was answered and returns.
    pub async fn serve_stdio(&self) -> io::Result<()> {
        self.serve_io_until(
            stdin(),
            tokio::io::stdout(),
            StdioConfig::default(),
            async {
                crate::transport::shutdown_signal().await;
                STDIO_DRAIN_DEADLINE
            },
        )
        .await
    }

    /// Serves this server on any byte stream pair with newline-delimited JSON (stdio framing).
    ///
    /// # Errors
    /// When reading fails.
    ///
    /// # Cancel safety
    /// Dropping the future leaves the session running until its actors notice the closed
    /// input; await it to completion for a clean shutdown.
    pub async fn serve_io<R, W>(&self, reader: R, writer: W, config: StdioConfig) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + 'static,
    {
        self.serve_io_until(reader, writer, config, std::future::pending())
            .await
    }

    /// Like [`serve_io`](Self::serve_io), and drains when `shutdown` resolves with a deadline:
    /// stops reading (what the peer sends after is not read), lets the requests in flight
    /// finish until the deadline, cancels the rest (they send nothing more), flushes what was
    /// answered and returns `Ok`.
    ///
    /// # Errors
    /// When reading fails.
    ///
    /// # Cancel safety
    /// As [`serve_io`](Self::serve_io).
    pub async fn serve_io_until<R, W, S>(
        &self,
        reader: R,
        writer: W,
        config: StdioConfig,
        shutdown: S,
    ) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + 'static,
        S: std::future::Future<Output = std::time::Duration>,
    {
        let writer = StdioWriter::create(move |ctx| {
            ctx.set_mailbox_capacity(WRITER_MAILBOX);
            StdioWriter {
                framed: FramedWrite::new(writer, LineEncoder, ctx),
            }
        });
        let outlet = Outlet::new(WriterOutlet(writer.clone()));
        let dispatch: Arc<dyn actix_mcp_actors::dev::Dispatch> =
            McpDispatch::new(self.inner.clone(), Network::Pipe);
        let metrics = Arc::new(Metrics::default());
        #[cfg(feature = "otel")]
        crate::telemetry::track(&metrics);
        // One registry per connection supervises its one session.
        let registry = Registry::start(
            RegistryConfig {
                max_sessions: 1,
                idle_timeout: None,
                ..RegistryConfig::default()
            },
            metrics.clone(),
            None,
        );
        let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<()>();
        let opened = registry.open(SessionParts {
            // Unique per connection: one server may serve several stdio-framed streams at once.
            id: SessionId::parse(&format!("stdio-{}", uuid::Uuid::new_v4().simple()))
                .unwrap_or_else(SessionId::stdio),
            dispatch,
            config: SessionConfig {
                max_in_flight: self.inner.config.max_concurrent_requests,
            },
            standalone: Some(outlet.clone()),
            on_stopped: Some(Box::new(move |_| {
                let _ = stopped_tx.send(());
            })),
            owner: None,
        });
        let session = match opened {
            Ok(session) => session,
            Err(err) => return Err(io::Error::other(err)),
        };
        self.inner.add_registry(registry.clone());
        let mut reader = BufReader::new(reader);
        let mut buf = Vec::new();
        tokio::pin!(shutdown);
        let mut drain_deadline = None;
        let result = loop {
            // Dropping a half-read line is fine here: nothing more is read after a shutdown.
            let line = tokio::select! {
                line = read_line(&mut reader, &mut buf, config.max_line_bytes) => line,
                deadline = &mut shutdown => {
                    drain_deadline = Some(deadline);
                    break Ok(());
                }
            };
            match line {
                Ok(Line::Eof) => break Ok(()),
                Ok(Line::TooLong) => {
                    let error = ErrorObject::new(
                        ErrorCode::INVALID_REQUEST,
                        format!(
                            "message too large: lines are limited to {} bytes",
                            config.max_line_bytes
                        ),
                    );
                    outlet.deliver_or_log(Frame::error(None, &error), "oversized line error");
                }
                Ok(Line::Data) => {
                    if buf.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    match actix_mcp_actors::dev::parse_message(&buf) {
                        Err(rejection) => {
                            outlet.deliver_or_log(rejection.to_frame(), "parse error")
                        }
                        Ok(Incoming::Request(request)) => {
                            // The door: a request is of the session's revision, or of
                            // 2026-07-28 with its own envelope (checked here).
                            let origin = match Origin::of(
                                &request,
                                true,
                                ProtocolVersion::LATEST_WITH_HANDSHAKE,
                            ) {
                                Ok(origin) => origin,
                                Err(error) => {
                                    let frame = Frame::error(Some(&request.id), &error);
                                    outlet.deliver_or_log(frame, "envelope error");
                                    continue;
                                }
                            };
                            let carry = Arrival::of(origin).carry();
                            if session
                                .request_with_backpressure(request, outlet.clone(), carry)
                                .await
                                .is_err()
                            {
                                break Ok(());
                            }
                        }
                        Ok(Incoming::Notification(notification)) => {
                            session.notification(notification)
                        }
                        Ok(Incoming::Response(response)) => session.response(response),
                    }
                }
                Err(err) => break Err(err),
            }
        };
        if let Some(deadline) = drain_deadline {
            // A listen stream runs until its client ends it: it ends now, with its closing
            // result.
            self.inner.listeners.stop_on(&metrics);
            self.inner.mrtr.park.halt_on(&metrics);
            let until = tokio::time::Instant::now() + deadline;
            tracing::info!(
                in_flight = session.in_flight(),
                "draining: no more input is read; waiting for the requests in flight"
            );
            while session.in_flight() > 0 && tokio::time::Instant::now() < until {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            if session.in_flight() > 0 {
                tracing::warn!(
                    remaining = session.in_flight(),
                    "drain deadline passed; cancelling the requests still running"
                );
                // Each gets `notifications/cancelled` before the session closes.
                session.abort_all(crate::transport::SHUTDOWN_REASON);
                // Their notifications are written before the output closes.
                let grace = tokio::time::Instant::now() + std::time::Duration::from_secs(1);
                while metrics.snapshot().in_flight > 0 && tokio::time::Instant::now() < grace {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
            }
        }
        session.close();
        // The registry has cleaned up after the session (every request ended) once this fires.
        let _ = stopped_rx.await;
        self.inner.remove_registry(&registry);
        // Everything answered before the end of input is queued ahead of this: flush and close.
        let _ = writer.send(CloseOutput).await;
        result
    }
}
