//! The processes of a bench run: one client run, read for its JSON line, and the HTTP servers,
//! killed when dropped.

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::placement::pinned;

type Result<T = ()> = std::result::Result<T, String>;

/// A client run that takes longer than this is killed and reported as failed.
const CLIENT_DEADLINE: Duration = Duration::from_secs(600);

/// Run one client (`program args`) to its end; its last stdout line that starts with `{` is the
/// result. A client that fails, prints no such line or outlives [`CLIENT_DEADLINE`] is an
/// error with its stderr.
pub(crate) fn run_client(program: &Path, args: &[&OsStr]) -> Result<String> {
    let what =
        format!("{} {}", program.display(), args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" "));
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {what}: {e}"))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if started.elapsed() > CLIENT_DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!("{what} ran past {} s and was killed", CLIENT_DEADLINE.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => break Err(format!("waiting for {what}: {e}")),
        }
    };
    let (stdout, stderr) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
    let status = status?;
    if !status.success() {
        return Err(format!("{what} failed ({status}): {}", stderr.trim()));
    }
    last_json_line(&stdout).ok_or_else(|| format!("{what} printed no JSON line; stderr: {}", stderr.trim()))
}

/// Read a pipe to its end on a thread of its own, so that neither pipe can fill and stall the
/// child.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

/// The last line of `stdout` that is a JSON object.
pub(crate) fn last_json_line(stdout: &str) -> Option<String> {
    stdout.lines().rev().map(str::trim).find(|l| l.starts_with('{') && l.ends_with('}')).map(str::to_owned)
}

/// A server process, killed when dropped.
pub(crate) struct ServerProcess(Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl ServerProcess {
    /// Ask the server to stop (SIGTERM, sent by `sh`'s `kill`: xtask has no library that sends
    /// signals) and wait up to `grace` for it to exit, as a server under valgrind must to write
    /// its counts; an error, and the server killed, if it is still running then.
    pub(crate) fn terminate(mut self, grace: Duration) -> Result {
        let pid = self.0.id();
        let sent = Command::new("sh").args(["-c", &format!("kill -TERM {pid}")]).status();
        if !sent.as_ref().is_ok_and(|s| s.success()) {
            return Err(format!("could not send SIGTERM to server process {pid}: {sent:?}"));
        }
        let started = Instant::now();
        loop {
            match self.0.try_wait() {
                Ok(Some(_)) => return Ok(()),
                Ok(None) if started.elapsed() > grace => {
                    return Err(format!(
                        "server process {pid} did not exit within {} ms of SIGTERM; killed",
                        grace.as_millis()
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(format!("waiting for server process {pid}: {e}")),
            }
        }
    }
}

/// Start `binary --http 0 flags...` (ours and rmcp's take the same flags), on `cpu` if there is
/// one (see [`pinned`]); its first line of stdout is the port it bound on 127.0.0.1. The server
/// and its `/mcp` URL.
pub(crate) fn start_http_server(binary: &Path, flags: &[&str], cpu: Option<u32>) -> Result<(ServerProcess, String)> {
    let args: Vec<OsString> = ["--http", "0"].iter().chain(flags).map(OsString::from).collect();
    let (program, args) = pinned(cpu, binary, &args);
    spawn_http_server(binary, program, args)
}

/// [`start_http_server`] with the server run by `wrapper` (a program and its first arguments,
/// such as valgrind's), which runs it as its own process and leaves its stdout alone.
pub(crate) fn start_http_server_under(
    wrapper: &[OsString],
    binary: &Path,
    flags: &[&str],
) -> Result<(ServerProcess, String)> {
    let (program, first) = wrapper.split_first().ok_or("start_http_server_under: no wrapper program")?;
    let args = first
        .iter()
        .cloned()
        .chain(std::iter::once(binary.as_os_str().to_owned()))
        .chain(["--http", "0"].iter().chain(flags).map(OsString::from))
        .collect();
    spawn_http_server(binary, program.clone(), args)
}

/// Start `program args` (which runs `binary` as an HTTP server) and read the port it bound.
fn spawn_http_server(binary: &Path, program: OsString, args: Vec<OsString>) -> Result<(ServerProcess, String)> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", binary.display()))?;
    let stdout = child.stdout.take();
    let server = ServerProcess(child);
    let mut line = String::new();
    if let Some(stdout) = stdout {
        BufReader::new(stdout).read_line(&mut line).map_err(|e| format!("reading {}'s port: {e}", binary.display()))?;
    }
    let port = parse_port(&line).ok_or_else(|| format!("{} printed {line:?}, not a port", binary.display()))?;
    Ok((server, format!("http://127.0.0.1:{port}/mcp")))
}

/// A port number on a line of its own (0 is not one a server can have bound).
fn parse_port(line: &str) -> Option<u16> {
    line.trim().parse().ok().filter(|p| *p != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_is_the_last_json_line() {
        let out = "warming up\n{\"a\":1}\nnoise\n  {\"total_ms\":2.5}  \nbye\n";
        assert_eq!(last_json_line(out).as_deref(), Some("{\"total_ms\":2.5}"));
        assert_eq!(last_json_line("no json here\n{ truncated"), None);
        assert_eq!(last_json_line(""), None);
    }

    #[test]
    fn a_port_line_must_be_a_bound_port() {
        assert_eq!(parse_port("43123\n"), Some(43123));
        assert_eq!(parse_port("0\n"), None);
        assert_eq!(parse_port("listening on 43123"), None);
        assert_eq!(parse_port("70000"), None);
        assert_eq!(parse_port(""), None);
    }

    #[test]
    fn a_failing_client_reports_its_stderr_and_a_silent_one_is_an_error() {
        let sh = Path::new("/bin/sh");
        let ok = run_client(sh, &["-c", "echo start; echo '{\"total_ms\":1}'"].map(OsStr::new)).unwrap();
        assert_eq!(ok, "{\"total_ms\":1}");
        let err = run_client(sh, &["-c", "echo broken pipe >&2; exit 3"].map(OsStr::new)).unwrap_err();
        assert!(err.contains("broken pipe") && err.contains('3'), "{err}");
        let err = run_client(sh, &["-c", "echo nothing"].map(OsStr::new)).unwrap_err();
        assert!(err.contains("no JSON line"), "{err}");
        let err = run_client(Path::new("/nonexistent/client"), &[]).unwrap_err();
        assert!(err.contains("could not start"), "{err}");
    }

    #[test]
    fn terminate_waits_for_the_server_to_exit_and_kills_one_that_ignores_the_signal() {
        let spawn = |script: &str| ServerProcess(Command::new("sh").args(["-c", script]).spawn().unwrap());
        let started = Instant::now();
        spawn("exec sleep 30").terminate(Duration::from_secs(20)).unwrap();
        assert!(started.elapsed() < Duration::from_secs(20), "SIGTERM ended the sleep");
        // SIGTERM ignored (and still ignored after the exec; sent once the shell says the trap is
        // set): the grace runs out, and the drop kills it.
        let mut child = Command::new("sh")
            .args(["-c", "trap '' TERM; echo set; exec sleep 30"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line, "set\n");
        let err = ServerProcess(child).terminate(Duration::from_millis(300)).unwrap_err();
        assert!(err.contains("did not exit within 300 ms"), "{err}");
    }
}
