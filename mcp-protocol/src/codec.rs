//! Framing: one message per line, bounded in length and nesting, with descriptive errors.
//!
//! [`decode_line`] never panics. Its errors keep apart input that is not JSON at all, JSON that is
//! not JSON-RPC (a stdio server's log line, say, which a transport drops with a warning), and
//! JSON-RPC that breaks the rules (which deserves a louder report). The rules themselves are the
//! envelope's ([`crate::jsonrpc`]); this module bounds the line and splits batches.

use serde_json::value::RawValue;

pub use crate::jsonrpc::DecodeError;
use crate::jsonrpc::{
    Message, Notification, RawEnvelope, RawJson, Request, ResponsePayload, Unparsed, classify_envelope,
};
use crate::wellformed::{self, Verdict};

/// Limits applied while decoding a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    /// Longest accepted line in bytes, without its terminator. Default 32 MiB.
    pub max_line_bytes: usize,
    /// Deepest accepted nesting of arrays and objects. Default 64; at most 120, because the JSON
    /// parser stops at 128 on its own.
    pub max_depth: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits { max_line_bytes: 32 * 1024 * 1024, max_depth: 64 }
    }
}

/// One decoded line: a single message, or a batch whose elements decode independently.
#[derive(Debug)]
pub enum Decoded {
    /// A line holding one JSON object.
    Single(Message),
    /// A line holding a JSON array of messages (2025-03-26 peers send them).
    Batch(Vec<Result<Message, DecodeError>>),
}

impl Decoded {
    /// The messages, in order, with the errors of bad batch elements.
    pub fn into_messages(self) -> Vec<Result<Message, DecodeError>> {
        match self {
            Decoded::Single(m) => vec![Ok(m)],
            Decoded::Batch(v) => v,
        }
    }
}

impl IntoIterator for Decoded {
    type Item = Result<Message, DecodeError>;
    type IntoIter = Messages;

    /// The messages, in order, as [`Decoded::into_messages`] gives them, without a collection
    /// for a single message (the common case: one per line).
    fn into_iter(self) -> Messages {
        match self {
            Decoded::Single(m) => Messages(MessagesInner::Single(Some(m))),
            Decoded::Batch(v) => Messages(MessagesInner::Batch(v.into_iter())),
        }
    }
}

/// The messages of a [`Decoded`] line, in order.
#[derive(Debug)]
pub struct Messages(MessagesInner);

#[derive(Debug)]
enum MessagesInner {
    Single(Option<Message>),
    Batch(std::vec::IntoIter<Result<Message, DecodeError>>),
}

impl Iterator for Messages {
    type Item = Result<Message, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            MessagesInner::Single(m) => m.take().map(Ok),
            MessagesInner::Batch(v) => v.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            MessagesInner::Single(m) => (usize::from(m.is_some()), Some(usize::from(m.is_some()))),
            MessagesInner::Batch(v) => v.size_hint(),
        }
    }
}

/// Decode one line (without its terminator; a trailing `\r` is tolerated) under `limits`.
///
/// A line that holds one object is checked to be JSON by the codec itself, in one pass that
/// also bounds its nesting (`wellformed`), and its payload is copied as it
/// lies, unparsed: its method's decoder parses it, once. Any other line, and one the check does
/// not accept, is decoded by serde_json, whose errors are the ones reported.
pub fn decode_line(line: &[u8], limits: &DecodeLimits) -> Result<Decoded, DecodeError> {
    check_length(line, limits)?;
    let text = std::str::from_utf8(line).map_err(|e| DecodeError::InvalidUtf8 { offset: e.valid_up_to() })?;
    let text = trimmed(text);
    if let Some(decoded) = decode_checked(text, limits) {
        return decoded.map(Decoded::Single);
    }
    let text = checked_str(text, limits)?;
    match text.as_bytes().first() {
        Some(b'[') => {
            let elements: Vec<Box<RawValue>> = serde_json::from_str(text).map_err(|e| json_error(text, e))?;
            if elements.is_empty() {
                return Err(DecodeError::EmptyBatch);
            }
            Ok(Decoded::Batch(elements.iter().map(|raw| decode_object(raw.get())).collect()))
        }
        _ => decode_object(text).map(Decoded::Single),
    }
}

