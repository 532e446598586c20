//! The stdio transport's `send` against children that read slowly or exit at once.
//!
//! - A send that times out (or whose future is dropped) while the pipe is full writes nothing of
//!   its message, every send that returned `Ok` is written whole, and no line is glued to another.
//! - A server that exits at once has its exit status and stderr tail in the error, every time,
//!   whether the error comes from `send` or from `recv`.
//! - A send with nothing ahead of it writes its line itself, with no other task running; one the
//!   pipe does not take whole is finished by the writer before the lines sent after it.
//! - `send_now` never waits: it declines once the pipe and the queue are full, and what it took
//!   is written whole and in order.
//!
//! Every test runs under a hang guard; every child is ended by `close`.

use std::collections::BTreeSet;
use std::time::Duration;

use futures::FutureExt;
use mcp_protocol::{Message, RequestId};
use mcp_transport::{CloseReason, StdioTransport, Transport, TransportError, TransportEvent};
use serde_json::json;
use test_support::stdio::{sh, slow_reader};
use test_support::within;

/// A request with a `payload` of `bytes` bytes.
fn request(id: i64, bytes: usize) -> Message {
    let params = json!({"payload": "x".repeat(bytes)});
    Message::request(RequestId::Number(id), "test/big", Some(&params)).unwrap()
}

/// A file name under the temporary directory, unique to this process and `tag`.
fn scratch(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("mcp-stdio-send-{}-{tag}", std::process::id()))
}

