//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3): the scheme and its
//! parameters, of which the MCP flow reads `resource_metadata`, `scope` and `error`.

use std::collections::BTreeMap;

/// Longest header value parsed; the rest is ignored.
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// One challenge: `Bearer error="insufficient_scope", scope="a b"`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Challenge {
    /// The scheme, lowercased (`bearer`, `dpop`).
    pub scheme: String,
    /// The parameters, names lowercased, values unquoted.
    pub params: BTreeMap<String, String>,
}

impl Challenge {
    /// A parameter's value.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    /// `resource_metadata`: where the protected resource metadata is (RFC 9728 §5.1).
    pub fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata").filter(|v| !v.is_empty())
    }

    /// `scope`, split on spaces.
    pub fn scopes(&self) -> Option<Vec<String>> {
        let scope = self.param("scope")?;
        let scopes: Vec<String> = scope.split_ascii_whitespace().map(str::to_owned).collect();
        (!scopes.is_empty()).then_some(scopes)
    }

    /// `error` (`invalid_token`, `insufficient_scope`, ...).
    pub fn error(&self) -> Option<&str> {
        self.param("error")
    }

    /// The challenge to act on among the values of the `WWW-Authenticate` headers: the first
    /// `Bearer` one, else the first `DPoP` one, else the first of any scheme.
    pub fn pick<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<Challenge> {
        let all: Vec<Challenge> = values.into_iter().flat_map(parse).collect();
        let position = |scheme: &str| all.iter().position(|c| c.scheme == scheme);
        let index = position("bearer").or_else(|| position("dpop")).or((!all.is_empty()).then_some(0))?;
        all.into_iter().nth(index)
    }
}

/// Every challenge of one header value. Malformed parts are skipped, never an error.
pub fn parse(value: &str) -> Vec<Challenge> {
    let mut cut = value.len().min(MAX_HEADER_BYTES);
    while !value.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut lexer = Lexer { s: &value.as_bytes()[..cut], i: 0 };
    let mut out: Vec<Challenge> = Vec::new();
    loop {
        lexer.skip(|b| b == b' ' || b == b'\t' || b == b',');
        let Some(word) = lexer.token() else {
            if lexer.at_end() {
                return out;
            }
            lexer.i += 1; // a stray character: skip it
            continue;
        };
        lexer.skip(|b| b == b' ' || b == b'\t');
        if lexer.peek() == Some(b'=') && !out.is_empty() {
            // `name=value` of the current challenge (or a token68 ending in `=`).
            lexer.i += 1;
            lexer.skip(|b| b == b' ' || b == b'\t');
            let value = if lexer.peek() == Some(b'"') { lexer.quoted() } else { lexer.token().unwrap_or_default() };
            if let Some(current) = out.last_mut() {
                current.params.entry(word.to_ascii_lowercase()).or_insert(value);
            }
        } else {
            out.push(Challenge { scheme: word.to_ascii_lowercase(), params: BTreeMap::new() });
        }
    }
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
}

impl Lexer<'_> {
    fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip(&mut self, pred: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&pred) {
            self.i += 1;
        }
    }

    /// A token (RFC 9110 tchar), or `None` when none starts here.
    fn token(&mut self) -> Option<String> {
        let start = self.i;
        self.skip(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/:".contains(&b));
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// A quoted string, unescaped; an unterminated one runs to the end.
    fn quoted(&mut self) -> String {
        self.i += 1;
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            self.i += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    if let Some(next) = self.peek() {
                        out.push(next);
                        self.i += 1;
                    }
                }
                other => out.push(other),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_mcp_parameters() {
        let c = Challenge::pick([r#"Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="mcp:read mcp:write""#]).unwrap();
        assert_eq!(c.scheme, "bearer");
        assert_eq!(c.resource_metadata(), Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"));
        assert_eq!(c.scopes().unwrap(), ["mcp:read", "mcp:write"]);
        let c = Challenge::pick([r#"Bearer error="insufficient_scope", scope="a\"b c""#]).unwrap();
        assert_eq!(c.error(), Some("insufficient_scope"));
        assert_eq!(c.scopes().unwrap(), ["a\"b", "c"]);
    }

    #[test]
    fn several_challenges_and_odd_input() {
        let all = parse(r#"Basic realm="x", Bearer error=invalid_token, DPoP algs="ES256""#);
        let schemes: Vec<_> = all.iter().map(|c| c.scheme.as_str()).collect();
        assert_eq!(schemes, ["basic", "bearer", "dpop"]);
        assert_eq!(all[1].error(), Some("invalid_token"));
        let picked = Challenge::pick(["DPoP algs=\"ES256\"", "Bearer"]).unwrap();
        assert_eq!(picked.scheme, "bearer");
        assert!(Challenge::pick([""]).is_none());
        for odd in ["\"", "=", "Bearer =", "Bearer a=\"unterminated", ",,,", "Bearer \u{e9}=1", "Bearer a=b=c"] {
            let _ = parse(odd);
        }
        let long = format!("Bearer scope=\"{}\"", "é".repeat(10_000));
        assert!(parse(&long)[0].param("scope").unwrap().len() <= MAX_HEADER_BYTES);
    }
}
