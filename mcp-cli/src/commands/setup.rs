//! Which servers a command uses, and starting the manager on them: the bootstrap every command
//! shares, which depends on no command (`mcp login` and `chat` build on it, not the reverse).
//!
//! Registrations and tokens live in the user's file store (`auth.json` in `$MCP_AUTH_DIR`, else
//! the platform's config directory); a server that needs a login fails the start with
//! [`NotStarted::NeedsLogin`], and the caller decides whether to offer one.
//!
//! The servers come from `--stdio -- CMD ARGS...`, `--url URL`, `--config FILE`, a config file in
//! the working directory, or the built-in demo server (said on stderr), narrowed by `--server`.
//! The host side follows the config's `[mcp.client]` settings: it offers roots only when the
//! user gave some (`--root DIR`, else the configured roots; with neither it does not declare
//! the roots capability, so a server such as server-filesystem keeps to its own directories),
//! asks on a terminal (except in `chat`, whose stdin is the conversation) and declines
//! elsewhere unless elicitation is disabled, and answers sampling only in `chat` (with the chat
//! LLM) unless it is disabled. Server text reaches the terminal only through
//! [`crate::output::terminal`].

use std::io::IsTerminal as _;
use std::sync::Arc;

use host_bridge::{ElicitationPolicy, HostBridge, Roots, file_root};
use mcp_manager::ServerState;
use mcp_manager::config::{ConfigError, McpConfig, ProcessEnv, ServerConfig, TransportChoice};
use mcp_manager::manager::{
    AuthOptions, ConflictKind, ManagerOptions, McpManager, McpToolProvider, RoutedTool, ServerStatus,
};
use mcp_manager::session::ProgressCallback;
use mcp_transport::Secret;
use mcp_transport::auth::browser::BrowserStep;
use mcp_transport::auth::store::{FileStore, MemoryStore, TokenStore};
use tool_system::{ToolExecutionContext, ToolRegistry};

use super::manager_error;
use crate::cli::{Cli, Command};
use crate::discover;
use crate::exit::{CliError, ExitCode};
use crate::output::terminal;

/// The token store of this user (in memory when there is no home directory).
fn store() -> Arc<dyn TokenStore> {
    match FileStore::for_user() {
        Some(store) => Arc::new(store),
        None => Arc::new(MemoryStore::new()),
    }
}

/// The manager's authorization options: the user's store, and `browser` for a login.
pub(crate) fn options(browser: Option<Arc<dyn BrowserStep>>) -> AuthOptions {
    AuthOptions { store: store(), browser }
}

/// The error of a command whose server needs a login.
pub(crate) fn login_needed(name: &str, message: &str) -> CliError {
    CliError::new(ExitCode::AuthRequired, format!("server {name:?} requires a login: run `mcp login {name}`"))
        .with_detail(message.to_owned())
}

/// The error of a command whose server refused authorization (or whose grant failed) without
/// a login being what is missing: exit 3, one line, and for an unattended grant no offer of a
/// login (a browser would not help).
pub(crate) fn auth_failed(config: &McpConfig, name: &str, message: &str) -> CliError {
    let unattended = config.server(name).is_some_and(|s| s.oauth.grant.is_unattended());
    let message = if unattended {
        format!(
            "{message} (an unattended grant: a browser login would not help; check the credentials in its oauth settings)"
        )
    } else {
        message.to_owned()
    };
    CliError::auth_required(message)
}

/// A started manager and what the command needs around it.
pub(crate) struct Started {
    pub(crate) manager: McpManager,
    /// The servers, as resolved.
    pub(crate) config: McpConfig,
    /// The registry the LLM-facing names come from (the manager's tools as provider `mcp`).
    pub(crate) registry: ToolRegistry,
}

/// Whether this run may ask the user to log in: stdin and stderr are a terminal, and stdin is
/// not the chat's conversation.
pub(crate) fn offers_login(cli: &Cli) -> bool {
    let chatting = matches!(cli.command, crate::cli::Command::Chat(_));
    std::io::stdin().is_terminal() && terminal::stderr_is_terminal() && !cli.global.json && !chatting
}

