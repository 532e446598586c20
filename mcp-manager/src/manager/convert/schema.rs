//! Local JSON Schema checks of tool arguments and structured content: [`SchemaCheck`].

use std::fmt;
use std::sync::{Arc, OnceLock};

use jsonschema::{Draft, PatternOptions, Retrieve, Uri, ValidationError, Validator};
use mcp_protocol::types::meta::JsonObject;
use serde_json::Value;

/// How many problems a failed check reports (the rest are counted).
const REPORTED_ERRORS: usize = 3;
/// How many problems a failed check counts at most.
const COUNTED_ERRORS: usize = 100;
/// The longest description of one problem, in bytes (the rest is cut, as values can be large).
const MAX_PROBLEM_LEN: usize = 300;
/// The backtracking budget of one `pattern` match: server schemas are untrusted, and a hostile
/// pattern must not take the host's time.
const REGEX_BACKTRACK_LIMIT: usize = 100_000;
/// The compiled-size budget of one `pattern`, in bytes.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A compiled JSON Schema: compile once per tool, check each value cheaply, share freely (it is
/// `Send`, `Sync` and cheap to clone).
///
/// The dialect is the one the schema's `$schema` names, and 2020-12 (the MCP default) when it
/// names none or one this crate does not know. `format` is an annotation, not checked.
///
/// **References are never fetched.** A `$ref` to anything outside the schema itself (an `http`,
/// `https` or `file` URI, a relative reference to another document) makes [`compile`] fail with
/// an error naming the reference, and no network or file access happens. A caller that gets
/// such an error treats the schema as one it cannot check (the server still validates).
///
/// **A schema every object matches gets no validator** (`{"type": "object", "properties": {}}`,
/// with at most a title, a description and a `$schema` besides: a tool without parameters). An
/// object passes without one; a value that is not an object is described by the validator,
/// compiled then, once.
///
/// **Schemas are screened first.** A schema is peer input: [`compile`] refuses one that
/// [`screen_schema`] refuses (too deep, too large, a `$ref` cycle that consumes no input, an
/// unfolding that applies too many subschemas) before the validator sees it. A host gets a
/// check that fails every value with the reason from [`SchemaCheck::untrusted`], which is what
/// the manager uses for tool schemas.
///
/// [`compile`]: SchemaCheck::compile
/// [`screen_schema`]: super::screen_schema
#[derive(Clone)]
pub struct SchemaCheck {
    inner: Arc<Check>,
}

enum Check {
    Compiled(Validator),
    /// A schema that every object matches (`{"type": "object", "properties": {}}`, the schema of
    /// a tool without parameters): an object is checked without a validator, and the validator
    /// is compiled (once) only to describe a value that is not an object. Most tools a host
    /// calls once or twice; compiling their validator runs about two megabytes of code.
    EveryObject {
        schema: Value,
        validator: OnceLock<Option<Validator>>,
        options: SchemaOptions,
    },
    /// A schema refused by the screening: every value fails with this reason.
    Refused(String),
}

impl fmt::Debug for SchemaCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaCheck").finish_non_exhaustive()
    }
}

/// The retriever of [`SchemaCheck`]: refuses every external document, whatever its scheme.
struct NoRetrieval;

impl Retrieve for NoRetrieval {
    fn retrieve(&self, uri: &Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!(
            "external schema `{}` is not fetched (only references inside the schema are followed)",
            uri.as_str()
        )
        .into())
    }
}

/// How [`SchemaCheck::compile_with`] compiles a schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchemaOptions {
    /// Check `format` (`email`, `date`, `uri`, ...) as an assertion rather than an annotation
    /// (default false, as for tool schemas; elicitation forms check it).
    pub check_formats: bool,
}

/// Why [`SchemaCheck::compile_with`] gives no check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaError {
    /// The screening refused the schema (hostile or too large): the reason.
    Refused(String),
    /// Not a schema the validator accepts: the problem and where it is.
    Invalid(String),
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::Refused(reason) => write!(f, "refused: {reason}"),
            SchemaError::Invalid(problem) => f.write_str(problem),
        }
    }
}

impl std::error::Error for SchemaError {}

impl SchemaCheck {
    /// Compiles `schema`. An invalid schema (one its meta-schema rejects, a `$ref` that does not
    /// resolve inside the schema, a `pattern` that does not compile) gives an error naming the
    /// problem and where it is in the schema; so does one the screening refuses (`refused: ...`).
    pub fn compile(schema: &JsonObject) -> Result<SchemaCheck, String> {
        SchemaCheck::compile_with(schema, SchemaOptions::default()).map_err(|e| e.to_string())
    }

