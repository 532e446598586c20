//! One revision's official `schema.json`: its definitions, its unions, validators for any of its
//! definitions, and a walk that lists which declared properties an instance fills.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use super::Rev;

/// The schema folder: `shared/mcp-spec` next to the workspace root.
pub fn dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("the crate sits inside the workspace");
    let dir = workspace.join("..").join("shared").join("mcp-spec");
    assert!(
        dir.is_dir(),
        "schema folder not found at {} (expected <workspace root>/../shared/mcp-spec/<rev>/schema.json)",
        dir.display()
    );
    dir
}

/// How a schema spells one of its unions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Union {
    /// `anyOf` of `$ref`s: the usual shape.
    AnyOf(Vec<String>),
    /// A lone `$ref`: the schema generator collapsed a one-member union into a reference.
    Ref(String),
    /// A copy of the single member's definition: the generator inlined a one-member union.
    Inlined(String),
    /// No such definition.
    Absent,
}

impl Union {
    /// The member definition names, in schema order.
    pub fn members(&self) -> Vec<String> {
        match self {
            Union::AnyOf(m) => m.clone(),
            Union::Ref(m) | Union::Inlined(m) => vec![m.clone()],
            Union::Absent => Vec::new(),
        }
    }
}

/// Which declared properties an instance fills, keyed `Definition.path.property` (`[]` for array
/// items, `*` for map values). A key counts as filled when any instance at that place fills it.
#[derive(Debug, Default)]
pub struct Fields {
    /// Optional properties that no instance at their place fills.
    pub missing: Vec<String>,
    /// Optional properties that some instance fills.
    pub optional_present: Vec<String>,
    /// Members of the instance that an object schema with declared properties does not declare:
    /// valid where the object is open, but not a field of the revision.
    pub undeclared: Vec<String>,
}

#[derive(Default)]
struct Seen {
    /// Declared properties: (filled somewhere, required).
    declared: BTreeMap<String, (bool, bool)>,
    undeclared: BTreeSet<String>,
}

/// One revision's `schema.json`, with a cache of compiled validators.
pub struct Spec {
    /// The revision.
    pub rev: Rev,
    root: Value,
    defs_key: &'static str,
    validators: RefCell<HashMap<String, Rc<Validator>>>,
}

