//! Property tests of the config loaders ([`McpConfig::parse`]): desktop JSON (with comments and
//! trailing commas), VS Code's mcp.json, Codex TOML, the reference TOML and `${VAR}`
//! interpolation.
//!
//! - arbitrary and mutated text, in every format and with detection, never panics: it loads, or
//!   fails with an error that says something;
//! - servers written in any of the four formats load back as the same servers, in file order;
//! - interpolation expands every reference the way the rules say, and an unset variable is an
//!   error naming the variable, never a value.
//!
//! Each property runs a modest number of cases (CI runs them with a fixed seed, see `cargo xtask
//! ci`); `PROPTEST_CASES` and `PROPTEST_RNG_SEED` override both (`cargo xtask fuzz config`).

use std::collections::BTreeMap;

use mcp_manager::config::{ConfigError, ConfigFormat, McpConfig, ServerConfig};
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use serde_json::Value;

/// This file's configuration: `cases` unless `PROPTEST_CASES` says otherwise.
fn config(cases: u32) -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    config
}

const FORMATS: [ConfigFormat; 4] =
    [ConfigFormat::DesktopJson, ConfigFormat::VsCodeJson, ConfigFormat::CodexToml, ConfigFormat::ReferenceToml];

fn source_name(format: ConfigFormat) -> &'static str {
    match format {
        ConfigFormat::DesktopJson => "claude_desktop_config.json",
        ConfigFormat::VsCodeJson => ".vscode/mcp.json",
        ConfigFormat::CodexToml => ".codex/config.toml",
        ConfigFormat::ReferenceToml => "mcp.toml",
        ConfigFormat::ClaudeCodeJson => ".claude.json",
        ConfigFormat::GooseYaml => "config.yaml",
        ConfigFormat::ZedJson => "zed/settings.json",
    }
}

/// Every format, hosts' own files included (arbitrary text must not break any reader).
const ALL_FORMATS: [ConfigFormat; 7] = [
    ConfigFormat::DesktopJson,
    ConfigFormat::VsCodeJson,
    ConfigFormat::CodexToml,
    ConfigFormat::ReferenceToml,
    ConfigFormat::ClaudeCodeJson,
    ConfigFormat::GooseYaml,
    ConfigFormat::ZedJson,
];

fn no_env() -> BTreeMap<String, String> {
    BTreeMap::new()
}

/// Loading must return; an error must say something (every problem too).
fn check_outcome(text: &str, outcome: &Result<McpConfig, ConfigError>) -> Result<(), TestCaseError> {
    match outcome {
        Ok(config) => {
            // Every server came from the text: at least a few bytes each.
            prop_assert!(config.servers.len() <= text.len());
        }
        Err(e) => {
            prop_assert!(!e.to_string().is_empty());
            if let ConfigError::Invalid(problems) = e {
                prop_assert!(!problems.is_empty());
                prop_assert!(problems.iter().all(|p| !p.to_string().is_empty()));
            }
        }
    }
    Ok(())
}

/// Load `text` in every format, and with detection under every format's file name.
fn load_every_way(text: &str) -> Result<(), TestCaseError> {
    for format in ALL_FORMATS {
        let name = source_name(format);
        check_outcome(text, &McpConfig::parse(text, Some(format), name, &no_env()))?;
        check_outcome(text, &McpConfig::parse(text, None, name, &no_env()))?;
    }
    check_outcome(text, &McpConfig::parse(text, None, "config", &no_env()))
}

