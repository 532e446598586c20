//! Gemini's function declarations: the subset of the OpenAPI 3.0 schema object Gemini accepts.
//!
//! Kept: `type` (one name), `format` (`enum` and `date-time` on strings, `float` and `double`
//! on numbers, `int32` and `int64` on integers), `description`, `nullable`, `enum` (strings
//! only), `properties`, `required`, `items`, `minItems`, `maxItems`, `minProperties`,
//! `maxProperties`, `minLength`, `maxLength`, `pattern`, `minimum`, `maximum` and `anyOf`. The
//! rest is rewritten or dropped:
//!
//! - local `$ref`s are inlined (at most [`MAX_GEMINI_DEPTH`] levels and [`MAX_GEMINI_NODES`]
//!   nodes in all); a reference to a schema it is already inside is cut (an empty schema with a
//!   description saying so), so a cycle never loops; `$defs` go;
//! - `["string", "null"]` becomes `string` with `nullable: true`; several types become `anyOf`;
//! - `const` becomes a one-value `enum` (or a description, when not a string), a non-string
//!   `enum` a description, `oneOf` becomes `anyOf` and `allOf` is merged into one schema;
//! - `title` becomes the description when there is none; `additionalProperties`, `not`,
//!   conditionals, `default`, `examples` and the like are dropped;
//! - `required` keeps only names that are in `properties`, and an object without properties
//!   has neither.
//!
//! Dropping narrows nothing the tool accepts: the server still checks the arguments.

use serde_json::{Map, Value};

use super::keywords::{required_of, resolve_local, types_of};

/// How deep the rewrite follows subschemas and inlined references.
pub const MAX_GEMINI_DEPTH: usize = 32;
/// How many schema nodes one rewritten schema may have.
pub const MAX_GEMINI_NODES: usize = 10_000;
/// How many values of a non-string `enum` are listed in the description.
const MAX_LISTED_VALUES: usize = 32;

/// `schema` (whose local references resolve against `root`) in Gemini's subset.
pub(crate) fn to_gemini(schema: &Value, root: &Value) -> Value {
    Gemini { root, stack: Vec::new(), budget: MAX_GEMINI_NODES }.node(schema, 0)
}

struct Gemini<'a> {
    root: &'a Value,
    /// The references being inlined, outermost first.
    stack: Vec<&'a str>,
    budget: usize,
}

fn described(text: String) -> Value {
    Value::Object(Map::from_iter([("description".to_owned(), Value::String(text))]))
}

impl<'a> Gemini<'a> {
    fn node(&mut self, schema: &'a Value, depth: usize) -> Value {
        let Value::Object(s) = schema else { return Value::Object(Map::new()) };
        if depth > MAX_GEMINI_DEPTH || self.budget == 0 {
            return described("(schema cut: too deep or too large)".into());
        }
        self.budget -= 1;
        if let Some(Value::String(reference)) = s.get("$ref") {
            return self.reference(s, reference, depth);
        }
        if let Some(Value::Array(members)) = s.get("allOf") {
            let mut merged = self.plain(s, depth);
            for member in members {
                let member = self.node(member, depth + 1);
                merge(&mut merged, member);
            }
            return merged;
        }
        let branches = ["anyOf", "oneOf"].iter().find_map(|k| s.get(*k).and_then(Value::as_array));
        if let Some(branches) = branches {
            let base = self.plain(s, depth);
            return self.union(base, branches, depth);
        }
        self.plain(s, depth)
    }

    fn reference(&mut self, s: &'a Map<String, Value>, reference: &'a str, depth: usize) -> Value {
        let mut out = if self.stack.contains(&reference) {
            described(format!("(a recursive reference to {reference:.80}, cut here)"))
        } else if let Some(target) = resolve_local(self.root, reference) {
            self.stack.push(reference);
            let out = self.node(target, depth + 1);
            self.stack.pop();
            out
        } else {
            Value::Object(Map::new())
        };
        // The reference's own description says more than the target's.
        if let (Value::Object(out), Some(Value::String(text))) = (&mut out, s.get("description")) {
            out.insert("description".into(), Value::String(text.clone()));
        }
        out
    }

