//! Whether a line is one JSON value, checked in one pass that also bounds its nesting and notes
//! where the members of a top-level object lie.
//!
//! This is what lets the codec take a line's payload (`params`, `result`) as
//! [`RawJson`](crate::RawJson) without serde_json parsing it first: the payload is then parsed
//! once, by its method's decoder. The check follows RFC 8259's grammar over text known to be
//! UTF-8: structure, strings (no control character, only the escapes JSON has, four hex digits
//! after `\u`, as serde_json takes them, which does not pair surrogates in raw text), numbers
//! and the three literals. Text it does not accept is decoded the usual way, whose errors are
//! the ones reported, so what matters is that it never accepts text serde_json refuses; its
//! tests hold it to serde_json both ways.

use crate::scan::{Span, words};

/// How many members of a top-level object [`check`] notes; an object with more is checked, and
/// its members are found by a scan of their own.
const NOTED: usize = 8;

/// A member of the top-level object: its name and where its value lies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) name: Name,
    pub(crate) value: Span,
}

/// Where a member's name lies (within its quotes), and whether it is written with an escape
/// (its text is then not the name itself).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Name {
    pub(crate) span: Span,
    pub(crate) escaped: bool,
}

/// What [`check`] found in text that is one JSON value.
#[derive(Debug)]
pub(crate) struct Checked {
    /// Whether a line break (`\n`, `\r`) lies between the text's tokens (in a string there is
    /// none).
    pub(crate) line_breaks: bool,
    noted: [Member; NOTED],
    count: usize,
}

impl Checked {
    /// The members of the top-level object, in order; `None` when the value is not an object
    /// or has more members than are noted.
    pub(crate) fn members(&self) -> Option<&[Member]> {
        self.noted.get(..self.count)
    }
}

/// The outcome of [`check`].
// Made once a line and read where it is returned: a box would cost an allocation a line.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Verdict {
    /// The text is one JSON value nested at most as deep as allowed.
    Json(Checked),
    /// The text nests deeper than allowed before any fault.
    TooDeep,
    /// The text is not JSON.
    NotJson,
}

/// Check that `bytes` (UTF-8, without surrounding whitespace) is one JSON value whose arrays
/// and objects nest at most `max_depth` deep (taken as 127 when it is more).
pub(crate) fn check(bytes: &[u8], max_depth: usize) -> Verdict {
    let max_depth = max_depth.min(127);
    let mut c = Checker { bytes, i: 0, line_breaks: false };
    let mut noted = [Member::default(); NOTED];
    // How many members are noted; `NOTED + 1` once there are too many, `usize::MAX` when the
    // value is not an object.
    let mut count = if bytes.first() == Some(&b'{') { 0 } else { usize::MAX };
    let mut depth = 0usize;
    // Whether the container at each depth is an object; `object` is the innermost one's.
    let mut objects = [false; 128];
    let mut object = false;
    'value: loop {
        // At the start of a value.
        match c.peek() {
            Some(b'{' | b'[') => {
                object = c.bytes[c.i] == b'{';
                depth += 1;
                if depth > max_depth {
                    return Verdict::TooDeep;
                }
                objects[depth] = object;
                c.i += 1;
                c.whitespace();
                match c.peek() {
                    Some(b'}') if object => c.i += 1,
                    Some(b']') if !object => c.i += 1,
                    _ if object => {
                        let Some(value) = c.member_name() else { return Verdict::NotJson };
                        if depth == 1 {
                            note(&mut noted, &mut count, value);
                        }
                        continue 'value;
                    }
                    _ => continue 'value,
                }
                depth -= 1;
                object = objects[depth];
            }
            Some(b'"') => {
                if c.string().is_none() {
                    return Verdict::NotJson;
                }
            }
            Some(b't') => {
                if !c.literal(b"true") {
                    return Verdict::NotJson;
                }
            }
            Some(b'f') => {
                if !c.literal(b"false") {
                    return Verdict::NotJson;
                }
            }
            Some(b'n') => {
                if !c.literal(b"null") {
                    return Verdict::NotJson;
                }
            }
            Some(b'-' | b'0'..=b'9') => {
                if !c.number() {
                    return Verdict::NotJson;
                }
            }
            _ => return Verdict::NotJson,
        }
        // After a value, and after each container it closes.
        loop {
            if depth == 1 && (1..=NOTED).contains(&count) {
                // A member of the top-level object ends here.
                noted[count - 1].value.1 = c.i;
            }
            c.whitespace();
            if depth == 0 {
                break 'value;
            }
            match c.peek() {
                Some(b',') => {
                    c.i += 1;
                    c.whitespace();
                    if object {
                        let Some(value) = c.member_name() else { return Verdict::NotJson };
                        if depth == 1 {
                            note(&mut noted, &mut count, value);
                        }
                    }
                    continue 'value;
                }
                Some(b'}') if object => c.i += 1,
                Some(b']') if !object => c.i += 1,
                _ => return Verdict::NotJson,
            }
            depth -= 1;
            object = objects[depth];
        }
    }
    if c.i != bytes.len() {
        return Verdict::NotJson;
    }
    Verdict::Json(Checked { line_breaks: c.line_breaks, noted, count: count.min(NOTED + 1) })
}

