use serde::de::IgnoredAny;
use serde_json::{Value, json};

use super::*;

/// What serde_json says of `text`: whether it is one JSON value.
fn serde_accepts(text: &str) -> bool {
    serde_json::from_str::<IgnoredAny>(text).is_ok()
}

fn accepts(text: &str) -> bool {
    matches!(check(text.as_bytes(), 120), Verdict::Json(_))
}

#[test]
fn json_is_accepted_and_anything_else_refused_as_serde_json_does() {
    let good = [
        "0",
        "-0",
        "-0.5e+10",
        "12E-3",
        "1.25",
        "true",
        "false",
        "null",
        "\"\"",
        "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\uD800\"",
        "\"\u{7f}é漢🦀\"",
        "[]",
        "{}",
        "[ 1 , [ ] , { } ]",
        "{\"a\" : 1 , \"b\":[true,null] ,\"c\":{\"d\":\"e\"}}",
        "{\n\"a\":\r\n[1,\n2]}",
        "{\"\":\"\"}",
    ];
    for text in good {
        assert!(serde_accepts(text), "serde_json refuses {text:?}");
        assert!(accepts(text), "{text:?} refused");
    }
    let bad = [
        "",
        "01",
        "-",
        "+1",
        "1.",
        ".5",
        "1e",
        "1e+",
        "0x1",
        "tru",
        "truee",
        "nul",
        "True",
        "\"",
        "\"abc",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\u12g4\"",
        "\"a\u{1}b\"",
        "\"a\tb\"",
        "\"a\nb\"",
        "[",
        "]",
        "[1,]",
        "[,1]",
        "[1 2]",
        "{,}",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{1:2}",
        "{\"a\":1]",
        "[1}",
        "{} {}",
        "1 2",
        "[1]]",
        "{\"a\":1}}",
        "\"a\"\"b\"",
        "nan",
        "[\u{c}1]",
    ];
    for text in bad {
        assert!(!serde_accepts(text), "serde_json accepts {text:?}");
        assert!(!accepts(text), "{text:?} accepted");
    }
}

#[test]
fn nesting_deeper_than_the_limit_is_refused_as_such() {
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(matches!(check(nested(64).as_bytes(), 64), Verdict::Json(_)));
    assert!(matches!(check(nested(65).as_bytes(), 64), Verdict::TooDeep));
    let objects = format!("{}1{}", "{\"a\":".repeat(10), "}".repeat(10));
    assert!(matches!(check(objects.as_bytes(), 10), Verdict::Json(_)));
    assert!(matches!(check(objects.as_bytes(), 9), Verdict::TooDeep));
    // Brackets in strings do not nest.
    assert!(matches!(check(b"[\"[[[[[[[[[[[[\"]", 2), Verdict::Json(_)));
    // A fault before the limit is reached is a fault.
    assert!(matches!(check(b"[x[[[[[[[[[[[[", 4), Verdict::NotJson));
}

#[test]
fn the_members_of_a_top_level_object_are_noted_where_they_lie() {
    let text = r#"{"jsonrpc":"2.0", "id" : 7,"result":{"a":[1,{"b":"}"}]},"e\"x":"y"}"#;
    let Verdict::Json(checked) = check(text.as_bytes(), 64) else { panic!("not JSON") };
    let members: Vec<(&str, &str)> = checked
        .members()
        .unwrap()
        .iter()
        .map(|m| (&text[m.name.span.0..m.name.span.1], &text[m.value.0..m.value.1]))
        .collect();
    assert_eq!(
        members,
        [("jsonrpc", "\"2.0\""), ("id", "7"), ("result", r#"{"a":[1,{"b":"}"}]}"#), ("e\\\"x", "\"y\"")]
    );
    let escaped: Vec<bool> = checked.members().unwrap().iter().map(|m| m.name.escaped).collect();
    assert_eq!(escaped, [false, false, false, true]);
    assert!(!checked.line_breaks);
    // Eight are noted; with more, or when the value is not an object, none is.
    let eight = format!("{{{}}}", (0..8).map(|k| format!("\"m{k}\":{k}")).collect::<Vec<_>>().join(","));
    let Verdict::Json(checked) = check(eight.as_bytes(), 64) else { panic!("not JSON") };
    assert_eq!(checked.members().unwrap().len(), 8);
    assert_eq!(checked.members().unwrap()[7].value, (eight.len() - 2, eight.len() - 1));
    let nine = format!("{{{}}}", (0..9).map(|k| format!("\"m{k}\":{k}")).collect::<Vec<_>>().join(","));
    let Verdict::Json(checked) = check(nine.as_bytes(), 64) else { panic!("not JSON") };
    assert!(checked.members().is_none());
    let Verdict::Json(checked) = check(b"[{\"a\":1}]", 64) else { panic!("not JSON") };
    assert!(checked.members().is_none());
    let Verdict::Json(checked) = check(b"{}", 64) else { panic!("not JSON") };
    assert_eq!(checked.members(), Some(&[][..]));
    let Verdict::Json(checked) = check(b"{\"a\":\r\n1}", 64) else { panic!("not JSON") };
    assert!(checked.line_breaks);
}

/// A small deterministic generator (xorshift), so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random JSON value, with strings that need escapes and numbers of every form.
fn value(rng: &mut Rng, depth: usize) -> Value {
    const STRINGS: [&str; 8] = [
        "",
        "plain",
        "quote \" and \\ backslash",
        "tab\tnew\nline",
        "\u{1}\u{1f}",
        "é漢🦀",
        "/}]",
        "a long string that goes past the first thirty-two bytes of a word scan, with \" an escape",
    ];
    const NUMBERS: [&str; 6] = ["0", "-12", "3.25", "-0.5e-3", "1E+30", "18446744073709551615"];
    match rng.below(if depth > 4 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 1),
        2 => serde_json::from_str(NUMBERS[rng.below(NUMBERS.len())]).unwrap(),
        3 | 4 => Value::String(STRINGS[rng.below(STRINGS.len())].repeat(1 + rng.below(3))),
        5 => Value::Array((0..rng.below(4)).map(|_| value(rng, depth + 1)).collect()),
        _ => Value::Object((0..rng.below(4)).map(|k| (format!("k{k}"), value(rng, depth + 1))).collect()),
    }
}

/// `text` with whitespace, some of it line breaks, after each structural byte outside strings.
fn spaced(rng: &mut Rng, text: &str) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        out.push(c);
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, '{' | '[' | ',' | ':') && rng.below(3) == 0 {
            out.push_str([" ", "\n", "\t ", "\r\n"][rng.below(4)]);
        }
    }
    out
}

