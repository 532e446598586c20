//! Multi round-trip requests (modern era): answer the server's input requests through the same
//! host callbacks as legacy server requests, then retry with a new id, the answers and the exact
//! request state.

use mcp_protocol::messages::ServerRequest;
use mcp_protocol::types::mrtr::{InputRequest, InputRequests, InputResponse, InputResponses, Outcome};
use mcp_protocol::types::prompts::GetPromptParams;
use mcp_protocol::types::resources::ReadResourceParams;
use mcp_protocol::types::tools::CallToolParams;
use mcp_protocol::{ErrorCode, ErrorObject, RequestMethod};

use super::handler::CallbackHandler;
use super::{ConnectionError, McpConnection};
use crate::session::{InboundHandler, RequestOptions, Session};

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

impl McpConnection {
    /// Send a request that may answer with `InputRequiredResult`, answering and retrying until
    /// it completes or the round limit is reached.
    pub(crate) async fn request_with_input<M, T>(
        &self,
        mut params: M::Params,
        options: RequestOptions,
    ) -> Result<Outcome<T>, ConnectionError>
    where
        M: RequestMethod<Result = Outcome<T>>,
        M::Params: RetryParams,
    {
        let session = self.session().await?;
        let handler = CallbackHandler::new(self.name(), self.options.callbacks.clone());
        let mut rounds = 0;
        loop {
            match session.request::<M>(&params, options.clone()).await? {
                Outcome::InputRequired(input) => {
                    if rounds == self.options.max_input_rounds {
                        return Err(ConnectionError::TooManyInputRounds {
                            server: self.name().to_owned(),
                            method: M::METHOD,
                            rounds,
                        });
                    }
                    rounds += 1;
                    let responses = match input.input_requests {
                        Some(requests) if requests.len() > MAX_INPUT_REQUESTS_PER_ROUND => {
                            return Err(ConnectionError::TooManyInputRequests {
                                server: self.name().to_owned(),
                                method: M::METHOD,
                                count: requests.len(),
                                max: MAX_INPUT_REQUESTS_PER_ROUND,
                            });
                        }
                        Some(requests) if !requests.is_empty() => Some(answer_all(&session, &handler, requests).await),
                        _ => None,
                    };
                    params.set_retry(responses, input.request_state);
                }
                other => return Ok(other),
            }
        }
    }
}

/// Most input requests answered in one round of a multi round-trip request; a wider result is
/// refused ([`ConnectionError::TooManyInputRequests`]).
pub(crate) const MAX_INPUT_REQUESTS_PER_ROUND: usize = 128;

/// Answer every input request, concurrently within the session's limit on server requests
/// served at once (`max_inbound_requests`, shared with the requests the server sends itself). A
/// request the host cannot answer is answered with nothing: the server sees the key missing and
/// decides.
async fn answer_all(session: &Session, handler: &CallbackHandler, requests: InputRequests) -> InputResponses {
    let answers = requests.into_iter().map(|(key, request)| async move {
        let _slot = session.inbound_slot().await;
        let method = request.method().to_owned();
        let answer = match to_server_request(request) {
            Some(r) => handler.handle_request(r).await,
            None => Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("unknown input request {method}"))),
        };
        match answer.and_then(|raw| {
            serde_json::from_str::<InputResponse>(raw.get())
                .map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
        }) {
            Ok(response) => Some((key, response)),
            Err(e) => {
                tracing::warn!(server = %handler.server, method, error = %e, "could not answer an input request");
                None
            }
        }
    });
    futures::future::join_all(answers).await.into_iter().flatten().collect()
}

fn to_server_request(request: InputRequest) -> Option<ServerRequest> {
    Some(match request {
        InputRequest::CreateMessage(p) => ServerRequest::CreateMessage(Some(p)),
        InputRequest::ListRoots(p) => ServerRequest::ListRoots(p),
        InputRequest::Elicit(p) => ServerRequest::Elicit(Some(p)),
        InputRequest::Unknown(_) => return None,
    })
}