/// Note a member of the top-level object whose name and value start are `value`'s (the end is
/// set when the value ends), while there is room.
fn note(noted: &mut [Member; NOTED], count: &mut usize, (name, start): (Name, usize)) {
    if *count < NOTED {
        noted[*count] = Member { name, value: (start, start) };
        *count += 1;
    } else {
        // Too many to note: the members are left to a scan.
        *count = NOTED + 1;
    }
}

struct Checker<'a> {
    bytes: &'a [u8],
    i: usize,
    line_breaks: bool,
}

impl Checker<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    /// Skip whitespace. Most tokens of a line follow the one before at once: one test for that,
    /// and a loop only where there is whitespace.
    #[inline(always)]
    fn whitespace(&mut self) {
        if self.bytes.get(self.i).is_some_and(|&b| b > b' ') {
            return;
        }
        self.whitespace_run();
    }

    fn whitespace_run(&mut self) {
        while let Some(&b) = self.bytes.get(self.i) {
            match b {
                b' ' | b'\t' => {}
                b'\n' | b'\r' => self.line_breaks = true,
                _ => return,
            }
            self.i += 1;
        }
    }

    /// A member's name (at `self.i`), the colon after it and the whitespace around: where the
    /// name lies within its quotes and where the value starts.
    #[inline(always)]
    fn member_name(&mut self) -> Option<(Name, usize)> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.i + 1;
        let escaped = self.string()?;
        let end = self.i - 1;
        self.whitespace();
        if self.peek() != Some(b':') {
            return None;
        }
        self.i += 1;
        self.whitespace();
        Some((Name { span: (start, end), escaped }, self.i))
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        let ok = self.bytes[self.i..].starts_with(word);
        self.i += word.len();
        ok
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> bool {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return false,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !self.some_digits() {
                return false;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if !self.some_digits() {
                return false;
            }
        }
        true
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    fn some_digits(&mut self) -> bool {
        let start = self.i;
        self.digits();
        self.i > start
    }

    /// The string at `self.i` (a `"`): no control character, only JSON's escapes. Whether it
    /// holds an escape; `None` when it is not a string.
    #[inline(always)]
    fn string(&mut self) -> Option<bool> {
        let bytes = self.bytes;
        let mut i = self.i + 1;
        let mut escaped = false;
        loop {
            let at = special(bytes, i)?;
            match bytes[at] {
                b'"' => {
                    self.i = at + 1;
                    return Some(escaped);
                }
                b'\\' => match bytes.get(at + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                        escaped = true;
                        i = at + 2;
                    }
                    Some(b'u') => match bytes.get(at + 2..at + 6) {
                        Some(hex) if hex.iter().all(u8::is_ascii_hexdigit) => {
                            escaped = true;
                            i = at + 6;
                        }
                        _ => return None,
                    },
                    _ => return None,
                },
                // A control character.
                _ => return None,
            }
        }
    }
}

/// The index of the first byte at or after `i` that a string cannot hold as it is: `"`, `\\` or
/// a control character (below 0x20). Most strings are short: their first bytes a word at a time.
#[inline(always)]
fn special(bytes: &[u8], i: usize) -> Option<usize> {
    let marked = |word| words::equal(word, b'"') | words::equal(word, b'\\') | words::below(word, 0x20);
    words::first(bytes, i, marked).or_else(|i| special_far(bytes, i).ok_or(())).ok()
}

/// [`special`] past the first bytes: 32 bytes at a time, in a loop the compiler turns into
/// vector compares (no branch within a block), then the block with the byte, byte by byte.
#[inline(never)]
fn special_far(bytes: &[u8], i: usize) -> Option<usize> {
    let is_special = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
    let rest = bytes.get(i..)?;
    let mut blocks = rest.chunks_exact(32);
    let mut offset = 0;
    for block in &mut blocks {
        let block: &[u8; 32] = block.try_into().expect("a block of 32 bytes");
        let flags =
            block.iter().fold(0u8, |flags, &b| flags | u8::from(b == b'"') | u8::from(b == b'\\') | u8::from(b < 0x20));
        if flags != 0 {
            return block.iter().position(|&b| is_special(b)).map(|at| i + offset + at);
        }
        offset += 32;
    }
    blocks.remainder().iter().position(|&b| is_special(b)).map(|at| i + offset + at)
}

#[cfg(test)]
mod tests;
