//! A small Rust tokenizer for the module-graph check: identifiers, `::` and single punctuation,
//! each with its line. Comments, string, char and number literals and lifetimes become nothing
//! or an opaque [`Token::Literal`], so that a path in a doc comment or a string is not read as a
//! use of a module.

/// One token of Rust source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// An identifier or keyword (`crate`, `super`, `mod`, `use`, a raw `r#name` without `r#`).
    Ident(String),
    /// `::`.
    PathSep,
    /// Any other punctuation character.
    Punct(char),
    /// A string, char or number literal (its text is not kept).
    Literal,
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spanned {
    /// The token.
    pub token: Token,
    /// Its line.
    pub line: usize,
}

/// The tokens of `source`. Never fails: text it cannot make sense of (an unterminated
/// literal) ends the token stream.
pub fn tokenize(source: &str) -> Vec<Spanned> {
    let chars: Vec<char> = source.chars().collect();
    let mut lexer = Lexer { chars: &chars, at: 0, line: 1, out: Vec::new() };
    lexer.run();
    lexer.out
}

struct Lexer<'a> {
    chars: &'a [char],
    at: usize,
    line: usize,
    out: Vec<Spanned>,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Move past one character, counting lines.
    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn push(&mut self, token: Token, line: usize) {
        self.out.push(Spanned { token, line });
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            let line = self.line;
            match c {
                _ if c.is_whitespace() => {
                    self.bump();
                }
                '/' if self.peek(1) == Some('/') => self.line_comment(),
                '/' if self.peek(1) == Some('*') => self.block_comment(),
                '"' => {
                    self.bump();
                    self.quoted('"');
                    self.push(Token::Literal, line);
                }
                '\'' => self.quote_or_lifetime(line),
                ':' if self.peek(1) == Some(':') => {
                    self.at += 2;
                    self.push(Token::PathSep, line);
                }
                _ if c.is_ascii_digit() => {
                    while self.peek(0).is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        self.bump();
                    }
                    self.push(Token::Literal, line);
                }
                _ if c.is_alphabetic() || c == '_' => self.word(line),
                _ => {
                    self.bump();
                    self.push(Token::Punct(c), line);
                }
            }
        }
    }

    fn line_comment(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.bump();
        }
    }

    fn block_comment(&mut self) {
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            if c == '/' && self.peek(1) == Some('*') {
                depth += 1;
                self.at += 2;
            } else if c == '*' && self.peek(1) == Some('/') {
                self.at += 2;
                depth -= 1;
                if depth == 0 {
                    return;
                }
            } else {
                self.bump();
            }
        }
    }

    /// Skip to the closing `close`, honouring backslash escapes (the opening quote is consumed).
    fn quoted(&mut self, close: char) {
        while let Some(c) = self.bump() {
            if c == '\\' {
                self.bump();
            } else if c == close {
                return;
            }
        }
    }

    /// A raw string after its `r`: `#`s, a quote, and the text up to the quote and as many `#`s.
    fn raw_string(&mut self) {
        let mut hashes = 0;
        while self.peek(0) == Some('#') {
            hashes += 1;
            self.bump();
        }
        if self.bump() != Some('"') {
            return;
        }
        while let Some(c) = self.bump() {
            if c == '"' && (0..hashes).all(|i| self.peek(i) == Some('#')) {
                self.at += hashes;
                return;
            }
        }
    }

    /// `'a'`, `'\n'` and `'"'` are char literals; `'a` and `'static` are lifetimes (skipped).
    fn quote_or_lifetime(&mut self, line: usize) {
        self.bump();
        if self.peek(0) == Some('\\') {
            self.quoted('\'');
            self.push(Token::Literal, line);
        } else if self.peek(1) == Some('\'') {
            self.at += 2;
            self.push(Token::Literal, line);
        } else {
            while self.peek(0).is_some_and(|c| c.is_alphanumeric() || c == '_') {
                self.bump();
            }
        }
    }

    /// An identifier, or the prefix of a byte, C or raw string literal.
    fn word(&mut self, line: usize) {
        let start = self.at;
        while self.peek(0).is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.bump();
        }
        let word: String = self.chars[start..self.at].iter().collect();
        match (word.as_str(), self.peek(0)) {
            ("b" | "c", Some('"')) => {
                self.bump();
                self.quoted('"');
                self.push(Token::Literal, line);
            }
            ("b", Some('\'')) => {
                self.bump();
                self.quoted('\'');
                self.push(Token::Literal, line);
            }
            ("r" | "br" | "cr", Some('"')) => {
                self.raw_string();
                self.push(Token::Literal, line);
            }
            ("r" | "br" | "cr", Some('#')) if self.peek(1) == Some('"') || self.peek(1) == Some('#') => {
                self.raw_string();
                self.push(Token::Literal, line);
            }
            ("r", Some('#')) => {
                // A raw identifier: `r#type` is the identifier `type`.
                self.bump();
                let start = self.at;
                while self.peek(0).is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    self.bump();
                }
                let name: String = self.chars[start..self.at].iter().collect();
                self.push(Token::Ident(name), line);
            }
            _ => self.push(Token::Ident(word), line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(source: &str) -> Vec<String> {
        tokenize(source)
            .into_iter()
            .filter_map(|t| match t.token {
                Token::Ident(name) => Some(name),
                Token::PathSep => Some("::".into()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn comments_strings_and_chars_hide_their_text() {
        let source = "// crate::a\n/* crate::b /* nested */ crate::c */ let s = \"crate::d \\\" crate::e\";\n\
                      let r = r#\"crate::f \"# ; let q = '\"'; let e = '\\''; let l: &'static str = b\"crate::g\";\n\
                      crate::h";
        assert_eq!(
            idents(source),
            ["let", "s", "let", "r", "let", "q", "let", "e", "let", "l", "str", "crate", "::", "h"]
        );
    }

    #[test]
    fn lines_are_counted_through_comments_and_strings() {
        let tokens = tokenize("a\n/* x\ny */ \"p\nq\" b\n  r#type");
        let lines: Vec<(Token, usize)> = tokens.into_iter().map(|t| (t.token, t.line)).collect();
        assert_eq!(
            lines,
            [
                (Token::Ident("a".into()), 1),
                (Token::Literal, 3),
                (Token::Ident("b".into()), 4),
                (Token::Ident("type".into()), 5)
            ]
        );
    }

    #[test]
    fn an_unterminated_literal_ends_the_stream_without_panicking() {
        for source in ["\"open", "r#\"open", "/* open", "'", "b'", "r#", "x::"] {
            let _ = tokenize(source);
        }
    }
}
