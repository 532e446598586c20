//! Tool arguments from the command line.
//!
//! `key=value` pairs take the type the tool's inputSchema declares for `key`: `integer`,
//! `number`, `boolean` (`true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`), `array` (JSON, or a
//! comma-separated list whose items take the `items` type), `object` (JSON), `null` (`null`) or
//! `string`. A property with several types takes the first that fits, the most specific first. A
//! key the schema does not list is passed as a string, or refused when the schema says
//! `additionalProperties: false`. `key:=JSON` passes JSON as it is, whatever the schema says.
//!
//! `--args` takes a JSON object: inline, `@FILE`, or `-` for stdin. [`build_arguments`] merges it
//! with the pairs (the pairs win) and checks that the schema's required keys are there.
//!
//! Every error names the key, what was expected and what was given.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Number, Value};

/// A JSON object, as tool arguments are.
pub type JsonObject = Map<String, Value>;

/// Largest `--args` document read from a file or stdin.
pub const MAX_ARGS_BYTES: u64 = 16 * 1024 * 1024;

/// Why arguments could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CoerceError {
    /// A pair without `=`.
    #[error("argument {0:?} is not KEY=VALUE")]
    NotAPair(String),
    /// A pair with an empty key.
    #[error("argument {0:?} has an empty key")]
    EmptyKey(String),
    /// The same key twice among the pairs.
    #[error("argument {0:?} is given twice")]
    DuplicateKey(String),
    /// A key the schema does not allow.
    #[error("unknown argument {key:?} (the tool takes: {known})")]
    UnknownKey {
        /// The key.
        key: String,
        /// The keys the schema lists, comma-separated.
        known: String,
    },
    /// A value that does not fit the declared type.
    #[error("argument {key:?} must be {expected}, got {value:?}")]
    WrongType {
        /// The key.
        key: String,
        /// What the schema declares, in words.
        expected: String,
        /// The value given.
        value: String,
    },
    /// JSON that does not parse.
    #[error("{source_name}: JSON does not parse at line {line}, column {column}: {message}")]
    Json {
        /// Where the JSON came from (`--args`, `--args @file.json`, `argument "x"`).
        source_name: String,
        /// Line of the error, from 1.
        line: usize,
        /// Column of the error, from 1.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// `--args` that is JSON but not an object.
    #[error("{source_name} must be a JSON object, got {found}")]
    NotAnObject {
        /// Where the JSON came from.
        source_name: String,
        /// What it was instead (`an array`, `a string`, ...).
        found: &'static str,
    },
    /// A file or stdin that could not be read.
    #[error("{source_name}: {message}")]
    Read {
        /// What was read (`--args @file.json`, `--args -`).
        source_name: String,
        /// The I/O error.
        message: String,
    },
    /// A key the schema requires is missing.
    #[error("missing required argument {key:?} (give it as {key}=VALUE)")]
    MissingRequired {
        /// The key.
        key: String,
    },
}

/// Where `--args` comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgsSource {
    /// Inline JSON text.
    Inline(String),
    /// `@FILE`: a file holding JSON.
    File(PathBuf),
    /// `-`: stdin.
    Stdin,
}

impl ArgsSource {
    /// Read an `--args` value: `-`, `@FILE` or inline JSON.
    pub fn parse(spec: &str) -> ArgsSource {
        match spec {
            "-" => ArgsSource::Stdin,
            _ => match spec.strip_prefix('@') {
                Some(path) => ArgsSource::File(PathBuf::from(path)),
                None => ArgsSource::Inline(spec.to_owned()),
            },
        }
    }

    /// How errors name this source.
    pub fn name(&self) -> String {
        match self {
            ArgsSource::Inline(_) => "--args".into(),
            ArgsSource::File(path) => format!("--args @{}", path.display()),
            ArgsSource::Stdin => "--args - (stdin)".into(),
        }
    }

    /// The JSON object, reading the file or `stdin` as needed (at most [`MAX_ARGS_BYTES`]).
    pub fn load(&self, stdin: impl Read) -> Result<JsonObject, CoerceError> {
        let name = self.name();
        let text = match self {
            ArgsSource::Inline(text) => text.clone(),
            ArgsSource::File(path) => {
                read_bounded(std::fs::File::open(path).map_err(|e| read_error(&name, path, e))?, &name)?
            }
            ArgsSource::Stdin => read_bounded(stdin, &name)?,
        };
        parse_object(&text, &name)
    }
}

