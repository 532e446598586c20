//! Large payloads are held once: a line handed over to the decoder becomes the payload's buffer
//! ([`codec::decode_owned_line`]), and a tool result that is one large text becomes the text's
//! buffer ([`RequestMethod::decode_owned`]). Checked by what they decode to (the same as the
//! borrowing decoders) and by where the result lies: at the start of the buffer given up.

use mcp_protocol::codec::{self, DecodeLimits, Decoded};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::tools::{CallTool, CallToolResult};
use mcp_protocol::{Message, RequestMethod};

const MIB: usize = 1024 * 1024;

/// A text of `len` bytes with escapes, multi-byte characters and a surrogate pair spread through
/// it, as a JSON string literal, and the text it stands for.
fn text_literal(len: usize) -> (String, String) {
    let mut text = String::with_capacity(len + 16);
    let mut i = 0;
    while text.len() < len {
        text.push_str(match i % 7 {
            0 => "line of text \"quoted\" ",
            1 => "tab\tand\\backslash ",
            2 => "é€ ",
            3 => "😀\n",
            _ => "plain words here ",
        });
        i += 1;
    }
    let mut literal = serde_json::to_string(&text).unwrap();
    // serde_json writes non-ASCII as is: put some \u escapes in by hand.
    literal = literal.replacen('€', "\\u20ac", 3).replacen('😀', "\\ud83d\\ude00", 3);
    (literal, text)
}

fn limits() -> DecodeLimits {
    DecodeLimits { max_line_bytes: 64 * MIB, max_depth: 64 }
}

#[test]
fn an_owned_line_decodes_to_what_a_borrowed_one_does() {
    // Payloads large enough to be kept in place; the small lines decode the usual way.
    let big = "y".repeat(codec::LARGE_LINE);
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#.to_owned(),
        format!(r#"{{"jsonrpc":"2.0","id":"a","method":"m","params":{{"t":"{big}"}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","method":"n","params":["{big}"]}}"#),
        format!(r#"{{"result":{{"t":"{big}"}},"jsonrpc":"2.0","id":7}}"#),
        format!("\u{feff}  {{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\r{{\"t\":\r\"{big}\"}}}}  \r"),
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#.to_owned(),
        format!(r#"{{"jsonrpc":"2.0","id":7,"error":{{"code":-1,"message":"{big}"}}}}"#),
        format!(r#"[{{"jsonrpc":"2.0","id":1,"result":"{big}"}},{{"jsonrpc":"2.0","id":2,"result":1}}]"#),
        format!(r#"{{"jsonrpc":"2.0","id":null,"method":"m","params":{{"t":"{big}"}}}}"#),
        format!(r#"{{"jsonrpc":"1.0","id":1,"result":"{big}"}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":"{big}","result":1}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":"{big}"#),
        // The envelope around a payload found by structure: a member before it whose text says
        // `"result":`, a repeated member, a method with a result, members after it, and an
        // envelope that is broken after the payload.
        format!(r#"{{"jsonrpc":"2.0","id":"a\"result\":[","result":{{"t":"{big}"}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"{big}"}},"result":{{}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","result":{{"t":"{big}"}}}}"#),
        format!(r#"{{"id":1,"result":[{{"result":"{big}"}}],"jsonrpc":"2.0","_meta":{{"k":[1,2]}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"{big}"}},}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"{big}"}}"#),
        "not json at all".to_owned(),
        "42".to_owned(),
    ];
    for line in &lines {
        let borrowed = codec::decode_line(line.as_bytes(), &limits());
        let owned = codec::decode_owned_line(line.as_bytes().to_vec(), &limits());
        assert_eq!(format!("{owned:?}"), format!("{borrowed:?}"), "{line}");
        if let Ok(Decoded::Single(message)) = owned {
            // What it encodes to decodes again to the same message.
            let again = codec::decode_line(codec::encode_line(&message).trim_ascii_end(), &limits()).unwrap();
            assert_eq!(format!("{again:?}"), format!("{:?}", Decoded::Single(message)), "{line}");
        }
    }
}

#[test]
fn a_large_payload_takes_over_the_line_instead_of_being_copied() {
    let (literal, _) = text_literal(4 * MIB);
    let line = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"content":[{{"type":"text","text":{literal}}}]}}}}"#);
    let borrowed = codec::decode_line(line.as_bytes(), &limits()).unwrap();
    let bytes = line.clone().into_bytes();
    let start = bytes.as_ptr();
    let owned = codec::decode_owned_line(bytes, &limits()).unwrap();
    assert_eq!(format!("{owned:?}"), format!("{borrowed:?}"));
    let Decoded::Single(Message::Response(response)) = owned else { panic!("a response") };
    // Moved to the front of the line's buffer, which then shrinks where it is.
    assert_eq!(response.into_result().unwrap().get().as_ptr(), start, "the payload was copied");
}

#[test]
fn a_large_payload_that_is_not_json_is_reported_with_its_member() {
    let big = "y".repeat(codec::LARGE_LINE);
    for (line, member) in [
        (format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"{big}" "u":1}}}}"#), "result"),
        (format!(r#"{{"jsonrpc":"2.0","method":"m","params":["{big}",]}}"#), "params"),
        (format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"{big}","u":tru}}}}"#), "result"),
        // A line break inside a string is not JSON, whether or not others stand between the
        // payload's members (where they are whitespace).
        (format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"t\":\"{big}\r\"}}}}"), "result"),
        (format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"t\":\"{big}\r\",\r\"u\":1}}}}"), "result"),
        (format!("{{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"\r\",\r\"{big}\"]}}"), "params"),
    ] {
        let borrowed = codec::decode_line(line.as_bytes(), &limits()).unwrap_err();
        let owned = codec::decode_owned_line(line.into_bytes(), &limits()).unwrap_err();
        assert!(matches!(borrowed, codec::DecodeError::NotJson(_)), "{borrowed}");
        let codec::DecodeError::NotJson(why) = &owned else { panic!("not JSON expected: {owned}") };
        assert!(why.starts_with(&format!("the `{member}` member (from byte ")), "{why}");
    }
}

