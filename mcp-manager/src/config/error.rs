//! What can go wrong while loading a configuration.
//!
//! A file that cannot be read is [`ConfigError::Io`]; a file that is not valid JSON (with
//! comments) or TOML is [`ConfigError::Syntax`], with the line and column; a file whose format
//! cannot be told is [`ConfigError::UnknownFormat`]; everything else is
//! [`ConfigError::Invalid`], the list of every [`ConfigProblem`] found, each naming the server
//! and field at fault. No message carries the value of a secret: problems name variables,
//! headers and fields, never what they hold.

use std::fmt;
use std::path::PathBuf;

/// A configuration that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read MCP configuration {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not valid JSON (with comments) or TOML.
    #[error("syntax error in {source_name} at line {line}, column {column}: {message}")]
    Syntax {
        /// The file name, or what the caller named the text.
        source_name: String,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// The text parsed, but its format could not be told (or was ambiguous).
    #[error("cannot tell the configuration format of {source_name}: {message}")]
    UnknownFormat {
        /// The file name, or what the caller named the text.
        source_name: String,
        /// What was looked for.
        message: String,
    },
    /// The text parsed, but some servers or settings are wrong: every problem found, in file
    /// order.
    #[error("{}", Problems(.0))]
    Invalid(Vec<ConfigProblem>),
}

impl ConfigError {
    /// The problems of an [`Invalid`](ConfigError::Invalid) configuration; empty otherwise.
    pub fn problems(&self) -> &[ConfigProblem] {
        match self {
            ConfigError::Invalid(problems) => problems,
            _ => &[],
        }
    }
}

/// One thing wrong with a configuration.
///
/// Displayed as `server "github": field "url": missing (a remote server needs a url)`. A problem
/// outside any server, or in a server whose name is blank, has no `server`, and its `field` is
/// the path from the top of the file, such as `mcp.client.roots[0]` or `mcp.servers[2].name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// The server's name, when the problem belongs to a named server.
    pub server: Option<String>,
    /// The field as the file spells it: `url`, `env.API_KEY`, `args[1]`, `comand`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl ConfigProblem {
    /// A problem of a named server.
    pub fn server(server: impl Into<String>, field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigProblem { server: Some(server.into()), field: field.into(), message: message.into() }
    }

    /// A problem outside any named server.
    pub fn global(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigProblem { server: None, field: field.into(), message: message.into() }
    }
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(server) = &self.server {
            write!(f, "server {server:?}: ")?;
        }
        write!(f, "field {:?}: {}", self.field, self.message)
    }
}

/// Displays a problem list, one per line.
struct Problems<'a>(&'a [ConfigProblem]);

impl fmt::Display for Problems<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        write!(f, "invalid MCP configuration ({n} problem{}):", if n == 1 { "" } else { "s" })?;
        for problem in self.0 {
            write!(f, "\n  - {problem}")?;
        }
        Ok(())
    }
}
