//! The part of the screening that follows recursion into the instance: how many subschemas a
//! schema applies to one value at each depth of the instance, up to the deepest instance the
//! JSON decoder lets through.
//!
//! A schema that recurses through `properties` or `items` is fine when each level of the
//! instance meets the same few subschemas (a tree). It is hostile when the count multiplies per
//! level: `{"allOf": [{"properties": {"a": {"$ref": "#"}}}, {"properties": {"a": {"$ref": "#"}}}]}`
//! applies the root twice to `a`, four times to `a.a`, 2^40 times forty levels down. The count
//! is followed child by child (each member name a subschema mentions, any other name, each
//! array position, any other item, assuming every branch of `anyOf`/`oneOf` is evaluated), and
//! a schema is refused once one value would meet more than [`MAX_SCHEMA_EXPANSION`]
//! subschemas. The screening has a work budget of its own, and a
//! schema too intricate to follow within it is refused as well.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::Value;

use super::{Index, Item, MAX_SCHEMA_EXPANSION};

/// The deepest instance followed: serde_json's recursion limit.
const MAX_INSTANCE_DEPTH: usize = 128;
/// The most steps (node visits) the follow-up may take.
const WORK_BUDGET: usize = 4_000_000;

/// Which child of an instance a subschema applies to.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Child<'a> {
    /// The member of this name; `true` when a `patternProperties` pattern matches the name (then
    /// every pattern is assumed to, and `additionalProperties` does not apply).
    Key(&'a str, bool),
    /// A member whose name no subschema mentions (`true`: a pattern matches it, as above).
    OtherKey(bool),
    /// The item at this position (one that `prefixItems` or an `items` array names).
    At(usize),
    /// An item after every named position.
    OtherItem,
    /// A member name (as a string instance, for `propertyNames`).
    Name,
}

/// The subschemas a node applies to the children of a value.
#[derive(Default)]
struct Consuming<'a> {
    properties: Vec<(&'a str, usize)>,
    /// `patternProperties`: any member may match.
    patterns: Vec<usize>,
    /// `additionalProperties` and `unevaluatedProperties`: members `properties` does not name.
    other_members: Vec<usize>,
    /// `prefixItems` or an `items` array.
    positions: Vec<usize>,
    /// `items` (a schema), `additionalItems` and `unevaluatedItems`: items after the positions.
    other_items: Vec<usize>,
    /// `contains`: every item.
    every_item: Vec<usize>,
    /// `propertyNames`.
    names: Vec<usize>,
}