impl Spec {
    /// Load `<dir>/<rev>/schema.json`.
    pub fn load(rev: Rev) -> Spec {
        let path = dir().join(rev.as_str()).join("schema.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let root: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
        // Draft-07 revisions keep their definitions under `definitions`, 2020-12 ones under `$defs`.
        let defs_key = if root.get("$defs").is_some() { "$defs" } else { "definitions" };
        Spec { rev, root, defs_key, validators: RefCell::new(HashMap::new()) }
    }

    /// A definition by name.
    pub fn def(&self, name: &str) -> Option<&Value> {
        self.root.get(self.defs_key)?.get(name)
    }

    /// Whether the schema defines `name`.
    pub fn has(&self, name: &str) -> bool {
        self.def(name).is_some()
    }

    /// The JSON pointer (as a `$ref`) of a definition: `#/definitions/X` or `#/$defs/X`.
    pub fn def_ref(&self, name: &str) -> String {
        format!("#/{}/{name}", self.defs_key)
    }

    /// The `method` const of a request or notification definition.
    pub fn method_const(&self, name: &str) -> Option<&str> {
        self.def(name)?.pointer("/properties/method/const")?.as_str()
    }

    /// How the schema spells the union `name`.
    pub fn union(&self, name: &str) -> Union {
        let Some(def) = self.def(name) else { return Union::Absent };
        if let Some(any_of) = def.get("anyOf").and_then(Value::as_array) {
            return Union::AnyOf(any_of.iter().map(|m| ref_name(m).unwrap_or_else(|| panic!("{name}: {m}"))).collect());
        }
        if let Some(target) = ref_name(def) {
            return Union::Ref(target);
        }
        // An inlined member: the one definition equal to the union, descriptions aside.
        let defs = self.root[self.defs_key].as_object().expect("definitions object");
        let same: Vec<&String> = defs
            .iter()
            .filter(|(n, d)| *n != name && without_descriptions(d) == without_descriptions(def))
            .map(|(n, _)| n)
            .collect();
        match same.as_slice() {
            [one] => Union::Inlined((*one).clone()),
            _ => panic!("[{}] {name} is neither an anyOf, a $ref nor a copy of one definition: {def}", self.rev),
        }
    }

    /// Validate `instance` against the schema at `pointer` (a `#/...` reference). Each error names
    /// the instance path, the schema path and the message.
    pub fn validate(&self, pointer: &str, instance: &Value) -> Vec<String> {
        let validator = self.validator(pointer);
        validator.iter_errors(instance).map(|e| describe(&e, "    ")).collect()
    }

    fn is_valid(&self, pointer: &str, instance: &Value) -> bool {
        self.validator(pointer).is_valid(instance)
    }

    fn validator(&self, pointer: &str) -> Rc<Validator> {
        if let Some(v) = self.validators.borrow().get(pointer) {
            return v.clone();
        }
        // The whole document with a root `$ref`: every definition stays resolvable.
        let mut schema = self.root.clone();
        schema.as_object_mut().expect("schema object").insert("$ref".to_owned(), Value::from(pointer));
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap_or_else(|e| panic!("[{}] compiling a validator for {pointer}: {e}", self.rev));
        let validator = Rc::new(validator);
        self.validators.borrow_mut().insert(pointer.to_owned(), validator.clone());
        validator
    }

    /// The schema at a `#/...` reference, if there is one.
    pub fn at(&self, pointer: &str) -> Option<&Value> {
        self.root.pointer(pointer.strip_prefix('#').unwrap_or(pointer))
    }

    fn node(&self, pointer: &str) -> &Value {
        self.at(pointer).unwrap_or_else(|| panic!("[{}] no schema at {pointer}", self.rev))
    }

    /// Which declared properties `instance` fills, walking the schema at `pointer` (a definition
    /// reference) through `$ref`, `allOf`, the best-matching `anyOf` branch, items and maps.
    pub fn fields(&self, pointer: &str, instance: &Value) -> Fields {
        let mut seen = Seen::default();
        let name = pointer.rsplit('/').next().unwrap_or(pointer);
        self.walk(pointer, name, instance, &BTreeSet::new(), &mut seen);
        let mut fields = Fields { undeclared: seen.undeclared.into_iter().collect(), ..Fields::default() };
        for (key, (present, required)) in seen.declared {
            match (present, required) {
                (false, false) => fields.missing.push(key),
                (true, false) => fields.optional_present.push(key),
                _ => {}
            }
        }
        fields
    }

    /// Walk `instance` against the schema at `pointer`; `siblings` are the properties declared by
    /// the other branches of an enclosing `allOf` (a task result is `Result` and `Task`).
    fn walk(&self, pointer: &str, ctx: &str, instance: &Value, siblings: &BTreeSet<String>, seen: &mut Seen) {
        let node = self.node(pointer);
        if let Some(target) = node.get("$ref").and_then(Value::as_str) {
            let name = target.rsplit('/').next().unwrap_or(target);
            return self.walk(target, name, instance, siblings, seen);
        }
        let declared = node.get("properties").and_then(Value::as_object);
        let mut inherited = siblings.clone();
        inherited.extend(declared.into_iter().flatten().map(|(k, _)| k.clone()));
        if let Some(all) = node.get("allOf").and_then(Value::as_array) {
            for i in 0..all.len() {
                inherited.extend(self.declared_names(&format!("{pointer}/allOf/{i}")));
            }
            for i in 0..all.len() {
                self.walk(&format!("{pointer}/allOf/{i}"), ctx, instance, &inherited, seen);
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(branches) = node.get(keyword).and_then(Value::as_array)
                && let Some(best) = self.best_branch(pointer, keyword, branches.len(), instance)
            {
                self.walk(&best, ctx, instance, &inherited, seen);
            }
        }
        if let (Some(props), Some(object)) = (declared, instance.as_object()) {
            let required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for name in props.keys() {
                let key = format!("{ctx}.{name}");
                let slot = seen.declared.entry(key.clone()).or_insert((false, required.contains(&name.as_str())));
                if let Some(value) = object.get(name) {
                    slot.0 = true;
                    self.walk(&format!("{pointer}/properties/{}", escape(name)), &key, value, &BTreeSet::new(), seen);
                }
            }
            if !props.is_empty() {
                for name in object.keys().filter(|k| !inherited.contains(*k)) {
                    seen.undeclared.insert(format!("{ctx}.{name}"));
                }
            }
        }
        if let (Some(items), Some(array)) = (node.get("items"), instance.as_array())
            && items.is_object()
        {
            for item in array {
                self.walk(&format!("{pointer}/items"), &format!("{ctx}[]"), item, &BTreeSet::new(), seen);
            }
        }
        if let (Some(extra), Some(object)) = (node.get("additionalProperties"), instance.as_object())
            && extra.as_object().is_some_and(|e| !e.is_empty())
        {
            for (name, value) in object {
                if !declared.is_some_and(|p| p.contains_key(name)) {
                    self.walk(
                        &format!("{pointer}/additionalProperties"),
                        &format!("{ctx}.*"),
                        value,
                        &BTreeSet::new(),
                        seen,
                    );
                }
            }
        }
    }

    /// The property names a schema declares, through `$ref`s.
    fn declared_names(&self, pointer: &str) -> BTreeSet<String> {
        let mut node = self.node(pointer);
        while let Some(target) = node.get("$ref").and_then(Value::as_str) {
            node = self.node(target);
        }
        node.get("properties").and_then(Value::as_object).into_iter().flatten().map(|(k, _)| k.clone()).collect()
    }

    /// Among the branches the instance is valid against, the one that declares most of the
    /// instance's members (a string enum schema also validates as a plain string schema).
    fn best_branch(&self, pointer: &str, keyword: &str, count: usize, instance: &Value) -> Option<String> {
        let mut best: Option<(usize, String)> = None;
        for i in 0..count {
            let branch = format!("{pointer}/{keyword}/{i}");
            if !self.is_valid(&branch, instance) {
                continue;
            }
            let score = self.declared_count(&branch, instance);
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((score, branch));
            }
        }
        best.map(|(_, b)| b)
    }

    fn declared_count(&self, pointer: &str, instance: &Value) -> usize {
        let mut node = self.node(pointer);
        while let Some(target) = node.get("$ref").and_then(Value::as_str) {
            node = self.node(target);
        }
        let (Some(props), Some(object)) = (node.get("properties").and_then(Value::as_object), instance.as_object())
        else {
            return 0;
        };
        object.keys().filter(|k| props.contains_key(*k)).count()
    }
}

fn ref_name(v: &Value) -> Option<String> {
    let target = v.get("$ref")?.as_str()?;
    Some(target.rsplit('/').next()?.to_owned())
}

fn without_descriptions(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "description")
                .map(|(k, v)| (k.clone(), without_descriptions(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_descriptions).collect()),
        other => other.clone(),
    }
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// An error as `at <instance path> (schema <schema path>): <message>`, with the errors of each
/// branch of a failed `anyOf`/`oneOf` beneath it.
fn describe(e: &ValidationError<'_>, indent: &str) -> String {
    let mut message = format!("at '{}' (schema {}): {}", e.instance_path(), e.schema_path(), e.masked());
    let context = match e.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => Some(context),
        _ => None,
    };
    // Two levels of branches say which alternative failed where; deeper ones repeat them.
    let context = context.filter(|_| indent.len() <= 6);
    for (i, branch) in context.into_iter().flatten().enumerate() {
        for inner in branch.iter().take(3) {
            message.push_str(&format!("\n{indent}branch {i}: {}", describe(inner, &format!("{indent}  "))));
        }
    }
    message
}
