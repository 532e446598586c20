//! Secrets never shown: the access and refresh tokens, the client secret and the code the fake
//! handed out appear neither in the client's or the store's Debug, nor in an error, nor in what
//! the flow logs. Alone in its binary: a thread's tracing subscriber misses events whose
//! callsite another test registered at the same moment (tracing caches interest per callsite).

mod http_support;
mod log_capture;
mod oauth_support;

use std::time::Duration;

use mcp_transport::auth::AuthStep;
use oauth_support::{BrowserMode, Fake, auth_error, call, store};
use test_support::within;

// A current-thread runtime (the default), so that the thread's subscriber sees every task.
#[tokio::test]
async fn secrets_show_in_no_debug_error_or_log() {
    let (log, _guard) = log_capture::capture();
    within(async {
        let fake = Fake::start().await;
        fake.with(|s| {
            s.confidential = true;
            s.code_expires_in = 0;
            s.call_requires = Some("write".into());
        });
        let shared = store();
        let client = fake.client(shared.clone(), |s| s.refresh_margin = Duration::from_secs(30));
        let t = fake.transport(&client);
        // Authorization, refresh, step-up.
        call(&t, 1).await.unwrap();
        fake.with(|s| {
            assert!(s.basic_auth_seen > 0, "the client secret was used");
            assert!(s.refreshes > 0 && s.authorizations.len() == 2, "{s:?}");
        });
        // A refused refresh, then a refused code exchange.
        fake.with(|s| {
            s.revoke_access();
            s.refuse_refresh = true;
            s.refuse_code = true;
        });
        let e = auth_error(&fake, call(&t, 2).await);
        assert_eq!(e.step, AuthStep::Token, "{e}");
        // A redirect with the wrong state.
        fake.with(|s| {
            s.refuse_code = false;
            s.browser_mode = BrowserMode::WrongState;
        });
        let e = auth_error(&fake, call(&t, 3).await);
        assert_eq!(e.step, AuthStep::Authorization, "{e}");

        let issued = fake.with(|s| s.issued_secrets.clone());
        for kind in ["access", "refresh", "code", "client-secret"] {
            assert!(issued.iter().any(|s| s.starts_with(kind)), "the fake issued no {kind}");
        }
        // Plus the client's own: its `state` values (22 characters) and PKCE verifiers (43 and more).
        let own: Vec<usize> = issued.iter().filter(|s| !s.contains("-s3cr3t-")).map(String::len).collect();
        assert!(own.iter().filter(|n| **n >= 43).count() >= 2, "PKCE verifiers recorded: {own:?}");
        assert!(own.iter().filter(|n| **n < 43).count() >= 2, "states recorded: {own:?}");
        fake.with(|s| {
            s.assert_clean(&format!("{client:?}"));
            s.assert_clean(&format!("{shared:?}"));
            s.assert_clean(&format!("{t:?}"));
            s.assert_clean(&format!("{:?}", client.state()));
        });
        let log = log.lock().unwrap().clone();
        assert!(log.contains("registered a new OAuth client"), "the capture works: {log}");
        assert!(log.contains("refreshed the access token"), "{log}");
        fake.with(|s| s.assert_clean(&log));
    })
    .await;
}
