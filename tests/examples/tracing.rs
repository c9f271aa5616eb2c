//! `examples/tracing.rs`.

use super::run;

/// The trace id of the span printed as `` {kind} span `{name}` ``, and its attributes.
fn span<'a>(out: &'a str, kind: &str, name: &str) -> (&'a str, &'a str) {
    let head = format!("{kind} span `{name}` trace=");
    let line = out
        .lines()
        .find_map(|line| line.strip_prefix(&head))
        .unwrap_or_else(|| panic!("no {kind} span `{name}` in:\n{out}"));
    line.split_once(' ').unwrap_or((line, ""))
}

#[tokio::test]
async fn tracing_example_prints_the_mcp_spans_of_a_tool_call_in_one_trace() {
    let out = run("tracing", &[]).await;
    let (client_trace, client) = span(&out, "Client", "tools/call hello");
    let (server_trace, server) = span(&out, "Server", "tools/call hello");
    let (handler_trace, _) = span(&out, "Internal", "hello.handler");
    for attributes in [client, server] {
        assert!(attributes.contains("mcp.method.name=tools/call"), "{out}");
        assert!(attributes.contains("gen_ai.tool.name=hello"), "{out}");
        assert!(attributes.contains("jsonrpc.request.id="), "{out}");
    }
    assert_eq!(client_trace.len(), 32, "{out}");
    assert_eq!(
        server_trace, client_trace,
        "one trace, client to server: {out}"
    );
    assert_eq!(
        handler_trace, client_trace,
        "the handler's span joins it: {out}"
    );
    assert!(out.contains("hello answered \"hello\""), "{out}");
}
