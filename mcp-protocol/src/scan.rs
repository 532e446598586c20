//! A look at one member of a JSON object without decoding the rest.
//!
//! [`object_member`] finds a top-level member of an object's text by its structure alone:
//! strings are skipped by their quotes and backslashes (a word at a time for their first bytes,
//! then a vector at a time), containers by their brackets. It does not validate what it skips, so
//! what it finds is a hint to be confirmed by a real decode: a client reads a page's `nextCursor`
//! with it (see [`next_cursor`]) to ask for the next page while it decodes this one, and checks
//! the cursor against the decoded page. On JSON text (parsed by serde_json, or checked by the codec), what it finds is exact: a
//! page of tools takes its schemas' text by it (`types::tools`).

/// Deepest nesting [`object_member`] walks through; deeper text is not looked into.
const MAX_DEPTH: usize = 128;

/// The text of member `name` of the JSON object `text` (its value as written, without
/// surrounding whitespace), if the object has it at its top level. `None` when it does not,
/// when `text` is not an object, or when the scan meets something that cannot be JSON. A member
/// name written with an escape is not recognised. The first of repeated members is returned.
pub fn object_member<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    // Both ends sit on ASCII bytes (a quote, a bracket or a scalar's edge), so they are
    // character boundaries.
    member_span(text, name).and_then(|(start, end)| text.get(start..end))
}

/// Where [`object_member`] finds member `name`'s value: its start and end in `text`.
pub(crate) fn member_span(text: &str, name: &str) -> Option<(usize, usize)> {
    first_member_span(text, &[name]).map(|(_, start, end)| (start, end))
}

/// The first top-level member of the object `text` whose name is one of `names`, found the way
/// [`object_member`] finds one: the index of its name in `names`, and where its value starts and
/// ends in `text`.
pub(crate) fn first_member_span(text: &str, names: &[&str]) -> Option<(usize, usize, usize)> {
    let (index, start) = find_member(text.as_bytes(), names)?;
    Some((index, start, value_end(text.as_bytes(), start)?))
}

/// The first top-level member of the object `bytes` whose name is one of `names`: the index of
/// its name and where its value starts (the value itself is not scanned).
fn find_member(bytes: &[u8], names: &[&str]) -> Option<(usize, usize)> {
    let open = skip_whitespace(bytes, 0);
    if bytes.get(open) != Some(&b'{') {
        return None;
    }
    let mut i = skip_whitespace(bytes, open + 1);
    if bytes.get(i) == Some(&b'}') {
        return None;
    }
    loop {
        let (key, start) = member_name(bytes, i)?;
        if let Some(index) = names.iter().position(|name| key == name.as_bytes()) {
            return Some((index, start));
        }
        i = skip_whitespace(bytes, value_end(bytes, start)?);
        match bytes.get(i) {
            Some(b',') => i = skip_whitespace(bytes, i + 1),
            _ => return None,
        }
    }
}

/// The name of the member at `bytes[i]` (a `"`) and where its value starts.
fn member_name(bytes: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if bytes.get(i) != Some(&b'"') {
        return None;
    }
    let key_end = string_end(bytes, i)?;
    let colon = skip_whitespace(bytes, key_end);
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    Some((&bytes[i + 1..key_end - 1], skip_whitespace(bytes, colon + 1)))
}

/// Where a value starts and ends in its text.
pub(crate) type Span = (usize, usize);

/// `text` with each of `spans` (in order, none overlapping another) replaced by `placeholder`:
/// what a decoder reads around the values that are taken from `text` where they lie (a large
/// line's payload, a large result's text, a page's schemas).
pub(crate) fn with_placeholders(text: &str, spans: &[Span], placeholder: &str) -> String {
    let cut: usize = spans.iter().map(|(start, end)| end - start).sum();
    let mut rest = String::with_capacity(text.len() - cut + spans.len() * placeholder.len());
    let mut copied = 0;
    for &(start, end) in spans {
        rest.push_str(&text[copied..start]);
        rest.push_str(placeholder);
        copied = end;
    }
    rest.push_str(&text[copied..]);
    rest
}

