//! The scale run (`LOAD_SCALE=SESSIONS,STREAMS`, for example `100000,10000`): how far one node
//! goes. One fresh `sse` server (one worker, pinned like every other server, its session cap
//! above what the run opens), then, in order:
//!
//! 1. `SESSIONS` sessions opened (`initialize` + `notifications/initialized`, nothing else) over
//!    32 keep-alive connections: the setup rate, and RSS per idle session;
//! 2. `tools/call echo` from 16 more sessions for two seconds while they are open: p50 and p99;
//! 3. a GET stream opened on `STREAMS` of those sessions (one connection each, 128 opening at
//!    once): the rate, and RSS per stream;
//! 4. `echo` again, with the streams open;
//! 5. the streams closed and every session deleted (`DELETE`): RSS then, and how much of what
//!    the run took the process gave back to the system;
//! 6. `SESSIONS` sessions opened again and deleted, twice: RSS after each round, which tells
//!    memory the allocator keeps for reuse (RSS flat from round to round) from memory leaked
//!    (RSS growing by about what step 1 took, every round).
//!
//! Any refused or failed operation (a session not opened, a stream not `200`, an `echo` that
//! does not answer `hello`) fails the run: the figures are of a run in which every operation
//! succeeded.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::client::{self, percentile};
use super::{Result, ServerKind, ServerProcess, settle};

/// What the scale run measured.
#[derive(Debug)]
pub(super) struct ScaleRun {
    sessions: usize,
    streams: usize,
    sessions_per_second: f64,
    streams_per_second: f64,
    rss_start_kib: u64,
    rss_sessions_kib: u64,
    rss_streams_kib: u64,
    rss_closed_kib: u64,
    rss_reopened_kib: [u64; 2],
    /// p50 and p99 of `echo` with the sessions open, then with the streams open too.
    echo_sessions: (Duration, Duration, usize),
    echo_streams: (Duration, Duration, usize),
}

/// Clients of the latency windows, and their length.
const ECHO_CLIENTS: usize = 16;
const ECHO_WINDOW: Duration = Duration::from_secs(2);

/// Parses `LOAD_SCALE`: `SESSIONS,STREAMS`; `None` when unset or empty.
pub(super) fn from_env() -> Result<Option<(usize, usize)>> {
    let Ok(value) = std::env::var("LOAD_SCALE") else {
        return Ok(None);
    };
    if value.trim().is_empty() {
        return Ok(None);
    }
    let (sessions, streams) = value
        .split_once(',')
        .ok_or("LOAD_SCALE is SESSIONS,STREAMS (for example 100000,10000)")?;
    let sessions: usize = sessions.trim().parse()?;
    let streams: usize = streams.trim().parse()?;
    if streams > sessions {
        return Err("LOAD_SCALE: a GET stream needs a session: STREAMS <= SESSIONS".into());
    }
    Ok(Some((sessions, streams)))
}

async fn echo_window(addr: SocketAddr) -> Result<(Duration, Duration, usize)> {
    let latencies = client::echo_latencies(addr, ECHO_CLIENTS, ECHO_WINDOW).await?;
    Ok((
        percentile(&latencies, 50),
        percentile(&latencies, 99),
        latencies.len(),
    ))
}