/// Text made of the pieces config files are made of.
fn config_ish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => prop::sample::select(vec![
            "{", "}", "[", "]", "[[", "]]", ":", ",", "=", "\"", "'", "\"\"\"", "\\", "\\u00", "//", "/*", "*/", "#",
            "\n", "\r\n", " ", "\t", "null", "true", "false", "1", "-1", "1e400", "0.5", "nan", "inf",
            "\"mcpServers\"", "\"servers\"", "\"inputs\"", "mcp_servers", "mcp", "servers", "client", "\"command\"",
            "\"args\"", "\"env\"", "\"url\"", "\"type\"", "\"headers\"", "command", "args", "url", "name",
            "startup_timeout_sec", "tool_timeout_sec", "request_timeout_sec", "\"stdio\"", "\"http\"", "\"sse\"",
            "${", "${HOME}", "${env:X}", "${X:-d}", "${input:x}", "$$", "$", "\u{feff}", "é",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z_]{1,8}",
        1 => any::<String>(),
    ];
    vec(piece, 0..64).prop_map(|parts| parts.concat())
}

/// Strings as config files hold them: anything, with `$` written as `$$` by the writers.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![3 => "[a-zA-Z0-9 ._/:=@-]{0,12}", 1 => any::<String>()]
}

/// A value with no line break or NUL (what a header value may hold).
fn header_value() -> impl Strategy<Value = String> {
    prop_oneof![3 => "[a-zA-Z0-9 ._/:=@$-]{0,12}", 1 => any::<String>().prop_map(|s| s.replace(['\r', '\n', '\0'], ""))]
}

/// What every format can say about a server.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String> },
    Remote { url: String, headers: BTreeMap<String, String> },
}

#[derive(Debug, Clone, PartialEq)]
struct Server {
    name: String,
    kind: Kind,
}

fn kind() -> impl Strategy<Value = Kind> {
    let command = prop_oneof![
        "[a-z]{1,8}",
        "[a-z/._-]{0,6}[a-z]",
        any::<String>().prop_filter("not blank", |s| !s.trim().is_empty())
    ];
    let env_key = prop_oneof![
        "[A-Z_][A-Z0-9_]{0,8}",
        any::<String>().prop_filter("valid", |k| !k.is_empty() && !k.contains(['=', '\0']))
    ];
    prop_oneof![
        (command, vec(text(), 0..4), btree_map(env_key, text(), 0..3)).prop_map(|(command, args, env)| Kind::Stdio {
            command,
            args,
            env
        }),
        (
            "https?://[a-z]{1,8}(\\.[a-z]{2,3})?(:[1-9][0-9]{0,3})?(/[a-z0-9_-]{0,6}){0,3}",
            btree_map("[A-Za-z][A-Za-z0-9-]{0,10}", header_value(), 0..3)
        )
            .prop_map(|(url, headers)| Kind::Remote { url, headers }),
    ]
}

fn servers() -> impl Strategy<Value = Vec<Server>> {
    let name = prop_oneof!["[a-z][a-z0-9_-]{0,10}", any::<String>().prop_filter("not blank", |s| !s.trim().is_empty())];
    vec((name, kind()), 0..5).prop_map(|entries| {
        let mut seen = Vec::new();
        entries
            .into_iter()
            .filter(|(name, _)| {
                let fresh = !seen.contains(name);
                seen.push(name.clone());
                fresh
            })
            .map(|(name, kind)| Server { name, kind })
            .collect()
    })
}

/// `$` as the loaders read it back as itself.
fn escape(s: &str) -> String {
    s.replace('$', "$$")
}

/// The members of one server's TOML table; the two TOML formats differ only in the name of the
/// headers member.
fn toml_server_body(out: &mut String, kind: &Kind, headers_key: &str) {
    match kind {
        Kind::Stdio { command, args, env } => {
            out.push_str(&format!("command = {}\n", toml_string(command)));
            let args: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
            out.push_str(&format!("args = [{}]\n", args.join(", ")));
            let env: Vec<String> = env.iter().map(|(k, v)| format!("{} = {}", toml_key(k), toml_string(v))).collect();
            out.push_str(&format!("env = {{ {} }}\n", env.join(", ")));
        }
        Kind::Remote { url, headers } => {
            out.push_str(&format!("url = {}\n", toml_string(url)));
            let headers: Vec<String> =
                headers.iter().map(|(k, v)| format!("{} = {}", toml_key(k), toml_string(v))).collect();
            out.push_str(&format!("{headers_key} = {{ {} }}\n", headers.join(", ")));
        }
    }
}