/// For each element of the array that is member `array` of the object `text` (found the way
/// [`object_member`] finds members), where the values of its members `names` start and end in
/// `text` when the element is an object that has them (the first of repeated members). One pass
/// over the array, however large its elements. `None` when there is no such array or it does
/// not scan.
pub(crate) fn element_members<const N: usize>(
    text: &str,
    array: &str,
    names: [&str; N],
) -> Option<Vec<[Option<Span>; N]>> {
    let bytes = text.as_bytes();
    let (_, open) = find_member(bytes, &[array])?;
    if bytes.get(open) != Some(&b'[') {
        return None;
    }
    let mut i = skip_whitespace(bytes, open + 1);
    let mut elements = Vec::new();
    if bytes.get(i) == Some(&b']') {
        return Some(elements);
    }
    loop {
        let mut found = [None; N];
        let end = match bytes.get(i)? {
            b'{' => object_members(bytes, i, |key, span| {
                if let Some(index) = names.iter().position(|name| key == name.as_bytes()) {
                    found[index].get_or_insert(span);
                }
            })?,
            _ => value_end(bytes, i)?,
        };
        elements.push(found);
        i = skip_whitespace(bytes, end);
        match bytes.get(i)? {
            b',' => i = skip_whitespace(bytes, i + 1),
            b']' => return Some(elements),
            _ => return None,
        }
    }
}

/// Walk the members of the object that opens at `bytes[open]`, giving `each` every member's name
/// and its value's start and end; the index just past the object.
fn object_members(bytes: &[u8], open: usize, mut each: impl FnMut(&[u8], (usize, usize))) -> Option<usize> {
    let mut i = skip_whitespace(bytes, open + 1);
    if bytes.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        let (key, start) = member_name(bytes, i)?;
        let end = value_end(bytes, start)?;
        each(key, (start, end));
        i = skip_whitespace(bytes, end);
        match bytes.get(i)? {
            b',' => i = skip_whitespace(bytes, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Decode the body of a JSON string, `buf[start..end]` (what lies between its quotes), into
/// `buf[..n]` and return `n`: the text moves to the front of its own buffer with its escapes
/// decoded on the way (an escape is never shorter than what it stands for), so it is never
/// copied to a second buffer. Fails, as a JSON parser does, on a control character, an unknown
/// escape, a bad `\u` escape or a lone surrogate, naming the offset in the body.
pub fn unescape_in_place(buf: &mut [u8], start: usize, end: usize) -> Result<usize, String> {
    let mut read = start;
    let mut write = 0;
    loop {
        let next = memchr::memchr(b'\\', &buf[read..end]).map_or(end, |at| read + at);
        if let Some(at) = first_control(&buf[read..next]) {
            return Err(format!("control character in a string at byte {}", read + at - start));
        }
        buf.copy_within(read..next, write);
        write += next - read;
        read = next;
        if read == end {
            return Ok(write);
        }
        let at = read - start;
        let decoded = match buf.get(read + 1).filter(|_| read + 1 < end) {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0c,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                let (c, len) = unicode_escape(&buf[read..end]).map_err(|why| format!("{why} at byte {at}"))?;
                read += len;
                write += c.encode_utf8(&mut buf[write..write + c.len_utf8()]).len();
                continue;
            }
            _ => return Err(format!("invalid escape in a string at byte {at}")),
        };
        buf[write] = decoded;
        write += 1;
        read += 2;
    }
}

/// Where the first control character (below U+0020, which a JSON string holds only escaped) is
/// in `bytes`. Checked 64 bytes at a time without branching inside a block, which compiles to
/// vector instructions: a text of megabytes is checked at memory speed.
fn first_control(bytes: &[u8]) -> Option<usize> {
    const BLOCK: usize = 64;
    let mut offset = 0;
    for block in bytes.chunks(BLOCK) {
        if block.iter().fold(false, |found, &b| found | (b < 0x20)) {
            return block.iter().position(|&b| b < 0x20).map(|at| offset + at);
        }
        offset += block.len();
    }
    None
}

/// The character a `\uXXXX` escape (or a surrogate pair of two) at the start of `bytes` stands
/// for, and how many bytes the escape takes.
fn unicode_escape(bytes: &[u8]) -> Result<(char, usize), &'static str> {
    let hex = |at: usize| -> Result<u32, &'static str> {
        let digits = bytes.get(at..at + 4).ok_or("a \\u escape cut short")?;
        let digits = std::str::from_utf8(digits).map_err(|_| "a bad \\u escape")?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("a bad \\u escape");
        }
        u32::from_str_radix(digits, 16).map_err(|_| "a bad \\u escape")
    };
    let first = hex(2)?;
    match first {
        0xD800..=0xDBFF => {
            if bytes.get(6..8) != Some(b"\\u") {
                return Err("a lone leading surrogate");
            }
            let second = hex(8)?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return Err("a lone leading surrogate");
            }
            let c = char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00));
            Ok((c.ok_or("a bad surrogate pair")?, 12))
        }
        0xDC00..=0xDFFF => Err("a lone trailing surrogate"),
        _ => Ok((char::from_u32(first).ok_or("a bad \\u escape")?, 6)),
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