    /// `anyOf` of `branches`, with `base` (the schema's other keywords) merged into each; a
    /// `null` branch becomes `nullable`, and a single branch (or several equal ones) stands
    /// alone.
    fn union(&mut self, base: Value, branches: &'a [Value], depth: usize) -> Value {
        let Value::Object(mut base) = base else { return base };
        let description = base.remove("description");
        let mut nullable = base.remove("nullable").is_some();
        let mut converted: Vec<Value> = Vec::new();
        for branch in branches {
            if branch.as_object().and_then(types_of).is_some_and(|types| types == ["null"]) {
                nullable = true;
                continue;
            }
            let mut branch = self.node(branch, depth + 1);
            nullable |= branch.as_object_mut().and_then(|b| b.remove("nullable")).is_some();
            merge(&mut branch, Value::Object(base.clone()));
            if !converted.contains(&branch) {
                converted.push(branch);
            }
        }
        let mut out = match converted.len() {
            0 => base,
            1 => match converted.pop() {
                Some(Value::Object(one)) => one,
                _ => Map::new(),
            },
            _ => Map::from_iter([("anyOf".to_owned(), Value::Array(converted))]),
        };
        if let Some(description) = description {
            out.insert("description".into(), description);
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        Value::Object(out)
    }

    /// The schema's own keywords (no `$ref`, `allOf`, `anyOf` or `oneOf`), rewritten.
    fn plain(&mut self, s: &'a Map<String, Value>, depth: usize) -> Value {
        let mut out = Map::new();
        let mut notes = Vec::new();
        let mut nullable = false;
        let mut types: Vec<&str> = types_of(s).unwrap_or_default();
        if types.contains(&"null") {
            nullable = true;
            types.retain(|t| *t != "null");
        }
        if types.is_empty() {
            if s.contains_key("properties") {
                types.push("object");
            } else if s.contains_key("items") {
                types.push("array");
            }
        }
        if let Some(values) = s.get("enum").and_then(Value::as_array) {
            nullable |= values.contains(&Value::Null);
            let values: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
            if values.iter().all(|v| v.is_string()) && !values.is_empty() {
                out.insert("enum".into(), Value::Array(values.into_iter().cloned().collect()));
            } else if !values.is_empty() {
                let listed: Vec<String> = values.iter().take(MAX_LISTED_VALUES).map(|v| v.to_string()).collect();
                let more = if values.len() > MAX_LISTED_VALUES { ", ..." } else { "" };
                notes.push(format!("One of: {}{more}.", listed.join(", ")));
            }
        }
        match s.get("const") {
            Some(Value::Null) => nullable = true,
            Some(Value::String(c)) => {
                out.insert("enum".into(), Value::Array(vec![Value::String(c.clone())]));
            }
            Some(other) => notes.push(format!("Must be {other}.")),
            None => {}
        }
        let description = match (s.get("description"), s.get("title")) {
            (Some(Value::String(d)), _) | (None, Some(Value::String(d))) => Some(d.clone()),
            _ => None,
        };
        let description = match (description, notes.is_empty()) {
            (d, true) => d,
            (Some(d), false) => Some(format!("{d} {}", notes.join(" "))),
            (None, false) => Some(notes.join(" ")),
        };
        if let Some(description) = description {
            out.insert("description".into(), Value::String(description));
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        if types.is_empty() && out.contains_key("enum") {
            // Gemini's enums are strings' enums.
            types.push("string");
        }
        match types.as_slice() {
            [] => {}
            [one] => self.typed(s, one, depth, &mut out),
            several => {
                let mut branches = Vec::with_capacity(several.len());
                for ty in several {
                    let mut branch = Map::new();
                    if *ty == "string"
                        && let Some(values) = out.get("enum")
                    {
                        branch.insert("enum".into(), values.clone());
                    }
                    self.typed(s, ty, depth, &mut branch);
                    branches.push(Value::Object(branch));
                }
                out.remove("enum");
                out.insert("anyOf".into(), Value::Array(branches));
            }
        }
        Value::Object(out)
    }

    /// Sets `type` and the keywords of that type.
    fn typed(&mut self, s: &'a Map<String, Value>, ty: &str, depth: usize, out: &mut Map<String, Value>) {
        let copy = |keys: &[&str], out: &mut Map<String, Value>| {
            for key in keys {
                if let Some(value @ Value::Number(_)) = s.get(*key) {
                    out.insert((*key).to_owned(), value.clone());
                }
            }
        };
        let format = s.get("format").and_then(Value::as_str);
        let keep_format = |allowed: &[&str], out: &mut Map<String, Value>| {
            if let Some(format) = format.filter(|f| allowed.contains(f)) {
                out.insert("format".into(), Value::String(format.to_owned()));
            }
        };
        match ty {
            "string" => {
                keep_format(&["enum", "date-time"], out);
                copy(&["minLength", "maxLength"], out);
                if let Some(Value::String(pattern)) = s.get("pattern") {
                    out.insert("pattern".into(), Value::String(pattern.clone()));
                }
            }
            "number" | "integer" => {
                keep_format(if ty == "number" { &["float", "double"] } else { &["int32", "int64"] }, out);
                copy(&["minimum", "maximum"], out);
                // Draft 6 exclusive bounds, as inclusive ones (a little wider, never narrower).
                for (exclusive, inclusive) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
                    if let Some(value @ Value::Number(_)) = s.get(exclusive) {
                        out.entry(inclusive).or_insert_with(|| value.clone());
                    }
                }
            }
            "array" => {
                copy(&["minItems", "maxItems"], out);
                let items = match s.get("items").or_else(|| s.get("prefixItems")) {
                    Some(items @ Value::Object(_)) => self.node(items, depth + 1),
                    // A tuple: each position's schema is one of the choices.
                    Some(Value::Array(positions)) => self.union(Value::Object(Map::new()), positions, depth),
                    _ => Value::Object(Map::new()),
                };
                out.insert("items".into(), items);
            }
            "object" => {
                copy(&["minProperties", "maxProperties"], out);
                if let Some(Value::Object(properties)) = s.get("properties")
                    && !properties.is_empty()
                {
                    let converted: Map<String, Value> =
                        properties.iter().map(|(name, p)| (name.clone(), self.node(p, depth + 1))).collect();
                    let required: Vec<Value> = required_of(s)
                        .into_iter()
                        .filter(|name| converted.contains_key(*name))
                        .map(|name| Value::String(name.to_owned()))
                        .collect();
                    out.insert("properties".into(), Value::Object(converted));
                    if !required.is_empty() {
                        out.insert("required".into(), Value::Array(required));
                    }
                }
            }
            "boolean" => {}
            _ => return,
        }
        out.insert("type".into(), Value::String(ty.to_owned()));
    }
}

/// `extra` merged into `into` (both rewritten schemas): properties and required are united,
/// any other keyword keeps the first value.
pub(crate) fn merge(into: &mut Value, extra: Value) {
    let (Value::Object(into), Value::Object(extra)) = (into, extra) else { return };
    for (key, value) in extra {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (name, schema) in theirs {
                    mine.entry(name).or_insert(schema);
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for name in theirs {
                    if !mine.contains(&name) {
                        mine.push(name);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                into.insert(key, value);
            }
        }
    }
}