/// The message of `text` when it is an object the codec's check finds to be JSON, its payload
/// copied as it lies; `None` when it is not decoded that way.
fn decode_checked(text: &str, limits: &DecodeLimits) -> Option<Result<Message, DecodeError>> {
    let checked = checked_envelope(text, limits)?;
    Some(checked.and_then(|(raw, _)| {
        classify_envelope(raw, |payload: Unparsed<'_>| RawJson::from_checked(payload.text.to_owned()))
    }))
}

/// The envelope of an object's text that the codec's check ([`wellformed::check`]) finds to be
/// JSON, read from the members it noted, and whether a line break lies between its tokens; a
/// nesting deeper than `limits` allow; or `None` when the text is not an object, not JSON, or
/// not an envelope read that way (serde_json then decodes it).
fn checked_envelope<'a>(
    text: &'a str,
    limits: &DecodeLimits,
) -> Option<Result<(RawEnvelope<Unparsed<'a>>, bool), DecodeError>> {
    if !text.starts_with('{') {
        return None;
    }
    let max = max_depth(limits);
    let checked = match wellformed::check(text.as_bytes(), max) {
        Verdict::Json(checked) => checked,
        Verdict::TooDeep => return Some(Err(DecodeError::TooDeep { max })),
        Verdict::NotJson => return None,
    };
    let raw = RawEnvelope::of_members(text, checked.members()?, checked.line_breaks)?;
    Some(Ok((raw, checked.line_breaks)))
}

/// The nesting `limits` allow, at most 120 (serde_json stops at 128 on its own).
fn max_depth(limits: &DecodeLimits) -> usize {
    limits.max_depth.min(120)
}

/// The shortest line [`decode_owned_line`] decodes in place. A shorter line is decoded as
/// [`decode_line`] does it, its payload copied out (less than a mebibyte held twice, briefly).
pub const LARGE_LINE: usize = 1024 * 1024;

