//! Stdio test servers written as `/bin/sh` scripts, among them a pipe that reads slowly.

use std::path::Path;
use std::time::Duration;

use mcp_transport::StdioConfig;

/// A stdio server named `name` that runs `script` with `sh -c`; `args` become `$0`, `$1`, ...
pub fn sh(name: &str, script: &str, args: &[&str]) -> StdioConfig {
    let mut argv = vec!["-c".to_owned(), script.to_owned()];
    argv.extend(args.iter().map(|s| s.to_string()));
    StdioConfig::new(name, "/bin/sh", argv)
}

/// A child that reads nothing of its stdin for `delay` (so the pipe fills up and sends wait),
/// then copies all of it to `out`: what the transport wrote, byte for byte.
pub fn slow_reader(out: &Path, delay: Duration) -> StdioConfig {
    let script = format!("sleep {}; exec cat > \"$0\"", delay.as_secs_f64());
    sh("slow-reader", &script, &[&out.to_string_lossy()])
}

#[cfg(test)]
mod tests {
    use mcp_protocol::{Message, RequestId};
    use mcp_transport::{StdioTransport, Transport};

    use super::*;

    #[tokio::test]
    async fn the_slow_reader_copies_what_was_sent_once_it_reads() {
        crate::within(async {
            let out = std::env::temp_dir().join(format!("test-support-slow-reader-{}", std::process::id()));
            let transport = StdioTransport::spawn(slow_reader(&out, Duration::from_millis(200))).unwrap();
            let message = Message::request::<()>(RequestId::from(1), "ping", None).unwrap();
            transport.send(message).await.unwrap();
            let line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
            while std::fs::read_to_string(&out).unwrap_or_default() != line {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            transport.close().await;
            let _ = std::fs::remove_file(&out);
        })
        .await
    }

    #[test]
    fn arguments_follow_the_script() {
        let config = sh("s", "echo \"$0\" \"$1\"", &["a", "b c"]);
        assert_eq!(config.args, ["-c", "echo \"$0\" \"$1\"", "a", "b c"]);
    }
}
