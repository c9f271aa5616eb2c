//! Newline-delimited JSON over any `AsyncRead` + `AsyncWrite` pair: the stdio framing, for
//! in-memory pipes, sockets, and (through [`ChildProcess`](super::ChildProcess)) child processes.
//!
//! A reader task parses one line at a time (lines over the limit are reported and skipped)
//! into the session's inbox; a writer task owns the output and writes one line per message, in
//! order. When the input ends, the inbox receives [`Inbound::Closed`].

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::{Connect, Inbound, Inbox, Outgoing, Transport};
use crate::client::error::ClientError;
use crate::transport::lines::{Line, read_line};

/// Default longest line accepted from the server: 4 MiB.
pub(crate) const DEFAULT_MAX_LINE: usize = 4 * 1024 * 1024;

/// Messages the writer holds before `send` waits.
const WRITER_QUEUE: usize = 256;

/// A transport over a byte stream pair carrying newline-delimited JSON.
pub struct IoTransport<R, W> {
    reader: R,
    writer: W,
    max_line: usize,
}

impl<R, W> fmt::Debug for IoTransport<R, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IoTransport")
            .field("max_line", &self.max_line)
            .finish()
    }
}

impl<R, W> IoTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Reads the server's messages from `reader` and writes ours to `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        Self {
            reader,
            writer,
            max_line: DEFAULT_MAX_LINE,
        }
    }

    /// Longest line accepted from the server, in bytes (default 4 MiB); a longer one is
    /// reported as [`ClientError::Protocol`] and skipped.
    #[must_use]
    pub fn max_line(mut self, bytes: usize) -> Self {
        self.max_line = bytes.max(1);
        self
    }
}

/// What the writer task is asked to do.
enum Command {
    /// Write this message as a line.
    Write(Outgoing),
    /// Flush what was written, shut the output down, then reply.
    Close(oneshot::Sender<()>),
}

/// The connected half: a queue into the writer task.
pub(crate) struct LineSender {
    queue: mpsc::Sender<Command>,
}

impl LineSender {
    /// Starts the reader and writer tasks over `reader` and `writer`.
    pub(crate) fn start<R, W>(reader: R, writer: W, max_line: usize, inbox: Inbox) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (queue, outgoing) = mpsc::channel(WRITER_QUEUE);
        tokio::spawn(write_lines(writer, outgoing));
        tokio::spawn(read_lines(reader, max_line, inbox));
        Self { queue }
    }

    pub(crate) fn send(&self, message: Outgoing) -> BoxFuture<'static, Result<(), ClientError>> {
        let queue = self.queue.clone();
        Box::pin(async move {
            queue
                .send(Command::Write(message))
                .await
                .map_err(|_| ClientError::TransportClosed("the output is closed".into()))
        })
    }

    /// Closes the output (the writer flushes what is queued, then shuts the stream down).
    pub(crate) fn close(&self) -> BoxFuture<'static, Result<(), ClientError>> {
        let queue = self.queue.clone();
        Box::pin(async move {
            let (done, closed) = oneshot::channel();
            if queue.send(Command::Close(done)).await.is_ok() {
                // The writer replies once everything queued before is written and flushed.
                let _ = closed.await;
            }
            Ok(())
        })
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut writer: W, mut commands: mpsc::Receiver<Command>) {
    let mut line = Vec::new();
    while let Some(command) = commands.recv().await {
        let message = match command {
            Command::Write(message) => message,
            Command::Close(done) => {
                let _ = writer.flush().await;
                let _ = writer.shutdown().await;
                let _ = done.send(());
                return;
            }
        };
        line.clear();
        line.extend_from_slice(message.frame.json.as_bytes());
        line.push(b'\n');
        if let Err(err) = async {
            writer.write_all(&line).await?;
            writer.flush().await
        }
        .await
        {
            tracing::debug!(%err, "the server's input is closed; the writer stops");
            return;
        }
    }
    let _ = writer.shutdown().await;
}

async fn read_lines<R: AsyncRead + Unpin>(reader: R, max_line: usize, inbox: Inbox) {
    let mut reader = BufReader::new(reader);
    let mut buf = Vec::new();
    let closed = loop {
        let event = match read_line(&mut reader, &mut buf, max_line).await {
            Ok(Line::Eof) => {
                break ClientError::TransportClosed("the server closed its output".into());
            }
            Err(err) => {
                break ClientError::TransportClosed(format!(
                    "reading from the server failed: {err}"
                ));
            }
            Ok(Line::TooLong) => Inbound::Malformed(ClientError::Protocol(format!(
                "the server sent a line over {max_line} bytes; it was skipped"
            ))),
            Ok(Line::Data) => {
                if buf.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match actix_mcp_actors::dev::parse_message(&buf) {
                    Ok(message) => Inbound::Message(message),
                    Err(rejection) => Inbound::Malformed(ClientError::Protocol(format!(
                        "the server sent an unreadable message: {}",
                        rejection.error.message
                    ))),
                }
            }
        };
        if !inbox.deliver(event).await {
            return;
        }
    };
    inbox.deliver(Inbound::Closed(closed)).await;
}

impl<R, W> Connect for IoTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    fn connect(self, inbox: Inbox) -> BoxFuture<'static, Result<Arc<dyn Transport>, ClientError>> {
        let sender = LineSender::start(self.reader, self.writer, self.max_line, inbox);
        Box::pin(async move { Ok(Arc::new(IoConnection(sender)) as Arc<dyn Transport>) })
    }
}

struct IoConnection(LineSender);

impl Transport for IoConnection {
    fn send(&self, message: Outgoing) -> BoxFuture<'static, Result<(), ClientError>> {
        self.0.send(message)
    }

    fn close(&self) -> BoxFuture<'static, Result<(), ClientError>> {
        self.0.close()
    }
}
