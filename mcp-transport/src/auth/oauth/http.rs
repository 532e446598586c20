//! HTTP for the authorization flow: bounded JSON GETs and POSTs, and the adapter that lets the
//! `oauth2` crate send its token requests through our reqwest client (same-origin redirects
//! only, every step under a timeout, every body bounded). Token requests carry a DPoP proof
//! when the client uses DPoP, and are sent again once with the authorization server's nonce
//! when it asks for one (`use_dpop_nonce`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;

use crate::auth::jose::{DpopKey, NonceFrom};
use crate::http_body as body;

/// Largest metadata, registration or token answer read.
pub(crate) const MAX_AUTH_BODY: usize = 256 * 1024;

/// The reqwest client and the time one authorization HTTP exchange may take.
#[derive(Debug, Clone)]
pub(crate) struct AuthHttp {
    pub(crate) client: reqwest::Client,
    pub(crate) timeout: Duration,
    /// The DPoP key token requests prove possession of, when the client uses DPoP.
    pub(crate) dpop: Option<Arc<DpopKey>>,
}

/// An answer: its status, its `DPoP-Nonce` and its body (bounded).
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) dpop_nonce: Option<String>,
    pub(crate) body: Vec<u8>,
}

impl Answer {
    pub(crate) fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// Why an exchange got no answer.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct HttpFailure(pub(crate) String);

impl AuthHttp {
    /// The same client, proving possession of `dpop` on token requests.
    pub(crate) fn with_dpop(&self, dpop: Option<Arc<DpopKey>>) -> AuthHttp {
        AuthHttp { dpop, ..self.clone() }
    }

    /// Send `request` and read its answer, all within the timeout.
    pub(crate) async fn send(&self, request: reqwest::RequestBuilder) -> Result<Answer, HttpFailure> {
        let work = async {
            let response = request
                .send()
                .await
                .map_err(|e| HttpFailure(format!("request failed: {}", crate::redact::describe(&e))))?;
            let mut response = http::Response::from(response);
            let status = response.status().as_u16();
            let dpop_nonce = response.headers().get("dpop-nonce").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let body = body::read_limited(&mut response, MAX_AUTH_BODY, Some(self.timeout))
                .await
                .map_err(|e| HttpFailure(format!("reading the answer: {e}")))?;
            Ok(Answer { status, dpop_nonce, body })
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(result) => result,
            Err(_) => Err(HttpFailure(format!("no answer within {:?}", self.timeout))),
        }
    }

    /// Send a token request, built by `build` for each send (a client assertion is good for
    /// one request only): with a fresh DPoP proof when the client uses DPoP, and once more with
    /// the authorization server's nonce when it answers `use_dpop_nonce` with a new one.
    pub(crate) async fn send_token(
        &self,
        build: impl Fn() -> Result<reqwest::Request, HttpFailure>,
    ) -> Result<Answer, HttpFailure> {
        let Some(dpop) = &self.dpop else {
            return self.send(reqwest::RequestBuilder::from_parts(self.client.clone(), build()?)).await;
        };
        let mut retried = false;
        loop {
            let mut attempt = build()?;
            let proof = dpop
                .proof(attempt.method().as_str(), attempt.url(), NonceFrom::AuthorizationServer, None)
                .map_err(|e| HttpFailure(e.message))?;
            let value = reqwest::header::HeaderValue::from_str(&proof)
                .map_err(|_| HttpFailure("the DPoP proof is not a header value".into()))?;
            attempt.headers_mut().insert("dpop", value);
            let answer = self.send(reqwest::RequestBuilder::from_parts(self.client.clone(), attempt)).await?;
            let fresh = answer.dpop_nonce.as_deref().is_some_and(|n| dpop.set_nonce(NonceFrom::AuthorizationServer, n));
            let asks_nonce = answer.status == 400
                && answer.json().and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned)).as_deref()
                    == Some("use_dpop_nonce");
            if asks_nonce && fresh && !retried {
                tracing::debug!("the authorization server asked for a DPoP nonce: sending the token request again");
                retried = true;
                continue;
            }
            return Ok(answer);
        }
    }

    /// GET `url`, asking for JSON.
    pub(crate) async fn get_json(&self, url: &url::Url) -> Result<Answer, HttpFailure> {
        self.send(self.client.get(url.clone()).header(ACCEPT, "application/json")).await
    }

    /// POST `value` as JSON to `url`.
    pub(crate) async fn post_json(&self, url: &url::Url, value: &Value) -> Result<Answer, HttpFailure> {
        let body = serde_json::to_vec(value).map_err(|e| HttpFailure(e.to_string()))?;
        let request = self
            .client
            .post(url.clone())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        self.send(request).await
    }
}

impl<'c> oauth2::AsyncHttpClient<'c> for AuthHttp {
    type Error = HttpFailure;
    type Future = Pin<Box<dyn Future<Output = Result<oauth2::HttpResponse, HttpFailure>> + Send + 'c>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(async move {
            let request = reqwest::Request::try_from(request)
                .map_err(|e| HttpFailure(format!("invalid token request: {}", crate::redact::describe(&e))))?;
            let answer = self
                .send_token(|| {
                    request.try_clone().ok_or_else(|| HttpFailure("the token request cannot be repeated".into()))
                })
                .await?;
            let mut response = oauth2::HttpResponse::new(answer.body);
            *response.status_mut() =
                oauth2::http::StatusCode::from_u16(answer.status).map_err(|e| HttpFailure(e.to_string()))?;
            // The token response is JSON whatever the server labels it; oauth2 checks the type.
            response
                .headers_mut()
                .insert(oauth2::http::header::CONTENT_TYPE, oauth2::http::HeaderValue::from_static("application/json"));
            Ok(response)
        })
    }
}
