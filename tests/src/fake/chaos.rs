//! `--chaos NAME`: the tool NAME, whose arguments script how this one call misbehaves. The chaos
//! soak test (`tests/tests/chaos.rs`) draws those arguments from a seeded generator, so the
//! server itself holds no randomness and a seed replays the same plan.
//!
//! Arguments (all optional but `token`):
//!
//! - `token` (string): the text of the result, so that the caller can check that it got the
//!   answer to its own call.
//! - floods, sent before anything else, in this order: `logs` (`notifications/message`),
//!   `progress` (`notifications/progress` for tokens no one holds), `list_changed`
//!   (`notifications/tools/list_changed`), `pings` (`ping` requests to the client), `asks`
//!   (`roots/list` requests that all reuse one id), `junk` (lines that are not valid JSON-RPC, or
//!   answers to ids the client never sent).
//! - `wrong_id` (bool): first answer with an id the client never sent, then with the right one.
//! - `duplicate` (bool): answer twice.
//! - `act` (string), what the call then does:
//!   - `ok`: answer at once; `tool_error`: answer with `isError`; `rpc_error`: a JSON-RPC error;
//!   - `slow`: answer after `ms` milliseconds (other requests are served meanwhile);
//!   - `stall`: stop reading stdin for `ms` milliseconds, then answer;
//!   - `hang`: never answer;
//!   - `hang_progress`: never answer, but send `notifications/progress` with the call's own
//!     request id as token every 100 ms for `ms` milliseconds (a progress token never given);
//!   - `crash`: `exit(3)` without answering;
//!   - `orphan`: start `sleep 1000`, which inherits stdin, stdout and stderr, then `exit(3)`: the
//!     server is gone but its stdout stays open;
//!   - `freeze`: never read stdin again (after the floods: with `pings`, the client's replies
//!     fill the pipe).
//! - `pad` (string): ignored; makes the request line long.

use std::process::exit;
use std::thread;
use std::time::Duration;

use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::logging::{LoggingLevel, LoggingMessageParams};
use mcp_protocol::types::meta::{JsonObject, ProgressToken};
use mcp_protocol::types::progress::ProgressParams;
use mcp_protocol::types::tools::{CallToolParams, CallToolResult, Tool};
use mcp_protocol::{ErrorCode, ErrorObject, Message, Request, RequestId};
use serde_json::{Value, json};

use super::out::Out;

/// Lines that are not valid JSON-RPC, or answers to requests the client never sent.
const JUNK: &[&str] = &[
    "this is not JSON at all",
    "{",
    r#"{"jsonrpc":"2.0","id":"#,
    r#"{"jsonrpc":"2.0","method":5}"#,
    r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"junk error without an id"}}"#,
    r#"{"jsonrpc":"2.0","result":{}}"#,
    "[]",
    r#"[{"jsonrpc":"2.0"},17,"x"]"#,
    r#"{"jsonrpc":"2.0","id":987654321,"result":{"content":[]}}"#,
    r#"{"jsonrpc":"2.0","id":"never-sent","result":{}}"#,
    r#"{"jsonrpc":"2.0","id":-5,"error":{"code":1,"message":"negative id"}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":[1],"progress":"x"}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"nonsense"}}"#,
    r#"{"jsonrpc":"2.0","id":1e400,"result":{}}"#,
    "\u{1b}[2J\u{1b}]52;c;aGVsbG8=\u{7}",
];

/// The listing of the chaos tool, called `name` (servers of one host need distinct names).
pub(crate) fn tool(name: &str) -> Tool {
    let schema = json!({"type": "object", "properties": {"token": {"type": "string"}}, "required": ["token"]});
    let Value::Object(input_schema) = schema else { unreachable!("an object") };
    Tool {
        name: name.into(),
        description: Some("Misbehaves as its arguments say (see the fake server's docs)".into()),
        input_schema: input_schema.into(),
        ..Default::default()
    }
}

