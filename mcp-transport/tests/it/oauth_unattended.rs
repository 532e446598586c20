//! The unattended grants through the real streamable HTTP transport, against the strict fake of
//! [`m2m_support`]: client credentials with a secret (Basic or in the body) or a private key
//! (`private_key_jwt`, verified by RustCrypto), workload identity (a file re-read on every grant,
//! a command, no retry and no other grant after a refusal), enterprise-managed authorization
//! (the ID token exchanged at the identity provider, the ID-JAG presented with Basic client
//! authentication), and DPoP on top of them (both nonce dances, the key kept with the tokens).

use std::sync::Arc;
use std::time::Duration;

use crate::m2m_support::{CLIENT_ID, CLIENT_SECRET, Fake, IDP_CLIENT_ID};
use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_transport::auth::jose::SigningKey;
use mcp_transport::auth::oauth::{
    CredentialProvider, CredentialSource, DpopPolicy, EnterpriseSettings, Grant, OAuthClient, OAuthSettings,
};
use mcp_transport::auth::store::{MemoryStore, TokenStore};
use mcp_transport::auth::{AuthError, AuthStep};
use mcp_transport::{Secret, StreamableHttpTransport, Transport, TransportError, TransportEvent};
use serde_json::json;
use test_support::within;

fn client(fake: &Fake, store: Arc<dyn TokenStore>, tweak: impl FnOnce(&mut OAuthSettings)) -> Arc<OAuthClient> {
    let mut settings = OAuthSettings {
        client_id: Some(CLIENT_ID.into()),
        client_secret: Some(Secret::new(CLIENT_SECRET)),
        grant: Grant::ClientCredentials,
        store,
        http_timeout: Duration::from_secs(5),
        ..OAuthSettings::default()
    };
    tweak(&mut settings);
    Arc::new(OAuthClient::new("m2m", &fake.url("/mcp"), settings).unwrap())
}

fn transport(fake: &Fake, client: &Arc<OAuthClient>) -> StreamableHttpTransport {
    let mut config = crate::http_support::config(&fake.url("/mcp"));
    config.authorization = Some(client.clone());
    StreamableHttpTransport::new(config).unwrap()
}

/// One tools/call and its outcome.
async fn call(t: &StreamableHttpTransport, id: i64) -> Result<(), TransportError> {
    t.send(crate::http_support::request(id, "tools/call", json!({"name": "echo", "arguments": {}}))).await.unwrap();
    match crate::http_support::next_event(t).await {
        TransportEvent::Message(mcp_protocol::Message::Response(r)) => {
            r.into_result().map(drop).map_err(|e| TransportError::Other(format!("{e:?}")))
        }
        TransportEvent::RequestFailed { error, .. } => Err(error),
        other => panic!("unexpected event {other:?}"),
    }
}

fn auth_error(fake: &Fake, outcome: Result<(), TransportError>) -> AuthError {
    let e = match outcome {
        Err(TransportError::Auth(e)) => e,
        other => panic!("expected an authorization error, got {other:?}"),
    };
    fake.with(|s| s.assert_clean(&format!("{e} {e:?}")));
    e
}

fn store() -> Arc<MemoryStore> {
    Arc::new(MemoryStore::new())
}

fn grants(fake: &Fake) -> Vec<String> {
    fake.with(|s| s.token_requests.iter().map(|r| r.form.get("grant_type").cloned().unwrap_or_default()).collect())
}

#[tokio::test]
async fn client_credentials_with_a_secret_uses_basic_and_needs_no_browser() {
    within(async {
        let fake = Fake::start(|_| {}).await;
        let t = transport(&fake, &client(&fake, store(), |_| {}));
        call(&t, 1).await.unwrap();
        call(&t, 2).await.unwrap();
        let requests = fake.with(|s| s.token_requests.clone());
        assert_eq!(requests.len(), 1, "one grant serves both calls");
        let r = &requests[0];
        assert_eq!(r.basic.as_deref(), Some(format!("{CLIENT_ID}:{CLIENT_SECRET}").as_str()));
        assert_eq!(r.form.get("grant_type").map(String::as_str), Some("client_credentials"));
        assert_eq!(r.form.get("resource"), Some(&fake.url("/mcp")), "the resource indicator");
        assert_eq!(r.form.get("scope").map(String::as_str), Some("mcp.read"), "the resource's scopes");
        assert!(!r.form.contains_key("client_secret"), "the secret goes in the header only");
        assert!(fake.with(|s| s.other_paths.is_empty()), "no authorization endpoint, no registration");
        assert!(fake.with(|s| s.mcp_ok.iter().all(|m| m.scheme == "bearer")));
    })
    .await;
}

