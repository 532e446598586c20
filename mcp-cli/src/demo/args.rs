//! Reading a tool's arguments: each accessor checks one argument's type and range, and its error
//! names the tool, the argument, what was expected and what came.

use mcp_protocol::types::meta::JsonObject;
use serde_json::Value;

/// The arguments of one tool call.
pub(crate) struct Args<'a> {
    tool: &'a str,
    map: &'a JsonObject,
}

/// A value for an error message, cut short when long.
pub(crate) fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 { text } else { format!("{}…", text.chars().take(60).collect::<String>()) }
}

impl<'a> Args<'a> {
    pub(crate) fn new(tool: &'a str, map: &'a JsonObject) -> Self {
        Args { tool, map }
    }

    fn wrong(&self, key: &str, expected: &str, got: &Value) -> String {
        format!("argument {key:?} of {} must be {expected}, got {}", self.tool, show(got))
    }

    /// Refuse arguments outside `known` (the tools' schemas say `additionalProperties: false`).
    pub(crate) fn only(&self, known: &[&str]) -> Result<(), String> {
        match self.map.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(unknown) if known.is_empty() => Err(format!("{} takes no arguments, got {unknown:?}", self.tool)),
            Some(unknown) => {
                Err(format!("unknown argument {unknown:?} of {} (it takes: {})", self.tool, known.join(", ")))
            }
        }
    }

    fn present(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn required(&self, key: &str) -> Result<&'a Value, String> {
        self.present(key).ok_or_else(|| format!("missing required argument {key:?} of {}", self.tool))
    }

    /// A required string.
    pub(crate) fn string(&self, key: &str) -> Result<&'a str, String> {
        let v = self.required(key)?;
        v.as_str().ok_or_else(|| self.wrong(key, "a string", v))
    }

    /// An optional string.
    pub(crate) fn opt_string(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.present(key) {
            None => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or_else(|| self.wrong(key, "a string", v)),
        }
    }

    /// A required finite number.
    pub(crate) fn number(&self, key: &str) -> Result<f64, String> {
        let v = self.required(key)?;
        v.as_f64().filter(|n| n.is_finite()).ok_or_else(|| self.wrong(key, "a number", v))
    }

    /// An optional integer in `min..=max`, `default` when absent.
    pub(crate) fn integer(&self, key: &str, min: u64, max: u64, default: u64) -> Result<u64, String> {
        let Some(v) = self.present(key) else { return Ok(default) };
        let n = v.as_u64().or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64));
        match n {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(self.wrong(key, &format!("an integer from {min} to {max}"), v)),
        }
    }

    /// A required array of 1 to `max` finite numbers.
    pub(crate) fn numbers(&self, key: &str, max: usize) -> Result<Vec<f64>, String> {
        let v = self.required(key)?;
        let expected = format!("an array of 1 to {max} numbers");
        let items =
            v.as_array().filter(|a| !a.is_empty() && a.len() <= max).ok_or_else(|| self.wrong(key, &expected, v))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_f64()
                    .filter(|n| n.is_finite())
                    .ok_or_else(|| self.wrong(&format!("{key}[{i}]"), "a number", item))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn errors_name_the_tool_the_argument_and_the_value() {
        let m = map(json!({"a": "x", "n": 7.5, "list": [1, "two"], "s": 3, "none": null}));
        let args = Args::new("add", &m);
        assert_eq!(args.number("a").unwrap_err(), r#"argument "a" of add must be a number, got "x""#);
        assert_eq!(args.number("b").unwrap_err(), r#"missing required argument "b" of add"#);
        assert!(args.integer("n", 0, 10, 1).unwrap_err().contains("an integer from 0 to 10, got 7.5"));
        assert_eq!(args.integer("none", 0, 10, 4), Ok(4), "null counts as absent");
        assert!(args.numbers("list", 10).unwrap_err().contains(r#"argument "list[1]" of add must be a number"#));
        assert!(args.opt_string("s").unwrap_err().contains("must be a string, got 3"));
        assert_eq!(args.only(&["a"]).unwrap_err(), r#"unknown argument "n" of add (it takes: a)"#);
    }

    #[test]
    fn good_values_pass() {
        let m = map(json!({"a": 2, "steps": 3.0, "xs": [1, 2.5], "t": "hi"}));
        let args = Args::new("t", &m);
        assert_eq!(args.number("a"), Ok(2.0));
        assert_eq!(args.integer("steps", 1, 5, 1), Ok(3));
        assert_eq!(args.numbers("xs", 5), Ok(vec![1.0, 2.5]));
        assert!(args.numbers("xs", 1).is_err(), "too many");
        assert_eq!(args.string("t"), Ok("hi"));
        assert!(args.only(&["a", "steps", "xs", "t"]).is_ok());
        assert!(show(&json!("y".repeat(100))).ends_with('…'));
    }
}
