//! Secrets of the unattended grants never shown: the client secret, the private key, the
//! client assertions, the workload token, the ID token and ID-JAG, the DPoP key, the access
//! tokens: in no Debug, no error and no log line, at every log level. Alone in its binary (see
//! `log_capture`).

mod http_support;
mod log_capture;
mod m2m_support;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use m2m_support::{CLIENT_ID, CLIENT_SECRET, Fake};
use mcp_transport::auth::jose::SigningKey;
use mcp_transport::auth::oauth::{CredentialSource, EnterpriseSettings, Grant, OAuthClient, OAuthSettings};
use mcp_transport::auth::store::{MemoryStore, TokenStore};
use mcp_transport::{Secret, StreamableHttpTransport, Transport, TransportEvent};
use serde_json::json;
use test_support::within;

async fn call(fake: &Fake, settings: OAuthSettings, id: i64) -> (Arc<OAuthClient>, Result<(), String>) {
    let client = Arc::new(OAuthClient::new("m2m", &fake.url("/mcp"), settings).unwrap());
    let mut config = http_support::config(&fake.url("/mcp"));
    config.authorization = Some(client.clone());
    let t = StreamableHttpTransport::new(config).unwrap();
    t.send(http_support::request(id, "tools/call", json!({"name": "echo"}))).await.unwrap();
    let outcome = match http_support::next_event(&t).await {
        TransportEvent::Message(_) => Ok(()),
        TransportEvent::RequestFailed { error, .. } => Err(format!("{error} {error:?}")),
        other => panic!("unexpected {other:?}"),
    };
    (client, outcome)
}

// A current-thread runtime (the default), so that the thread's subscriber sees every task.
#[tokio::test]
async fn unattended_secrets_show_in_no_debug_error_or_log() {
    let (log, _guard) = log_capture::capture();
    within(async {
        let (key, der) = SigningKey::generate_es256().unwrap();
        let jwk = serde_json::to_value(key.public_jwk()).unwrap();
        let fake = Fake::start(|s| {
            s.auth_methods = vec!["private_key_jwt".into(), "client_secret_basic".into()];
            s.client_jwk = Some(jwk);
            s.dpop_algs = vec!["ES256".into()];
            s.as_nonce = Some("as-nonce".into());
            s.rs_nonce = Some("rs-nonce".into());
            s.accepted_assertions = vec!["workload-sekrit-token".into()];
            s.id_token = "id-token-sekrit".into();
        })
        .await;
        let kept: Arc<MemoryStore> = Arc::new(MemoryStore::new());
        // A store per run (a kept token would spare the later runs their grant), the first one kept.
        let runs = kept.clone();
        let mut first = true;
        let mut base = move || OAuthSettings {
            client_id: Some(CLIENT_ID.into()),
            client_secret: Some(Secret::new(CLIENT_SECRET)),
            store: if std::mem::take(&mut first) { runs.clone() } else { Arc::new(MemoryStore::new()) },
            http_timeout: Duration::from_secs(5),
            ..OAuthSettings::default()
        };
        let mut shown = Vec::new();
        // private_key_jwt with DPoP and both nonces.
        let settings = OAuthSettings { grant: Grant::ClientCredentials, client_key: Some(key.clone()), ..base() };
        shown.push(format!("{settings:?}"));
        let (client, outcome) = call(&fake, settings, 1).await;
        outcome.unwrap();
        shown.push(format!("{client:?} {kept:?} {:?}", client.state()));
        // Workload identity, accepted and refused.
        let workload = |t: &str| Grant::WorkloadIdentity { token: CredentialSource::Value(Secret::new(t)) };
        let (_, outcome) = call(&fake, OAuthSettings { grant: workload("workload-sekrit-token"), ..base() }, 2).await;
        outcome.unwrap();
        let settings = OAuthSettings { grant: workload("refused-sekrit-token"), ..base() };
        shown.push(format!("{settings:?}"));
        let (_, outcome) = call(&fake, settings, 3).await;
        shown.push(outcome.expect_err("refused"));
        // Enterprise.
        let enterprise = Grant::Enterprise(EnterpriseSettings {
            token_endpoint: fake.url("/idp/token"),
            client_id: Some("idp-client".into()),
            client_secret: Some(Secret::new("idp-sekrit-secret")),
            id_token: CredentialSource::Value(Secret::new("id-token-sekrit")),
        });
        let settings = OAuthSettings { grant: enterprise, ..base() };
        shown.push(format!("{settings:?}"));
        let (_, outcome) = call(&fake, settings, 4).await;
        outcome.unwrap();

        let tokens = fake.with(|s| s.tokens.len());
        assert!(tokens >= 3, "tokens were issued: {tokens}");
        let mut secrets: Vec<String> = vec![
            "refused-sekrit-token".into(),
            "idp-sekrit-secret".into(),
            // The private key as its PEM body would show it.
            base64::engine::general_purpose::STANDARD.encode(&der)[..64].to_owned(),
        ];
        let assertions: Vec<String> =
            fake.with(|s| s.token_requests.iter().filter_map(|r| r.form.get("client_assertion").cloned()).collect());
        assert!(!assertions.is_empty(), "client assertions were sent");
        secrets.extend(assertions);
        let (_, creds) = kept.entries(client.resource()).unwrap().remove(0);
        secrets.extend(creds.dpop_key.map(|k| k.expose().to_owned()));
        let log = log.lock().unwrap().clone();
        assert!(log.contains("requesting a token"), "the capture works: {log}");
        shown.push(log);
        for text in &shown {
            fake.with(|s| s.assert_clean(text));
            for secret in &secrets {
                assert!(!text.contains(secret.as_str()), "a secret shows in: {text}");
            }
        }
    })
    .await;
}
