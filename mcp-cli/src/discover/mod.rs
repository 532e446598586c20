//! Which configuration `mcp` uses: the file `--config` names, or the file of the host it names
//! (`--config goose`, see [`hosts`]); else the first of `./mcp.json`, `./.vscode/mcp.json` and
//! `./.mcp.json` that exists; else the built-in demo server, which the caller announces on
//! stderr ([`ConfigSource::announcement`]).
//!
//! A host name wins over a file of the same name in the working directory, so that
//! `--config codex` means the same wherever it is typed; such a file is reached as
//! `--config ./codex`, and the announcement says so.

pub mod hosts;

use std::path::{Path, PathBuf};

use mcp_manager::config::ConfigFormat;
use serde_json::json;

use self::hosts::{Host, HostPaths, Scope};

/// The files looked for in the working directory, in order.
pub const CANDIDATES: [&str; 3] = ["mcp.json", ".vscode/mcp.json", ".mcp.json"];

/// The name the built-in demo server has in its config.
pub const DEMO_SERVER_NAME: &str = "demo";

/// Where the configuration comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// The file `--config` named.
    Explicit(PathBuf),
    /// A file found in the working directory (one of [`CANDIDATES`]).
    Found(PathBuf),
    /// The file of the host `--config` named.
    Host {
        /// The host.
        host: Host,
        /// Its file.
        path: PathBuf,
        /// How the file is read.
        format: ConfigFormat,
        /// For Claude Code's `.claude.json`: the working directory, whose local servers are
        /// read with the user's.
        project: Option<String>,
        /// A file in the working directory has the host's name (and is not used).
        shadowed: Option<PathBuf>,
    },
    /// No config file: the built-in demo server, run as `<command> serve-demo`.
    BuiltinDemo {
        /// This executable.
        command: PathBuf,
        /// `["serve-demo"]`.
        args: Vec<String>,
    },
}

/// Why no configuration could be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoverError {
    /// `--config` names a file that does not exist.
    #[error("config file {0} does not exist")]
    Missing(PathBuf),
    /// `--config` names a directory.
    #[error("config file {0} is a directory, not a file")]
    NotAFile(PathBuf),
    /// The working directory or this executable could not be found.
    #[error("{0}")]
    Environment(String),
    /// `--config` names a host that has no config file here.
    #[error("no {host} config file found (looked at {})", looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    HostNotFound {
        /// The host's name.
        host: &'static str,
        /// Every place looked at.
        looked: Vec<PathBuf>,
    },
}

impl ConfigSource {
    /// The config file, when there is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ConfigSource::Explicit(p) | ConfigSource::Found(p) | ConfigSource::Host { path: p, .. } => Some(p),
            ConfigSource::BuiltinDemo { .. } => None,
        }
    }

    /// The format the file is read in, when it is known before reading it (a host's file).
    pub fn format(&self) -> Option<ConfigFormat> {
        match self {
            ConfigSource::Host { format, .. } => Some(*format),
            _ => None,
        }
    }

    /// The project whose local servers a Claude Code file adds.
    pub fn project(&self) -> Option<&str> {
        match self {
            ConfigSource::Host { project, .. } => project.as_deref(),
            _ => None,
        }
    }

    /// Whether this is the built-in demo server.
    pub fn is_builtin(&self) -> bool {
        matches!(self, ConfigSource::BuiltinDemo { .. })
    }

    /// The built-in demo's config in the `mcpServers` format (`None` for a file), for the
    /// manager's config loader.
    pub fn builtin_config(&self) -> Option<serde_json::Value> {
        let ConfigSource::BuiltinDemo { command, args } = self else { return None };
        Some(json!({"mcpServers": {DEMO_SERVER_NAME: {"command": command.to_string_lossy(), "args": args}}}))
    }

    /// What to say on stderr about the choice, if anything: the built-in demo, and a host name
    /// that a file of the same name in the working directory did not win over.
    pub fn announcement(&self) -> Option<String> {
        if let ConfigSource::Host { host, path, shadowed: Some(file), .. } = self {
            return Some(format!(
                "mcp: --config {name}: using {name}'s {}; the file {} in this folder is read with --config ./{name}",
                path.display(),
                file.display(),
                name = host.name()
            ));
        }
        self.is_builtin().then(|| {
            format!(
                "mcp: no config file found (looked for {}); using the built-in demo server (mcp serve-demo)",
                CANDIDATES.map(|c| format!("./{c}")).join(", ")
            )
        })
    }
}

