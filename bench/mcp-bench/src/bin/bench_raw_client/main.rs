//! `bench-raw-client`: a hand-written client with no MCP library, the reference row of
//! `cargo xtask bench`. It shows the server's ceiling: what a client that does next to nothing
//! (pre-formatted request lines, replies checked by substring, no JSON decoding) gets from the
//! same server, so that "within 1.05x of the hand-written client" can be measured.
//!
//! ```text
//! bench-raw-client <w1|w2|w3|w4> legacy <server command | http://url> [server flag...]
//! ```
//!
//! It speaks the legacy era only (`initialize` at 2025-11-25), over stdio ([`stdio`]) or
//! streamable HTTP ([`http`]), on a current-thread Tokio runtime like every bench client, and
//! prints the keys the other clients print. Every request is formatted before the clock starts
//! (W3's cursors excepted: they come from the replies); every reply is checked: its id, and the
//! echoed text (W1, W2), the tool count and the cursor (W3), or the 8 MiB of `x` (W4: found
//! inside the clock by a vector search for the quote that ends it, and checked after it, as the
//! other clients check the text they are handed).
//!
//! - W2 over stdio pipelines: 32 requests written, then one more for each reply read. Over HTTP
//!   it keeps 32 keep-alive connections busy, one request at a time each.
//! - W3 counts the tools of a page by their `"inputSchema"` keys.

mod http;
mod stdio;

use std::process::exit;

use mcp_bench::Failure;
use mcp_bench::cli::{Invocation, Target};
use mcp_bench::measure::{Stopwatch, record_latencies, run_and_report};
use mcp_bench::workloads::{W1_CALLS, WARM_UP_CALLS, echo_text};
use mcp_manager::connection::EraPreference;
use mcp_protocol::types::meta::JsonObject;
use memchr::memmem;
use serde_json::json;

/// The revision the client asks for.
const VERSION: &str = "2025-11-25";
const W3_TOOLS: usize = 10_002;
const W4_BYTES: usize = 8 * 1024 * 1024;
/// The id of the first measured call (warm-up calls count up from 1).
const FIRST_ID: usize = 1000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = Invocation::parse(&args).and_then(|run| match (run.workload, run.era) {
        ("w5", _) => Err("w5 is not a hand-written workload".into()),
        (_, EraPreference::Legacy) => Ok(run),
        _ => Err("the hand-written client speaks the legacy era only".into()),
    });
    let run = run.unwrap_or_else(|e| {
        eprintln!("bench-raw-client: {e}\nusage: bench-raw-client <w1..w4> legacy <server command | url> [flag...]");
        exit(2);
    });
    run_and_report("bench-raw-client", "raw", run.workload, &run.era_name, work(&run));
}

async fn work(run: &Invocation) -> Result<JsonObject, Failure> {
    let mut report = match &run.target {
        Target::Stdio { command, args } => stdio::run(run.workload, command, args).await?,
        Target::Http(url) => http::run(run.workload, url).await?,
    };
    report.insert("protocol_version".into(), json!(VERSION));
    Ok(report)
}

/// The `initialize` request, id 0.
fn initialize_body() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{VERSION}","capabilities":{{}},"clientInfo":{{"name":"raw","version":"1"}}}}}}"#
    )
}

/// The `notifications/initialized` notification.
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A `tools/call` of `tool` with id `id` and the `text` argument (plain ASCII, no escaping).
fn call_body(id: usize, tool: &str, text: Option<&str>) -> String {
    match text {
        Some(text) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"text":"{text}"}}}}}}"#
        ),
        None => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}"}}}}"#),
    }
}

/// A `tools/list` request with id `id`, after `cursor` if any.
fn list_body(id: usize, cursor: Option<&str>) -> String {
    match cursor {
        Some(c) => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"cursor":"{c}"}}}}"#),
        None => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
    }
}

/// One echo call: its id, its request (a body, framed by the transport) and the fragment its
/// reply must hold.
struct EchoCall {
    id: usize,
    body: String,
    expect: String,
}