    /// Compiles `schema` with `options`, with the same screening, dialect fallback, reference
    /// rule and `pattern` budget as [`SchemaCheck::compile`]; the error tells a refused schema
    /// from an invalid one.
    pub fn compile_with(schema: &JsonObject, options: SchemaOptions) -> Result<SchemaCheck, SchemaError> {
        SchemaCheck::screen_and_compile(schema, options)
    }

    /// The check of a schema that `server` sent for `subject` (`the inputSchema of tool
    /// `add``): compiled when it can be; a check that fails every value when the screening
    /// refuses it (the reason names the server, the subject and the problem, and is logged once
    /// as a warning); `None`, after a warning, when it is not a valid schema (then values are
    /// not checked here: the server still checks them).
    pub fn untrusted(server: &str, subject: &str, schema: &JsonObject) -> Option<SchemaCheck> {
        match SchemaCheck::screen_and_compile(schema, SchemaOptions::default()) {
            Ok(check) => Some(check),
            Err(SchemaError::Refused(reason)) => {
                let reason = format!("server `{server}`: {subject} is refused: {reason}");
                tracing::warn!(server, "{reason}");
                Some(SchemaCheck::refused(reason))
            }
            Err(SchemaError::Invalid(error)) => {
                tracing::warn!(server, %error, "{subject} does not compile; it is not checked");
                None
            }
        }
    }

    /// A check that fails every value with `reason`.
    pub fn refused(reason: impl Into<String>) -> SchemaCheck {
        SchemaCheck { inner: Arc::new(Check::Refused(reason.into())) }
    }

    /// Why the schema was refused, for a check made by [`SchemaCheck::refused`].
    pub fn refusal(&self) -> Option<&str> {
        match &*self.inner {
            Check::Refused(reason) => Some(reason),
            Check::Compiled(_) | Check::EveryObject { .. } => None,
        }
    }

    fn screen_and_compile(schema: &JsonObject, settings: SchemaOptions) -> Result<SchemaCheck, SchemaError> {
        // Screened before anything else touches it: even cloning a hostile schema recurses.
        super::screen_schema(schema).map_err(SchemaError::Refused)?;
        if matches_every_object(schema) {
            let schema = Value::Object(schema.clone());
            return Ok(SchemaCheck {
                inner: Arc::new(Check::EveryObject { schema, validator: OnceLock::new(), options: settings }),
            });
        }
        let schema = Value::Object(schema.clone());
        Ok(SchemaCheck { inner: Arc::new(Check::Compiled(build_validator(schema, settings)?)) })
    }

    /// The validator behind the check: compiled when the check was made, or now (once) for a
    /// schema every object matches; `None` for a refused schema.
    fn validator(&self) -> Option<&Validator> {
        match &*self.inner {
            Check::Compiled(validator) => Some(validator),
            Check::EveryObject { schema, validator, options } => {
                // Recognised as valid in every dialect, the schema compiles; were it refused after
                // all, no value would be described as failing (as with any schema that does not
                // compile, which is not checked).
                validator.get_or_init(|| build_validator(schema.clone(), *options).ok()).as_ref()
            }
            Check::Refused(_) => None,
        }
    }

    /// Checks `value`. On a mismatch the error lists the first few problems, each as `at <JSON
    /// path>: <problem>` (the path is a JSON pointer into `value`, `the root` for the value
    /// itself), joined with `; `, and says how many more there are.
    /// A refused schema fails every value with its reason.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        if let Check::Refused(reason) = &*self.inner {
            return Err(reason.clone());
        }
        if self.matches_as_object(value) {
            return Ok(());
        }
        let Some(validator) = self.validator() else { return Ok(()) };
        // Most values are valid: the plain check builds no error to find that out.
        if validator.is_valid(value) {
            return Ok(());
        }
        let mut errors = validator.iter_errors(value);
        let Some(first) = errors.next() else {
            return Ok(());
        };
        let mut reported = vec![describe(&first)];
        let mut count = 1usize;
        for err in errors.take(COUNTED_ERRORS) {
            count += 1;
            if reported.len() < REPORTED_ERRORS {
                reported.push(describe(&err));
            }
        }
        let mut message = reported.join("; ");
        let more = count - reported.len();
        if more > 0 {
            let at_least = if count > COUNTED_ERRORS { "at least " } else { "" };
            let plural = if more == 1 { "" } else { "s" };
            message.push_str(&format!(" (and {at_least}{more} more problem{plural})"));
        }
        Err(message)
    }

    /// Every problem of `value`, at most `max`, each as `<JSON path>: <problem>` (the path a JSON
    /// pointer into `value`, left out for the value itself; each problem cut as in
    /// [`SchemaCheck::check`]). Empty when it matches. A refused schema gives its reason.
    pub fn problems(&self, value: &Value, max: usize) -> Vec<String> {
        if let Check::Refused(reason) = &*self.inner {
            return vec![reason.clone()];
        }
        if self.matches_as_object(value) {
            return Vec::new();
        }
        let Some(validator) = self.validator() else { return Vec::new() };
        validator
            .iter_errors(value)
            .take(max)
            .map(|err| {
                let problem = cut(err.to_string());
                match err.instance_path().as_str() {
                    "" => problem,
                    path => format!("{path}: {problem}"),
                }
            })
            .collect()
    }

    /// Whether `value` matches, without describing problems.
    /// (`false` for a refused schema).
    pub fn is_valid(&self, value: &Value) -> bool {
        match &*self.inner {
            Check::Compiled(validator) => validator.is_valid(value),
            Check::EveryObject { .. } => value.is_object(),
            Check::Refused(_) => false,
        }
    }

    /// Whether the schema is one every object matches and `value` is an object.
    fn matches_as_object(&self, value: &Value) -> bool {
        matches!(&*self.inner, Check::EveryObject { .. }) && value.is_object()
    }
}

