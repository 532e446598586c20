//! `fake-mcp-server`: a scriptable MCP server for tests, speaking newline-delimited JSON-RPC on
//! stdin/stdout (legacy era). Without flags it is a well-behaved server; each flag scripts one
//! behaviour or fault.
//!
//! Tools (always callable): `echo {text}` returns `text`; `add {a, b}` returns the sum (also as
//! `structuredContent.sum`); `slow {ms}` answers after `ms` milliseconds; `huge` answers with one
//! line of `--huge-mib` MiB; `stats` returns what the server has seen as JSON text (`calls`,
//! `requests` by method, the `cancelled` request ids); `fail` is always a tool error. An unknown
//! tool is a JSON-RPC error -32602.
//!
//! Flags:
//!
//! | flag | behaviour |
//! |---|---|
//! | `--tools N` | list N generated tools (`tool-0000` ...) instead of the built-in ones |
//! | `--page-size P` | P items per page of every `*/list`, chained with `nextCursor` (`page-K`) |
//! | `--repeat-cursor` | the second page repeats the first page's `nextCursor` |
//! | `--banner` | print a banner and junk lines (plain text, `{"level":"info",...}`, `[1, 2, 3]`, `{"jsonrpc":"2.0"}`) on stdout at start, and a junk line before every message |
//! | `--crash-after K` | on tools/call number K+1, write a last stderr line and `exit(3)` without answering |
//! | `--hang` | never answer tools/call (other requests still are) |
//! | `--slow-ms MS` | answer tools/call MS milliseconds late (other requests are answered meanwhile) |
//! | `--huge-mib N` | the `huge` tool answers with a single line of N MiB (default 1) |
//! | `--wrong-id` | answer tools/call with an id that was never sent (numbers: id + 1000000) |
//! | `--duplicate-id` | answer tools/call twice |
//! | `--progress` | send `notifications/progress` (at least three, and one per 100 ms of delay) before answering a tools/call that carries a `progressToken` |
//! | `--log` | declare `logging`, answer `logging/setLevel`, send `notifications/message` before answering each tools/call |
//! | `--list-changed` | declare `tools.listChanged`; after the first tools/call's answer, add the tool `late-tool` to the list and send `notifications/tools/list_changed` |
//! | `--start-delay-ms MS` | sleep MS milliseconds before reading stdin (a slow start) |
//! | `--duplicate-tool` | list the first tool twice |
//! | `--ask-roots` | once initialized, ask the client `roots/list` |
//! | `--ask-sampling` | once initialized, ask the client `sampling/createMessage` |
//! | `--ask-unknown` | once initialized, ask the client `foo/bar` |
//! | `--stderr-lines N` | write N lines `fake-mcp-server: stderr line 000` ... to stderr at start |
//! | `--grandchild` | start `sleep 1000` and never wait for it; print `server-pid=NNN` and `grandchild-pid=NNN` to stderr |
//! | `--fail-initialize` | answer initialize with a JSON-RPC error |
//! | `--protocol VERSION` | answer initialize with VERSION whatever the client offered (otherwise: the client's version if it is a legacy one, else 2025-11-25) |
//! | `--prompts` | offer prompts (`greet {name}`, `static`) |
//! | `--resources` | offer resources (`fake://readme`, `fake://notes`) and a template (`fake://items/{id}`) |
//! | `--no-method-prompts` | declare prompts, but answer `prompts/list` with -32601 |
//! | `--chaos NAME` | list the tool NAME, whose arguments script how that call misbehaves (floods, junk, slow, stall, hang, crash, ...; see `tests::fake` `chaos.rs`) |
//! | `--list-ttl-ms MS` | every `*/list` result carries `ttlMs: MS` |
//! | `--hang-list-after N` | answer the first N `*/list` requests (pages), never one after |
//! | `--stall-stdin-ms MS` | once initialized, read nothing from stdin for MS milliseconds (a slow reader: the pipe fills up) |
//!
//! The client's answers to `--ask-*` requests are reported as extra text blocks,
//! `client answered <method> => <result or error>`, in the result of the next tools/call, which
//! waits for all of them. An unknown flag exits with status 2.

fn main() {
    match tests::fake::Config::parse(std::env::args().skip(1)) {
        Ok(config) => tests::fake::run(config),
        Err(e) => {
            eprintln!("fake-mcp-server: {e}");
            std::process::exit(2);
        }
    }
}
