//! The command line of `mcp`, as clap definitions.
//!
//! [`parse`] is the entry point: it takes the stdio server's command line off the end
//! (`mcp --stdio tools -- npx -y some-server`, everything after `--`) and leaves the rest to
//! clap. Header values may hold secrets, so [`Header`] never shows its value in `Debug`, and a
//! malformed one is reported without it.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::exit::EXIT_CODES_HELP;

const AFTER_HELP: &str = "\
Servers:
  Without --config, mcp looks for ./mcp.json, ./.vscode/mcp.json and ./.mcp.json; without any, it
  uses its built-in demo server (mcp serve-demo) and says so on stderr.
  Other hosts' servers: `mcp configs` lists the files found; `mcp --config goose tools` uses one.
  Ad-hoc servers:  mcp --stdio tools -- npx -y @modelcontextprotocol/server-everything
                   mcp --url http://127.0.0.1:8000/mcp --bearer-env MY_TOKEN tools

What servers get from mcp:
  Roots    none, unless you give some: --root DIR (repeatable), or `roots` under [mcp.client] in a
           TOML config (--root replaces those). The working directory is never offered unasked.
  Forms    a server's elicitation questions are shown on stderr and answered by you when stdin and
           stderr are a terminal (an empty answer declines); otherwise, with --json and in chat,
           they are declined.
  Sampling only in `mcp chat`: servers may ask the chat LLM (with your API key) for completions.
  [mcp.client] `sampling.enabled = false` / `elicitation.enabled = false` turn either off.
  Text from servers is shown with control characters escaped; --json shows it exactly.

Examples:
  mcp tools                                   list every tool of every server
  mcp call add a=2 b=3                        key=value pairs take the types of the tool's schema
  mcp call stats numbers=1,2,3 --json         one JSON document on stdout
  mcp call echo --args '{\"text\": \"hi\"}'      arguments as JSON (or @file.json, or - for stdin)
  mcp call image --save out/                  images and blobs are saved into out/
  mcp read demo://greeting/Ada                read a resource
  mcp shell                                   keep the servers connected; type subcommands at a prompt
  mcp --timeout 30s call slow                 give up after 30 s (exit code 7)
";

/// The `mcp` command line.
#[derive(Debug, Parser)]
#[command(
    name = "mcp",
    version,
    about = "List and call the tools, prompts and resources of MCP servers",
    long_about = "List and call the tools, prompts and resources of MCP servers (Model Context Protocol), \
                  show their status, and chat with an LLM that uses them. Works out of the box on a \
                  built-in demo server.",
    after_help = EXIT_CODES_HELP,
    after_long_help = format!("{AFTER_HELP}\n{EXIT_CODES_HELP}"),
    propagate_version = true,
    max_term_width = 110
)]
pub struct Cli {
    /// Options that apply to every subcommand.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options that apply to every subcommand (they may come before or after it).
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Config file, in any format the manager reads (mcpServers JSON, VS Code's mcp.json, TOML,
    /// goose YAML, Zed settings), or a host whose file to use: claude-desktop, claude-code,
    /// cursor, vscode, windsurf, codex, goose, zed (`mcp configs` lists them; ./NAME is a file)
    #[arg(long, short = 'c', global = true, value_name = "FILE|HOST", conflicts_with_all = ["stdio", "url"])]
    pub config: Option<PathBuf>,

    /// Use only the server of this name from the config
    #[arg(long, short = 's', global = true, value_name = "NAME")]
    pub server: Option<String>,

    /// Start one stdio server: its command and arguments follow `--` at the end of the line
    #[arg(long, global = true, conflicts_with = "url")]
    pub stdio: bool,

    /// The stdio server's command line (everything after `--`; filled in by [`parse`]).
    #[arg(skip)]
    pub stdio_command: Vec<String>,

    /// Connect to one remote server (streamable HTTP, falling back to HTTP+SSE)
    #[arg(long, global = true, value_name = "URL")]
    pub url: Option<String>,

    /// The name of the --stdio or --url server (default: from its package, script or host), as
    /// the LLM sees it in `NAME__tool`
    #[arg(long, global = true, value_name = "NAME")]
    pub name: Option<String>,

    /// An HTTP header for --url, as NAME:VALUE (repeatable)
    #[arg(long = "header", short = 'H', global = true, value_name = "NAME:VALUE", requires = "url")]
    pub headers: Vec<Header>,

    /// Send `Authorization: Bearer <token>` with --url, the token read from this environment variable
    #[arg(long, global = true, value_name = "VAR", requires = "url")]
    pub bearer_env: Option<String>,

    /// Print one JSON document with stable field names instead of tables
    #[arg(long, global = true)]
    pub json: bool,

    /// Save images, audio and blobs from results into this directory
    #[arg(long, global = true, value_name = "DIR")]
    pub save: Option<PathBuf>,

    /// Show the servers' log messages, and the last stderr lines of servers that exited or failed
    #[arg(long, global = true)]
    pub server_logs: bool,

    /// Write the spans of connections, requests and tool calls to FILE, one JSON line each
    /// (OpenTelemetry MCP conventions; created or truncated, at most 64 MiB)
    #[arg(long, global = true, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// Offer this directory to the servers as a root (repeatable; replaces the config's roots).
    /// Without --root and config roots, no roots are offered
    #[arg(long = "root", global = true, value_name = "DIR")]
    pub roots: Vec<PathBuf>,

    /// Explain errors in detail
    #[arg(long, short = 'v', global = true)]
    pub verbose: bool,

    /// Give up after DURATION (30s, 500ms, 2m; a bare number is seconds), start-up included: the
    /// running request is cancelled, the servers are shut down, and mcp exits with code 7. In
    /// `mcp shell` it bounds the start-up and each line
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_timeout)]
    pub timeout: Option<std::time::Duration>,
}

