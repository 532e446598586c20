//! What `mcp shell` shows as it comes: server notifications and server stderr, one line each,
//! printed above the prompt while the editor waits (rustyline's external printer) and on
//! stderr otherwise.
//!
//! Servers choose this text, so every line goes through [`terminal::sanitize_line`] first, as
//! all of `mcp`'s output does: the external printer writes exactly what it is given.

use std::sync::{Arc, Mutex};

use mcp_protocol::messages::ServerNotification;
use rustyline::ExternalPrinter;

use crate::commands::Live;
use crate::output::terminal;

/// The most characters of one live line (a log message's data may be large).
pub(crate) const MAX_LIVE_CHARS: usize = 2000;

/// Where live lines go: the editor's external printer once there is one, else stderr.
#[derive(Clone, Default)]
pub(crate) struct Printer(Arc<Mutex<Option<Box<dyn ExternalPrinter + Send>>>>);

impl Printer {
    /// Print above the prompt from now on.
    pub(crate) fn use_editor(&self, printer: Box<dyn ExternalPrinter + Send>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(printer);
    }

    /// Show `text` as one line, sanitized and cut to [`MAX_LIVE_CHARS`].
    pub(crate) fn line(&self, text: &str) {
        let shown = shown_line(text);
        let mut external = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(printer) = external.as_mut()
            && printer.print(format!("{shown}\n")).is_ok()
        {
            return;
        }
        drop(external);
        terminal::errln(&shown);
    }

    /// The hooks that feed this printer, for the manager.
    pub(crate) fn hooks(&self) -> Live {
        let (notes, errs) = (self.clone(), self.clone());
        Live {
            notification: Arc::new(move |server: &str, n: &ServerNotification| {
                if let Some(text) = describe(server, n) {
                    notes.line(&text);
                }
            }),
            stderr: Arc::new(move |server: &str, line: &str| errs.line(&format!("[{server}] stderr: {line}"))),
        }
    }
}

/// `text` on one line, sanitized, at most [`MAX_LIVE_CHARS`] characters.
pub(crate) fn shown_line(text: &str) -> String {
    let mut shown = terminal::sanitize_line(text).into_owned();
    if let Some((cut, _)) = shown.char_indices().nth(MAX_LIVE_CHARS) {
        shown.truncate(cut);
        shown.push('…');
    }
    shown
}

/// A value that serializes as a string (a level, a task state), as that string.
fn json_word(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// The line a notification from `server` is shown as; `None` for those the shell does not show
/// (progress goes to the running command's status line).
pub(crate) fn describe(server: &str, n: &ServerNotification) -> Option<String> {
    let what = match n {
        ServerNotification::LoggingMessage(Some(p)) => {
            let data = p.data.as_str().map_or_else(|| p.data.to_string(), str::to_owned);
            let logger = p.logger.as_deref().map(|l| format!(" {l}")).unwrap_or_default();
            format!("{}{logger}: {data}", json_word(&p.level))
        }
        ServerNotification::ToolListChanged(_) => "the tools changed".to_owned(),
        ServerNotification::PromptListChanged(_) => "the prompts changed".to_owned(),
        ServerNotification::ResourceListChanged(_) => "the resources changed".to_owned(),
        ServerNotification::ResourceUpdated(Some(p)) => format!("resource updated: {}", p.uri),
        ServerNotification::TaskStatus(Some(p)) => format!("task {}: {}", p.task.task_id, json_word(&p.task.status)),
        ServerNotification::Other { method, .. } => format!("notification {method}"),
        _ => return None,
    };
    Some(format!("[{server}] {what}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn decode(method: &str, params: serde_json::Value) -> ServerNotification {
        let raw = mcp_protocol::to_raw(&params).unwrap();
        ServerNotification::decode(method, Some(&raw)).unwrap()
    }

    #[test]
    fn notifications_are_one_line_each_naming_the_server() {
        let log = decode("notifications/message", json!({"level": "warning", "logger": "db", "data": "slow query"}));
        assert_eq!(describe("demo", &log).as_deref(), Some("[demo] warning db: slow query"));
        let log = decode("notifications/message", json!({"level": "info", "data": {"tool": "echo"}}));
        assert_eq!(describe("demo", &log).as_deref(), Some("[demo] info: {\"tool\":\"echo\"}"));
        let changed = decode("notifications/tools/list_changed", json!({}));
        assert_eq!(describe("s", &changed).as_deref(), Some("[s] the tools changed"));
        let updated = decode("notifications/resources/updated", json!({"uri": "file:///a"}));
        assert_eq!(describe("s", &updated).as_deref(), Some("[s] resource updated: file:///a"));
        let progress = decode("notifications/progress", json!({"progressToken": 1, "progress": 1}));
        assert_eq!(describe("s", &progress), None, "progress is the running command's");
        assert_eq!(describe("s", &decode("x/y", json!({}))).as_deref(), Some("[s] notification x/y"));
    }

    #[test]
    fn hostile_text_is_escaped_and_cut() {
        let shown = shown_line("\u{1b}]52;c;AAAA\u{7}\u{1b}[2J line\nbreak\u{202e}");
        assert!(!shown.chars().any(terminal::is_terminal_control), "{shown:?}");
        assert!(shown.contains("\\u{1b}[2J") && shown.contains("line\\nbreak"), "{shown}");
        let long = shown_line(&"é".repeat(MAX_LIVE_CHARS * 3));
        assert_eq!(long.chars().count(), MAX_LIVE_CHARS + 1);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn lines_go_to_the_external_printer_once_there_is_one() {
        #[derive(Clone, Default)]
        struct Capture(Arc<Mutex<Vec<String>>>);
        impl ExternalPrinter for Capture {
            fn print(&mut self, msg: String) -> rustyline::Result<()> {
                self.0.lock().unwrap().push(msg);
                Ok(())
            }
        }
        let printer = Printer::default();
        let capture = Capture::default();
        printer.use_editor(Box::new(capture.clone()));
        let hooks = printer.hooks();
        (hooks.stderr)("demo", "\u{1b}[31mred");
        (hooks.notification)("demo", &decode("notifications/prompts/list_changed", json!({})));
        assert_eq!(*capture.0.lock().unwrap(), ["[demo] stderr: \\u{1b}[31mred\n", "[demo] the prompts changed\n"]);
    }
}
