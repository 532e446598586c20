//! RFC 6570 URI templates, levels 1 to 3, for routing `resources/read` to the server whose
//! resource template matches: [`UriTemplate`].
//!
//! - [`UriTemplate::parse`] accepts every operator of levels 1-3 (none, `+`, `#`, `.`, `/`, `;`,
//!   `?`, `&`). The level-4 modifiers are accepted too: a prefix `{var:3}` is applied by
//!   [`expand`](UriTemplate::expand); an explode `{var*}` changes nothing for the string values
//!   this module handles. The operators RFC 6570 reserves for future use (`=`, `,`, `!`, `@`,
//!   `|`) are rejected, as are an unclosed `{`, a stray `}`, an empty expression and an invalid
//!   variable name. A template longer than [`MAX_TEMPLATE_LEN`] bytes or with more than
//!   [`MAX_EXPRESSIONS`] expressions is rejected.
//! - [`UriTemplate::expand`] follows the RFC's encoding rules for each operator.
//! - [`UriTemplate::matches`] is the inverse: the variables a URI binds, percent-decoded (see
//!   its documentation for the exact rules), with bounded backtracking.
//! - [`UriTemplate::specificity`] ranks templates so the most literal one wins when several
//!   match.

mod matching;
#[cfg(test)]
mod tests;

use std::fmt;

pub use matching::MATCH_BUDGET;

/// The longest template [`UriTemplate::parse`] accepts, in bytes.
pub const MAX_TEMPLATE_LEN: usize = 8 * 1024;
/// The most expressions a template may have.
pub const MAX_EXPRESSIONS: usize = 128;
/// The largest prefix modifier (`{var:9999}`), as RFC 6570 allows.
const MAX_PREFIX: usize = 9999;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

/// Why a template did not parse. Positions are byte offsets into the template.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// A `{` with no `}` after it.
    #[error("unclosed expression: the `{{` at byte {position} has no `}}`")]
    Unclosed {
        /// Where the `{` is.
        position: usize,
    },
    /// A `}` with no `{` before it.
    #[error("stray `}}` at byte {position}")]
    StrayClose {
        /// Where the `}` is.
        position: usize,
    },
    /// A `{` inside an expression.
    #[error("nested `{{` at byte {position}")]
    Nested {
        /// Where the inner `{` is.
        position: usize,
    },
    /// `{}`, or an expression with an operator and no variable.
    #[error("empty expression at byte {position}")]
    Empty {
        /// Where the expression starts.
        position: usize,
    },
    /// An operator that RFC 6570 reserves for future use.
    #[error("reserved operator `{operator}` at byte {position}")]
    ReservedOperator {
        /// The operator.
        operator: char,
        /// Where the expression starts.
        position: usize,
    },
    /// A variable name that is not `ALPHA / DIGIT / "_" / pct-encoded`, dot-separated.
    #[error("invalid variable name `{name}` in the expression at byte {position}")]
    InvalidVariable {
        /// The name as written (with any modifier).
        name: String,
        /// Where the expression starts.
        position: usize,
    },
    /// A prefix modifier that is not a number from 1 to 9999.
    #[error("invalid prefix modifier `{modifier}` in the expression at byte {position}")]
    InvalidPrefix {
        /// The modifier as written.
        modifier: String,
        /// Where the expression starts.
        position: usize,
    },
    /// The template is longer than [`MAX_TEMPLATE_LEN`].
    #[error("template of {len} bytes is longer than the {max} bytes allowed")]
    TooLong {
        /// The template's length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The template has more than [`MAX_EXPRESSIONS`] expressions.
    #[error("template has more than {max} expressions")]
    TooManyExpressions {
        /// The limit.
        max: usize,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// Literal text: as written, and as expansion writes it (characters not allowed in a URI
    /// percent-encoded). Matching accepts either.
    Literal {
        raw: String,
        encoded: String,
    },
    Expression(Expression),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Expression {
    op: Operator,
    vars: Vec<VarSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    /// The level-4 prefix modifier; an explode modifier is parsed and dropped (it changes
    /// nothing for string values).
    prefix: Option<usize>,
}

/// The operators of levels 1-3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryContinuation,
}

impl Operator {
    fn from_char(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParam,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    /// What expansion writes before the first defined value (RFC 6570 appendix A, `first`).
    fn first(self) -> Option<char> {
        match self {
            Operator::Simple | Operator::Reserved => None,
            Operator::Fragment => Some('#'),
            Operator::Label => Some('.'),
            Operator::Path => Some('/'),
            Operator::PathParam => Some(';'),
            Operator::Query => Some('?'),
            Operator::QueryContinuation => Some('&'),
        }
    }

    /// What expansion writes between values (`sep`).
    fn separator(self) -> char {
        match self {
            Operator::Simple | Operator::Reserved | Operator::Fragment => ',',
            Operator::Label => '.',
            Operator::Path => '/',
            Operator::PathParam => ';',
            Operator::Query | Operator::QueryContinuation => '&',
        }
    }

    /// Whether values are written as `name=value` (`named`).
    fn named(self) -> bool {
        matches!(self, Operator::PathParam | Operator::Query | Operator::QueryContinuation)
    }

    /// What a named empty value is written as after its name (`ifemp`).
    fn if_empty(self) -> &'static str {
        match self {
            Operator::Query | Operator::QueryContinuation => "=",
            _ => "",
        }
    }

    /// Whether reserved characters and percent-encoded triplets pass unencoded (`allow` U+R).
    fn allows_reserved(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment)
    }

    /// How wide a match the operator allows: `+` and `#` match across `/`, `?` and `#`.
    fn is_wide(self) -> bool {
        self.allows_reserved()
    }
}

