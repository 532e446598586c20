//! One document tree for JSON and TOML, and a reader that takes typed fields out of an object
//! while collecting every problem (unknown keys, duplicate keys, wrong types).
//!
//! Objects keep their members in file order and keep duplicates, so that a server written twice
//! in a JSON object is reported instead of silently replaced.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A parsed JSON or TOML value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
    /// A TOML date or time.
    Datetime,
}

impl Node {
    /// What the value is, for messages ("a string", "an array").
    pub fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Int(_) | Node::Float(_) => "a number",
            Node::String(_) => "a string",
            Node::Array(_) => "an array",
            Node::Object(_) => "an object",
            Node::Datetime => "a date-time",
        }
    }

    /// The members of an object.
    pub fn as_object(&self) -> Option<&[(String, Node)]> {
        match self {
            Node::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The last member named `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_object()?.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// A TOML document as a tree.
    pub fn from_toml(table: toml::Table) -> Node {
        Node::Object(table.into_iter().map(|(k, v)| (k, Node::from_toml_value(v))).collect())
    }

    fn from_toml_value(value: toml::Value) -> Node {
        match value {
            toml::Value::String(s) => Node::String(s),
            toml::Value::Integer(i) => Node::Int(i),
            toml::Value::Float(f) => Node::Float(f),
            toml::Value::Boolean(b) => Node::Bool(b),
            toml::Value::Datetime(_) => Node::Datetime,
            toml::Value::Array(items) => Node::Array(items.into_iter().map(Node::from_toml_value).collect()),
            toml::Value::Table(table) => Node::from_toml(table),
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(i64::try_from(v).map_or(Node::Float(v as f64), Node::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Node>()? {
            members.push((key, value));
        }
        Ok(Node::Object(members))
    }
}

/// A field's value with the name problems use for it (`args[1]`, `env.API_KEY`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Text {
    pub field: String,
    pub value: String,
}

/// A `name = value` member of a string map (`env`, `headers`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pair {
    pub key: String,
    pub field: String,
    pub value: String,
}

/// A problem before the server it belongs to is known: field and message.
pub(crate) type FieldProblem = (String, String);

/// Takes typed fields out of one object. Field names in problems are `prefix` + key.
pub(crate) struct ObjectReader<'a> {
    members: &'a [(String, Node)],
    prefix: String,
    pub problems: Vec<FieldProblem>,
    /// What was read leniently: unknown keys of a host's own format, ignored.
    pub notes: Vec<FieldProblem>,
}

impl<'a> ObjectReader<'a> {
    /// A reader over `members`, naming fields `prefix` + key.
    pub fn new(members: &'a [(String, Node)], prefix: impl Into<String>) -> Self {
        ObjectReader { members, prefix: prefix.into(), problems: Vec::new(), notes: Vec::new() }
    }

    /// Reports every key not in `known`, and every key written twice.
    pub fn check_keys(&mut self, known: &[&str]) {
        self.check_keys_as(known, false);
    }

    /// [`check_keys`](Self::check_keys), where `lenient` turns an unknown key into a note: a
    /// host's own format (goose, Zed, Claude Code) has keys of its own, which are ignored.
    pub fn check_keys_as(&mut self, known: &[&str], lenient: bool) {
        for (i, (key, _)) in self.members.iter().enumerate() {
            if self.members[..i].iter().any(|(k, _)| k == key) {
                self.problem(key, "written more than once");
            } else if lenient && !known.contains(&key.as_str()) {
                self.notes.push((self.field(key), "ignored (not a setting mcp reads)".to_owned()));
            } else if !known.contains(&key.as_str()) {
                let message = match suggest(key, known) {
                    Some(near) => format!("unknown key (did you mean {near:?}?)"),
                    None => format!("unknown key (known keys: {})", known.join(", ")),
                };
                self.problem(key, message);
            }
        }
    }

    /// Whether `key` is present with something in it: not null, not `[]`, not `{}`.
    pub fn has_content(&self, key: &str) -> bool {
        match self.get(key) {
            None => false,
            Some(Node::Array(items)) => !items.is_empty(),
            Some(Node::Object(members)) => !members.is_empty(),
            Some(_) => true,
        }
    }

    /// The value of `key`; null counts as absent.
    pub fn get(&self, key: &str) -> Option<&'a Node> {
        self.members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v).filter(|v| **v != Node::Null)
    }

    /// The field name problems use for `key`.
    pub fn field(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// Records a problem with `key`.
    pub fn problem(&mut self, key: &str, message: impl Into<String>) {
        self.problems.push((self.field(key), message.into()));
    }

    fn wrong_type(&mut self, field: String, expected: &str, found: &Node) {
        self.problems.push((field, format!("expected {expected}, found {}", found.kind())));
    }

    /// A string.
    pub fn string(&mut self, key: &str) -> Option<Text> {
        let node = self.get(key)?;
        match node {
            Node::String(s) => Some(Text { field: self.field(key), value: s.clone() }),
            other => {
                self.wrong_type(self.field(key), "a string", other);
                None
            }
        }
    }

    /// A boolean.
    pub fn bool(&mut self, key: &str) -> Option<bool> {
        match self.get(key)? {
            Node::Bool(b) => Some(*b),
            other => {
                self.wrong_type(self.field(key), "true or false", other);
                None
            }
        }
    }

    /// An array of strings; each element is named `key[i]`.
    pub fn strings(&mut self, key: &str) -> Option<Vec<Text>> {
        let node = self.get(key)?;
        let Node::Array(items) = node else {
            self.wrong_type(self.field(key), "an array of strings", node);
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let field = format!("{}[{i}]", self.field(key));
            match item {
                Node::String(s) => out.push(Text { field, value: s.clone() }),
                other => self.wrong_type(field, "a string", other),
            }
        }
        Some(out)
    }

    /// An object of strings; each member is named `key.name`.
    pub fn string_map(&mut self, key: &str) -> Option<Vec<Pair>> {
        let node = self.get(key)?;
        let Node::Object(members) = node else {
            self.wrong_type(self.field(key), "an object of strings", node);
            return None;
        };
        let mut out: Vec<Pair> = Vec::with_capacity(members.len());
        for (name, value) in members {
            let field = format!("{}.{name}", self.field(key));
            if out.iter().any(|p| &p.key == name) {
                self.problems.push((field, "written more than once".to_owned()));
                continue;
            }
            match value {
                Node::String(s) => out.push(Pair { key: name.clone(), field, value: s.clone() }),
                other => self.wrong_type(field, "a string", other),
            }
        }
        Some(out)
    }

    /// A number of seconds, as written (validated later).
    pub fn number(&mut self, key: &str) -> Option<f64> {
        match self.get(key)? {
            Node::Int(i) => Some(*i as f64),
            Node::Float(f) => Some(*f),
            other => {
                self.wrong_type(self.field(key), "a number", other);
                None
            }
        }
    }

    /// A whole number from 1 to `u32::MAX`.
    pub fn positive_u32(&mut self, key: &str) -> Option<u32> {
        match self.get(key)? {
            Node::Int(i) if *i >= 1 => match u32::try_from(*i) {
                Ok(n) => Some(n),
                Err(_) => {
                    self.problem(key, format!("too large (at most {})", u32::MAX));
                    None
                }
            },
            Node::Int(_) => {
                self.problem(key, "must be a positive whole number");
                None
            }
            other => {
                self.wrong_type(self.field(key), "a whole number", other);
                None
            }
        }
    }

    /// A string turned into a `T` by `parse`; a parse failure's message is the problem.
    pub fn parsed<T>(&mut self, key: &str, parse: impl FnOnce(&str) -> Result<T, String>) -> Option<T> {
        let text = self.string(key)?;
        match parse(&text.value) {
            Ok(value) => Some(value),
            Err(message) => {
                self.problems.push((text.field, message));
                None
            }
        }
    }

    /// The members of an object under `key`.
    pub fn object(&mut self, key: &str) -> Option<&'a [(String, Node)]> {
        match self.get(key)? {
            Node::Object(members) => Some(members),
            other => {
                self.wrong_type(self.field(key), "a table or object", other);
                None
            }
        }
    }
}

/// The known key closest to a misspelt one, when it is close enough to be a typo.
fn suggest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let key = key.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (edit_distance(&key, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance over characters; keys are short, so the quadratic cost is nothing.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let known = ["command", "args", "env", "cwd", "url", "headers"];
        assert_eq!(suggest("comand", &known), Some("command"));
        assert_eq!(suggest("header", &known), Some("headers"));
        assert_eq!(suggest("Args", &known), Some("args"));
        assert_eq!(suggest("timeout", &known), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