fn json_string(s: &str) -> String {
    Value::String(escape(s)).to_string()
}

fn toml_string(s: &str) -> String {
    toml_key(&escape(s))
}

/// A TOML basic string (a quoted key or a value): any text works.
fn toml_key(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c < ' ' || c == '\u{7f}' => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The servers in `format`, the JSON ones with comments and trailing commas.
fn write(format: ConfigFormat, servers: &[Server]) -> String {
    match format {
        ConfigFormat::DesktopJson | ConfigFormat::VsCodeJson => {
            let vscode = format == ConfigFormat::VsCodeJson;
            let mut out = String::from("// written by a property test\n{\n");
            out.push_str(if vscode { "  \"servers\": {\n" } else { "  \"mcpServers\": { /* servers */\n" });
            for server in servers {
                out.push_str(&format!("    {}: {{\n", Value::String(server.name.clone())));
                match &server.kind {
                    Kind::Stdio { command, args, env } => {
                        if vscode {
                            out.push_str("      \"type\": \"stdio\",\n");
                        }
                        out.push_str(&format!("      \"command\": {}, // the program\n", json_string(command)));
                        let args: Vec<String> = args.iter().map(|a| json_string(a)).collect();
                        out.push_str(&format!("      \"args\": [{}],\n", args.join(", ")));
                        let env: Vec<String> = env
                            .iter()
                            .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), json_string(v)))
                            .collect();
                        out.push_str(&format!("      \"env\": {{{}}},\n", env.join(", ")));
                    }
                    Kind::Remote { url, headers } => {
                        if vscode {
                            out.push_str("      \"type\": \"http\",\n");
                        }
                        out.push_str(&format!("      \"url\": {},\n", json_string(url)));
                        let headers: Vec<String> = headers
                            .iter()
                            .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), json_string(v)))
                            .collect();
                        out.push_str(&format!("      \"headers\": {{{}}},\n", headers.join(", ")));
                    }
                }
                out.push_str("    },\n");
            }
            out.push_str("  },\n}\n");
            out
        }
        ConfigFormat::CodexToml => {
            let mut out = String::from("# written by a property test\nmodel = \"some-model\"\n");
            for server in servers {
                out.push_str(&format!("\n[mcp_servers.{}]\n", toml_key(&server.name)));
                toml_server_body(&mut out, &server.kind, "http_headers");
            }
            out
        }
        ConfigFormat::ClaudeCodeJson | ConfigFormat::GooseYaml | ConfigFormat::ZedJson => {
            unreachable!("servers are written in the formats of FORMATS only")
        }
        ConfigFormat::ReferenceToml => {
            let mut out = String::from("# written by a property test\n[mcp]\n");
            for server in servers {
                out.push_str(&format!("\n[[mcp.servers]]\nname = {}\n", toml_key(&server.name)));
                toml_server_body(&mut out, &server.kind, "headers");
            }
            out
        }
    }
}

/// What a loaded server says about the fields [`Server`] models.
fn project(server: &ServerConfig) -> Server {
    let kind = if server.transport.is_remote() {
        Kind::Remote { url: server.url.clone().unwrap_or_default(), headers: server.headers.clone() }
    } else {
        Kind::Stdio {
            command: server.command.clone().unwrap_or_default(),
            args: server.args.clone(),
            env: server.env.clone(),
        }
    };
    Server { name: server.name.clone(), kind }
}

