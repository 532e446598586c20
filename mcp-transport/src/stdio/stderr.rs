//! A bounded ring of a server's last stderr lines.

use std::collections::VecDeque;

/// Keeps the last lines, bounded both in count and in total bytes.
#[derive(Debug)]
pub(crate) struct StderrRing {
    lines: VecDeque<String>,
    bytes: usize,
    max_lines: usize,
    max_bytes: usize,
}

impl StderrRing {
    pub(crate) fn new(max_lines: usize, max_bytes: usize) -> Self {
        StderrRing { lines: VecDeque::new(), bytes: 0, max_lines, max_bytes }
    }

    pub(crate) fn push(&mut self, line: String) {
        let mut line = line;
        if line.len() > self.max_bytes {
            let mut cut = self.max_bytes;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > self.max_lines || self.bytes > self.max_bytes {
            match self.lines.pop_front() {
                Some(old) => self.bytes -= old.len(),
                None => break,
            }
        }
    }

    pub(crate) fn tail(&self) -> Vec<String> {
        self.lines.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_by_lines_and_bytes() {
        let mut r = StderrRing::new(3, 100);
        for i in 0..10 {
            r.push(format!("line {i}"));
        }
        assert_eq!(r.tail(), vec!["line 7", "line 8", "line 9"]);
        r.push("x".repeat(95));
        assert_eq!(r.tail().len(), 1, "bytes bound drops older lines");
        r.push("é".repeat(80));
        assert!(r.tail().iter().map(String::len).sum::<usize>() <= 100);
    }
}