#[tokio::test]
async fn client_credentials_sends_the_secret_in_the_body_where_only_post_is_offered() {
    within(async {
        let fake = Fake::start(|s| s.auth_methods = vec!["client_secret_post".into()]).await;
        let t = transport(&fake, &client(&fake, store(), |_| {}));
        call(&t, 1).await.unwrap();
        let r = fake.with(|s| s.token_requests[0].clone());
        assert_eq!(r.basic, None);
        assert_eq!(r.form.get("client_id").map(String::as_str), Some(CLIENT_ID));
        assert_eq!(r.form.get("client_secret").map(String::as_str), Some(CLIENT_SECRET));
    })
    .await;
}

#[tokio::test]
async fn private_key_jwt_assertions_verify_at_the_server_and_a_revoked_token_is_replaced() {
    within(async {
        let (key, _) = SigningKey::generate_es256().unwrap();
        let jwk = serde_json::to_value(key.public_jwk()).unwrap();
        let fake = Fake::start(|s| {
            s.auth_methods = vec!["private_key_jwt".into()];
            s.client_jwk = Some(jwk);
        })
        .await;
        let t = transport(
            &fake,
            &client(&fake, store(), |s| {
                s.client_secret = None;
                s.client_key = Some(key);
            }),
        );
        call(&t, 1).await.unwrap();
        fake.with(|s| s.revoke_all());
        // The refusal of the revoked token runs the grant again, and the call goes through.
        call(&t, 2).await.unwrap();
        let requests = fake.with(|s| s.token_requests.clone());
        assert_eq!(requests.len(), 2);
        let assertions: Vec<&String> = requests.iter().map(|r| r.form.get("client_assertion").unwrap()).collect();
        assert_ne!(assertions[0], assertions[1], "a new assertion per request");
        assert!(requests.iter().all(|r| r.basic.is_none() && !r.form.contains_key("client_secret")));
    })
    .await;
}

#[tokio::test]
async fn an_expiring_token_is_renewed_by_the_grant_before_it_is_sent() {
    within(async {
        let fake = Fake::start(|s| {
            // It expires as it is issued: every later request renews it first.
            s.expires_in = 0;
            s.dpop_algs = vec!["ES256".into()];
        })
        .await;
        let oauth = client(&fake, store(), |s| s.refresh_margin = Duration::from_secs(30));
        let t = transport(&fake, &oauth);
        for id in 1..=3 {
            call(&t, id).await.unwrap();
        }
        // The first call's refusal started the grant; each later call renewed the token before
        // sending (it expires within the margin), without a refusal and without discovery.
        assert_eq!(fake.with(|s| s.mcp_refused.clone()), ["no token"]);
        // (Every request renews: each token expires within the margin. The transport's stream
        // GET is one more request.)
        let grants = grants(&fake);
        assert!(grants.len() >= 3 && grants.iter().all(|g| g == "client_credentials"), "{grants:?}");
        assert!(fake.with(|s| s.token_requests.iter().all(|r| r.proof.is_some())), "the renewals keep DPoP on");
        assert!(fake.with(|s| s.mcp_ok.iter().all(|m| m.scheme == "dpop")));
    })
    .await;
}

#[tokio::test]
async fn a_token_shorter_lived_than_the_margin_is_used_for_half_its_life() {
    within(async {
        let fake = Fake::start(|s| s.expires_in = 30).await;
        // The default margin is 60 s: without the cap at half the lifetime, the fresh token
        // would count as expiring and be renewed before every request.
        let t = transport(&fake, &client(&fake, store(), |_| {}));
        for id in 1..=3 {
            call(&t, id).await.unwrap();
        }
        assert_eq!(grants(&fake), ["client_credentials"], "one grant for the three calls");
        assert_eq!(fake.with(|s| s.mcp_ok.len()), 3);
    })
    .await;
}

