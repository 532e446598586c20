//! A look at one member of a JSON object without decoding the rest.
//!
//! [`object_member`] finds a top-level member of an object's text by its structure alone:
//! strings are skipped by their quotes and backslashes (a vector at a time), containers by their
//! brackets. It does not validate what it skips, so what it finds is a hint to be confirmed by a
//! real decode: a client reads a page's `nextCursor` with it (see [`next_cursor`]) to ask for the
//! next page while it decodes this one, and checks the cursor against the decoded page.

/// Deepest nesting [`object_member`] walks through; deeper text is not looked into.
const MAX_DEPTH: usize = 128;

/// The text of member `name` of the JSON object `text` (its value as written, without
/// surrounding whitespace), if the object has it at its top level. `None` when it does not,
/// when `text` is not an object, or when the scan meets something that cannot be JSON. A member
/// name written with an escape is not recognised. The first of repeated members is returned.
pub fn object_member<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let bytes = text.as_bytes();
    let mut i = skip_whitespace(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_whitespace(bytes, i + 1);
    if bytes.get(i) == Some(&b'}') {
        return None;
    }
    loop {
        if bytes.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, i)?;
        let key = &bytes[i + 1..key_end - 1];
        i = skip_whitespace(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_whitespace(bytes, i + 1);
        let end = value_end(bytes, start)?;
        if key == name.as_bytes() {
            // Both ends sit on ASCII bytes (a quote, a bracket or a scalar's edge), so they are
            // character boundaries.
            return text.get(start..end);
        }
        i = skip_whitespace(bytes, end);
        match bytes.get(i) {
            Some(b',') => i = skip_whitespace(bytes, i + 1),
            _ => return None,
        }
    }
}

/// The `nextCursor` a page's result text announces, read without decoding the page: `None`
/// when it has none (a last page), when it is `null` or not a string, or when the text cannot be
/// scanned. A hint: the decoded page has the final word.
pub fn next_cursor(result: &str) -> Option<String> {
    let value = object_member(result, "nextCursor")?;
    if !value.starts_with('"') {
        return None;
    }
    serde_json::from_str::<String>(value).ok()
}

fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(i) {
        i += 1;
    }
    i
}

/// The index just past the string that opens at `bytes[open]` (a `"`), honouring backslash
/// escapes; `None` if it does not close.
fn string_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', bytes.get(i..)?)?;
        if bytes[at] == b'"' {
            return Some(at + 1);
        }
        i = at + 2;
    }
}

/// The index just past the value that starts at `bytes[start]`; `None` if it does not end
/// within `bytes` or nests deeper than [`MAX_DEPTH`].
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match *bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => container_end(bytes, start),
        b',' | b'}' | b']' | b':' => None,
        _ => {
            // A number or a literal: it runs to the next delimiter or whitespace.
            let len = bytes[start..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(bytes.len() - start);
            Some(start + len)
        }
    }
}

/// The index just past the array or object that opens at `bytes[open]`, skipping strings.
fn container_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                i = string_end(bytes, i)?;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return None;
                }
            }
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_is_found_whatever_comes_before_it() {
        let text = r#" { "tools" : [ {"name":"a]}\"[{","x":[1,{"y":"}"}]} , 2.5e3, true, null ] ,
            "nextCursor" : "c\"1" , "z": {} } "#;
        assert_eq!(object_member(text, "nextCursor"), Some(r#""c\"1""#));
        assert_eq!(object_member(text, "z"), Some("{}"));
        assert!(object_member(text, "tools").unwrap().ends_with("null ]"));
        assert_eq!(object_member(text, "name"), None, "only top-level members are looked at");
        assert_eq!(object_member(text, "absent"), None);
        assert_eq!(next_cursor(text).as_deref(), Some("c\"1"));
        assert_eq!(object_member(r#"{"n":-1.5,"m":false}"#, "n"), Some("-1.5"));
        assert_eq!(object_member(r#"{"n":-1.5,"m":false}"#, "m"), Some("false"));
    }

    #[test]
    fn what_cannot_be_scanned_yields_nothing() {
        for text in [
            "",
            "[]",
            "{}",
            "\"nextCursor\"",
            r#"{"nextCursor""#,
            r#"{"nextCursor":"#,
            r#"{"nextCursor":"open"#,
            r#"{"nextCursor" "a"}"#,
            r#"{"tools":[1,2,"nextCursor":"a"}"#,
            r#"{"tools":[} "nextCursor":"a"}"#,
            r#"{"tools":1 "nextCursor":"a"}"#,
            r#"{"a":,"nextCursor":"a"}"#,
            r#"{"a\"":"x\\"#,
            "{\"a\":\"\\",
        ] {
            assert_eq!(object_member(text, "nextCursor"), None, "{text:?}");
        }
        let deep = format!(r#"{{"a":{}{},"nextCursor":"c"}}"#, "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(object_member(&deep, "nextCursor"), None, "too deep to look past");
        let fine = format!(r#"{{"a":{}{},"nextCursor":"c"}}"#, "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(object_member(&fine, "nextCursor"), Some("\"c\""));
    }

    #[test]
    fn a_cursor_that_is_not_a_string_is_no_cursor() {
        assert_eq!(next_cursor(r#"{"nextCursor":null}"#), None);
        assert_eq!(next_cursor(r#"{"nextCursor":7}"#), None);
        assert_eq!(next_cursor(r#"{"nextCursor":"bad \u12"}"#), None, "a string that does not decode");
        assert_eq!(next_cursor(r#"{"nextCursor":"\u00e9t\u00e9"}"#).as_deref(), Some("été"));
        assert_eq!(next_cursor(r#"{"tools":[],"nextCursor":"é"}"#).as_deref(), Some("é"));
    }
}
