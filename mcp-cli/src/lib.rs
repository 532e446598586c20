//! The building blocks of the `mcp` command.
//!
//! - [`cli`]: the command line ([`cli::Cli`], [`cli::Command`], [`cli::parse`]); [`adhoc`]: the
//!   name of a server given on the command line (`--stdio`, `--url`) when `--name` gives none.
//! - [`coerce`]: tool arguments from `key=value` pairs typed by the tool's inputSchema, and from
//!   `--args` JSON (inline, `@file` or `-` for stdin).
//! - [`output`]: tables for people, stable `--json` documents, summaries of images and blobs and
//!   saving them with `--save`; [`output::terminal`] is the only writer to stdout and stderr,
//!   and escapes the control characters of whatever text it writes (servers choose much of it).
//! - [`exit`]: the documented exit codes ([`exit::ExitCode`]), one-line errors
//!   ([`exit::CliError`]) and the panic hook.
//! - [`discover`]: which config to use ([`discover::ConfigSource`]): `--config` (a file, or a
//!   host's file by name: [`discover::hosts`]), a file in the working directory, or the
//!   built-in demo server.
//! - [`demo`]: the demo MCP server behind `mcp serve-demo`, in both protocol eras.
//! - [`commands`]: the subcommands, run on an `mcp_manager::McpManager` ([`commands::run`]).
//! - [`shell`]: `mcp shell`, the same subcommands typed at a prompt on servers kept connected.
//! - [`trace`]: `--trace FILE`, the manager's spans as JSON lines.
//!
//! ```
//! use mcp_cli::coerce::coerce_pairs;
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {
//!     "a": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}}});
//! let args = coerce_pairs(&["a=2".into(), "tags=x,y".into()], schema.as_object().unwrap()).unwrap();
//! assert_eq!(serde_json::Value::Object(args), json!({"a": 2, "tags": ["x", "y"]}));
//! ```

// Everything printed goes through `output::terminal`, which sanitizes it.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod adhoc;
pub mod cli;
pub mod coerce;
pub mod commands;
pub mod demo;
pub mod discover;
pub mod exit;
pub mod output;
pub mod shell;
pub mod task_display;
pub mod trace;
