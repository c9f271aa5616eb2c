//! The load benchmark's report: medians over interleaved rounds with their spread, ratios to
//! the bare handler, the targets, and the same table drawn as an SVG chart.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use plotters::prelude::*;

use super::client::Sample;
use super::{Result, ServerKind, Target, Workload};

/// Every round's sample of one target, in round order.
#[derive(Debug, Clone)]
pub(super) struct Series {
    pub(super) target: Target,
    pub(super) samples: Vec<Sample>,
}

/// A memory run: sessions opened, RSS before and after.
#[derive(Debug)]
pub(super) struct MemoryRun {
    pub(super) sessions: usize,
    pub(super) streams: usize,
    pub(super) rss_before_kib: u64,
    pub(super) rss_after_kib: u64,
}

impl MemoryRun {
    /// Kilobytes (1,000 bytes) of RSS per session (per connection, for the bare handler).
    pub(super) fn kb_per_session(&self) -> f64 {
        self.rss_after_kib.saturating_sub(self.rss_before_kib) as f64 * 1.024
            / self.sessions.max(self.streams).max(1) as f64
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn us(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// One row of the report.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub(super) target: Target,
    pub(super) rounds: usize,
    per_second: f64,
    p99_us: f64,
    cpu_median: f64,
    cpu_min: f64,
    cpu_max: f64,
    client_us: f64,
    /// Server CPU per unit in each round, in round order.
    per_round: Vec<f64>,
    /// Ratio of this row's median server CPU to the bare handler's, and the per-round ratios'
    /// range.
    pub(super) ratio: Option<(f64, f64, f64)>,
}

/// Reduces the rounds to medians and ratios.
pub(super) fn rows(series: &[Series]) -> Vec<Row> {
    let cpu = |s: &Series| -> Vec<f64> { s.samples.iter().map(|x| us(x.server_cpu)).collect() };
    series
        .iter()
        .map(|s| {
            let mut values = cpu(s);
            let cpu_median = median(&mut values);
            let bare = series
                .iter()
                .find(|b| b.target == s.target.reference() && b.target != s.target);
            let ratio = bare.map(|bare| {
                let mut reference = cpu(bare);
                let per_round: Vec<f64> = cpu(s)
                    .iter()
                    .zip(cpu(bare))
                    .map(|(ours, theirs)| ours / theirs.max(1e-9))
                    .collect();
                let low = per_round.iter().copied().fold(f64::INFINITY, f64::min);
                let high = per_round.iter().copied().fold(0.0, f64::max);
                (cpu_median / median(&mut reference).max(1e-9), low, high)
            });
            Row {
                target: s.target,
                rounds: s.samples.len(),
                per_second: median(&mut s.samples.iter().map(|x| x.per_second).collect::<Vec<_>>()),
                p99_us: median(&mut s.samples.iter().map(|x| us(x.p99)).collect::<Vec<_>>()),
                cpu_min: values.first().copied().unwrap_or(f64::NAN),
                cpu_max: values.last().copied().unwrap_or(f64::NAN),
                cpu_median,
                per_round: cpu(s),
                client_us: median(
                    &mut s
                        .samples
                        .iter()
                        .map(|x| us(x.client_cpu))
                        .collect::<Vec<_>>(),
                ),
                ratio,
            }
        })
        .collect()
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

/// The whole report, as Markdown.
pub(super) fn markdown(rows: &[Row], memory: &[MemoryRun], header: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n## actix-mcp load benchmark\n\n{header}\n");
    let _ = writeln!(
        out,
        "| workload | server | rounds | per s | p99 µs | server µs CPU per unit: median (min–max) | vs bare: ratio of medians (per-round range) | target |"
    );
    let _ = writeln!(
        out,
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for row in rows {
        let ratio = row.ratio.map_or_else(
            || "1.00×".to_owned(),
            |(r, low, high)| format!("**{r:.2}×** ({low:.2}–{high:.2})"),
        );
        let target = match (row.target.limit(), row.ratio) {
            (Some(limit), Some((r, _, _))) => format!("≤ {limit}×: {}", verdict(r <= limit)),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.0} | {:.0} | {:.2} ({:.2}–{:.2}) | {ratio} | {target} |",
            row.target.workload.label(),
            row.target.server.label(),
            row.rounds,
            row.per_second,
            row.p99_us,
            row.cpu_median,
            row.cpu_min,
            row.cpu_max,
        );
    }
    let _ = writeln!(
        out,
        "\nClient CPU per unit (the load generator, median): {}",
        rows.iter()
            .map(|r| format!(
                "{} {} {:.1} µs",
                r.target.workload.label(),
                r.target.server.label(),
                r.client_us
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let _ = write!(out, "{}", rmcp_lines(rows));
    if !memory.is_empty() {
        let _ = writeln!(out, "\nMemory (RSS of the server process, 1 worker):");
    }
    for run in memory {
        let per = run.kb_per_session();
        let (what, target) = match (run.sessions, run.streams) {
            (0, _) => ("bare actix-web SSE connection (the floor)", String::new()),
            (_, 0) => (
                "idle session",
                format!(
                    " (target ≤ {IDLE_SESSION_KB} kB: {})",
                    verdict(per <= IDLE_SESSION_KB)
                ),
            ),
            _ => (
                "session with its GET SSE stream open",
                stream_overhead(memory, per),
            ),
        };
        let _ = writeln!(
            out,
            "- {what}: {} sessions, {} streams held; RSS {:.1} MiB → {:.1} MiB: {per:.2} kB each{target}",
            run.sessions,
            run.streams,
            run.rss_before_kib as f64 / 1024.0,
            run.rss_after_kib as f64 / 1024.0,
        );
    }
    out
}

/// The most an idle session may cost, in kB of RSS.
const IDLE_SESSION_KB: f64 = 3.0;
/// The most a session's GET stream may cost over one plain SSE connection to the bare handler
/// plus the idle session, in kB of RSS.
const STREAM_OVER_FLOOR_KB: f64 = 1.5;
/// The least rmcp's CPU per call may be, as a multiple of ours, on the session SSE path.
const RMCP_OVER_OURS: f64 = 3.0;

/// What a session's GET stream costs over its floor (one plain SSE connection to the bare
/// handler, and the idle session), from the memory runs of the same run, against its target.
fn stream_overhead(memory: &[MemoryRun], per_stream: f64) -> String {
    let find = |sessions: bool, streams: bool| {
        memory
            .iter()
            .find(|r| (r.sessions > 0) == sessions && (r.streams > 0) == streams)
            .map(MemoryRun::kb_per_session)
    };
    match (find(true, false), find(false, true)) {
        (Some(idle), Some(connection)) => {
            let over = per_stream - idle - connection;
            format!(
                " ({over:.2} kB over the idle session and a plain SSE connection; target ≤ \
                 {STREAM_OVER_FLOOR_KB} kB: {})",
                verdict(over <= STREAM_OVER_FLOOR_KB)
            )
        }
        _ => String::new(),
    }
}

/// rmcp's CPU per unit as a multiple of ours, where both served the same workload with the
/// same framing, as ratios of medians with the per-round range.
fn rmcp_lines(rows: &[Row]) -> String {
    let mut out = String::new();
    let pairs = [
        (
            ServerKind::RmcpSse,
            ServerKind::Sse,
            Workload::Echo,
            Some(RMCP_OVER_OURS),
        ),
        (
            ServerKind::RmcpStateless,
            ServerKind::Stateless,
            Workload::Echo,
            None,
        ),
        (ServerKind::RmcpSse, ServerKind::Sse, Workload::Setup, None),
    ];
    for (theirs, ours, workload, goal) in pairs {
        let find = |server| {
            rows.iter()
                .find(|r| r.target == Target { server, workload })
        };
        let (Some(theirs_row), Some(ours_row)) = (find(theirs), find(ours)) else {
            continue;
        };
        let ratio = theirs_row.cpu_median / ours_row.cpu_median.max(1e-9);
        let per_round: Vec<f64> = theirs_row
            .per_round
            .iter()
            .zip(&ours_row.per_round)
            .map(|(t, o)| t / o.max(1e-9))
            .collect();
        let low = per_round.iter().copied().fold(f64::INFINITY, f64::min);
        let high = per_round.iter().copied().fold(0.0, f64::max);
        let goal = goal.map_or_else(String::new, |goal| {
            format!("; target ≥ {goal}×: {}", verdict(ratio >= goal))
        });
        if out.is_empty() {
            let _ = writeln!(out);
        }
        let _ = writeln!(
            out,
            "- {}, {}: rmcp uses **{ratio:.2}×** our server CPU per unit ({low:.2}–{high:.2}){goal}",
            workload.label(),
            theirs.label(),
        );
    }
    out
}

/// The most the Redis mode's nodes may spend per request (`echo`), relative to one node in memory.
const REDIS_CPU_LIMIT: f64 = 1.5;
/// The most record loads (`EVALSHA`s of the load script: store round trips) a request needing no other node may
/// cost.
const REDIS_LOAD_LIMIT: f64 = 1.0;
/// The fewest sessions per second the Redis mode must create (`initialize` and
/// `notifications/initialized`).
const REDIS_CREATE_RATE: f64 = 5_000.0;

/// The Redis mode against one `sse` node in memory, per workload where both ran: throughput,
/// the nodes' CPU and its ratio to the node in memory (with the per-round range), Redis's and
/// HAProxy's CPU, and Redis's commands per unit.
pub(super) fn redis_section(series: &[Series]) -> Option<String> {
    let mut out = String::new();
    let mut breakdowns = Vec::new();
    for (workload, mode) in [Workload::Echo, Workload::Setup, Workload::Create]
        .into_iter()
        .flat_map(|w| {
            [
                (w, ServerKind::Redis),
                (w, ServerKind::RedisLease),
                (w, ServerKind::RedisOnNode),
            ]
        })
    {
        let find = |server| {
            series
                .iter()
                .find(|s| s.target == Target { server, workload })
        };
        let (Some(redis), Some(memory)) = (find(mode), find(ServerKind::Sse)) else {
            continue;
        };
        let lease = match (mode.session_lease_ms(), mode.requests_on_node()) {
            (Some(ms), true) => format!("{ms} ms lease, requests' streams on node"),
            (Some(ms), false) => format!("{ms} ms lease"),
            (None, _) => "none".to_owned(),
        };
        if out.is_empty() {
            let _ = writeln!(
                out,
                "\n### Redis mode: {} vs one node in memory\n",
                ServerKind::Redis.label()
            );
            let _ = writeln!(
                out,
                "Nodes' CPU = the two nodes' threads summed; Redis and HAProxy are read the same \
                 way (schedstat), over the same window. Commands = Redis's `total_commands_processed` \
                 over the window (its `INFO` readings left out), per unit.\n"
            );
            let _ = writeln!(
                out,
                "| workload | node settings | per s: Redis mode (in memory) | nodes' µs CPU per unit: median (min–max) | in memory µs | nodes vs in memory: ratio of medians (per-round range) | Redis µs | HAProxy µs | all three vs in memory | Redis commands per unit | record loads (`EVALSHA`) per unit | goals |"
            );
            let _ = writeln!(
                out,
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
            );
        }
        let cpu = |s: &Series| -> Vec<f64> { s.samples.iter().map(|x| us(x.server_cpu)).collect() };
        let cluster = |f: &dyn Fn(&Sample, &super::client::ClusterSample) -> f64| -> Vec<f64> {
            redis
                .samples
                .iter()
                .filter_map(|x| x.cluster.as_ref().map(|c| f(x, c)))
                .collect()
        };
        let nodes = cpu(redis);
        let in_memory = cpu(memory);
        let nodes_median = median(&mut nodes.clone());
        let memory_median = median(&mut in_memory.clone());
        let per_round: Vec<f64> = nodes
            .iter()
            .zip(&in_memory)
            .map(|(nodes, memory)| nodes / memory.max(1e-9))
            .collect();
        let low = per_round.iter().copied().fold(f64::INFINITY, f64::min);
        let high = per_round.iter().copied().fold(0.0, f64::max);
        let ratio = nodes_median / memory_median.max(1e-9);
        let redis_us = median(&mut cluster(&|_, c| us(c.redis_cpu)));
        let haproxy_us = median(&mut cluster(&|_, c| us(c.haproxy_cpu)));
        let everything = median(&mut cluster(&|x, c| {
            us(x.server_cpu) + us(c.redis_cpu) + us(c.haproxy_cpu)
        })) / memory_median.max(1e-9);
        let per_unit = |x: &Sample, n: u64| n as f64 / x.units.max(1) as f64;
        let commands = median(&mut cluster(&|x, c| per_unit(x, c.commands.total)));
        let loads = median(&mut cluster(&|x, c| per_unit(x, c.commands.of("evalsha"))));
        // Redis's counters are read around the window, so the requests in flight at its two
        // edges (at most the concurrency at each) may count in the commands but not the units.
        let edge = median(&mut cluster(&|x, _| {
            2.0 * x.concurrency as f64 / x.units.max(1) as f64
        }));
        let rate = median(
            &mut redis
                .samples
                .iter()
                .map(|x| x.per_second)
                .collect::<Vec<_>>(),
        );
        let memory_rate = median(
            &mut memory
                .samples
                .iter()
                .map(|x| x.per_second)
                .collect::<Vec<_>>(),
        );
        // The CPU goal is per request (`echo`); a session's setup or creation is several
        // requests and store writes, reported for what it costs.
        let goals = match workload {
            Workload::Echo => vec![
                format!(
                    "CPU ≤ {REDIS_CPU_LIMIT}×: {}",
                    verdict(ratio <= REDIS_CPU_LIMIT)
                ),
                format!(
                    "loads ≤ {REDIS_LOAD_LIMIT} (edges ±{edge:.3}): {}",
                    verdict(loads <= REDIS_LOAD_LIMIT + edge)
                ),
            ],
            Workload::Setup => Vec::new(),
            Workload::Create => vec![format!(
                "≥ {REDIS_CREATE_RATE:.0} sessions/s: {}",
                verdict(rate >= REDIS_CREATE_RATE)
            )],
        };
        let _ = writeln!(
            out,
            "| {} | {lease} | {rate:.0} ({memory_rate:.0}) | {nodes_median:.2} ({:.2}–{:.2}) | {memory_median:.2} | **{ratio:.2}×** ({low:.2}–{high:.2}) | {redis_us:.2} | {haproxy_us:.2} | {everything:.2}× | {commands:.2} | {loads:.2} | {} |",
            workload.label(),
            nodes.iter().copied().fold(f64::INFINITY, f64::min),
            nodes.iter().copied().fold(0.0, f64::max),
            goals.join("; "),
        );
        // Every round's commands pooled, per unit, the most frequent first.
        let units: u64 = redis.samples.iter().map(|x| x.units).sum();
        let mut pooled = std::collections::BTreeMap::<&str, u64>::new();
        for sample in &redis.samples {
            if let Some(c) = &sample.cluster {
                for (name, calls) in &c.commands.calls {
                    *pooled.entry(name.as_str()).or_default() += calls;
                }
            }
        }
        let mut pooled: Vec<(&str, u64)> = pooled.into_iter().collect();
        pooled.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        breakdowns.push(format!(
            "- {}, node settings {lease}: {}",
            workload.label(),
            pooled
                .iter()
                .map(|(name, calls)| format!(
                    "{} {:.2}",
                    name.to_uppercase(),
                    *calls as f64 / units.max(1) as f64
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if out.is_empty() {
        return None;
    }
    let _ = writeln!(
        out,
        "\nRedis commands per unit, by command (all rounds pooled):\n\n{}",
        breakdowns.join("\n")
    );
    Some(out)
}

/// Draws the ratios to the bare handler (medians, with each row's per-round range as a
/// whisker and its target as a mark) as a horizontal bar chart in SVG.
pub(super) fn svg(rows: &[Row], path: &Path, caption: &str) -> Result<()> {
    let bars: Vec<&Row> = rows.iter().filter(|r| r.ratio.is_some()).collect();
    if bars.is_empty() {
        return Ok(());
    }
    let high = bars
        .iter()
        .filter_map(|r| r.ratio.map(|(_, _, high)| high))
        .fold(2.0_f64, f64::max)
        .ceil();
    let count = bars.len();
    let height = 90 + 44 * u32::try_from(count).unwrap_or(20);
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(300)
        .build_cartesian_2d(0.0..high, 0.0..count as f64)?;
    let label = |y: &f64| {
        let index = count.saturating_sub(1).saturating_sub(y.floor() as usize);
        bars.get(index).map_or_else(String::new, |r| {
            format!("{}: {}", r.target.workload.label(), r.target.server.label())
        })
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(count * 2 + 1)
        .y_label_formatter(&|y| {
            if (y.fract() - 0.5).abs() < 1e-6 {
                label(y)
            } else {
                String::new()
            }
        })
        .x_desc("server CPU per unit, relative to the bare actix-web handler (median of rounds)")
        .x_label_formatter(&|x| format!("{x:.1}×"))
        .draw()?;
    for (index, row) in bars.iter().enumerate() {
        let Some((ratio, low, high)) = row.ratio else {
            continue;
        };
        let y = (count - 1 - index) as f64;
        let color = if row.target.server.is_ours() {
            RGBColor(38, 110, 190)
        } else {
            RGBColor(150, 150, 150)
        };
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, y + 0.2), (ratio, y + 0.8)],
            color.filled(),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(low, y + 0.5), (high, y + 0.5)],
            BLACK.stroke_width(2),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("{ratio:.2}×"),
            (ratio + 0.03, y + 0.15),
            ("sans-serif", 13),
        )))?;
        if let Some(limit) = row.target.limit() {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(limit, y + 0.1), (limit, y + 0.9)],
                RED.stroke_width(2),
            )))?;
        }
    }
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(1.0, 0.0), (1.0, count as f64)],
        BLACK.stroke_width(1),
    )))?;
    root.present()?;
    Ok(())
}

impl Workload {
    /// What the workload is, for tables.
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Echo => "tools/call echo",
            Self::Setup => "session setup",
            Self::Create => "session creation",
        }
    }
}
