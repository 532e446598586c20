//! No process outlives its transport: a server started through `sh -c` (so `sh` leads the
//! process group) that leaves a `sleep 1000` grandchild behind is gone, grandchild included,
//! after `close()`, after dropping its connection, and after dropping a bare transport.
//!
//! "Gone" means `/proc/<pid>` no longer exists: a zombie does not count. An orphaned grandchild is
//! reaped by whoever adopts it. In a container that is often PID 1, which may reap nothing (as
//! here), and a host running as PID 1 adopts them itself. So this test process makes itself a
//! child subreaper, as a host that is PID 1 is: the orphans become its children, and the stdio
//! transport must reap them.

use std::sync::Arc;
use std::time::Duration;

use mcp_manager::{ConnectionOptions, McpConnection};
use mcp_transport::{StdioConfig, StdioTransport, Transport};
use test_support::process::{process_state, value_after, wait_until_gone};
use test_support::within;
use tests::support::recording_factory;

const GONE_WITHIN: Duration = Duration::from_secs(5);

fn become_subreaper() {
    nix::sys::prctl::set_child_subreaper(true).expect("PR_SET_CHILD_SUBREAPER");
}

/// `sh -c '<fake> --grandchild; ...'`. The command after the server keeps `sh` running as the
/// group leader (`sh` would exec a lone command in its own place).
fn through_shell(name: &str) -> StdioConfig {
    let fake = env!("CARGO_BIN_EXE_fake-mcp-server");
    let script = format!("'{fake}' --grandchild; echo server-exited >&2");
    StdioConfig::new(name, "/bin/sh", ["-c".to_owned(), script])
}

/// The processes of one server: `sh`, the fake server, and its `sleep` grandchild.
#[derive(Debug)]
struct Tree {
    shell: u32,
    server: u32,
    grandchild: u32,
}

/// Read the pids the fake server prints to stderr at start.
async fn tree(shell: u32, transport: &dyn Transport) -> Tree {
    loop {
        let tail = transport.diagnostics_tail();
        if let (Some(server), Some(grandchild)) =
            (value_after(&tail, "server-pid"), value_after(&tail, "grandchild-pid"))
        {
            let tree = Tree { shell, server, grandchild };
            for pid in [tree.shell, tree.server, tree.grandchild] {
                let state = process_state(pid);
                assert!(state.is_some_and(|s| s != 'Z'), "{tree:?}: {pid} should be running, state {state:?}");
            }
            return tree;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn assert_gone(tree: &Tree) {
    for (what, pid) in [("sh", tree.shell), ("server", tree.server), ("grandchild", tree.grandchild)] {
        if let Err(e) = wait_until_gone(pid, GONE_WITHIN).await {
            panic!("the {what} outlived its transport: {e}");
        }
    }
}

async fn connected(name: &str) -> (McpConnection, Tree) {
    let (factory, spawned) = recording_factory(through_shell(name));
    let conn = McpConnection::new(factory, ConnectionOptions::new(name));
    conn.connect().await.unwrap();
    let session = conn.session().await.unwrap();
    let tree = tree(spawned.pids()[0], session.transport().as_ref()).await;
    (conn, tree)
}

#[tokio::test]
async fn close_ends_the_whole_process_group() {
    become_subreaper();
    within(async {
        let (conn, tree) = connected("closed").await;
        conn.ping().await.unwrap();
        conn.close().await;
        assert_gone(&tree).await;
    })
    .await
}

#[tokio::test]
async fn dropping_the_connection_ends_the_whole_process_group() {
    become_subreaper();
    within(async {
        let (conn, tree) = connected("dropped").await;
        conn.ping().await.unwrap();
        drop(conn);
        assert_gone(&tree).await;
    })
    .await
}

#[tokio::test]
async fn dropping_the_transport_ends_the_whole_process_group() {
    become_subreaper();
    within(async {
        let transport = Arc::new(StdioTransport::spawn(through_shell("bare")).unwrap());
        let tree = tree(transport.pid(), transport.as_ref()).await;
        drop(transport);
        assert_gone(&tree).await;
    })
    .await
}