/// The validator of `schema` (screened).
fn build_validator(mut schema: Value, settings: SchemaOptions) -> Result<Validator, SchemaError> {
    let mut options = jsonschema::options()
        .with_retriever(NoRetrieval)
        .should_validate_formats(settings.check_formats)
        .with_pattern_options(
            PatternOptions::fancy_regex().backtrack_limit(REGEX_BACKTRACK_LIMIT).size_limit(REGEX_SIZE_LIMIT),
        );
    if Draft::default().detect(&schema) == Draft::Unknown {
        // `$schema` names a dialect we do not know: never fetch it (its meta-schema would be
        // retrieved too), drop it and use the MCP default.
        if let Value::Object(map) = &mut schema {
            map.shift_remove("$schema");
        }
        options = options.with_draft(Draft::Draft202012);
    }
    options.build(&schema).map_err(|err| SchemaError::Invalid(format!("invalid JSON Schema {}", describe(&err))))
}

/// Whether every object matches `schema` in every dialect, and `schema` is valid in every
/// dialect: it says the value is an object, may list no properties (an empty `properties`),
/// and may carry a title, a description and a `$schema` (strings); nothing else.
fn matches_every_object(schema: &JsonObject) -> bool {
    schema.get("type").is_some_and(|t| t == "object")
        && schema.iter().all(|(key, value)| match key.as_str() {
            "type" => true,
            "properties" => value.as_object().is_some_and(JsonObject::is_empty),
            "title" | "description" | "$schema" => value.is_string(),
            _ => false,
        })
}

/// `at <path>: <problem>`, with the problem cut to [`MAX_PROBLEM_LEN`].
fn describe(err: &ValidationError<'_>) -> String {
    let path = err.instance_path().as_str();
    let path = if path.is_empty() { "the root" } else { path };
    format!("at {path}: {}", cut(err.to_string()))
}

/// `problem` cut to [`MAX_PROBLEM_LEN`] bytes on a character boundary, with `...` when cut.
fn cut(mut problem: String) -> String {
    if problem.len() > MAX_PROBLEM_LEN {
        let mut at = MAX_PROBLEM_LEN;
        while !problem.is_char_boundary(at) {
            at -= 1;
        }
        problem.truncate(at);
        problem.push_str("...");
    }
    problem
}

/// Checks the `arguments` of a call to the tool named `tool` against its compiled
/// `inputSchema`: `arguments of tool `add` do not match its inputSchema at /b: "x" is not of
/// type "number"`.
///
/// With a refused schema, the error is the refusal (which names the server and the tool) and
/// says that the call is not sent.
pub fn check_arguments(check: &SchemaCheck, tool: &str, arguments: &JsonObject) -> Result<(), String> {
    // The validator takes a `Value`: one copy of the arguments (the manager's own calls use
    // `check_argument_value` on arguments it already holds as one).
    check_argument_value(check, tool, &Value::Object(arguments.clone()))
}

/// [`check_arguments`] of arguments held as a `Value` (an object), read in place.
pub fn check_argument_value(check: &SchemaCheck, tool: &str, arguments: &Value) -> Result<(), String> {
    if let Some(reason) = check.refusal() {
        return Err(format!("{reason}; the call is not sent"));
    }
    check
        .check(arguments)
        .map_err(|problem| format!("arguments of tool `{tool}` do not match its inputSchema {problem}"))
}