/// Choose the configuration: `explicit` (relative to `cwd`) when given, else the first
/// candidate file in `cwd`, else the built-in demo run by `exe`.
pub fn discover(explicit: Option<&Path>, cwd: &Path, exe: &Path) -> Result<ConfigSource, DiscoverError> {
    if let Some(path) = explicit {
        let full = cwd.join(path);
        return match std::fs::metadata(&full) {
            Ok(m) if m.is_dir() => Err(DiscoverError::NotAFile(path.to_owned())),
            Ok(_) => Ok(ConfigSource::Explicit(full)),
            Err(_) => Err(DiscoverError::Missing(path.to_owned())),
        };
    }
    for candidate in CANDIDATES {
        let path = cwd.join(candidate);
        if path.is_file() {
            return Ok(ConfigSource::Found(path));
        }
    }
    Ok(ConfigSource::BuiltinDemo { command: exe.to_owned(), args: vec!["serve-demo".into()] })
}

/// The file of the host named `name`, when `name` is a host's name (else `None`): its user
/// file, else its project file (in `paths.cwd`), whichever exists first.
pub fn host_source(name: &str, paths: &HostPaths<'_>) -> Option<Result<ConfigSource, DiscoverError>> {
    let host = Host::from_name(name)?;
    let files: Vec<_> = hosts::host_files(paths).into_iter().filter(|f| f.host == host).collect();
    let Some(file) = files.iter().find(|f| f.path.is_file()) else {
        return Some(Err(DiscoverError::HostNotFound {
            host: host.name(),
            looked: files.into_iter().map(|f| f.path).collect(),
        }));
    };
    let project = (file.format == ConfigFormat::ClaudeCodeJson && file.scope == Scope::User)
        .then(|| paths.cwd.to_string_lossy().into_owned());
    let same_name = paths.cwd.join(name);
    Some(Ok(ConfigSource::Host {
        host,
        path: file.path.clone(),
        format: file.format,
        project,
        shadowed: same_name.is_file().then_some(same_name),
    }))
}

