//! Tab completion for `mcp shell`: subcommand names, their flags, tool names (`SERVER/TOOL`
//! too), argument keys (`key=`) from the tool's inputSchema, prompt names and their arguments,
//! and resource URIs.
//!
//! [`Catalog`] is a snapshot of what the servers offer, taken after each line (the editor runs
//! on a thread of its own and cannot wait for the servers); [`complete`] is a pure function of a
//! catalog and the line, so it is tested without a terminal.

use std::sync::{Arc, RwLock};

use clap::CommandFactory;
use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;

use crate::cli::Cli;
use crate::commands::Started;

/// The subcommands that run inside the shell (the others run on their own).
pub(crate) fn shell_commands() -> Vec<(String, String)> {
    Cli::command()
        .get_subcommands()
        .filter(|c| super::runs_in_shell(c.get_name()))
        .map(|c| (c.get_name().to_owned(), c.get_about().map(|a| a.to_string()).unwrap_or_default()))
        .collect()
}

/// The words of the shell itself.
pub(crate) const SHELL_WORDS: [&str; 3] = ["help", "exit", "quit"];

/// What the servers offer, for completion.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Catalog {
    /// Each tool: the names it may be called by, and its argument keys.
    pub(crate) tools: Vec<(Vec<String>, Vec<String>)>,
    /// Each prompt: its name and its argument names.
    pub(crate) prompts: Vec<(String, Vec<String>)>,
    /// The URIs of the listed resources.
    pub(crate) uris: Vec<String>,
}

impl Catalog {
    /// The catalog of `session`'s servers, as routed now.
    pub(crate) fn of(session: &Started) -> Catalog {
        let routing = session.manager.routing();
        let tools = routing
            .tools()
            .iter()
            .map(|route| {
                let name = route.tool().name.clone();
                let keys = route
                    .tool()
                    .input_schema
                    .get("properties")
                    .and_then(|p| p.as_object())
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                (vec![name.clone(), format!("{}/{name}", route.server())], keys)
            })
            .collect();
        let prompts = routing
            .prompts()
            .iter()
            .map(|p| {
                let args = p.prompt.arguments.iter().flatten().map(|a| a.name.clone()).collect();
                (p.prompt.name.clone(), args)
            })
            .collect();
        let uris = routing.resources().iter().map(|r| r.resource.uri.clone()).collect();
        Catalog { tools, prompts, uris }
    }
}

/// The completions of the word that ends at the end of `line`: where that word starts, and the
/// candidates that begin with it, sorted and without repeats.
pub(crate) fn complete(catalog: &Catalog, line: &str) -> (usize, Vec<String>) {
    let start = line.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let word = &line[start..];
    let before: Vec<&str> = line[..start].split_whitespace().collect();
    let mut candidates: Vec<String> = match before.first() {
        None => shell_commands().into_iter().map(|(name, _)| name).chain(SHELL_WORDS.map(str::to_owned)).collect(),
        Some(command) if word.starts_with('-') => flags(command),
        Some(command) => {
            // The positional words so far (flags and the values of those that take one left out).
            let positional: Vec<&str> = positionals(command, &before[1..]);
            let names = |items: &mut dyn Iterator<Item = &String>| items.cloned().collect::<Vec<_>>();
            match (*command, positional.first()) {
                ("call", None) => names(&mut catalog.tools.iter().flat_map(|(names, _)| names)),
                ("call", Some(tool)) => {
                    let keys = catalog.tools.iter().find(|(names, _)| names.iter().any(|n| n == tool));
                    unused_keys(keys.map(|(_, keys)| keys.as_slice()).unwrap_or_default(), &positional)
                }
                ("prompt", None) => names(&mut catalog.prompts.iter().map(|(name, _)| name)),
                ("prompt", Some(name)) => {
                    let args = catalog.prompts.iter().find(|(n, _)| n == name);
                    unused_keys(args.map(|(_, args)| args.as_slice()).unwrap_or_default(), &positional)
                }
                ("read", None) => catalog.uris.clone(),
                _ => Vec::new(),
            }
        }
    };
    candidates.retain(|c| c.starts_with(word));
    candidates.sort();
    candidates.dedup();
    (start, candidates)
}