#[tokio::test]
async fn private_key_jwt_with_a_dpop_nonce_sends_a_new_assertion_with_the_nonce() {
    within(async {
        let (key, _) = SigningKey::generate_es256().unwrap();
        let jwk = serde_json::to_value(key.public_jwk()).unwrap();
        let fake = Fake::start(|s| {
            s.auth_methods = vec!["private_key_jwt".into()];
            s.client_jwk = Some(jwk);
            s.dpop_algs = vec!["ES256".into()];
            s.as_nonce = Some("as-nonce-7".into());
        })
        .await;
        let oauth = client(&fake, store(), |s| {
            s.client_secret = None;
            s.client_key = Some(key);
        });
        call(&transport(&fake, &oauth), 1).await.unwrap();
        let requests = fake.with(|s| s.token_requests.clone());
        assert_eq!(requests.len(), 2, "refused for the nonce, then granted");
        let assertion = |i: usize| requests[i].form.get("client_assertion").cloned().unwrap();
        assert_ne!(assertion(0), assertion(1), "each send has its own assertion (a jti is good once)");
        assert_eq!(fake.with(|s| s.assertion_jti.len()), 1, "the server accepted the second one");
    })
    .await;
}

#[tokio::test]
async fn a_client_credentials_grant_without_a_client_id_names_what_is_missing() {
    within(async {
        let fake = Fake::start(|_| {}).await;
        let t = transport(&fake, &client(&fake, store(), |s| s.client_id = None));
        let e = auth_error(&fake, call(&t, 1).await);
        assert_eq!(e.step, AuthStep::Registration);
        assert!(e.message.contains("needs a client id"), "{e}");
        assert!(fake.with(|s| s.token_requests.is_empty()));
    })
    .await;
}

#[tokio::test]
async fn a_workload_token_file_is_read_again_for_every_grant() {
    within(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "workload-token-one\n").unwrap();
        let fake = Fake::start(|s| {
            s.auth_methods = vec!["none".into()];
            s.accepted_assertions = vec!["workload-token-one".into(), "workload-token-two".into()];
        })
        .await;
        let oauth = client(&fake, store(), |s| {
            s.client_secret = None;
            s.grant = Grant::WorkloadIdentity { token: CredentialSource::File(path.clone()) };
        });
        let t = transport(&fake, &oauth);
        call(&t, 1).await.unwrap();
        // The platform rotates the token; the next grant presents the new one.
        std::fs::write(&path, "workload-token-two").unwrap();
        fake.with(|s| s.revoke_all());
        call(&t, 2).await.unwrap();
        let requests = fake.with(|s| s.token_requests.clone());
        let assertions: Vec<&str> = requests.iter().map(|r| r.form["assertion"].as_str()).collect();
        assert_eq!(assertions, ["workload-token-one", "workload-token-two"]);
        assert!(requests.iter().all(|r| r.form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"));
        assert!(requests.iter().all(|r| r.form.get("client_id").map(String::as_str) == Some(CLIENT_ID)));
        assert!(format!("{oauth:?}").contains("File"), "the source shows, not the token");
    })
    .await;
}

#[tokio::test]
async fn a_workload_token_from_a_command_and_a_refused_one_is_not_retried_nor_replaced() {
    within(async {
        let fake = Fake::start(|s| {
            s.auth_methods = vec!["none".into()];
            s.accepted_assertions = vec!["from-the-command".into()];
        })
        .await;
        let command = |text: &str| Grant::WorkloadIdentity {
            token: CredentialSource::Command(vec!["printf".into(), text.into()]),
        };
        let good = client(&fake, store(), |s| s.grant = command("from-the-command"));
        call(&transport(&fake, &good), 1).await.unwrap();
        assert_eq!(grants(&fake).len(), 1);

        let bad = client(&fake, store(), |s| s.grant = command("a-token-the-server-refuses"));
        let e = auth_error(&fake, call(&transport(&fake, &bad), 1).await);
        assert_eq!(e.step, AuthStep::Token);
        assert!(e.message.contains("invalid_grant") && e.message.contains("not retrying"), "{e}");
        assert!(!e.to_string().contains("a-token-the-server-refuses"), "the token never shows: {e}");
        assert_eq!(grants(&fake).len(), 2, "exactly one more token request: no retry");
        assert!(
            grants(&fake).iter().all(|g| g == "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            "no switch to another grant"
        );
        assert!(fake.with(|s| s.other_paths.is_empty()), "no authorization endpoint, no registration");

        let missing = client(&fake, store(), |s| {
            s.grant = Grant::WorkloadIdentity { token: CredentialSource::File("/nonexistent/token".into()) }
        });
        let e = auth_error(&fake, call(&transport(&fake, &missing), 1).await);
        assert!(e.message.contains("/nonexistent/token") && e.message.contains("workload identity token"), "{e}");
    })
    .await;
}

/// The host's ID token callback.
#[derive(Debug)]
struct HostIdToken(String);

impl CredentialProvider for HostIdToken {
    fn credential(&self) -> BoxFuture<'_, Result<Secret, String>> {
        futures::future::ready(Ok(Secret::new(self.0.clone()))).boxed()
    }
}

