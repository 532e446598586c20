//! The name of a server given on the command line (`--stdio -- CMD ARGS`, `--url URL`), when
//! `--name` gives none: what the user would call it, so that the LLM sees
//! `server-filesystem__read_file` rather than `node__read_file`.
//!
//! For a stdio server the launcher is looked through (`env VAR=1`, `npx -y`, `uvx`, `pipx run`,
//! `uv run`, `bunx`, `pnpm dlx`, `docker run ...`, and interpreters such as `node`, `python`,
//! `deno`, `bun`): the name is the package's (`@scope/server-x@1.2` → `server-x`), the module's
//! (`python -m pkg.server` → `pkg.server`'s last part unless it is generic), or the script's
//! (`dist/index.js` of `server-everything` → `server-everything`); else the command's file name.

use std::path::Path;

/// Launchers whose first argument that is not an option is the package to run.
const PACKAGE_RUNNERS: &[&str] = &["npx", "bunx", "uvx", "pipx", "pnpx"];
/// Interpreters whose first argument that is not an option is the script to run.
const INTERPRETERS: &[&str] =
    &["node", "nodejs", "python", "python3", "deno", "bun", "ruby", "perl", "php", "tsx", "ts-node"];
/// File and directory names that say nothing about the server; the one above is taken instead.
const GENERIC: &[&str] = &[
    "index", "main", "server", "cli", "app", "run", "start", "__main__", "dist", "build", "lib", "src", "bin", "out",
    "esm", "cjs",
];
/// The longest name made (the LLM name also carries the tool's).
const MAX_NAME: usize = 40;

/// The name of the stdio server run by `command` with `args`.
pub fn stdio_server_name(command: &str, args: &[String]) -> String {
    let words: Vec<&str> = std::iter::once(command).chain(args.iter().map(String::as_str)).collect();
    clean(&name_of(&words)).unwrap_or_else(|| "stdio".to_owned())
}

/// The name of the remote server at `url`: its host name; for a server on this machine or at an
/// IP address, which a host name would not tell apart, `localhost-PORT` or the address and port
/// (`10.0.0.5-8080`).
pub fn remote_server_name(url: &url::Url) -> String {
    let port = url.port_or_known_default().map(|p| format!("-{p}")).unwrap_or_default();
    let name = match url.host() {
        Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => clean(&format!("localhost{port}")),
        Some(url::Host::Domain(d)) => clean(d.trim_start_matches("www.")),
        Some(url::Host::Ipv4(ip)) if ip.is_loopback() => clean(&format!("localhost{port}")),
        Some(url::Host::Ipv6(ip)) if ip.is_loopback() => clean(&format!("localhost{port}")),
        Some(url::Host::Ipv4(ip)) => clean(&format!("{ip}{port}")),
        Some(url::Host::Ipv6(ip)) => clean(&format!("{ip}{port}").replace(':', "-")),
        None => None,
    };
    name.unwrap_or_else(|| "remote".to_owned())
}

fn name_of(words: &[&str]) -> String {
    let Some((&first, rest)) = words.split_first() else { return String::new() };
    let program = file_name(first);
    match program.as_str() {
        // env [-i] [VAR=value]... command args
        "env" => {
            let rest: Vec<&str> = rest.iter().copied().skip_while(|w| w.starts_with('-') || w.contains('=')).collect();
            name_of(&rest)
        }
        "uv" | "poetry" | "pipenv" if rest.first() == Some(&"run") => name_of(&without_options(&rest[1..])),
        "pnpm" | "yarn" if matches!(rest.first(), Some(&"dlx") | Some(&"exec")) => package(&rest[1..]),
        "pipx" if rest.first() == Some(&"run") => package(&rest[1..]),
        "docker" | "podman" if rest.first() == Some(&"run") => image(&rest[1..]),
        p if PACKAGE_RUNNERS.contains(&p) => package(rest),
        p if INTERPRETERS.contains(&p) || p.starts_with("python3.") => script(rest),
        _ => script_path(first),
    }
}

/// `words` from the first that is not an option (nor an option's value) on.
fn without_options<'a>(words: &[&'a str]) -> Vec<&'a str> {
    let mut i = 0;
    while i < words.len() && words[i].starts_with('-') {
        let takes_value = !words[i].contains('=')
            && matches!(words[i], "--directory" | "--with" | "--python" | "--from" | "-p" | "--project" | "--env-file");
        i += if takes_value { 2 } else { 1 };
    }
    words.get(i..).unwrap_or_default().to_vec()
}

/// `npx -y @scope/name@1.2 ...` → `name`; `uvx --from pkg tool` → `tool`.
fn package(words: &[&str]) -> String {
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if matches!(*word, "--from" | "--with" | "-p" | "--package" | "--python") {
            words.next();
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        let unscoped = word.rsplit('/').next().unwrap_or(word);
        let unversioned = match unscoped.find(['@', '=']) {
            Some(0) | None => unscoped,
            Some(at) => &unscoped[..at],
        };
        return unversioned.to_owned();
    }
    String::new()
}