/// [`decode_line`] for a line the caller hands over: in a line of [`LARGE_LINE`] or more, a
/// payload (`params` or `result`) that is most of the line gets the line's own buffer, moved to
/// its front instead of copied, so that a large message is held once, not twice. Other lines
/// decode as [`decode_line`] does them.
///
/// A line the codec's check finds to be JSON (`wellformed`) has its
/// envelope read from the members the check noted, and its payload is not parsed: its method's
/// decoder parses it, once. Otherwise the payload is parsed once, when it becomes a [`RawJson`]
/// in its new place: the envelope around it is found by structure ([`scan`](crate::scan)) and
/// decoded with an empty object or array in the payload's place. A line whose envelope does not
/// decode that way is decoded whole (the payload then parsed twice), so that its error is the one
/// [`decode_line`] gives; a payload that is not JSON is reported as [`DecodeError::NotJson`]
/// naming the member and where it starts.
pub fn decode_owned_line(line: Vec<u8>, limits: &DecodeLimits) -> Result<Decoded, DecodeError> {
    if line.len() < LARGE_LINE {
        return decode_line(&line, limits);
    }
    check_length(&line, limits)?;
    // Checked as UTF-8 once, and kept as text from then on (the payload does not need a second
    // check when it becomes a string of its own).
    let mut line =
        String::from_utf8(line).map_err(|e| DecodeError::InvalidUtf8 { offset: e.utf8_error().valid_up_to() })?;
    let base = line.as_ptr() as usize;
    let (mut message, moved, line_breaks) = 'decoded: {
        let text = trimmed(&line);
        let offset = text.as_ptr() as usize - base;
        if let Some(checked) = checked_with_payload_moved(text, limits) {
            let (message, moved, line_breaks) = checked?;
            let moved = moved.map(|moved| Moved { start: offset + moved.start, ..moved });
            break 'decoded (message, moved, line_breaks);
        }
        let (text, line_breaks) = checked_str_scanned(&line, limits)?;
        if !text.starts_with('{') {
            return decode_line(line.as_bytes(), limits);
        }
        let offset = text.as_ptr() as usize - base;
        match around_payload(text) {
            Some((message, start, end, member)) => {
                let moved = Moved { start: offset + start, len: end - start, unparsed: Some(member), checked: false };
                (message, Some(moved), line_breaks)
            }
            None => {
                let (message, moved) = envelope_with_payload_moved(text, base)?;
                (message, moved, line_breaks)
            }
        }
    };
    if let Some(Moved { start, len, unparsed, checked }) = moved {
        // Both ends are ASCII bytes (the payload's brackets), so character boundaries; the
        // payload moves to the front of the buffer, which keeps it.
        line.truncate(start + len);
        line.drain(..start);
        // As `without_line_breaks` does, when the depth check met a line break between the
        // line's strings (rare: the text is checked again only then). Within a string a line
        // break is not JSON, and the payload's parse below refuses it.
        if line_breaks == LineBreaks::Maybe && memchr::memchr2(b'\n', b'\r', line.as_bytes()).is_some() {
            let mut bytes = line.into_bytes();
            blank_line_breaks(&mut bytes);
            line = String::from_utf8(bytes)
                .map_err(|e| DecodeError::InvalidUtf8 { offset: e.utf8_error().valid_up_to() })?;
        }
        // A payload of a line the codec's check found to be JSON is JSON, its line breaks
        // blanked or not (they were whitespace).
        let payload = if checked { Ok(RawJson::from_checked(line)) } else { RawJson::from_string(line) };
        let payload = payload.map_err(|e| match unparsed {
            Some(member) => DecodeError::NotJson(format!("the `{member}` member (from byte {start} of the line): {e}")),
            None => DecodeError::NotJson(e.to_string()),
        })?;
        match &mut message {
            Message::Request(Request { params, .. }) | Message::Notification(Notification { params, .. }) => {
                *params = Some(payload)
            }
            Message::Response(response) => response.payload = ResponsePayload::Result(payload),
        }
    }
    Ok(Decoded::Single(message))
}

/// Write a space for each line break (`\n`, `\r`) outside the strings of the JSON text `bytes`:
/// whitespace, which a space replaces without changing the text's meaning. One inside a string
/// is left for the parser to refuse.
fn blank_line_breaks(bytes: &mut [u8]) {
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = crate::scan::string_end(bytes, i).unwrap_or(bytes.len());
                continue;
            }
            b'\n' | b'\r' => bytes[i] = b' ',
            _ => {}
        }
        i += 1;
    }
}

/// A payload borrowed from a line serde_json parsed, as the message's own.
fn owned(payload: &RawValue) -> RawJson {
    RawJson::from_checked(payload.get().to_owned())
}

/// Where the payload that takes over the line lies in it.
struct Moved {
    start: usize,
    len: usize,
    /// Which member it is, when it was not parsed with the envelope (an error then names it).
    unparsed: Option<&'static str>,
    /// Whether it lies in a line the codec's check found to be JSON.
    checked: bool,
}

/// A message of a large line, where its payload lies if it takes over the line, and whether the
/// line may hold a line break between its tokens.
type Taken = (Message, Option<Moved>, LineBreaks);

/// The message of `text` when it is an object the codec's check finds
/// to be JSON, decoded from the members the check noted; a payload that is most of the text is
/// left for the caller to take over. `None` when it is not decoded that way.
fn checked_with_payload_moved(text: &str, limits: &DecodeLimits) -> Option<Result<Taken, DecodeError>> {
    let (raw, line_breaks) = match checked_envelope(text, limits)? {
        Ok(envelope) => envelope,
        Err(e) => return Some(Err(e)),
    };
    let (base, large) = (text.as_ptr() as usize, text.len() / 2);
    let mut moved = None;
    let message = classify_envelope(raw, |Unparsed { text: payload, .. }| {
        if payload.len() < large {
            return RawJson::from_checked(payload.to_owned());
        }
        // Taken from the line by the caller, once the line is no longer borrowed.
        let start = payload.as_ptr() as usize - base;
        moved = Some(Moved { start, len: payload.len(), unparsed: None, checked: true });
        RawJson::null()
    });
    let line_breaks = if line_breaks { LineBreaks::Maybe } else { LineBreaks::None };
    Some(message.map(|message| (message, moved, line_breaks)))
}

