//! OpenAI's strict mode (Structured Outputs for function calling): the subset of JSON Schema a
//! `strict: true` function may use, and the rewrite of a tool's parameters into it.
//!
//! The rules, as OpenAI publishes them: the root is an object (not `anyOf`); every object has
//! `additionalProperties: false` and lists every property in `required` (an optional property
//! becomes required and nullable); the supported keywords are `type`, `description`, `title`,
//! `enum`, `const`, `anyOf`, `$ref` to `$defs` (recursion included), `properties`, `required`,
//! `additionalProperties`, `items`, `minItems`, `maxItems`, `pattern`, a few `format`s,
//! `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` and `multipleOf`; at most 5000
//! properties, 10 levels of nesting, 1000 enum values and 120,000 characters of names and
//! values. Dropping a keyword that only narrows (`minLength`, `default`, ...) keeps every value
//! the tool accepts, so it is done; a construct whose meaning would change (an open object, a
//! tuple, `oneOf`, `not`, a conditional, a value of any type) makes the tool not strict, and its
//! definition falls back to `strict: false` with the ordinary schema rather than claim what it
//! cannot.

use serde_json::{Map, Value};

use super::keywords::{required_of, types_of};

/// The deepest nesting of objects and arrays strict mode accepts.
pub const MAX_STRICT_NESTING: usize = 10;
/// The most object properties one strict schema may have.
pub const MAX_STRICT_PROPERTIES: usize = 5000;
/// The most enum values one strict schema may have.
pub const MAX_STRICT_ENUM_VALUES: usize = 1000;
/// The most characters of property names, definition names, enum and const values.
pub const MAX_STRICT_CHARS: usize = 120_000;

/// The `format`s strict mode accepts on strings.
const FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// Keywords whose meaning strict mode cannot keep.
const REFUSED: &[&str] = &[
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "prefixItems",
    "contains",
    "additionalItems",
    "$defs",
    "definitions",
];

/// Keywords kept as they are, by the type they apply to (`None`: any type).
const KEPT: &[(&str, Option<&str>)] = &[
    ("description", None),
    ("title", None),
    ("enum", None),
    ("const", None),
    ("pattern", Some("string")),
    ("minimum", Some("number")),
    ("maximum", Some("number")),
    ("multipleOf", Some("number")),
    ("minItems", Some("array")),
    ("maxItems", Some("array")),
];

/// `parameters` rewritten for strict mode, or why it cannot be.
pub(crate) fn to_strict(parameters: &Value) -> Result<Value, String> {
    let Value::Object(root) = parameters else { return Err("the parameters are not an object schema".into()) };
    for combinator in ["anyOf", "oneOf", "allOf"] {
        if root.contains_key(combinator) {
            return Err(format!("`{combinator}` at the root"));
        }
    }
    let mut strict = Strict::default();
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        let Some(members) = root.get(key) else { continue };
        let Value::Object(members) = members else { return Err(format!("`{key}` is not an object")) };
        for (name, schema) in members {
            strict.count_chars(name.len())?;
            let converted = strict.node(schema, 1)?;
            if defs.insert(name.clone(), converted).is_some() {
                return Err(format!("definition `{name}` is in both `$defs` and `definitions`"));
            }
        }
    }
    if root.contains_key("$ref") {
        return Err("`$ref` at the root".into());
    }
    let mut bare = root.clone();
    bare.remove("$defs");
    bare.remove("definitions");
    bare.entry("type").or_insert_with(|| Value::String("object".into()));
    if types_of(&bare).as_deref() != Some(&["object"]) {
        return Err("the root is not an object".into());
    }
    let mut out = strict.node(&Value::Object(bare), 0)?;
    if !defs.is_empty()
        && let Value::Object(out) = &mut out
    {
        out.insert("$defs".into(), Value::Object(defs));
    }
    Ok(out)
}

#[derive(Default)]
struct Strict {
    properties: usize,
    enum_values: usize,
    chars: usize,
}

