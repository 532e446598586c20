//! Exit codes and error display.
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | success |
//! | 1 | usage or config error (bad arguments, unknown tool, a config file that is missing or wrong) |
//! | 2 | the tool ran and returned `isError` |
//! | 3 | the server requires authorization |
//! | 4 | the server is unreachable or failed to start (or stopped answering) |
//! | 5 | protocol error (the server broke the protocol, or an internal error of `mcp`) |
//! | 6 | the server answered the request with an error (a JSON-RPC error, such as -32603) |
//! | 7 | `--timeout` ran out (the running request was cancelled, the servers shut down) |
//!
//! An error is shown as one line on stderr, `mcp: <what went wrong>`; `--verbose` adds the
//! detail below it. With `--json` it is also one JSON object on stdout
//! (`{"error": {"message", "exitCode", "meaning", "kind"}}`), so a script that reads stdout
//! always gets a document. [`install_panic_hook`] turns a panic (always a bug) into one such line and
//! exit code 5, without a backtrace.

use std::fmt;

use mcp_manager::manager::ManagerError;
use mcp_manager::{ConnectionError, ErrorKind, SessionError};
use mcp_transport::TransportError;

/// The exit codes of `mcp`, as its help shows them.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  success
  1  usage or config error (bad arguments, unknown tool, missing or invalid config)
  2  the tool returned an error result (isError)
  3  the server requires authorization
  4  a server is unreachable or failed to start
  5  protocol error (or an internal error of mcp)
  6  the server answered with an error (a JSON-RPC error to the request)
  7  --timeout ran out (the running request was cancelled)";

/// How `mcp` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitCode {
    /// 0: success.
    Ok,
    /// 1: usage or config error.
    Usage,
    /// 2: the tool returned `isError`.
    ToolError,
    /// 3: authorization required.
    AuthRequired,
    /// 4: a server is unreachable or failed to start.
    Unreachable,
    /// 5: protocol error.
    Protocol,
    /// 6: the server answered the request with a JSON-RPC error.
    ServerError,
    /// 7: `--timeout` ran out.
    TimedOut,
}

impl ExitCode {
    /// The process exit status.
    pub fn code(self) -> i32 {
        match self {
            ExitCode::Ok => 0,
            ExitCode::Usage => 1,
            ExitCode::ToolError => 2,
            ExitCode::AuthRequired => 3,
            ExitCode::Unreachable => 4,
            ExitCode::Protocol => 5,
            ExitCode::ServerError => 6,
            ExitCode::TimedOut => 7,
        }
    }

    /// What the code means, in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            ExitCode::Ok => "success",
            ExitCode::Usage => "usage or config error",
            ExitCode::ToolError => "the tool returned an error result",
            ExitCode::AuthRequired => "authorization required",
            ExitCode::Unreachable => "server unreachable or failed to start",
            ExitCode::Protocol => "protocol error",
            ExitCode::ServerError => "the server answered with an error",
            ExitCode::TimedOut => "--timeout ran out",
        }
    }
}

/// An error that ends `mcp`: its exit code, a one-line message, and detail for `--verbose`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// The exit code.
    pub code: ExitCode,
    /// One line saying what went wrong (and where).
    pub message: String,
    /// More, shown with `--verbose`.
    pub detail: Option<String>,
    /// The kind of failure, when it came from the library (see [`ErrorKind`]).
    pub kind: Option<ErrorKind>,
}

impl CliError {
    /// An error with `code` and a message (line breaks in it become spaces).
    pub fn new(code: ExitCode, message: impl Into<String>) -> Self {
        CliError { code, message: one_line(&message.into()), detail: None, kind: None }
    }

