//! Where a JSON Schema keeps its subschemas, local `$ref` resolution, and the cleaning every LLM
//! definition gets ([`clean_schema`]).
//!
//! Only keyword positions are touched: the members of `properties` (and the other maps of
//! subschemas) are names the tool chose, so a property *named* `$schema` stays; `enum`, `const`,
//! `default` and `examples` hold data and are copied as they are.

use serde_json::{Map, Value};

/// How deep [`clean_schema`] follows subschemas; deeper parts are copied as they are.
pub const MAX_CLEAN_DEPTH: usize = 64;
/// How many subschemas [`clean_schema`] rewrites; the rest are copied as they are.
pub const MAX_CLEAN_NODES: usize = 20_000;

/// What the value of a keyword is, in schema terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// One subschema (`not`, `additionalProperties`, ...).
    One,
    /// A list of subschemas (`anyOf`, `prefixItems`, ...).
    List,
    /// `items`: one subschema, or a list of them (draft 7 tuples).
    OneOrList,
    /// Names to subschemas (`properties`, `$defs`, ...).
    Map,
    /// `dependencies`: names to a subschema or to a list of names.
    Dependencies,
    /// Anything else: data or an annotation.
    Data,
}

/// The slot of `keyword`.
pub(crate) fn slot(keyword: &str) -> Slot {
    match keyword {
        "additionalProperties"
        | "unevaluatedProperties"
        | "additionalItems"
        | "unevaluatedItems"
        | "contains"
        | "propertyNames"
        | "not"
        | "if"
        | "then"
        | "else"
        | "contentSchema" => Slot::One,
        "items" => Slot::OneOrList,
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => Slot::List,
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => Slot::Map,
        "dependencies" => Slot::Dependencies,
        _ => Slot::Data,
    }
}

/// `schema` as every LLM definition shows it: `$schema` removed wherever it is a keyword, and
/// the root's `$id` removed (it names the document, which means nothing to a model; a nested
/// `$id` stays, since it can change what a `$ref` inside it points to). Everything else is
/// kept. The walk is bounded by [`MAX_CLEAN_DEPTH`] and [`MAX_CLEAN_NODES`]; beyond them the
/// schema is copied unchanged.
pub fn clean_schema(schema: &Value) -> Value {
    let mut budget = MAX_CLEAN_NODES;
    let mut out = clean_node(schema, 0, &mut budget);
    if let Value::Object(map) = &mut out {
        map.remove("$id");
    }
    out
}

fn clean_node(schema: &Value, depth: usize, budget: &mut usize) -> Value {
    let Value::Object(map) = schema else { return schema.clone() };
    if depth >= MAX_CLEAN_DEPTH || *budget == 0 {
        return schema.clone();
    }
    *budget -= 1;
    let mut out = Map::with_capacity(map.len());
    for (key, value) in map {
        if key == "$schema" {
            continue;
        }
        let mut sub = |v: &Value| clean_node(v, depth + 1, budget);
        let cleaned = match (slot(key), value) {
            (Slot::One | Slot::OneOrList, Value::Object(_)) => sub(value),
            (Slot::List | Slot::OneOrList, Value::Array(items)) => Value::Array(items.iter().map(sub).collect()),
            (Slot::Map | Slot::Dependencies, Value::Object(members)) => {
                Value::Object(members.iter().map(|(name, v)| (name.clone(), sub(v))).collect())
            }
            _ => value.clone(),
        };
        out.insert(key.clone(), cleaned);
    }
    Value::Object(out)
}

/// The subschema a local reference (`#`, `#/$defs/a`, any JSON pointer into `root`) points to;
/// `None` for a reference to another document or a pointer that leads nowhere.
pub(crate) fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    if !pointer.starts_with('/') {
        return None;
    }
    let mut node = root;
    for token in pointer[1..].split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(map) => map.get(&token)?,
            Value::Array(items) => items.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// The `type` keyword as a list of type names: `None` when absent or malformed.
pub(crate) fn types_of(schema: &Map<String, Value>) -> Option<Vec<&str>> {
    match schema.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(items) => items.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

/// The names listed in `required` (non-strings ignored).
pub(crate) fn required_of(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_keyword_positions_lose_schema() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "urn:x",
            "type": "object",
            "properties": {
                "$schema": {"type": "string", "$schema": "x"},
                "list": {"type": "array", "items": {"$schema": "x", "$id": "urn:y"}}
            },
            "enum": [{"$schema": "data"}],
            "anyOf": [{"$schema": "x"}]
        });
        let cleaned = clean_schema(&schema);
        assert_eq!(
            cleaned,
            json!({
                "type": "object",
                "properties": {
                    "$schema": {"type": "string"},
                    "list": {"type": "array", "items": {"$id": "urn:y"}}
                },
                "enum": [{"$schema": "data"}],
                "anyOf": [{}]
            })
        );
    }

    #[test]
    fn local_pointers_resolve_with_escapes() {
        let root = json!({"$defs": {"a/b": {"type": "string"}, "c~d": [1, {"x": 2}]}});
        assert_eq!(resolve_local(&root, "#/$defs/a~1b"), Some(&json!({"type": "string"})));
        assert_eq!(resolve_local(&root, "#/$defs/c~0d/1/x"), Some(&json!(2)));
        assert_eq!(resolve_local(&root, "#"), Some(&root));
        assert_eq!(resolve_local(&root, "other.json#/x"), None);
        assert_eq!(resolve_local(&root, "#/$defs/missing"), None);
        assert_eq!(resolve_local(&root, "#anchor"), None);
    }
}
