//! The fake server's command line: one flag per scripted behaviour (see the binary's docs).

use std::time::Duration;

/// What the fake server does, as set by its flags. The default is a well-behaved server.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// `--tools N`: list N generated tools (`tool-0000` ...) instead of the built-in ones.
    pub tools: Option<usize>,
    /// `--page-size P`: items per page of every `*/list` (default: everything on one page).
    pub page_size: Option<usize>,
    /// `--repeat-cursor`: the second page of a list repeats the first page's `nextCursor`.
    pub repeat_cursor: bool,
    /// `--banner`: print a banner and junk lines on stdout, at start and before every message.
    pub banner: bool,
    /// `--crash-after K`: `exit(3)` on tools/call number K+1, after a last stderr line.
    pub crash_after: Option<u64>,
    /// `--hang`: never answer tools/call.
    pub hang: bool,
    /// `--slow-ms MS`: answer tools/call after MS milliseconds.
    pub slow: Option<Duration>,
    /// `--huge-mib N`: the `huge` tool answers with one line of N MiB (default 1).
    pub huge_mib: usize,
    /// `--wrong-id`: answer tools/call with an id that was never sent.
    pub wrong_id: bool,
    /// `--duplicate-id`: answer tools/call twice.
    pub duplicate_id: bool,
    /// `--progress`: send `notifications/progress` for calls that carry a `progressToken`.
    pub progress: bool,
    /// `--log`: declare logging and send `notifications/message` for every tools/call.
    pub log: bool,
    /// `--list-changed`: send `notifications/tools/list_changed` after the first tools/call.
    pub list_changed: bool,
    /// Sleep this long before reading stdin (a slow start).
    pub start_delay: Duration,
    /// List the first tool twice.
    pub duplicate_tool: bool,
    /// `--ask-roots`: ask the client `roots/list` once initialized.
    pub ask_roots: bool,
    /// `--ask-sampling`: ask the client `sampling/createMessage` once initialized.
    pub ask_sampling: bool,
    /// `--ask-unknown`: ask the client `foo/bar` once initialized.
    pub ask_unknown: bool,
    /// `--stderr-lines N`: write N numbered lines to stderr at start.
    pub stderr_lines: usize,
    /// `--grandchild`: start `sleep 1000` and never wait for it.
    pub grandchild: bool,
    /// `--fail-initialize`: answer initialize with a JSON-RPC error.
    pub fail_initialize: bool,
    /// `--protocol VERSION`: answer initialize with this version, whatever the client offered.
    pub protocol: Option<String>,
    /// `--prompts`: offer prompts.
    pub prompts: bool,
    /// `--resources`: offer resources and resource templates.
    pub resources: bool,
    /// `--no-method-prompts`: declare prompts but answer `prompts/list` with METHOD_NOT_FOUND.
    pub no_method_prompts: bool,
    /// `--chaos NAME`: list the tool NAME, whose arguments script how each call misbehaves.
    pub chaos: Option<String>,
    /// `--list-ttl-ms MS`: every `*/list` result carries `ttlMs: MS`.
    pub list_ttl_ms: Option<u64>,
    /// `--hang-list-after N`: answer the first N `*/list` requests (pages), never one after.
    pub hang_list_after: Option<u64>,
    /// `--stall-stdin-ms MS`: once initialized, read nothing from stdin for MS milliseconds.
    pub stall_stdin: Option<Duration>,
}

impl Config {
    /// Parse the flags (without the program name).
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Config, String> {
        let mut config = Config { huge_mib: 1, ..Config::default() };
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
            match flag.as_str() {
                "--tools" => config.tools = Some(number(&flag, &value(&flag)?)?),
                "--page-size" => {
                    let p: usize = number(&flag, &value(&flag)?)?;
                    if p == 0 {
                        return Err("--page-size must be at least 1".into());
                    }
                    config.page_size = Some(p);
                }
                "--repeat-cursor" => config.repeat_cursor = true,
                "--banner" => config.banner = true,
                "--crash-after" => config.crash_after = Some(number(&flag, &value(&flag)?)?),
                "--hang" => config.hang = true,
                "--slow-ms" => config.slow = Some(Duration::from_millis(number(&flag, &value(&flag)?)?)),
                "--huge-mib" => config.huge_mib = number(&flag, &value(&flag)?)?,
                "--wrong-id" => config.wrong_id = true,
                "--duplicate-id" => config.duplicate_id = true,
                "--progress" => config.progress = true,
                "--log" => config.log = true,
                "--list-changed" => config.list_changed = true,
                "--start-delay-ms" => config.start_delay = Duration::from_millis(number(&flag, &value(&flag)?)?),
                "--duplicate-tool" => config.duplicate_tool = true,
                "--ask-roots" => config.ask_roots = true,
                "--ask-sampling" => config.ask_sampling = true,
                "--ask-unknown" => config.ask_unknown = true,
                "--stderr-lines" => config.stderr_lines = number(&flag, &value(&flag)?)?,
                "--grandchild" => config.grandchild = true,
                "--fail-initialize" => config.fail_initialize = true,
                "--protocol" => config.protocol = Some(value(&flag)?),
                "--prompts" => config.prompts = true,
                "--resources" => config.resources = true,
                "--no-method-prompts" => {
                    config.prompts = true;
                    config.no_method_prompts = true;
                }
                "--chaos" => config.chaos = Some(value(&flag)?),
                "--list-ttl-ms" => config.list_ttl_ms = Some(number(&flag, &value(&flag)?)?),
                "--hang-list-after" => config.hang_list_after = Some(number(&flag, &value(&flag)?)?),
                "--stall-stdin-ms" => config.stall_stdin = Some(Duration::from_millis(number(&flag, &value(&flag)?)?)),
                other => return Err(format!("unknown flag {other:?}")),
            }
        }
        Ok(config)
    }
}

fn number<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, String> {
    text.parse().map_err(|_| format!("{flag}: {text:?} is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        Config::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn flags_parse_and_bad_ones_are_refused() {
        let c = parse(&["--tools", "2500", "--page-size", "100", "--slow-ms", "250", "--no-method-prompts"]).unwrap();
        assert_eq!(c.tools, Some(2500));
        assert_eq!(c.page_size, Some(100));
        assert_eq!(c.slow, Some(Duration::from_millis(250)));
        assert!(c.prompts && c.no_method_prompts);
        assert_eq!(c.huge_mib, 1, "default");
        assert!(parse(&["--tools"]).unwrap_err().contains("needs a value"));
        assert!(parse(&["--tools", "x"]).unwrap_err().contains("not a number"));
        assert!(parse(&["--page-size", "0"]).is_err());
        assert!(parse(&["--bogus"]).unwrap_err().contains("--bogus"));
        let c = parse(&["--list-ttl-ms", "0", "--hang-list-after", "2"]).unwrap();
        assert_eq!((c.list_ttl_ms, c.hang_list_after), (Some(0), Some(2)));
    }

    #[test]
    fn chaos_takes_the_name_of_its_tool() {
        assert_eq!(parse(&["--chaos", "chaos-1"]).unwrap().chaos.as_deref(), Some("chaos-1"));
        assert!(parse(&["--chaos"]).unwrap_err().contains("needs a value"));
    }
}
