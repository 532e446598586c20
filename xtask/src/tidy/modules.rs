//! The module graph of a crate, read from its source, and the cycles in it.
//!
//! A static approximation, good enough for a tidy check:
//!
//! - Modules come from `mod name;` (the file `name.rs` or `name/mod.rs`) and inline
//!   `mod name { ... }`, starting at a crate root (`src/lib.rs`, `src/main.rs`, `src/bin/*.rs`).
//!   An item under `#[cfg(test)]` is skipped whole: test modules may use anything. `#[path]` is
//!   not followed (only test modules use it).
//! - A module uses another when it names it by a path that starts with `crate::`, `super::`
//!   or `self::`, or in a `use` that starts with one of its child modules. Such a path is
//!   followed through child modules and through the `use` imports of the modules on the way
//!   (re-exports, private ones too: children see them), and ends at the last module it
//!   reaches. A glob import is not followed; macros are not expanded.
//! - A module and its ancestors use each other freely: a parent declares and re-exports its
//!   children, a child uses its parent's items. Every other use is between two siblings (the
//!   children of the two modules' nearest common ancestor on the way to each), and only those
//!   make cycles: a set of siblings that reach each other.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use super::lex::{Spanned, Token, tokenize};

/// A module's path from its crate root: empty for the root, `["codec"]`, `["auth", "oauth"]`.
pub type ModPath = Vec<String>;

/// Why a module uses another: the first place it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The file, relative to the workspace root.
    pub file: PathBuf,
    /// Its line.
    pub line: usize,
    /// The path as written (`crate::jsonrpc::Message`).
    pub path: String,
}

/// A cycle between sibling modules: their full paths (sorted) and the uses that close it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// The modules, sorted, each as `a::b`.
    pub modules: Vec<String>,
    /// For each use between two of them (`from`, `to`), where it is.
    pub edges: Vec<(String, String, Evidence)>,
}

#[derive(Debug, Default)]
struct Module {
    /// Child modules by name.
    children: BTreeSet<String>,
    /// `use` imports by the name they bring in: the path as written.
    imports: BTreeMap<String, Vec<String>>,
    /// Paths this module names, to be resolved once every module is known.
    references: Vec<(Vec<String>, Evidence)>,
}

/// Every module of the crate whose root file is `root_file` (relative to `workspace`).
#[derive(Debug, Default)]
pub struct Crate {
    modules: BTreeMap<ModPath, Module>,
}

/// One import of a `use`: the full path, and the name it brings in (`None` for a glob or `as _`).
type Import = (Vec<String>, Option<String>);

/// Problems reading a crate: unreadable files (a declared module without a file is one).
pub type ReadProblems = Vec<(PathBuf, String)>;

impl Crate {
    /// Read the crate rooted at `root_file` (relative to `workspace`).
    pub fn read(workspace: &Path, root_file: &Path) -> (Crate, ReadProblems) {
        let mut krate = Crate::default();
        let mut problems = Vec::new();
        // (module path, its file, the directory its `mod name;` children live in)
        let dir = root_file.parent().unwrap_or(Path::new("")).to_path_buf();
        let mut pending = vec![(Vec::new(), root_file.to_path_buf(), dir)];
        while let Some((path, file, child_dir)) = pending.pop() {
            let text = match fs::read_to_string(workspace.join(&file)) {
                Ok(text) => text,
                Err(err) => {
                    problems.push((file, format!("cannot read ({err})")));
                    continue;
                }
            };
            let declared = krate.scan(&path, &file, &tokenize(&text));
            for (parent, name) in declared {
                let mut base = child_dir.clone();
                base.extend(&parent[path.len()..]);
                let flat = base.join(format!("{name}.rs"));
                let nested = base.join(&name).join("mod.rs");
                let file = if workspace.join(&flat).is_file() { flat } else { nested };
                let mut child = parent.clone();
                child.push(name.clone());
                let dir = base.join(&name);
                if !workspace.join(&file).is_file() {
                    problems.push((file, format!("module `{}` has no file", child.join("::"))));
                    continue;
                }
                pending.push((child, file, dir));
            }
        }
        (krate, problems)
    }