/// One piece of an interpolated string, and what it must become.
fn interpolated_piece() -> impl Strategy<Value = (String, String)> {
    let set = BTreeMap::from([("SET".to_owned(), "value $ {x}".to_owned()), ("EMPTY".to_owned(), String::new())]);
    let plain = "[a-zA-Z0-9 {}:/._-]{1,6}".prop_map(|s| (s.clone(), s));
    let default = "[a-zA-Z0-9 ${:/._-]{0,6}";
    prop_oneof![
        plain,
        Just(("$$".to_owned(), "$".to_owned())),
        Just(("${SET}".to_owned(), set["SET"].clone())),
        Just(("${env:SET}".to_owned(), set["SET"].clone())),
        Just(("${EMPTY}".to_owned(), String::new())),
        default.prop_map(|d| (format!("${{SET:-{d}}}"), "value $ {x}".to_owned())),
        default.prop_map(|d| (format!("${{EMPTY:-{d}}}"), d)),
        default.prop_map(|d| (format!("${{UNSET:-{d}}}"), d)),
        // A `$` before anything else stays.
        "[a-zA-Z0-9 ]{1,4}".prop_map(|s| (format!("${s}"), format!("${s}"))),
    ]
}

fn interpolation_env() -> BTreeMap<String, String> {
    BTreeMap::from([("SET".to_owned(), "value $ {x}".to_owned()), ("EMPTY".to_owned(), String::new())])
}

/// Replace one byte of `text` in `edits` places (or insert, or remove), keeping it text.
fn mutate(text: &str, edits: &[(prop::sample::Index, u8, u8)]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for (at, byte, op) in edits {
        if bytes.is_empty() {
            bytes.push(*byte);
            continue;
        }
        let i = at.index(bytes.len());
        match op % 3 {
            0 => bytes[i] = *byte,
            1 => bytes.insert(i, *byte),
            _ => {
                bytes.remove(i);
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn arbitrary_text_never_panics(text in prop_oneof![config_ish(), any::<String>()]) {
        load_every_way(&text)?;
    }

    #[test]
    fn mutated_config_files_never_panic(
        servers in servers(),
        format in prop::sample::select(FORMATS.to_vec()),
        edits in vec((any::<prop::sample::Index>(), any::<u8>(), any::<u8>()), 1..6),
    ) {
        let text = mutate(&write(format, &servers), &edits);
        load_every_way(&text)?;
    }

    #[test]
    fn servers_written_in_any_format_load_back(servers in servers()) {
        for format in FORMATS {
            let text = write(format, &servers);
            let config = McpConfig::parse(&text, None, source_name(format), &no_env())
                .unwrap_or_else(|e| panic!("{format}: {e}\n{text}"));
            let loaded: Vec<Server> = config.servers.iter().map(project).collect();
            prop_assert_eq!(&loaded, &servers, "{}:\n{}", format, text);
            prop_assert!(config.servers.iter().all(|s| s.enabled));
        }
    }

    #[test]
    fn interpolation_follows_the_rules(pieces in vec(interpolated_piece(), 0..8)) {
        let written: String = pieces.iter().map(|(w, _)| w.as_str()).collect();
        let expected: String = pieces.iter().map(|(_, e)| e.as_str()).collect();
        let text = format!("[mcp]\n[[mcp.servers]]\nname = \"s\"\ncommand = \"c\"\nargs = [{}]\n", toml_key(&written));
        let config = McpConfig::parse(&text, None, "mcp.toml", &interpolation_env())
            .unwrap_or_else(|e| panic!("{written:?}: {e}"));
        prop_assert_eq!(&config.servers[0].args, &vec![expected]);
    }

    #[test]
    fn an_unset_variable_is_an_error_naming_it_and_no_value(
        before in vec(interpolated_piece(), 0..3),
        name in "[A-Z][A-Z0-9_]{0,8}",
    ) {
        prop_assume!(name != "SET" && name != "EMPTY");
        let written: String = before.iter().map(|(w, _)| w.as_str()).collect::<String>() + &format!("${{{name}}}");
        let text = format!("[mcp]\n[[mcp.servers]]\nname = \"s\"\ncommand = \"c\"\nargs = [{}]\n", toml_key(&written));
        let error = McpConfig::parse(&text, None, "mcp.toml", &interpolation_env()).unwrap_err().to_string();
        prop_assert!(error.contains(&name), "{}", error);
        prop_assert!(!error.contains("value $ {x}"), "{}", error);
    }
}
