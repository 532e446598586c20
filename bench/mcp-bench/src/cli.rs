//! The command line every bench client takes, ours and rmcp's alike:
//!
//! ```text
//! <client> <w1|w2|w3|w4|w5> <legacy|modern|auto> <server command | http://url> [server flag...]
//! ```
//!
//! A target starting with `http://` is a streamable HTTP endpoint (no flags may follow); anything
//! else is a server command, spawned with the flags that follow. W5 runs over stdio only: it
//! spawns [`W5_SERVERS`](crate::workloads::W5_SERVERS) copies of the command, copy K with
//! `--prefix sK-` added, so that one host can route every copy's tools.

use mcp_manager::connection::EraPreference;

/// The workloads, in the order the harness runs them.
pub const WORKLOADS: [&str; 5] = ["w1", "w2", "w3", "w4", "w5"];

/// Where a client finds its server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A server command to spawn, with its flags.
    Stdio {
        /// The program.
        command: String,
        /// Its flags.
        args: Vec<String>,
    },
    /// A streamable HTTP endpoint.
    Http(String),
}

impl Target {
    /// W5's server number `k`: the same command with `--prefix sK-` added (stdio only).
    pub fn w5_copy(&self, k: usize) -> Result<(Target, String), String> {
        match self {
            Target::Stdio { command, args } => {
                let mut args = args.clone();
                args.extend(["--prefix".to_owned(), w5_prefix(k)]);
                Ok((Target::Stdio { command: command.clone(), args }, w5_prefix(k)))
            }
            Target::Http(_) => Err("w5 runs over stdio only".into()),
        }
    }
}

/// The tool-name prefix of W5's server `k`.
pub fn w5_prefix(k: usize) -> String {
    format!("s{k}-")
}

/// One run's command line, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// `w1` .. `w5`.
    pub workload: &'static str,
    /// The era the client must settle on (`auto`: whichever the server offers).
    pub era: EraPreference,
    /// The era as written, for the report.
    pub era_name: String,
    /// The server.
    pub target: Target,
}

impl Invocation {
    /// Parse the arguments after the program's name; the error says what is wrong.
    pub fn parse(args: &[String]) -> Result<Invocation, String> {
        let [workload, era, target, server_args @ ..] = args else {
            return Err(format!("expected <workload> <era> <target> [server flag...], got {args:?}"));
        };
        let workload = WORKLOADS
            .into_iter()
            .find(|w| w == workload)
            .ok_or_else(|| format!("unknown workload {workload:?}: expected one of {}", WORKLOADS.join(", ")))?;
        let era_pref: EraPreference = era.parse()?;
        let target = if target.starts_with("http://") || target.starts_with("https://") {
            if !server_args.is_empty() {
                return Err(format!("server flags {server_args:?} make no sense with the URL {target}"));
            }
            Target::Http(target.clone())
        } else if target.is_empty() {
            return Err("the server command is empty".into());
        } else {
            Target::Stdio { command: target.clone(), args: server_args.to_vec() }
        };
        if workload == "w5" && matches!(target, Target::Http(_)) {
            return Err("w5 runs over stdio only".into());
        }
        Ok(Invocation { workload, era: era_pref, era_name: era.to_ascii_lowercase(), target })
    }

    /// The protocol era the connection must settle on, if the era asked for one.
    pub fn wanted_era(&self) -> Option<mcp_protocol::Era> {
        match self.era {
            EraPreference::Modern => Some(mcp_protocol::Era::Modern),
            EraPreference::Legacy => Some(mcp_protocol::Era::Legacy),
            EraPreference::Auto => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_server_command_takes_the_flags_that_follow_it() {
        let run = Invocation::parse(&args(&["w3", "modern", "/bin/server", "--tools", "10002"])).unwrap();
        assert_eq!(run.workload, "w3");
        assert_eq!(run.era, EraPreference::Modern);
        assert_eq!(run.wanted_era(), Some(mcp_protocol::Era::Modern));
        let expected = Target::Stdio { command: "/bin/server".into(), args: args(&["--tools", "10002"]) };
        assert_eq!(run.target, expected);
        let (copy, prefix) = run.target.w5_copy(3).unwrap();
        assert_eq!(prefix, "s3-");
        let Target::Stdio { args: copy_args, .. } = copy else { panic!("a stdio copy") };
        assert_eq!(copy_args, args(&["--tools", "10002", "--prefix", "s3-"]));
    }

    #[test]
    fn a_url_is_http_and_takes_no_flags() {
        let run = Invocation::parse(&args(&["w1", "Legacy", "http://127.0.0.1:9/mcp"])).unwrap();
        assert_eq!(run.target, Target::Http("http://127.0.0.1:9/mcp".into()));
        assert_eq!((run.era, run.era_name.as_str()), (EraPreference::Legacy, "legacy"));
        let err = Invocation::parse(&args(&["w1", "legacy", "http://127.0.0.1:9/mcp", "--tools", "2"])).unwrap_err();
        assert!(err.contains("--tools"), "{err}");
    }

    #[test]
    fn bad_command_lines_say_what_is_wrong() {
        let err = Invocation::parse(&args(&["w9", "legacy", "/bin/server"])).unwrap_err();
        assert!(err.contains("\"w9\"") && err.contains("w1, w2"), "{err}");
        let err = Invocation::parse(&args(&["w1", "medieval", "/bin/server"])).unwrap_err();
        assert!(err.contains("medieval"), "{err}");
        let err = Invocation::parse(&args(&["w1", "legacy"])).unwrap_err();
        assert!(err.contains("expected <workload>"), "{err}");
        let err = Invocation::parse(&args(&["w1", "legacy", ""])).unwrap_err();
        assert!(err.contains("empty"), "{err}");
        let err = Invocation::parse(&args(&["w5", "auto", "http://127.0.0.1:9/mcp"])).unwrap_err();
        assert!(err.contains("stdio only"), "{err}");
    }
}
