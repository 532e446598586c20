//! A `SKILL.md`'s YAML frontmatter as JSON, and its field-by-field comparison with the
//! frontmatter a listing carries.
//!
//! The YAML is read event by event (`yaml-rust2`'s parser), not through its loader: an alias
//! is refused rather than expanded (no "billion laughs"), nesting and the number of nodes are
//! bounded, and a mapping key must be a string, as in the JSON object the listing carries.

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;
use yaml_rust2::yaml::Yaml;

use mcp_protocol::types::meta::JsonObject;

/// Deepest nesting of mappings and sequences accepted in a frontmatter.
const MAX_DEPTH: usize = 32;

/// Most nodes (scalars, mappings, sequences) accepted in a frontmatter.
const MAX_NODES: usize = 10_000;

/// The frontmatter block of `text` (a `SKILL.md`): the lines between an opening `---` line and
/// the next `---` (or `...`) line. `None` when the file does not open with one.
pub(crate) fn frontmatter_block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---")?;
    let rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n'))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" || bare == "..." {
            return Some(&rest[..offset]);
        }
        offset += line.len();
    }
    None
}

/// The body of a `SKILL.md`: what follows its frontmatter (the whole text when it has none).
pub(crate) fn body(text: &str) -> &str {
    let Some(block) = frontmatter_block(text) else { return text };
    let start = block.as_ptr() as usize - text.as_ptr() as usize + block.len();
    let after = &text[start..];
    // Skip the closing `---` line.
    match after.find('\n') {
        Some(i) => &after[i + 1..],
        None => "",
    }
}

/// Parse the frontmatter of `text` into a JSON object; the error says what is wrong.
pub(crate) fn parse(text: &str) -> Result<JsonObject, String> {
    let block = frontmatter_block(text).ok_or("SKILL.md does not open with a `---` frontmatter block")?;
    let mut reader = Reader { parser: Parser::new_from_str(block), nodes: 0 };
    loop {
        match reader.next()? {
            Event::StreamStart | Event::DocumentStart => continue,
            Event::MappingStart(..) => break,
            Event::StreamEnd | Event::DocumentEnd => return Err("the frontmatter is empty".into()),
            _ => return Err("the frontmatter is not a mapping".into()),
        }
    }
    let map = reader.mapping(1)?;
    loop {
        match reader.next()? {
            Event::DocumentEnd => continue,
            Event::StreamEnd => return Ok(map),
            _ => return Err("the frontmatter holds more than one YAML document".into()),
        }
    }
}

struct Reader<'a> {
    parser: Parser<std::str::Chars<'a>>,
    nodes: usize,
}

impl Reader<'_> {
    fn next(&mut self) -> Result<Event, String> {
        let (event, mark) = self.parser.next_token().map_err(|e| format!("the frontmatter is not valid YAML: {e}"))?;
        if matches!(event, Event::Scalar(..) | Event::MappingStart(..) | Event::SequenceStart(..)) {
            self.nodes += 1;
            if self.nodes > MAX_NODES {
                return Err(format!("the frontmatter has more than {MAX_NODES} values"));
            }
        }
        if let Event::Alias(_) = event {
            return Err(format!("the frontmatter uses a YAML alias (line {}), which is not accepted", mark.line()));
        }
        Ok(event)
    }

    /// The rest of a mapping whose start was read.
    fn mapping(&mut self, depth: usize) -> Result<Map<String, Value>, String> {
        let mut map = Map::new();
        loop {
            let key = match self.next()? {
                Event::MappingEnd => return Ok(map),
                Event::Scalar(key, ..) => key,
                _ => return Err("a frontmatter key is not a string".into()),
            };
            let event = self.next()?;
            let value = self.value(event, depth)?;
            if map.insert(key.clone(), value).is_some() {
                return Err(format!("the frontmatter repeats the key {key:?}"));
            }
        }
    }

    /// The value that starts with `event`.
    fn value(&mut self, event: Event, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("the frontmatter nests deeper than {MAX_DEPTH} levels"));
        }
        match event {
            Event::Scalar(text, style, _, tag) => Ok(scalar(text, style, tag.is_some())),
            Event::MappingStart(..) => Ok(Value::Object(self.mapping(depth + 1)?)),
            Event::SequenceStart(..) => {
                let mut items = Vec::new();
                loop {
                    match self.next()? {
                        Event::SequenceEnd => return Ok(Value::Array(items)),
                        event => items.push(self.value(event, depth + 1)?),
                    }
                }
            }
            _ => Err("the frontmatter ends inside a value".into()),
        }
    }
}

