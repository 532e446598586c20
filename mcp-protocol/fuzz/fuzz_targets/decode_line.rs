//! Fuzz `decode_line`: it must never panic, whatever the bytes, and whatever it decodes must
//! re-encode to one line that decodes again to the same encoding.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_protocol::codec::{self, DecodeLimits, Decoded};

/// Small limits, so that the fuzzer reaches the length and depth checks quickly.
const SMALL: DecodeLimits = DecodeLimits { max_line_bytes: 4096, max_depth: 8 };

fuzz_target!(|data: &[u8]| {
    check(data, &SMALL);
    check(data, &DecodeLimits::default());
});

fn check(data: &[u8], limits: &DecodeLimits) {
    let Ok(decoded) = codec::decode_line(data, limits) else {
        return;
    };
    for message in decoded.into_messages().into_iter().flatten() {
        let line = codec::encode_line(&message);
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1, "one line per message");
        let body = &line[..line.len() - 1];
        match codec::decode_line(body, &DecodeLimits::default()) {
            Ok(Decoded::Single(again)) => {
                assert_eq!(codec::encode_line(&again), line, "re-encoding is stable");
                assert_eq!(again.id(), message.id());
                assert_eq!(again.method(), message.method());
            }
            other => panic!("re-encoded message does not decode: {other:?}"),
        }
    }
}