    /// A usage or config error (1).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::new(ExitCode::Usage, message)
    }

    /// The tool returned `isError` (2).
    pub fn tool_failed(message: impl Into<String>) -> Self {
        CliError::new(ExitCode::ToolError, message)
    }

    /// Authorization required (3).
    pub fn auth_required(message: impl Into<String>) -> Self {
        CliError::new(ExitCode::AuthRequired, message)
    }

    /// A server is unreachable or failed to start (4).
    pub fn unreachable(message: impl Into<String>) -> Self {
        CliError::new(ExitCode::Unreachable, message)
    }

    /// A protocol error (5).
    pub fn protocol(message: impl Into<String>) -> Self {
        CliError::new(ExitCode::Protocol, message)
    }

    /// `--timeout` ran out after `after` (7), while `doing` ("starting the servers", "tools").
    pub fn timed_out(after: std::time::Duration, doing: &str) -> Self {
        let shown = humantime::format_duration(after);
        CliError::new(
            ExitCode::TimedOut,
            format!("timed out after {shown} (--timeout) while {doing}; the request was cancelled"),
        )
        .with_kind(ErrorKind::Timeout)
    }

    /// The same error, of kind `kind`.
    pub fn with_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// The same error with detail for `--verbose`.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// What to print on stderr: `mcp: <message>`, and with `verbose` the detail and the exit
    /// code's meaning on the lines below.
    pub fn render(&self, verbose: bool) -> String {
        let mut out = format!("mcp: {}", self.message);
        if verbose {
            if let Some(detail) = &self.detail {
                for line in detail.lines() {
                    out.push_str("\n  ");
                    out.push_str(line);
                }
            }
            out.push_str(&format!("\n  (exit code {}: {})", self.code.code(), self.code.meaning()));
        }
        out
    }

    /// Print the error on stderr (sanitized: the message may quote a server) and return its
    /// exit status.
    pub fn report(&self, verbose: bool) -> i32 {
        crate::output::terminal::errln(&self.render(verbose));
        self.code.code()
    }

    /// The error as `--json` prints it on stdout.
    pub fn to_json(&self, verbose: bool) -> serde_json::Value {
        let mut error = serde_json::json!({
            "message": self.message,
            "exitCode": self.code.code(),
            "meaning": self.code.meaning(),
            "kind": self.kind.map(ErrorKind::as_str),
        });
        if verbose && let Some(detail) = &self.detail {
            error["detail"] = serde_json::Value::String(detail.clone());
        }
        serde_json::json!({ "error": error })
    }

    /// [`CliError::report`], and with `json` the error as one JSON object on stdout too.
    pub fn report_as(&self, json: bool, verbose: bool) -> i32 {
        if json {
            crate::output::terminal::outln(&crate::output::terminal::json_text(&self.to_json(verbose)));
        }
        self.report(verbose)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

fn one_line(text: &str) -> String {
    let mut parts = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut out = parts.next().unwrap_or_default().to_owned();
    for part in parts {
        out.push(' ');
        out.push_str(part);
    }
    out
}

impl From<&ConnectionError> for CliError {
    fn from(error: &ConnectionError) -> Self {
        CliError::new(connection_exit_code(error), error.to_string())
            .with_kind(error.kind())
            .with_detail(format!("{error:?}"))
    }
}

impl From<ConnectionError> for CliError {
    fn from(error: ConnectionError) -> Self {
        CliError::from(&error)
    }
}

impl From<&ManagerError> for CliError {
    fn from(error: &ManagerError) -> Self {
        CliError::new(kind_exit_code(error.kind()), error.to_string())
            .with_kind(error.kind())
            .with_detail(format!("{error:?}"))
    }
}

impl From<&crate::coerce::CoerceError> for CliError {
    fn from(error: &crate::coerce::CoerceError) -> Self {
        CliError::usage(error.to_string())
    }
}

impl From<crate::discover::DiscoverError> for CliError {
    fn from(error: crate::discover::DiscoverError) -> Self {
        CliError::usage(error.to_string())
    }
}

impl From<crate::output::media::SaveError> for CliError {
    fn from(error: crate::output::media::SaveError) -> Self {
        CliError::usage(format!("--save: {error}"))
    }
}

/// The exit code of a completed tool call: 2 when the tool returned `isError`, else 0.
pub fn tool_result_exit_code(result: &mcp_protocol::types::tools::CallToolResult) -> ExitCode {
    if result.is_error == Some(true) { ExitCode::ToolError } else { ExitCode::Ok }
}

/// The exit code of an error of kind `kind`: the one place that maps failures to the
/// documented codes (every layer's error says its kind, so nothing here walks error trees).
pub fn kind_exit_code(kind: ErrorKind) -> ExitCode {
    match kind {
        ErrorKind::AuthRequired => ExitCode::AuthRequired,
        // The server is not there, not answering, gone, or not back yet.
        ErrorKind::Unreachable | ErrorKind::Timeout | ErrorKind::Closed | ErrorKind::Unavailable => {
            ExitCode::Unreachable
        }
        // The request named something the server does not have, had bad arguments, or was
        // refused by the host's own rules or configuration.
        ErrorKind::NotFound | ErrorKind::InvalidArguments | ErrorKind::Denied | ErrorKind::Config => ExitCode::Usage,
        // A task that ended without a result: the tool failed.
        ErrorKind::ToolFailed | ErrorKind::Cancelled => ExitCode::ToolError,
        // The server answered with a JSON-RPC error of its own.
        ErrorKind::ServerError => ExitCode::ServerError,
        // Protocol disagreements, internal failures, and whatever kinds come later.
        _ => ExitCode::Protocol,
    }
}

/// The exit code for a failed connection or request.
pub fn connection_exit_code(error: &ConnectionError) -> ExitCode {
    kind_exit_code(error.kind())
}

/// The exit code for a failed request.
pub fn session_exit_code(error: &SessionError) -> ExitCode {
    kind_exit_code(error.kind())
}

/// The exit code for a transport failure: HTTP 401 and 403 ask for authorization, a response
/// over the size limit breaks the protocol, and everything else means the server cannot be
/// reached or did not start.
pub fn transport_exit_code(error: &TransportError) -> ExitCode {
    kind_exit_code(error.kind())
}

/// Report a command-line parse error: help and version go to stdout with status 0; a usage error
/// becomes one line on stderr (clap's full text with `verbose`) and status 1.
pub fn report_clap_error(error: &clap::Error, verbose: bool, json: bool) -> i32 {
    use clap::error::ErrorKind;
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            crate::output::terminal::out(&error.to_string());
            0
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            crate::output::terminal::err(&error.to_string());
            ExitCode::Usage.code()
        }
        _ => {
            let text = error.to_string();
            let first = text.lines().next().unwrap_or_default();
            let message = first.strip_prefix("error: ").unwrap_or(first);
            let usage = CliError::usage(format!("{message} (see mcp --help)")).with_detail(text.trim_end().to_owned());
            usage.report_as(json, verbose)
        }
    }
}

