//! What the `mcp` integration tests share: running a command with a time bound, and a
//! protected MCP endpoint for the authorization tests ([`protected`]).

pub mod protected;

use std::io::{Read, Write as _};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run `command` with `input` on its stdin (then closed), reading stdout and stderr as they come
/// (a full pipe never stalls it), and kill it with a panic if it has not ended within `limit`: a
/// hang is a failure that says so, not a test that never ends.
pub fn run_bounded(mut command: Command, input: Option<&[u8]>, limit: Duration) -> Output {
    if input.is_some() {
        command.stdin(Stdio::piped());
    }
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("it runs");
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(input).expect("write the input");
    }
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        bytes
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}