impl UriTemplate {
    /// Parses `template` (see the [module documentation](self) for what is accepted).
    pub fn parse(template: &str) -> Result<UriTemplate, TemplateError> {
        if template.len() > MAX_TEMPLATE_LEN {
            return Err(TemplateError::TooLong { len: template.len(), max: MAX_TEMPLATE_LEN });
        }
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut expressions = 0usize;
        let mut rest = template.char_indices();
        while let Some((position, c)) = rest.next() {
            match c {
                '{' => {
                    let body_start = position + 1;
                    let mut body_end = None;
                    for (i, c) in rest.by_ref() {
                        match c {
                            '}' => {
                                body_end = Some(i);
                                break;
                            }
                            '{' => return Err(TemplateError::Nested { position: i }),
                            _ => {}
                        }
                    }
                    let body_end = body_end.ok_or(TemplateError::Unclosed { position })?;
                    expressions += 1;
                    if expressions > MAX_EXPRESSIONS {
                        return Err(TemplateError::TooManyExpressions { max: MAX_EXPRESSIONS });
                    }
                    if !literal.is_empty() {
                        parts.push(literal_part(std::mem::take(&mut literal)));
                    }
                    parts.push(Part::Expression(parse_expression(&template[body_start..body_end], position)?));
                }
                '}' => return Err(TemplateError::StrayClose { position }),
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            parts.push(literal_part(literal));
        }
        Ok(UriTemplate { source: template.to_owned(), parts })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of the template's variables, in order of first appearance.
    pub fn variables(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for var in self.expressions().flat_map(|e| &e.vars) {
            if !names.contains(&var.name.as_str()) {
                names.push(&var.name);
            }
        }
        names
    }

    /// Whether the template has no expression (it matches one URI only).
    pub fn is_literal(&self) -> bool {
        self.expressions().next().is_none()
    }

    /// The URI for the variables `vars` gives (`None` is an undefined variable, which the RFC
    /// leaves out with its operator's prefix and separator; `Some("")` is defined and empty).
    pub fn expand(&self, vars: &dyn Fn(&str) -> Option<String>) -> String {
        let mut out = String::with_capacity(self.source.len());
        for part in &self.parts {
            match part {
                Part::Literal { encoded, .. } => out.push_str(encoded),
                Part::Expression(expression) => expand_expression(expression, vars, &mut out),
            }
        }
        out
    }

    /// How specific the template is; compare two: the greater one is more specific and should
    /// win when both match a URI.
    pub fn specificity(&self) -> Specificity {
        let literal_chars =
            self.parts.iter().map(|p| if let Part::Literal { raw, .. } = p { raw.chars().count() } else { 0 }).sum();
        let expressions = self.expressions().count();
        let wide = self.expressions().filter(|e| e.op.is_wide()).count();
        Specificity { literal_chars, narrow: usize::MAX - wide, few: usize::MAX - expressions }
    }

    fn expressions(&self) -> impl Iterator<Item = &Expression> {
        self.parts.iter().filter_map(|p| if let Part::Expression(e) = p { Some(e) } else { None })
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl std::str::FromStr for UriTemplate {
    type Err = TemplateError;

    fn from_str(template: &str) -> Result<Self, Self::Err> {
        UriTemplate::parse(template)
    }
}

/// The rank of a template for routing: more literal characters first, then fewer `+`/`#`
/// expressions (which match across `/`), then fewer expressions. Greater is more specific.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Specificity {
    literal_chars: usize,
    narrow: usize,
    few: usize,
}

impl Specificity {
    /// How many literal characters the template has.
    pub fn literal_chars(&self) -> usize {
        self.literal_chars
    }
}

fn literal_part(raw: String) -> Part {
    let mut encoded = String::with_capacity(raw.len());
    encode_into(&raw, true, &mut encoded);
    Part::Literal { raw, encoded }
}

fn parse_expression(body: &str, position: usize) -> Result<Expression, TemplateError> {
    let mut chars = body.chars();
    let first = chars.next().ok_or(TemplateError::Empty { position })?;
    let (op, list) = if let Some(op) = Operator::from_char(first) {
        (op, chars.as_str())
    } else if matches!(first, '=' | ',' | '!' | '@' | '|') {
        return Err(TemplateError::ReservedOperator { operator: first, position });
    } else {
        (Operator::Simple, body)
    };
    if list.is_empty() {
        return Err(TemplateError::Empty { position });
    }
    let vars = list.split(',').map(|spec| parse_varspec(spec, position)).collect::<Result<_, _>>()?;
    Ok(Expression { op, vars })
}

fn parse_varspec(spec: &str, position: usize) -> Result<VarSpec, TemplateError> {
    let invalid = || TemplateError::InvalidVariable { name: spec.to_owned(), position };
    let (name, prefix) = if let Some(name) = spec.strip_suffix('*') {
        (name, None)
    } else if let Some((name, modifier)) = spec.split_once(':') {
        let prefix = modifier
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_PREFIX).contains(n) && modifier.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| TemplateError::InvalidPrefix { modifier: modifier.to_owned(), position })?;
        (name, Some(prefix))
    } else {
        (spec, None)
    };
    if !valid_varname(name) {
        return Err(invalid());
    }
    Ok(VarSpec { name: name.to_owned(), prefix })
}

/// `varname = varchar *( ["."] varchar )`, `varchar = ALPHA / DIGIT / "_" / pct-encoded`.
fn valid_varname(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes[0] == b'.' || bytes[bytes.len() - 1] == b'.' {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'.' if bytes[i - 1] == b'.' => return false,
            b'%' => {
                if !(i + 2 < bytes.len() && is_hex(bytes[i + 1]) && is_hex(bytes[i + 2])) {
                    return false;
                }
                i += 2;
            }
            b if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

fn expand_expression(expression: &Expression, vars: &dyn Fn(&str) -> Option<String>, out: &mut String) {
    let op = expression.op;
    let mut first = true;
    for var in &expression.vars {
        let Some(value) = vars(&var.name) else {
            continue;
        };
        if first {
            if let Some(c) = op.first() {
                out.push(c);
            }
            first = false;
        } else {
            out.push(op.separator());
        }
        if op.named() {
            out.push_str(&var.name);
            if value.is_empty() {
                out.push_str(op.if_empty());
                continue;
            }
            out.push('=');
        }
        let value = match var.prefix {
            Some(max) => value.char_indices().nth(max).map_or(value.as_str(), |(cut, _)| &value[..cut]),
            None => value.as_str(),
        };
        encode_into(value, op.allows_reserved(), out);
    }
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_reserved(b: u8) -> bool {
    matches!(
        b,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

/// Appends `text` percent-encoded: unreserved characters pass, and with `allow_reserved` so do
/// reserved characters and existing `%XX` triplets; every other byte becomes `%XX` (uppercase).
fn encode_into(text: &str, allow_reserved: bool, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let triplet = b == b'%' && i + 2 < bytes.len() && is_hex(bytes[i + 1]) && is_hex(bytes[i + 2]);
        if is_unreserved(b) || (allow_reserved && (is_reserved(b) || triplet)) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xF)] as char);
        }
        i += 1;
    }
}