/// What `mcp shell` shows as it comes, whatever `--server-logs` says: every server
/// notification, and each stderr line of a stdio server (the shell sanitizes both).
#[derive(Clone)]
pub(crate) struct Live {
    /// Gets each notification, with the server's name.
    pub(crate) notification: host_bridge::NotificationCallback,
    /// Gets each stderr line, after the server's name.
    pub(crate) stderr: ServerStderr,
}

/// Gets a stdio server's stderr lines as they come: the server's name, then the line.
pub(crate) type ServerStderr = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// Why [`start`] did not start.
pub(crate) enum NotStarted {
    /// No server is ready and `name` needs a login.
    NeedsLogin { name: String, error: CliError },
    /// Any other reason.
    Failed(CliError),
}

impl NotStarted {
    pub(crate) fn into_error(self) -> CliError {
        match self {
            NotStarted::NeedsLogin { error, .. } | NotStarted::Failed(error) => error,
        }
    }
}

impl From<CliError> for NotStarted {
    fn from(error: CliError) -> Self {
        NotStarted::Failed(error)
    }
}

/// How long each step of a server's shutdown waits when `mcp` ends (stdin closed, then
/// SIGTERM, then SIGKILL).
pub(crate) const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

/// Resolve the servers of `cli` and start them; fails (exit 4) when none of the wanted ones
/// became ready, telling apart a server that needs a login.
pub(crate) async fn start(cli: &Cli, live: Option<&Live>) -> Result<Started, NotStarted> {
    let mut config = resolve_config(cli)?;
    // `mcp call SERVER/TOOL` picks the server as `--server SERVER` does.
    let from_call = match &cli.command {
        Command::Call(call) if cli.global.server.is_none() => {
            server_prefix(&call.tool, config.servers.iter().map(|s| s.name.as_str())).map(str::to_owned)
        }
        _ => None,
    };
    if let Some(name) = cli.global.server.as_ref().or(from_call.as_ref()) {
        if !config.servers.iter().any(|s| &s.name == name) {
            let known: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
            return Err(CliError::usage(format!(
                "no server named {name:?} in the config (servers: {})",
                known.join(", ")
            ))
            .into());
        }
        config.servers.retain(|s| &s.name == name);
        for s in &mut config.servers {
            s.enabled = true;
        }
    }
    // `mcp` is about to exit once its command is done: a server that does not end with its
    // input gets a short grace before SIGTERM (a host keeps the library's longer default).
    for server in &mut config.servers {
        server.close_grace.get_or_insert(CLOSE_GRACE);
    }
    if !config.servers.iter().any(|s| s.enabled) {
        return Err(CliError::usage("the config names no enabled server").into());
    }
    if live.is_some() {
        // The shell shows log messages as they come: ask for them where the config does not.
        for server in &mut config.servers {
            server.log_level.get_or_insert(mcp_protocol::types::logging::LoggingLevel::Info);
        }
    }
    let bridge = host_bridge(cli, &config, live)?;
    let mut callbacks = bridge.callbacks();
    if callbacks.sampling.is_none() && config.client.sampling.enabled {
        // No LLM: a server that asks for sampling is told how to configure one.
        callbacks.sampling = Some(Arc::new(super::llm::NoLlm));
    }
    let mut options = ManagerOptions { callbacks, authorization: options(None), ..Default::default() };
    if let Some(live) = live {
        options.transport_override = Some(live_stderr(live.stderr.clone()));
    }
    let spinner = Spinner::start("connecting to servers");
    let manager = McpManager::start(config.clone(), options).await;
    drop(spinner);
    let status = manager.status();
    let failed: Vec<_> = status.iter().filter(|s| s.state == ServerState::Failed).collect();
    if !status.iter().any(|s| matches!(s.state, ServerState::Ready | ServerState::Degraded)) {
        let unattended = |name: &str| config.server(name).is_some_and(|c| c.oauth.grant.is_unattended());
        // A server whose grant runs unattended is never offered a login: a login would not help.
        if let Some(s) = failed.iter().find(|s| s.needs_login && !unattended(&s.name)) {
            let message = s.last_error.clone().unwrap_or_default();
            manager.close().await;
            let error = login_needed(&s.name, &message);
            return Err(NotStarted::NeedsLogin { name: s.name.clone(), error });
        }
        if let Some(s) = failed.iter().find(|s| s.auth_failed) {
            let message = s.last_error.clone().unwrap_or_default();
            manager.close().await;
            return Err(NotStarted::Failed(auth_failed(&config, &s.name, &message)));
        }
        let first = failed.first();
        let message = first.and_then(|s| s.last_error.clone()).unwrap_or_else(|| "no server is ready".into());
        let tail = first.map(|s| s.stderr_tail.join("\n")).filter(|t| !t.is_empty());
        manager.close().await;
        let error = CliError::unreachable(message);
        return Err(NotStarted::Failed(match tail {
            Some(tail) => error.with_detail(format!("stderr of the server:\n{tail}")),
            None => error,
        }));
    }
    warn_hidden_tools(&status);
    // Some servers work: the others are reported, and the command goes on.
    for s in &failed {
        terminal::errln(&format!(
            "mcp: server {:?} failed: {}",
            s.name,
            s.last_error.as_deref().unwrap_or("unknown error")
        ));
        for line in &s.stderr_tail {
            terminal::errln(&format!("  stderr: {line}"));
        }
        let unattended = config.server(&s.name).is_some_and(|c| c.oauth.grant.is_unattended());
        if s.needs_login && !unattended {
            terminal::errln(&format!("  log in with: mcp login {}", s.name));
        }
    }
    let registry = ToolRegistry::new();
    registry.register(McpToolProvider::new(manager.clone())).await;
    Ok(Started { manager, config, registry })
}