fn number(args: &JsonObject, key: &str) -> u64 {
    args.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn flag(args: &JsonObject, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Run one `chaos` call (from the main loop, which `stall` and `freeze` hold up).
pub(crate) fn call(out: Out, id: RequestId, params: &CallToolParams) {
    let empty = JsonObject::new();
    let args = params.arguments.as_ref().unwrap_or(&empty);
    let token = args.get("token").and_then(Value::as_str).unwrap_or_default().to_owned();
    flood(out, args, &token);
    let ms = Duration::from_millis(number(args, "ms"));
    let answer = Answer { id: id.clone(), token, wrong_id: flag(args, "wrong_id"), duplicate: flag(args, "duplicate") };
    match args.get("act").and_then(Value::as_str).unwrap_or("ok") {
        "slow" => {
            thread::spawn(move || {
                thread::sleep(ms);
                answer.send(out, false);
            });
        }
        "stall" => {
            thread::sleep(ms);
            answer.send(out, false);
        }
        "hang" => {}
        "hang_progress" => {
            thread::spawn(move || progress_for(out, id, ms));
        }
        "crash" => {
            eprintln!("fake-mcp-server: chaos crash");
            exit(3);
        }
        "orphan" => {
            // The child inherits stdin, stdout and stderr: the pipes outlive this process.
            let child = std::process::Command::new("sleep").arg("1000").spawn();
            eprintln!("fake-mcp-server: chaos orphan {:?}; exiting", child.map(|c| c.id()));
            exit(3);
        }
        "freeze" => loop {
            thread::sleep(Duration::from_secs(1000));
        },
        "tool_error" => answer.send(out, true),
        "rpc_error" => {
            out.send(&Message::error_response(Some(id), ErrorObject::new(ErrorCode::INTERNAL_ERROR, "chaos error")))
        }
        _ => answer.send(out, false),
    }
}

struct Answer {
    id: RequestId,
    token: String,
    wrong_id: bool,
    duplicate: bool,
}

impl Answer {
    fn send(self, out: Out, is_error: bool) {
        let result = CallToolResult {
            content: vec![ContentBlock::text(self.token)],
            is_error: is_error.then_some(true),
            ..Default::default()
        };
        if self.wrong_id {
            let wrong = match &self.id {
                RequestId::Number(n) => RequestId::Number(n.saturating_add(1_000_000_000)),
                RequestId::String(s) => RequestId::String(format!("wrong-{s}")),
            };
            out.send(&Message::response(wrong, &result).expect("encodes"));
        }
        let message = Message::response(self.id, &result).expect("encodes");
        out.send(&message);
        if self.duplicate {
            out.send(&message);
        }
    }
}

/// The floods a call asks for, in order.
fn flood(out: Out, args: &JsonObject, token: &str) {
    for i in 0..number(args, "logs") {
        let log = LoggingMessageParams {
            level: LoggingLevel::Info,
            logger: Some("chaos".into()),
            data: json!({"token": token, "n": i}),
            meta: None,
            extra: JsonObject::new(),
        };
        out.send(&Message::notification("notifications/message", Some(&log)).expect("encodes"));
    }
    for i in 0..number(args, "progress") {
        let token = ProgressToken::String(format!("nobody-{token}-{i}"));
        let p = ProgressParams::new(token, i as f64);
        out.send(&Message::notification("notifications/progress", Some(&p)).expect("encodes"));
    }
    for _ in 0..number(args, "list_changed") {
        out.send(&Message::notification("notifications/tools/list_changed", None::<&Value>).expect("encodes"));
    }
    for i in 0..number(args, "pings") {
        let id = RequestId::String(format!("ping-{token}-{i}"));
        out.send(&Message::Request(Request { id, method: "ping".into(), params: None }));
    }
    for _ in 0..number(args, "asks") {
        let id = RequestId::String(format!("ask-{token}"));
        out.send(&Message::Request(Request { id, method: "roots/list".into(), params: None }));
    }
    for i in 0..number(args, "junk") {
        let line = JUNK[(i as usize + token.len()) % JUNK.len()];
        out.write(|w| writeln!(w, "{line}"));
    }
}

/// `hang_progress`: progress for the call's own request id, which it never asked for.
fn progress_for(out: Out, id: RequestId, total: Duration) {
    let token: ProgressToken = id;
    let started = std::time::Instant::now();
    let mut i = 0u32;
    while started.elapsed() < total {
        i += 1;
        let p = ProgressParams::new(token.clone(), f64::from(i));
        out.send(&Message::notification("notifications/progress", Some(&p)).expect("encodes"));
        thread::sleep(Duration::from_millis(100));
    }
}