/// Make a panic print one line (`mcp: internal error: ...`) and exit with status 5, with no
/// backtrace. A panic is a bug of `mcp`; the line asks for a report.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        crate::output::terminal::errln(&format!(
            "mcp: internal error: {}{place} (this is a bug in mcp; please report it)",
            one_line(&message)
        ));
        std::process::exit(ExitCode::Protocol.code());
    }));
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use mcp_protocol::{ErrorCode, ErrorObject};
    use mcp_transport::CloseReason;

    use super::*;

    fn rpc(code: ErrorCode) -> ConnectionError {
        ConnectionError::Session(SessionError::Rpc {
            server: Arc::from("demo"),
            method: "tools/call".into(),
            error: Box::new(ErrorObject::new(code, "nope")),
        })
    }

    fn http(status: u16) -> TransportError {
        TransportError::Http { status, body_excerpt: String::new(), context: "initialize".into() }
    }

    #[test]
    fn codes_are_the_documented_numbers() {
        let all = [
            ExitCode::Ok,
            ExitCode::Usage,
            ExitCode::ToolError,
            ExitCode::AuthRequired,
            ExitCode::Unreachable,
            ExitCode::Protocol,
            ExitCode::ServerError,
            ExitCode::TimedOut,
        ];
        assert_eq!(all.map(ExitCode::code), [0, 1, 2, 3, 4, 5, 6, 7]);
        for code in all {
            assert!(EXIT_CODES_HELP.contains(&format!("  {}  ", code.code())), "{code:?}");
        }
    }

    #[test]
    fn connection_errors_map_to_codes() {
        assert_eq!(connection_exit_code(&rpc(ErrorCode::INVALID_PARAMS)), ExitCode::Usage, "unknown tool");
        assert_eq!(connection_exit_code(&rpc(ErrorCode::METHOD_NOT_FOUND)), ExitCode::Usage);
        assert_eq!(connection_exit_code(&rpc(ErrorCode::INTERNAL_ERROR)), ExitCode::ServerError);
        assert_eq!(connection_exit_code(&rpc(ErrorCode::URL_ELICITATION_REQUIRED)), ExitCode::AuthRequired);
        let transport = |error| ConnectionError::Transport { server: "s".into(), error };
        assert_eq!(connection_exit_code(&transport(http(401))), ExitCode::AuthRequired);
        assert_eq!(connection_exit_code(&transport(http(403))), ExitCode::AuthRequired);
        assert_eq!(connection_exit_code(&transport(http(502))), ExitCode::Unreachable);
        let spawn = TransportError::Spawn {
            command: "nope".into(),
            source: Arc::new(std::io::Error::from(std::io::ErrorKind::NotFound)),
            stderr_tail: vec![],
        };
        assert_eq!(connection_exit_code(&transport(spawn)), ExitCode::Unreachable);
        assert_eq!(connection_exit_code(&transport(TransportError::MessageTooLarge { limit: 1 })), ExitCode::Protocol);
        let exited = SessionError::Closed {
            server: Arc::from("s"),
            reason: CloseReason::Exited { status: None, stderr_tail: vec!["boom".into()] },
        };
        assert_eq!(connection_exit_code(&ConnectionError::Session(exited)), ExitCode::Unreachable);
        let timeout = SessionError::Timeout {
            server: Arc::from("s"),
            method: "initialize".into(),
            after: Duration::from_secs(1),
        };
        assert_eq!(session_exit_code(&timeout), ExitCode::Unreachable);
        assert_eq!(connection_exit_code(&ConnectionError::NotConnected("s".into())), ExitCode::Unreachable);
        let version = ConnectionError::UnsupportedVersion {
            server: "s".into(),
            offered: "2025-11-25".into(),
            answered: "1999-01-01".into(),
        };
        assert_eq!(connection_exit_code(&version), ExitCode::Protocol);
        let fallback = ConnectionError::FallbackFailed {
            tried: mcp_transport::TransportKind::StreamableHttp,
            first: Box::new(transport(http(405))),
            fallback: Box::new(transport(http(401))),
        };
        assert_eq!(connection_exit_code(&fallback), ExitCode::AuthRequired);
        let declined = ConnectionError::UrlElicitationFailed {
            server: "s".into(),
            method: "tools/call",
            url: "https://auth.example".into(),
            reason: "the user declined it".into(),
        };
        assert_eq!(connection_exit_code(&declined), ExitCode::AuthRequired);
        let input = ConnectionError::InputRequestFailed {
            server: "s".into(),
            method: "tools/call",
            key: "k".into(),
            input_method: "sampling/createMessage".into(),
            error: ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "method not found"),
        };
        assert_eq!(connection_exit_code(&input), ExitCode::Protocol);
    }

    #[test]
    fn every_kind_has_a_documented_code_and_manager_errors_follow_their_kind() {
        let expected = [
            (ErrorKind::AuthRequired, ExitCode::AuthRequired),
            (ErrorKind::Unreachable, ExitCode::Unreachable),
            (ErrorKind::Timeout, ExitCode::Unreachable),
            (ErrorKind::Closed, ExitCode::Unreachable),
            (ErrorKind::Unavailable, ExitCode::Unreachable),
            (ErrorKind::NotFound, ExitCode::Usage),
            (ErrorKind::InvalidArguments, ExitCode::Usage),
            (ErrorKind::Denied, ExitCode::Usage),
            (ErrorKind::Config, ExitCode::Usage),
            (ErrorKind::ToolFailed, ExitCode::ToolError),
            (ErrorKind::Cancelled, ExitCode::ToolError),
            (ErrorKind::Protocol, ExitCode::Protocol),
            (ErrorKind::ServerError, ExitCode::ServerError),
            (ErrorKind::Internal, ExitCode::Protocol),
        ];
        for (kind, code) in expected {
            assert_eq!(kind_exit_code(kind), code, "{kind}");
        }
        let unknown = CliError::from(&ManagerError::UnknownTool("nope".into()));
        assert_eq!(
            (unknown.code, unknown.message.as_str()),
            (ExitCode::Usage, "unknown tool \"nope\": no ready server offers it")
        );
        let reconnecting = ManagerError::ServerUnavailable {
            server: "s".into(),
            tool: "t".into(),
            state: mcp_manager::ServerState::Reconnecting,
        };
        assert_eq!(CliError::from(&reconnecting).code, ExitCode::Unreachable);
        assert_eq!(CliError::from(&ManagerError::Connection(rpc(ErrorCode::INVALID_PARAMS))).code, ExitCode::Usage);
        let internal = CliError::from(&ManagerError::Connection(rpc(ErrorCode::INTERNAL_ERROR)));
        assert_eq!((internal.code, internal.code.code()), (ExitCode::ServerError, 6), "the server's own error");
        let json = internal.to_json(false);
        assert_eq!(json["error"]["exitCode"], 6);
        assert_eq!(json["error"]["kind"], "server_error");
        assert_eq!(json["error"]["message"], internal.message.as_str());
        assert!(json["error"].get("detail").is_none(), "detail only with --verbose");
        assert!(internal.to_json(true)["error"]["detail"].is_string());
        assert_eq!(CliError::usage("x").to_json(false)["error"]["kind"], serde_json::Value::Null);
        let shape = ManagerError::UnexpectedShape { server: "s".into(), method: "tools/call", shape: "task" };
        assert_eq!(CliError::from(&shape).code, ExitCode::Protocol);
    }

    #[test]
    fn errors_render_as_one_line_unless_verbose() {
        let e = CliError::unreachable("server \"x\" failed to start:\nno such file").with_detail("line 1\nline 2");
        assert_eq!(e.render(false), "mcp: server \"x\" failed to start: no such file");
        assert_eq!(
            e.render(true),
            "mcp: server \"x\" failed to start: no such file\n  line 1\n  line 2\n  (exit code 4: server unreachable or failed to start)"
        );
        let from: CliError = rpc(ErrorCode::INVALID_PARAMS).into();
        assert_eq!(from.code, ExitCode::Usage);
        assert!(from.message.contains("nope") && !from.message.contains('\n'), "{}", from.message);
        assert!(from.detail.is_some());
    }

    #[test]
    fn local_errors_are_usage_errors() {
        let coerce = crate::coerce::CoerceError::MissingRequired { key: "text".into() };
        assert_eq!(CliError::from(&coerce).code, ExitCode::Usage);
        let missing = crate::discover::DiscoverError::Missing("nope.json".into());
        assert_eq!(CliError::from(missing).message, "config file nope.json does not exist");
        let failed = mcp_protocol::types::tools::CallToolResult { is_error: Some(true), ..Default::default() };
        assert_eq!(tool_result_exit_code(&failed), ExitCode::ToolError);
        assert_eq!(tool_result_exit_code(&Default::default()), ExitCode::Ok);
    }

    /// Runs itself again as a child process with the hook installed, and a panic with two lines.
    #[test]
    fn a_panic_is_one_line_and_exit_code_5() {
        const CHILD: &str = "MCP_CLI_PANIC_HOOK_CHILD";
        if std::env::var_os(CHILD).is_some() {
            install_panic_hook();
            panic!("boom\nsecond line");
        }
        let exe = std::env::current_exe().unwrap();
        let output = std::process::Command::new(exe)
            .args(["--exact", "exit::tests::a_panic_is_one_line_and_exit_code_5", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(5), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let line = stderr.lines().find(|l| l.starts_with("mcp: ")).unwrap_or_else(|| panic!("{stderr}"));
        assert!(line.starts_with("mcp: internal error: boom second line at mcp-cli/src/exit.rs:"), "{line}");
        assert!(line.ends_with("(this is a bug in mcp; please report it)"), "{line}");
        assert!(!stderr.contains("stack backtrace"), "{stderr}");
    }

    #[test]
    fn clap_errors_become_usage_errors() {
        let error = crate::cli::parse(["mcp", "frobnicate"]).unwrap_err();
        assert_eq!(report_clap_error(&error, false, false), 1);
        let help = crate::cli::parse(["mcp", "--version"]).unwrap_err();
        assert_eq!(report_clap_error(&help, false, false), 0);
    }
}
