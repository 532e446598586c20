//! Where the MCP hosts people already use keep their servers, per platform.
//!
//! [`host_files`] is a pure function of the platform, the home folder, the working directory and
//! the environment, so every platform's table is tested on any machine; `discover_here` and
//! `mcp configs` fill those in for this process ([`HostPaths::home_here`], [`Platform::current`]).
//! Each row of the table cites where its path comes from.

use std::path::{Path, PathBuf};

use mcp_manager::config::ConfigFormat;

/// An operating system, as far as where config files live is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Linux and the other Unix systems (XDG base directories).
    Linux,
    /// macOS (`~/Library/Application Support`).
    MacOs,
    /// Windows (`%APPDATA%`, `%USERPROFILE%`).
    Windows,
}

impl Platform {
    /// The platform this program was built for.
    pub fn current() -> Platform {
        if cfg!(target_os = "macos") {
            Platform::MacOs
        } else if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::Linux
        }
    }
}

/// An MCP host whose config file `mcp` can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Host {
    /// Claude Desktop: `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Claude Code: `~/.claude.json`, and a project's `.mcp.json`.
    ClaudeCode,
    /// Cursor: `~/.cursor/mcp.json`, and a project's `.cursor/mcp.json`.
    Cursor,
    /// VS Code: the user profile's `mcp.json`, and a workspace's `.vscode/mcp.json`.
    VsCode,
    /// Windsurf: `~/.codeium/windsurf/mcp_config.json`.
    Windsurf,
    /// Codex: `~/.codex/config.toml` (or `$CODEX_HOME/config.toml`).
    Codex,
    /// goose: `config.yaml`, `extensions:`.
    Goose,
    /// Zed: `settings.json`, `context_servers`, and a project's `.zed/settings.json`.
    Zed,
}

impl Host {
    /// Every host, in the order `mcp configs` lists them.
    pub const ALL: [Host; 8] = [
        Host::ClaudeDesktop,
        Host::ClaudeCode,
        Host::Cursor,
        Host::VsCode,
        Host::Windsurf,
        Host::Codex,
        Host::Goose,
        Host::Zed,
    ];

    /// The name `--config` takes: `claude-desktop`, `claude-code`, `cursor`, `vscode`,
    /// `windsurf`, `codex`, `goose`, `zed`.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "claude-desktop",
            Host::ClaudeCode => "claude-code",
            Host::Cursor => "cursor",
            Host::VsCode => "vscode",
            Host::Windsurf => "windsurf",
            Host::Codex => "codex",
            Host::Goose => "goose",
            Host::Zed => "zed",
        }
    }

    /// The host named `name` (exactly as [`name`](Host::name) spells it).
    pub fn from_name(name: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.name() == name)
    }
}

/// Whose servers a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's, for every project.
    User,
    /// One project's: a file in the working directory.
    Project,
}

/// One place a host keeps servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFile {
    /// The host.
    pub host: Host,
    /// Where the file is (whether or not it exists).
    pub path: PathBuf,
    /// How it is read.
    pub format: ConfigFormat,
    /// Whose servers it holds.
    pub scope: Scope,
}

/// What the table depends on.
pub struct HostPaths<'a> {
    /// The platform.
    pub platform: Platform,
    /// The user's home folder.
    pub home: &'a Path,
    /// The working directory (project files are looked for there).
    pub cwd: &'a Path,
    /// The environment (`APPDATA`, `XDG_CONFIG_HOME`, `CODEX_HOME`, `CLAUDE_CONFIG_DIR`).
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

impl HostPaths<'_> {
    /// The home folder of this process's user: `HOME`, else (Windows) `USERPROFILE`.
    pub fn home_here() -> Option<PathBuf> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        var("HOME").or_else(|| var("USERPROFILE"))
    }

    fn var(&self, name: &str) -> Option<PathBuf> {
        (self.env)(name).filter(|v| !v.trim().is_empty()).map(PathBuf::from)
    }

    /// `%APPDATA%`, else `<home>\AppData\Roaming` (Windows).
    fn appdata(&self) -> PathBuf {
        self.var("APPDATA").unwrap_or_else(|| self.home.join("AppData").join("Roaming"))
    }

    /// `$XDG_CONFIG_HOME`, else `~/.config` (Linux; macOS for the tools that use it there).
    fn xdg_config(&self) -> PathBuf {
        self.var("XDG_CONFIG_HOME").unwrap_or_else(|| self.home.join(".config"))
    }

    /// `~/Library/Application Support` (macOS).
    fn mac_support(&self) -> PathBuf {
        self.home.join("Library").join("Application Support")
    }

    /// The folder where an Electron app named `app` keeps its user data.
    fn app_data(&self, app: &str) -> PathBuf {
        match self.platform {
            Platform::Linux => self.xdg_config().join(app),
            Platform::MacOs => self.mac_support().join(app),
            Platform::Windows => self.appdata().join(app),
        }
    }
}

