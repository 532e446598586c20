//! The stdio transport ends, and ends its process group, whatever the server does:
//!
//! - a server that never reads stdin and floods stdout with pings, while the host keeps sending
//!   until every queue is full: `close` returns within its grace periods, nothing of the group is
//!   left, and memory stays bounded;
//! - a server whose main process exits while a child it started keeps stdout open: the exit ends
//!   the transport, with its status, and `close` ends the child;
//! - a `close` whose future is dropped still ends the group.
//!
//! This process makes itself a child subreaper (as a host running as PID 1 is), so that the
//! orphaned members of a server's group become its children and "gone" can mean reaped: see
//! `tests/tests/no_zombie.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_protocol::{Message, RequestId};
use mcp_transport::{CloseReason, StdioConfig, StdioTransport, Transport, TransportEvent};
use serde_json::json;
use test_support::process::{process_state, wait_until_gone};
use test_support::within;

fn become_subreaper() {
    nix::sys::prctl::set_child_subreaper(true).expect("PR_SET_CHILD_SUBREAPER");
}

fn sh(name: &str, script: &str) -> StdioConfig {
    let mut config = test_support::stdio::sh(name, script, &[]);
    config.close_grace = Duration::from_millis(500);
    config
}

/// Whether `/proc/<pid>` exists (a zombie counts: it was not reaped).
fn exists(pid: u32) -> bool {
    process_state(pid).is_some()
}

async fn wait_gone(pid: u32, what: &str) {
    wait_until_gone(pid, Duration::from_secs(10)).await.unwrap_or_else(|e| panic!("the {what}: {e}"));
}

/// The number after `key=` in the server's stderr, once it has printed it.
async fn printed(transport: &StdioTransport, key: &str) -> u32 {
    let prefix = format!("{key}=");
    loop {
        let found = transport.diagnostics_tail().iter().find_map(|l| l.strip_prefix(&prefix)?.trim().parse().ok());
        if let Some(pid) = found {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// This process's resident memory, in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

fn big(id: i64) -> Message {
    let params = json!({"payload": "y".repeat(64 * 1024)});
    Message::request(RequestId::Number(id), "test/big", Some(&params)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_a_flooding_server_that_never_reads_with_sends_stuck() {
    become_subreaper();
    within(async {
        // A helper in the background, then a flood of pings on stdout; stdin is never read.
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let script = format!("sleep 1000 & echo helper=$! >&2; exec yes '{ping}'");
        let config = sh("flood", &script);
        let grace = config.close_grace;
        let transport = Arc::new(StdioTransport::spawn(config).unwrap());
        let leader = transport.pid();
        let helper = printed(&transport, "helper").await;
        let before = rss();
        // The host reads some of the flood, then stops, as a busy session would.
        for _ in 0..1000 {
            match transport.recv().await {
                TransportEvent::Message(m) => assert_eq!(m.method(), Some("ping")),
                other => panic!("unexpected {other:?}"),
            }
        }
        // Senders keep sending until the pipe and the queue are full, and stay stuck.
        let accepted = Arc::new(AtomicUsize::new(0));
        let senders: Vec<_> = (0..4)
            .map(|task| {
                let (transport, accepted) = (transport.clone(), accepted.clone());
                tokio::spawn(async move {
                    for i in 0.. {
                        if transport.send(big(task * 1_000_000 + i)).await.is_err() {
                            return;
                        }
                        accepted.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        // Wait until the sends stop going through.
        let mut last = usize::MAX;
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let now = accepted.load(Ordering::SeqCst);
            if now == last {
                break;
            }
            last = now;
        }
        assert!(senders.iter().all(|s| !s.is_finished()), "the senders are stuck on the full queue");
        // The queue is bounded: the lines taken are what the queue (32 lines), the writer (one)
        // and the pipe hold (the first line longer than 64 KiB widened it to 1 MiB where Linux
        // allows: 16 of these lines).
        assert!(last <= 56, "{last} sends of 64 KiB were accepted by a child that reads nothing");
        tokio::time::sleep(Duration::from_secs(1)).await;
        let grown = rss().saturating_sub(before);
        assert!(grown < 64 * 1024 * 1024, "memory grew by {} MiB during the flood", grown >> 20);
        // Close returns within its grace periods (with a generous margin), however stuck.
        let bound = grace * 3 + Duration::from_secs(5);
        tokio::time::timeout(bound, transport.close()).await.expect("close did not finish in time");
        wait_gone(leader, "server").await;
        wait_gone(helper, "helper").await;
        // The stuck senders are released with an error.
        for s in senders {
            tokio::time::timeout(Duration::from_secs(10), s).await.expect("a sender is still stuck").unwrap();
        }
    })
    .await
}

#[tokio::test]
async fn main_process_exit_ends_the_transport_while_a_child_holds_stdout() {
    become_subreaper();
    within(async {
        let note = r#"{"jsonrpc":"2.0","method":"notifications/hello"}"#;
        let script = format!("sleep 1000 & echo helper=$! >&2; echo '{note}'; exit 7");
        let transport = StdioTransport::spawn(sh("wrapper", &script)).unwrap();
        let helper = printed(&transport, "helper").await;
        let TransportEvent::Message(m) = transport.recv().await else { panic!("expected the notification") };
        assert_eq!(m.method(), Some("notifications/hello"), "what was in the pipe is still read");
        // The helper keeps stdout open for 1000 s: only the exit can end the transport.
        let TransportEvent::Closed(reason) = transport.recv().await else { panic!("expected the end") };
        let CloseReason::Exited { status, stderr_tail } = &reason else { panic!("expected an exit, got {reason}") };
        assert_eq!(status.and_then(|s| s.code()), Some(7), "{reason}");
        assert!(stderr_tail.iter().any(|l| l.starts_with("helper=")), "{reason}");
        assert!(reason.to_string().contains("exit status: 7"), "{reason}");
        assert!(exists(helper), "the helper lives until the transport is closed");
        transport.close().await;
        wait_gone(helper, "helper").await;
    })
    .await
}

#[tokio::test]
async fn a_dropped_close_still_ends_the_group() {
    become_subreaper();
    within(async {
        // Ignores SIGTERM and never reads stdin: only SIGKILL, after two grace periods, ends it.
        let transport = StdioTransport::spawn(sh("stubborn", "trap '' TERM; echo ready >&2; exec sleep 1000")).unwrap();
        let leader = transport.pid();
        while transport.diagnostics_tail().is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Give up on the close at once: the sequence goes on by itself.
        assert!(tokio::time::timeout(Duration::from_millis(50), transport.close()).await.is_err());
        wait_gone(leader, "server").await;
        // A second close waits for the same sequence and returns once it is over.
        transport.close().await;
    })
    .await
}