/// What `mcp` does.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tools of every server (name, server, description, the name an LLM sees)
    Tools(ToolsArgs),
    /// Call a tool, with arguments as JSON (--args) or key=value pairs
    Call(CallArgs),
    /// List the prompts of every server
    Prompts,
    /// Get a prompt, filled in with key=value arguments
    Prompt(PromptArgs),
    /// List the resources of every server
    Resources,
    /// List the resource templates of every server
    Templates,
    /// Read a resource
    Read(ReadArgs),
    /// List the skills of every server (the skills extension); no skill file is read
    Skills,
    /// Load a skill and print its SKILL.md, verified against the listing (--json: every file)
    Skill(SkillArgs),
    /// Show each server's state, transport, protocol revision, counts, authorization and last error
    Status,
    /// List the MCP hosts' config files found on this machine (Claude, Cursor, VS Code, goose...)
    /// and their servers, without starting any
    Configs,
    /// Log in to a remote server that asks for OAuth authorization (opens the browser)
    Login(LoginArgs),
    /// Forget the registration and tokens kept for a remote server
    Logout(LogoutArgs),
    /// Chat with an OpenAI-compatible LLM that can call every tool
    Chat(ChatArgs),
    /// Keep the servers connected and run these subcommands at a prompt (history, Tab completion
    /// of commands, tools and argument keys; notifications and server stderr shown as they come)
    Shell,
    /// Run the built-in demo MCP server on stdin and stdout
    ServeDemo,
}

impl Command {
    /// The subcommand's name as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Tools(_) => "tools",
            Command::Call(_) => "call",
            Command::Prompts => "prompts",
            Command::Prompt(_) => "prompt",
            Command::Resources => "resources",
            Command::Templates => "templates",
            Command::Read(_) => "read",
            Command::Skills => "skills",
            Command::Skill(_) => "skill",
            Command::Status => "status",
            Command::Configs => "configs",
            Command::Login(_) => "login",
            Command::Logout(_) => "logout",
            Command::Chat(_) => "chat",
            Command::Shell => "shell",
            Command::ServeDemo => "serve-demo",
        }
    }
}

/// `mcp tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Show each tool's input and output schemas
    #[arg(long)]
    pub schema: bool,
}

/// `mcp login`.
#[derive(Debug, Args)]
#[command(after_help = "Tokens and registrations are kept in auth.json in $MCP_AUTH_DIR, else \
    $XDG_CONFIG_HOME/mcp/ (~/.config/mcp/), readable by you only; later runs reuse them.")]
