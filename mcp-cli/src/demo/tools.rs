//! The demo server's tools: their definitions and the simple ones' implementations. The tools
//! that ask the client for something (`ask_roots`, `summarize`) live in `asks.rs`.
//!
//! Errors follow the spec's split: a tool this server does not have is a JSON-RPC error
//! (invalid params), and a problem with a tool's arguments is a tool result with `isError`, so
//! that an LLM sees what went wrong and can try again.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use mcp_protocol::ErrorObject;
use mcp_protocol::types::content::{ContentBlock, ImageContent};
use mcp_protocol::types::logging::{LoggingLevel, LoggingMessageParams};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::progress::ProgressParams;
use mcp_protocol::types::tools::{CallToolParams, CallToolResult, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::args::Args;
use super::asks;
use super::clock::{self, Civil};
use super::context::{Ctx, failed, text};
use super::png;
use super::state::{State, invalid_params};

/// The names of the tools, in listing order.
pub(crate) const NAMES: [&str; 8] = ["echo", "add", "current_time", "stats", "image", "slow", "ask_roots", "summarize"];

/// Most numbers `stats` takes.
const MAX_NUMBERS: usize = 10_000;

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn tool(name: &str, title: &str, description: &str, input: Value, output: Option<Value>) -> Tool {
    Tool {
        name: name.into(),
        title: Some(title.into()),
        description: Some(description.into()),
        input_schema: object(input).into(),
        output_schema: output.map(|o| Box::new(object(o))),
        annotations: Some(Box::new(ToolAnnotations {
            read_only_hint: Some(true),
            open_world_hint: Some(false),
            ..Default::default()
        })),
        ..Default::default()
    }
}

/// The tools, as `tools/list` shows them.
pub(crate) fn list() -> Vec<Tool> {
    vec![
        tool(
            "echo",
            "Echo",
            "Return the given text unchanged.",
            json!({"type": "object", "properties": {"text": {"type": "string", "description": "The text to return"}},
                "required": ["text"], "additionalProperties": false}),
            None,
        ),
        tool(
            "add",
            "Add two numbers",
            "Add a and b.",
            json!({"type": "object", "properties": {
                "a": {"type": "number", "description": "The first number"},
                "b": {"type": "number", "description": "The second number"}},
                "required": ["a", "b"], "additionalProperties": false}),
            None,
        ),
        tool(
            "current_time",
            "Current time",
            "The current date and time, at a UTC offset of your choice.",
            json!({"type": "object", "properties": {
                "utc_offset": {"type": "string", "description": "Z (the default), +HH:MM or -HH:MM"},
                "format": {"type": "string", "enum": ["rfc3339", "human", "unix"],
                    "description": "How the text content shows the time (default rfc3339)"}},
                "additionalProperties": false}),
            Some(json!({"type": "object", "properties": {
                "iso": {"type": "string", "description": "RFC 3339 date and time"},
                "unix": {"type": "integer", "description": "Seconds since 1970-01-01T00:00:00Z"},
                "utc_offset": {"type": "string"},
                "weekday": {"type": "string"}},
                "required": ["iso", "unix", "utc_offset", "weekday"]})),
        ),
        tool(
            "stats",
            "Statistics",
            "Count, sum, mean, median, minimum and maximum of a list of numbers (structured output).",
            json!({"type": "object", "properties": {"numbers": {"type": "array", "items": {"type": "number"},
                "minItems": 1, "maxItems": MAX_NUMBERS, "description": "The numbers"}},
                "required": ["numbers"], "additionalProperties": false}),
            Some(json!({"type": "object", "properties": {
                "count": {"type": "integer"}, "sum": {"type": "number"}, "mean": {"type": "number"},
                "median": {"type": "number"}, "min": {"type": "number"}, "max": {"type": "number"}},
                "required": ["count", "sum", "mean", "median", "min", "max"]})),
        ),
        tool(
            "image",
            "Make an image",
            "Return a small PNG image made in code.",
            json!({"type": "object", "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 256, "description": "Width and height in pixels (default 64)"},
                "pattern": {"type": "string", "enum": ["gradient", "checker"], "description": "What it shows (default gradient)"}},
                "additionalProperties": false}),
            None,
        ),
        tool(
            "slow",
            "Slow operation",
            "Work for duration_ms in a number of steps, reporting progress after each when asked to. Can be cancelled.",
            json!({"type": "object", "properties": {
                "duration_ms": {"type": "integer", "minimum": 0, "maximum": 600000, "description": "How long to work (default 3000)"},
                "steps": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "How many steps (default 5)"}},
                "additionalProperties": false}),
            None,
        ),
        tool(
            "ask_roots",
            "Ask for roots",
            "Ask the client for its roots (the directories it shares) and list them.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            None,
        ),
        tool(
            "summarize",
            "Summarize with the client's LLM",
            "Ask the client's LLM (sampling) to summarize a text, and return its answer.",
            json!({"type": "object", "properties": {
                "text": {"type": "string", "description": "The text to summarize"},
                "max_tokens": {"type": "integer", "minimum": 1, "maximum": 4096, "description": "Longest answer (default 200)"}},
                "required": ["text"], "additionalProperties": false}),
            None,
        ),
    ]
}

