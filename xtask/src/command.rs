//! Running other tools with their output captured, for the commands of `cargo xtask`.

use std::process::{Command, Output};

/// Run `command` with its output captured. On failure the error starts with `who:` (the xtask
/// command, e.g. `peers`), names `title` and the command line, and quotes the end of its output.
pub fn capture(who: &str, title: &str, mut command: Command) -> Result<Output, String> {
    let shown = shown(&command);
    let out = command.output().map_err(|e| format!("{who}: {title}: could not start `{shown}`: {e}"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!("{who}: {title} failed: `{shown}` ({})\n{}", out.status, output_tail(&out)))
    }
}

/// The command line of `command`: its program and arguments, separated by spaces.
pub fn shown(command: &Command) -> String {
    let mut words = vec![command.get_program().to_string_lossy().into_owned()];
    words.extend(command.get_args().map(|arg| arg.to_string_lossy().into_owned()));
    words.join(" ")
}

/// The last lines of a command's stdout and stderr, indented.
pub fn output_tail(out: &Output) -> String {
    const LINES: usize = 40;
    let mut text = String::new();
    for (label, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let s = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = s.lines().collect();
        if lines.is_empty() {
            continue;
        }
        text.push_str(&format!("--- {label} (last {} of {} lines) ---\n", lines.len().min(LINES), lines.len()));
        for line in &lines[lines.len().saturating_sub(LINES)..] {
            text.push_str("  ");
            text.push_str(line);
            text.push('\n');
        }
    }
    if text.is_empty() {
        text.push_str("(it printed nothing)\n");
    }
    text
}
