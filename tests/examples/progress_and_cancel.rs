//! `examples/progress_and_cancel.rs`.

use super::run;

#[tokio::test]
async fn progress_and_cancel_example_cancels_a_tool_mid_progress_in_both_eras() {
    let out = run("progress_and_cancel", &[]).await;
    for era in ["== 2025-11-25", "== 2026-07-28"] {
        let (_, after) = out
            .split_once(era)
            .unwrap_or_else(|| panic!("no {era}:\n{out}"));
        let run = after.split("== ").next().unwrap();
        assert!(run.contains("progress 3/100: counting"), "{out}");
        assert!(run.contains("the tool observed its cancellation"), "{out}");
        assert!(run.contains("the session goes on: ping answered"), "{out}");
    }
}