#[test]
fn check_agrees_with_serde_json_on_random_text_and_its_mutations() {
    const SEED: u64 = 0x5eed_0030;
    println!("seed {SEED:#x}");
    let mut rng = Rng(SEED);
    const ALPHABET: &[u8] = b"{}[]\",:\\ -+.eE019tfrnulx\t\n\r\x01\x1f/";
    let (mut valid, mut invalid) = (0, 0);
    for case in 0..20_000 {
        let compact = serde_json::to_string(&value(&mut rng, 0)).unwrap();
        let text = if rng.below(2) == 0 { spaced(&mut rng, &compact) } else { compact };
        assert!(accepts(&text), "case {case}: {text:?} refused");
        // A few bytes replaced, inserted or removed.
        let mut bytes = text.into_bytes();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(bytes.len() + 1);
            let byte = ALPHABET[rng.below(ALPHABET.len())];
            match rng.below(3) {
                0 if at < bytes.len() && bytes[at].is_ascii() => bytes[at] = byte,
                1 => bytes.insert(at, byte),
                _ if at < bytes.len() && bytes[at].is_ascii() => {
                    bytes.remove(at);
                }
                _ => {}
            }
        }
        let Ok(mutated) = String::from_utf8(bytes) else { continue };
        let mutated = mutated.trim_matches([' ', '\t', '\n', '\r']);
        let serde = serde_accepts(mutated);
        assert_eq!(accepts(mutated), serde, "case {case}: {mutated:?} (serde_json accepts: {serde})");
        if serde { valid += 1 } else { invalid += 1 }
    }
    println!("mutations still JSON: {valid}, not JSON: {invalid}");
    assert!(valid > 1000 && invalid > 10_000, "the mutations cover both sides");
}

#[test]
fn long_strings_are_checked_past_the_word_scan() {
    // Around the word scan's end and the 32-byte blocks after it.
    let words = crate::scan::words::BYTES;
    for len in [0, 7, 8, words - 1, words, words + 1, words + 31, words + 32, words + 33, words + 100, 1000] {
        for at in [0, len / 2, len.saturating_sub(1)] {
            let body = "a".repeat(len);
            let text = format!("[\"{body}\"]");
            assert!(accepts(&text), "{len}");
            if len > 0 {
                for special in ['\u{0}', '\u{1f}', '\n'] {
                    let mut bad = body.clone().into_bytes();
                    bad[at] = special as u8;
                    let bad = format!("[\"{}\"]", String::from_utf8(bad).unwrap());
                    assert!(!accepts(&bad) && !serde_accepts(&bad), "{len} {at} {special:?}");
                }
                let mut escaped = body.clone();
                escaped.replace_range(at..at + 1, "\\");
                let escaped = format!("[\"{escaped}\\\\\"]");
                assert_eq!(accepts(&escaped), serde_accepts(&escaped), "{escaped}");
            }
        }
    }
    assert!(accepts(&json!(["x".repeat(5000)]).to_string()));
}
