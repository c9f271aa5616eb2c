//! `examples/prompts_and_resources.rs`, `examples/completion.rs` and
//! `examples/sampling_and_elicitation.rs`: each runs in memory and prints what its client read.

use super::run;

#[tokio::test]
async fn prompts_and_resources_example_reads_what_it_serves() {
    let out = run("prompts_and_resources", &[]).await;
    assert!(out.contains("index: \"groceries\\ntodo\""), "{out}");
    assert!(out.contains("todo: \"write docs\""), "{out}");
    assert!(out.contains("resource not found: notes://nope"), "{out}");
    assert!(
        out.contains("prompt User: Review this note and suggest one improvement:\neggs, flour"),
        "{out}"
    );
}

#[tokio::test]
async fn completion_example_completes_each_argument_in_its_context() {
    let out = run("completion", &[]).await;
    assert!(
        out.contains("language \"e\": english, esperanto\n"),
        "{out}"
    );
    assert!(
        out.contains("dialect \"a\": american, australian\n"),
        "{out}"
    );
    assert!(out.contains("topic \"m\": mailboxes\n"), "{out}");
}

#[tokio::test]
async fn sampling_and_elicitation_example_asks_in_both_eras() {
    let out = run("sampling_and_elicitation", &[]).await;
    for era in ["2025-11-25", "2026-07-28"] {
        assert!(
            out.contains(&format!(
                "{era}: demo-model suggests: Plan 3 days in Lisbon. A walking tour."
            )),
            "{out}"
        );
    }
}
