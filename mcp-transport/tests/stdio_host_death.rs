//! On Linux a stdio server dies with its host: a host killed with SIGKILL (which runs no drop
//! and no close) takes its servers with it, through the parent-death signal. And since that
//! signal follows the *thread* that started the child, starting a server from a thread that then
//! ends must not kill it.
//!
//! The host is this test binary run again: the ignored test `host_role` is its main when
//! `MCP_TEST_HOST_ROLE` is set.

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_protocol::{Message, RequestId};
use mcp_transport::{StdioConfig, StdioTransport, Transport, TransportEvent};

const ROLE: &str = "MCP_TEST_HOST_ROLE";

/// The state letter of a process from `/proc/<pid>/stat`; `None` when there is none.
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// Dead: gone, or a zombie that whoever adopted it has not reaped (yet).
fn dead(pid: u32) -> bool {
    matches!(state(pid), None | Some('Z'))
}

/// Run as the host: start a server (`sleep`), print its pid, then wait to be killed.
#[test]
#[ignore = "the host process of `a_host_killed_with_sigkill_takes_its_server_along`"]
fn host_role() {
    if std::env::var_os(ROLE).is_none() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    runtime.block_on(async {
        // Started from a blocking-pool thread, which ends when idle: the server must not care.
        let transport = tokio::task::spawn_blocking(|| StdioTransport::spawn(StdioConfig::new("s", "sleep", ["1000"])))
            .await
            .unwrap()
            .unwrap();
        println!("server-pid={}", transport.pid());
        tokio::time::sleep(Duration::from_secs(600)).await;
        drop(transport);
    });
}

#[test]
fn a_host_killed_with_sigkill_takes_its_server_along() {
    let mut host = Command::new(std::env::current_exe().unwrap())
        .args(["host_role", "--exact", "--ignored", "--nocapture", "--test-threads", "1"])
        .env(ROLE, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = host.stdout.take().unwrap();
    // libtest prints `test host_role ... ` on the same line, before it.
    let line = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains("server-pid="))
        .expect("the host printed its server's pid");
    let server: u32 = line.split("server-pid=").nth(1).unwrap().trim().parse().unwrap();
    assert!(!dead(server), "the server runs while its host does");
    host.kill().unwrap(); // SIGKILL
    host.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while !dead(server) {
        if Instant::now() > deadline {
            // Do not leave it behind for the next test run.
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(server as i32), nix::sys::signal::SIGKILL);
            panic!("the server {server} outlived its killed host");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_server_started_from_a_thread_that_ends_keeps_running() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let handle = runtime.handle().clone();
    // A thread that starts the server and ends at once.
    let transport = std::thread::spawn(move || {
        let _entered = handle.enter();
        StdioTransport::spawn(StdioConfig::new("cat", "cat", Vec::<String>::new())).unwrap()
    })
    .join()
    .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(20), async {
            // A parent-death signal tied to that thread would have been sent by now.
            tokio::time::sleep(Duration::from_millis(500)).await;
            assert!(!dead(transport.pid()), "the server died with the thread that started it");
            // And it still answers: `cat` sends the request back.
            let ping = Message::request::<()>(RequestId::Number(1), "ping", None).unwrap();
            transport.send(ping).await.unwrap();
            let TransportEvent::Message(echoed) = transport.recv().await else { panic!("cat ended") };
            assert_eq!(echoed.method(), Some("ping"));
            transport.close().await;
        })
        .await
        .expect("test timed out");
    });
}