/// [`discover`] in this process's working directory, with this executable for the demo; a
/// host name given to `--config` is looked up with [`host_source`].
pub fn discover_here(explicit: Option<&Path>) -> Result<ConfigSource, DiscoverError> {
    let cwd = std::env::current_dir()
        .map_err(|e| DiscoverError::Environment(format!("cannot read the working directory: {e}")))?;
    if let Some(name) = explicit.and_then(Path::to_str).filter(|n| Host::from_name(n).is_some()) {
        let home = HostPaths::home_here()
            .ok_or_else(|| DiscoverError::Environment("cannot find the home folder (HOME is not set)".into()))?;
        let env = |name: &str| std::env::var(name).ok();
        let paths = HostPaths { platform: hosts::Platform::current(), home: &home, cwd: &cwd, env: &env };
        if let Some(found) = host_source(name, &paths) {
            return found;
        }
    }
    let exe = std::env::current_exe()
        .map_err(|e| DiscoverError::Environment(format!("cannot find the mcp executable for the demo server: {e}")))?;
    discover(explicit, &cwd, &exe)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXE: &str = "/opt/bin/mcp";

    #[test]
    fn without_files_the_demo_is_used_and_announced() {
        let dir = tempfile::tempdir().unwrap();
        let source = discover(None, dir.path(), Path::new(EXE)).unwrap();
        assert_eq!(source, ConfigSource::BuiltinDemo { command: EXE.into(), args: vec!["serve-demo".into()] });
        assert!(source.path().is_none());
        let config = source.builtin_config().unwrap();
        assert_eq!(config["mcpServers"]["demo"]["command"], EXE);
        assert_eq!(config["mcpServers"]["demo"]["args"][0], "serve-demo");
        let said = source.announcement().unwrap();
        assert!(said.contains("./mcp.json, ./.vscode/mcp.json, ./.mcp.json") && said.contains("demo"), "{said}");
    }

    #[test]
    fn candidates_are_taken_in_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".mcp.json"), "{}").unwrap();
        let found = discover(None, dir.path(), Path::new(EXE)).unwrap();
        assert_eq!(found, ConfigSource::Found(dir.path().join(".mcp.json")));
        assert!(found.announcement().is_none() && found.builtin_config().is_none());

        std::fs::create_dir(dir.path().join(".vscode")).unwrap();
        std::fs::write(dir.path().join(".vscode/mcp.json"), "{}").unwrap();
        let found = discover(None, dir.path(), Path::new(EXE)).unwrap();
        assert_eq!(found.path(), Some(dir.path().join(".vscode/mcp.json").as_path()));

        std::fs::write(dir.path().join("mcp.json"), "{}").unwrap();
        let found = discover(None, dir.path(), Path::new(EXE)).unwrap();
        assert_eq!(found, ConfigSource::Found(dir.path().join("mcp.json")));

        // A directory with a candidate's name does not count.
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir(other.path().join("mcp.json")).unwrap();
        assert!(discover(None, other.path(), Path::new(EXE)).unwrap().is_builtin());
    }

    #[test]
    fn a_host_name_finds_its_file_and_wins_over_a_file_of_that_name() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let env = |_: &str| None;
        let paths = HostPaths { platform: hosts::Platform::Linux, home: home.path(), cwd: cwd.path(), env: &env };
        assert!(host_source("nope", &paths).is_none(), "not a host name");
        let err = host_source("codex", &paths).unwrap().unwrap_err();
        assert!(matches!(&err, DiscoverError::HostNotFound { host: "codex", looked } if looked.len() == 1), "{err}");
        assert!(err.to_string().contains(".codex/config.toml"), "{err}");

        std::fs::create_dir(home.path().join(".codex")).unwrap();
        std::fs::write(home.path().join(".codex/config.toml"), "").unwrap();
        std::fs::write(cwd.path().join("codex"), "{}").unwrap();
        let source = host_source("codex", &paths).unwrap().unwrap();
        assert_eq!(source.path(), Some(home.path().join(".codex/config.toml").as_path()));
        assert_eq!(source.format(), Some(ConfigFormat::CodexToml));
        let said = source.announcement().unwrap();
        assert!(said.contains("--config ./codex"), "{said}");

        // Claude Code's user file reads the working directory's local servers.
        std::fs::write(home.path().join(".claude.json"), "{}").unwrap();
        let source = host_source("claude-code", &paths).unwrap().unwrap();
        assert_eq!(source.project(), Some(cwd.path().to_string_lossy().as_ref()));
        assert!(source.announcement().is_none());
        // A host with only a project file uses it.
        std::fs::create_dir(cwd.path().join(".cursor")).unwrap();
        std::fs::write(cwd.path().join(".cursor/mcp.json"), "{}").unwrap();
        let source = host_source("cursor", &paths).unwrap().unwrap();
        assert_eq!(source.path(), Some(cwd.path().join(".cursor/mcp.json").as_path()));
    }

    #[test]
    fn an_explicit_file_wins_and_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mcp.json"), "{}").unwrap();
        std::fs::write(dir.path().join("servers.toml"), "").unwrap();
        let chosen = discover(Some(Path::new("servers.toml")), dir.path(), Path::new(EXE)).unwrap();
        assert_eq!(chosen, ConfigSource::Explicit(dir.path().join("servers.toml")));

        let err = discover(Some(Path::new("nope.json")), dir.path(), Path::new(EXE)).unwrap_err();
        assert_eq!(err, DiscoverError::Missing("nope.json".into()));
        assert_eq!(err.to_string(), "config file nope.json does not exist");
        std::fs::create_dir(dir.path().join("conf.d")).unwrap();
        let err = discover(Some(Path::new("conf.d")), dir.path(), Path::new(EXE)).unwrap_err();
        assert!(matches!(err, DiscoverError::NotAFile(_)), "{err}");
    }
}
