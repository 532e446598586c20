//! The screening of an untrusted JSON Schema before it is compiled: [`screen_schema`].
//!
//! A server's schema is peer input. Compiling and using it must take memory, stack and time
//! bounded by construction, whatever the server sent, so a schema is refused when:
//!
//! - it nests deeper than [`MAX_SCHEMA_DEPTH`] JSON levels, or holds more than
//!   [`MAX_SCHEMA_VALUES`] JSON values (an `enum` of a million members counts every member), or
//!   more than [`MAX_SCHEMA_TEXT`] bytes of strings and member names;
//! - a `$ref` (or `$dynamicRef`, `$recursiveRef`) chain comes back to where it started without
//!   consuming any part of the instance: through references and the in-place applicators
//!   (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`,
//!   `dependencies`), a validator would apply the schema to the same value for ever;
//! - one schema, unfolded through references and in-place applicators, applies more than
//!   [`MAX_SCHEMA_EXPANSION`] subschemas to one value (a "billion laughs" of `allOf`s that each
//!   name the next definition twice);
//! - its recursion multiplies per level of the instance (a value `n` levels deep would meet the
//!   root `2^n` times): see the `recursion` module.
//!
//! Recursion that consumes the instance (`properties`, `items` and the other applicators that
//! move to a member or an item) is legitimate (a tree schema) and is kept: it ends with the
//! instance, whose depth the JSON decoder bounds.
//!
//! The screening itself never recurses (explicit stacks and queues), so a hostile schema cannot
//! overflow the stack of the thread that screens it; indexing and the cycle check take time and
//! memory linear in the schema, and following recursion into the instance has a fixed work
//! budget (a schema that exceeds it is refused).
//! References it cannot resolve on its own (to other documents) are left to the compiler, which
//! refuses them.

mod recursion;

use std::collections::HashMap;

use mcp_protocol::types::meta::JsonObject;
use serde_json::Value;
use url::Url;

/// The deepest JSON nesting a schema may have (the root object is level 1).
pub const MAX_SCHEMA_DEPTH: usize = 64;
/// The most JSON values (objects, arrays, strings, numbers, booleans, nulls) a schema may hold.
pub const MAX_SCHEMA_VALUES: usize = 100_000;
/// The most bytes of strings and member names a schema may hold.
pub const MAX_SCHEMA_TEXT: usize = 4 << 20;
/// The most subschemas one schema may apply to one value, unfolded through references and
/// in-place applicators.
pub const MAX_SCHEMA_EXPANSION: u64 = 10_000;

/// The base URI of a schema that names none (the one the validator uses too).
const DEFAULT_BASE: &str = "json-schema:///";

/// Keywords whose value is a schema applied to the same instance.
const IN_PLACE_ONE: &[&str] = &["not", "if", "then", "else"];
/// Keywords whose value is an array of schemas applied to the same instance.
const IN_PLACE_ARRAY: &[&str] = &["allOf", "anyOf", "oneOf"];
/// Keywords whose value is an object of schemas applied to the same instance.
const IN_PLACE_MAP: &[&str] = &["dependentSchemas", "dependencies"];
/// Reference keywords.
const REFERENCES: &[&str] = &["$ref", "$dynamicRef", "$recursiveRef"];

/// Whether `schema` is safe to compile and use: `Ok(())`, or why it is refused (a sentence that
/// names the limit or the reference cycle, with JSON pointers into the schema, `#` being the
/// root). It refuses a schema nested deeper than [`MAX_SCHEMA_DEPTH`] levels, holding more than
/// [`MAX_SCHEMA_VALUES`] values or [`MAX_SCHEMA_TEXT`] bytes of text, with a `$ref` cycle that
/// consumes no part of the instance, unfolding to more than [`MAX_SCHEMA_EXPANSION`] subschemas
/// for one value, or with recursion that multiplies per level of the instance. It never recurses.
pub fn screen_schema(schema: &JsonObject) -> Result<(), String> {
    let index = Index::build(schema)?;
    let edges = index.in_place_edges();
    let finished = check_cycles_and_expansion(&index, &edges)?;
    recursion::check_compounding(&index, &edges, &finished)
}

/// A step from a value to one of its children: a member name or an array position.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Item(usize),
}

/// A value of the schema: the root object, or any value under it.
#[derive(Clone, Copy)]
pub(super) enum Item<'a> {
    Root(&'a JsonObject),
    Value(&'a Value),
}

impl<'a> Item<'a> {
    pub(super) fn object(self) -> Option<&'a JsonObject> {
        match self {
            Item::Root(members) | Item::Value(Value::Object(members)) => Some(members),
            Item::Value(_) => None,
        }
    }

    /// Identifies the value: the address of its members for an object (the root has no
    /// `Value` of its own), of the value otherwise.
    pub(super) fn address(self) -> usize {
        match self.object() {
            Some(members) => std::ptr::from_ref(members) as usize,
            None => match self {
                Item::Value(value) => std::ptr::from_ref(value) as usize,
                Item::Root(members) => std::ptr::from_ref(members) as usize,
            },
        }
    }

    /// The value a JSON pointer (`/a/0/b`, already percent-decoded) names under this one.
    fn pointer(self, pointer: &str) -> Option<Item<'a>> {
        let mut at = self;
        for token in pointer.split('/').skip(1) {
            let token = token.replace("~1", "/").replace("~0", "~");
            at = match at {
                Item::Root(members) | Item::Value(Value::Object(members)) => Item::Value(members.get(&token)?),
                Item::Value(Value::Array(items)) => Item::Value(items.get(token.parse::<usize>().ok()?)?),
                Item::Value(_) => return None,
            };
        }
        Some(at)
    }
}