fn read_error(name: &str, path: &Path, e: std::io::Error) -> CoerceError {
    let message = match e.kind() {
        std::io::ErrorKind::NotFound => format!("no such file {}", path.display()),
        _ => format!("cannot read {}: {e}", path.display()),
    };
    CoerceError::Read { source_name: name.to_owned(), message }
}

fn read_bounded(input: impl Read, name: &str) -> Result<String, CoerceError> {
    let mut bytes = Vec::new();
    let read = input.take(MAX_ARGS_BYTES + 1).read_to_end(&mut bytes);
    read.map_err(|e| CoerceError::Read { source_name: name.to_owned(), message: e.to_string() })?;
    if bytes.len() as u64 > MAX_ARGS_BYTES {
        return Err(CoerceError::Read {
            source_name: name.to_owned(),
            message: format!("longer than the limit of {MAX_ARGS_BYTES} bytes"),
        });
    }
    String::from_utf8(bytes).map_err(|e| CoerceError::Read {
        source_name: name.to_owned(),
        message: format!("not UTF-8 text (first bad byte at offset {})", e.utf8_error().valid_up_to()),
    })
}

fn parse_json(text: &str, source_name: &str) -> Result<Value, CoerceError> {
    serde_json::from_str(text).map_err(|e| CoerceError::Json {
        source_name: source_name.to_owned(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })
}

/// serde_json's message without its trailing " at line L column C".
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

fn parse_object(text: &str, source_name: &str) -> Result<JsonObject, CoerceError> {
    match parse_json(text, source_name)? {
        Value::Object(map) => Ok(map),
        other => Err(CoerceError::NotAnObject { source_name: source_name.to_owned(), found: kind(&other) }),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One `KEY=VALUE` (or `KEY:=JSON`) pair, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// The key.
    pub key: String,
    /// The text after `=`.
    pub value: String,
    /// Whether it was `KEY:=JSON`.
    pub raw_json: bool,
}

/// Split `KEY=VALUE` pairs, refusing a pair without `=`, an empty key and a repeated key.
pub fn parse_pairs(pairs: &[String]) -> Result<Vec<Pair>, CoerceError> {
    let mut out: Vec<Pair> = Vec::with_capacity(pairs.len());
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(CoerceError::NotAPair(pair.clone()));
        };
        let (key, raw_json) = match key.strip_suffix(':') {
            Some(k) => (k, true),
            None => (key, false),
        };
        if key.is_empty() {
            return Err(CoerceError::EmptyKey(pair.clone()));
        }
        if out.iter().any(|p| p.key == key) {
            return Err(CoerceError::DuplicateKey(key.to_owned()));
        }
        out.push(Pair { key: key.to_owned(), value: value.to_owned(), raw_json });
    }
    Ok(out)
}

/// The pairs as a JSON object, typed by `schema` (a tool's inputSchema).
pub fn coerce_pairs(pairs: &[String], schema: &JsonObject) -> Result<JsonObject, CoerceError> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    let mut out = JsonObject::new();
    for pair in parse_pairs(pairs)? {
        let property = properties.and_then(|p| p.get(&pair.key));
        if property.is_none() && closed {
            let known: Vec<&str> = properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
            let known = if known.is_empty() { "no arguments".to_owned() } else { known.join(", ") };
            return Err(CoerceError::UnknownKey { key: pair.key, known });
        }
        let value = if pair.raw_json {
            parse_json(&pair.value, &format!("argument {:?}", pair.key))?
        } else {
            coerce_value(&pair.key, &pair.value, property)?
        };
        out.insert(pair.key, value);
    }
    Ok(out)
}

/// The JSON types a property schema allows, in the order they are tried.
fn declared_types(schema: &Value) -> Vec<&str> {
    let mut types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = schema.get(key) {
            for option in options {
                types.extend(declared_types(option));
            }
        }
    }
    const ORDER: [&str; 7] = ["null", "boolean", "integer", "number", "array", "object", "string"];
    let mut ordered: Vec<&str> = ORDER.iter().copied().filter(|t| types.contains(t)).collect();
    ordered.dedup();
    ordered
}

