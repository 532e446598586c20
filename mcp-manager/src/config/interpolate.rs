//! `${VAR}` interpolation.
//!
//! | written            | becomes                                                        |
//! |--------------------|----------------------------------------------------------------|
//! | `${VAR}`           | the value of `VAR`; an error when `VAR` is not set              |
//! | `${VAR:-default}`  | the value of `VAR`, or `default` when `VAR` is unset or empty  |
//! | `${env:VAR}`       | the same as `${VAR}` (VS Code's spelling; `:-default` works too) |
//! | `$$`               | a literal `$`                                                  |
//!
//! A `$` followed by anything else stays as it is (`$HOME` is not expanded). A variable name is
//! a letter or `_` followed by letters, digits and `_`. A default is taken literally up to the
//! first `}`: it is not expanded again and cannot contain `}`.
//!
//! In VS Code files two of VS Code's own variables are known: `${workspaceFolder}` (the folder
//! that holds `.vscode/`, known when the file is loaded from disk) and `${userHome}` (the `HOME`
//! variable). VS Code's `${input:...}` prompts are not supported and are reported as such.
//!
//! The environment is an [`EnvLookup`], so tests never read or change the process environment.
//!
//! Every value taken from the environment is remembered as a secret
//! (`mcp_transport::redact::remember_secret`): `Debug` output and error texts mask it, even once
//! it is part of a longer string such as `--token=s3cr3t`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Where `${VAR}` finds its values.
pub trait EnvLookup {
    /// The value of `name`, or `None` when it is not set.
    fn var(&self, name: &str) -> Option<String>;
}

/// The environment of this process (a variable that is not valid UTF-8 counts as unset).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl EnvLookup for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl<F: Fn(&str) -> Option<String>> EnvLookup for F {
    fn var(&self, name: &str) -> Option<String> {
        self(name)
    }
}

impl EnvLookup for BTreeMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl EnvLookup for HashMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

/// Expands `${...}` in config strings.
pub(crate) struct Interpolator<'a> {
    pub env: &'a dyn EnvLookup,
    /// VS Code's own variables are known.
    pub vscode: bool,
    /// What `${workspaceFolder}` stands for.
    pub workspace_folder: Option<&'a Path>,
}

impl Interpolator<'_> {
    /// `text` with every `${...}` replaced, or one message per reference that failed. Messages
    /// name variables, never values.
    pub fn expand(&self, text: &str) -> Result<String, Vec<String>> {
        let mut out = String::with_capacity(text.len());
        let mut errors = Vec::new();
        let mut rest = text;
        while let Some(dollar) = rest.find('$') {
            out.push_str(&rest[..dollar]);
            let after = &rest[dollar + 1..];
            if let Some(tail) = after.strip_prefix('$') {
                out.push('$');
                rest = tail;
            } else if let Some(body_start) = after.strip_prefix('{') {
                let Some(close) = body_start.find('}') else {
                    errors.push("unterminated \"${\" (write \"$$\" for a literal \"$\")".to_owned());
                    return Err(errors);
                };
                match self.reference(&body_start[..close]) {
                    Ok(value) => out.push_str(&value),
                    Err(message) => errors.push(message),
                }
                rest = &body_start[close + 1..];
            } else {
                out.push('$');
                rest = after;
            }
        }
        out.push_str(rest);
        if errors.is_empty() { Ok(out) } else { Err(errors) }
    }

    /// The value of one `${body}`.
    fn reference(&self, body: &str) -> Result<String, String> {
        if let Some(input) = body.strip_prefix("input:") {
            return Err(format!(
                "VS Code input variables are not supported (\"${{input:{input}}}\"): write the value in the file or \
                 use ${{env:VAR}}"
            ));
        }
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        let (name, explicit_env) = match name.strip_prefix("env:") {
            Some(name) => (name, true),
            None => (name, false),
        };
        if !is_variable_name(name) {
            return Err(format!(
                "invalid variable reference \"${{{}}}\": expected ${{NAME}}, ${{NAME:-default}} or ${{env:NAME}} \
                 (write \"$$\" for a literal \"$\")",
                if default.is_some() { format!("{name}:-...") } else { name.to_owned() }
            ));
        }
        if self.vscode && !explicit_env {
            match name {
                "workspaceFolder" => {
                    return match (self.workspace_folder, default) {
                        (Some(folder), _) => Ok(folder.display().to_string()),
                        (None, Some(default)) => Ok(default.to_owned()),
                        (None, None) => {
                            Err("\"${workspaceFolder}\" is only known when the file is loaded from disk".to_owned())
                        }
                    };
                }
                // A path, not a secret: not remembered.
                "userHome" => return self.lookup("HOME", default, false),
                _ => {}
            }
        }
        self.lookup(name, default, true)
    }

    /// The value of `name` (or `default`); a value from the environment is remembered as a
    /// secret when `secret` holds.
    fn lookup(&self, name: &str, default: Option<&str>, secret: bool) -> Result<String, String> {
        match (self.env.var(name), default) {
            (Some(value), Some(default)) if value.is_empty() => Ok(default.to_owned()),
            (Some(value), _) => {
                // A value from the environment may be a secret (`--token=${TOKEN}`): remember it,
                // so that `Debug` output and error texts mask it wherever it ends up.
                if secret {
                    mcp_transport::redact::remember_secret(&value);
                }
                Ok(value)
            }
            (None, Some(default)) => Ok(default.to_owned()),
            (None, None) => Err(format!("variable {name:?} is not set (write ${{{name}:-default}} to give a default)")),
        }
    }
}

