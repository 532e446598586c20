//! The tools that ask the client for something, the two-way half of the protocol: `ask_roots`
//! (`roots/list`) and `summarize` (`sampling/createMessage`).
//!
//! In the legacy era the server sends the client a request of its own and waits for the answer,
//! which needs the client to have declared the capability in `initialize`. In the modern era
//! (2026-07-28) the server is stateless: the first `tools/call` answers with an
//! `InputRequiredResult` naming the requests, and the client calls again with `inputResponses`
//! and the `requestState` it was given. Without the capability both tools return a failed result
//! saying so.

use std::sync::Arc;

use mcp_protocol::ErrorObject;
use mcp_protocol::messages::{ClientResult, ServerRequest};
use mcp_protocol::types::common::ResultType;
use mcp_protocol::types::mrtr::{InputRequest, InputRequiredResult, InputResponse, InputResponses, Outcome};
use mcp_protocol::types::roots::{ListRootsResult, Root};
use mcp_protocol::types::sampling::{CreateMessageParams, CreateMessageResult, SamplingMessage};
use mcp_protocol::types::tools::{CallToolParams, CallToolResult};
use serde_json::Value;

use super::args::Args;
use super::context::{Ctx, failed, text};
use super::state::{State, internal, invalid_params};

/// The key of the roots input request.
const ROOTS_KEY: &str = "roots";
/// The key of the sampling input request.
const SAMPLING_KEY: &str = "summary";

fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(value).map_err(|e| internal(format!("could not encode the result: {e}")))
}

fn failure(why: impl Into<String>) -> Result<Value, ErrorObject> {
    to_value(&failed(why))
}

/// The `requestState` of a tool's input request: the tool's name. The state holds nothing else
/// (the arguments come back with the retry), so there is nothing to forge.
fn request_state(tool: &str) -> String {
    format!("mcp-demo/{tool}/v1")
}

/// The modern era's input-required result for one request.
fn input_required(tool: &str, key: &str, request: InputRequest) -> Result<Value, ErrorObject> {
    to_value(&Outcome::<CallToolResult>::InputRequired(Box::new(InputRequiredResult {
        result_type: Some(ResultType::InputRequired),
        input_requests: Some([(key.to_owned(), request)].into_iter().collect()),
        request_state: Some(request_state(tool)),
        ..Default::default()
    })))
}

/// On a modern retry: the client's answer to `key`, or the failed result to return.
fn retry_answer<'a>(
    params: &'a CallToolParams,
    responses: &'a InputResponses,
    key: &str,
    method: &str,
) -> Result<&'a InputResponse, Result<Value, ErrorObject>> {
    if params.request_state.as_deref() != Some(request_state(&params.name).as_str()) {
        return Err(Err(invalid_params(format!(
            "requestState {:?} was not issued by this server for {}",
            params.request_state.as_deref().unwrap_or_default(),
            params.name
        ))));
    }
    responses.get(key).ok_or_else(|| failure(format!("the client did not answer the {method} input request")))
}

/// `ask_roots`.
pub(crate) async fn ask_roots(state: &Arc<State>, ctx: &Ctx, params: &CallToolParams) -> Result<Value, ErrorObject> {
    let empty = Default::default();
    if let Err(why) = Args::new("ask_roots", params.arguments.as_ref().unwrap_or(&empty)).only(&[]) {
        return failure(why);
    }
    if !ctx.capabilities.supports_roots() {
        return failure("ask_roots needs a client that offers roots: this client did not declare the roots capability");
    }
    let roots = if ctx.modern {
        let Some(responses) = &params.input_responses else {
            return input_required(&params.name, ROOTS_KEY, InputRequest::ListRoots(None));
        };
        match retry_answer(params, responses, ROOTS_KEY, "roots/list") {
            Ok(InputResponse::ListRoots(listed)) => listed.roots.clone(),
            Ok(_) => return failure("the client's answer to roots/list is not a list of roots"),
            Err(outcome) => return outcome,
        }
    } else {
        match state.ask(ServerRequest::ListRoots(None)).await {
            Ok(raw) => match ClientResult::decode("roots/list", &raw) {
                Ok(ClientResult::ListRoots(ListRootsResult { roots, .. })) => roots,
                _ => {
                    return failure(format!("the client's answer to roots/list is not a list of roots: {}", raw.get()));
                }
            },
            Err(error) => return failure(format!("the client refused roots/list: {}", error.message)),
        }
    };
    to_value(&text(describe_roots(&roots)))
}

