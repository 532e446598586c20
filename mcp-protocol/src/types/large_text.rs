//! A tool result that is one large text, decoded without a second copy of the text.
//!
//! A result of megabytes is nearly always a single text block. Decoded the usual way, its text
//! is copied out of the result's JSON while that JSON is still held: twice the text at once. Here
//! the large string is cut out of the JSON, the rest decoded as usual, and the string's escapes
//! decoded where it lies ([`crate::scan::unescape_in_place`]): the result's buffer becomes the
//! block's text.

use serde_json::value::RawValue;

use super::content::ContentBlock;
use super::mrtr::Outcome;
use super::tools::CallToolOutcome;
use crate::scan::{array_elements, member_span, unescape_in_place};

/// Results shorter than this decode the usual way.
const LARGE: usize = 1024 * 1024;

/// Decode a `tools/call` result; one whose text block holds most of it keeps the text in the
/// result's own buffer. Anything unexpected (the scan and the decoder disagree) falls back to
/// the usual decoding, whose errors are the ones reported.
pub(crate) fn decode_call_outcome(raw: Box<RawValue>) -> Result<CallToolOutcome, serde_json::Error> {
    let json = raw.get();
    let Some((index, start, end)) =
        largest_text(json).filter(|&(_, s, e)| json.len() >= LARGE && e - s > json.len() / 2)
    else {
        return Outcome::decode(&raw);
    };
    // Everything but the text, with an empty string in its place.
    let mut rest = String::with_capacity(json.len() - (end - start) + 2);
    rest.push_str(&json[..start]);
    rest.push_str("\"\"");
    rest.push_str(&json[end..]);
    let mut outcome: CallToolOutcome = match serde_json::from_str::<&RawValue>(&rest).and_then(Outcome::decode) {
        Ok(outcome) => outcome,
        Err(_) => return Outcome::decode(&raw),
    };
    let Outcome::Complete(result) = &mut outcome else { return Outcome::decode(&raw) };
    let Some(ContentBlock::Text(block)) = result.content.get_mut(index) else { return Outcome::decode(&raw) };
    if !block.text.is_empty() {
        return Outcome::decode(&raw);
    }
    let mut bytes = String::from(Box::<str>::from(raw)).into_bytes();
    let len = unescape_in_place(&mut bytes, start + 1, end - 1)
        .map_err(|why| serde::de::Error::custom(format!("content block {index}: {why}")))?;
    // The capacity stays as it was (a shrink may move the text): what the JSON had around the
    // text and its escapes, a small part of it.
    bytes.truncate(len);
    // The string was part of UTF-8 text, and decoded escapes are whole characters.
    block.text = String::from_utf8(bytes).map_err(serde::de::Error::custom)?;
    Ok(outcome)
}

/// The largest `text` string of a `"type":"text"` block of the result's `content`: the block's
/// index, and where the string (with its quotes) starts and ends in `json`.
fn largest_text(json: &str) -> Option<(usize, usize, usize)> {
    let (content_start, content_end) = member_span(json, "content")?;
    let content = &json[content_start..content_end];
    let mut largest: Option<(usize, usize, usize)> = None;
    for (index, (block_start, block_end)) in array_elements(content)?.into_iter().enumerate() {
        let block = &content[block_start..block_end];
        if member_span(block, "type").map(|(s, e)| &block[s..e]) != Some("\"text\"") {
            continue;
        }
        let Some((s, e)) = member_span(block, "text").filter(|&(s, _)| block.as_bytes()[s] == b'"') else { continue };
        let (start, end) = (content_start + block_start + s, content_start + block_start + e);
        if largest.is_none_or(|(_, ls, le)| end - start > le - ls) {
            largest = Some((index, start, end));
        }
    }
    largest
}
