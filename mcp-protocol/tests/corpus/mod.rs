//! Support for tests over the captured wire corpus (`<workspace>/../shared/corpus/*.ndjson`): where
//! it lives, the line format its README documents, and a JSON diff that names the first differing
//! JSON pointer.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// The corpus folder: `shared/corpus` next to the workspace root. Panics with the path it tried
/// when the folder is missing.
pub fn dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("the crate sits inside the workspace");
    let dir = workspace.join("..").join("shared").join("corpus");
    assert!(dir.is_dir(), "corpus folder not found at {} (expected <workspace root>/../shared/corpus)", dir.display());
    dir
}

/// Every `*.ndjson` file of the corpus folder, sorted by name.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())).path())
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .collect();
    files.sort();
    files
}

/// One corpus line, with the fields these tests use.
#[derive(Debug, Deserialize)]
pub struct Line {
    /// `stdio`, `streamable-http` or `sse`.
    pub transport: String,
    /// The revision the message was sent under.
    pub protocol_version: String,
    /// `client->server` or `server->client`.
    pub direction: String,
    /// The HTTP exchange, on HTTP transports.
    #[serde(default)]
    pub http: Option<Value>,
    /// The JSON-RPC message as parsed from the wire; `None` on lines that carry none.
    #[serde(default)]
    pub message: Option<Value>,
    /// The exact wire text, when it differs from the compact serialisation of `message`.
    #[serde(default)]
    pub raw: Option<String>,
    /// Coverage class: `request:<method>`, `result:<method>[suffix]`, `error:<method>:<code>`, ...
    pub kind: String,
    /// The session (file name without extension).
    pub session: String,
    /// 0-based line number in the file.
    pub seq: u64,
    /// The stdio process, when a session used more than one.
    #[serde(default)]
    pub connection: Option<u64>,
}

impl Line {
    /// The text the peer sent: `raw` if present, else the compact serialisation of `message`
    /// (key order is preserved, so this is the wire text whenever `raw` is absent).
    pub fn wire_text(&self) -> Option<String> {
        if let Some(raw) = &self.raw {
            return Some(raw.clone());
        }
        self.message.as_ref().map(|m| serde_json::to_string(m).expect("a JSON value serialises"))
    }
}

/// A parsed `kind`: `category:method[suffix]` or `error:method:code`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind<'a> {
    /// `request`, `result`, `notification`, `error`, or a non-message category (`http`, `sse`).
    pub category: &'a str,
    /// The method, `unknown-method`, or e.g. `(http GET)` for errors answering a GET.
    pub method: &'a str,
    /// `input_required`, `task` or `retry-with-inputResponses`.
    pub suffix: Option<&'a str>,
    /// The error code of an `error:` kind.
    pub code: Option<i64>,
}

impl<'a> Kind<'a> {
    /// Split a kind; `None` when it has no `:`.
    pub fn parse(kind: &'a str) -> Option<Kind<'a>> {
        let (category, mut rest) = kind.split_once(':')?;
        let mut code = None;
        if category == "error" {
            let (method, c) = rest.rsplit_once(':')?;
            code = Some(c.parse().ok()?);
            rest = method;
        }
        let (method, suffix) = match rest.strip_suffix(']').and_then(|r| r.rsplit_once('[')) {
            Some((method, suffix)) => (method, Some(suffix)),
            None => (rest, None),
        };
        Some(Kind { category, method, suffix, code })
    }

    /// Whether the kind stands for a method no revision defines.
    pub fn is_unknown_method(&self) -> bool {
        self.method == "unknown-method"
    }
}

/// The first difference between two JSON values, as `pointer: expected X, got Y`; `None` when
/// they are equal. Object key order is not significant (JSON objects are unordered).
pub fn first_difference(expected: &Value, actual: &Value) -> Option<String> {
    let mut path = String::new();
    diff_at(expected, actual, &mut path)
}

fn diff_at(expected: &Value, actual: &Value, path: &mut String) -> Option<String> {
    let here = |path: &str, what: String| Some(format!("{}: {what}", if path.is_empty() { "/" } else { path }));
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, ev) in e {
                let len = path.len();
                write!(path, "/{}", key.replace('~', "~0").replace('/', "~1")).unwrap();
                let d = match a.get(key) {
                    Some(av) => diff_at(ev, av, path),
                    None => here(path, format!("missing, expected {}", short(ev))),
                };
                if d.is_some() {
                    return d;
                }
                path.truncate(len);
            }
            let extra = a.keys().find(|k| !e.contains_key(*k))?;
            here(path, format!("unexpected member {extra:?} = {}", short(&a[extra])))
        }
        (Value::Array(e), Value::Array(a)) => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                let len = path.len();
                write!(path, "/{i}").unwrap();
                if let Some(d) = diff_at(ev, av, path) {
                    return Some(d);
                }
                path.truncate(len);
            }
            if e.len() != a.len() {
                return here(path, format!("expected {} elements, got {}", e.len(), a.len()));
            }
            None
        }
        (e, a) if e == a => None,
        (e, a) => here(path, format!("expected {}, got {}", short(e), short(a))),
    }
}

/// A value shortened for a report line.
pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 { format!("{}…", s.chars().take(80).collect::<String>()) } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_parse() {
        let k = Kind::parse("result:tools/call[input_required]").unwrap();
        assert_eq!((k.category, k.method, k.suffix, k.code), ("result", "tools/call", Some("input_required"), None));
        let k = Kind::parse("error:(http GET):-32000").unwrap();
        assert_eq!((k.category, k.method, k.code), ("error", "(http GET)", Some(-32000)));
        let k = Kind::parse("error:unknown-method:-32601").unwrap();
        assert!(k.is_unknown_method());
        assert_eq!(Kind::parse("sse:empty-object").unwrap().method, "empty-object");
    }

    #[test]
    fn diff_names_the_first_differing_pointer() {
        let e = json!({"a": {"b/c": [1, 2]}, "d": null});
        assert_eq!(first_difference(&e, &e.clone()), None);
        let a = json!({"a": {"b/c": [1, 2.0]}, "d": null});
        assert_eq!(first_difference(&e, &a).unwrap(), "/a/b~1c/1: expected 2, got 2.0");
        let a = json!({"a": {"b/c": [1, 2]}});
        assert_eq!(first_difference(&e, &a).unwrap(), "/d: missing, expected null");
        let a = json!({"a": {"b/c": [1, 2]}, "d": null, "x": 1});
        assert_eq!(first_difference(&e, &a).unwrap(), "/: unexpected member \"x\" = 1");
    }
}
