//! An in-process fake for the unattended-grant and DPoP tests: one axum app on 127.0.0.1:0 that
//! is a protected MCP resource (POST /mcp), its authorization server (issuer
//! `http://127.0.0.1:P`, token endpoint `/token`) and an enterprise identity provider
//! (`/idp/token`). It checks what a strict server checks, with RustCrypto (not the client's
//! signer): client authentication (Basic, post, `private_key_jwt` assertions), the grants'
//! parameters, DPoP proofs (signature, `typ`, `htm`, `htu`, `iat`, `ath`, the key bound to the
//! token, replayed `jti`s) and both nonce dances, and records what it saw.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use p256::ecdsa::signature::Verifier;
use rsa::sha2::{Digest, Sha256};
use serde_json::{Value, json};

/// The client id the authorization server knows.
pub const CLIENT_ID: &str = "m2m-client";
/// Its secret.
pub const CLIENT_SECRET: &str = "m2m-secret-value-7f3a";
/// The client id the identity provider knows.
pub const IDP_CLIENT_ID: &str = "idp-client";

/// A token request the authorization server or the identity provider got.
#[derive(Debug, Clone)]
pub struct TokenRequest {
    pub path: String,
    pub form: HashMap<String, String>,
    /// `id:secret` of a Basic header.
    pub basic: Option<String>,
    /// The DPoP proof's claims, when one came and verified.
    pub proof: Option<Value>,
}

/// An MCP request that was let through: how it was authorized.
#[derive(Debug, Clone)]
pub struct McpRequest {
    pub scheme: String,
    pub proof: Option<Value>,
}

/// The fake's knobs and records.
#[derive(Debug, Default)]
pub struct FakeState {
    pub base: String,
    /// The token endpoint's client authentication methods.
    pub auth_methods: Vec<String>,
    /// The DPoP algorithms the authorization server advertises (none: DPoP is not advertised);
    /// the MCP endpoint then challenges with the `DPoP` scheme, unless `rs_bearer_only`.
    pub dpop_algs: Vec<String>,
    /// The MCP endpoint knows bearer tokens only: it challenges with `Bearer` and refuses the
    /// `DPoP` scheme.
    pub rs_bearer_only: bool,
    /// The nonce the token endpoint demands, and the one the MCP endpoint demands.
    pub as_nonce: Option<String>,
    pub rs_nonce: Option<String>,
    /// The MCP endpoint refuses the next N proofs (as `invalid_dpop_proof`) that are otherwise good.
    pub refuse_proofs: usize,
    /// The public JWK of the client's `private_key_jwt` key.
    pub client_jwk: Option<Value>,
    /// The workload token the jwt-bearer grant accepts; anything else: `invalid_grant`.
    pub accepted_assertions: Vec<String>,
    /// The ID token the identity provider accepts.
    pub id_token: String,
    /// The token type the identity provider says it issued.
    pub issued_token_type: String,
    /// Every token is refused with this error.
    pub refuse_grant: Option<String>,
    /// `expires_in` of the access tokens (default 3600).
    pub expires_in: u64,

    pub token_requests: Vec<TokenRequest>,
    pub mcp_ok: Vec<McpRequest>,
    pub mcp_refused: Vec<String>,
    pub other_paths: Vec<String>,
    /// Issued access tokens: token → (DPoP key thumbprint, revoked).
    pub tokens: HashMap<String, (Option<String>, bool)>,
    /// ID-JAGs the identity provider issued.
    pub id_jags: Vec<String>,
    pub seen_jti: HashSet<String>,
    /// The `jti`s of the client assertions accepted (each is good once, RFC 7523 §3).
    pub assertion_jti: HashSet<String>,
    pub next: u32,
}

impl FakeState {
    pub fn issuer(&self) -> String {
        self.base.clone()
    }

    /// Revoke every access token issued so far.
    pub fn revoke_all(&mut self) {
        for entry in self.tokens.values_mut() {
            entry.1 = true;
        }
    }

    /// Whether `text` shows any secret this fake knows or issued.
    pub fn assert_clean(&self, text: &str) {
        let mut secrets: Vec<String> = self.tokens.keys().cloned().collect();
        secrets.extend(self.id_jags.iter().cloned());
        secrets.extend(self.accepted_assertions.iter().cloned());
        secrets.push(CLIENT_SECRET.into());
        if !self.id_token.is_empty() {
            secrets.push(self.id_token.clone());
        }
        for secret in secrets {
            assert!(!text.contains(&secret), "a secret shows: {text}");
        }
    }
}