/// `docker run -i --rm -e X mcp/fetch:latest` → `fetch`.
fn image(words: &[&str]) -> String {
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if matches!(*word, "-e" | "--env" | "-v" | "--volume" | "--name" | "-p" | "--network" | "-w" | "--user") {
            words.next();
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        let last = word.rsplit('/').next().unwrap_or(word);
        return last.split(':').next().unwrap_or(last).to_owned();
    }
    String::new()
}

/// `python -m pkg.mcp_server` → `mcp_server` (or `pkg` when the module's last part is generic);
/// `node path/to/server.js` → from the path.
fn script(words: &[&str]) -> String {
    // `deno run`, `bun run`: the script follows the subcommand.
    let words = match words.first() {
        Some(&"run") => &words[1..],
        _ => words,
    };
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if *word == "-m" {
            let module = words.next().copied().unwrap_or_default();
            let parts: Vec<&str> = module.split('.').collect();
            return parts.iter().rev().find(|p| !GENERIC.contains(p)).copied().unwrap_or(module).to_owned();
        }
        if matches!(*word, "-r" | "--require" | "--import" | "--loader" | "-e" | "--eval") {
            words.next();
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        return script_path(word);
    }
    String::new()
}

/// A script or program path: its stem, or the nearest directory above it that says more than
/// `index`, `dist` or `server`.
fn script_path(path: &str) -> String {
    let path = Path::new(path);
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if !GENERIC.contains(&stem.as_str()) {
        return stem;
    }
    path.ancestors()
        .skip(1)
        .filter_map(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .find(|n| !GENERIC.contains(&n.as_str()))
        .unwrap_or(stem)
}

fn file_name(word: &str) -> String {
    Path::new(word).file_name().map_or_else(|| word.to_owned(), |n| n.to_string_lossy().into_owned())
}

/// `name` with every character outside `[A-Za-z0-9_.-]` made `-`, cut to [`MAX_NAME`]; `None`
/// when nothing is left.
fn clean(name: &str) -> Option<String> {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '-' })
        .take(MAX_NAME)
        .collect();
    let cleaned = cleaned.trim_matches(['-', '.']).to_owned();
    (!cleaned.is_empty()).then_some(cleaned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(line: &str) -> String {
        let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        stdio_server_name(&words[0], &words[1..])
    }

    #[test]
    fn servers_are_named_after_their_package_module_or_script() {
        let cases = [
            ("npx -y @modelcontextprotocol/server-filesystem /tmp", "server-filesystem"),
            ("npx @modelcontextprotocol/server-everything@2026.8.31 stdio", "server-everything"),
            ("/usr/bin/npx -y mcp-remote https://x", "mcp-remote"),
            ("uvx mcp-server-time --local-timezone UTC", "mcp-server-time"),
            ("uvx --from mcp-server-git mcp-server-git-cli", "mcp-server-git-cli"),
            ("pipx run mcp-server-fetch==1.0", "mcp-server-fetch"),
            ("uv run --directory x weather.py", "weather"),
            ("pnpm dlx @acme/tools", "tools"),
            ("env X=1 Y=2 node /srv/desktop-commander/dist/index.js", "desktop-commander"),
            ("node /p/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio", "server-everything"),
            ("node --require ./loopback.cjs ./server.js", "server"),
            ("python3 -m mcp_server_time", "mcp_server_time"),
            ("python -m weather.server", "weather"),
            ("/opt/venv/bin/python tests/peers/python/tasks_peer.py --transport stdio", "tasks_peer"),
            ("docker run -i --rm -e KEY=v mcp/fetch:latest", "fetch"),
            ("./target/release/my-server --flag", "my-server"),
            ("deno run -A main.ts", "main"),
        ];
        for (line, expected) in cases {
            assert_eq!(name(line), expected, "{line}");
        }
    }

    #[test]
    fn names_are_cleaned_and_bounded() {
        assert_eq!(stdio_server_name("/opt/weird name!", &[]), "weird-name");
        assert_eq!(name(&format!("/bin/{}", "x".repeat(100))).len(), MAX_NAME);
        assert_eq!(name("env A=1"), "stdio", "nothing to name it after");
        let remote = |u: &str| remote_server_name(&url::Url::parse(u).unwrap());
        assert_eq!(remote("https://www.mcp.example.com/mcp"), "mcp.example.com");
        assert_eq!(remote("http://127.0.0.1:18777/mcp"), "localhost-18777");
        assert_eq!(remote("http://localhost/mcp"), "localhost-80");
        assert_eq!(remote("http://[::1]:9/mcp"), "localhost-9");
        assert_eq!(remote("https://10.0.0.5:8443/mcp"), "10.0.0.5-8443");
        assert_eq!(remote("http://[fe80::1]:8080/"), "fe80--1-8080");
    }
}
