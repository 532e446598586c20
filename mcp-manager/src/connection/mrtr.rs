//! Multi round-trip requests (modern era): answer the server's input requests through the same
//! host callbacks as legacy server requests, then retry with a new id, the answers and the exact
//! request state. The URL elicitations of a -32042 error are completed here too, in both eras
//! (see [`super::url_elicitation`]), and the request retried.
//!
//! The whole call has one deadline: the request's timeout (or the session's default) from the
//! start of the call, extended like a single request's by progress (when progress was asked
//! for), never past the session's hard cap. Every round is sent with the time that remains, the
//! host's answers and the pause between rounds are bounded by it, and when it passes the call
//! fails with [`SessionError::Timeout`](crate::session::SessionError::Timeout).
//!
//! A round that brings input requests is answered at once. A round without any ("still
//! working": only a `requestState`) is retried after a pause that doubles from
//! [`STILL_WAITING_FIRST_PAUSE`] up to [`STILL_WAITING_MAX_PAUSE`], reset by any round with input
//! requests.
//!
//! An input request the host cannot answer fails the call at once
//! ([`ConnectionError::InputRequestFailed`], naming the input request's key and method and the
//! reason): the host's handler failed or refused (the user refused sampling, say), there is no
//! handler for it, its params do not decode, or its method is unknown. A user who declines or
//! cancels an elicitation answers it: that answer goes to the server.

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::messages::ServerRequest;
use mcp_protocol::types::common::RequestParams;
use mcp_protocol::types::elicitation::ElicitParams;
use mcp_protocol::types::mrtr::{InputRequest, InputRequests, InputResponse, InputResponses, Outcome};
use mcp_protocol::types::prompts::GetPromptParams;
use mcp_protocol::types::resources::ReadResourceParams;
use mcp_protocol::types::sampling::CreateMessageParams;
use mcp_protocol::types::tools::CallToolParams;
use mcp_protocol::{ErrorCode, ErrorObject, RequestMethod};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::Instant;

use super::deadline::CallDeadline;
use super::handler::CallbackHandler;
use super::url_elicitation::MAX_URL_ELICITATION_RETRIES;
use super::{ConnectionError, McpConnection};
use crate::session::{InboundHandler, ProgressCallback, RequestOptions, Session};

/// Params of a request that may be retried with answers to input requests.
pub(crate) trait RetryParams {
    /// Set the answers and the state of the next attempt (both replaced, never accumulated).
    fn set_retry(&mut self, responses: Option<InputResponses>, state: Option<String>);
}

macro_rules! retry_params {
    ($($t:ty),*) => {$(
        impl RetryParams for $t {
            fn set_retry(&mut self, responses: Option<InputResponses>, state: Option<String>) {
                self.input_responses = responses;
                self.request_state = state;
            }
        }
    )*};
}

retry_params!(CallToolParams, GetPromptParams, ReadResourceParams);

/// The first pause before retrying a round that brought no input requests.
pub const STILL_WAITING_FIRST_PAUSE: Duration = Duration::from_millis(100);

/// The longest pause between rounds that bring no input requests.
pub const STILL_WAITING_MAX_PAUSE: Duration = Duration::from_secs(2);

impl McpConnection {
    /// Send a request that may answer with `InputRequiredResult` or a -32042 error, answering
    /// and retrying until it completes, the round limit is reached, an input cannot be given,
    /// or the call's deadline (from now) passes (see the module's documentation).
    pub(crate) fn request_with_input<M, T>(
        &self,
        params: M::Params,
        options: RequestOptions,
    ) -> impl Future<Output = Result<Outcome<T>, ConnectionError>> + Send + '_
    where
        M: RequestMethod<Result = Outcome<T>>,
        M::Params: RetryParams + Send + Sync,
        T: Send,
    {
        let timeout = options.timeout.unwrap_or(self.options.session.request_timeout);
        let deadline = CallDeadline::new(timeout, self.options.session.max_request_timeout);
        self.request_within::<M, T>(params, options.progress, deadline, None)
    }

