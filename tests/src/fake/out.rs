//! The fake server's stdout: whole lines under one lock, with optional junk between them.

use std::io::{self, Write};

use mcp_protocol::{Message, RequestId, codec};

/// Lines printed at start by `--banner`: none of them is a JSON-RPC message.
pub(crate) const BANNER: &[&str] = &[
    "fake-mcp-server 1.0 starting up",
    "==============================",
    r#"{"level":"info","msg":"listening on stdio"}"#,
    "",
    "[1, 2, 3]",
    r#""just a string""#,
    r#"{"jsonrpc":"2.0"}"#,
];

/// A junk line printed before every message by `--banner`, alternating between these.
const JUNK: &[&str] = &[r#"{"level":"info","msg":"about to answer"}"#, "debug: about to answer"];

/// Stdout, shared by the main loop and the threads that answer late. Every write is one or more
/// whole lines under stdout's lock, flushed at once.
#[derive(Clone, Copy)]
pub(crate) struct Out {
    banner: bool,
}

impl Out {
    pub(crate) fn new(banner: bool) -> Out {
        let out = Out { banner };
        if banner {
            out.write(|w| {
                for line in BANNER {
                    writeln!(w, "{line}")?;
                }
                Ok(())
            });
        }
        out
    }

    /// Write under the lock; a client that went away ends the server.
    pub(crate) fn write(&self, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
        let mut w = io::stdout().lock();
        if let Err(e) = f(&mut w).and_then(|()| w.flush()) {
            eprintln!("fake-mcp-server: stdout failed ({e}); exiting");
            std::process::exit(0);
        }
    }

    /// Send one message, preceded by a junk line under `--banner`.
    pub(crate) fn send(&self, message: &Message) {
        let line = codec::encode_line(message);
        let banner = self.banner;
        self.write(|w| {
            if banner {
                let pick = line.len() % JUNK.len();
                writeln!(w, "{}", JUNK[pick])?;
            }
            w.write_all(&line)
        });
    }

    /// Answer `id` with a single line of `mib` MiB, streamed: the id comes first, then a text
    /// block of `mib` MiB of `x`.
    pub(crate) fn send_huge(&self, id: &RequestId, mib: usize) {
        let id = serde_json::to_string(id).expect("an id encodes");
        let chunk = vec![b'x'; 1024 * 1024];
        self.write(|w| {
            write!(w, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#)?;
            for _ in 0..mib {
                w.write_all(&chunk)?;
            }
            w.write_all(b"\"}]}}\n")
        });
    }
}