/// A scalar as JSON: a plain scalar is typed as YAML types it (null, boolean, number, string); a
/// quoted or block one, or a tagged one, stays a string.
fn scalar(text: String, style: TScalarStyle, tagged: bool) -> Value {
    if style != TScalarStyle::Plain || tagged {
        return Value::String(text);
    }
    match Yaml::from_str(&text) {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::Number(i.into()),
        Yaml::Real(r) => r.parse::<f64>().ok().and_then(Number::from_f64).map_or(Value::String(r), Value::Number),
        _ => Value::String(text),
    }
}

/// The first field on which `parsed` (from the file) and `listed` (from the listing) differ,
/// with what each says; `None` when they are identical in content.
pub(crate) fn first_difference(listed: &JsonObject, parsed: &JsonObject) -> Option<(String, String)> {
    for (key, want) in listed {
        match parsed.get(key) {
            None => return Some((key.clone(), format!("the listing has {}, the file has no such field", short(want)))),
            Some(got) if !same(want, got) => {
                return Some((key.clone(), format!("the listing has {}, the file has {}", short(want), short(got))));
            }
            Some(_) => {}
        }
    }
    parsed
        .iter()
        .find(|(key, _)| !listed.contains_key(*key))
        .map(|(key, got)| (key.clone(), format!("the file has {}, the listing has no such field", short(got))))
}

/// Equal in content; numbers compare by value (`1` and `1.0` are the same number).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64().zip(y.as_f64()).is_some_and(|(x, y)| x == y),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// A value for a message: its JSON, cut to 80 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn frontmatter_parses_to_json_with_yaml_typing() {
        let text = "---\nname: pdf-processing\ndescription: >\n  Extract and\n  fill PDFs\nlicense: \"Apache-2.0\"\n\
                    metadata:\n  version: 2.1\n  tags: [a, b]\n  draft: false\n  count: 3\n---\n\n# Body\n";
        let fm = parse(text).unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "pdf-processing", "description": "Extract and fill PDFs\n", "license": "Apache-2.0",
                   "metadata": {"version": 2.1, "tags": ["a", "b"], "draft": false, "count": 3}})
        );
        assert_eq!(body(text), "\n# Body\n");
    }

    #[test]
    fn hostile_or_malformed_frontmatter_is_an_error() {
        assert!(parse("# no frontmatter\n").unwrap_err().contains("does not open"));
        assert!(parse("---\nname: a\n").unwrap_err().contains("does not open"), "unterminated");
        assert!(parse("---\n- a\n---\n").unwrap_err().contains("not a mapping"));
        assert!(parse("---\na: &x [1]\nb: *x\n---\n").unwrap_err().contains("alias"));
        assert!(parse("---\nname: a\nname: b\n---\n").unwrap_err().contains("repeats"));
        assert!(parse("---\n? [1]\n: x\n---\n").unwrap_err().contains("not a string"));
        let deep = format!("---\na: {}1{}\n---\n", "[".repeat(40), "]".repeat(40));
        assert!(parse(&deep).unwrap_err().contains("deeper"));
        assert!(parse("---\nname: [unclosed\n---\n").unwrap_err().contains("not valid YAML"));
    }

    #[test]
    fn the_first_differing_field_is_named() {
        let listed = obj(json!({"name": "a", "description": "good", "metadata": {"v": 1}}));
        assert_eq!(
            first_difference(&listed, &obj(json!({"name": "a", "description": "good", "metadata": {"v": 1.0}}))),
            None
        );
        let (field, detail) =
            first_difference(&listed, &obj(json!({"name": "a", "description": "evil", "metadata": {"v": 1}}))).unwrap();
        assert_eq!(field, "description");
        assert!(detail.contains("\"good\"") && detail.contains("\"evil\""), "{detail}");
        let (field, _) = first_difference(&listed, &obj(json!({"name": "a", "description": "good"}))).unwrap();
        assert_eq!(field, "metadata");
        let (field, detail) =
            first_difference(&listed, &obj(json!({"name": "a", "description": "good", "metadata": {"v": 1}, "x": 1})))
                .unwrap();
        assert_eq!(field, "x");
        assert!(detail.contains("no such field"));
    }
}
