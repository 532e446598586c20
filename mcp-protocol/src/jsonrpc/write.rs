//! The envelope written straight into a buffer: the bytes serde_json writes for
//! [`Message`]'s `Serialize` (compact, members in the same order), without its serializer.
//!
//! Every message a client sends goes through here. Through serde each member name and each
//! string went through the serializer's map machinery and its escaping scan, about 150
//! instructions a string and half of a request's encoding; here the member names are constants,
//! an id is written with `itoa`, and a method name (a constant in practice) is copied as it is
//! when it needs no escape. Error objects, rare, still go through serde.

use super::{Message, RawJson, RequestId, ResponsePayload};

/// Append `message` as compact JSON to `out`.
pub(crate) fn write_message(message: &Message, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0""#);
    match message {
        Message::Request(r) => {
            out.extend_from_slice(br#","id":"#);
            write_id(&r.id, out);
            out.extend_from_slice(br#","method":"#);
            write_str(&r.method, out);
            write_raw_member(br#","params":"#, r.params.as_ref(), out);
        }
        Message::Notification(n) => {
            out.extend_from_slice(br#","method":"#);
            write_str(&n.method, out);
            write_raw_member(br#","params":"#, n.params.as_ref(), out);
        }
        Message::Response(r) => {
            match &r.id {
                Some(id) => {
                    out.extend_from_slice(br#","id":"#);
                    write_id(id, out);
                }
                None if r.id_absent => {}
                None => out.extend_from_slice(br#","id":null"#),
            }
            match &r.payload {
                ResponsePayload::Result(result) => write_raw_member(br#","result":"#, Some(result), out),
                ResponsePayload::Error(error) => {
                    out.extend_from_slice(br#","error":"#);
                    // An error object of string keys, strings, an integer and raw data: writing
                    // it to memory cannot fail.
                    serde_json::to_writer(&mut *out, error).expect("encoding an error object to memory");
                }
            }
        }
    }
    out.push(b'}');
}

fn write_raw_member(name: &[u8], raw: Option<&RawJson>, out: &mut Vec<u8>) {
    if let Some(raw) = raw {
        out.extend_from_slice(name);
        out.extend_from_slice(raw.get().as_bytes());
    }
}

fn write_id(id: &RequestId, out: &mut Vec<u8>) {
    match id {
        RequestId::Number(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        RequestId::String(s) => write_str(s, out),
    }
}

/// A JSON string: copied between quotes when nothing in it needs an escape, else through
/// serde_json's escaping (which escapes `"`, `\` and the control characters, and nothing else).
fn write_str(s: &str, out: &mut Vec<u8>) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        serde_json::to_writer(&mut *out, s).expect("encoding a string to memory");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{ErrorCode, ErrorObject, Notification, Request, Response};

    fn raw(text: &str) -> RawJson {
        serde_json::from_str(text).unwrap()
    }

    fn written(message: &Message) -> String {
        let mut out = Vec::new();
        write_message(message, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// The bytes are serde_json's for the same message, member for member.
    #[test]
    fn writes_what_serde_writes() {
        let strings = ["tools/call", "", "é ☃ 𝄞", "quote \" and \\ backslash", "line\nbreak\ttab\u{1}\u{1f}", "\u{7f}"];
        let ids = [
            RequestId::Number(0),
            RequestId::Number(-1),
            RequestId::Number(i64::MAX),
            RequestId::Number(i64::MIN),
            RequestId::String("abc".into()),
            RequestId::String("a\"b\\c\n".into()),
        ];
        let mut messages = Vec::new();
        for s in strings {
            for id in &ids {
                for params in [None, Some(raw(r#"{"name":"echo","arguments":{"text":"hi"}}"#)), Some(raw("null"))] {
                    messages.push(Message::Request(Request { id: id.clone(), method: s.into(), params }));
                }
                messages.push(Message::Response(Response::result(id.clone(), raw(r#"{"content":[]}"#))));
                let error = ErrorObject {
                    data: Some(serde_json::json!({"why": s})),
                    ..ErrorObject::new(ErrorCode::INVALID_PARAMS, s)
                };
                messages.push(Message::Response(Response::error(Some(id.clone()), error)));
            }
            messages.push(Message::Notification(Notification { method: s.into(), params: None }));
            messages.push(Message::Notification(Notification { method: s.into(), params: Some(raw("[1,2]")) }));
            messages.push(Message::Response(Response::error(None, ErrorObject::new(ErrorCode::PARSE_ERROR, s))));
        }
        for message in &messages {
            assert_eq!(written(message), serde_json::to_string(message).unwrap(), "{message:?}");
        }
    }

    /// A response whose id was absent on the wire is written without one, as serde writes it.
    #[test]
    fn an_absent_id_stays_absent() {
        let line = br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}"#;
        let crate::Decoded::Single(message) = crate::codec::decode_line(line, &Default::default()).unwrap() else {
            panic!("expected a message")
        };
        assert_eq!(written(&message), std::str::from_utf8(line).unwrap());
        assert_eq!(written(&message), serde_json::to_string(&message).unwrap());
    }
}