/// A successful result with structured content, and the same as JSON text.
fn structured(value: Value, text: Option<String>) -> CallToolResult {
    let text = text.unwrap_or_else(|| value.to_string());
    CallToolResult { content: vec![ContentBlock::text(text)], structured_content: Some(value), ..Default::default() }
}

fn to_value(result: &CallToolResult) -> Result<Value, ErrorObject> {
    serde_json::to_value(result).map_err(|e| super::state::internal(format!("could not encode the result: {e}")))
}

/// `tools/call`: the result (or, in the modern era, an input-required result) as JSON.
pub(crate) async fn call(state: &Arc<State>, ctx: &Ctx, params: CallToolParams) -> Result<Value, ErrorObject> {
    let name = params.name.as_str();
    if !NAMES.contains(&name) {
        return Err(invalid_params(format!("unknown tool {name:?}; this server has: {}", NAMES.join(", "))));
    }
    if ctx.wants_log(&LoggingLevel::Info) {
        let log = LoggingMessageParams {
            level: LoggingLevel::Info,
            logger: Some("mcp-demo".into()),
            data: json!({"tool": name}),
            meta: None,
            extra: JsonObject::new(),
        };
        state.notify("notifications/message", &log).await;
    }
    let empty = JsonObject::new();
    let args = Args::new(name, params.arguments.as_ref().unwrap_or(&empty));
    let result = match name {
        "echo" => args.only(&["text"]).and_then(|()| args.string("text")).map(text),
        "add" => add(&args),
        "current_time" => current_time(&args),
        "stats" => stats(&args),
        "image" => image(&args),
        "slow" => return slow(state, ctx, &args).await.or_else(|why| to_value(&failed(why))),
        "ask_roots" => return asks::ask_roots(state, ctx, &params).await,
        _ => return asks::summarize(state, ctx, &params).await,
    };
    to_value(&result.unwrap_or_else(failed))
}

/// A number as people write it: whole numbers without a fraction.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 { format!("{n:.0}") } else { n.to_string() }
}

fn add(args: &Args<'_>) -> Result<CallToolResult, String> {
    args.only(&["a", "b"])?;
    let (a, b) = (args.number("a")?, args.number("b")?);
    let sum = a + b;
    if !sum.is_finite() {
        return Err(format!("{} + {} does not fit in a 64-bit float", number(a), number(b)));
    }
    Ok(text(format!("{} + {} = {}", number(a), number(b), number(sum))))
}

fn current_time(args: &Args<'_>) -> Result<CallToolResult, String> {
    args.only(&["utc_offset", "format"])?;
    let offset = match args.opt_string("utc_offset")? {
        Some(o) => clock::parse_offset(o).map_err(|e| format!("argument \"utc_offset\" of current_time: {e}"))?,
        None => 0,
    };
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let now = Civil::at(unix, offset);
    let shown = match args.opt_string("format")?.unwrap_or("rfc3339") {
        "rfc3339" => now.rfc3339(),
        "human" => now.human(),
        "unix" => unix.to_string(),
        other => {
            return Err(format!(
                "argument \"format\" of current_time must be one of rfc3339, human, unix, got {other:?}"
            ));
        }
    };
    let value = json!({"iso": now.rfc3339(), "unix": unix, "utc_offset": clock::format_offset(offset),
        "weekday": now.weekday_name()});
    Ok(structured(value, Some(shown)))
}

fn stats(args: &Args<'_>) -> Result<CallToolResult, String> {
    args.only(&["numbers"])?;
    let mut numbers = args.numbers("numbers", MAX_NUMBERS)?;
    let sum: f64 = numbers.iter().sum();
    if !sum.is_finite() {
        return Err("the sum of the numbers does not fit in a 64-bit float".into());
    }
    numbers.sort_by(f64::total_cmp);
    let count = numbers.len();
    let median = if count % 2 == 1 { numbers[count / 2] } else { (numbers[count / 2 - 1] + numbers[count / 2]) / 2.0 };
    let value = json!({"count": count, "sum": sum, "mean": sum / count as f64, "median": median,
        "min": numbers[0], "max": numbers[count - 1]});
    Ok(structured(value, None))
}