    /// [`McpConnection::request_with_input`] under a call's `deadline`, which every round shares
    /// and `progress` moves (a `tools/call` passes the deadline its task, if any, goes on under),
    /// on `live`'s session and era when the caller already has them (one lock of the connection
    /// a call, not two).
    ///
    /// A plain function returning an `async move` block rather than an `async fn`: an `async fn`
    /// moves its arguments into locals of its state, so the params (hundreds of bytes for
    /// `tools/call`) would be held twice in every request's future.
    #[expect(clippy::manual_async_fn, reason = "an async fn would hold the params twice")]
    pub(crate) fn request_within<M, T>(
        &self,
        mut params: M::Params,
        progress: Option<ProgressCallback>,
        deadline: CallDeadline,
        live: Option<(Session, bool)>,
    ) -> impl Future<Output = Result<Outcome<T>, ConnectionError>> + Send + '_
    where
        M: RequestMethod<Result = Outcome<T>>,
        M::Params: RetryParams + Send + Sync,
        T: Send,
    {
        async move {
            let (session, modern) = match live {
                Some(live) => live,
                None => self.session_and_era().await?,
            };
            // Made when the server first asks for input: most calls never need it, and boxed, as
            // the rounds that use it: inline it would add 200 bytes to every call in flight.
            let mut handler: Option<Box<CallbackHandler>> = None;
            let progress = progress.map(|report| {
                let deadline = deadline.clone();
                Arc::new(move |p| {
                    deadline.extend();
                    report(p)
                }) as ProgressCallback
            });
            let mut rounds = 0;
            let mut url_retries = 0;
            let mut pause = STILL_WAITING_FIRST_PAUSE;
            loop {
                let Some(remaining) = deadline.remaining() else {
                    return Err(deadline.timeout_error(self.name(), M::METHOD));
                };
                let round = RequestOptions { timeout: Some(remaining), progress: progress.clone() };
                let input = match session.request::<M>(&params, round).await {
                    Ok(Outcome::InputRequired(input)) => input,
                    Ok(other) => return Ok(other),
                    Err(e) if e.rpc_error().is_some_and(|r| r.code == ErrorCode::URL_ELICITATION_REQUIRED) => {
                        if url_retries == MAX_URL_ELICITATION_RETRIES {
                            return Err(ConnectionError::UrlElicitationStillRequired {
                                server: self.name().to_owned(),
                                method: M::METHOD,
                                retries: url_retries,
                                error: e
                                    .rpc_error()
                                    .cloned()
                                    .unwrap_or_else(|| ErrorObject::new(ErrorCode::INTERNAL_ERROR, "")),
                            });
                        }
                        url_retries += 1;
                        // Boxed, as the input rounds below: rare, and large in every request's state.
                        Box::pin(self.complete_url_elicitations(e, M::METHOD, modern, &deadline)).await?;
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                if rounds == self.options.max_input_rounds {
                    return Err(ConnectionError::TooManyInputRounds {
                        server: self.name().to_owned(),
                        method: M::METHOD,
                        rounds,
                    });
                }
                rounds += 1;
                let requests = input.input_requests.unwrap_or_default();
                if requests.len() > MAX_INPUT_REQUESTS_PER_ROUND {
                    return Err(ConnectionError::TooManyInputRequests {
                        server: self.name().to_owned(),
                        method: M::METHOD,
                        count: requests.len(),
                        max: MAX_INPUT_REQUESTS_PER_ROUND,
                    });
                }
                let responses = if requests.is_empty() {
                    // Still working: pause, within the deadline (the next round checks it).
                    tokio::time::sleep_until((Instant::now() + pause).min(deadline.at())).await;
                    pause = (pause * 2).min(STILL_WAITING_MAX_PAUSE);
                    None
                } else {
                    pause = STILL_WAITING_FIRST_PAUSE;
                    match Box::pin(tokio::time::timeout_at(
                        deadline.at(),
                        answer_all(
                            &session,
                            handler.get_or_insert_with(|| {
                                Box::new(CallbackHandler::new(self.name(), self.options.callbacks.clone()))
                            }),
                            requests,
                        ),
                    ))
                    .await
                    {
                        Err(_) => return Err(deadline.timeout_error(self.name(), M::METHOD)),
                        Ok(Err(failed)) => {
                            return Err(ConnectionError::InputRequestFailed {
                                server: self.name().to_owned(),
                                method: M::METHOD,
                                key: failed.key,
                                input_method: failed.method,
                                error: failed.error,
                            });
                        }
                        Ok(Ok(responses)) => Some(responses),
                    }
                };
                params.set_retry(responses, input.request_state);
            }
        }
    }
}

/// Most input requests answered in one round of a multi round-trip request; a wider result is
/// refused ([`ConnectionError::TooManyInputRequests`]).
pub(crate) const MAX_INPUT_REQUESTS_PER_ROUND: usize = 128;

/// An input request the host could not answer.
pub(crate) struct InputFailure {
    key: String,
    method: String,
    error: ErrorObject,
}

impl InputFailure {
    /// The error of call `method` on `server` that stopped here.
    pub(crate) fn into_error(self, server: &str, method: &'static str) -> ConnectionError {
        ConnectionError::InputRequestFailed {
            server: server.to_owned(),
            method,
            key: self.key,
            input_method: self.method,
            error: self.error,
        }
    }
}

/// At most this many characters of a server's key in an error.
const MAX_KEY_CHARS: usize = 128;

/// Answer every input request, concurrently within the session's limit on server requests
/// served at once (`max_inbound_requests`, shared with the requests the server sends itself).
/// The first one the host cannot answer stops the others and is the result.
pub(crate) async fn answer_all(
    session: &Session,
    handler: &CallbackHandler,
    requests: InputRequests,
) -> Result<InputResponses, InputFailure> {
    let answers = requests.into_iter().map(|(key, request)| async move {
        let _slot = session.inbound_slot().await;
        let method = request.method().to_owned();
        let answer = match to_server_request(request) {
            Ok(r) => handler.handle_request(r).await,
            Err(e) => Err(e),
        };
        let answer = answer.and_then(|raw| {
            serde_json::from_str::<InputResponse>(raw.get())
                .map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("the host's answer: {e}")))
        });
        match answer {
            Ok(response) => Ok((key, response)),
            Err(error) => {
                tracing::warn!(server = %handler.server, method, key, %error, "could not answer an input request");
                let key = match key.char_indices().nth(MAX_KEY_CHARS) {
                    Some((at, _)) => format!("{}…", &key[..at]),
                    None => key,
                };
                Err(InputFailure { key, method, error })
            }
        }
    });
    Ok(futures::future::try_join_all(answers).await?.into_iter().collect())
}