/// The index of the first byte at or after `i` that is not whitespace. Most tokens follow the
/// one before at once: one test for that first.
#[inline(always)]
fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    if bytes.get(i).is_some_and(|&b| b > b' ') {
        return i;
    }
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(i) {
        i += 1;
    }
    i
}

/// The index just past the string that opens at `bytes[open]` (a `"`), honouring backslash
/// escapes; `None` if it does not close. Inlined: it is called once a string, and most strings
/// are a few bytes long.
#[inline(always)]
pub(crate) fn string_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        let at = quote_or_backslash(bytes, i)?;
        if bytes[at] == b'"' {
            return Some(at + 1);
        }
        i = at + 2;
    }
}

/// The index of the first `"` or `\` in `bytes` at or after `i`.
///
/// Most strings of JSON text are short (member names, types, tool names): their first bytes
/// are looked at eight at a time in a `u64` ([`words::first`]), which costs a few instructions a
/// word, where a call of `memchr2` costs about seventy before its vector loop starts. A longer
/// run goes to `memchr2`, which is faster on long text.
#[inline(always)]
fn quote_or_backslash(bytes: &[u8], i: usize) -> Option<usize> {
    let marked = |word| words::equal(word, b'"') | words::equal(word, b'\\');
    words::first(bytes, i, marked).or_else(|i| quote_or_backslash_far(bytes, i)).ok()
}

/// Bytes looked at a `u64` word at a time, for the first bytes of a string.
pub(crate) mod words {
    /// How many bytes [`first`] looks at: enough for most names, types, URLs and short
    /// descriptions (the `$schema` URL of rmcp's tools is 44 bytes), past which a vector search
    /// is faster.
    pub(crate) const BYTES: usize = 64;

    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

    /// The high bit of each byte of `word` below `n` (at most 0x80), exact for the lowest such
    /// byte (a borrow may only mark bytes above it).
    #[inline(always)]
    pub(crate) fn below(word: u64, n: u8) -> u64 {
        word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS
    }

    /// The high bit of each byte of `word` equal to `byte`, exact for the lowest such byte.
    #[inline(always)]
    pub(crate) fn equal(word: u64, byte: u8) -> u64 {
        below(word ^ (ONES * u64::from(byte)), 1)
    }

    /// The index of the first byte of the [`BYTES`] bytes of `bytes` from `i` that `marked`
    /// marks in a little-endian word (as [`below`] and [`equal`] do); `Err` with where the
    /// bytes looked at end when none is marked (or fewer than eight bytes are left).
    #[inline(always)]
    pub(crate) fn first(bytes: &[u8], mut i: usize, marked: impl Fn(u64) -> u64) -> Result<usize, usize> {
        for _ in 0..BYTES / 8 {
            let Some(word) = bytes.get(i..i + 8) else { break };
            let found = marked(u64::from_le_bytes(word.try_into().expect("a slice of eight bytes")));
            if found != 0 {
                // Little-endian: the lowest bits are the first byte.
                return Ok(i + found.trailing_zeros() as usize / 8);
            }
            i += 8;
        }
        Err(i)
    }
}