/// The message of `text` decoded around its `result` or `params` when that member is most of
/// the text and an object or an array: the envelope, with an empty one in the payload's place, is
/// decoded as usual, and the payload's start and end in `text` and its member's name are
/// returned for the caller to take over (and parse). `None` when the text has no such member or
/// its envelope does not decode that way.
fn around_payload(text: &str) -> Option<(Message, usize, usize, &'static str)> {
    const MEMBERS: [&str; 2] = ["result", "params"];
    let (which, start, end) = crate::scan::first_member_span(text, &MEMBERS)?;
    if end - start <= text.len() / 2 {
        return None;
    }
    let placeholder = match text.as_bytes()[start] {
        b'{' => "{}",
        b'[' => "[]",
        _ => return None,
    };
    let rest = crate::scan::with_placeholders(text, &[(start, end)], placeholder);
    let raw: RawEnvelope<&RawValue> = serde_json::from_str(&rest).ok()?;
    let message = classify_envelope(raw, owned).ok()?;
    Some((message, start, end, MEMBERS[which]))
}

/// The message of `text` (which lies in a line whose buffer starts at `base`) decoded whole;
/// a payload that is most of the text is left for the caller to take over.
fn envelope_with_payload_moved(text: &str, base: usize) -> Result<(Message, Option<Moved>), DecodeError> {
    let raw: RawEnvelope<&RawValue> = serde_json::from_str(text).map_err(|e| json_error(text, e))?;
    let large = text.len() / 2;
    let mut moved = None;
    let message = classify_envelope(raw, |payload: &RawValue| {
        let text = payload.get();
        if text.len() < large {
            return owned(payload);
        }
        // Taken from the line by the caller, once the line is no longer borrowed.
        moved = Some(Moved { start: text.as_ptr() as usize - base, len: text.len(), unparsed: None, checked: false });
        RawJson::null()
    })?;
    Ok((message, moved))
}

fn check_length(line: &[u8], limits: &DecodeLimits) -> Result<(), DecodeError> {
    match line.len() > limits.max_line_bytes {
        true => Err(DecodeError::TooLong { len: line.len(), max: limits.max_line_bytes }),
        false => Ok(()),
    }
}

/// A line's text, known to be UTF-8, checked against `limits`' nesting, without a byte-order
/// mark and surrounding whitespace.
fn checked_str<'a>(text: &'a str, limits: &DecodeLimits) -> Result<&'a str, DecodeError> {
    let text = trimmed(text);
    check_depth::<false>(text.as_bytes(), max_depth(limits))?;
    Ok(text)
}

/// [`checked_str`], and whether a line break may lie in the text outside its strings.
fn checked_str_scanned<'a>(text: &'a str, limits: &DecodeLimits) -> Result<(&'a str, LineBreaks), DecodeError> {
    let text = trimmed(text);
    let line_breaks = check_depth::<true>(text.as_bytes(), max_depth(limits))?;
    Ok((text, line_breaks))
}

/// `text` without a byte-order mark and surrounding whitespace.
fn trimmed(text: &str) -> &str {
    // A byte-order mark may precede JSON text (RFC 8259 lets a parser ignore it).
    text.strip_prefix('\u{feff}').unwrap_or(text).trim_matches(|c: char| c.is_ascii_whitespace())
}

/// Whether [`check_depth`] met a line break (`\n` or `\r`) outside the text's strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineBreaks {
    /// The text was scanned and has none outside its strings.
    None,
    /// It has one, or the text was not scanned.
    Maybe,
}