impl Strict {
    fn count_chars(&mut self, n: usize) -> Result<(), String> {
        self.chars += n;
        if self.chars > MAX_STRICT_CHARS {
            return Err(format!("more than {MAX_STRICT_CHARS} characters of names and values"));
        }
        Ok(())
    }

    fn count_values(&mut self, values: &[Value]) -> Result<(), String> {
        self.enum_values += values.len();
        if self.enum_values > MAX_STRICT_ENUM_VALUES {
            return Err(format!("more than {MAX_STRICT_ENUM_VALUES} enum values"));
        }
        for value in values {
            self.count_chars(value.as_str().map_or(0, str::len))?;
        }
        Ok(())
    }

    /// One subschema at `nesting` levels of objects and arrays.
    fn node(&mut self, schema: &Value, nesting: usize) -> Result<Value, String> {
        let Value::Object(s) = schema else { return Err("a boolean schema (any value, or none)".into()) };
        if nesting > MAX_STRICT_NESTING {
            return Err(format!("more than {MAX_STRICT_NESTING} levels of nesting"));
        }
        if let Some(keyword) = REFUSED.iter().find(|k| s.contains_key(**k)) {
            return Err(format!("`{keyword}` is not supported"));
        }
        if let Some(all_of) = s.get("allOf") {
            return self.single_all_of(s, all_of, nesting);
        }
        if let Some(reference) = s.get("$ref") {
            return Ok(Value::Object(Map::from_iter([("$ref".to_owned(), Value::String(local_def(reference)?))])));
        }
        let mut out = Map::new();
        for (key, applies_to) in KEPT {
            let Some(value) = s.get(*key) else { continue };
            if applies_to.is_some_and(|t| !has_type(s, t)) {
                continue;
            }
            match *key {
                "enum" => self.count_values(value.as_array().ok_or("`enum` is not an array")?)?,
                "const" => self.count_values(std::slice::from_ref(value))?,
                _ => {}
            }
            out.insert((*key).to_owned(), value.clone());
        }
        if let Some(Value::String(format)) = s.get("format")
            && has_type(s, "string")
            && FORMATS.contains(&format.as_str())
        {
            out.insert("format".into(), Value::String(format.clone()));
        }
        if has_type(s, "number") {
            for key in ["exclusiveMinimum", "exclusiveMaximum"] {
                // Draft 4 wrote these as booleans; only the numeric form is kept.
                if let Some(value @ Value::Number(_)) = s.get(key) {
                    out.insert(key.to_owned(), value.clone());
                }
            }
        }
        if let Some(branches) = s.get("anyOf") {
            if s.contains_key("type") || s.contains_key("properties") || s.contains_key("items") {
                return Err("`anyOf` beside other constraints".into());
            }
            let branches = branches.as_array().ok_or("`anyOf` is not an array")?;
            let converted = branches.iter().map(|b| self.node(b, nesting)).collect::<Result<Vec<_>, _>>()?;
            out.insert("anyOf".into(), Value::Array(converted));
            return Ok(Value::Object(out));
        }
        let Some(types) = types_of(s) else {
            if s.contains_key("type") {
                return Err("`type` is not a name or a list of names".into());
            }
            if out.contains_key("enum") || out.contains_key("const") {
                return Ok(Value::Object(out));
            }
            return Err("a value of any type".into());
        };
        if let Some(unknown) = types
            .iter()
            .find(|t| !matches!(**t, "string" | "number" | "integer" | "boolean" | "object" | "array" | "null"))
        {
            return Err(format!("unknown type `{unknown}`"));
        }
        out.insert("type".into(), s["type"].clone());
        if types.contains(&"object") {
            self.object(s, nesting, &mut out)?;
        }
        if types.contains(&"array") {
            let items = match s.get("items") {
                Some(items @ Value::Object(_)) => items,
                Some(_) => return Err("a tuple (`items` as a list)".into()),
                None => return Err("an array of any values (no `items`)".into()),
            };
            out.insert("items".into(), self.node(items, nesting + 1)?);
        }
        Ok(Value::Object(out))
    }