/// Runs the scale run on a fresh server pinned to `cpu`.
pub(super) async fn run(sessions: usize, streams: usize, cpu: Option<usize>) -> Result<ScaleRun> {
    // Room for every session the run opens, and the latency windows' own.
    let cap = sessions + 4 * ECHO_CLIENTS + 1;
    let server = ServerProcess::spawn(ServerKind::Sse.args(cap), cpu)?;
    client::open_sessions(server.addr, 1).await?;
    settle().await;
    let rss_start_kib = server.rss_kib()?;

    let started = Instant::now();
    let mut ids = client::open_sessions(server.addr, sessions).await?;
    let sessions_per_second = sessions as f64 / started.elapsed().as_secs_f64();
    eprintln!("scale: {sessions} sessions at {sessions_per_second:.0}/s");
    settle().await;
    let rss_sessions_kib = server.rss_kib()?;
    let echo_sessions = echo_window(server.addr).await?;

    const PARALLEL: usize = 128;
    let started = Instant::now();
    let mut open = Vec::with_capacity(streams);
    let mut pending = tokio::task::JoinSet::new();
    let mut next = ids.iter().take(streams).cloned();
    loop {
        while pending.len() < PARALLEL {
            let Some(id) = next.next() else { break };
            pending.spawn(client::open_get_stream(server.addr, id));
        }
        let Some(done) = pending.join_next().await else {
            break;
        };
        open.push(done??);
    }
    let streams_per_second = streams as f64 / started.elapsed().as_secs_f64();
    eprintln!("scale: {streams} GET streams at {streams_per_second:.0}/s");
    settle().await;
    let rss_streams_kib = server.rss_kib()?;
    let echo_streams = echo_window(server.addr).await?;

    drop(open);
    client::close_sessions(server.addr, std::mem::take(&mut ids)).await?;
    settle().await;
    let rss_closed_kib = server.rss_kib()?;
    let mut rss_reopened_kib = [0; 2];
    for rss in &mut rss_reopened_kib {
        let again = client::open_sessions(server.addr, sessions).await?;
        client::close_sessions(server.addr, again).await?;
        settle().await;
        *rss = server.rss_kib()?;
    }
    Ok(ScaleRun {
        sessions,
        streams,
        sessions_per_second,
        streams_per_second,
        rss_start_kib,
        rss_sessions_kib,
        rss_streams_kib,
        rss_closed_kib,
        rss_reopened_kib,
        echo_sessions,
        echo_streams,
    })
}

impl ScaleRun {
    /// The run as a Markdown section.
    pub(super) fn markdown(&self) -> String {
        let kb = |kib: u64| kib as f64 * 1.024;
        let per = |from: u64, to: u64, count: usize| {
            to.saturating_sub(from) as f64 * 1024.0 / count.max(1) as f64 / 1000.0
        };
        let taken = self.rss_streams_kib.saturating_sub(self.rss_start_kib);
        let returned = self.rss_streams_kib.saturating_sub(self.rss_closed_kib);
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mut out = format!(
            "### One node's reach: {} idle sessions, then {} GET streams\n\n\
             | step | rate | RSS after (MB) | per item | echo p50 / p99 (ms) |\n\
             | --- | ---: | ---: | ---: | ---: |\n",
            self.sessions, self.streams
        );
        out.push_str(&format!(
            "| start (one session) | - | {:.1} | - | - |\n",
            kb(self.rss_start_kib) / 1000.0
        ));
        out.push_str(&format!(
            "| {} sessions open | {:.0} sessions/s | {:.1} | {:.2} kB per session | {:.2} / {:.2} ({} calls) |\n",
            self.sessions,
            self.sessions_per_second,
            kb(self.rss_sessions_kib) / 1000.0,
            per(self.rss_start_kib, self.rss_sessions_kib, self.sessions),
            ms(self.echo_sessions.0),
            ms(self.echo_sessions.1),
            self.echo_sessions.2,
        ));
        out.push_str(&format!(
            "| {} GET streams open | {:.0} streams/s | {:.1} | {:.2} kB per stream | {:.2} / {:.2} ({} calls) |\n",
            self.streams,
            self.streams_per_second,
            kb(self.rss_streams_kib) / 1000.0,
            per(self.rss_sessions_kib, self.rss_streams_kib, self.streams),
            ms(self.echo_streams.0),
            ms(self.echo_streams.1),
            self.echo_streams.2,
        ));
        out.push_str(&format!(
            "| all closed | - | {:.1} | {:.0} % of what the run took given back | - |\n",
            kb(self.rss_closed_kib) / 1000.0,
            if taken == 0 {
                100.0
            } else {
                returned as f64 * 100.0 / taken as f64
            },
        ));
        let mut before = self.rss_closed_kib;
        for (round, &rss) in self.rss_reopened_kib.iter().enumerate() {
            out.push_str(&format!(
                "| {} sessions opened and deleted again ({}) | - | {:.1} | {:+.2} kB per session | - |\n",
                self.sessions,
                round + 1,
                kb(rss) / 1000.0,
                (rss as f64 - before as f64) * 1024.0 / self.sessions.max(1) as f64 / 1000.0,
            ));
            before = rss;
        }
        out
    }
}
