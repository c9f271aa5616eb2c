//! The self-checking examples run to completion: each drives its own server with a scripted
//! client and exits 0 only when the behaviour it demonstrates held.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::process::Stdio;

use tokio::process::Command;

use common::{WAIT, within_for};

/// Runs an example and returns its stdout. The wait ends when the process exits; it is capped
/// at four [`WAIT`](common::WAIT)s (a whole process, from start to exit, is more than a step),
/// past which the child is killed (on drop).
async fn run(name: &str) -> String {
    let child = Command::new(common::pipe::example_binary(name))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = within_for(WAIT * 4, child.wait_with_output())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{name} failed ({}):\n{stdout}",
        output.status
    );
    stdout
}

#[tokio::test]
async fn progress_and_cancel_example_cancels_a_tool_mid_progress() {
    let out = run("progress_and_cancel").await;
    assert!(out.contains("progress 3/100 (\"count-1\")"), "{out}");
    assert!(out.contains("the tool observed its cancellation"), "{out}");
    assert!(out.trim_end().ends_with("ok"), "{out}");
}

#[tokio::test]
async fn nested_sampling_example_round_trips_through_the_client() {
    let out = run("nested_sampling").await;
    assert!(
        out.contains("tool result: demo-model says: A unit of computation with a mailbox."),
        "{out}"
    );
    assert!(out.trim_end().ends_with("ok"), "{out}");
}