/// Decode one JSON-RPC message from text that must hold a single object (no batch).
pub fn decode_message(text: &str) -> Result<Message, DecodeError> {
    decode_object(text)
}

/// Encode one message as one line, terminated by `\n`. The line holds no other `\n` or `\r`: the
/// JSON writer escapes control characters in strings, and line breaks in the whitespace of raw
/// payloads (one built from pretty-printed JSON, say) are written as spaces. Decoding writes
/// them as spaces too, so a decoded message encodes to a line that decodes to the same message.
pub fn encode_line(message: &Message) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded_len_hint(message));
    encode_line_into(message, &mut out);
    out
}

/// About how long a message's line is: the raw payload, the method and room for the envelope,
/// so that encoding seldom grows the buffer.
fn encoded_len_hint(message: &Message) -> usize {
    const ENVELOPE: usize = 96;
    let raw = |p: &Option<crate::RawJson>| p.as_ref().map_or(0, |r| r.get().len());
    ENVELOPE
        + match message {
            Message::Request(r) => r.method.len() + raw(&r.params),
            Message::Notification(n) => n.method.len() + raw(&n.params),
            Message::Response(r) => match &r.payload {
                crate::ResponsePayload::Result(result) => result.get().len(),
                crate::ResponsePayload::Error(_) => 160,
            },
        }
}

/// Append one message and its `\n` terminator to `out`.
pub fn encode_line_into(message: &Message, out: &mut Vec<u8>) {
    let start = out.len();
    crate::jsonrpc::write_message(message, out);
    // Raw payloads keep the whitespace they arrived or were built with, and JSON whitespace may
    // be a line break, which would split the message. Outside strings a CR or LF byte is only
    // whitespace, and a string never holds one unescaped, so a space in its place keeps the JSON
    // and its meaning.
    let written = &mut out[start..];
    if memchr::memchr2(b'\n', b'\r', written).is_some() {
        for byte in written {
            if matches!(*byte, b'\n' | b'\r') {
                *byte = b' ';
            }
        }
    }
    out.push(b'\n');
}

fn decode_object(text: &str) -> Result<Message, DecodeError> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        // Either not JSON, or JSON of another shape (a number, a string, a log line).
        return match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => Err(DecodeError::NotJsonRpc(format!("expected an object, found {}", shape(trimmed)))),
            Err(e) => Err(DecodeError::NotJson(e.to_string())),
        };
    }
    let raw: RawEnvelope<&RawValue> = serde_json::from_str(text).map_err(|e| json_error(text, e))?;
    classify_envelope(raw, owned)
}

fn json_error(text: &str, e: serde_json::Error) -> DecodeError {
    if e.is_syntax() || e.is_eof() {
        return DecodeError::NotJson(e.to_string());
    }
    // A data error may fire before the parser saw the whole text: check the rest is JSON.
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) if e.to_string().starts_with("duplicate field") => DecodeError::DuplicateMember(e.to_string()),
        Ok(_) => DecodeError::NotJsonRpc(e.to_string()),
        Err(syntax) => DecodeError::NotJson(syntax.to_string()),
    }
}

fn shape(text: &str) -> &'static str {
    match text.as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// Reject nesting deeper than `max` without recursion, ignoring brackets inside strings.