    /// Record what the tokens of `file` (module `path`) declare and use; returns the
    /// `mod name;` declarations as (parent module, name).
    fn scan(&mut self, path: &ModPath, file: &Path, tokens: &[Spanned]) -> Vec<(ModPath, String)> {
        self.modules.entry(path.clone()).or_default();
        let mut declared = Vec::new();
        // Inline modules open here: (module path, brace depth inside it).
        let mut stack: Vec<(ModPath, usize)> = vec![(path.clone(), 0)];
        let mut depth = 0usize;
        let mut i = 0;
        while i < tokens.len() {
            let current = stack.last().map(|(p, _)| p.clone()).unwrap_or_default();
            match &tokens[i].token {
                Token::Punct('#') => {
                    let (end, is_test) = attribute(tokens, i);
                    i = if is_test { skip_item(tokens, end) } else { end };
                    continue;
                }
                Token::Punct('{') => depth += 1,
                Token::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if stack.len() > 1 && stack.last().is_some_and(|(_, d)| *d > depth) {
                        stack.pop();
                    }
                }
                Token::Ident(word) if word == "mod" => {
                    if let Some(Token::Ident(name)) = tokens.get(i + 1).map(|t| &t.token) {
                        let mut child = current.clone();
                        child.push(name.clone());
                        self.modules.entry(current.clone()).or_default().children.insert(name.clone());
                        match tokens.get(i + 2).map(|t| &t.token) {
                            Some(Token::Punct(';')) => declared.push((current.clone(), name.clone())),
                            Some(Token::Punct('{')) => {
                                self.modules.entry(child.clone()).or_default();
                                depth += 1;
                                stack.push((child, depth));
                                i += 3;
                                continue;
                            }
                            _ => {}
                        }
                    }
                }
                Token::Ident(word) if word == "use" => {
                    let (end, imports) = parse_use(tokens, i + 1);
                    let module = self.modules.entry(current.clone()).or_default();
                    for (segments, name) in imports {
                        let evidence = evidence(file, tokens[i].line, &segments);
                        if let Some(name) = name {
                            module.imports.insert(name, segments.clone());
                        }
                        module.references.push((segments, evidence));
                    }
                    i = end;
                    continue;
                }
                Token::Ident(word) if matches!(word.as_str(), "crate" | "super" | "self") => {
                    let after_dollar = i > 0 && tokens[i - 1].token == Token::Punct('$');
                    let after_sep = i > 0 && tokens[i - 1].token == Token::PathSep;
                    if tokens.get(i + 1).map(|t| &t.token) == Some(&Token::PathSep) && !after_dollar && !after_sep {
                        let (end, segments) = read_path(tokens, i);
                        let evidence = evidence(file, tokens[i].line, &segments);
                        self.modules.entry(current.clone()).or_default().references.push((segments, evidence));
                        i = end;
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        declared
    }

    /// The module a path named in `from` ends at; `None` for a path outside the crate.
    fn resolve(&self, from: &ModPath, segments: &[String], hops: usize) -> Option<ModPath> {
        let (mut at, rest) = match segments.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &segments[1..]),
            Some("self") => (from.clone(), &segments[1..]),
            Some("super") => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let keep = from.len().checked_sub(ups)?;
                (from[..keep].to_vec(), &segments[ups..])
            }
            Some(first) if self.modules.get(from).is_some_and(|m| m.children.contains(first)) => {
                (from.clone(), segments)
            }
            _ => return None,
        };
        for (index, segment) in rest.iter().enumerate() {
            let module = self.modules.get(&at)?;
            if module.children.contains(segment) {
                at.push(segment.clone());
                continue;
            }
            if hops < 8
                && let Some(import) = module.imports.get(segment)
            {
                let mut through = import.clone();
                through.extend(rest[index + 1..].iter().cloned());
                return self.resolve(&at, &through, hops + 1).or(Some(at));
            }
            break;
        }
        Some(at)
    }

    /// The cycles between sibling modules, each with the uses that make it.
    pub fn cycles(&self) -> Vec<Cycle> {
        // For each parent: its children's uses of each other, with the first evidence.
        let mut siblings: BTreeMap<ModPath, BTreeMap<(String, String), Evidence>> = BTreeMap::new();
        for (from, module) in &self.modules {
            for (segments, evidence) in &module.references {
                let Some(to) = self.resolve(from, segments, 0) else { continue };
                let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
                if common == from.len() || common == to.len() {
                    continue; // an ancestor and its descendant
                }
                let key = (from[common].clone(), to[common].clone());
                siblings.entry(from[..common].to_vec()).or_default().entry(key).or_insert_with(|| evidence.clone());
            }
        }
        let mut cycles = Vec::new();
        for (parent, edges) in &siblings {
            for component in strongly_connected(edges) {
                let full = |name: &str| {
                    let mut path = parent.clone();
                    path.push(name.to_owned());
                    path.join("::")
                };
                let edges = edges
                    .iter()
                    .filter(|((a, b), _)| component.contains(a) && component.contains(b))
                    .map(|((a, b), evidence)| (full(a), full(b), evidence.clone()))
                    .collect();
                cycles.push(Cycle { modules: component.iter().map(|m| full(m)).collect(), edges });
            }
        }
        cycles
    }
}

fn evidence(file: &Path, line: usize, segments: &[String]) -> Evidence {
    Evidence { file: file.to_path_buf(), line, path: segments.join("::") }
}

