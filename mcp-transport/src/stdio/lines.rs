//! A bounded line reader: a line longer than the limit is discarded while it streams in (only
//! its head is kept, to report it), never buffered whole.
//!
//! The stream is read straight into one buffer that lives as long as the reader, and a line is
//! handed out as a slice of it: no copy between buffers, and no allocation per line. The room
//! made for a read grows with the line pending (from 4 KiB to 64 KiB), so a reader of a quiet
//! pipe (most servers' stderr, a server that sends small replies) holds a few KiB, not 64; a
//! buffer grown for a large line is given back before the next read.
//!
//! A read is offered at most 64 KiB, what a pipe holds by default, however large the buffer has
//! grown. Tokio takes a read that fills less than it was offered to mean that the pipe is empty,
//! and waits for the pipe to be readable again (a poll of the kernel and a return to the
//! scheduler) before the next read: offered 1 MiB and given the pipe's 64 KiB, each read of a
//! large line cost that wait, where a read that fills its offer is followed by the next at once.
//! A reader may also be given a way to widen its pipe ([`LineReader::widening`]), used once, when
//! a line first runs past 64 KiB.

use bytes::BufMut;

use tokio::io::{AsyncRead, AsyncReadExt};

use mcp_protocol::RequestId;

/// How many bytes of an over-long line are kept for the report.
pub(crate) const HEAD_BYTES: usize = 4096;

/// The most room made for one read from the stream, and the most offered to one read: what a
/// pipe holds by default. A line pending past this widens the pipe, when the reader can.
const READ_CHUNK: usize = super::pipe::DEFAULT_PIPE;

/// The least room made for one read: what an idle reader holds.
const FIRST_READ: usize = 4 * 1024;

/// A buffer grown past this for a large line is shrunk once that line has been handled.
const KEEP_CAPACITY: usize = 1024 * 1024;

/// A line at least this long that starts the buffer is handed over with the buffer
/// ([`Line::Owned`]) rather than lent: the length from which its decoder keeps it.
pub(crate) const OWN_LINE: usize = mcp_protocol::codec::LARGE_LINE;

/// One line read from the stream.
#[derive(Debug, PartialEq)]
pub(crate) enum Line<'a> {
    /// A complete line within the limit, without its terminator. It borrows the reader's buffer.
    Full(&'a [u8]),
    /// A complete line of at least [`OWN_LINE`] bytes within the limit, without its
    /// terminator: the buffer it was read into, handed over (the reader starts a new one), so
    /// that its decoder can keep the bytes where they are.
    Owned(Vec<u8>),
    /// A line over the limit: its first bytes and its full length.
    TooLong { head: Vec<u8>, len: usize },
}

/// Reads newline-delimited lines under a length limit. A final line without a newline at end of
/// stream is still returned. `next_line` is cancel-safe: all state lives in the reader.
pub(crate) struct LineReader<R> {
    inner: R,
    max: usize,
    /// Bytes read and not yet returned start at `start`; the bytes before it are spent.
    buf: Vec<u8>,
    start: usize,
    /// How many bytes from `start` are known to hold no newline.
    scanned: usize,
    /// The over-long line being discarded: its head and its length so far.
    discarding: Option<(Vec<u8>, usize)>,
    /// Widens the stream's pipe: called once, when a line first runs past [`READ_CHUNK`].
    widen: Option<fn(&R)>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(inner: R, max: usize) -> Self {
        LineReader { inner, max, buf: Vec::new(), start: 0, scanned: 0, discarding: None, widen: None }
    }

    /// This reader, calling `widen` on its stream once, when a line first runs past 64 KiB (a
    /// server that sends such lines is read in larger steps from then on; one that never does
    /// keeps the pipe it has).
    pub(crate) fn widening(mut self, widen: fn(&R)) -> Self {
        self.widen = Some(widen);
        self
    }

