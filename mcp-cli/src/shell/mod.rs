//! `mcp shell`: the servers started once and kept connected, and the subcommands run on them
//! line by line.
//!
//! Each line is parsed by the same clap definitions as the command line ([`crate::cli::parse`])
//! and run by the same code (`commands::run_command`); a line's error is shown and the shell
//! goes on. The servers are chosen when the shell starts, so a line may not name others
//! (`--config`, `--server`, `--stdio`, ...); `--json`, `--save`, `--verbose` and `--timeout`
//! apply to the line. `--timeout` of the shell bounds the start-up and each line; Ctrl-C cancels
//! the running line (its request is cancelled) and the shell stays. `exit`, `quit`, Ctrl-D or
//! the end of input end the shell, the servers shut down, and `mcp` exits with the code of the
//! last line that ran.
//!
//! - `input`: the line editor (terminal) or bounded lines of stdin (a script).
//! - `complete`: Tab completion of commands, tools, argument keys, prompts and URIs.
//! - `live`: notifications and server stderr, shown as they come.

mod complete;
mod input;
mod live;

use std::io::IsTerminal as _;
use std::sync::{Arc, RwLock};

use mcp_manager::ErrorKind;

use self::complete::{Catalog, SHELL_WORDS, shell_commands};
use self::input::Input;
use self::live::Printer;
use crate::cli::{self, Cli};
use crate::commands::{self, Deadline, Started, bounded};
use crate::exit::{self, CliError, ExitCode};
use crate::output::terminal;

/// Whether the subcommand `name` runs inside the shell (`chat` reads stdin, `login` and
/// `logout` change what the started servers were given, `shell` and `serve-demo` run alone).
pub(crate) fn runs_in_shell(name: &str) -> bool {
    !matches!(name, "shell" | "serve-demo" | "chat" | "login" | "logout")
}

/// Run `mcp shell`; the process exit status.
pub fn run(cli: &Cli) -> i32 {
    commands::block_on(cli, run_async(cli))
}

async fn run_async(cli: &Cli) -> Result<ExitCode, CliError> {
    let printer = Printer::default();
    let hooks = printer.hooks();
    let session =
        bounded(Deadline::after(cli.global.timeout), "starting the servers", commands::start(cli, Some(&hooks)))
            .await?;
    let catalog = Arc::new(RwLock::new(Catalog::of(&session)));
    let interactive = std::io::stdin().is_terminal();
    let editor = if interactive {
        let history = input::history_path(|k| std::env::var(k).ok());
        Input::editor(catalog.clone(), history, &printer).map_err(|e| {
            terminal::errln(&format!("mcp shell: no line editor ({e}); reading plain lines"));
        })
    } else {
        Err(())
    };
    let mut input = editor.unwrap_or_else(|()| Input::plain());
    if interactive {
        let routing = session.manager.routing();
        terminal::errln(&format!(
            "mcp shell: {} tools from {} server(s). Tab completes, `help` lists the commands, `exit` or Ctrl-D ends.",
            routing.tools().len(),
            session.manager.status().len()
        ));
    }
    let mut interrupts = Interrupts::new();
    let mut last = ExitCode::Ok;
    loop {
        *catalog.write().unwrap_or_else(|p| p.into_inner()) = Catalog::of(&session);
        let line = tokio::select! {
            line = input.next_line() => line,
            // Only reached when stdin is not a terminal: the editor reads Ctrl-C as a key.
            () = interrupts.next() => None,
        };
        let Some(line) = line else { break };
        let line = match line {
            Ok(line) => line,
            Err(why) => {
                terminal::errln(&format!("mcp shell: {why}"));
                continue;
            }
        };
        match parse_line(cli, &line) {
            Parsed::Empty => {}
            Parsed::Exit => break,
            Parsed::Help => terminal::outln(&help_text()),
            Parsed::Shown(code) => last = code,
            Parsed::Failed(error) => last = report(&error, cli.global.json, cli.global.verbose),
            Parsed::Run(line_cli) => last = run_line(&line_cli, &session, &mut interrupts).await,
        }
    }
    drop(input);
    session.manager.close().await;
    Ok(last)
}

/// Run one parsed line, bounded by its `--timeout` and cancelled by Ctrl-C.
async fn run_line(cli: &Cli, session: &Started, interrupts: &mut Interrupts) -> ExitCode {
    let doing = format!("running `{}`", cli.command.name());
    let work = bounded(Deadline::after(cli.global.timeout), &doing, commands::run_command(cli, session));
    let result = tokio::select! {
        result = work => result,
        () = interrupts.next() => Err(CliError::new(
            exit::kind_exit_code(ErrorKind::Cancelled),
            format!("`{}` cancelled (Ctrl-C); the request was cancelled", cli.command.name()),
        )
        .with_kind(ErrorKind::Cancelled)),
    };
    match result {
        Ok(code) => code,
        Err(error) => report(&error, cli.global.json, cli.global.verbose),
    }
}

fn report(error: &CliError, json: bool, verbose: bool) -> ExitCode {
    error.report_as(json, verbose);
    error.code
}

/// What a line asks for.
#[derive(Debug)]
enum Parsed {
    Empty,
    Exit,
    Help,
    /// Clap printed help, a version or a usage error; its exit code.
    Shown(ExitCode),
    Failed(CliError),
    Run(Box<Cli>),
}