/// A letter or `_`, then letters, digits and `_`.
pub(crate) fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> BTreeMap<String, String> {
        [("HOME", "/home/me"), ("EMPTY", ""), ("TOKEN", "s3cr3t")].map(|(k, v)| (k.to_owned(), v.to_owned())).into()
    }

    #[test]
    fn expands_every_syntax() {
        let env = env();
        let i = Interpolator { env: &env, vscode: false, workspace_folder: None };
        for (text, want) in [
            ("plain", "plain"),
            ("${HOME}/x", "/home/me/x"),
            ("${env:HOME}", "/home/me"),
            ("${MISSING:-fallback}", "fallback"),
            ("${EMPTY:-fallback}", "fallback"),
            ("${EMPTY}", ""),
            ("${HOME:-unused}", "/home/me"),
            ("${env:MISSING:-d}", "d"),
            ("${MISSING:-}", ""),
            ("cost $$5 and $HOME", "cost $5 and $HOME"),
            ("$$${HOME}$$", "$/home/me$"),
            ("trailing $", "trailing $"),
            ("${workspaceFolder:-ws}", "ws"),
        ] {
            assert_eq!(i.expand(text).as_deref(), Ok(want), "{text}");
        }
    }

    #[test]
    fn reports_every_failure_without_values() {
        let env = env();
        let i = Interpolator { env: &env, vscode: false, workspace_folder: None };
        let errors = i.expand("${A}-${TOKEN}-${B}").unwrap_err();
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0], "variable \"A\" is not set (write ${A:-default} to give a default)");
        assert!(errors[1].contains("\"B\""));
        assert!(!errors.concat().contains("s3cr3t"));
        assert_eq!(i.expand("${HOME").unwrap_err(), ["unterminated \"${\" (write \"$$\" for a literal \"$\")"]);
        assert!(i.expand("${1X}").unwrap_err()[0].starts_with("invalid variable reference \"${1X}\""));
        assert!(i.expand("${}").unwrap_err()[0].starts_with("invalid variable reference \"${}\""));
    }

    #[test]
    fn vscode_variables() {
        let env = env();
        let folder = Path::new("/ws");
        let i = Interpolator { env: &env, vscode: true, workspace_folder: Some(folder) };
        assert_eq!(i.expand("${workspaceFolder}/.env").as_deref(), Ok("/ws/.env"));
        assert_eq!(i.expand("${userHome}").as_deref(), Ok("/home/me"));
        assert!(i.expand("${input:pat}").unwrap_err()[0].starts_with("VS Code input variables are not supported"));
        let i = Interpolator { env: &env, vscode: true, workspace_folder: None };
        assert_eq!(
            i.expand("${workspaceFolder}").unwrap_err(),
            ["\"${workspaceFolder}\" is only known when the file is loaded from disk"]
        );
    }
}
