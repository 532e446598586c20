//! YAML (goose's `config.yaml`) as a [`Node`] tree.
//!
//! The text is read event by event with `yaml-rust2`'s parser, not its loader, so that what a
//! hostile file can cost is bounded: nesting is at most [`MAX_DEPTH`] levels and the tree at
//! most [`MAX_NODES`] values, aliases included (an alias copies its anchor's tree and counts
//! every value it copies, so a "billion laughs" file stops at the bound instead of filling
//! memory). Mapping keys must be scalars; a repeated key is kept, as in the JSON reader, so that
//! the server reader reports it.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};
use yaml_rust2::yaml::Yaml;

use super::error::ConfigError;
use super::node::Node;

/// Deepest nesting of mappings and sequences accepted.
pub(crate) const MAX_DEPTH: usize = 64;

/// Most values (scalars, mappings, sequences, with what aliases copy) accepted in one file.
pub(crate) const MAX_NODES: usize = 200_000;

/// Parses YAML; an empty document is an empty mapping.
pub(crate) fn parse(text: &str, source_name: &str) -> Result<Node, ConfigError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader { parser: Parser::new_from_str(text), nodes: 0, anchors: HashMap::new(), source_name };
    let mut root = None;
    loop {
        let (event, mark) = reader.next()?;
        match event {
            Event::StreamStart | Event::DocumentStart | Event::DocumentEnd | Event::Nothing => {}
            Event::StreamEnd => break,
            event if root.is_none() => root = Some(reader.value(event, mark, 0)?),
            _ => return Err(reader.error(mark, "the file holds more than one YAML document")),
        }
    }
    Ok(match root {
        None | Some(Node::Null) => Node::Object(Vec::new()),
        Some(node) => node,
    })
}

struct Reader<'a> {
    parser: Parser<std::str::Chars<'a>>,
    nodes: usize,
    /// Anchored values by anchor id, for aliases.
    anchors: HashMap<usize, Node>,
    source_name: &'a str,
}

impl Reader<'_> {
    fn error(&self, mark: Marker, message: &str) -> ConfigError {
        ConfigError::Syntax {
            source_name: self.source_name.to_owned(),
            line: mark.line().max(1),
            column: mark.col() + 1,
            message: message.to_owned(),
        }
    }

    fn next(&mut self) -> Result<(Event, Marker), ConfigError> {
        match self.parser.next_token() {
            Ok(pair) => Ok(pair),
            Err(e) => Err(self.error(*e.marker(), e.info())),
        }
    }

    /// Counts `n` more values against the bound.
    fn count(&mut self, n: usize, mark: Marker) -> Result<(), ConfigError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(self.error(mark, &format!("more than {MAX_NODES} values (aliases included)")));
        }
        Ok(())
    }

    /// The value that starts with `event`.
    fn value(&mut self, event: Event, mark: Marker, depth: usize) -> Result<Node, ConfigError> {
        if depth > MAX_DEPTH {
            return Err(self.error(mark, &format!("nested deeper than {MAX_DEPTH} levels")));
        }
        let (node, anchor) = match event {
            Event::Alias(id) => {
                let Some(node) = self.anchors.get(&id).cloned() else {
                    return Err(self.error(mark, "an alias to an unknown anchor"));
                };
                self.count(size(&node), mark)?;
                return Ok(node);
            }
            Event::Scalar(text, style, anchor, tag) => {
                self.count(1, mark)?;
                (scalar(text, style, tag.is_some()), anchor)
            }
            Event::SequenceStart(anchor, _) => {
                self.count(1, mark)?;
                let mut items = Vec::new();
                loop {
                    let (event, mark) = self.next()?;
                    match event {
                        Event::SequenceEnd => break,
                        event => items.push(self.value(event, mark, depth + 1)?),
                    }
                }
                (Node::Array(items), anchor)
            }
            Event::MappingStart(anchor, _) => {
                self.count(1, mark)?;
                let mut members = Vec::new();
                loop {
                    let (event, mark) = self.next()?;
                    let key = match event {
                        Event::MappingEnd => break,
                        Event::Scalar(key, ..) => {
                            self.count(1, mark)?;
                            key
                        }
                        _ => return Err(self.error(mark, "a mapping key is not a plain string")),
                    };
                    let (event, mark) = self.next()?;
                    members.push((key, self.value(event, mark, depth + 1)?));
                }
                (Node::Object(members), anchor)
            }
            _ => return Err(self.error(mark, "the document ends inside a value")),
        };
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        Ok(node)
    }
}

