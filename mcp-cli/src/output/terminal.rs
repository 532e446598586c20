//! Where text leaves `mcp` for a terminal: the one place that writes to stdout and stderr, and
//! the sanitizer every byte written there goes through.
//!
//! Servers (and the chat LLM) choose much of what `mcp` prints: tool names and descriptions,
//! results, log lines, progress messages, stderr tails, error messages, elicitation forms. Text
//! with terminal control sequences in it could clear the screen, rewrite lines that were already
//! printed, spoof a prompt, or set the clipboard (OSC 52). So [`sanitize`] shows every character
//! that a terminal would act on as a visible escape instead: the C0 controls (ESC, BEL, CR,
//! backspace, ...) except the newline and tab that layouts keep, DEL, the C1 controls
//! (U+0080..U+009F, CSI U+009B among them) and the bidirectional overrides and isolates
//! (U+202A..U+202E, U+2066..U+2069), which reorder what a line seems to say. A lone CR is
//! escaped; a CR LF pair is a line break and becomes a newline.
//!
//! [`out`], [`outln`], [`err`] and [`errln`] sanitize what they write; [`status_line`] and
//! [`clear_status_line`] are the only writers of a control sequence of `mcp`'s own (clearing the
//! line for progress and the spinner), and what follows it is sanitized as one line. Nothing
//! else in this crate writes to stdout or stderr (a test checks the sources), so no output path
//! can forget the sanitizer.
//!
//! `--json` documents stay exact: [`json_text`] pretty-prints with every control character,
//! DEL, C1 control and bidirectional control written as a JSON `\u` escape, so the document
//! parses back to exactly what the server sent and still carries nothing a terminal acts on.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, IsTerminal as _, Write};

/// Whether the terminal would act on `c`: C0 controls, DEL, C1 controls, and the bidirectional
/// embeddings, overrides and isolates.
pub fn is_terminal_control(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` as it may be shown on a terminal: every character [`is_terminal_control`] names,
/// except the newline and the tab, written as a visible escape (`\u{1b}`, `\r`, `\u{202e}`);
/// a CR LF pair becomes a newline. Text without such characters is returned as it is, and
/// sanitizing twice changes nothing more.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// [`sanitize`] for text that must stay on one line: newlines and tabs are escaped too.
pub fn sanitize_line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

fn escape(text: &str, keep_layout: bool) -> Cow<'_, str> {
    let kept = |c: char| keep_layout && matches!(c, '\n' | '\t');
    if !text.chars().any(|c| is_terminal_control(c) && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if keep_layout && chars.peek() == Some(&'\n') => {}
            c if !is_terminal_control(c) || kept(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

/// Write `text`, sanitized, to `writer`.
pub fn write_sanitized(writer: &mut dyn Write, text: &str) -> io::Result<()> {
    writer.write_all(sanitize(text).as_bytes())
}

fn write_to(mut writer: impl Write, text: &str, newline: bool) {
    // A closed pipe (`mcp tools | head`) or a closed terminal is not worth a message, and there
    // is nowhere left to say it.
    let _ = write_sanitized(&mut writer, text);
    if newline && !text.ends_with('\n') {
        let _ = writer.write_all(b"\n");
    }
    let _ = writer.flush();
}

/// Write `text`, sanitized, to stdout.
pub fn out(text: &str) {
    write_to(io::stdout().lock(), text, false);
}

/// Write `text`, sanitized, to stdout, ending with a line break (added when it has none).
pub fn outln(text: &str) {
    write_to(io::stdout().lock(), text, true);
}

/// Write `text`, sanitized, to stderr.
pub fn err(text: &str) {
    write_to(io::stderr().lock(), text, false);
}

/// Write `text`, sanitized, to stderr, ending with a line break (added when it has none).
pub fn errln(text: &str) {
    write_to(io::stderr().lock(), text, true);
}

/// `mcp`'s own control sequence: back to the start of the line, and clear it.
const CLEAR_LINE: &str = "\r\x1b[2K";

/// What [`status_line`] writes for `text`: the line cleared, then `text` on one line, sanitized.
pub fn status_line_text(text: &str) -> String {
    format!("{CLEAR_LINE}{}", sanitize_line(text))
}

/// Replace the current stderr line with `text` (sanitized, on one line): for progress and the
/// spinner, on a terminal.
pub fn status_line(text: &str) {
    let mut stderr = io::stderr().lock();
    let _ = stderr.write_all(status_line_text(text).as_bytes());
    let _ = stderr.flush();
}

/// Clear the current stderr line (after [`status_line`]).
pub fn clear_status_line() {
    let mut stderr = io::stderr().lock();
    let _ = stderr.write_all(CLEAR_LINE.as_bytes());
    let _ = stderr.flush();
}

/// Whether stdout is a terminal.
pub fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

/// Whether stderr is a terminal.
pub fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// `value` as pretty JSON, exact (it parses back to `value`), with every character
/// [`is_terminal_control`] names written as a `\u` escape.
pub fn json_text(value: &serde_json::Value) -> String {
    let mut bytes = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, SafeFormatter::default());
    match serde::Serialize::serialize(value, &mut serializer) {
        // The formatter writes only whole UTF-8 strings and ASCII escapes.
        Ok(()) => String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        Err(_) => value.to_string(),
    }
}

/// serde_json's pretty formatter, escaping in strings what serde_json leaves raw (DEL, the C1
/// controls, the bidirectional controls); it escapes the C0 controls itself.
#[derive(Default)]
struct SafeFormatter(serde_json::ser::PrettyFormatter<'static>);

impl serde_json::ser::Formatter for SafeFormatter {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_terminal_control(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                // Every such character is in the Basic Multilingual Plane: one `\uXXXX`.
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}

#[cfg(test)]
mod tests;