/// A value still to index: the value, its parent and the step from it, its depth.
type Pending<'a> = (Item<'a>, Option<(usize, Step<'a>)>, usize);

/// One JSON value of the schema.
pub(super) struct Node<'a> {
    pub(super) value: Item<'a>,
    /// The parent and the step from it (`None` for the root).
    parent: Option<(usize, Step<'a>)>,
    /// The index of the base URI in [`Index::bases`].
    base: usize,
}

/// Every value of the schema, with what resolving references needs.
pub(super) struct Index<'a> {
    pub(super) nodes: Vec<Node<'a>>,
    /// Node index by the address of its value.
    pub(super) by_address: HashMap<usize, usize>,
    bases: Vec<Url>,
    /// Resource roots by their URI (without fragment).
    resources: HashMap<String, usize>,
    /// `$anchor`, `$dynamicAnchor` and draft-07 `"$id": "#name"` by (resource URI, name).
    anchors: HashMap<(String, String), usize>,
}

/// The resource URI of `url`: without its fragment.
fn resource_key(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    url.to_string()
}

impl<'a> Index<'a> {
    fn build(schema: &'a JsonObject) -> Result<Self, String> {
        let root_base = Url::parse(DEFAULT_BASE).map_err(|e| format!("internal: bad default base: {e}"))?;
        let mut index = Index {
            nodes: Vec::new(),
            by_address: HashMap::new(),
            bases: vec![root_base],
            resources: HashMap::new(),
            anchors: HashMap::new(),
        };
        let mut text = 0usize;
        let mut stack: Vec<Pending<'a>> = vec![(Item::Root(schema), None, 1)];
        while let Some((value, parent, depth)) = stack.pop() {
            if depth > MAX_SCHEMA_DEPTH {
                let at = parent.map_or_else(|| "#".to_owned(), |(p, step)| index.child_pointer(p, step));
                return Err(format!("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels (at {at})"));
            }
            // Counted before the children are stacked, so the stack never outgrows the limit.
            let children = match value {
                Item::Value(Value::Array(items)) => items.len(),
                Item::Root(members) | Item::Value(Value::Object(members)) => members.len(),
                Item::Value(_) => 0,
            };
            if index.nodes.len() + 1 + stack.len() + children > MAX_SCHEMA_VALUES {
                return Err(format!("the schema holds more than {MAX_SCHEMA_VALUES} JSON values"));
            }
            let parent_base = parent.map_or(0, |(p, _)| index.nodes[p].base);
            let id = index.nodes.len();
            let base = index.register(value, id, parent_base);
            index.nodes.push(Node { value, parent, base });
            index.by_address.insert(value.address(), id);
            match value {
                Item::Value(Value::String(s)) => text = text.saturating_add(s.len()),
                Item::Value(Value::Array(items)) => {
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push((Item::Value(item), Some((id, Step::Item(i))), depth + 1));
                    }
                }
                Item::Root(members) | Item::Value(Value::Object(members)) => {
                    for (key, member) in members.iter().rev() {
                        text = text.saturating_add(key.len());
                        stack.push((Item::Value(member), Some((id, Step::Key(key))), depth + 1));
                    }
                }
                Item::Value(_) => {}
            }
            if text > MAX_SCHEMA_TEXT {
                return Err(format!("the schema holds more than {} MiB of text", MAX_SCHEMA_TEXT >> 20));
            }
        }
        Ok(index)
    }

    /// Records the resource and anchors `value` (node `id`) declares; returns its base.
    fn register(&mut self, value: Item<'_>, id: usize, parent_base: usize) -> usize {
        let Some(members) = value.object() else { return parent_base };
        let mut base = parent_base;
        if let Some(Value::String(declared)) = members.get("$id") {
            if let Some(name) = declared.strip_prefix('#') {
                // Draft 7 and earlier: a fragment-only `$id` is an anchor.
                let key = (resource_key(&self.bases[parent_base]), name.to_owned());
                self.anchors.entry(key).or_insert(id);
            } else if let Ok(url) = self.bases[parent_base].join(declared) {
                self.resources.entry(resource_key(&url)).or_insert(id);
                self.bases.push(url);
                base = self.bases.len() - 1;
            }
        }
        if id == 0 {
            self.resources.entry(resource_key(&self.bases[base])).or_insert(0);
        }
        for keyword in ["$anchor", "$dynamicAnchor"] {
            if let Some(Value::String(name)) = members.get(keyword) {
                let key = (resource_key(&self.bases[base]), name.clone());
                self.anchors.entry(key).or_insert(id);
            }
        }
        base
    }

    /// The JSON pointer of node `id`, as a URI fragment: `#/$defs/a`.
    pub(super) fn pointer(&self, id: usize) -> String {
        let mut steps = Vec::new();
        let mut at = id;
        while let Some((parent, step)) = self.nodes[at].parent {
            steps.push(step);
            at = parent;
        }
        let mut out = String::from("#");
        for step in steps.iter().rev() {
            out.push('/');
            match step {
                Step::Key(key) => out.push_str(&key.replace('~', "~0").replace('/', "~1")),
                Step::Item(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }

    fn child_pointer(&self, parent: usize, step: Step<'_>) -> String {
        let mut out = self.pointer(parent);
        out.push('/');
        match step {
            Step::Key(key) => out.push_str(&key.replace('~', "~0").replace('/', "~1")),
            Step::Item(i) => out.push_str(&i.to_string()),
        }
        out
    }

    /// The node a reference written in node `from` points at, when it is inside this schema.
    fn resolve(&self, from: usize, reference: &str) -> Option<usize> {
        let url = self.bases[self.nodes[from].base].join(reference).ok()?;
        let root = *self.resources.get(&resource_key(&url))?;
        let fragment = url.fragment().unwrap_or("");
        let fragment = percent_decode(fragment);
        if fragment.is_empty() {
            return Some(root);
        }
        if fragment.starts_with('/') {
            let target = self.nodes[root].value.pointer(&fragment)?;
            return self.by_address.get(&target.address()).copied();
        }
        self.anchors.get(&(resource_key(&url), fragment)).copied()
    }

    /// For every node, the nodes applied to the same instance: its reference targets and its
    /// in-place subschemas.
    fn in_place_edges(&self) -> Vec<Vec<usize>> {
        let mut edges = vec![Vec::new(); self.nodes.len()];
        for (id, node) in self.nodes.iter().enumerate() {
            let Some(members) = node.value.object() else { continue };
            let out = &mut edges[id];
            for keyword in REFERENCES {
                if let Some(Value::String(reference)) = members.get(*keyword)
                    && let Some(target) = self.resolve(id, reference)
                {
                    out.push(target);
                }
            }
            let mut push = |value: &Value| {
                if let Some(&child) = self.by_address.get(&Item::Value(value).address()) {
                    out.push(child);
                }
            };
            for keyword in IN_PLACE_ONE {
                if let Some(schema) = members.get(*keyword) {
                    push(schema);
                }
            }
            for keyword in IN_PLACE_ARRAY {
                if let Some(Value::Array(schemas)) = members.get(*keyword) {
                    schemas.iter().for_each(&mut push);
                }
            }
            for keyword in IN_PLACE_MAP {
                if let Some(Value::Object(schemas)) = members.get(*keyword) {
                    schemas.values().filter(|s| s.is_object()).for_each(&mut push);
                }
            }
        }
        edges
    }
}

/// `%XX` escapes decoded (a malformed escape is kept as written).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Depth-first over the in-place graph, without recursion: a back edge is a cycle that consumes
/// nothing; on the way back, each node's expansion (how many subschemas it applies to one value)
/// is summed from its children's.
/// Returns the nodes in an order where every node comes after the nodes it applies in place.
fn check_cycles_and_expansion(index: &Index<'_>, edges: &[Vec<usize>]) -> Result<Vec<usize>, String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; edges.len()];
    let mut expansion = vec![0u64; edges.len()];
    let mut finished = Vec::with_capacity(edges.len());
    for start in 0..edges.len() {
        if mark[start] != Mark::New || edges[start].is_empty() {
            if mark[start] == Mark::New {
                mark[start] = Mark::Done;
                expansion[start] = 1;
                finished.push(start);
            }
            continue;
        }
        // (node, next edge to follow)
        let mut stack = vec![(start, 0usize)];
        mark[start] = Mark::Open;
        while let Some(top) = stack.last_mut() {
            let node = top.0;
            if let Some(&child) = edges[node].get(top.1) {
                top.1 += 1;
                match mark[child] {
                    Mark::New => {
                        mark[child] = Mark::Open;
                        stack.push((child, 0));
                    }
                    Mark::Open => {
                        let from = stack.iter().position(|&(n, _)| n == child).unwrap_or(0);
                        let cycle: Vec<String> = stack[from..]
                            .iter()
                            .map(|&(n, _)| index.pointer(n))
                            .chain([index.pointer(child)])
                            .collect();
                        return Err(format!(
                            "its references form a cycle that consumes no input ({}): a validator would loop for ever",
                            cycle.join(" -> ")
                        ));
                    }
                    Mark::Done => {}
                }
            } else {
                let total = edges[node].iter().fold(1u64, |sum, &child| sum.saturating_add(expansion[child]));
                if total > MAX_SCHEMA_EXPANSION {
                    return Err(format!(
                        "the subschema at {} applies more than {MAX_SCHEMA_EXPANSION} subschemas to one value once its \
                         references are unfolded",
                        index.pointer(node)
                    ));
                }
                expansion[node] = total;
                mark[node] = Mark::Done;
                finished.push(node);
                stack.pop();
            }
        }
    }
    Ok(finished)
}