#[tokio::test]
async fn enterprise_managed_authorization_exchanges_the_id_token_then_presents_the_id_jag() {
    within(async {
        let fake = Fake::start(|s| s.id_token = "the-users-id-token".into()).await;
        let idp = fake.url("/idp/token");
        let oauth = client(&fake, store(), |s| {
            s.grant = Grant::Enterprise(EnterpriseSettings {
                token_endpoint: idp.clone(),
                client_id: Some(IDP_CLIENT_ID.into()),
                client_secret: None,
                id_token: CredentialSource::Host(Arc::new(HostIdToken("the-users-id-token".into()))),
            });
        });
        call(&transport(&fake, &oauth), 1).await.unwrap();
        let requests = fake.with(|s| s.token_requests.clone());
        assert_eq!(requests.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(), ["/idp/token", "/token"]);
        let (exchange, bearer) = (&requests[0], &requests[1]);
        assert_eq!(exchange.form.get("client_id").map(String::as_str), Some(IDP_CLIENT_ID));
        assert_eq!(exchange.form.get("scope").map(String::as_str), Some("mcp.read"));
        assert_eq!(bearer.form["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
        assert_eq!(Some(&bearer.form["assertion"]), fake.with(|s| s.id_jags.first().cloned()).as_ref());
        assert_eq!(bearer.basic.as_deref(), Some(format!("{CLIENT_ID}:{CLIENT_SECRET}").as_str()));
    })
    .await;
}

#[tokio::test]
async fn enterprise_refuses_a_token_that_is_not_an_id_jag_and_a_refused_exchange_stops_there() {
    within(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id_token");
        std::fs::write(&path, "the-users-id-token").unwrap();
        let fake = Fake::start(|s| {
            s.id_token = "the-users-id-token".into();
            s.issued_token_type = "urn:ietf:params:oauth:token-type:access_token".into();
        })
        .await;
        let grant = |file: &std::path::Path| {
            Grant::Enterprise(EnterpriseSettings {
                token_endpoint: fake.url("/idp/token"),
                client_id: Some(IDP_CLIENT_ID.into()),
                client_secret: None,
                id_token: CredentialSource::File(file.to_owned()),
            })
        };
        let oauth = client(&fake, store(), |s| s.grant = grant(&path));
        let e = auth_error(&fake, call(&transport(&fake, &oauth), 1).await);
        assert!(e.message.contains("not an identity assertion grant"), "{e}");
        assert_eq!(fake.with(|s| s.token_requests.len()), 1, "nothing goes to the authorization server");

        std::fs::write(&path, "an-id-token-the-idp-refuses").unwrap();
        let oauth = client(&fake, store(), |s| s.grant = grant(&path));
        let e = auth_error(&fake, call(&transport(&fake, &oauth), 2).await);
        assert!(e.message.contains("token exchange at the identity provider was refused: invalid_request"), "{e}");
        assert!(!e.to_string().contains("an-id-token-the-idp-refuses"));
    })
    .await;
}

#[tokio::test]
async fn dpop_with_both_nonce_dances_binds_every_request_to_the_stored_key() {
    within(async {
        let fake = Fake::start(|s| {
            s.dpop_algs = vec!["ES256".into()];
            s.as_nonce = Some("as-nonce-1".into());
            s.rs_nonce = Some("rs-nonce-1".into());
        })
        .await;
        let kept = store();
        let oauth = client(&fake, kept.clone(), |_| {});
        let t = transport(&fake, &oauth);
        for id in 1..=3 {
            call(&t, id).await.unwrap();
        }
        let requests = fake.with(|s| s.token_requests.clone());
        assert_eq!(requests.len(), 2, "the token request, and once more with the server's nonce");
        assert!(requests[0].proof.as_ref().unwrap().get("nonce").is_none());
        assert_eq!(requests[1].proof.as_ref().unwrap()["nonce"], "as-nonce-1");
        assert_ne!(requests[0].proof.as_ref().unwrap()["jti"], requests[1].proof.as_ref().unwrap()["jti"]);
        let ok = fake.with(|s| s.mcp_ok.clone());
        assert_eq!(ok.len(), 3);
        assert!(ok.iter().all(|m| m.scheme == "dpop" && m.proof.as_ref().unwrap()["nonce"] == "rs-nonce-1"));
        assert_eq!(fake.with(|s| s.mcp_refused.clone()), ["no token", "no nonce"], "one nonce dance, then none");

        // The key is kept with the tokens: a later client (another run) proves the same key.
        let (_, creds) = kept.entries(oauth.resource()).unwrap().remove(0);
        assert!(creds.dpop_key.is_some(), "the DPoP key is stored");
        assert_eq!(creds.tokens.as_ref().unwrap().token_type, "DPoP");
        assert!(!format!("{creds:?}").contains(creds.dpop_key.as_ref().unwrap().expose()), "Debug hides the key");
        let later = client(&fake, kept.clone(), |_| {});
        call(&transport(&fake, &later), 9).await.unwrap();
        assert_eq!(fake.with(|s| s.token_requests.len()), 2, "the stored DPoP token is used: no new grant");
        assert_eq!(fake.with(|s| s.mcp_ok.len()), 4, "and its proof binds the stored key");
    })
    .await;
}

#[tokio::test]
async fn dpop_follows_the_policy_and_a_refused_proof_is_replaced_by_a_fresh_one_a_bounded_number_of_times() {
    within(async {
        let fake = Fake::start(|s| s.dpop_algs = vec!["ES256".into()]).await;
        let never = client(&fake, store(), |s| s.dpop = DpopPolicy::Never);
        call(&transport(&fake, &never), 1).await.unwrap();
        assert!(fake.with(|s| s.token_requests[0].proof.is_none() && s.mcp_ok[0].scheme == "bearer"));

        // Auto: an authorization server that offers DPoP, in front of a resource that
        // challenges with `Bearer` only (and would refuse a DPoP token), gives a bearer token.
        let bearer_only = Fake::start(|s| {
            s.dpop_algs = vec!["ES256".into()];
            s.rs_bearer_only = true;
        })
        .await;
        let auto = client(&bearer_only, store(), |_| {});
        call(&transport(&bearer_only, &auto), 1).await.unwrap();
        assert!(bearer_only.with(|s| s.token_requests[0].proof.is_none()), "no proof for a Bearer-only resource");
        assert_eq!(bearer_only.with(|s| s.mcp_ok[0].scheme.clone()), "bearer");

        let plain = Fake::start(|_| {}).await;
        let always = client(&plain, store(), |s| s.dpop = DpopPolicy::Always);
        plain.with(|s| s.refuse_proofs = 1);
        call(&transport(&plain, &always), 1).await.unwrap();
        assert!(plain.with(|s| s.token_requests[0].proof.is_some()), "a proof although DPoP is not advertised");
        assert_eq!(plain.with(|s| s.mcp_refused.clone()), ["no token", "refused once"]);
        assert_eq!(plain.with(|s| s.mcp_ok[0].scheme.clone()), "dpop", "the fresh proof went through");

        plain.with(|s| s.refuse_proofs = 5);
        let e = call(&transport(&plain, &always), 2).await.expect_err("a proof refused again is not retried forever");
        assert!(matches!(e, TransportError::Http { status: 401, .. } | TransportError::Auth(_)), "{e:?}");
        assert_eq!(plain.with(|s| s.refuse_proofs), 2, "three sends per request at most");
    })
    .await;
}
