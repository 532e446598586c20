//! Matching a URI against a template: [`UriTemplate::matches`].

use std::collections::HashSet;

use super::{Expression, Operator, Part, UriTemplate, is_hex};

/// The work one match may do, counted in candidate positions tried plus bytes examined. A match
/// that needs more is reported as no match; ordinary templates need a few hundred.
pub const MATCH_BUDGET: usize = 1 << 20;

impl UriTemplate {
    /// The variables `uri` binds, percent-decoded and in the template's order, or `None` when
    /// the URI does not match.
    ///
    /// - literals must match exactly, as written or as expansion writes them;
    /// - a simple `{var}` matches any text without `/`, `?` or `#` (the expression's values are
    ///   split on `,`, the last variable taking the rest); `{.var}` and `{;var}` likewise, with
    ///   their prefix; `{/var}` matches `/`-separated segments, one per variable;
    /// - `{+var}` and `{#var}` may match across `/`, `?` and `#`;
    /// - `{?a,b}` and `{&a,b}` match a query of `name=value` pairs (or a bare `name`, which is
    ///   empty) with names from the expression, any subset in any order, each at most once; a
    ///   name the expression does not list fails the match;
    /// - a variable bound to nothing is left out, except that an empty simple or `+` expression
    ///   binds its first variable to the empty string (the RFC cannot tell an empty value from
    ///   an undefined one there);
    /// - a variable used twice must match the same value twice;
    /// - a value whose percent-decoding is not UTF-8 fails the match;
    /// - prefix modifiers are ignored: `{var:3}` matches like `{var}`.
    ///
    /// Backtracking tries the longest region for each expression first and remembers positions
    /// that failed; the whole match is capped at [`MATCH_BUDGET`] units of work, beyond which
    /// the URI is reported as not matching (hostile templates and URIs finish fast).
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut matcher = Matcher {
            parts: &self.parts,
            uri,
            budget: MATCH_BUDGET,
            memoize: !self.has_repeated_variables(),
            failed: HashSet::new(),
            bindings: Vec::new(),
        };
        match matcher.from(0, 0) {
            Ok(true) => {
                let order = self.variables();
                let mut bindings = matcher.bindings;
                bindings.sort_by_key(|(name, _)| order.iter().position(|n| n == name));
                Some(bindings)
            }
            Ok(false) | Err(Exhausted) => None,
        }
    }

    fn has_repeated_variables(&self) -> bool {
        let count = self.expressions().map(|e| e.vars.len()).sum::<usize>();
        self.variables().len() != count
    }
}

/// The budget ran out.
struct Exhausted;

struct Matcher<'a> {
    parts: &'a [Part],
    uri: &'a str,
    budget: usize,
    /// Whether failed `(part, position)` states may be remembered: sound unless a variable
    /// appears twice (then a state's outcome depends on earlier bindings).
    memoize: bool,
    failed: HashSet<(usize, usize)>,
    bindings: Vec<(String, String)>,
}