/// [`quote_or_backslash`] past the bytes it looks at itself; a call of its own, so that the
/// inlined part keeps few registers.
#[inline(never)]
fn quote_or_backslash_far(bytes: &[u8], i: usize) -> Result<usize, ()> {
    let rest = bytes.get(i..).ok_or(())?;
    memchr::memchr2(b'"', b'\\', rest).map(|at| i + at).ok_or(())
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

    /// `literal` (a JSON string with its quotes) decoded in place, or the error.
    fn unescaped(literal: &str) -> Result<String, String> {
        let mut buf = literal.as_bytes().to_vec();
        let n = unescape_in_place(&mut buf, 1, literal.len() - 1)?;
        buf.truncate(n);
        Ok(String::from_utf8(buf).expect("UTF-8"))
    }

    #[test]
    fn a_string_decoded_in_place_is_what_serde_json_decodes() {
        let valid = [
            r#""""#,
            r#""plain""#,
            r#""\"\\\/\b\f\n\r\t""#,
            r#""\u0041\u00e9\u20AC\ud83d\ude00 x""#,
            r#""é€😀 and \n at the end\n""#,
            r#""\\u0041 is not an escape""#,
            "\"\u{7f} is no control character\"",
        ];
        for literal in valid {
            let expected: String = serde_json::from_str(literal).unwrap();
            assert_eq!(unescaped(literal).as_deref(), Ok(expected.as_str()), "{literal}");
        }
        let invalid = [
            r#""\x""#,
            r#""\u12""#,
            r#""\u12G4""#,
            r#""\ud83d""#,
            r#""\ud83d\u0041""#,
            r#""\ude00""#,
            r#""\ud83dx\ude00""#,
            "\"tab\tinside\"",
            "\"nul\u{0}\"",
            r#""ends in \""#,
        ];
        for literal in invalid {
            assert!(serde_json::from_str::<String>(literal).is_err(), "serde_json takes {literal}");
            assert!(unescaped(literal).is_err(), "{literal}");
        }
        assert_eq!(unescaped(r#""ab\q""#).unwrap_err(), "invalid escape in a string at byte 2");
    }

    /// Numbers from a linear congruential generator started at `seed` (printed, to replay a run).
    fn seeded(seed: u64) -> impl FnMut() -> usize {
        println!("seed {seed:#x}");
        let mut state = seed;
        move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize
        }
    }

    #[test]
    fn random_strings_survive_encoding_and_decoding_in_place() {
        // A fixed seed: the same strings on every run.
        let mut next = seeded(0x5eed_0019);
        let alphabet: Vec<char> = "ab \"\\/\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}é€😀\u{fffd}\u{2028}".chars().collect();
        for _ in 0..2000 {
            let len = next() % 40;
            let s: String = (0..len).map(|_| alphabet[next() % alphabet.len()]).collect();
            let mut literal = serde_json::to_string(&s).unwrap();
            if next().is_multiple_of(2) {
                // serde_json writes few \u escapes: write every non-ASCII character as one.
                literal = literal.chars().fold(String::new(), |mut out, c| {
                    if c.is_ascii() {
                        out.push(c);
                    } else {
                        for unit in c.encode_utf16(&mut [0; 2]) {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    out
                });
            }
            assert_eq!(unescaped(&literal).as_deref(), Ok(s.as_str()), "{literal}");
        }
    }

    /// The end of a string as a scan from its start finds it: a backslash takes the byte after
    /// it, whatever it is.
    fn string_end_byte_by_byte(bytes: &[u8], open: usize) -> Option<usize> {
        let mut i = open + 1;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'"' => return Some(i + 1),
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
        None
    }

    #[test]
    fn a_string_ends_where_a_byte_by_byte_scan_ends_it() {
        for text in [r#""""#, r#""\""#, r#""\\""#, r#""a\"b""#, r#""\\\"\\"x"#, r#""\"#, r#""é\é""#, "\""] {
            let bytes = text.as_bytes();
            assert_eq!(string_end(bytes, 0), string_end_byte_by_byte(bytes, 0), "{text}");
        }
        // A fixed seed: the same texts on every run. Quotes and backslashes in every order,
        // runs of them included, and a start that is not the text's first byte.
        let mut next = seeded(0x5eed_0028);
        let alphabet: [&[u8]; 5] = [b"\"", b"\\", b"a", "é".as_bytes(), b"\\\\\\"];
        for _ in 0..5000 {
            let mut bytes = vec![b'x'; next() % 3];
            let open = bytes.len();
            bytes.push(b'"');
            // A run of plain bytes first, of any length around the word scan's end.
            bytes.resize(bytes.len() + next() % (words::BYTES + 16), b'a');
            for _ in 0..next() % 24 {
                bytes.extend_from_slice(alphabet[next() % alphabet.len()]);
            }
            assert_eq!(
                string_end(&bytes, open),
                string_end_byte_by_byte(&bytes, open),
                "{}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }

    #[test]
    fn elements_and_members_are_found_by_their_spans() {
        let text = r#"{"x":{"content":1},"content":[ {"a":[1,"]"],"b":"}","a":2} , "x" ,{},3 ],"z":0}"#;
        let elements = element_members(text, "content", ["a", "b"]).unwrap();
        let found: Vec<[Option<&str>; 2]> =
            elements.iter().map(|spans| spans.map(|span| span.map(|(s, e)| &text[s..e]))).collect();
        assert_eq!(found, [[Some(r#"[1,"]"]"#), Some(r#""}""#)], [None, None], [None, None], [None, None]]);
        assert_eq!(element_members(r#"{"content": [ ] }"#, "content", ["a"]), Some(vec![]));
        for bad in [
            "",
            "{}",
            "[]",
            r#"{"content":{}}"#,
            r#"{"content":[1,"#,
            r#"{"content":[1 2]}"#,
            r#"{"content":[,]}"#,
            r#"{"content":[{"a" 1}]}"#,
            r#"{"content":[{"a":1,}]}"#,
        ] {
            assert_eq!(element_members(bad, "content", ["a"]), None, "{bad}");
        }
        assert_eq!(first_member_span(r#"{"a":1,"b":[2],"c":3}"#, &["c", "b"]), Some((1, 11, 14)));
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
