//! Which configuration `mcp` uses: the file `--config` names; else the first of `./mcp.json`,
//! `./.vscode/mcp.json` and `./.mcp.json` that exists; else the built-in demo server, which the
//! caller announces on stderr ([`ConfigSource::announcement`]).

use std::path::{Path, PathBuf};

use serde_json::json;

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
}

impl ConfigSource {
    /// The config file, when there is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ConfigSource::Explicit(p) | ConfigSource::Found(p) => Some(p),
            ConfigSource::BuiltinDemo { .. } => None,
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

    /// What to say on stderr about the choice, if anything: only the built-in demo is announced.
    pub fn announcement(&self) -> Option<String> {
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

/// [`discover`] in this process's working directory, with this executable for the demo.
pub fn discover_here(explicit: Option<&Path>) -> Result<ConfigSource, DiscoverError> {
    let cwd = std::env::current_dir()
        .map_err(|e| DiscoverError::Environment(format!("cannot read the working directory: {e}")))?;
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
