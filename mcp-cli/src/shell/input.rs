//! Where the shell's lines come from: the line editor on a terminal (history, completion), or
//! stdin read line by line (bounded) when it is not one, so the shell can be scripted.
//!
//! Both read on a thread of their own and only when asked ([`Input::next_line`]): while a
//! command runs nothing else reads stdin, so a form the command asks (elicitation) gets the
//! user's answer, and the terminal is out of raw mode, so Ctrl-C reaches `mcp` as a signal.

use std::path::PathBuf;
use std::sync::{Arc, RwLock, mpsc as std_mpsc};

use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{CompletionType, Config, Editor};
use tokio::sync::mpsc;

use super::complete::{Catalog, ShellHelper};
use super::live::Printer;

/// The most lines the history file keeps.
pub(crate) const HISTORY_LINES: usize = 1000;

/// The prompt.
pub(crate) const PROMPT: &str = "mcp> ";

/// A source of lines: a line, or an error to show (a line too long, a terminal that failed).
pub(crate) struct Input {
    ask: std_mpsc::Sender<()>,
    lines: mpsc::Receiver<Result<String, String>>,
}

impl Input {
    /// The next line; `None` at the end (Ctrl-D, end of input).
    pub(crate) async fn next_line(&mut self) -> Option<Result<String, String>> {
        self.ask.send(()).ok()?;
        self.lines.recv().await
    }

    /// Lines of stdin, each at most `commands::MAX_LINE_BYTES`.
    pub(crate) fn plain() -> Input {
        let (ask, asked) = std_mpsc::channel::<()>();
        let (tx, lines) = mpsc::channel(1);
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            while asked.recv().is_ok() {
                let Some(line) = crate::commands::read_line_bounded(&mut stdin) else { break };
                if tx.blocking_send(line).is_err() {
                    break;
                }
            }
        });
        Input { ask, lines }
    }

    /// The line editor on the terminal, completing from `catalog`, with the history in
    /// `history` (when there is a place for it); live lines go above its prompt via `printer`.
    pub(crate) fn editor(
        catalog: Arc<RwLock<Catalog>>,
        history: Option<PathBuf>,
        printer: &Printer,
    ) -> Result<Input, String> {
        let config = Config::builder()
            .max_history_size(HISTORY_LINES)
            .map_err(|e| e.to_string())?
            .history_ignore_space(true)
            .auto_add_history(true)
            .completion_type(CompletionType::List)
            .build();
        let mut editor: Editor<ShellHelper, FileHistory> = Editor::with_config(config).map_err(|e| e.to_string())?;
        editor.set_helper(Some(ShellHelper(catalog)));
        if let Some(path) = &history {
            // A missing file is the first run; an unreadable one only costs the old lines.
            let _ = editor.load_history(path);
        }
        if let Ok(external) = editor.create_external_printer() {
            printer.use_editor(Box::new(external));
        }
        let (ask, asked) = std_mpsc::channel::<()>();
        let (tx, lines) = mpsc::channel(1);
        std::thread::spawn(move || {
            while asked.recv().is_ok() {
                let line = loop {
                    match editor.readline(PROMPT) {
                        Ok(line) => break Some(Ok(line)),
                        // Ctrl-C at the prompt drops what was typed: a fresh prompt.
                        Err(ReadlineError::Interrupted) => continue,
                        Err(ReadlineError::Eof) => break None,
                        Err(e) => break Some(Err(format!("the terminal failed: {e}"))),
                    }
                };
                if let Some(path) = &history {
                    save_history(&mut editor, path);
                }
                let Some(line) = line else { break };
                let failed = line.is_err();
                if tx.blocking_send(line).is_err() || failed {
                    break;
                }
            }
        });
        Ok(Input { ask, lines })
    }
}

/// Save the history, readable by the user only (typed arguments may be private); a line typed
/// with a leading space is not kept at all.
fn save_history(editor: &mut Editor<ShellHelper, FileHistory>, path: &std::path::Path) {
    if let Some(dir) = path.parent() {
        let _ = create_private_dir(dir);
    }
    if editor.save_history(path).is_ok() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        }
    }
}

fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Where the history is kept: `$XDG_STATE_HOME/mcp/history`, else the platform's place for
/// state (`~/.local/state/mcp/history`; `%LOCALAPPDATA%\mcp\history` on Windows); `None`
/// without a home directory.
pub(crate) fn history_path(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let absolute = |v: Option<String>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    let base = absolute(var("XDG_STATE_HOME"))
        .or_else(|| if cfg!(windows) { absolute(var("LOCALAPPDATA")) } else { None })
        .or_else(|| absolute(var("HOME")).map(|home| home.join(".local").join("state")))?;
    Some(base.join("mcp").join("history"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_lives_in_the_state_directory() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        assert_eq!(
            history_path(env(&[("XDG_STATE_HOME", "/s"), ("HOME", "/h")])),
            Some(PathBuf::from("/s/mcp/history"))
        );
        if !cfg!(windows) {
            assert_eq!(history_path(env(&[("HOME", "/h")])), Some(PathBuf::from("/h/.local/state/mcp/history")));
            // A relative directory is ignored, as the XDG spec asks.
            assert_eq!(
                history_path(env(&[("XDG_STATE_HOME", "rel"), ("HOME", "/h")])),
                Some(PathBuf::from("/h/.local/state/mcp/history"))
            );
            assert_eq!(history_path(env(&[])), None);
        }
    }
}