/// How many values a tree holds (what copying it by an alias costs).
fn size(node: &Node) -> usize {
    match node {
        Node::Array(items) => 1 + items.iter().map(size).sum::<usize>(),
        Node::Object(members) => 1 + members.iter().map(|(_, v)| 1 + size(v)).sum::<usize>(),
        _ => 1,
    }
}

/// A scalar typed as YAML 1.2's core schema types a plain one (null, boolean, integer, float,
/// string); a quoted, block or tagged scalar stays a string.
fn scalar(text: String, style: TScalarStyle, tagged: bool) -> Node {
    if style != TScalarStyle::Plain || tagged {
        return Node::String(text);
    }
    match Yaml::from_str(&text) {
        Yaml::Null => Node::Null,
        Yaml::Boolean(b) => Node::Bool(b),
        Yaml::Integer(i) => Node::Int(i),
        Yaml::Real(r) => r.parse::<f64>().map_or(Node::String(text), Node::Float),
        _ => Node::String(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(members: &[(&str, Node)]) -> Node {
        Node::Object(members.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect())
    }

    #[test]
    fn scalars_are_typed_like_yaml() {
        let node = parse("a: 1\nb: true\nc: ~\nd: '1'\ne: 1.5\nf: text\ng: [x, 2]\n", "t.yaml").unwrap();
        assert_eq!(
            node,
            obj(&[
                ("a", Node::Int(1)),
                ("b", Node::Bool(true)),
                ("c", Node::Null),
                ("d", Node::String("1".into())),
                ("e", Node::Float(1.5)),
                ("f", Node::String("text".into())),
                ("g", Node::Array(vec![Node::String("x".into()), Node::Int(2)])),
            ])
        );
        assert_eq!(parse("", "t.yaml").unwrap(), Node::Object(Vec::new()));
        assert_eq!(parse("# only a comment\n", "t.yaml").unwrap(), Node::Object(Vec::new()));
    }

    #[test]
    fn aliases_copy_their_anchor_and_repeated_keys_are_kept() {
        let node = parse("base: &b {x: 1}\nother: *b\nbase: 2\n", "t.yaml").unwrap();
        let members = node.as_object().unwrap();
        assert_eq!(members.len(), 3);
        assert_eq!(members[1].1, obj(&[("x", Node::Int(1))]));
    }

    #[test]
    fn billion_laughs_stops_at_the_bound() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (i, name) in ["b", "c", "d", "e", "f", "g", "h"].iter().enumerate() {
            let prev = ["a", "b", "c", "d", "e", "f", "g"][i];
            text.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        let err = parse(&text, "bomb.yaml").unwrap_err().to_string();
        assert!(err.contains("bomb.yaml") && err.contains("more than 200000 values"), "{err}");
    }

    #[test]
    fn bad_yaml_names_file_line_and_column() {
        let err = parse("a: [1, 2\nb: 3\n", "cfg.yaml").unwrap_err();
        let ConfigError::Syntax { source_name, line, .. } = &err else { panic!("{err}") };
        assert_eq!(source_name, "cfg.yaml");
        assert!(*line >= 1, "{err}");
        let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        assert!(parse(&deep, "d.yaml").unwrap_err().to_string().contains("nested deeper than 64"));
        let err = parse("? [a, b]\n: 1\n", "k.yaml").unwrap_err().to_string();
        assert!(err.contains("not a plain string"), "{err}");
        let err = parse("a: 1\n---\nb: 2\n", "two.yaml").unwrap_err().to_string();
        assert!(err.contains("more than one YAML document"), "{err}");
    }
}
