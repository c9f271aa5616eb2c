//! The self-checking examples run to completion: each drives its own server with a scripted
//! client and exits 0 only when the behaviour it demonstrates held.
#![allow(clippy::unwrap_used)]

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

/// Runs an example with a 20 s cap and returns its stdout.
fn run(name: &str) -> String {
    let mut child = Command::new(common::pipe::example_binary(name))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let output = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            assert!(status.success(), "{name} failed ({status}):\n{stdout}");
            return stdout;
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("{name} did not finish within 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn progress_and_cancel_example_cancels_a_tool_mid_progress() {
    let out = run("progress_and_cancel");
    assert!(out.contains("progress 3/100 (\"count-1\")"), "{out}");
    assert!(out.contains("the tool observed its cancellation"), "{out}");
    assert!(out.trim_end().ends_with("ok"), "{out}");
}

#[test]
fn nested_sampling_example_round_trips_through_the_client() {
    let out = run("nested_sampling");
    assert!(
        out.contains("tool result: demo-model says: A unit of computation with a mailbox."),
        "{out}"
    );
    assert!(out.trim_end().ends_with("ok"), "{out}");
}