pub(crate) fn resolve_config(cli: &Cli) -> Result<McpConfig, CliError> {
    let global = &cli.global;
    if global.stdio {
        let Some((command, args)) = global.stdio_command.split_first() else {
            return Err(CliError::usage("--stdio needs a command after `--` (mcp --stdio -- CMD ARGS...)"));
        };
        let name = global.name.clone().unwrap_or_else(|| crate::adhoc::stdio_server_name(command, args));
        let mut server = ServerConfig::new(name);
        server.command = Some(command.clone());
        server.args = args.to_vec();
        return Ok(McpConfig { servers: vec![server], client: Default::default() });
    }
    if let Some(url) = &global.url {
        // The URL may carry credentials (userinfo, a token in the query): errors show it redacted.
        let shown = || mcp_transport::redact::redact_url_str(url);
        let parsed =
            url::Url::parse(url).map_err(|e| CliError::usage(format!("--url {:?} is not a URL: {e}", shown())))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(CliError::usage(format!("--url {:?} must be http or https", shown())));
        }
        let name = global.name.clone().unwrap_or_else(|| crate::adhoc::remote_server_name(&parsed));
        let mut server = ServerConfig::new(name);
        server.transport = TransportChoice::Remote;
        server.url = Some(url.clone());
        server.headers = global.header_pairs().map_err(CliError::usage)?.into_iter().collect();
        if let Some(var) = &global.bearer_env {
            let token = std::env::var(var)
                .map_err(|_| CliError::usage(format!("--bearer-env {var}: the variable is not set")))?;
            server.bearer_token = Some(Secret::new(token));
        }
        return Ok(McpConfig { servers: vec![server], client: Default::default() });
    }
    let source = discover::discover_here(global.config.as_deref())?;
    if let Some(note) = source.announcement() {
        terminal::errln(&note);
    }
    let config = match (source.path(), source.builtin_config()) {
        (Some(path), _) => McpConfig::load_noted(path, source.format(), source.project(), &ProcessEnv).map(|loaded| {
            // What a host's format ignored (its own keys, a goose builtin): said with -v.
            if global.verbose {
                for note in &loaded.notes {
                    terminal::errln(&format!("mcp: {}: {note}", path.display()));
                }
            }
            loaded.config
        }),
        (None, Some(builtin)) => McpConfig::parse(&builtin.to_string(), None, "built-in demo config", &ProcessEnv),
        (None, None) => return Err(CliError::usage("no config")),
    };
    // The problems name the server and field; the file is named here.
    config.map_err(|e| match (&e, source.path()) {
        (ConfigError::Invalid(_), Some(path)) => CliError::usage(format!("{}: {e}", path.display())),
        _ => CliError::usage(e.to_string()),
    })
}

