//! A line the codec checks itself (one object it finds to be JSON) decodes to the message, or
//! the error, that serde_json's way gives (`codec::decode_message`), member for member.

use mcp_protocol::codec::{self, Decoded};
use mcp_protocol::{DecodeError, DecodeLimits, Message, ResponsePayload};

/// What `decode_line` makes of `line`, as text to compare.
fn checked(line: &str) -> String {
    match codec::decode_line(line.as_bytes(), &DecodeLimits::default()) {
        Ok(Decoded::Single(message)) => format!("{message:?}"),
        Ok(Decoded::Batch(_)) => panic!("{line}: a batch"),
        Err(e) => format!("error: {e:?}"),
    }
}

/// What serde_json's way makes of `line` (without the whitespace around it, as `decode_line`
/// takes it), as text to compare.
fn usual(line: &str) -> String {
    match codec::decode_message(line.trim_matches(|c: char| c.is_ascii_whitespace())) {
        Ok(message) => format!("{message:?}"),
        Err(e) => format!("error: {e:?}"),
    }
}

#[test]
fn lines_of_every_shape_decode_as_serde_json_decodes_them() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"echo"}],"isError":false}}"#,
        r#"{ "id" : "a\"b" , "result" : [ 1 , 2 ] , "jsonrpc" : "2.0" }"#,
        r#"{"jsonrpc":"2.0","id":"plain","method":"tools/call","params":{"name":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
        r#"{"jsonrpc":"2.0","method":"m\u0065thod","params":null}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"no id"}}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":999999999999999999,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":true,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"\u0041","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
        r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2\u002e0","id":1,"result":{}}"#,
        r#"{"jsonrpc":2,"id":1,"result":{}}"#,
        r#"{"id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"i\u0064":2,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"extra":[1,{"a":null}],"more":"x"}"#,
        r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"jsonrpc":"2.0","id":1,"result":{}}"#,
        "{\"jsonrpc\":\"2.0\",\n\"id\":1,\r\n\"result\":{\"a\":\n[1,\r2]}}",
        r#"{"jsonrpc":"2.0","id":1,"result":{"a":tru}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"a":"b}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"a":"\x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}}"#,
        r#"{}"#,
    ];
    for line in lines {
        assert_eq!(checked(line), usual(line), "{line}");
    }
}

#[test]
fn a_payload_is_the_text_it_was_on_the_line_without_its_line_breaks() {
    let line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\": {\"a\":\r\n[1, \"x\\ny\"]} }";
    let Ok(Decoded::Single(Message::Response(response))) =
        codec::decode_line(line.as_bytes(), &DecodeLimits::default())
    else {
        panic!("not a response")
    };
    let ResponsePayload::Result(raw) = &response.payload else { panic!("not a result") };
    assert_eq!(raw.get(), "{\"a\":  [1, \"x\\ny\"]}");
}

#[test]
fn nesting_past_the_limit_is_refused_whatever_follows() {
    let limits = DecodeLimits { max_depth: 8, ..DecodeLimits::default() };
    let deep = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}1{}}}", "[".repeat(8), "]".repeat(8));
    assert_eq!(codec::decode_line(deep.as_bytes(), &limits).unwrap_err(), DecodeError::TooDeep { max: 8 });
    let broken = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}x", "[".repeat(9));
    assert_eq!(codec::decode_line(broken.as_bytes(), &limits).unwrap_err(), DecodeError::TooDeep { max: 8 });
    let fine = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}1{}}}", "[".repeat(7), "]".repeat(7));
    assert!(codec::decode_line(fine.as_bytes(), &limits).is_ok());
}

/// A small deterministic generator (xorshift), so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// A random envelope: members of every kind, valid or not, in any order, spaced or not.
fn envelope(rng: &mut Rng) -> String {
    const IDS: [&str; 9] = ["1", "42", "-3", "\"s\"", "\"a\\\"b\"", "null", "1.5", "123456789012345678901", "[]"];
    const METHODS: [&str; 5] = ["\"tools/call\"", "\"ping\"", "\"m\\u0065\"", "7", "null"];
    const PAYLOADS: [&str; 8] = [
        "{}",
        "[]",
        "null",
        "{\"content\":[{\"type\":\"text\",\"text\":\"hi \\\"there\\\"\"}],\"isError\":false}",
        "[1,{\"a\":[true,false,null]},\"x\"]",
        "3",
        "\"text\"",
        "{\"nested\":{\"deeper\":{\"deepest\":[0.5e-3]}}}",
    ];
    const ERRORS: [&str; 3] = ["{\"code\":-32601,\"message\":\"nope\"}", "{\"code\":1}", "\"bad\""];
    let mut members = vec![];
    if rng.below(8) != 0 {
        members.push(format!("\"jsonrpc\":{}", rng.pick(&["\"2.0\"", "\"2.0\"", "\"1.0\"", "2"])));
    }
    if rng.below(4) != 0 {
        members.push(format!("\"id\":{}", rng.pick(&IDS)));
    }
    match rng.below(4) {
        0 => members.push(format!("\"method\":{}", rng.pick(&METHODS))),
        1 => members.push(format!("\"method\":{},\"params\":{}", rng.pick(&METHODS), rng.pick(&PAYLOADS))),
        2 => members.push(format!("\"result\":{}", rng.pick(&PAYLOADS))),
        _ => members.push(format!("\"error\":{}", rng.pick(&ERRORS))),
    }
    if rng.below(6) == 0 {
        members.push(format!("\"{}\":{}", rng.pick(&["extra", "result", "id", "i\\u0064"]), rng.pick(&PAYLOADS)));
    }
    for _ in 0..members.len() {
        let (a, b) = (rng.below(members.len()), rng.below(members.len()));
        members.swap(a, b);
    }
    let space = rng.pick(&["", " ", "\n", " \r\n "]);
    format!("{{{space}{}{space}}}", members.join(&format!(",{space}")))
}

#[test]
fn random_envelopes_and_their_mutations_decode_as_serde_json_decodes_them() {
    const SEED: u64 = 0x5eed_c0de_0030;
    println!("seed {SEED:#x}");
    let mut rng = Rng(SEED);
    const ALPHABET: &[u8] = b"{}[]\",:\\ -.e019tfnulx\n";
    let mut decoded = 0;
    for case in 0..5000 {
        let line = envelope(&mut rng);
        assert_eq!(checked(&line), usual(&line), "case {case}: {line}");
        decoded += usize::from(!checked(&line).starts_with("error"));
        let mut bytes = line.into_bytes();
        for _ in 0..1 + rng.below(2) {
            let at = rng.below(bytes.len());
            match rng.below(3) {
                0 => bytes[at] = ALPHABET[rng.below(ALPHABET.len())],
                1 => bytes.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
                _ => {
                    bytes.remove(at);
                }
            }
        }
        let mutated = String::from_utf8(bytes).expect("ASCII");
        if mutated.trim_start().starts_with('[') {
            continue;
        }
        assert_eq!(checked(&mutated), usual(&mutated), "case {case}: {mutated}");
    }
    println!("{decoded} of 5000 envelopes are messages");
    assert!(decoded > 500, "the envelopes cover messages as well as errors");
}