#[tokio::test]
async fn timed_out_sends_write_nothing_and_accepted_sends_are_written_whole() {
    let out = scratch("lines");
    within(async {
        // The child reads nothing for a second (the pipe fills up), then copies stdin to a file.
        let transport = StdioTransport::spawn(slow_reader(&out, Duration::from_secs(1))).unwrap();
        let mut accepted = BTreeSet::new();
        let mut refused = BTreeSet::new();
        for id in 0..48 {
            match tokio::time::timeout(Duration::from_millis(100), transport.send(request(id, 256 * 1024))).await {
                Ok(Ok(())) => {
                    accepted.insert(id);
                }
                Ok(Err(e)) => panic!("send {id} failed: {e}"),
                Err(_) => {
                    refused.insert(id);
                }
            }
        }
        // A dropped send (polled once, then abandoned) is the same as a timed-out one.
        {
            let mut dropped = transport.send(request(1000, 256 * 1024));
            if futures::poll!(&mut dropped).is_ready() {
                accepted.insert(1000);
            } else {
                refused.insert(1000);
            }
        }
        // A normal request after all that still goes out, whole.
        transport.send(request(2000, 10)).await.unwrap();
        accepted.insert(2000);
        assert!(!refused.is_empty(), "the pipe never filled up: the test proves nothing");
        // Let the child copy everything, then end it.
        let expected_bytes: usize = accepted.iter().map(|&id| encoded_len(id)).sum();
        while std::fs::metadata(&out).map(|m| m.len() as usize).unwrap_or(0) < expected_bytes {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        transport.close().await;
        let written = std::fs::read(&out).unwrap();
        let mut seen = BTreeSet::new();
        for (n, line) in written.split(|&b| b == b'\n').filter(|l| !l.is_empty()).enumerate() {
            let value: serde_json::Value = serde_json::from_slice(line)
                .unwrap_or_else(|e| panic!("line {n} ({} bytes) is not whole JSON: {e}", line.len()));
            seen.insert(value["id"].as_i64().unwrap());
        }
        assert_eq!(seen, accepted, "the child got exactly the accepted sends (refused: {refused:?})");
    })
    .await;
    let _ = std::fs::remove_file(&out);
}

fn encoded_len(id: i64) -> usize {
    let bytes = if id == 2000 { 10 } else { 256 * 1024 };
    mcp_protocol::codec::encode_line(&request(id, bytes)).len()
}

#[tokio::test]
async fn a_server_that_exits_at_once_reports_its_stderr_every_time() {
    within(async {
        for run in 0..30 {
            let script = "echo first-line >&2; echo cannot-start-here >&2; exit 3";
            let transport = StdioTransport::spawn(sh("failing", script, &[])).unwrap();
            // Sending after the exit hits a broken pipe, sending before it does not: both ways
            // the error must carry the tail.
            if run % 2 == 1 {
                while transport.diagnostics_tail().len() < 2 {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let mut errors = Vec::new();
            for id in 0..3 {
                match transport.send(request(id, 10)).await {
                    Ok(()) => {}
                    Err(e) => errors.push(e.to_string()),
                }
            }
            let reason = match transport.recv().await {
                TransportEvent::Closed(reason) => reason,
                other => panic!("run {run}: unexpected {other:?}"),
            };
            let CloseReason::Exited { status, stderr_tail } = &reason else {
                panic!("run {run}: expected an exit, got {reason}");
            };
            assert_eq!(status.and_then(|s| s.code()), Some(3), "run {run}: {reason}");
            assert_eq!(stderr_tail, &["first-line", "cannot-start-here"], "run {run}: {reason}");
            // Sending after the end fails with the same reason.
            errors.push(transport.send(request(9, 10)).await.unwrap_err().to_string());
            for e in &errors {
                assert!(e.contains("exit status: 3") && e.contains("cannot-start-here"), "run {run}: {e}");
            }
            transport.close().await;
        }
    })
    .await
}

#[tokio::test]
async fn send_after_close_fails_at_once() {
    within(async {
        let transport = StdioTransport::spawn(sh("closed", "exec cat", &[])).unwrap();
        transport.send(request(1, 10)).await.unwrap();
        transport.close().await;
        let err = transport.send(request(2, 10)).await.unwrap_err();
        assert!(matches!(err, TransportError::Closed(CloseReason::Closed)), "{err}");
    })
    .await
}

#[tokio::test]
async fn the_stderr_sink_gets_each_line_as_it_comes_a_long_one_cut() {
    within(async {
        // Two lines, then a pause the server cannot leave before the test has seen them: the
        // sink is called while the server runs, not after it ends.
        let script = "{ printf 'one\\n\\033[2Jtwo\\n'; printf '%05000d\\n' 0; } >&2; read line; echo late >&2";
        let mut config = sh("noisy", script, &[]);
        config.stderr_bytes = 100;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        config.stderr_sink = Some(std::sync::Arc::new(move |line: &str| {
            let _ = tx.send(line.to_owned());
        }));
        assert!(format!("{config:?}").contains("stderr_sink: true"));
        let transport = StdioTransport::spawn(config).unwrap();
        assert_eq!(rx.recv().await.as_deref(), Some("one"));
        // Lines are passed on as the server wrote them; the host sanitizes what it shows.
        assert_eq!(rx.recv().await.as_deref(), Some("\u{1b}[2Jtwo"));
        let long = rx.recv().await.unwrap();
        assert!(long.starts_with("0000") && long.len() < 4200 && long.ends_with(" bytes)"), "{long}");
        transport.send(request(1, 1)).await.unwrap();
        assert_eq!(rx.recv().await.as_deref(), Some("late"));
        transport.close().await;
    })
    .await;
}

/// The size of request `id` in [`queued_lines_go_out_whole_and_in_order`]: small ones that the
/// writer gathers into one write, and now and then one longer than a whole gathered write.
fn mixed_size(id: i64) -> usize {
    match id % 7 {
        3 => 70 * 1024,
        5 => 9 * 1024,
        _ => 40 + id as usize,
    }
}

#[tokio::test]
async fn queued_lines_go_out_whole_and_in_order() {
    let out = scratch("order");
    within(async {
        // The child reads nothing at first: sends queue up behind a full pipe, and the writer
        // takes them in bursts.
        let transport = StdioTransport::spawn(slow_reader(&out, Duration::from_millis(300))).unwrap();
        let ids: Vec<i64> = (0..300).collect();
        for &id in &ids {
            transport.send(request(id, mixed_size(id))).await.unwrap();
        }
        let expected: usize =
            ids.iter().map(|&id| mcp_protocol::codec::encode_line(&request(id, mixed_size(id))).len()).sum();
        let got: Vec<i64> = written_lines(&transport, &out, expected)
            .await
            .iter()
            .enumerate()
            .map(|(n, value)| {
                assert_eq!(value["params"]["payload"].as_str().map(str::len), Some(mixed_size(n as i64)), "line {n}");
                value["id"].as_i64().unwrap()
            })
            .collect();
        assert_eq!(got, ids, "every line once, in the order sent");
    })
    .await;
    let _ = std::fs::remove_file(&out);
}

/// The lines the child copied to `out`, each parsed, once they come to `expected` bytes; the
/// transport is closed first, and the file must hold exactly those bytes.
async fn written_lines(transport: &StdioTransport, out: &std::path::Path, expected: usize) -> Vec<serde_json::Value> {
    while std::fs::metadata(out).map(|m| m.len() as usize).unwrap_or(0) < expected {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    transport.close().await;
    let written = std::fs::read(out).unwrap();
    assert_eq!(written.len(), expected, "exactly the sent bytes");
    written
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(n, line)| {
            serde_json::from_slice(line)
                .unwrap_or_else(|e| panic!("line {n} ({} bytes) is not whole JSON: {e}", line.len()))
        })
        .collect()
}

/// `recv` is cancel-safe: futures dropped while they wait (a caller's timeout) take nothing, and
/// every line the server writes is received once, in order, by the `recv` that comes next.
#[tokio::test]
async fn a_recv_dropped_while_it_waits_loses_nothing() {
    within(async {
        let transport = StdioTransport::spawn(sh("echo", "exec cat", &[])).unwrap();
        for _ in 0..3 {
            let waited = tokio::time::timeout(Duration::from_millis(20), transport.recv()).await;
            assert!(waited.is_err(), "nothing was written yet: {waited:?}");
        }
        for id in 1..=3 {
            transport.send(request(id, 10)).await.unwrap();
        }
        let mut got = Vec::new();
        while got.len() < 3 {
            // Short waits, some of them dropped before a line arrives.
            if let Ok(event) = tokio::time::timeout(Duration::from_millis(1), transport.recv()).await {
                match event {
                    TransportEvent::Message(Message::Request(r)) => got.push(r.id),
                    other => panic!("expected the echoed requests, got {other:?}"),
                }
            }
        }
        assert_eq!(got, [RequestId::Number(1), RequestId::Number(2), RequestId::Number(3)]);
        transport.close().await;
    })
    .await
}

/// Holds the runtime's thread (no other task runs) until `path` holds `bytes` bytes; false if it
/// does not within 10 s.
fn file_reaches_blocking(path: &std::path::Path, bytes: usize) -> bool {
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < until {
        if std::fs::metadata(path).map(|m| m.len() as usize).unwrap_or(0) >= bytes {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

#[tokio::test]
async fn a_send_with_nothing_ahead_writes_its_line_itself() {
    let out = scratch("direct");
    within(async {
        let transport = StdioTransport::spawn(slow_reader(&out, Duration::ZERO)).unwrap();
        // The runtime learns that the new pipe is writable on its first turn (until then a write
        // is left to the writer, which waits for that).
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut expected = 0;
        for id in 0..3 {
            // Done in one poll, and the line reaches the child while this test holds the
            // runtime's only thread: `send` wrote it, not the writer task (which never runs here).
            assert!(matches!(transport.send(request(id, 10)).now_or_never(), Some(Ok(()))), "send {id}");
            expected += mcp_protocol::codec::encode_line(&request(id, 10)).len();
            assert!(file_reaches_blocking(&out, expected), "line {id} was not written by its send");
        }
        // A line longer than the pipe holds: the pipe takes what it can, and the writer the rest,
        // once it runs; the line sent next goes behind it, whole.
        let long = request(10, 512 * 1024);
        assert!(matches!(transport.send(long.clone()).now_or_never(), Some(Ok(()))));
        assert!(matches!(transport.send(request(11, 10)).now_or_never(), Some(Ok(()))));
        expected +=
            mcp_protocol::codec::encode_line(&long).len() + mcp_protocol::codec::encode_line(&request(11, 10)).len();
        while std::fs::metadata(&out).map(|m| m.len() as usize).unwrap_or(0) < expected {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        transport.close().await;
        let written = std::fs::read(&out).unwrap();
        let ids: Vec<i64> = written
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|line| serde_json::from_slice::<serde_json::Value>(line).expect("whole JSON")["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, [0, 1, 2, 10, 11]);
        assert_eq!(written.len(), expected, "exactly the sent bytes");
    })
    .await;
    let _ = std::fs::remove_file(&out);
}

/// `send_now` never waits: behind a child that reads nothing it sends until the pipe and the
/// queue are full and then declines (`None`), and every message it took is written whole, in
/// order, before the one `send` waits to send. After the end it declines too, and `send` says
/// why.
#[tokio::test]
async fn send_now_never_waits_and_what_it_took_is_written_in_order() {
    let out = scratch("now");
    within(async {
        let transport = StdioTransport::spawn(slow_reader(&out, Duration::from_millis(500))).unwrap();
        let mut taken = Vec::new();
        let declined = loop {
            let id = taken.len() as i64;
            assert!(id < 10_000, "send_now took {id} messages of 16 KiB without ever declining");
            match transport.send_now(&request(id, 16 * 1024)) {
                Some(Ok(())) => taken.push(id),
                Some(Err(e)) => panic!("send_now {id} failed: {e}"),
                None => break id,
            }
        };
        assert!(!taken.is_empty(), "the first message had room");
        // The declined message goes the way that waits for room.
        transport.send(request(declined, 16 * 1024)).await.unwrap();
        taken.push(declined);
        let expected: usize =
            taken.iter().map(|&id| mcp_protocol::codec::encode_line(&request(id, 16 * 1024)).len()).sum();
        let got: Vec<i64> =
            written_lines(&transport, &out, expected).await.iter().map(|v| v["id"].as_i64().unwrap()).collect();
        assert_eq!(got, taken, "every message once, in the order sent");
        assert!(transport.send_now(&request(0, 10)).is_none(), "an ended transport declines");
        let err = transport.send(request(0, 10)).await.unwrap_err();
        assert!(matches!(err, TransportError::Closed(CloseReason::Closed)), "{err}");
    })
    .await;
    let _ = std::fs::remove_file(&out);
}
