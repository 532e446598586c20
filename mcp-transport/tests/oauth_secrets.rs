//! Secrets never shown: the access and refresh tokens, the client secret and the code the fake
//! handed out appear neither in the client's or the store's Debug, nor in an error, nor in what
//! the flow logs. Alone in its binary: a thread's tracing subscriber misses events whose
//! callsite another test registered at the same moment (tracing caches interest per callsite).

mod http_support;
mod oauth_support;

use std::sync::Arc;
use std::time::Duration;

use http_support::bounded;
use mcp_transport::auth::AuthStep;
use oauth_support::{BrowserMode, Fake, auth_error, call, store};

/// A tracing subscriber that writes every event's and span's fields into a buffer
/// (tracing-subscriber is no dependency of this crate).
struct Capture {
    text: Arc<std::sync::Mutex<String>>,
    next_span: std::sync::atomic::AtomicU64,
}

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push_str(&format!("{}={value} ", field.name()));
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        span.record(&mut Fields(&mut self.text.lock().unwrap()));
        tracing::span::Id::from_u64(self.next_span.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        values.record(&mut Fields(&mut self.text.lock().unwrap()));
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut text = self.text.lock().unwrap();
        text.push_str(event.metadata().target());
        text.push(' ');
        event.record(&mut Fields(&mut text));
        text.push('\n');
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

// A current-thread runtime (the default), so that the thread's subscriber sees every task.
#[tokio::test]
async fn secrets_show_in_no_debug_error_or_log() {
    let log = Arc::new(std::sync::Mutex::new(String::new()));
    let capture = Capture { text: log.clone(), next_span: 1.into() };
    let _guard = tracing::subscriber::set_default(capture);
    bounded(async {
        let fake = Fake::start().await;
        fake.with(|s| {
            s.confidential = true;
            s.code_expires_in = 1;
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