pub struct LoginArgs {
    /// The server (as the config names it); may be left out when there is one server
    pub name: Option<String>,

    /// Do not open a browser: print the authorization URL on stderr, on a line of its own, and
    /// wait for the redirect on the loopback listener
    #[arg(long)]
    pub no_browser: bool,

    /// How long to wait for the login to complete, in seconds
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub wait: u64,
}

/// `mcp logout`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The server (as the config names it); may be left out when there is one server
    pub name: Option<String>,
}

/// `mcp call`.
#[derive(Debug, Args)]
#[command(after_help = "Values take the type the tool's inputSchema declares: a=2 is a number for a number \
    argument, tags=a,b an array, on=true a boolean, opts='{\"x\":1}' an object. key:=JSON passes JSON as is.")]
pub struct CallArgs {
    /// The tool's name (as `mcp tools` lists it; SERVER/TOOL when several servers have it)
    pub tool: String,

    /// Arguments as a JSON object: inline, @FILE, or - to read stdin
    #[arg(long, value_name = "JSON|@FILE|-")]
    pub args: Option<String>,

    /// Arguments as KEY=VALUE pairs (added to --args, and winning over it)
    #[arg(value_name = "KEY=VALUE")]
    pub pairs: Vec<String>,

    /// Run the call as a task where the tool allows it (`taskSupport: optional`); a tool that
    /// requires a task always runs as one
    #[arg(long)]
    pub task: bool,
}

/// The longest `--timeout`: a week. A longer one is refused rather than risking an overflow
/// when it is added to the current time.
pub const MAX_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 60 * 60);

/// A `--timeout`: a duration such as `30s`, `500ms`, `2m` or `1h 30m` (read by `humantime`), or
/// a bare decimal number of seconds; positive and at most [`MAX_TIMEOUT`].
pub fn parse_timeout(text: &str) -> Result<std::time::Duration, String> {
    let trimmed = text.trim();
    let duration = if trimmed.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && trimmed.chars().all(|c| c.is_ascii_digit() || c == '.')
    {
        let secs: f64 = trimmed.parse().map_err(|_| format!("{text:?} is not a number of seconds"))?;
        if secs > MAX_TIMEOUT.as_secs_f64() {
            return Err(too_long(text));
        }
        std::time::Duration::try_from_secs_f64(secs).map_err(|e| format!("{text:?}: {e}"))?
    } else {
        humantime::parse_duration(trimmed).map_err(|e| {
            // Numbers too large for a duration overflow inside humantime.
            if matches!(e, humantime::DurationError::NumberOverflow) {
                too_long(text)
            } else {
                format!("{text:?} is not a duration ({e}; e.g. 30s, 500ms, 2m, or a number of seconds)")
            }
        })?
    };
    if duration.is_zero() {
        return Err(format!("{text:?} must be longer than zero"));
    }
    if duration > MAX_TIMEOUT {
        return Err(too_long(text));
    }
    Ok(duration)
}

fn too_long(text: &str) -> String {
    format!("{text:?} is longer than the most allowed, {} s (a week)", MAX_TIMEOUT.as_secs())
}

/// `mcp prompt`.
#[derive(Debug, Args)]
pub struct PromptArgs {
    /// The prompt's name
    pub name: String,

    /// Arguments as KEY=VALUE pairs (prompt arguments are strings)
    #[arg(value_name = "KEY=VALUE")]
    pub pairs: Vec<String>,
}

/// `mcp skill`.
#[derive(Debug, Args)]
pub struct SkillArgs {
    /// The skill's name, path or SKILL.md URI (as `mcp skills` lists it; --server picks the
    /// server when several list it)
    pub name: String,
}

/// `mcp read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The resource's URI (a listed one, or one a template makes)
    pub uri: String,
}

/// `mcp chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Base URL of the OpenAI-compatible API
    #[arg(long, env = "MCP_CHAT_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,

    /// The model to use
    #[arg(long, env = "MCP_CHAT_MODEL", value_name = "MODEL")]
    pub model: Option<String>,

    /// The environment variable that holds the API key
    #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
    pub api_key_env: String,
}