/// Echo calls numbered `range`, with ids offset by `first_id`.
fn echo_calls(range: std::ops::Range<usize>, first_id: usize) -> Vec<EchoCall> {
    range
        .map(|i| {
            let text = echo_text(i);
            EchoCall {
                id: first_id + i,
                body: call_body(first_id + i, "echo", Some(&text)),
                expect: format!(r#""text":"{text}""#),
            }
        })
        .collect()
}

/// The warm-up calls (ids 1..), then the measured ones (ids from [`FIRST_ID`]).
fn warm_up_and_measured(measured: usize) -> (Vec<EchoCall>, Vec<EchoCall>) {
    (echo_calls(0..WARM_UP_CALLS, 1), echo_calls(0..measured, FIRST_ID))
}

/// The id of a response: the number after its first `"id":`.
fn reply_id(reply: &[u8]) -> Option<usize> {
    let at = memmem::find(reply, br#""id":"#)? + 5;
    let digits = reply[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&reply[at..at + digits]).ok()?.parse().ok()
}

/// Check an echo reply: its id, a result, and the text.
fn check_echo(reply: &[u8], call: &EchoCall) -> Result<(), Failure> {
    let ok = reply_id(reply) == Some(call.id)
        && memmem::find(reply, br#""result":"#).is_some()
        && memmem::find(reply, call.expect.as_bytes()).is_some();
    if ok { Ok(()) } else { Err(format!("call {} got {}", call.id, excerpt(reply))) }
}

/// The start of a reply, for an error.
fn excerpt(reply: &[u8]) -> String {
    String::from_utf8_lossy(&reply[..reply.len().min(300)]).into_owned()
}

/// The tools of a `tools/list` page (one `"inputSchema"` each) and its next cursor.
fn page_tools(reply: &[u8]) -> Result<(usize, Option<String>), Failure> {
    if memmem::find(reply, br#""result":"#).is_none() {
        return Err(format!("tools/list got {}", excerpt(reply)));
    }
    let tools = memmem::find_iter(reply, br#""inputSchema""#).count();
    let cursor = memmem::find(reply, br#""nextCursor":""#).map(|at| {
        let rest = &reply[at + 14..];
        let end = rest.iter().position(|&b| b == b'"').unwrap_or(rest.len());
        String::from_utf8_lossy(&rest[..end]).into_owned()
    });
    Ok((tools, cursor))
}

/// W4's text in its reply, as a client that matches substrings finds it (what it does before it
/// can hand the text on, inside the clock): after the first `"text":"`, up to the next quote,
/// each found by a vector search.
fn big_text(reply: &[u8]) -> Result<&[u8], Failure> {
    let start = memmem::find(reply, br#""text":""#).ok_or_else(|| format!("big got {}", excerpt(reply)))? + 8;
    let len = memchr::memchr(b'"', &reply[start..]).ok_or_else(|| format!("big got {}", excerpt(reply)))?;
    Ok(&reply[start..start + len])
}

/// Check W4's text (after the clock, as the other clients check theirs): [`W4_BYTES`] `x`; its
/// length.
fn check_big(text: &[u8]) -> Result<usize, Failure> {
    let xs = text.iter().take_while(|&&b| b == b'x').count();
    if xs != W4_BYTES || text.len() != W4_BYTES {
        return Err(format!(
            "big answered {} bytes ({xs} of them x before another byte), expected {W4_BYTES} x",
            text.len()
        ));
    }
    Ok(xs)
}

/// A W1 report from the stopwatch and the latencies.
fn w1_report(watch: &Stopwatch, mut latencies: Vec<std::time::Duration>) -> JsonObject {
    let mut report = JsonObject::new();
    let total = watch.record(&mut report);
    report.insert("calls_per_s".into(), json!(W1_CALLS as f64 / total.as_secs_f64()));
    record_latencies(&mut report, &mut latencies);
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_replies_are_checked_by_id_result_and_text() {
        let (_, calls) = warm_up_and_measured(3);
        let call = &calls[2];
        let text = echo_text(2);
        let ours = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#,
            call.id
        );
        check_echo(ours.as_bytes(), call).unwrap();
        let rmcp = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}}}"#,
            call.id
        );
        check_echo(rmcp.as_bytes(), call).unwrap();
        let wrong_id = ours.replace(&format!("\"id\":{}", call.id), "\"id\":7");
        assert!(check_echo(wrong_id.as_bytes(), call).is_err());
        let wrong_text = ours.replace("lazy dog", "lazy cat");
        assert!(check_echo(wrong_text.as_bytes(), call).is_err());
        let error = format!(r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"{text}"}}}}"#, call.id);
        assert!(check_echo(error.as_bytes(), call).unwrap_err().contains("-32602"));
    }

    #[test]
    fn pages_give_their_tool_count_and_cursor() {
        let page = br#"{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":"b","inputSchema":{"properties":{}}}],"nextCursor":"page-2"}}"#;
        assert_eq!(page_tools(page).unwrap(), (2, Some("page-2".into())));
        let last = br#"{"jsonrpc":"2.0","id":5,"result":{"tools":[]}}"#;
        assert_eq!(page_tools(last).unwrap(), (0, None));
        assert!(page_tools(br#"{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"no"}}"#).is_err());
        assert_eq!(reply_id(br#"{"jsonrpc":"2.0","id":1234,"result":{}}"#), Some(1234));
        assert_eq!(reply_id(br#"{"jsonrpc":"2.0","result":{}}"#), None);
    }

    #[test]
    fn the_big_text_must_be_all_there() {
        let x = "x".repeat(W4_BYTES);
        let reply = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{x}"}}]}}}}"#);
        let checked = |reply: &str| big_text(reply.as_bytes()).and_then(check_big);
        assert_eq!(checked(&reply).unwrap(), W4_BYTES);
        let short = reply.replacen("xx", "x", 1);
        assert!(checked(&short).unwrap_err().contains("expected"));
        let mixed = reply.replacen("xx", "xy", 1);
        assert!(checked(&mixed).is_err());
        let long = reply.replacen("xx", "xxx", 1);
        assert!(checked(&long).is_err());
        assert!(checked(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#).unwrap_err().starts_with("big got"));
    }

    #[test]
    fn requests_are_the_json_they_claim_to_be() {
        for body in [
            initialize_body(),
            call_body(3, "echo", Some(&echo_text(3))),
            call_body(4, "big", None),
            list_body(5, Some("page-1")),
        ] {
            let value: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(value["jsonrpc"], "2.0", "{body}");
        }
        let _: serde_json::Value = serde_json::from_str(INITIALIZED).unwrap();
    }
}