///
/// No text nests deeper than it has opening brackets, and a short line (below [`SHORT_LINE`]: a
/// call's request or result, most lines) seldom has as many as the limit: its brackets are
/// counted a vector at a time ([`opening_brackets`]), and that is enough. Other lines are
/// scanned, strings skipped by [`scan::string_end`](crate::scan::string_end): a word at a time
/// for the first bytes (a page's many short strings), then a vector search (most of a large tool
/// result), which is faster than counting on long strings.
///
/// With `LINE_BREAKS` it says whether a scan met a line break outside the strings
/// ([`LineBreaks`]), for the large lines whose payload must then have its line breaks replaced;
/// without, it does not look (a compare a byte that many pages of small strings would pay for).
fn check_depth<const LINE_BREAKS: bool>(bytes: &[u8], max: usize) -> Result<LineBreaks, DecodeError> {
    if bytes.len() < SHORT_LINE && opening_brackets(bytes) <= max {
        return Ok(LineBreaks::Maybe);
    }
    let mut depth = 0usize;
    let mut line_breaks = if LINE_BREAKS { LineBreaks::None } else { LineBreaks::Maybe };
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string, honouring backslash escapes (an unterminated one ends the
                // text).
                i = crate::scan::string_end(bytes, i).unwrap_or(bytes.len());
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(DecodeError::TooDeep { max });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' | b'\r' if LINE_BREAKS => line_breaks = LineBreaks::Maybe,
            _ => {}
        }
        i += 1;
    }
    Ok(line_breaks)
}

/// A line shorter than this has its depth taken from its count of brackets by [`check_depth`]
/// (about 470 instructions at most, where the scan takes about 5 a byte).
const SHORT_LINE: usize = 1024;