impl Matcher<'_> {
    fn charge(&mut self, units: usize) -> Result<(), Exhausted> {
        self.budget = self.budget.checked_sub(units).ok_or(Exhausted)?;
        Ok(())
    }

    /// Whether parts `part..` match the URI from byte `pos` to its end.
    fn from(&mut self, part: usize, pos: usize) -> Result<bool, Exhausted> {
        let Some(current) = self.parts.get(part) else {
            return Ok(pos == self.uri.len());
        };
        if self.memoize && self.failed.contains(&(part, pos)) {
            return Ok(false);
        }
        self.charge(1)?;
        let matched = match current {
            Part::Literal { raw, encoded } => {
                let rest = &self.uri[pos..];
                self.charge(raw.len())?;
                (rest.starts_with(raw.as_str()) && self.from(part + 1, pos + raw.len())?)
                    || (encoded != raw
                        && rest.starts_with(encoded.as_str())
                        && self.from(part + 1, pos + encoded.len())?)
            }
            Part::Expression(expression) => self.expression(expression, part, pos)?,
        };
        if !matched && self.memoize {
            self.failed.insert((part, pos));
        }
        Ok(matched)
    }

    fn expression(&mut self, expression: &Expression, part: usize, pos: usize) -> Result<bool, Exhausted> {
        let rest = &self.uri[pos..];
        let limit = pos + region_limit(expression.op, rest);
        let last = part + 1 == self.parts.len();
        let next_literal = match self.parts.get(part + 1) {
            Some(Part::Literal { raw, encoded }) => Some((raw.as_str(), encoded.as_str())),
            _ => None,
        };
        // The last expression must reach the end of the URI: one candidate only.
        let shortest = if last { self.uri.len() } else { pos };
        for end in (shortest..=limit).rev() {
            self.charge(1)?;
            if !self.uri.is_char_boundary(end) {
                continue;
            }
            if let Some((raw, encoded)) = next_literal {
                let after = &self.uri[end..];
                if !after.starts_with(raw) && !after.starts_with(encoded) {
                    continue;
                }
            }
            self.charge(end - pos)?;
            let mark = self.bindings.len();
            if self.bind(expression, &self.uri[pos..end]) && self.from(part + 1, end)? {
                return Ok(true);
            }
            self.bindings.truncate(mark);
        }
        Ok(false)
    }

    /// Binds the variables of `expression` from the URI text `region` it would expand to.
    fn bind(&mut self, expression: &Expression, region: &str) -> bool {
        let op = expression.op;
        let vars = &expression.vars;
        if region.is_empty() {
            return match op {
                Operator::Simple | Operator::Reserved => self.push(&vars[0].name, ""),
                _ => true,
            };
        }
        let body = match op.first() {
            Some(first) => match region.strip_prefix(first) {
                Some(body) => body,
                None => return false,
            },
            None => region,
        };
        match op {
            Operator::Simple | Operator::Reserved | Operator::Fragment => {
                for (var, value) in vars.iter().zip(body.splitn(vars.len(), ',')) {
                    if !self.push_encoded(&var.name, value) {
                        return false;
                    }
                }
                true
            }
            Operator::Label | Operator::Path => {
                let values: Vec<&str> = body.split(op.separator()).collect();
                values.len() <= vars.len()
                    && vars.iter().zip(values).all(|(var, value)| self.push_encoded(&var.name, value))
            }
            Operator::PathParam | Operator::Query | Operator::QueryContinuation => {
                let mut seen: Vec<&str> = Vec::new();
                for item in body.split(op.separator()) {
                    let (name, value) = item.split_once('=').unwrap_or((item, ""));
                    if seen.contains(&name) || !vars.iter().any(|v| v.name == name) {
                        return false;
                    }
                    seen.push(name);
                    if !self.push_encoded(name, value) {
                        return false;
                    }
                }
                true
            }
        }
    }

    fn push_encoded(&mut self, name: &str, encoded: &str) -> bool {
        match percent_decode(encoded) {
            Some(value) => self.push(name, &value),
            None => false,
        }
    }

    /// Records `name = value`; a name bound before must have the same value.
    fn push(&mut self, name: &str, value: &str) -> bool {
        match self.bindings.iter().find(|(n, _)| n == name) {
            Some((_, bound)) => bound == value,
            None => {
                self.bindings.push((name.to_owned(), value.to_owned()));
                true
            }
        }
    }
}

/// How many bytes of `rest` an expression with `op` may span at most.
fn region_limit(op: Operator, rest: &str) -> usize {
    if let Some(first) = op.first()
        && !rest.starts_with(first)
    {
        return 0;
    }
    let stop: &[char] = match op {
        Operator::Reserved | Operator::Fragment => &[],
        Operator::Simple | Operator::Label | Operator::PathParam => &['/', '?', '#'],
        Operator::Path => &['?', '#'],
        Operator::Query | Operator::QueryContinuation => &['#'],
    };
    rest.find(stop).unwrap_or(rest.len())
}

/// Decodes `%XX` triplets; a `%` that starts no triplet stays as it is. `None` when the bytes
/// are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() && is_hex(bytes[i + 1]) && is_hex(bytes[i + 2]) {
            out.push(hex_value(bytes[i + 1]) << 4 | hex_value(bytes[i + 2]));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    }
}