    /// The next line, or `None` at end of stream.
    pub(crate) async fn next_line(&mut self) -> std::io::Result<Option<Line<'_>>> {
        loop {
            let from = self.start + self.scanned;
            if let Some(i) = memchr::memchr(b'\n', &self.buf[from..]) {
                let (start, end) = (self.start, from + i);
                self.start = end + 1;
                self.scanned = 0;
                return Ok(Some(self.line(start, end)));
            }
            self.scanned = self.buf.len() - self.start;
            if self.scanned >= READ_CHUNK
                && let Some(widen) = self.widen.take()
            {
                widen(&self.inner);
            }
            if self.discarding.is_some() || self.scanned > self.max {
                self.discard_buffered();
            }
            self.make_room();
            if self.inner.read_buf(&mut (&mut self.buf).limit(READ_CHUNK)).await? == 0 {
                // End of stream: a pending partial line is still a line.
                let (start, end) = (self.start, self.buf.len());
                if start == end && self.discarding.is_none() {
                    return Ok(None);
                }
                self.start = end;
                self.scanned = 0;
                return Ok(Some(self.line(start, end)));
            }
        }
    }

    /// The line in `buf[start..end]` (without its `\n`), or the end of the line being discarded.
    fn line(&mut self, start: usize, end: usize) -> Line<'_> {
        if start == 0 && end >= OWN_LINE && end <= self.max && self.discarding.is_none() {
            // What follows the line (part of the next read) starts the next buffer.
            let rest = self.buf.split_off((end + 1).min(self.buf.len()));
            let mut line = std::mem::replace(&mut self.buf, rest);
            line.truncate(end);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.start = 0;
            return Line::Owned(line);
        }
        let bytes = &self.buf[start..end];
        if let Some((mut head, len)) = self.discarding.take() {
            let room = HEAD_BYTES.saturating_sub(head.len());
            head.extend_from_slice(&bytes[..bytes.len().min(room)]);
            return Line::TooLong { head, len: len + bytes.len() };
        }
        if bytes.len() > self.max {
            return Line::TooLong { head: bytes[..bytes.len().min(HEAD_BYTES)].to_vec(), len: bytes.len() };
        }
        Line::Full(bytes.strip_suffix(b"\r").unwrap_or(bytes))
    }

    /// The line buffered so far is over the limit: keep its head and drop the rest.
    fn discard_buffered(&mut self) {
        let part = &self.buf[self.start..];
        let (head, len) = self.discarding.get_or_insert_with(|| (Vec::with_capacity(HEAD_BYTES), 0));
        let room = HEAD_BYTES.saturating_sub(head.len());
        head.extend_from_slice(&part[..part.len().min(room)]);
        *len += part.len();
        self.buf.truncate(self.start);
        self.scanned = 0;
    }

    /// Drop the spent bytes, give back a buffer grown for a large line, and make room to read.
    fn make_room(&mut self) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        if self.buf.capacity() > KEEP_CAPACITY && self.buf.len() < KEEP_CAPACITY / 2 {
            self.buf.shrink_to(self.buf.len().max(READ_CHUNK));
        }
        // In proportion to the line pending: small lines keep the buffer small, a large one is
        // read in large chunks (and the buffer doubles, as a `Vec` does).
        self.buf.reserve(self.buf.len().clamp(FIRST_READ, READ_CHUNK));
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
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tokio::io::ReadBuf;

    use super::*;

    /// A line as a test keeps it (a `Line` borrows the reader).
    #[derive(Debug, PartialEq)]
    enum Got {
        Full(Vec<u8>),
        TooLong { head: Vec<u8>, len: usize },
    }

    /// Hands out its input at most `chunk` bytes per read.
    struct Chunked<'a> {
        data: &'a [u8],
        chunk: usize,
    }

    impl AsyncRead for Chunked<'_> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let n = self.chunk.min(self.data.len()).min(buf.remaining());
            let (now, rest) = self.data.split_at(n);
            buf.put_slice(now);
            self.data = rest;
            Poll::Ready(Ok(()))
        }
    }

    async fn lines(input: &[u8], max: usize, chunk: usize) -> Vec<Got> {
        // Feed the input in small chunks to exercise the boundaries.
        let mut r = LineReader::new(Chunked { data: input, chunk }, max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().await.unwrap() {
            out.push(match l {
                Line::Full(b) => Got::Full(b.to_vec()),
                Line::Owned(b) => Got::Full(b),
                Line::TooLong { head, len } => Got::TooLong { head, len },
            });
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_keeps_unterminated_last_line_and_strips_cr() {
        for chunk in [1, 3, 64] {
            let got = lines(b"a\r\nbb\n\nccc", 10, chunk).await;
            assert_eq!(
                got,
                vec![
                    Got::Full(b"a".to_vec()),
                    Got::Full(b"bb".to_vec()),
                    Got::Full(vec![]),
                    Got::Full(b"ccc".to_vec())
                ]
            );
        }
    }

    #[tokio::test]
    async fn over_long_line_is_discarded_and_reading_recovers() {
        let mut input = vec![b'x'; 10_000];
        input.extend_from_slice(b"\nok\n");
        for chunk in [7, 4096, 1 << 20] {
            let got = lines(&input, 100, chunk).await;
            assert_eq!(got.len(), 2);
            match &got[0] {
                Got::TooLong { head, len } => {
                    assert_eq!(*len, 10_000);
                    assert_eq!(head.len(), HEAD_BYTES);
                }
                other => panic!("expected TooLong, got {other:?}"),
            }
            assert_eq!(got[1], Got::Full(b"ok".to_vec()));
        }
    }

    #[tokio::test]
    async fn over_long_last_line_without_newline_is_reported() {
        let mut input = b"ok\n".to_vec();
        input.extend_from_slice(&[b'y'; 300]);
        for chunk in [5, 64, 4096] {
            let got = lines(&input, 100, chunk).await;
            assert_eq!(got, vec![Got::Full(b"ok".to_vec()), Got::TooLong { head: vec![b'y'; 300], len: 300 }]);
        }
    }

    #[tokio::test]
    async fn many_lines_across_reads_come_out_whole_and_in_order() {
        let input: Vec<u8> =
            (0..2000).flat_map(|i| format!("line {i} {}\n", "z".repeat(i % 37)).into_bytes()).collect();
        for chunk in [1, 13, 4096, 1 << 20] {
            let got = lines(&input, 1000, chunk).await;
            assert_eq!(got.len(), 2000);
            for (i, line) in got.iter().enumerate() {
                assert_eq!(*line, Got::Full(format!("line {i} {}", "z".repeat(i % 37)).into_bytes()), "chunk {chunk}");
            }
        }
    }

    #[tokio::test]
    async fn buffer_grown_for_a_large_line_is_given_back() {
        let mut input = vec![b'x'; 4 * KEEP_CAPACITY];
        input.extend_from_slice(b"\nsmall\n");
        let mut r = LineReader::new(Chunked { data: &input, chunk: READ_CHUNK }, usize::MAX);
        assert!(matches!(r.next_line().await.unwrap(), Some(Line::Owned(b)) if b.len() == 4 * KEEP_CAPACITY));
        assert!(matches!(r.next_line().await.unwrap(), Some(Line::Full(b"small"))));
        assert!(r.next_line().await.unwrap().is_none());
        assert!(r.buf.capacity() <= KEEP_CAPACITY, "capacity {} kept after the large line", r.buf.capacity());
    }

    #[tokio::test]
    async fn a_large_line_is_handed_over_with_its_buffer_and_what_follows_starts_the_next() {
        let large = |c: u8| vec![c; OWN_LINE + 3];
        let mut input = large(b'a');
        input.extend_from_slice(b"\r\nnext\n");
        input.extend(large(b'b'));
        input.extend_from_slice(b"\nshort\n");
        input.extend(large(b'c'));
        for chunk in [7, READ_CHUNK, 1 << 24] {
            let mut r = LineReader::new(Chunked { data: &input, chunk }, usize::MAX);
            assert_eq!(r.next_line().await.unwrap(), Some(Line::Owned(large(b'a'))), "chunk {chunk}");
            assert_eq!(r.next_line().await.unwrap(), Some(Line::Full(b"next")), "chunk {chunk}");
            // Reads are at most 64 KiB, and spent bytes are dropped before each: a large line
            // always starts its buffer.
            assert_eq!(r.next_line().await.unwrap(), Some(Line::Owned(large(b'b'))), "chunk {chunk}");
            assert_eq!(r.next_line().await.unwrap(), Some(Line::Full(b"short")), "chunk {chunk}");
            // The last line, without a newline, too.
            assert_eq!(r.next_line().await.unwrap(), Some(Line::Owned(large(b'c'))), "chunk {chunk}");
            assert!(r.next_line().await.unwrap().is_none());
        }
        // Over the limit, a large line is still discarded, not handed over.
        let mut r = LineReader::new(Chunked { data: &input, chunk: READ_CHUNK }, OWN_LINE);
        assert!(matches!(r.next_line().await.unwrap(), Some(Line::TooLong { len, .. }) if len == OWN_LINE + 4));
    }

    #[tokio::test]
    async fn small_lines_keep_the_buffer_small_and_a_long_one_still_comes_whole() {
        test_support::within(async {
            let mut input: Vec<u8> = (0..500).flat_map(|i| format!("{{\"id\":{i}}}\n").into_bytes()).collect();
            // The reader may take as much as it makes room for: only its own sizing bounds it.
            let mut r = LineReader::new(Chunked { data: &input, chunk: 1 << 20 }, usize::MAX);
            for i in 0..500 {
                let line = r.next_line().await.unwrap();
                assert_eq!(line, Some(Line::Full(format!("{{\"id\":{i}}}").as_bytes())));
            }
            assert!(r.next_line().await.unwrap().is_none());
            assert!(r.buf.capacity() <= 2 * FIRST_READ, "capacity {} for lines of 10 bytes", r.buf.capacity());

            input = vec![b'y'; 3 * READ_CHUNK + 5];
            input.push(b'\n');
            let mut r = LineReader::new(Chunked { data: &input, chunk: 1 << 20 }, usize::MAX);
            assert!(matches!(r.next_line().await.unwrap(), Some(Line::Full(b)) if b.len() == 3 * READ_CHUNK + 5));
        })
        .await;
    }

    /// A [`Chunked`] stream that notes the most room a read was offered and how often it was
    /// widened.
    struct Watched<'a> {
        inner: Chunked<'a>,
        most_offered: usize,
        widened: std::cell::Cell<usize>,
    }

    impl AsyncRead for Watched<'_> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            self.most_offered = self.most_offered.max(buf.remaining());
            Pin::new(&mut self.inner).poll_read(cx, buf)
        }
    }

    #[tokio::test]
    async fn a_read_is_offered_at_most_a_pipe_full_and_a_long_line_widens_the_stream_once() {
        test_support::within(async {
            // Small lines first: no widening, whatever the stream hands out at once.
            let mut input: Vec<u8> = (0..200).flat_map(|i| format!("{{\"id\":{i}}}\n").into_bytes()).collect();
            let small = input.len();
            // Then two lines of megabytes, the second after the buffer was given back.
            for len in [3 << 20, (1 << 20) + 7] {
                input.extend(std::iter::repeat_n(b'x', len));
                input.push(b'\n');
            }
            let inner = Chunked { data: &input, chunk: 1 << 20 };
            let watched = Watched { inner, most_offered: 0, widened: Default::default() };
            let mut r = LineReader::new(watched, usize::MAX).widening(|w| w.widened.set(w.widened.get() + 1));
            let mut read = 0;
            for _ in 0..200 {
                assert!(matches!(r.next_line().await.unwrap(), Some(Line::Full(_))));
            }
            assert_eq!(r.inner.widened.get(), 0, "widened for lines of a few bytes");
            read += small;
            for len in [3 << 20, (1 << 20) + 7] {
                let line = r.next_line().await.unwrap();
                assert!(matches!(&line, Some(Line::Owned(b)) if b.len() == len), "line of {len} bytes");
                read += len + 1;
            }
            assert!(r.next_line().await.unwrap().is_none());
            assert_eq!(read, input.len());
            // The buffer grew to megabytes, yet no read was offered more than a pipe holds.
            assert!(r.inner.most_offered <= READ_CHUNK, "a read was offered {} bytes", r.inner.most_offered);
            assert_eq!(r.inner.widened.get(), 1, "the stream is widened once, at the first long line");
        })
        .await;
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