fn image(args: &Args<'_>) -> Result<CallToolResult, String> {
    args.only(&["size", "pattern"])?;
    let size = args.integer("size", 1, 256, 64)? as u32;
    let name = args.opt_string("pattern")?.unwrap_or("gradient");
    let pattern = png::Pattern::parse(name)
        .ok_or_else(|| format!("argument \"pattern\" of image must be one of gradient, checker, got {name:?}"))?;
    let bytes = png::pattern(size, pattern);
    let image = ImageContent {
        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
        mime_type: "image/png".into(),
        ..Default::default()
    };
    let caption = format!("A {size}x{size} {name} PNG ({} bytes).", bytes.len());
    Ok(CallToolResult { content: vec![ContentBlock::Image(image), ContentBlock::text(caption)], ..Default::default() })
}

async fn slow(state: &Arc<State>, ctx: &Ctx, args: &Args<'_>) -> Result<Value, String> {
    args.only(&["duration_ms", "steps"])?;
    let duration = args.integer("duration_ms", 0, 600_000, 3000)?;
    let steps = args.integer("steps", 1, 1000, 5)?;
    let pause = Duration::from_millis(duration / steps);
    for step in 1..=steps {
        tokio::time::sleep(pause).await;
        if let Some(token) = &ctx.progress {
            let mut progress = ProgressParams::new(token.clone(), step as f64).with_total(steps as f64);
            progress.message = Some(format!("step {step} of {steps}"));
            state.notify("notifications/progress", &progress).await;
        }
    }
    to_value(&text(format!("Finished {steps} steps in {duration} ms."))).map_err(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, arguments: Value) -> CallToolResult {
        let map = object(arguments);
        let args = Args::new(name, &map);
        match name {
            "add" => add(&args),
            "current_time" => current_time(&args),
            "stats" => stats(&args),
            "image" => image(&args),
            _ => unreachable!(),
        }
        .unwrap_or_else(failed)
    }

    fn first_text(r: &CallToolResult) -> &str {
        r.content.iter().find_map(ContentBlock::as_text).unwrap_or_default()
    }

    #[test]
    fn every_listed_tool_has_an_object_schema_and_a_description() {
        let tools = list();
        assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), NAMES);
        for t in &tools {
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            assert!(t.description.as_deref().is_some_and(|d| !d.is_empty()), "{}", t.name);
            if let Some(out) = &t.output_schema {
                assert_eq!(out["type"], "object", "{}", t.name);
            }
        }
    }

    #[test]
    fn add_and_stats_compute() {
        assert_eq!(first_text(&run("add", json!({"a": 2, "b": 3}))), "2 + 3 = 5");
        assert_eq!(first_text(&run("add", json!({"a": 0.5, "b": 0.25}))), "0.5 + 0.25 = 0.75");
        let bad = run("add", json!({"a": "two", "b": 3}));
        assert_eq!(bad.is_error, Some(true));
        assert!(first_text(&bad).contains("\"a\""), "{}", first_text(&bad));
        let overflow = run("add", json!({"a": 1e308, "b": 1e308}));
        assert_eq!(overflow.is_error, Some(true));

        let s = run("stats", json!({"numbers": [4, 1, 3, 2]}));
        let v = s.structured_content.clone().unwrap();
        assert_eq!(v, json!({"count": 4, "sum": 10.0, "mean": 2.5, "median": 2.5, "min": 1.0, "max": 4.0}));
        assert_eq!(serde_json::from_str::<Value>(first_text(&s)).unwrap(), v, "the text is the same JSON");
        assert_eq!(run("stats", json!({"numbers": []})).is_error, Some(true));
    }

    #[test]
    fn current_time_is_structured() {
        let r = run("current_time", json!({"utc_offset": "+02:00", "format": "unix"}));
        let v = r.structured_content.clone().unwrap();
        assert_eq!(v["utc_offset"], "+02:00");
        assert!(v["iso"].as_str().unwrap().ends_with("+02:00"));
        assert_eq!(first_text(&r), v["unix"].to_string());
        let bad = run("current_time", json!({"utc_offset": "noon"}));
        assert!(first_text(&bad).contains("utc_offset"), "{}", first_text(&bad));
    }

    #[test]
    fn image_is_a_base64_png() {
        let r = run("image", json!({"size": 8, "pattern": "checker"}));
        let ContentBlock::Image(img) = &r.content[0] else { panic!("{:?}", r.content) };
        assert_eq!(img.mime_type, "image/png");
        let bytes = base64::engine::general_purpose::STANDARD.decode(&img.data).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(run("image", json!({"size": 0})).is_error, Some(true));
    }
}