/// How many `{` and `[` bytes `bytes` holds, in strings too. Counted in runs of 255 into a byte,
/// which the compiler turns into vector compares and adds (about 50 instructions for a 250-byte
/// line, where the scan of [`check_depth`] takes about 1,100).
fn opening_brackets(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        // `[` is `{` with bit 5 clear: one compare finds both.
        .map(|run| usize::from(run.iter().fold(0u8, |n, &b| n + u8::from(b | 0x20 == b'{'))))
        .sum()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::ResponsePayload;

    fn decode(line: &[u8]) -> Message {
        match decode_line(line, &DecodeLimits::default()) {
            Ok(Decoded::Single(m)) => m,
            other => panic!("{}: {other:?}", String::from_utf8_lossy(line)),
        }
    }

    #[test]
    fn the_depth_check_skips_strings_of_every_length_with_escapes_anywhere() {
        // An escaped quote or backslash anywhere in a string (at either end of a vector the
        // search reads at once, too), followed by brackets that are text, must neither end the
        // string early nor count as nesting.
        let limits = DecodeLimits { max_depth: 2, ..DecodeLimits::default() };
        for len in 0..48 {
            for at in 0..=len {
                for escape in [r#"\""#, r#"\\"#] {
                    let text = format!("{}{escape}[[{{{{{}", "a".repeat(at), "b".repeat(len - at));
                    let line = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{"s":"{text}"}}}}"#);
                    let decoded = decode_line(line.as_bytes(), &limits);
                    assert!(matches!(decoded, Ok(Decoded::Single(_))), "{line}: {decoded:?}");
                    let deeper = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{"s":"{text}","d":[]}}}}"#);
                    let refused = decode_line(deeper.as_bytes(), &limits);
                    assert!(matches!(refused, Err(DecodeError::TooDeep { max: 2 })), "{deeper}: {refused:?}");
                }
            }
        }
    }

    #[test]
    fn the_depth_limit_holds_whether_the_brackets_are_few_enough_to_count_or_not() {
        // `{` and `[` are the only bytes the count takes: every other byte, `]`, `}` and the
        // bytes one bit from `{` among them, counts nothing.
        let all: Vec<u8> = (0..=255u8).collect();
        assert_eq!(opening_brackets(&all), 2);
        assert_eq!(opening_brackets(&[b'['; 1000]), 1000, "runs of 255 add up");
        let limits = DecodeLimits { max_depth: 3, ..DecodeLimits::default() };
        // Short lines are counted, long ones scanned.
        for pad in [0, SHORT_LINE] {
            for depth in 0..=5 {
                for text_brackets in [0, 1, 4] {
                    // `depth` levels of nesting and, in a string, brackets that are only text.
                    let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
                    let text = format!("{}{}", "[{".repeat(text_brackets), " ".repeat(pad));
                    let line = format!(r#"{{"jsonrpc":"2.0","method":"m","params":[{nested},"{text}"]}}"#);
                    assert_eq!(line.len() < SHORT_LINE, pad == 0);
                    let decoded = decode_line(line.as_bytes(), &limits);
                    // The envelope and `params` are two levels.
                    if depth + 2 <= 3 {
                        assert!(matches!(decoded, Ok(Decoded::Single(_))), "{line}: {decoded:?}");
                    } else {
                        assert!(matches!(decoded, Err(DecodeError::TooDeep { max: 3 })), "{line}: {decoded:?}");
                    }
                }
            }
        }
    }

    fn params(m: &Message) -> Option<&str> {
        match m {
            Message::Request(r) => r.params.as_ref().map(RawJson::get),
            Message::Notification(n) => n.params.as_ref().map(RawJson::get),
            Message::Response(r) => match &r.payload {
                ResponsePayload::Result(result) => Some(result.get()),
                ResponsePayload::Error(_) => None,
            },
        }
    }

    /// The minimal input the `mutated_messages_never_panic` property found: a notification whose
    /// float's minus sign became a line feed. The line break is JSON whitespace, so the line is
    /// valid; decoded, it must encode to a line that decodes to the same message.
    #[test]
    fn a_line_break_in_a_payload_survives_encode_and_decode() {
        let inputs: [&[u8]; 4] = [
            b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\n0.5]}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":\r\n\"\\n\"}}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\r\"x\":[1,\n2]\n}}",
            b"[{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\n-0.125\r]}]",
        ];
        for input in inputs {
            for decoded in decode_line(input, &DecodeLimits::default()).unwrap().into_messages() {
                let m = decoded.unwrap();
                let line = encode_line(&m);
                assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
                let back = decode(&line[..line.len() - 1]);
                assert_eq!(params(&back), params(&m), "{}", String::from_utf8_lossy(input));
                assert_eq!(encode_line(&back), line);
                // The payload keeps its meaning: only whitespace changed.
                let value = |m: &Message| serde_json::from_str::<Value>(params(m).unwrap()).unwrap();
                assert_eq!(value(&m), value(&back));
                assert!(!params(&m).unwrap().contains(['\n', '\r']));
            }
        }
    }

    #[test]
    fn a_payload_without_line_breaks_is_kept_as_it_came() {
        let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{ \"a\" :\t[1 , \"\\r\\n\"] }}";
        let m = decode(input);
        assert_eq!(params(&m), Some("{ \"a\" :\t[1 , \"\\r\\n\"] }"));
    }
    #[test]
    fn a_decoded_line_iterates_as_its_messages_in_order() {
        let limits = DecodeLimits::default();
        let methods = |line: &[u8]| -> Vec<Result<String, ()>> {
            let decoded = decode_line(line, &limits).unwrap();
            let expected = decoded_len(line);
            let items: Vec<_> = decoded.into_iter().collect();
            assert_eq!(items.len(), expected, "{}", String::from_utf8_lossy(line));
            items
                .into_iter()
                .map(|item| match item {
                    Ok(Message::Notification(n)) => Ok(n.method),
                    Ok(other) => panic!("{other:?}"),
                    Err(_) => Err(()),
                })
                .collect()
        };
        fn decoded_len(line: &[u8]) -> usize {
            decode_line(line, &DecodeLimits::default()).unwrap().into_messages().len()
        }
        assert_eq!(methods(br#"{"jsonrpc":"2.0","method":"one"}"#), [Ok("one".to_owned())]);
        assert_eq!(
            methods(br#"[{"jsonrpc":"2.0","method":"a"}, 7, {"jsonrpc":"2.0","method":"b"}]"#),
            [Ok("a".to_owned()), Err(()), Ok("b".to_owned())]
        );
        let mut single = decode_line(br#"{"jsonrpc":"2.0","method":"x"}"#, &limits).unwrap().into_iter();
        assert_eq!(single.size_hint(), (1, Some(1)));
        assert!(single.next().is_some());
        assert_eq!(single.size_hint(), (0, Some(0)));
        assert!(single.next().is_none());
    }
}