/// The host side, following the `[mcp.client]` settings: roots only when the user gave some
/// (`--root`, else the config's roots; never the working directory unasked), elicitation (unless
/// disabled) through the terminal or declined when unattended, and sampling (unless disabled)
/// only in `chat`, with the chat LLM.
fn host_bridge(cli: &Cli, config: &McpConfig, live: Option<&Live>) -> Result<HostBridge, CliError> {
    // The configured roots, when there are some; without any, roots are not declared at all.
    let mut builder = HostBridge::builder()
        .client_config(&config.client)
        .map_err(|e| CliError::usage(format!("config mcp.client.roots: {e}")))?;
    if !cli.global.roots.is_empty() {
        // The command line wins over the config.
        builder = builder.roots(flag_roots(&cli.global.roots)?);
    }
    // In `chat`, stdin carries the conversation: a form read from it would race the chat for
    // the user's lines, so elicitation is declined there too.
    let chatting = matches!(cli.command, crate::cli::Command::Chat(_));
    let interactive = std::io::stdin().is_terminal() && terminal::stderr_is_terminal() && !cli.global.json && !chatting;
    if interactive {
        builder = builder.elicitation(Arc::new(super::ask::TerminalAsk));
    } else {
        builder = builder.elicitation(Arc::new(ElicitationPolicy::DeclineAll));
    }
    if let Some(llm) = super::llm::sampling_llm(cli, &config.client.sampling)? {
        builder = builder.llm_client(llm);
    }
    if let Some(live) = live {
        builder = builder.on_notification(live.notification.clone());
    } else if cli.global.server_logs {
        builder = builder.on_notification(Arc::new(|server: &str, n: &mcp_protocol::messages::ServerNotification| {
            if let mcp_protocol::messages::ServerNotification::LoggingMessage(Some(p)) = n {
                // A string is shown as text, anything else as JSON; sanitized either way.
                let data = p.data.as_str().map_or_else(|| p.data.to_string(), str::to_owned);
                terminal::errln(&format!("[{server}] {:?}: {data}", p.level));
            }
        }));
    }
    Ok(builder.build())
}

/// Stdio servers as their config says, each stderr line also handed to `sink` with the server's
/// name; remote servers as usual.
fn live_stderr(sink: ServerStderr) -> mcp_manager::manager::PlanOverride {
    Arc::new(move |server: &ServerConfig| {
        let mut stdio = server.stdio_config().filter(|c| !c.command.trim().is_empty())?;
        let (sink, name) = (sink.clone(), server.name.clone());
        stdio.stderr_sink = Some(Arc::new(move |line: &str| sink(&name, line)));
        Some(mcp_manager::connection::TransportPlan::single(mcp_manager::connection::stdio_factory(stdio)))
    })
}

/// The `--root` directories as roots: each must exist and be a directory, and is shared as its
/// canonical path (symbolic links resolved), so what is shared is what the user named.
fn flag_roots(dirs: &[std::path::PathBuf]) -> Result<Roots, CliError> {
    let mut roots = Vec::new();
    for dir in dirs {
        let canonical =
            std::fs::canonicalize(dir).map_err(|e| CliError::usage(format!("--root {}: {e}", dir.display())))?;
        if !canonical.is_dir() {
            return Err(CliError::usage(format!("--root {} is not a directory", dir.display())));
        }
        roots.push(file_root(&canonical, None).map_err(|e| CliError::usage(format!("--root {}: {e}", dir.display())))?);
    }
    Roots::new(roots).map_err(|e| CliError::usage(format!("--root: {e}")))
}

impl Started {
    /// The route of a tool named by its MCP name or its LLM-facing name (`server__tool`).
    pub(crate) async fn resolve_tool(&self, name: &str) -> Result<RoutedTool, CliError> {
        let routing = self.manager.routing();
        if let Some(route) = routing.tool(name) {
            return Ok(route.clone());
        }
        // SERVER/TOOL: the server was picked at start; the tool is the rest.
        if let Some(server) = server_prefix(name, self.config.servers.iter().map(|s| s.name.as_str()))
            && let Some(route) = routing.tool(&name[server.len() + 1..]).filter(|r| **r.server() == *server)
        {
            return Ok(route.clone());
        }
        self.registry.tools(&ToolExecutionContext::default()).await;
        if let Some(exposed) = self.registry.lookup(name)
            && let Some(route) = routing.tool(&exposed.spec.name)
        {
            return Ok(route.clone());
        }
        Err(manager_error(routing.missing_tool(name)))
    }