fn expected_words(types: &[&str]) -> String {
    let words: Vec<&str> = types
        .iter()
        .map(|t| match *t {
            "integer" => "an integer",
            "number" => "a number",
            "boolean" => "a boolean (true or false)",
            "array" => "an array (JSON, or a comma-separated list)",
            "object" => "a JSON object",
            "null" => "null",
            _ => "a string",
        })
        .collect();
    words.join(" or ")
}

/// One value typed by its property schema (`None`: not in the schema, so a string).
pub fn coerce_value(key: &str, raw: &str, property: Option<&Value>) -> Result<Value, CoerceError> {
    let Some(property) = property else { return Ok(Value::String(raw.to_owned())) };
    let types = declared_types(property);
    if types.is_empty() {
        return Ok(untyped(raw, property));
    }
    for t in &types {
        if let Some(value) = try_type(t, raw, property) {
            return Ok(value);
        }
    }
    Err(CoerceError::WrongType { key: key.to_owned(), expected: expected_words(&types), value: raw.to_owned() })
}

/// A value for a property without a type: a JSON value among its `enum` or `const`, else the
/// text as a string.
fn untyped(raw: &str, property: &Value) -> Value {
    let mut allowed: Vec<&Value> =
        property.get("enum").and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default();
    allowed.extend(property.get("const"));
    if let Ok(parsed) = serde_json::from_str::<Value>(raw)
        && allowed.contains(&&parsed)
    {
        return parsed;
    }
    Value::String(raw.to_owned())
}

fn try_type(t: &str, raw: &str, property: &Value) -> Option<Value> {
    let text = raw.trim();
    match t {
        "null" => (text == "null").then_some(Value::Null),
        "boolean" => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(Value::Bool(true)),
            "false" | "no" | "off" | "0" => Some(Value::Bool(false)),
            _ => None,
        },
        "integer" => integer(text),
        "number" => integer(text).or_else(|| {
            let n: f64 = text.parse().ok().filter(|n: &f64| n.is_finite())?;
            Number::from_f64(n).map(Value::Number)
        }),
        "array" => array(text, property),
        "object" => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => Some(Value::Object(map)),
            _ => None,
        },
        _ => Some(Value::String(raw.to_owned())),
    }
}

fn integer(text: &str) -> Option<Value> {
    if let Ok(n) = text.parse::<i64>() {
        return Some(Value::from(n));
    }
    text.parse::<u64>().ok().map(Value::from)
}

/// A JSON array, or a comma-separated list whose items take the type of `items`.
fn array(text: &str, property: &Value) -> Option<Value> {
    if text.starts_with('[') {
        return match serde_json::from_str(text) {
            Ok(Value::Array(items)) => Some(Value::Array(items)),
            _ => None,
        };
    }
    if text.is_empty() {
        return Some(Value::Array(Vec::new()));
    }
    let items = property.get("items");
    text.split(',')
        .map(|item| match items {
            Some(schema) if !declared_types(schema).is_empty() => {
                declared_types(schema).iter().find_map(|t| try_type(t, item.trim(), schema))
            }
            _ => Some(Value::String(item.trim().to_owned())),
        })
        .collect::<Option<Vec<_>>>()
        .map(Value::Array)
}

/// Check that every key `schema` requires is in `arguments`.
pub fn check_required(arguments: &JsonObject, schema: &JsonObject) -> Result<(), CoerceError> {
    let required = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    for key in required {
        if !arguments.contains_key(key) {
            return Err(CoerceError::MissingRequired { key: key.to_owned() });
        }
    }
    Ok(())
}

/// The arguments of `mcp call`: `--args` (if given) with the pairs on top, typed by `schema`,
/// with the required keys checked. `stdin` is read only for `--args -`.
pub fn build_arguments(
    args: Option<&str>,
    pairs: &[String],
    schema: &JsonObject,
    stdin: impl Read,
) -> Result<JsonObject, CoerceError> {
    let mut arguments = match args {
        Some(spec) => ArgsSource::parse(spec).load(stdin)?,
        None => JsonObject::new(),
    };
    arguments.extend(coerce_pairs(pairs, schema)?);
    check_required(&arguments, schema)?;
    Ok(arguments)
}

/// Prompt arguments: `KEY=VALUE` pairs as strings (prompt arguments are strings).
pub fn string_pairs(pairs: &[String]) -> Result<std::collections::BTreeMap<String, String>, CoerceError> {
    Ok(parse_pairs(pairs)?.into_iter().map(|p| (p.key, p.value)).collect())
}

#[cfg(test)]
mod tests;
