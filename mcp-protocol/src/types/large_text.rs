//! A tool result that is one large text, decoded without a second copy of the text.
//!
//! A result of megabytes is nearly always a single text block. Decoded the usual way, its text
//! is copied out of the result's JSON while that JSON is still held: twice the text at once. Here
//! the large string is cut out of the JSON, the rest decoded as usual, and the string's escapes
//! decoded where it lies ([`crate::scan::unescape_in_place`]): the result's buffer becomes the
//! block's text. A string without escapes (most large texts) is the text as it lies, and is
//! taken as text, without decoding it or checking it as UTF-8 again.

use crate::RawJson;
use crate::scan::{element_members, unescape_in_place, with_placeholders};

/// Results shorter than this decode the usual way.
const LARGE: usize = 1024 * 1024;

/// Decode a result with `decode`; one whose `content` has a text block holding most of it
/// keeps that text in the result's own buffer: `text_of` finds the decoded block's text by the
/// block's index (`None` when the decoded result has no such text block). Anything unexpected
/// (the scan and the decoder disagree) falls back to decoding the whole result with `decode`,
/// whose errors are the ones reported.
pub(crate) fn decode_keeping_large_text<T>(
    raw: RawJson,
    decode: impl Fn(&RawJson) -> Result<T, serde_json::Error>,
    text_of: impl FnOnce(&mut T, usize) -> Option<&mut String>,
) -> Result<T, serde_json::Error> {
    let json = raw.get();
    // The length first: a small result (nearly every one) is not scanned at all.
    if json.len() < LARGE {
        return decode(&raw);
    }
    let Some((index, start, end)) = largest_text(json).filter(|&(_, s, e)| e - s > json.len() / 2) else {
        return decode(&raw);
    };
    // Everything but the text, with an empty string in its place.
    let rest = with_placeholders(json, &[(start, end)], "\"\"");
    // Valid JSON, as the result is: a string in place of a string.
    let Ok(mut decoded) = decode(&RawJson::from_checked(rest)) else { return decode(&raw) };
    let Some(text) = text_of(&mut decoded, index).filter(|text| text.is_empty()) else { return decode(&raw) };
    let mut buffer = raw.into_string();
    // The capacity stays as it was (a shrink may move the text): what the JSON had around the
    // text and its escapes, a small part of it.
    if memchr::memchr(b'\\', &buffer.as_bytes()[start + 1..end - 1]).is_none() {
        // No escape (most large texts): the string's body is the text as it is, and the JSON
        // is one JSON value (no control character in a string). It moves to the
        // front of the buffer as text, with no second UTF-8 check.
        buffer.truncate(end - 1);
        buffer.drain(..start + 1);
        *text = buffer;
        return Ok(decoded);
    }
    let mut bytes = buffer.into_bytes();
    let len = unescape_in_place(&mut bytes, start + 1, end - 1)
        .map_err(|why| serde::de::Error::custom(format!("content block {index}: {why}")))?;
    bytes.truncate(len);
    // The string was part of UTF-8 text, and decoded escapes are whole characters.
    *text = String::from_utf8(bytes).map_err(serde::de::Error::custom)?;
    Ok(decoded)
}

/// The largest `text` string of a `"type":"text"` block of the result's `content`: the block's
/// index, and where the string (with its quotes) starts and ends in `json`. One pass over the
/// content.
fn largest_text(json: &str) -> Option<(usize, usize, usize)> {
    let mut largest: Option<(usize, usize, usize)> = None;
    for (index, [kind, text]) in element_members(json, "content", ["type", "text"])?.into_iter().enumerate() {
        if kind.map(|(s, e)| &json[s..e]) != Some("\"text\"") {
            continue;
        }
        let Some((start, end)) = text.filter(|&(s, _)| json.as_bytes()[s] == b'"') else { continue };
        if largest.is_none_or(|(_, ls, le)| end - start > le - ls) {
            largest = Some((index, start, end));
        }
    }
    largest
}