    /// `--server-logs`: each server's last stderr lines.
    pub(crate) fn print_server_logs(&self) {
        for s in self.manager.status() {
            for line in &s.stderr_tail {
                terminal::errln(&format!("[{}] {line}", s.name));
            }
        }
    }
}

/// The server that `SERVER/TOOL` names, when `name` has that form and `SERVER` is one of
/// `servers`.
pub(crate) fn server_prefix<'a>(name: &str, mut servers: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let (prefix, tool) = name.split_once('/')?;
    if tool.is_empty() {
        return None;
    }
    servers.find(|s| *s == prefix)
}

/// One line on stderr per server whose tools another server hides (the first in config order
/// keeps a name): which tools, by whom, and how to reach them.
fn warn_hidden_tools(status: &[ServerStatus]) {
    for line in hidden_tools_lines(status) {
        terminal::errln(&line);
    }
}

/// The lines of [`warn_hidden_tools`].
pub(crate) fn hidden_tools_lines(status: &[ServerStatus]) -> Vec<String> {
    let mut lines = Vec::new();
    for s in status {
        // (winner, tools), in the order of the conflicts.
        let mut by_winner: Vec<(&str, Vec<&str>)> = Vec::new();
        for c in s.conflicts.iter().filter(|c| c.what == "tool" && c.server == s.name) {
            if let ConflictKind::TakenBy(winner) = &c.kind {
                match by_winner.iter_mut().find(|(w, _)| *w == winner.as_str()) {
                    Some((_, tools)) => tools.push(&c.name),
                    None => by_winner.push((winner, vec![c.name.as_str()])),
                }
            }
        }
        for (winner, tools) in by_winner {
            const SHOWN: usize = 5;
            let mut names = tools.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
            if tools.len() > SHOWN {
                names.push_str(&format!(", … ({} more)", tools.len() - SHOWN));
            }
            let count = if tools.len() == 1 {
                "1 of its tools is".to_owned()
            } else {
                format!("{} of its tools are", tools.len())
            };
            lines.push(format!(
                "mcp: server {:?}: {count} hidden by server {winner:?}, which has the same names ({names}); \
                 reach them with --server {} or {}/TOOL",
                s.name, s.name, s.name
            ));
        }
    }
    lines
}

/// A progress reporter for long calls, on a terminal only.
pub(crate) fn progress_reporter() -> Option<ProgressCallback> {
    if !terminal::stderr_is_terminal() {
        return None;
    }
    Some(Arc::new(|p: mcp_protocol::types::progress::ProgressParams| terminal::status_line(&progress_text(&p))))
}

/// The progress line for `p`: `progress 2/3 message` (the message as the server sent it; the
/// terminal module sanitizes it).
pub(crate) fn progress_text(p: &mcp_protocol::types::progress::ProgressParams) -> String {
    let total = p.total.as_ref().map(|t| format!("/{t}")).unwrap_or_default();
    let message = p.message.as_deref().unwrap_or("");
    format!("progress {}{total} {message}", p.progress)
}

/// "connecting..." on stderr while servers start, on a terminal only; cleared when dropped.
struct Spinner(Option<tokio::task::JoinHandle<()>>);

impl Spinner {
    fn start(what: &'static str) -> Spinner {
        if !terminal::stderr_is_terminal() {
            return Spinner(None);
        }
        Spinner(Some(tokio::spawn(async move {
            let frames = ['|', '/', '-', '\\'];
            for i in 0usize.. {
                terminal::status_line(&format!("{} {what}...", frames[i % frames.len()]));
                tokio::time::sleep(std::time::Duration::from_millis(120)).await;
            }
        })))
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
            terminal::clear_status_line();
        }
    }
}
