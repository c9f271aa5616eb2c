//! The self-checking examples run to completion: each drives its own server with a scripted
//! client and exits 0 only when the behaviour it demonstrates held.
#![allow(clippy::unwrap_used)]

mod common;

use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

/// Runs an example with a 20 s cap and returns its stdout. The wait ends when the process
/// exits; past the cap the child is killed (on drop).
async fn run(name: &str) -> String {
    let child = Command::new(common::pipe::example_binary(name))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{name} did not finish within 20 s"))
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
