//! An over-long stdout line is discarded while it streams in, never buffered whole: after a
//! 100 MiB answer under a 32 MiB limit, this process has never held 100 MiB.
//!
//! Alone in its test binary, because the peak resident memory it reads (`VmHWM`) is the whole
//! process's: another test (a panic that loads debug info, say) would blur it.

use std::time::Duration;

use mcp_manager::{ConnectionOptions, McpConnection, RequestOptions, stdio_factory};
use mcp_transport::StdioConfig;

const MIB: u64 = 1024 * 1024;

/// The peak resident memory of this process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[tokio::test]
async fn over_long_line_is_streamed_past() {
    let run = async {
        let mut config = StdioConfig::new("huge", env!("CARGO_BIN_EXE_fake-mcp-server"), ["--huge-mib", "100"]);
        config.max_message_bytes = 32 * MIB as usize;
        let conn = McpConnection::new(stdio_factory(config), ConnectionOptions::new("huge"));
        conn.connect().await.unwrap();
        for _ in 0..2 {
            let err = conn.call_tool("huge", None, RequestOptions::default()).await.unwrap_err();
            assert!(err.to_string().contains("exceeded the message size limit"), "{err}");
        }
        conn.ping().await.unwrap();
        conn.close().await;
    };
    tokio::time::timeout(Duration::from_secs(20), run).await.expect("test timed out");
    let peak = peak_rss();
    assert!(peak < 100 * MIB, "peak RSS {} MiB: the 100 MiB line was buffered", peak / MIB);
}