/// A running fake.
#[derive(Clone)]
pub struct Fake {
    pub port: u16,
    state: Arc<Mutex<FakeState>>,
}

impl Fake {
    pub async fn start(tweak: impl FnOnce(&mut FakeState)) -> Fake {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut state = FakeState {
            base: format!("http://127.0.0.1:{port}"),
            auth_methods: vec!["client_secret_basic".into()],
            issued_token_type: "urn:ietf:params:oauth:token-type:id-jag".into(),
            expires_in: 3600,
            ..FakeState::default()
        };
        tweak(&mut state);
        let fake = Fake { port, state: Arc::new(Mutex::new(state)) };
        let app = axum::Router::new().fallback(handle).with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        fake
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut FakeState) -> R) -> R {
        f(&mut self.state.lock().unwrap())
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

fn json_response(status: u16, headers: &[(&str, String)], body: &Value) -> Response {
    let mut builder =
        Response::builder().status(StatusCode::from_u16(status).unwrap()).header("content-type", "application/json");
    for (k, v) in headers {
        builder = builder.header(*k, v.as_str());
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

fn oauth_error(status: u16, error: &str, headers: &[(&str, String)]) -> Response {
    json_response(status, headers, &json!({"error": error, "error_description": format!("the fake says {error}")}))
}

async fn handle(State(fake): State<Fake>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let mut s = fake.state.lock().unwrap();
    let base = s.base.clone();
    match (method.as_str(), uri.path()) {
        ("POST", "/mcp") => mcp(&mut s, &headers, &body),
        ("GET", "/mcp") => json_response(405, &[], &json!({})),
        ("DELETE", "/mcp") => json_response(200, &[], &json!({})),
        ("GET", "/.well-known/oauth-protected-resource/mcp") => json_response(
            200,
            &[],
            &json!({"resource": format!("{base}/mcp"), "authorization_servers": [base], "scopes_supported": ["mcp.read"]}),
        ),
        ("GET", "/.well-known/oauth-authorization-server") => {
            let mut metadata = json!({
                "issuer": base,
                "token_endpoint": format!("{base}/token"),
                "grant_types_supported": ["client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
                "token_endpoint_auth_methods_supported": s.auth_methods,
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            });
            if !s.dpop_algs.is_empty() {
                metadata["dpop_signing_alg_values_supported"] = json!(s.dpop_algs);
            }
            json_response(200, &[], &metadata)
        }
        ("POST", "/token") => token(&mut s, &headers, &body),
        ("POST", "/idp/token") => idp_token(&mut s, &headers, &body),
        (_, path) => {
            s.other_paths.push(path.to_owned());
            json_response(404, &[], &json!({}))
        }
    }
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn basic(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("authorization")?.to_str().ok()?.strip_prefix("Basic ")?;
    let decoded = String::from_utf8(STANDARD.decode(value).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    let dec = |s: &str| url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().unwrap().1.into_owned();
    Some(format!("{}:{}", dec(id), dec(secret)))
}

/// A compact JWS: (header, claims), when its signature verifies with `jwk` (ES256 or RS256).
pub fn verify_jws(jwt: &str, jwk: &Value) -> Option<(Value, Value)> {
    let parts: Vec<&str> = jwt.split('.').collect();
    if parts.len() != 3 {
        return None;
    }
    let json = |p: &str| -> Option<Value> { serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).ok()?).ok() };
    let (header, claims) = (json(parts[0])?, json(parts[1])?);
    let input = format!("{}.{}", parts[0], parts[1]);
    let signature = URL_SAFE_NO_PAD.decode(parts[2]).ok()?;
    match header["alg"].as_str()? {
        "ES256" => {
            let members = json!({"kty": jwk["kty"], "crv": jwk["crv"], "x": jwk["x"], "y": jwk["y"]});
            let key = p256::ecdsa::VerifyingKey::from(p256::PublicKey::from_jwk_str(&members.to_string()).ok()?);
            key.verify(input.as_bytes(), &p256::ecdsa::Signature::from_slice(&signature).ok()?).ok()?;
        }
        "RS256" => {
            let n = URL_SAFE_NO_PAD.decode(jwk["n"].as_str()?).ok()?;
            let e = URL_SAFE_NO_PAD.decode(jwk["e"].as_str()?).ok()?;
            let public =
                rsa::RsaPublicKey::new(rsa::BigUint::from_bytes_be(&n), rsa::BigUint::from_bytes_be(&e)).ok()?;
            let key = rsa::pkcs1v15::VerifyingKey::<Sha256>::new(public);
            key.verify(input.as_bytes(), &rsa::pkcs1v15::Signature::try_from(signature.as_slice()).ok()?).ok()?;
        }
        _ => return None,
    }
    Some((header, claims))
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

fn b64_sha256(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(text.as_bytes()))
}

/// RFC 7638 thumbprint of an EC P-256 JWK.
pub fn thumbprint(jwk: &Value) -> String {
    b64_sha256(&format!(r#"{{"crv":"P-256","kty":"EC","x":{},"y":{}}}"#, jwk["x"], jwk["y"]))
}

/// Check a DPoP proof for `method` `url`: `Ok((claims, thumbprint))`, or why it is refused.
fn check_proof(s: &mut FakeState, proof: &str, method: &str, url: &str) -> Result<(Value, String), String> {
    let header: Value = proof
        .split('.')
        .next()
        .and_then(|p| URL_SAFE_NO_PAD.decode(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or("the proof's header is not JSON")?;
    if header["typ"] != "dpop+jwt" {
        return Err(format!("typ is {}", header["typ"]));
    }
    let jwk = header["jwk"].clone();
    if jwk.get("d").is_some() {
        return Err("the jwk holds a private key".into());
    }
    let (_, claims) = verify_jws(proof, &jwk).ok_or("the proof's signature does not verify")?;
    if claims["htm"] != method || claims["htu"] != url {
        return Err(format!("htm/htu are {} {}", claims["htm"], claims["htu"]));
    }
    if claims["iat"].as_u64().is_none_or(|iat| iat.abs_diff(now()) > 60) {
        return Err("iat is not now".into());
    }
    let jti = claims["jti"].as_str().ok_or("no jti")?.to_owned();
    if !s.seen_jti.insert(jti) {
        return Err("the jti was seen before (a replay)".into());
    }
    Ok((claims, thumbprint(&jwk)))
}

fn token(s: &mut FakeState, headers: &HeaderMap, body: &[u8]) -> Response {
    let form = form(body);
    let mut record = TokenRequest { path: "/token".into(), form: form.clone(), basic: basic(headers), proof: None };
    let mut jkt = None;
    if let Some(proof) = headers.get("dpop").and_then(|v| v.to_str().ok()) {
        let url = format!("{}/token", s.base);
        match check_proof(s, proof, "POST", &url) {
            Ok((claims, thumb)) => {
                if let Some(nonce) = s.as_nonce.clone()
                    && claims["nonce"] != nonce.as_str()
                {
                    record.proof = Some(claims);
                    s.token_requests.push(record);
                    return oauth_error(400, "use_dpop_nonce", &[("dpop-nonce", nonce)]);
                }
                record.proof = Some(claims);
                jkt = Some(thumb);
            }
            Err(why) => {
                s.token_requests.push(record);
                return json_response(400, &[], &json!({"error": "invalid_dpop_proof", "error_description": why}));
            }
        }
    }
    s.token_requests.push(record.clone());
    if let Some(error) = s.refuse_grant.clone() {
        return oauth_error(400, &error, &[]);
    }
    let issuer = s.issuer();
    let client_ok = match (record.basic.as_deref(), form.get("client_assertion")) {
        (Some(b), _) => b == format!("{CLIENT_ID}:{CLIENT_SECRET}"),
        (None, Some(assertion)) => {
            let jwk = s.client_jwk.clone().unwrap_or(Value::Null);
            let verified = verify_jws(assertion, &jwk).filter(|(_, c)| {
                c["iss"] == CLIENT_ID
                    && c["sub"] == CLIENT_ID
                    && c["aud"] == issuer.as_str()
                    && c["exp"].as_u64().is_some_and(|e| e > now())
            });
            let jti = verified.and_then(|(_, c)| c["jti"].as_str().map(str::to_owned));
            form.get("client_assertion_type").map(String::as_str)
                == Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
                && jti.is_some_and(|jti| s.assertion_jti.insert(jti))
        }
        (None, None) => {
            form.get("client_secret").map(String::as_str) == Some(CLIENT_SECRET)
                || s.auth_methods.iter().any(|m| m == "none")
        }
    };
    if !client_ok {
        return oauth_error(401, "invalid_client", &[]);
    }
    match form.get("grant_type").map(String::as_str) {
        Some("client_credentials") => {}
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => {
            let assertion = form.get("assertion").cloned().unwrap_or_default();
            if !s.accepted_assertions.contains(&assertion) && !s.id_jags.contains(&assertion) {
                return oauth_error(400, "invalid_grant", &[]);
            }
        }
        _ => return oauth_error(400, "unsupported_grant_type", &[]),
    }
    s.next += 1;
    let access = format!("at-{}-{}", s.next, if jkt.is_some() { "dpop" } else { "bearer" });
    s.tokens.insert(access.clone(), (jkt.clone(), false));
    let token_type = if jkt.is_some() { "DPoP" } else { "Bearer" };
    json_response(200, &[], &json!({"access_token": access, "token_type": token_type, "expires_in": s.expires_in}))
}

fn idp_token(s: &mut FakeState, headers: &HeaderMap, body: &[u8]) -> Response {
    let form = form(body);
    s.token_requests.push(TokenRequest {
        path: "/idp/token".into(),
        form: form.clone(),
        basic: basic(headers),
        proof: None,
    });
    let expect = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange".to_owned()),
        ("requested_token_type", "urn:ietf:params:oauth:token-type:id-jag".to_owned()),
        ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token".to_owned()),
        ("subject_token", s.id_token.clone()),
        ("audience", s.issuer()),
        ("resource", format!("{}/mcp", s.base)),
    ];
    for (k, v) in expect {
        if form.get(k) != Some(&v) {
            return oauth_error(400, "invalid_request", &[]);
        }
    }
    s.next += 1;
    let jag = format!("idjag-{}", s.next);
    s.id_jags.push(jag.clone());
    json_response(
        200,
        &[],
        &json!({"access_token": jag, "issued_token_type": s.issued_token_type, "token_type": "N_A"}),
    )
}

fn mcp(s: &mut FakeState, headers: &HeaderMap, body: &[u8]) -> Response {
    let prm = format!("{}/.well-known/oauth-protected-resource/mcp", s.base);
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let (scheme, token) = auth.split_once(' ').unwrap_or(("", ""));
    let scheme = scheme.to_ascii_lowercase();
    let refuse = |s: &mut FakeState, why: &str, challenge: String, extra: &[(&str, String)]| {
        s.mcp_refused.push(why.to_owned());
        let mut headers = vec![("www-authenticate", challenge)];
        headers.extend(extra.iter().cloned());
        json_response(401, &headers, &json!({"error": why}))
    };
    let scheme_offered = if s.dpop_algs.is_empty() || s.rs_bearer_only { "Bearer" } else { "DPoP" };
    let Some((jkt, revoked)) = s.tokens.get(token).cloned() else {
        return refuse(s, "no token", format!("{scheme_offered} resource_metadata=\"{prm}\""), &[]);
    };
    if s.rs_bearer_only && scheme != "bearer" {
        return refuse(s, "not bearer", format!("Bearer error=\"invalid_token\", resource_metadata=\"{prm}\""), &[]);
    }
    if revoked {
        return refuse(s, "revoked", format!("Bearer error=\"invalid_token\", resource_metadata=\"{prm}\""), &[]);
    }
    let mut seen = McpRequest { scheme: scheme.clone(), proof: None };
    if let Some(jkt) = jkt {
        let dpop_challenge = |error: &str| format!("DPoP error=\"{error}\", resource_metadata=\"{prm}\"");
        if scheme != "dpop" {
            return refuse(s, "a DPoP-bound token sent as bearer", dpop_challenge("invalid_token"), &[]);
        }
        let Some(proof) = headers.get("dpop").and_then(|v| v.to_str().ok()) else {
            return refuse(s, "no proof", dpop_challenge("invalid_dpop_proof"), &[]);
        };
        let url = format!("{}/mcp", s.base);
        let (claims, thumb) = match check_proof(s, proof, "POST", &url) {
            Ok(ok) => ok,
            Err(why) => return refuse(s, &why, dpop_challenge("invalid_dpop_proof"), &[]),
        };
        if thumb != jkt || claims["ath"] != b64_sha256(token).as_str() {
            return refuse(s, "the proof does not match the token", dpop_challenge("invalid_dpop_proof"), &[]);
        }
        if let Some(nonce) = s.rs_nonce.clone()
            && claims["nonce"] != nonce.as_str()
        {
            return refuse(s, "no nonce", dpop_challenge("use_dpop_nonce"), &[("dpop-nonce", nonce)]);
        }
        if s.refuse_proofs > 0 {
            s.refuse_proofs -= 1;
            return refuse(s, "refused once", dpop_challenge("invalid_dpop_proof"), &[]);
        }
        seen.proof = Some(claims);
    } else if scheme != "bearer" {
        return refuse(s, "not bearer", format!("Bearer resource_metadata=\"{prm}\""), &[]);
    }
    s.mcp_ok.push(seen);
    let msg: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let Some(id) = msg.get("id").cloned() else { return json_response(202, &[], &json!({})) };
    json_response(200, &[], &json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}))
}
