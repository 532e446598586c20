//! The subcommands, wired to the many-server manager: each one resolves the servers to use
//! (`setup`), starts an `McpManager` on them, does its work through the manager's routing, and
//! ends with one of the documented exit codes. `run_command` runs one subcommand on servers
//! that are already started, so `mcp shell` runs the very same code for each of its lines.
//! `--timeout` bounds the start and the command (`bounded`).

mod ask;
mod auth;
mod chat;
mod configs;
mod lists;
mod llm;
mod setup;
mod skills;

use mcp_manager::RequestOptions;
use mcp_manager::connection::tasks::result_task_id;
use mcp_manager::connection::{TaskMode, TaskOptions};
use mcp_manager::manager::{ManagerError, McpManager};
use serde_json::Value;

use self::setup::NotStarted;
use crate::cli::{CallArgs, Cli, Command, PromptArgs, ReadArgs};
use crate::coerce;
use crate::exit::{self, CliError, ExitCode};
use crate::output::views;

pub(crate) use self::ask::read_line_bounded;
pub(crate) use self::setup::{Live, Started};

/// Run `cli`'s subcommand (other than `serve-demo` and `shell`); the process exit status.
pub fn run(cli: &Cli) -> i32 {
    block_on(cli, run_async(cli))
}

/// Run `work` on a runtime of its own and report its outcome; the process exit status.
pub(crate) fn block_on(cli: &Cli, work: impl std::future::Future<Output = Result<ExitCode, CliError>>) -> i32 {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            return CliError::protocol(format!("cannot start the async runtime: {e}"))
                .report_as(cli.global.json, cli.global.verbose);
        }
    };
    let (json, verbose) = (cli.global.json, cli.global.verbose);
    let code = runtime.block_on(async {
        match work.await {
            Ok(code) => code.code(),
            Err(e) => e.report_as(json, verbose),
        }
    });
    // Background tasks (server readers) must not hold the process up.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    code
}

/// A `--timeout` that is running: when it ends, and how long it was.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    at: tokio::time::Instant,
    total: std::time::Duration,
}

impl Deadline {
    /// `timeout` from now, if there is one.
    pub(crate) fn after(timeout: Option<std::time::Duration>) -> Option<Deadline> {
        // `parse_timeout` allows at most a week, so the sum cannot overflow.
        timeout.map(|total| Deadline { at: tokio::time::Instant::now() + total, total })
    }
}

/// `work`, given up on (dropped: its request cancelled) when `deadline` passes, with exit
/// code 7 naming what was `doing`.
pub(crate) async fn bounded<T>(
    deadline: Option<Deadline>,
    doing: &str,
    work: impl std::future::Future<Output = Result<T, CliError>>,
) -> Result<T, CliError> {
    match deadline {
        None => work.await,
        Some(d) => match tokio::time::timeout_at(d.at, work).await {
            Ok(result) => result,
            Err(_) => Err(CliError::timed_out(d.total, doing)),
        },
    }
}

async fn run_async(cli: &Cli) -> Result<ExitCode, CliError> {
    let deadline = Deadline::after(cli.global.timeout);
    match &cli.command {
        Command::Login(args) => return bounded(deadline, "logging in", auth::login(cli, args)).await,
        Command::Logout(args) => return auth::logout(cli, args),
        Command::Configs => return configs::run(cli),
        _ => {}
    }
    let session = bounded(deadline, "starting the servers", start(cli, None)).await?;
    let doing = format!("running `{}`", cli.command.name());
    let result = bounded(deadline, &doing, run_command(cli, &session)).await;
    if cli.global.server_logs {
        session.print_server_logs();
    }
    session.manager.close().await;
    result
}

/// Start the servers of `cli` (with `live` hooks for `mcp shell`). On a terminal, a server that
/// needs a login is offered one, and the servers are started again after it.
pub(crate) async fn start(cli: &Cli, live: Option<&Live>) -> Result<Started, CliError> {
    match setup::start(cli, live).await {
        Err(NotStarted::NeedsLogin { name, error }) if setup::offers_login(cli) => {
            if !auth::offer_login(cli, &name).await? {
                return Err(error);
            }
            setup::start(cli, live).await.map_err(NotStarted::into_error)
        }
        other => other.map_err(NotStarted::into_error),
    }
}