/// Parse `line` as the words after `mcp`, with the shell's own options (`shell`) as defaults.
fn parse_line(shell: &Cli, line: &str) -> Parsed {
    let Some(words) = shlex::split(line) else {
        return Parsed::Failed(CliError::usage("the line has an unclosed quote or a trailing backslash"));
    };
    match words.first().map(String::as_str) {
        None => return Parsed::Empty,
        Some("exit" | "quit") if words.len() == 1 => return Parsed::Exit,
        Some("help" | "?") if words.len() == 1 => return Parsed::Help,
        _ => {}
    }
    let mut cli = match cli::parse(std::iter::once("mcp".to_owned()).chain(words)) {
        Ok(cli) => cli,
        Err(error) => {
            let code = exit::report_clap_error(&error, shell.global.verbose, shell.global.json);
            return Parsed::Shown(if code == 0 { ExitCode::Ok } else { ExitCode::Usage });
        }
    };
    if !runs_in_shell(cli.command.name()) {
        let name = cli.command.name();
        return Parsed::Failed(CliError::usage(format!("`{name}` does not run inside the shell; run `mcp {name}`")));
    }
    if let Some(flag) = server_choice(&cli) {
        return Parsed::Failed(CliError::usage(format!(
            "{flag} is chosen when the shell starts (mcp shell {flag} ...), not per line"
        )));
    }
    let (own, line) = (&shell.global, &mut cli.global);
    line.json |= own.json;
    line.verbose |= own.verbose;
    line.save = line.save.take().or_else(|| own.save.clone());
    line.timeout = line.timeout.or(own.timeout);
    Parsed::Run(Box::new(cli))
}

/// The first option of `cli` that chooses servers, which only the shell's command line may.
fn server_choice(cli: &Cli) -> Option<&'static str> {
    let g = &cli.global;
    [
        (g.config.is_some(), "--config"),
        (g.server.is_some(), "--server"),
        (g.stdio, "--stdio"),
        (g.url.is_some(), "--url"),
        (g.name.is_some(), "--name"),
        (!g.headers.is_empty(), "--header"),
        (g.bearer_env.is_some(), "--bearer-env"),
        (!g.roots.is_empty(), "--root"),
        (g.server_logs, "--server-logs"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

/// What `help` prints.
fn help_text() -> String {
    let mut text =
        String::from("Commands (each takes the options it takes on the command line; CMD --help for them):\n");
    for (name, about) in shell_commands() {
        text.push_str(&format!("  {name:<10} {about}\n"));
    }
    text.push_str(&format!(
        "  {:<10} this list; {} or Ctrl-D end the shell\n\
         Per line: --json, --save DIR, --verbose, --timeout DURATION. Ctrl-C cancels the running command.\n\
         Tab completes commands, tool names (SERVER/TOOL too) and argument keys.",
        SHELL_WORDS[0],
        SHELL_WORDS[1..].join(" and ")
    ));
    text
}

/// Ctrl-C, as a stream (SIGINT while `mcp` waits; the terminal is not in raw mode then).
struct Interrupts(Option<tokio::signal::unix::Signal>);

impl Interrupts {
    fn new() -> Interrupts {
        Interrupts(tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok())
    }

    /// The next Ctrl-C; never, when the signal could not be watched.
    async fn next(&mut self) {
        let received = match &mut self.0 {
            Some(signal) => signal.recv().await.is_some(),
            None => false,
        };
        if !received {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Command;

    fn shell(args: &str) -> Cli {
        cli::parse(format!("mcp shell {args}").split_whitespace()).unwrap()
    }

    #[test]
    fn lines_parse_like_the_command_line_with_the_shells_options() {
        let own = shell("--json --timeout 5s");
        let Parsed::Run(line) = parse_line(&own, r#"call echo "text=hello world""#) else { panic!() };
        let Command::Call(call) = &line.command else { panic!() };
        assert_eq!((call.tool.as_str(), call.pairs.as_slice()), ("echo", ["text=hello world".to_owned()].as_slice()));
        assert!(line.global.json, "the shell's --json applies");
        assert_eq!(line.global.timeout, Some(std::time::Duration::from_secs(5)));
        let Parsed::Run(line) = parse_line(&own, "tools --timeout 1s") else { panic!() };
        assert_eq!(line.global.timeout, Some(std::time::Duration::from_secs(1)), "the line's own wins");
        assert!(matches!(parse_line(&own, "   "), Parsed::Empty));
        assert!(matches!(parse_line(&own, " quit "), Parsed::Exit));
        assert!(matches!(parse_line(&own, "help"), Parsed::Help));
    }

    #[test]
    fn lines_that_cannot_run_here_say_why() {
        let own = shell("");
        let failed = |line: &str| match parse_line(&own, line) {
            Parsed::Failed(e) => e.message,
            other => panic!("{line}: {other:?}"),
        };
        assert!(failed("call echo 'text=x").contains("unclosed quote"));
        assert_eq!(failed("chat"), "`chat` does not run inside the shell; run `mcp chat`");
        assert!(failed("shell").contains("`shell` does not run inside the shell"));
        assert!(failed("tools --config other.json").starts_with("--config is chosen when the shell starts"));
        assert!(failed("status --server demo").starts_with("--server is chosen"));
        assert!(failed("tools --url http://127.0.0.1:1/mcp").starts_with("--url is chosen"));
    }
}