impl<'a> Consuming<'a> {
    fn of(index: &Index<'a>, node: usize) -> Consuming<'a> {
        let mut out = Consuming::default();
        let Some(members) = index.nodes[node].value.object() else { return out };
        let id = |value: &Value| index.by_address.get(&Item::Value(value).address()).copied();
        if let Some(Value::Object(properties)) = members.get("properties") {
            out.properties = properties.iter().filter_map(|(k, v)| Some((k.as_str(), id(v)?))).collect();
        }
        if let Some(Value::Object(patterns)) = members.get("patternProperties") {
            out.patterns = patterns.values().filter_map(id).collect();
        }
        for keyword in ["additionalProperties", "unevaluatedProperties"] {
            out.other_members.extend(members.get(keyword).and_then(id));
        }
        for keyword in ["prefixItems", "items"] {
            if let Some(Value::Array(positions)) = members.get(keyword) {
                out.positions.extend(positions.iter().filter_map(id));
            }
        }
        for keyword in ["items", "additionalItems", "unevaluatedItems"] {
            if let Some(schema) = members.get(keyword).filter(|v| !v.is_array()) {
                out.other_items.extend(id(schema));
            }
        }
        out.every_item.extend(members.get("contains").and_then(id));
        out.names.extend(members.get("propertyNames").and_then(id));
        out
    }

    /// The subschemas this node applies to `child`.
    fn apply_to(&self, child: Child<'_>, out: &mut Vec<usize>) {
        match child {
            Child::Key(name, matched) => {
                let named = self.properties.iter().find(|(k, _)| *k == name).map(|&(_, schema)| schema);
                out.extend(named);
                if matched {
                    out.extend(&self.patterns);
                } else if named.is_none() {
                    out.extend(&self.other_members);
                }
            }
            Child::OtherKey(true) => out.extend(&self.patterns),
            Child::OtherKey(false) => out.extend(&self.other_members),
            Child::At(i) => {
                match self.positions.get(i) {
                    Some(&schema) => out.push(schema),
                    None => out.extend(&self.other_items),
                }
                out.extend(&self.every_item);
            }
            Child::OtherItem => {
                out.extend(&self.other_items);
                out.extend(&self.every_item);
            }
            Child::Name => out.extend(&self.names),
        }
    }
}

/// Follows the subschemas applied to one value into its children, breadth first over the
/// distinct sets met (a set met again is not followed again); `finished` lists the nodes so that
/// each comes after the nodes it applies in place (no cycle is left).
pub(super) fn check_compounding(index: &Index<'_>, edges: &[Vec<usize>], finished: &[usize]) -> Result<(), String> {
    // Position in an order where each node comes before what it applies in place.
    let mut rank = vec![0usize; edges.len()];
    for (position, &node) in finished.iter().rev().enumerate() {
        rank[node] = position;
    }
    let mut work = 0usize;
    let mut consuming: HashMap<usize, Consuming<'_>> = HashMap::new();
    let start = closure(&[(0, 1)], edges, &rank, &mut work)?;
    let mut seen: HashSet<Vec<(usize, u64)>> = HashSet::new();
    seen.insert(start.clone());
    let mut queue = VecDeque::from([(start, 0usize)]);
    while let Some((applied, depth)) = queue.pop_front() {
        if depth == MAX_INSTANCE_DEPTH {
            continue;
        }
        let mut children: Vec<Child<'_>> =
            vec![Child::OtherKey(false), Child::OtherKey(true), Child::OtherItem, Child::Name];
        for &(node, _) in &applied {
            let rule = consuming.entry(node).or_insert_with(|| Consuming::of(index, node));
            children.extend(rule.properties.iter().flat_map(|&(k, _)| [Child::Key(k, false), Child::Key(k, true)]));
            children.extend((0..rule.positions.len()).map(Child::At));
        }
        children.sort_unstable();
        children.dedup();
        for child in children {
            work = work.saturating_add(applied.len());
            if work > WORK_BUDGET {
                return Err(TOO_INTRICATE.to_owned());
            }
            let mut seeds: HashMap<usize, u64> = HashMap::new();
            let mut targets = Vec::new();
            for &(node, count) in &applied {
                targets.clear();
                consuming[&node].apply_to(child, &mut targets);
                for &target in &targets {
                    let seed = seeds.entry(target).or_default();
                    *seed = seed.saturating_add(count);
                }
            }
            if seeds.is_empty() {
                continue;
            }
            let mut seeds: Vec<(usize, u64)> = seeds.into_iter().collect();
            seeds.sort_unstable();
            let reached = closure(&seeds, edges, &rank, &mut work)?;
            let total = reached.iter().fold(0u64, |sum, &(_, c)| sum.saturating_add(c));
            if total > MAX_SCHEMA_EXPANSION {
                return Err(format!(
                    "its recursion multiplies: a value {} level(s) deep would meet more than \
                     {MAX_SCHEMA_EXPANSION} subschemas (through {})",
                    depth + 1,
                    index.pointer(seeds[0].0)
                ));
            }
            if seen.insert(reached.clone()) {
                queue.push_back((reached, depth + 1));
            }
        }
    }
    Ok(())
}

const TOO_INTRICATE: &str = "it is too intricate to screen (its references are followed too many times)";

/// Every node `seeds` apply in place, with how many times (paths through the in-place graph).
fn closure(
    seeds: &[(usize, u64)],
    edges: &[Vec<usize>],
    rank: &[usize],
    work: &mut usize,
) -> Result<Vec<(usize, u64)>, String> {
    let mut reached: Vec<usize> = Vec::new();
    let mut seen: HashMap<usize, u64> = HashMap::new();
    let mut stack: Vec<usize> = seeds.iter().map(|&(node, _)| node).collect();
    while let Some(node) = stack.pop() {
        *work += 1;
        if *work > WORK_BUDGET {
            return Err(TOO_INTRICATE.to_owned());
        }
        if seen.insert(node, 0).is_none() {
            reached.push(node);
            stack.extend(&edges[node]);
        }
    }
    for &(node, count) in seeds {
        let slot = seen.entry(node).or_default();
        *slot = slot.saturating_add(count);
    }
    reached.sort_unstable_by_key(|&node| rank[node]);
    for node in reached {
        let count = seen[&node];
        for &child in &edges[node] {
            *work += 1;
            let slot = seen.entry(child).or_default();
            *slot = slot.saturating_add(count);
        }
    }
    if *work > WORK_BUDGET {
        return Err(TOO_INTRICATE.to_owned());
    }
    let mut seen: Vec<(usize, u64)> = seen.into_iter().collect();
    seen.sort_unstable();
    Ok(seen)
}