/// The end of the attribute starting at `#` (index `start`) and whether it is `#[cfg(test)]`.
fn attribute(tokens: &[Spanned], start: usize) -> (usize, bool) {
    let mut i = start + 1;
    if tokens.get(i).map(|t| &t.token) == Some(&Token::Punct('!')) {
        i += 1;
    }
    if tokens.get(i).map(|t| &t.token) != Some(&Token::Punct('[')) {
        return (start + 1, false);
    }
    let open = i;
    let mut depth = 0usize;
    while let Some(t) = tokens.get(i) {
        match t.token {
            Token::Punct('[') => depth += 1,
            Token::Punct(']') => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let inner: Vec<&Token> = tokens[open + 1..i.min(tokens.len())].iter().map(|t| &t.token).collect();
    let is_test =
        inner == [&Token::Ident("cfg".into()), &Token::Punct('('), &Token::Ident("test".into()), &Token::Punct(')')];
    (i + 1, is_test)
}

/// The index after the item starting at `start` (more attributes, then everything up to a `;`
/// outside braces or the brace that closes its body).
fn skip_item(tokens: &[Spanned], start: usize) -> usize {
    let mut i = start;
    let mut depth = 0usize;
    while let Some(t) = tokens.get(i) {
        match t.token {
            Token::Punct('{') => depth += 1,
            // The brace that closes the enclosing block is not the item's.
            Token::Punct('}') if depth == 0 => return i,
            Token::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            Token::Punct(';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// A path of identifiers joined by `::` starting at `start`; returns the index after it.
fn read_path(tokens: &[Spanned], start: usize) -> (usize, Vec<String>) {
    let mut segments = Vec::new();
    let mut i = start;
    while let Some(Token::Ident(name)) = tokens.get(i).map(|t| &t.token) {
        segments.push(name.clone());
        if tokens.get(i + 1).map(|t| &t.token) == Some(&Token::PathSep) {
            i += 2;
        } else {
            return (i + 1, segments);
        }
    }
    (i, segments)
}

/// The imports of the `use` tree starting at `start` (after `use`): each full path with the
/// name it brings in (`None` for a glob or `as _`). Returns the index after the `;`.
fn parse_use(tokens: &[Spanned], start: usize) -> (usize, Vec<Import>) {
    let mut out = Vec::new();
    let end = use_tree(tokens, start, &[], &mut out);
    let mut i = end;
    while let Some(t) = tokens.get(i) {
        i += 1;
        if t.token == Token::Punct(';') {
            break;
        }
    }
    (i, out)
}

/// One use tree under `prefix`: `a::b`, `a::b as c`, `a::*`, `a::{...}`; returns where it ends.
fn use_tree(
    tokens: &[Spanned],
    start: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let mut path = prefix.to_vec();
    let mut i = start;
    if tokens.get(i).map(|t| &t.token) == Some(&Token::PathSep) {
        i += 1; // `use ::std::...`: outside the crate
        path.push(String::new());
    }
    loop {
        match tokens.get(i).map(|t| &t.token) {
            Some(Token::Ident(name)) => {
                path.push(name.clone());
                i += 1;
                if tokens.get(i).map(|t| &t.token) == Some(&Token::PathSep) {
                    i += 1;
                    continue;
                }
                let mut name = path.last().cloned();
                if tokens.get(i).map(|t| &t.token) == Some(&Token::Ident("as".into())) {
                    name = match tokens.get(i + 1).map(|t| &t.token) {
                        Some(Token::Ident(alias)) => Some(alias.clone()),
                        _ => None, // `as _`
                    };
                    i += 2;
                }
                if name.as_deref() == Some("self") {
                    path.pop();
                    name = path.last().cloned();
                }
                out.push((path, name));
                return i;
            }
            Some(Token::Punct('*')) => {
                out.push((path, None));
                return i + 1;
            }
            Some(Token::Punct('{')) => {
                i += 1;
                loop {
                    match tokens.get(i).map(|t| &t.token) {
                        None => return i,
                        Some(Token::Punct('}')) => return i + 1,
                        Some(Token::Punct(',')) => i += 1,
                        Some(_) => {
                            let next = use_tree(tokens, i, &path, out);
                            i = if next == i { i + 1 } else { next };
                        }
                    }
                }
            }
            _ => return i,
        }
    }
}

/// The strongly connected components of more than one node (Tarjan's algorithm).
fn strongly_connected<V>(edges: &BTreeMap<(String, String), V>) -> Vec<BTreeSet<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        graph.entry(a).or_default().push(b);
        graph.entry(b).or_default();
    }
    struct State<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(node: &'a str, graph: &BTreeMap<&'a str, Vec<&'a str>>, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(node, n);
        s.low.insert(node, n);
        s.stack.push(node);
        s.on_stack.insert(node);
        for &next in &graph[node] {
            if !s.index.contains_key(next) {
                visit(next, graph, s);
                let low = s.low[node].min(s.low[next]);
                s.low.insert(node, low);
            } else if s.on_stack.contains(next) {
                let low = s.low[node].min(s.index[next]);
                s.low.insert(node, low);
            }
        }
        if s.low[node] == s.index[node] {
            let mut component = BTreeSet::new();
            while let Some(top) = s.stack.pop() {
                s.on_stack.remove(top);
                component.insert(top.to_owned());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for &node in graph.keys() {
        if !state.index.contains_key(node) {
            visit(node, &graph, &mut state);
        }
    }
    state.found
}

#[cfg(test)]
mod tests;
