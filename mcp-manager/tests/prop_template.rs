//! Property tests of the RFC 6570 URI template matcher ([`UriTemplate`]): no template text and no
//! URI makes parsing, expansion or matching panic; what a match binds is bounded by the URI; and
//! a template expanded with values, then matched against the URI it produced, gives the values
//! back.
//!
//! Each property runs a modest number of cases (CI runs them with a fixed seed, see `cargo xtask
//! ci`); `PROPTEST_CASES` and `PROPTEST_RNG_SEED` override both (`cargo xtask fuzz template`).

use mcp_manager::manager::template::{MAX_TEMPLATE_LEN, TemplateError, UriTemplate};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

/// This file's configuration: `cases` unless `PROPTEST_CASES` says otherwise.
fn config(cases: u32) -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    config
}

/// Template-ish text: braces, operators, modifiers, percent signs and a little of everything.
fn template_ish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => prop::sample::select(vec![
            "{", "}", "+", "#", ".", "/", ";", "?", "&", ",", ":", "*", "=", "!", "@", "|", "%", "%4", "%41", "3",
            "9999", "10000", "a", "b", "_", "é", " ", "\u{0}",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z0-9]{1,4}",
        1 => any::<String>(),
    ];
    vec(piece, 0..24).prop_map(|parts| parts.concat())
}

/// URI-ish text: the characters matching treats specially, percent triplets (valid or not,
/// some decoding to invalid UTF-8) and arbitrary text.
fn uri_ish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => prop::sample::select(vec![
            "/", "?", "#", "&", "=", ";", ".", ",", "%", "%2", "%2F", "%C3%A9", "%FF", "%C3", "a", "b", "x", "é", "",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z0-9]{1,6}",
        1 => any::<String>(),
    ];
    vec(piece, 0..32).prop_map(|parts| parts.concat())
}

/// The byte offset an error points at, when it has one.
fn error_position(e: &TemplateError) -> Option<usize> {
    match e {
        TemplateError::Unclosed { position }
        | TemplateError::StrayClose { position }
        | TemplateError::Nested { position }
        | TemplateError::Empty { position }
        | TemplateError::ReservedOperator { position, .. }
        | TemplateError::InvalidVariable { position, .. }
        | TemplateError::InvalidPrefix { position, .. } => Some(*position),
        _ => None,
    }
}

/// One segment of a path template: literal text, or a simple expression of its own variable.
#[derive(Debug, Clone)]
enum Segment {
    Literal(String),
    Variable(String),
}

/// A template `x://h/<segments joined by />{?q,r}{#f}` (the query and fragment optional), the
/// value of every segment variable, and the values of `q`, `r` and `f` (`None`: undefined).
#[derive(Debug, Clone)]
struct PathCase {
    segments: Vec<(Segment, String)>,
    query: Option<(Option<String>, Option<String>)>,
    fragment: Option<Option<String>>,
}

impl PathCase {
    fn template(&self) -> String {
        let mut template = String::from("x://h/");
        for (i, (segment, _)) in self.segments.iter().enumerate() {
            if i > 0 {
                template.push('/');
            }
            match segment {
                Segment::Literal(text) => template.push_str(text),
                Segment::Variable(name) => template.push_str(&format!("{{{name}}}")),
            }
        }
        if self.query.is_some() {
            template.push_str("{?q,r}");
        }
        if self.fragment.is_some() {
            template.push_str("{#f}");
        }
        template
    }

    fn value(&self, name: &str) -> Option<String> {
        match name {
            "q" => self.query.as_ref().and_then(|(q, _)| q.clone()),
            "r" => self.query.as_ref().and_then(|(_, r)| r.clone()),
            "f" => self.fragment.clone().flatten(),
            _ => self.segments.iter().find_map(|(segment, value)| match segment {
                Segment::Variable(n) if n == name => Some(value.clone()),
                _ => None,
            }),
        }
    }

    /// The bindings a match must give: every defined variable, in template order.
    fn expected(&self) -> Vec<(String, String)> {
        let mut names: Vec<String> = self
            .segments
            .iter()
            .filter_map(|(segment, _)| match segment {
                Segment::Variable(name) => Some(name.clone()),
                Segment::Literal(_) => None,
            })
            .collect();
        names.extend(["q", "r", "f"].map(str::to_owned));
        names.into_iter().filter_map(|name| self.value(&name).map(|value| (name, value))).collect()
    }
}

fn path_case() -> impl Strategy<Value = PathCase> {
    // Any text: a simple expression percent-encodes everything but the unreserved characters.
    let any_value = prop_oneof![any::<String>(), "[a-zA-Z0-9 ./?#&=,;%é-]{0,10}"];
    // `{#f}` lets reserved characters and `%XX` triplets through unencoded, so a `%` in its value
    // could not be told from an encoded byte: leave it out.
    let fragment_value = "[a-zA-Z0-9 ./?#&=,;:@!$'()*+é-]{0,10}";
    let segment = prop_oneof![
        "[a-z0-9é ]{1,6}".prop_map(Segment::Literal),
        // Distinct names: the index is appended below.
        Just(Segment::Variable(String::new())),
    ];
    (
        vec((segment, any_value.clone()), 0..6),
        option::of((option::of(any_value.clone()), option::of(any_value))),
        option::of(option::of(fragment_value)),
    )
        .prop_map(|(segments, query, fragment)| {
            let segments = segments
                .into_iter()
                .enumerate()
                .map(|(i, (segment, value))| match segment {
                    Segment::Variable(_) => (Segment::Variable(format!("v{i}")), value),
                    literal => (literal, value),
                })
                .collect();
            PathCase { segments, query, fragment }
        })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn parsing_any_text_never_panics(text in template_ish()) {
        match UriTemplate::parse(&text) {
            Ok(template) => {
                prop_assert_eq!(template.as_str(), text.as_str());
                prop_assert_eq!(UriTemplate::parse(template.as_str()), Ok(template.clone()));
                prop_assert!(text.len() <= MAX_TEMPLATE_LEN);
            }
            Err(e) => {
                prop_assert!(!e.to_string().is_empty());
                if let Some(position) = error_position(&e) {
                    prop_assert!(position < text.len(), "{:?} points past {:?}", e, text);
                    prop_assert!(text.is_char_boundary(position));
                }
            }
        }
    }

    #[test]
    fn matching_any_uri_never_panics_and_binds_only_what_the_uri_holds(
        text in template_ish(),
        uri in uri_ish(),
        value in uri_ish(),
    ) {
        let Ok(template) = UriTemplate::parse(&text) else { return Ok(()) };
        if let Some(bindings) = template.matches(&uri) {
            let names = template.variables();
            prop_assert!(bindings.len() <= names.len());
            for (name, bound) in &bindings {
                prop_assert!(names.contains(&name.as_str()), "{} is not a variable of {}", name, text);
                // Percent-decoding only shortens.
                prop_assert!(bound.len() <= uri.len());
            }
        }
        // Expansion, and matching what it gives, must not panic either.
        let expanded = template.expand(&|_| Some(value.clone()));
        let _ = template.matches(&expanded);
    }

    #[test]
    fn an_expanded_path_template_matches_back_to_its_values(case in path_case()) {
        let text = case.template();
        let template = UriTemplate::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let uri = template.expand(&|name| case.value(name));
        prop_assert_eq!(template.matches(&uri), Some(case.expected()), "template {} uri {}", text, uri);
    }
}