/// An HTTP header given as `NAME:VALUE`. Its `Debug` hides the value, which may be a secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Header(String);

impl std::fmt::Debug for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.split() {
            Ok((name, _)) => write!(f, "Header({name}: <redacted>)"),
            Err(_) => f.write_str("Header(<malformed>)"),
        }
    }
}

impl From<String> for Header {
    fn from(text: String) -> Self {
        Header(text)
    }
}

impl Header {
    /// The name and value, trimmed; the error names what is wrong without showing the value.
    pub fn split(&self) -> Result<(&str, &str), String> {
        let Some((name, value)) = self.0.split_once(':') else {
            return Err("a --header has no ':' (expected NAME:VALUE, e.g. X-Api-Key:abc)".into());
        };
        let name = name.trim();
        if name.is_empty() {
            return Err("a --header has an empty name (expected NAME:VALUE)".into());
        }
        if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(*c))) {
            return Err(format!("the --header name {name:?} holds {bad:?}, which header names cannot hold"));
        }
        Ok((name, value.trim()))
    }
}

impl GlobalArgs {
    /// The `--header`s as name and value pairs; the first malformed one is an error.
    pub fn header_pairs(&self) -> Result<Vec<(String, String)>, String> {
        self.headers.iter().map(|h| h.split().map(|(n, v)| (n.to_owned(), v.to_owned()))).collect()
    }
}

/// Parse a command line (the program name first). Everything after the first `--` is the stdio
/// server's command when `--stdio` comes before it. Help and version requests are errors of
/// kind `DisplayHelp` / `DisplayVersion`, as with clap.
pub fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let separator = args.iter().position(|a| a == "--");
    let stdio_flag = args[..separator.unwrap_or(args.len())].iter().any(|a| a == "--stdio");
    let mut stdio_command = Vec::new();
    if let (Some(i), true) = (separator, stdio_flag) {
        stdio_command = args.split_off(i + 1).into_iter().map(|a| a.to_string_lossy().into_owned()).collect();
        args.truncate(i);
    }
    if let (Some(_), true) = (separator, stdio_flag)
        && !has_subcommand(&args)
    {
        return Err(wrong_order(&args, &stdio_command));
    }
    let mut cli = Cli::try_parse_from(args)?;
    if cli.global.stdio {
        if stdio_command.is_empty() {
            return Err(Cli::command().error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "--stdio needs the server's command after `--`, e.g. mcp --stdio tools -- npx -y @modelcontextprotocol/server-everything",
            ));
        }
        cli.global.stdio_command = stdio_command;
    }
    Ok(cli)
}

/// Whether `args` (the program name first, nothing after `--`) name a subcommand: a word that
/// is one, not the value of an option before it.
fn has_subcommand(args: &[OsString]) -> bool {
    let command = Cli::command();
    let takes_value = |flag: &str| {
        command.get_arguments().any(|a| {
            a.get_action().takes_values()
                && (a.get_long().is_some_and(|l| flag == format!("--{l}"))
                    || a.get_short().is_some_and(|c| flag == format!("-{c}")))
        })
    };
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if word.starts_with('-') {
            if !word.contains('=') && takes_value(&word) {
                words.next();
            }
            continue;
        }
        return command.get_subcommands().any(|c| c.get_name() == word);
    }
    false
}

