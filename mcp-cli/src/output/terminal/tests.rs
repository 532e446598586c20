use serde_json::json;

use super::*;

/// Text a hostile server sends: CSI and OSC sequences (OSC 52 sets the clipboard), a C1 CSI,
/// a bare CR that would overwrite the line, BEL, backspace, DEL, and bidi overrides.
const EVIL: &str = "a\x1b[2J\x1b]52;c;ZXZpbA==\x07b\u{9b}31mc\rd\x08\x7f\u{202e}txt.exe\u{2066}e\u{2069}\u{85}";

fn assert_clean(shown: &str) {
    let bad: Vec<char> = shown.chars().filter(|c| is_terminal_control(*c) && !matches!(c, '\n' | '\t')).collect();
    assert!(bad.is_empty(), "raw controls {bad:?} in {shown:?}");
}

#[test]
fn controls_become_visible_escapes() {
    let shown = sanitize(EVIL);
    assert_clean(&shown);
    assert_eq!(
        shown,
        "a\\u{1b}[2J\\u{1b}]52;c;ZXZpbA==\\u{7}b\\u{9b}31mc\\rd\\u{8}\\u{7f}\\u{202e}txt.exe\\u{2066}e\\u{2069}\\u{85}"
    );
    // Layout is kept: newlines and tabs, and a CR LF pair is one line break.
    assert_eq!(sanitize("a\tb\nc\r\nd"), "a\tb\nc\nd");
    assert_eq!(sanitize_line("a\tb\nc\r\nd"), "a\\tb\\nc\\r\\nd");
    assert!(matches!(sanitize("plain text, ünïcode ✓"), Cow::Borrowed(_)));
    // Sanitizing twice changes nothing more.
    assert_eq!(sanitize(&sanitize(EVIL)), sanitize(EVIL));
    let mut written = Vec::new();
    write_sanitized(&mut written, EVIL).unwrap();
    assert_eq!(String::from_utf8(written).unwrap(), sanitize(EVIL));
}

#[test]
fn the_status_line_is_the_only_control_of_its_own() {
    let line = status_line_text(&format!("progress 1/3 {EVIL}\nnext"));
    let rest = line.strip_prefix("\r\x1b[2K").expect("the line is cleared first");
    assert_clean(rest);
    assert!(!rest.contains('\n'), "one line: {rest:?}");
}

#[test]
fn json_stays_exact_and_carries_no_raw_controls() {
    let value = json!({"text": EVIL, EVIL: [EVIL, 1, null], "nested": {"k": "\u{0}\u{1f}\"\\"}});
    let text = json_text(&value);
    assert!(!text.chars().any(is_terminal_control_but_layout), "{text:?}");
    let back: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(back, value, "the document parses back to exactly what was sent");
    assert!(text.contains("\\u001b[2J") && text.contains("\\u009b") && text.contains("\\u202e"), "{text}");
    assert!(text.contains("\n  \"text\": "), "pretty-printed: {text}");
    assert_eq!(json_text(&json!({"a": [1, 2]})), serde_json::to_string_pretty(&json!({"a": [1, 2]})).unwrap());
}

fn is_terminal_control_but_layout(c: char) -> bool {
    is_terminal_control(c) && c != '\n'
}

/// Everything that reaches the terminal goes through this module: no other source file of the
/// crate names stdout or stderr or uses the printing macros (the demo server included).
#[test]
fn only_this_module_writes_to_the_terminal() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let banned = ["print!(", "println!(", "eprint!(", "eprintln!(", "stdout()", "stderr()", "dbg!("];
    let mut files = vec![src.clone()];
    let mut offenders = Vec::new();
    let mut seen = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") || path.starts_with(src.join("output/terminal")) {
            continue;
        }
        if path == src.join("output/terminal.rs") {
            continue;
        }
        seen += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            // `tokio::io::stdout()` is the demo server's protocol channel, not text for people.
            let line = line.replace("tokio::io::stdout()", "");
            if let Some(b) = banned.iter().find(|b| line.contains(*b)) {
                offenders.push(format!("{}:{}: {b}", path.display(), n + 1));
            }
        }
    }
    assert!(seen > 10, "the sources were found ({seen} files)");
    assert!(offenders.is_empty(), "write through output::terminal instead:\n{}", offenders.join("\n"));
}
