//! Reading the user's answers from the terminal: bounded lines from stdin, and the terminal's
//! answers to elicitation requests ([`TerminalAsk`]).

use std::io::{BufRead, Read as _};

use futures::future::BoxFuture;
use host_bridge::{AskUser, FormAnswer, FormRequest};

use crate::output::terminal;

/// The longest line read from stdin (a chat message or a form answer).
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024;

/// One line of `input` without its line break: `None` at the end of input (or on a read error),
/// `Some(Err(..))` for a line over [`MAX_LINE_BYTES`], which is skipped without being kept.
pub(crate) fn read_line_bounded(input: &mut impl BufRead) -> Option<Result<String, String>> {
    let mut bytes = Vec::new();
    let n = input.by_ref().take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut bytes).ok()?;
    if n == 0 {
        return None;
    }
    if bytes.len() > MAX_LINE_BYTES && !bytes.ends_with(b"\n") {
        // Skip the rest of the line, a bounded chunk at a time.
        loop {
            bytes.clear();
            match input.by_ref().take(MAX_LINE_BYTES as u64).read_until(b'\n', &mut bytes) {
                Ok(0) | Err(_) => break,
                Ok(_) if bytes.ends_with(b"\n") => break,
                Ok(_) => {}
            }
        }
        return Some(Err(format!("a line longer than {MAX_LINE_BYTES} bytes was skipped")));
    }
    let text = String::from_utf8_lossy(&bytes);
    Some(Ok(text.trim_end_matches(['\n', '\r']).to_owned()))
}

/// Elicitation on a terminal: the server's message, then each field (its name and title) asked in
/// turn (Enter keeps the default); an empty answer to "answer?" declines. What the server wrote
/// is shown sanitized, like all output.
pub(crate) struct TerminalAsk;

impl AskUser for TerminalAsk {
    fn ask_form(&self, request: FormRequest) -> BoxFuture<'static, FormAnswer> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask_on_terminal(&request)).await.unwrap_or(FormAnswer::Cancel)
        })
    }
}

fn ask_on_terminal(request: &FormRequest) -> FormAnswer {
    let read = || match read_line_bounded(&mut std::io::stdin().lock()) {
        Some(Ok(line)) => Some(line.trim().to_owned()),
        Some(Err(_)) | None => None,
    };
    terminal::errln(&format!("\nserver {:?} asks: {}", request.server, request.message));
    terminal::err("answer? [y/N] ");
    if !matches!(read().as_deref(), Some("y" | "Y" | "yes")) {
        return FormAnswer::Decline;
    }
    let mut values = request.prefilled.clone();
    for (name, property) in request.schema.properties.iter() {
        let default = values.get(name).map(|v| v.to_string()).unwrap_or_default();
        let property = serde_json::to_value(property).unwrap_or_default();
        let kind = property["type"].as_str();
        let title = property["title"].as_str().map(|t| format!(" ({t})")).unwrap_or_default();
        terminal::err(&format!("  {name}{title} [{default}]: "));
        let Some(answer) = read() else { return FormAnswer::Cancel };
        if answer.is_empty() {
            continue;
        }
        let value = match kind {
            Some("number" | "integer" | "boolean") => {
                serde_json::from_str(&answer).unwrap_or(serde_json::Value::String(answer))
            }
            _ => serde_json::Value::String(answer),
        };
        values.insert(name.clone(), value);
    }
    FormAnswer::Accept(values)
}

#[cfg(test)]
mod tests {
    use super::{MAX_LINE_BYTES, read_line_bounded};

    #[test]
    fn lines_are_read_bounded() {
        let long = "x".repeat(MAX_LINE_BYTES * 2 + 10);
        let text = format!("hello\r\n{long}\nafter\nlast");
        let mut input = std::io::Cursor::new(text.into_bytes());
        assert_eq!(read_line_bounded(&mut input), Some(Ok("hello".into())));
        assert!(read_line_bounded(&mut input).unwrap().unwrap_err().contains("skipped"));
        assert_eq!(read_line_bounded(&mut input), Some(Ok("after".into())));
        assert_eq!(read_line_bounded(&mut input), Some(Ok("last".into())), "a last line without a line break");
        assert_eq!(read_line_bounded(&mut input), None);
    }
}