/// Run `cli`'s subcommand on servers that are already started: the one implementation of each
/// subcommand, for a one-shot `mcp` and for each line of `mcp shell`. `cli`'s global options
/// other than `--json`, `--save` and `--verbose` were used when the servers started.
pub(crate) async fn run_command(cli: &Cli, session: &Started) -> Result<ExitCode, CliError> {
    let manager = &session.manager;
    let json = cli.global.json;
    match &cli.command {
        Command::Tools(args) => lists::tools(session, args.schema, json).await,
        Command::Prompts => lists::prompts(manager, json),
        Command::Resources => lists::resources(manager, json),
        Command::Templates => lists::templates(manager, json),
        Command::Status => lists::status(session, json),
        Command::Call(args) => call(cli, session, args).await,
        Command::Prompt(args) => prompt(manager, args, json).await,
        Command::Read(args) => read(cli, manager, args).await,
        Command::Skills => skills::skills(manager, json).await,
        Command::Skill(args) => skills::skill(manager, args, json).await,
        Command::Chat(args) => chat::run(session, args).await,
        Command::ServeDemo | Command::Shell => Err(CliError::usage(format!("{} runs on its own", cli.command.name()))),
        Command::Login(_) | Command::Logout(_) | Command::Configs => {
            Err(CliError::usage("login, logout and configs run on their own"))
        }
    }
}

/// A manager error as a one-line CLI error with the exit code of its kind.
pub(crate) fn manager_error(error: ManagerError) -> CliError {
    CliError::from(&error)
}

fn print(text: &str) -> Result<(), CliError> {
    crate::output::terminal::outln(text);
    Ok(())
}

fn print_json(value: &Value) -> Result<(), CliError> {
    print(&crate::output::terminal::json_text(value))
}

async fn call(cli: &Cli, session: &setup::Started, args: &CallArgs) -> Result<ExitCode, CliError> {
    let manager = &session.manager;
    let route = session.resolve_tool(&args.tool).await?;
    let arguments =
        coerce::build_arguments(args.args.as_deref(), &args.pairs, &route.tool().input_schema, std::io::stdin())
            .map_err(|e| CliError::from(&e))?;
    // `--timeout` bounds the whole command (see `bounded`); the server's request timeout stays.
    let options = RequestOptions { progress: setup::progress_reporter(), timeout: None };
    let task = TaskOptions {
        mode: args.task.then_some(TaskMode::Always),
        observer: crate::task_display::observer(),
        ..Default::default()
    };
    let (route, result) =
        manager.call_tool_with(&route.tool().name, Some(arguments), options, task).await.map_err(manager_error)?;
    let saved = match &cli.global.save {
        Some(dir) => views::save_call_media(dir, &route.tool().name, &result)?,
        None => Vec::new(),
    };
    if cli.global.json {
        let mut document = views::call_result_json(route.server(), &route.tool().name, &result, &saved);
        if let (Some(id), Value::Object(members)) = (result_task_id(&result), &mut document) {
            members.insert("taskId".into(), id.into());
        }
        print_json(&document)?;
    } else {
        print(&views::call_result_text(&result, &saved))?;
    }
    Ok(exit::tool_result_exit_code(&result))
}

async fn prompt(manager: &McpManager, args: &PromptArgs, json: bool) -> Result<ExitCode, CliError> {
    let arguments = coerce::string_pairs(&args.pairs).map_err(|e| CliError::from(&e))?;
    let (server, result) = manager.get_prompt(&args.name, arguments).await.map_err(manager_error)?;
    if json {
        print_json(&views::prompt_result_json(&server, &args.name, &result))?;
    } else {
        print(&views::prompt_result_text(&result))?;
    }
    Ok(ExitCode::Ok)
}

async fn read(cli: &Cli, manager: &McpManager, args: &ReadArgs) -> Result<ExitCode, CliError> {
    let (server, result) = manager.read_resource(&args.uri).await.map_err(manager_error)?;
    let saved = match &cli.global.save {
        Some(dir) => views::save_read_media(dir, &result.contents)?,
        None => Vec::new(),
    };
    if cli.global.json {
        print_json(&views::read_result_json(&server, &args.uri, &result.contents, &saved))?;
    } else {
        print(&views::read_result_text(&result.contents, &saved))?;
    }
    Ok(ExitCode::Ok)
}