    /// A closed object: every property required (optional ones nullable), no others allowed.
    fn object(&mut self, s: &Map<String, Value>, nesting: usize, out: &mut Map<String, Value>) -> Result<(), String> {
        let empty = Map::new();
        let properties = match s.get("properties") {
            None => &empty,
            Some(Value::Object(properties)) => properties,
            Some(_) => return Err("`properties` is not an object".into()),
        };
        match s.get("additionalProperties") {
            None if properties.is_empty() => return Err("a free-form object (no properties)".into()),
            None | Some(Value::Bool(false)) => {}
            Some(_) => return Err("an open object (`additionalProperties`)".into()),
        }
        self.properties += properties.len();
        if self.properties > MAX_STRICT_PROPERTIES {
            return Err(format!("more than {MAX_STRICT_PROPERTIES} properties"));
        }
        let required = required_of(s);
        let mut converted = Map::with_capacity(properties.len());
        for (name, schema) in properties {
            self.count_chars(name.len())?;
            let property = self.node(schema, nesting + 1)?;
            let property = if required.contains(&name.as_str()) { property } else { nullable(property) };
            converted.insert(name.clone(), property);
        }
        let names = converted.keys().map(|name| Value::String(name.clone())).collect();
        out.insert("properties".into(), Value::Object(converted));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
        Ok(())
    }

    /// `allOf` with one member (how generators attach a description to a `$ref`): that member,
    /// with the outer description. Several members cannot be merged faithfully.
    fn single_all_of(&mut self, s: &Map<String, Value>, all_of: &Value, nesting: usize) -> Result<Value, String> {
        let [inner] = all_of.as_array().map(Vec::as_slice).unwrap_or_default() else {
            return Err("`allOf` with several members".into());
        };
        if s.keys().any(|k| !matches!(k.as_str(), "allOf" | "description" | "title" | "default" | "examples")) {
            return Err("`allOf` beside other constraints".into());
        }
        let mut converted = self.node(inner, nesting)?;
        if let (Value::Object(out), Some(description)) = (&mut converted, s.get("description"))
            && !out.contains_key("$ref")
        {
            out.insert("description".into(), description.clone());
        }
        Ok(converted)
    }
}

/// A `$ref` to one of the root's definitions, as strict mode writes it (`#/$defs/NAME`), or to
/// the root itself (`#`).
fn local_def(reference: &Value) -> Result<String, String> {
    let reference = reference.as_str().ok_or("`$ref` is not a string")?;
    if reference == "#" {
        return Ok(reference.to_owned());
    }
    let name = reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
        .filter(|name| !name.is_empty() && !name.contains('/'))
        .ok_or_else(|| format!("a `$ref` that is not to a root definition ({reference:.80})"))?;
    Ok(format!("#/$defs/{name}"))
}

/// Whether `s` admits type `name` (`number` also matches `integer`).
fn has_type(s: &Map<String, Value>, name: &str) -> bool {
    types_of(s).is_some_and(|types| types.iter().any(|t| *t == name || (name == "number" && *t == "integer")))
}

/// `schema` that also accepts `null`: how strict mode writes an optional property.
pub(crate) fn nullable(schema: Value) -> Value {
    let Value::Object(mut s) = schema else { return schema };
    let null = || Value::Object(Map::from_iter([("type".to_owned(), Value::String("null".into()))]));
    let wrap = |s: Map<String, Value>| {
        let mut out = Map::new();
        out.insert("anyOf".into(), Value::Array(vec![Value::Object(s), null()]));
        Value::Object(out)
    };
    if let Some(Value::Array(branches)) = s.get_mut("anyOf") {
        if !branches.iter().any(|b| b.get("type") == Some(&Value::String("null".into()))) {
            branches.push(null());
        }
        return Value::Object(s);
    }
    if s.contains_key("$ref") || s.contains_key("const") {
        return wrap(s);
    }
    match s.get_mut("type") {
        Some(Value::String(t)) if t == "null" => {}
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            s.insert("type".into(), Value::Array(vec![Value::String(t), Value::String("null".into())]));
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(Value::String("null".into()));
            }
        }
        _ => return wrap(s),
    }
    if let Some(Value::Array(values)) = s.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    Value::Object(s)
}