/// Every place the hosts keep servers on `paths.platform`, user files before project files,
/// in [`Host::ALL`] order.
pub fn host_files(paths: &HostPaths<'_>) -> Vec<HostFile> {
    let mut out = Vec::new();
    let mut add = |host, path: PathBuf, format, scope| out.push(HostFile { host, path, format, scope });
    let (home, cwd) = (paths.home, paths.cwd);
    use ConfigFormat::*;
    use Scope::*;

    // Claude Desktop: modelcontextprotocol.io "Connect to local MCP servers" (macOS
    // ~/Library/Application Support/Claude, Windows %APPDATA%\Claude); on Linux the community
    // builds use ~/.config/Claude.
    add(Host::ClaudeDesktop, paths.app_data("Claude").join("claude_desktop_config.json"), DesktopJson, User);

    // Claude Code: docs.anthropic.com "Connect Claude Code to tools via MCP", scopes: user and
    // local servers in ~/.claude.json (top-level `mcpServers`, `projects.<dir>.mcpServers`),
    // project servers in the project's .mcp.json. With CLAUDE_CONFIG_DIR set, Claude Code keeps
    // its files there instead.
    if let Some(dir) = paths.var("CLAUDE_CONFIG_DIR") {
        add(Host::ClaudeCode, dir.join(".claude.json"), ClaudeCodeJson, User);
    }
    add(Host::ClaudeCode, home.join(".claude.json"), ClaudeCodeJson, User);
    add(Host::ClaudeCode, cwd.join(".mcp.json"), DesktopJson, Project);

    // Cursor: docs.cursor.com "Model Context Protocol": ~/.cursor/mcp.json (global) and
    // .cursor/mcp.json in the project, on every platform (home is %USERPROFILE% on Windows).
    add(Host::Cursor, home.join(".cursor").join("mcp.json"), DesktopJson, User);
    add(Host::Cursor, cwd.join(".cursor").join("mcp.json"), DesktopJson, Project);

    // VS Code: code.visualstudio.com "Use MCP servers in VS Code": the user profile's mcp.json
    // (`MCP: Open User Configuration`, in the user data folder: ~/.config/Code/User,
    // ~/Library/Application Support/Code/User, %APPDATA%\Code\User) and .vscode/mcp.json in
    // the workspace. The older `mcp` section of settings.json is not read.
    add(Host::VsCode, paths.app_data("Code").join("User").join("mcp.json"), VsCodeJson, User);
    add(Host::VsCode, cwd.join(".vscode").join("mcp.json"), VsCodeJson, Project);

    // Windsurf: docs.windsurf.com "Cascade MCP integration": ~/.codeium/windsurf/mcp_config.json.
    add(Host::Windsurf, home.join(".codeium").join("windsurf").join("mcp_config.json"), DesktopJson, User);

    // Codex: github.com/openai/codex docs/config.md: $CODEX_HOME/config.toml, CODEX_HOME
    // defaulting to ~/.codex.
    let codex_home = paths.var("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
    add(Host::Codex, codex_home.join("config.toml"), CodexToml, User);

    // goose: block.github.io/goose "Configuration Files": ~/.config/goose/config.yaml on macOS
    // and Linux (XDG_CONFIG_HOME respected), %APPDATA%\Block\goose\config\config.yaml on Windows.
    let goose = match paths.platform {
        Platform::Windows => paths.appdata().join("Block").join("goose").join("config"),
        Platform::Linux | Platform::MacOs => paths.xdg_config().join("goose"),
    };
    add(Host::Goose, goose.join("config.yaml"), GooseYaml, User);

    // Zed: zed.dev/docs/configuring-zed: ~/.config/zed/settings.json on macOS and Linux
    // ($XDG_CONFIG_HOME/zed on Linux), %APPDATA%\Zed\settings.json on Windows; a project's
    // .zed/settings.json.
    let zed = match paths.platform {
        Platform::Linux => paths.xdg_config().join("zed"),
        Platform::MacOs => home.join(".config").join("zed"),
        Platform::Windows => paths.appdata().join("Zed"),
    };
    add(Host::Zed, zed.join("settings.json"), ZedJson, User);
    add(Host::Zed, cwd.join(".zed").join("settings.json"), ZedJson, Project);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(platform: Platform, home: &str, vars: &[(&str, &str)]) -> Vec<(String, String, ConfigFormat)> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let env = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let paths = HostPaths { platform, home: Path::new(home), cwd: Path::new("/work/proj"), env: &env };
        host_files(&paths)
            .into_iter()
            .map(|f| (f.host.name().to_owned(), f.path.to_string_lossy().replace('\\', "/"), f.format))
            .collect()
    }

    fn path_of(rows: &[(String, String, ConfigFormat)], host: &str) -> Vec<String> {
        rows.iter().filter(|(h, _, _)| h == host).map(|(_, p, _)| p.clone()).collect()
    }

    #[test]
    fn linux_table_follows_xdg() {
        let rows = table(Platform::Linux, "/home/ada", &[]);
        assert_eq!(path_of(&rows, "claude-desktop"), ["/home/ada/.config/Claude/claude_desktop_config.json"]);
        assert_eq!(path_of(&rows, "claude-code"), ["/home/ada/.claude.json", "/work/proj/.mcp.json"]);
        assert_eq!(path_of(&rows, "cursor"), ["/home/ada/.cursor/mcp.json", "/work/proj/.cursor/mcp.json"]);
        assert_eq!(path_of(&rows, "vscode"), ["/home/ada/.config/Code/User/mcp.json", "/work/proj/.vscode/mcp.json"]);
        assert_eq!(path_of(&rows, "windsurf"), ["/home/ada/.codeium/windsurf/mcp_config.json"]);
        assert_eq!(path_of(&rows, "codex"), ["/home/ada/.codex/config.toml"]);
        assert_eq!(path_of(&rows, "goose"), ["/home/ada/.config/goose/config.yaml"]);
        assert_eq!(path_of(&rows, "zed"), ["/home/ada/.config/zed/settings.json", "/work/proj/.zed/settings.json"]);

        let rows = table(
            Platform::Linux,
            "/home/ada",
            &[("XDG_CONFIG_HOME", "/xdg"), ("CODEX_HOME", "/codex"), ("CLAUDE_CONFIG_DIR", "/cc")],
        );
        assert_eq!(path_of(&rows, "claude-desktop"), ["/xdg/Claude/claude_desktop_config.json"]);
        assert_eq!(path_of(&rows, "claude-code")[..2], ["/cc/.claude.json", "/home/ada/.claude.json"]);
        assert_eq!(path_of(&rows, "vscode")[0], "/xdg/Code/User/mcp.json");
        assert_eq!(path_of(&rows, "codex"), ["/codex/config.toml"]);
        assert_eq!(path_of(&rows, "goose"), ["/xdg/goose/config.yaml"]);
        assert_eq!(path_of(&rows, "zed")[0], "/xdg/zed/settings.json");
        // A blank variable counts as unset.
        let rows = table(Platform::Linux, "/home/ada", &[("XDG_CONFIG_HOME", " ")]);
        assert_eq!(path_of(&rows, "goose"), ["/home/ada/.config/goose/config.yaml"]);
    }

    #[test]
    fn macos_table_uses_application_support_for_apps() {
        let rows = table(Platform::MacOs, "/Users/ada", &[("XDG_CONFIG_HOME", "/xdg")]);
        assert_eq!(
            path_of(&rows, "claude-desktop"),
            ["/Users/ada/Library/Application Support/Claude/claude_desktop_config.json"]
        );
        assert_eq!(path_of(&rows, "vscode")[0], "/Users/ada/Library/Application Support/Code/User/mcp.json");
        assert_eq!(path_of(&rows, "goose"), ["/xdg/goose/config.yaml"]);
        assert_eq!(path_of(&rows, "zed")[0], "/Users/ada/.config/zed/settings.json");
        assert_eq!(path_of(&rows, "cursor")[0], "/Users/ada/.cursor/mcp.json");
    }

    #[test]
    fn windows_table_uses_appdata() {
        let appdata = [("APPDATA", "C:\\Users\\ada\\AppData\\Roaming")];
        let rows = table(Platform::Windows, "C:\\Users\\ada", &appdata);
        assert_eq!(
            path_of(&rows, "claude-desktop"),
            ["C:/Users/ada/AppData/Roaming/Claude/claude_desktop_config.json"]
        );
        assert_eq!(path_of(&rows, "vscode")[0], "C:/Users/ada/AppData/Roaming/Code/User/mcp.json");
        assert_eq!(path_of(&rows, "goose"), ["C:/Users/ada/AppData/Roaming/Block/goose/config/config.yaml"]);
        assert_eq!(path_of(&rows, "zed")[0], "C:/Users/ada/AppData/Roaming/Zed/settings.json");
        assert_eq!(path_of(&rows, "windsurf"), ["C:/Users/ada/.codeium/windsurf/mcp_config.json"]);
        // Without APPDATA, the roaming folder under the home folder.
        let rows = table(Platform::Windows, "C:\\Users\\ada", &[]);
        assert_eq!(path_of(&rows, "goose"), ["C:/Users/ada/AppData/Roaming/Block/goose/config/config.yaml"]);
    }

    #[test]
    fn every_host_has_a_file_and_a_name() {
        let rows = table(Platform::Linux, "/h", &[]);
        for host in Host::ALL {
            assert!(rows.iter().any(|(h, _, _)| h == host.name()), "{host:?}");
            assert_eq!(Host::from_name(host.name()), Some(host));
        }
        assert_eq!(Host::from_name("Codex"), None);
        let formats: Vec<_> = rows.iter().filter(|(h, _, _)| h == "goose" || h == "zed").map(|r| r.2).collect();
        assert_eq!(formats, [ConfigFormat::GooseYaml, ConfigFormat::ZedJson, ConfigFormat::ZedJson]);
    }
}
