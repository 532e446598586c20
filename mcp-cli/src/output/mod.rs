//! What `mcp` prints: aligned tables for people (descriptions cut to the terminal's width when
//! stdout is a terminal), one JSON document with stable field names for `--json`, and summaries
//! of images, audio and blobs, which `--save DIR` writes to files.
//!
//! - [`Table`]: columns aligned on character counts; the last column is the one that gives way.
//! - [`media`]: `[image: image/png, 3 KB]` summaries and safe saving under a directory.
//! - [`views`]: the tables and JSON documents of each subcommand.
//! - [`terminal`]: the only writer to stdout and stderr, and the sanitizer of what it writes
//!   (server text never reaches the terminal with control sequences in it).

pub mod media;
pub mod terminal;
pub mod views;

/// The width of the terminal stdout writes to, or `None` when stdout is not a terminal (then
/// nothing is cut). A terminal that does not say its size (a pseudo-terminal with no rows set,
/// as some harnesses make) is taken at `$COLUMNS`, else [`DEFAULT_WIDTH`]: a table that runs
/// off a terminal is never right.
pub fn stdout_width() -> Option<usize> {
    if !terminal::stdout_is_terminal() {
        return None;
    }
    let size = terminal_size::terminal_size().map(|(w, _)| usize::from(w.0));
    Some(terminal_width(size, std::env::var("COLUMNS").ok().as_deref()))
}

/// The width taken for a terminal that does not say its size.
pub const DEFAULT_WIDTH: usize = 80;

/// The width of a terminal: its size when it says one, else `$COLUMNS` when that is a number,
/// else [`DEFAULT_WIDTH`].
pub fn terminal_width(size: Option<usize>, columns: Option<&str>) -> usize {
    size.filter(|w| *w > 0)
        .or_else(|| columns.and_then(|c| c.trim().parse::<usize>().ok()).filter(|w| *w > 0))
        .unwrap_or(DEFAULT_WIDTH)
}

/// Text on one line: line breaks and tabs become single spaces.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` characters, ending with `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// A table with a header row. Cells are put on one line, with control characters escaped
/// ([`terminal::sanitize`], before the widths are measured); columns are separated by two spaces.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// The narrowest the last column is cut to, however narrow the terminal.
const MIN_LAST_COLUMN: usize = 16;

impl Table {
    /// A table with these column headers.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Table { headers: headers.into_iter().map(Into::into).collect(), rows: Vec::new() }
    }

    /// Add a row (missing cells are empty, extra cells dropped).
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        let mut row: Vec<String> =
            cells.into_iter().map(|c| terminal::sanitize(&one_line(&c.into())).into_owned()).collect();
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
        self
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as text, one line per row with a trailing newline each. With a `width`, the
    /// last column is cut so that lines fit (down to a minimum).
    pub fn render(&self, width: Option<usize>) -> String {
        let columns = self.headers.len();
        if columns == 0 {
            return String::new();
        }
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let fixed: usize = widths[..columns - 1].iter().map(|w| w + 2).sum();
        let last_max = width.map(|w| w.saturating_sub(fixed).max(MIN_LAST_COLUMN));
        let mut out = String::new();
        for row in std::iter::once(&self.headers).chain(&self.rows) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == columns {
                    line.push_str(&last_max.map_or_else(|| cell.clone(), |max| truncate(cell, max)));
                } else {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', widths[i] - cell.chars().count() + 2));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(["NAME", "SERVER", "DESCRIPTION"]);
        t.row(["echo", "demo", "Return the given text unchanged."]);
        t.row(["current_time", "demo", "The current date and time,\nat a UTC offset of your choice."]);
        t.row(["x", "a-much-longer-server", ""]);
        t
    }

    #[test]
    fn columns_align_and_cells_stay_on_one_line() {
        let text = sample().render(None);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "NAME          SERVER                DESCRIPTION",
                "echo          demo                  Return the given text unchanged.",
                "current_time  demo                  The current date and time, at a UTC offset of your choice.",
                "x             a-much-longer-server",
            ]
        );
    }

    #[test]
    fn a_terminal_that_says_no_size_is_taken_at_columns_else_80() {
        assert_eq!(terminal_width(Some(132), Some("90")), 132);
        assert_eq!(terminal_width(None, Some("90")), 90);
        assert_eq!(terminal_width(Some(0), Some(" 100 ")), 100);
        assert_eq!(terminal_width(None, Some("wide")), DEFAULT_WIDTH);
        assert_eq!(terminal_width(None, Some("0")), DEFAULT_WIDTH);
        assert_eq!(terminal_width(None, None), DEFAULT_WIDTH);
    }

    #[test]
    fn the_last_column_gives_way_to_the_width() {
        let text = sample().render(Some(60));
        for line in text.lines() {
            assert!(line.chars().count() <= 60, "{line:?} is wider than 60");
        }
        assert!(text.contains("  The current date and ti…\n"), "{text}");
        assert!(text.contains("  Return the given text u…\n"), "{text}");
        // Too narrow to fit: the last column keeps a minimum rather than vanishing.
        let narrow = sample().render(Some(10));
        assert!(narrow.lines().nth(1).unwrap().ends_with("Return the give…"), "{narrow}");
    }

    #[test]
    fn cells_are_sanitized_before_they_are_measured() {
        let mut t = Table::new(["NAME", "DESCRIPTION"]);
        t.row(["a\x1b[2J", "x\u{9b}31m\ry\u{202e}z"]);
        t.row(["long-name", "-"]);
        let text = t.render(None);
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            ["NAME        DESCRIPTION", "a\\u{1b}[2J  x\\u{9b}31m y\\u{202e}z", "long-name   -"],
            "{text}"
        );
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("héllo wörld", 5), "héll…");
        assert_eq!(truncate("short", 5), "short");
        assert_eq!(truncate("x", 0), "");
        assert_eq!(one_line(" a\n\tb  c "), "a b c");
        assert!(Table::new(["A"]).is_empty());
        assert_eq!(Table::new(Vec::<String>::new()).render(None), "");
    }
}