fn describe_roots(roots: &[Root]) -> String {
    if roots.is_empty() {
        return "The client shares no roots.".into();
    }
    let mut out = format!("The client shares {} root{}:", roots.len(), if roots.len() == 1 { "" } else { "s" });
    for root in roots {
        out.push_str("\n- ");
        out.push_str(&root.uri);
        if let Some(name) = &root.name {
            out.push_str(&format!(" ({name})"));
        }
    }
    out
}

/// `summarize`.
pub(crate) async fn summarize(state: &Arc<State>, ctx: &Ctx, params: &CallToolParams) -> Result<Value, ErrorObject> {
    let empty = Default::default();
    let args = Args::new("summarize", params.arguments.as_ref().unwrap_or(&empty));
    let checked = args.only(&["text", "max_tokens"]).and_then(|()| {
        let text = args.string("text")?;
        let max_tokens = args.integer("max_tokens", 1, 4096, 200)?;
        Ok((text, max_tokens))
    });
    let (text_in, max_tokens) = match checked {
        Ok(v) => v,
        Err(why) => return failure(why),
    };
    if !ctx.capabilities.supports_sampling() {
        return failure(
            "summarize needs a client that offers an LLM: this client did not declare the sampling capability",
        );
    }
    let request = CreateMessageParams {
        messages: vec![SamplingMessage::user_text(format!("Summarize this text in a few sentences:\n\n{text_in}"))],
        system_prompt: Some("You are a concise assistant. Answer with the summary only.".into()),
        max_tokens,
        ..Default::default()
    };
    let answer: CreateMessageResult = if ctx.modern {
        let Some(responses) = &params.input_responses else {
            return input_required(&params.name, SAMPLING_KEY, InputRequest::CreateMessage(request));
        };
        match retry_answer(params, responses, SAMPLING_KEY, "sampling/createMessage") {
            Ok(InputResponse::CreateMessage(result)) => result.clone(),
            Ok(_) => return failure("the client's answer to sampling/createMessage is not a message"),
            Err(outcome) => return outcome,
        }
    } else {
        match state.ask(ServerRequest::CreateMessage(Some(request))).await {
            Ok(raw) => match ClientResult::decode("sampling/createMessage", &raw) {
                Ok(ClientResult::CreateMessage(Outcome::Complete(result))) => result,
                _ => {
                    return failure(format!(
                        "the client's answer to sampling/createMessage is not a message: {}",
                        raw.get()
                    ));
                }
            },
            Err(error) => return failure(format!("the client declined sampling/createMessage: {}", error.message)),
        }
    };
    let summary = answer.content.text();
    if summary.trim().is_empty() {
        return failure(format!("the client's LLM ({}) answered without text", answer.model));
    }
    to_value(&text(summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_listed_for_people() {
        assert_eq!(describe_roots(&[]), "The client shares no roots.");
        let roots = [Root::new("file:///a", Some("A".into())), Root::new("file:///b", None)];
        assert_eq!(describe_roots(&roots), "The client shares 2 roots:\n- file:///a (A)\n- file:///b");
    }

    #[test]
    fn a_retry_needs_the_issued_state_and_the_answer() {
        let responses: InputResponses =
            [(ROOTS_KEY.to_owned(), InputResponse::ListRoots(ListRootsResult::default()))].into_iter().collect();
        let mut params = CallToolParams { name: "ask_roots".into(), ..Default::default() };
        params.request_state = Some("forged".into());
        let Err(Err(error)) = retry_answer(&params, &responses, ROOTS_KEY, "roots/list") else { panic!() };
        assert!(error.message.contains("forged"), "{}", error.message);
        params.request_state = Some(request_state("ask_roots"));
        assert!(retry_answer(&params, &responses, ROOTS_KEY, "roots/list").is_ok());
        let Err(Ok(result)) = retry_answer(&params, &responses, SAMPLING_KEY, "sampling/createMessage") else {
            panic!()
        };
        assert_eq!(result["isError"], true);
    }
}
