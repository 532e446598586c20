//! A `null` for an optional argument that cannot be `null` means "left out".
//!
//! A model in OpenAI's strict mode must send every property, so it sends `null` for the optional
//! ones it leaves out (the strict schema made them nullable). The tool's own schema usually
//! refuses that `null` (zod's `.optional()`, a plain `"type": "integer"`), so the registry
//! removes such a member before the provider sees the call: the call means what the model meant.
//! A `null` the schema accepts, a required member, and anything the walk cannot decide stay.

use serde_json::{Map, Value};

use super::keywords::{required_of, resolve_local, types_of};

/// How deep the walk follows arguments and references.
const MAX_DEPTH: usize = 32;
/// How many schema nodes one walk looks at.
const MAX_NODES: usize = 10_000;

/// Removes from `arguments` (at any depth reached through `properties` and `items`) each `null`
/// member that is optional and whose schema refuses `null`.
pub(crate) fn drop_refused_nulls(parameters: &Value, arguments: &mut Map<String, Value>) {
    // Most calls hold no `null` at all: then there is nothing to look up in the schema.
    if !arguments.values().any(|member| holds_null(member, 0)) {
        return;
    }
    let mut walk = Walk { root: parameters, budget: MAX_NODES };
    walk.object(parameters, arguments, 0);
}

/// Whether `value` is or may hold a `null` (past the depth the walk follows, the walk decides).
fn holds_null(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    match value {
        Value::Null => true,
        Value::Object(members) => members.values().any(|member| holds_null(member, depth + 1)),
        Value::Array(items) => items.iter().any(|item| holds_null(item, depth + 1)),
        _ => false,
    }
}

struct Walk<'a> {
    root: &'a Value,
    budget: usize,
}

impl<'a> Walk<'a> {
    /// `schema` with its `$ref`s followed (and single-member `allOf`s opened), bounded.
    fn resolve(&mut self, mut schema: &'a Value) -> Option<&'a Map<String, Value>> {
        for _ in 0..MAX_DEPTH {
            if self.budget == 0 {
                return None;
            }
            self.budget -= 1;
            let map = schema.as_object()?;
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                schema = resolve_local(self.root, reference)?;
                continue;
            }
            if let Some([only]) = map.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
                schema = only;
                continue;
            }
            return Some(map);
        }
        None
    }

    fn object(&mut self, schema: &'a Value, value: &mut Map<String, Value>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let Some(schema) = self.resolve(schema) else { return };
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
        let required = required_of(schema);
        value.retain(|name, member| {
            let Some(property) = properties.get(name) else { return true };
            !(member.is_null() && !required.contains(&name.as_str()) && self.refuses_null(property, 0))
        });
        for (name, member) in value.iter_mut() {
            if let Some(property) = properties.get(name) {
                self.value(property, member, depth + 1);
            }
        }
    }

    fn value(&mut self, schema: &'a Value, value: &mut Value, depth: usize) {
        match value {
            Value::Object(members) => self.object(schema, members, depth),
            Value::Array(items) => {
                let Some(item_schema) = self.resolve(schema).and_then(|s| s.get("items")).filter(|i| i.is_object())
                else {
                    return;
                };
                for item in items {
                    self.value(item_schema, item, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// Whether `schema` certainly refuses `null`.
    fn refuses_null(&mut self, schema: &'a Value, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let Some(s) = self.resolve(schema) else { return false };
        if let Some(types) = types_of(s) {
            return !types.contains(&"null");
        }
        if let Some(values) = s.get("enum").and_then(Value::as_array) {
            return !values.contains(&Value::Null);
        }
        if let Some(constant) = s.get("const") {
            return !constant.is_null();
        }
        for union in ["anyOf", "oneOf"] {
            if let Some(branches) = s.get(union).and_then(Value::as_array) {
                return branches.iter().all(|b| self.refuses_null(b, depth + 1));
            }
        }
        if let Some(members) = s.get("allOf").and_then(Value::as_array) {
            return members.iter().any(|m| self.refuses_null(m, depth + 1));
        }
        false
    }
}