/// `key=` for each key not given yet among `words`.
fn unused_keys(keys: &[String], words: &[&str]) -> Vec<String> {
    let given = |key: &str| words.iter().any(|w| w.split_once(['=', ':']).is_some_and(|(k, _)| k == key));
    keys.iter().filter(|k| !given(k)).map(|k| format!("{k}=")).collect()
}

/// The long flags of `command` and the global ones.
fn flags(command: &str) -> Vec<String> {
    let root = Cli::command();
    let own = root.find_subcommand(command).map(|c| c.get_arguments().cloned().collect::<Vec<_>>());
    root.get_arguments()
        .cloned()
        .chain(own.into_iter().flatten())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

/// The words of `words` that are positional for `command`.
fn positionals<'a>(command: &str, words: &[&'a str]) -> Vec<&'a str> {
    let root = Cli::command();
    let sub = root.find_subcommand(command);
    let takes_value = |flag: &str| {
        let name = flag.trim_start_matches('-');
        root.get_arguments()
            .chain(sub.into_iter().flat_map(|s| s.get_arguments()))
            .any(|a| a.get_action().takes_values() && a.get_long() == Some(name))
    };
    let mut out = Vec::new();
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if word.starts_with('-') {
            if !word.contains('=') && takes_value(word) {
                words.next();
            }
        } else {
            out.push(*word);
        }
    }
    out
}

/// The editor's helper: completion from the shared catalog, nothing else.
pub(crate) struct ShellHelper(pub(crate) Arc<RwLock<Catalog>>);

impl Completer for ShellHelper {
    type Candidate = String;

    fn complete(&self, line: &str, pos: usize, _: &rustyline::Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        let catalog = self.0.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        Ok(complete(&catalog, &line[..pos]))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

impl Validator for ShellHelper {}

impl rustyline::Helper for ShellHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        let keys = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Catalog {
            tools: vec![
                (keys(&["echo", "demo/echo"]), keys(&["text"])),
                (keys(&["add", "demo/add"]), keys(&["a", "b"])),
                (keys(&["add_all", "other/add_all"]), keys(&["numbers"])),
            ],
            prompts: vec![("review_code".into(), keys(&["code", "language"]))],
            uris: keys(&["demo://readme", "demo://logo"]),
        }
    }

    fn check(line: &str, expected: &[&str]) {
        let (start, got) = complete(&catalog(), line);
        assert_eq!(got, expected, "{line:?}");
        assert_eq!(start, line.rfind(' ').map_or(0, |i| i + 1), "{line:?}");
    }

    #[test]
    fn commands_then_tools_then_keys() {
        let (_, all) = complete(&catalog(), "");
        for word in ["call", "tools", "status", "read", "prompts", "help", "exit", "quit"] {
            assert!(all.iter().any(|c| c == word), "{word} in {all:?}");
        }
        for outside in ["shell", "serve-demo", "chat", "login", "logout"] {
            assert!(!all.iter().any(|c| c == outside), "{outside} runs on its own");
        }
        check("st", &["status"]);
        check("call ", &["add", "add_all", "demo/add", "demo/echo", "echo", "other/add_all"]);
        check("call ec", &["echo"]);
        check("call demo/", &["demo/add", "demo/echo"]);
        check("call echo ", &["text="]);
        check("call demo/add a=1 ", &["b="]);
        check("call add a:=1 b", &["b="]);
        check("call add a=1 b=2 ", &[]);
        check("call --args {} add ", &["a=", "b="]);
        check("call nope ", &[]);
        check("prompt r", &["review_code"]);
        check("prompt review_code code=x ", &["language="]);
        check("read demo://r", &["demo://readme"]);
        check("tools --sch", &["--schema"]);
        check("call echo --ti", &["--timeout"]);
        check("frobnicate x", &[]);
    }

    #[test]
    fn hostile_lines_complete_to_nothing_without_a_panic() {
        for line in ["   ", "call \u{1b}[2J", "call é", "\u{0}", "--json ", "call --args"] {
            let (start, _) = complete(&catalog(), line);
            assert!(start <= line.len() && line.is_char_boundary(start), "{line:?}");
        }
        assert_eq!(complete(&Catalog::default(), "call ").1, Vec::<String>::new());
    }
}
