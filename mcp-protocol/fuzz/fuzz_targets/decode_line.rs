//! Fuzz `decode_line`: it must never panic, whatever the bytes, and whatever it decodes must
//! re-encode to one line that decodes again to the same encoding.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_protocol::codec::{self, DecodeLimits, Decoded};
use mcp_protocol::{Message, ResponsePayload};
use serde_json::Value;

/// Small limits, so that the fuzzer reaches the length and depth checks quickly.
const SMALL: DecodeLimits = DecodeLimits { max_line_bytes: 4096, max_depth: 8 };

fuzz_target!(|data: &[u8]| {
    check(data, &SMALL);
    check(data, &DecodeLimits::default());
});

fn check(data: &[u8], limits: &DecodeLimits) {
    let decoded = match codec::decode_line(data, limits) {
        Ok(decoded) => decoded,
        Err(error) => {
            // Every error describes itself.
            assert!(!error.to_string().is_empty());
            return;
        }
    };
    for message in decoded.into_messages().into_iter().flatten() {
        let line = codec::encode_line(&message);
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1, "one line per message");
        let body = &line[..line.len() - 1];
        let again = match codec::decode_line(body, &DecodeLimits::default()) {
            Ok(Decoded::Single(again)) => again,
            other => panic!("re-encoded message does not decode: {other:?}"),
        };
        assert_eq!(again.id(), message.id());
        assert_eq!(again.method(), message.method());
        // Error data is held as a `Value`: without serde_json's `float_roundtrip` feature a float
        // in it may be read one ULP off, so its text is only compared when it holds no float.
        if !error_data_has_float(&message) {
            assert_eq!(codec::encode_line(&again), line, "re-encoding is stable");
        }
    }
}

fn error_data_has_float(message: &Message) -> bool {
    fn has_float(v: &Value) -> bool {
        match v {
            Value::Number(n) => n.is_f64(),
            Value::Array(a) => a.iter().any(has_float),
            Value::Object(o) => o.values().any(has_float),
            _ => false,
        }
    }
    match message {
        Message::Response(r) => {
            matches!(&r.payload, ResponsePayload::Error(e) if e.data.as_ref().is_some_and(has_float))
        }
        _ => false,
    }
}