#[test]
fn large_lines_that_are_not_utf8_or_too_long_are_refused_as_borrowed_ones_are() {
    let big = "y".repeat(codec::LARGE_LINE);
    let mut invalid = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"{big}"}}}}"#).into_bytes();
    let at = invalid.len() - 10;
    invalid[at] = 0xff;
    let tight = DecodeLimits { max_line_bytes: codec::LARGE_LINE + 8, ..limits() };
    for (line, limits) in [(invalid.clone(), limits()), (invalid, tight)] {
        let borrowed = codec::decode_line(&line, &limits).unwrap_err();
        let owned = codec::decode_owned_line(line, &limits).unwrap_err();
        assert_eq!(format!("{owned:?}"), format!("{borrowed:?}"));
    }
}

/// A `tools/call` result line's payload, owned.
fn result(json: &str) -> mcp_protocol::RawJson {
    mcp_protocol::RawJson::from_string(json.to_owned()).unwrap()
}

/// The complete result `json` decodes to when its buffer is given up, checked to be what the
/// usual decoding makes of it, and where that buffer started.
fn decoded_in_place(json: &str) -> (CallToolResult, *const u8) {
    let expected = CallTool::decode_result(&result(json)).unwrap();
    let raw = result(json);
    let start = raw.get().as_ptr();
    let decoded = CallTool::decode_owned(raw).unwrap();
    assert_eq!(format!("{decoded:?}"), format!("{expected:?}"));
    let Outcome::Complete(call) = decoded else { panic!("a complete result") };
    (call, start)
}

#[test]
fn a_large_text_result_becomes_its_text_without_a_second_copy() {
    let (literal, text) = text_literal(4 * MIB);
    let json = format!(
        r#"{{"isError":false,"content":[{{"type":"text","text":"small"}},{{"text":{literal},"type":"text","annotations":{{"priority":1}}}},{{"type":"image","data":"AAAA","mimeType":"image/png"}}],"_meta":{{"k":1}}}}"#
    );
    let (call, start) = decoded_in_place(&json);
    let ContentBlock::Text(block) = &call.content[1] else { panic!("a text block") };
    assert_eq!(block.text, text);
    assert_eq!(block.text.as_ptr(), start, "the text was copied out of the result");
    assert_eq!(call.content.len(), 3);
}

#[test]
fn a_large_text_without_escapes_is_taken_as_it_lies() {
    // Text that needs no escape in JSON, multi-byte characters included, at both ends of the
    // string too.
    let mut text = String::from("é");
    while text.len() < 3 * MIB {
        text.push_str("plain words, é€😀 and ' quotes' / slashes ");
    }
    text.push('😀');
    let literal = serde_json::to_string(&text).unwrap();
    assert!(!literal.contains('\\'), "the literal has no escape");
    let json =
        format!(r#"{{"content":[{{"type":"text","text":"a\nb"}},{{"type":"text","text":{literal}}}],"isError":true}}"#);
    let (call, start) = decoded_in_place(&json);
    let [ContentBlock::Text(small), ContentBlock::Text(large)] = &call.content[..] else { panic!("two text blocks") };
    assert_eq!(small.text, "a\nb");
    assert_eq!(large.text, text);
    assert_eq!(large.text.as_ptr(), start, "the text was copied out of the result");
    assert_eq!(call.is_error, Some(true));
}

#[test]
fn results_the_shortcut_does_not_fit_decode_the_usual_way() {
    let (literal, _) = text_literal(2 * MIB);
    let small = "z".repeat(MIB + 10);
    let cases = [
        // Under a mebibyte: the usual way.
        r#"{"content":[{"type":"text","text":"hi"}]}"#.to_owned(),
        // The bulk is structured content, not a text.
        format!(r#"{{"content":[{{"type":"text","text":"hi"}}],"structuredContent":{{"t":"{small}"}}}}"#),
        // A large string in a block that is not text.
        format!(r#"{{"content":[{{"type":"image","data":{literal},"mimeType":"image/png"}}]}}"#),
        // Text in a block whose `type` is written with an escape, which the scan does not read.
        format!(r#"{{"content":[{{"type":"te\u0078t","text":{literal}}}]}}"#),
        // A task result, whose content is no tool output.
        format!(
            r#"{{"task":{{"taskId":"t","status":"working","createdAt":"2025-01-01T00:00:00Z"}},"content":[{{"type":"text","text":{literal}}}]}}"#
        ),
    ];
    for json in &cases {
        let expected = CallTool::decode_result(&result(json));
        let decoded = CallTool::decode_owned(result(json));
        assert_eq!(
            format!("{:?}", decoded.map_err(|e| e.to_string())),
            format!("{:?}", expected.map_err(|e| e.to_string())),
            "{}",
            &json[..80]
        );
    }
}

#[test]
fn a_lone_surrogate_in_a_large_text_is_an_error_naming_the_block() {
    // JSON text that a parser skips over, but that does not decode to a string.
    let (literal, _) = text_literal(2 * MIB);
    let bad = literal.replacen("\\t", "\\ud83d", 1);
    let json = format!(r#"{{"content":[{{"type":"text","text":{bad}}}]}}"#);
    assert!(CallTool::decode_result(&result(&json)).is_err(), "the usual decoding refuses it too");
    let err = CallTool::decode_owned(result(&json)).unwrap_err().to_string();
    assert!(err.starts_with("content block 0: a lone leading surrogate at byte "), "{err}");
}
