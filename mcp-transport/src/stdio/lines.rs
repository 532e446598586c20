//! A bounded line reader: a line longer than the limit is discarded while it streams in (only
//! its head is kept, to report it), never buffered whole.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use mcp_protocol::RequestId;

/// How many bytes of an over-long line are kept for the report.
pub(crate) const HEAD_BYTES: usize = 4096;

/// One line read from the stream.
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    /// A complete line within the limit, without its terminator.
    Full(Vec<u8>),
    /// A line over the limit: its first bytes and its full length.
    TooLong { head: Vec<u8>, len: usize },
}

/// Reads newline-delimited lines under a length limit. A final line without a newline at end of
/// stream is still returned.
pub(crate) struct LineReader<R> {
    inner: R,
    max: usize,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(inner: R, max: usize) -> Self {
        LineReader { inner, max, buf: Vec::new() }
    }

    /// The next line, or `None` at end of stream.
    pub(crate) async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        let mut len = 0usize;
        let mut discarding = false;
        self.buf.clear();
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                // End of stream: a pending partial line is still a line.
                if len == 0 {
                    return Ok(None);
                }
                return Ok(Some(self.finish(len, discarding)));
            }
            let (part, found) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], Some(i)),
                None => (chunk, None),
            };
            len += part.len();
            if !discarding && len > self.max {
                discarding = true;
            }
            if discarding {
                let room = HEAD_BYTES.saturating_sub(self.buf.len());
                self.buf.extend_from_slice(&part[..part.len().min(room)]);
            } else {
                self.buf.extend_from_slice(part);
            }
            let consumed = found.map_or(chunk.len(), |i| i + 1);
            self.inner.consume(consumed);
            if found.is_some() {
                return Ok(Some(self.finish(len, discarding)));
            }
        }
    }

    fn finish(&mut self, len: usize, discarding: bool) -> Line {
        if discarding {
            self.buf.truncate(HEAD_BYTES);
            return Line::TooLong { head: std::mem::take(&mut self.buf), len };
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Line::Full(std::mem::take(&mut self.buf))
    }
}

/// Read the top-level `id` of a JSON-RPC message from the start of its text, if the head holds
/// it. Members before `id` are skipped structurally, so an `id` nested in `result` is never taken.
pub(crate) fn sniff_id(head: &[u8]) -> Option<RequestId> {
    let mut s = Scanner { b: head, i: 0 };
    s.ws();
    s.eat(b'{')?;
    loop {
        s.ws();
        let key = s.string()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        if key == b"id" {
            return s.id_value();
        }
        s.skip_value()?;
        s.ws();
        match s.next()? {
            b',' => continue,
            _ => return None,
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }
    /// A string's raw bytes (escapes left as they are).
    fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match self.next()? {
                b'\\' => {
                    self.next()?;
                }
                b'"' => return Some(&self.b[start..self.i - 1]),
                _ => {}
            }
        }
    }
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                while !matches!(self.peek()?, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                    self.i += 1;
                }
                Some(())
            }
        }
    }
    fn id_value(&mut self) -> Option<RequestId> {
        match self.peek()? {
            b'"' => {
                let raw = self.string()?;
                if raw.contains(&b'\\') {
                    return None;
                }
                std::str::from_utf8(raw).ok().map(|s| RequestId::String(s.to_owned()))
            }
            _ => {
                let start = self.i;
                while matches!(self.peek()?, b'-' | b'0'..=b'9') {
                    self.i += 1;
                }
                // The number must be complete: followed by a delimiter inside the head.
                if !matches!(self.peek()?, b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
                    return None;
                }
                std::str::from_utf8(&self.b[start..self.i]).ok()?.parse().ok().map(RequestId::Number)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize, chunk: usize) -> Vec<Line> {
        // Feed the input in small chunks to exercise the boundaries.
        let reader = tokio::io::BufReader::with_capacity(chunk, input);
        let mut r = LineReader::new(reader, max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().await.unwrap() {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_keeps_unterminated_last_line_and_strips_cr() {
        for chunk in [1, 3, 64] {
            let got = lines(b"a\r\nbb\n\nccc", 10, chunk).await;
            assert_eq!(
                got,
                vec![Line::Full(b"a".to_vec()), Line::Full(b"bb".to_vec()), Line::Full(vec![]), Line::Full(b"ccc".to_vec())]
            );
        }
    }

    #[tokio::test]
    async fn over_long_line_is_discarded_and_reading_recovers() {
        let mut input = vec![b'x'; 10_000];
        input.extend_from_slice(b"\nok\n");
        for chunk in [7, 4096] {
            let got = lines(&input, 100, chunk).await;
            assert_eq!(got.len(), 2);
            match &got[0] {
                Line::TooLong { head, len } => {
                    assert_eq!(*len, 10_000);
                    assert_eq!(head.len(), HEAD_BYTES);
                }
                other => panic!("expected TooLong, got {other:?}"),
            }
            assert_eq!(got[1], Line::Full(b"ok".to_vec()));
        }
    }

    #[test]
    fn sniffs_top_level_id_only() {
        assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","id":42,"result":{"content":"#), Some(RequestId::Number(42)));
        assert_eq!(sniff_id(br#"{"id":"abc","result":"#), Some(RequestId::String("abc".into())));
        assert_eq!(sniff_id(br#"{"result":{"id":7,"x":[1,{"id":8}]},"id":3}"#), Some(RequestId::Number(3)));
        // The id comes after a payload cut off by the head: unknown.
        assert_eq!(sniff_id(br#"{"result":{"content":[{"text":"aaaa"#), None);
        assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","id":12"#), None, "a number cut at the end is not trusted");
        assert_eq!(sniff_id(b"not json"), None);
    }
}