fn to_server_request(request: InputRequest) -> Result<ServerRequest, ErrorObject> {
    Ok(match request {
        InputRequest::CreateMessage(p) => ServerRequest::CreateMessage(Some(p)),
        InputRequest::ListRoots(p) => ServerRequest::ListRoots(p),
        InputRequest::Elicit(p) => ServerRequest::Elicit(Some(p)),
        InputRequest::Unknown(v) => return Err(unanswerable(&v)),
    })
}

/// Why an input request stayed untyped: its params do not decode (-32602, with the reason), or
/// its method is unknown (-32601).
fn unanswerable(request: &Value) -> ErrorObject {
    fn why<T: DeserializeOwned>(params: Option<&Value>) -> String {
        match params.map(T::deserialize) {
            None => "params are missing".to_owned(),
            Some(Err(e)) => {
                let e = e.to_string();
                match e.char_indices().nth(300) {
                    Some((at, _)) => format!("{}…", &e[..at]),
                    None => e,
                }
            }
            Some(Ok(_)) => "params do not decode".to_owned(),
        }
    }
    let method = request.get("method").and_then(Value::as_str).unwrap_or("?");
    let params = request.get("params");
    let reason = match method {
        "sampling/createMessage" => why::<CreateMessageParams>(params),
        "elicitation/create" => why::<ElicitParams>(params),
        "roots/list" => why::<RequestParams>(params),
        _ => {
            let shown: String = method.chars().take(MAX_KEY_CHARS).collect();
            return ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("unknown input request method {shown:?}"));
        }
    };
    ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params of {method}: {reason}"))
}