/// The error for `mcp --stdio -- CMD ARGS tools`: the subcommand went after `--`, into the
/// server's command line. It shows the line in the right order.
fn wrong_order(args: &[OsString], stdio_command: &[String]) -> clap::Error {
    let command = Cli::command();
    let is_subcommand = |w: &str| command.get_subcommands().any(|c| c.get_name() == w);
    let before: Vec<String> = args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    // The subcommand and its arguments, if the user put them at the end of the server's line.
    let (server, subcommand) = match stdio_command.iter().rposition(|w| is_subcommand(w)) {
        Some(i) if i > 0 => (&stdio_command[..i], &stdio_command[i..]),
        _ => (stdio_command, &[][..]),
    };
    let subcommand = if subcommand.is_empty() { "SUBCOMMAND".to_owned() } else { subcommand.join(" ") };
    let right = format!("mcp {} {subcommand} -- {}", before.join(" "), server.join(" "));
    command.clone().error(
        clap::error::ErrorKind::MissingSubcommand,
        format!(
            "the subcommand goes before `--` (everything after it is the server's command line); try: {}",
            right.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    fn ok(line: &str) -> Cli {
        parse(line.split_whitespace()).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn kind(line: &str) -> ErrorKind {
        parse(line.split_whitespace()).unwrap_err().kind()
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn subcommands_and_their_arguments() {
        let cli = ok("mcp call add a=2 b=3 --json");
        let Command::Call(call) = &cli.command else { panic!() };
        assert_eq!(
            (call.tool.as_str(), call.pairs.as_slice()),
            ("add", ["a=2".to_owned(), "b=3".to_owned()].as_slice())
        );
        assert!(cli.global.json && call.args.is_none());
        let cli = ok("mcp --verbose call echo --args @in.json");
        let Command::Call(call) = &cli.command else { panic!() };
        assert_eq!(call.args.as_deref(), Some("@in.json"));
        assert!(cli.global.verbose);
        assert!(matches!(ok("mcp tools --schema").command, Command::Tools(ToolsArgs { schema: true })));
        assert!(matches!(ok("mcp serve-demo").command, Command::ServeDemo));
        assert!(matches!(ok("mcp read demo://readme").command, Command::Read(r) if r.uri == "demo://readme"));
        let Command::Prompt(p) = ok("mcp prompt review_code code=x language=rust").command else { panic!() };
        assert_eq!(p.pairs.len(), 2);
        let Command::Chat(chat) = ok("mcp chat --model m1 --api-key-env KEY").command else { panic!() };
        assert_eq!((chat.model.as_deref(), chat.api_key_env.as_str()), (Some("m1"), "KEY"));
        for name in ["prompts", "resources", "templates", "status"] {
            assert_eq!(ok(&format!("mcp {name}")).command.name(), name);
        }
    }

    #[test]
    fn global_options_go_anywhere() {
        let cli = ok("mcp --config x.json tools --server demo --save out");
        assert_eq!(cli.global.config, Some(PathBuf::from("x.json")));
        assert_eq!(cli.global.server.as_deref(), Some("demo"));
        assert_eq!(cli.global.save, Some(PathBuf::from("out")));
    }

    #[test]
    fn stdio_takes_the_command_after_the_separator() {
        let cli = ok("mcp --stdio tools -- npx -y server --flag");
        assert_eq!(cli.global.stdio_command, ["npx", "-y", "server", "--flag"]);
        let cli = ok("mcp call echo text=hi --stdio -- ./server");
        assert_eq!(cli.global.stdio_command, ["./server"]);
        assert_eq!(kind("mcp --stdio tools"), ErrorKind::MissingRequiredArgument);
        assert_eq!(kind("mcp --stdio --url http://x tools -- a"), ErrorKind::ArgumentConflict);
        assert_eq!(kind("mcp --config a.json --stdio tools -- a"), ErrorKind::ArgumentConflict);
    }

    #[test]
    fn a_subcommand_after_the_separator_gets_the_right_order_shown() {
        let error = parse("mcp --stdio -- npx -y server tools".split_whitespace()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::MissingSubcommand);
        let text = error.to_string();
        assert!(text.contains("try: mcp --stdio tools -- npx -y server"), "{text}");
        let error = parse("mcp --json --stdio -- node s.js call add a=1".split_whitespace()).unwrap_err();
        assert!(error.to_string().contains("try: mcp --json --stdio call add a=1 -- node s.js"), "{error}");
        let error = parse("mcp --stdio -- ./server".split_whitespace()).unwrap_err();
        assert!(error.to_string().contains("try: mcp --stdio SUBCOMMAND -- ./server"), "{error}");
        // A value that looks like a subcommand is not one; the real one still counts.
        assert!(parse("mcp --stdio --server tools -- x".split_whitespace()).is_err());
        assert_eq!(ok("mcp --server tools --stdio call x -- srv").global.server.as_deref(), Some("tools"));
        assert_eq!(ok("mcp --stdio --name fs tools -- srv").global.name.as_deref(), Some("fs"));
    }

    #[test]
    fn timeouts_are_bounded_durations_anywhere_on_the_line() {
        use std::time::Duration;
        // Global: before or after the subcommand, and for every subcommand.
        assert_eq!(ok("mcp call slow --timeout 2.5").global.timeout, Some(Duration::from_millis(2500)));
        assert_eq!(ok("mcp --timeout 500ms tools").global.timeout, Some(Duration::from_millis(500)));
        assert_eq!(ok("mcp shell --timeout 2m").global.timeout, Some(Duration::from_secs(120)));
        assert_eq!(parse_timeout("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_timeout(" 30s "), Ok(Duration::from_secs(30)));
        assert_eq!(parse_timeout("604800"), Ok(MAX_TIMEOUT));
        assert_eq!(parse_timeout("7days"), Ok(MAX_TIMEOUT));
        for bad in ["1e19", "604800.5", "8d", "1e400", "inf", "NaN", "0", "0s", "-1", "ten", "5parsecs", "1..2"] {
            let error = parse_timeout(bad).unwrap_err();
            assert!(error.contains(&format!("{bad:?}")), "{bad}: {error}");
            assert_eq!(kind(&format!("mcp call slow --timeout={bad}")), ErrorKind::ValueValidation, "{bad}");
        }
        assert!(parse_timeout(" ").is_err());
        for huge in ["604800.5", "8d", "18446744073709551616", "99999999999999999999999s"] {
            assert!(parse_timeout(huge).unwrap_err().contains("longer than the most allowed, 604800 s"), "{huge}");
        }
        assert!(parse_timeout("ten").unwrap_err().contains("e.g. 30s"), "the error shows the form");
    }

    #[test]
    fn roots_are_repeatable_and_global() {
        for line in ["mcp --root a --root /b tools", "mcp tools --root a --root /b"] {
            assert_eq!(ok(line).global.roots, [PathBuf::from("a"), PathBuf::from("/b")], "{line}");
        }
        assert!(ok("mcp tools").global.roots.is_empty());
    }

    #[test]
    fn headers_need_a_url_and_hide_their_values() {
        assert_eq!(kind("mcp --header A:b tools"), ErrorKind::MissingRequiredArgument);
        let cli = ok("mcp --url http://127.0.0.1:1/mcp -H X-Key:secret-value -H Accept:x tools");
        assert_eq!(
            cli.global.header_pairs().unwrap(),
            [("X-Key".to_owned(), "secret-value".to_owned()), ("Accept".into(), "x".into())]
        );
        let shown = format!("{cli:?}");
        assert!(!shown.contains("secret-value") && shown.contains("X-Key"), "{shown}");
        let bad = ok("mcp --url http://x -H NoColonSecret tools");
        let err = bad.global.header_pairs().unwrap_err();
        assert!(!err.contains("NoColonSecret") && err.contains("NAME:VALUE"), "{err}");
        let err = Header::from("Bad Name:v".to_owned()).split().unwrap_err();
        assert!(err.contains("\"Bad Name\"") && err.contains("' '"), "{err}");
        assert_eq!(kind("mcp --bearer-env TOKEN tools"), ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn help_and_version_are_not_failures_and_usage_errors_are() {
        assert_eq!(kind("mcp --help"), ErrorKind::DisplayHelp);
        assert_eq!(kind("mcp --version"), ErrorKind::DisplayVersion);
        assert_eq!(kind("mcp"), ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand);
        assert_eq!(kind("mcp frobnicate"), ErrorKind::InvalidSubcommand);
        assert_eq!(kind("mcp call"), ErrorKind::MissingRequiredArgument);
        let help = Cli::command().render_long_help().to_string();
        for needed in ["serve-demo", "--stdio", "Exit codes", "mcp.json", "key=value"] {
            assert!(help.contains(needed), "--help lacks {needed:?}:\n{help}");
        }
    }
}
