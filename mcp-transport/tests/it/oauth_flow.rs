//! The OAuth client driven through the real streamable HTTP transport against an in-process
//! fake resource and authorization server ([`oauth_support`]): single-flight refresh and login,
//! a refused refresh, registration reuse across runs, refused redirects, the step each error
//! names, scope step-up without loops, and a change of authorization server. (Secrets in
//! Debug, errors and logs: `oauth_secrets.rs`, alone in its binary for its tracing subscriber.)

use std::time::Duration;

use crate::oauth_support::{BrowserMode, Fake, auth_error, call, calls, store};
use mcp_transport::auth::store::{CredentialKey, TokenStore};
use mcp_transport::auth::{AuthError, AuthStep};
use test_support::within;

#[tokio::test]
async fn an_expiring_token_is_refreshed_once_for_32_concurrent_requests() {
    within(async {
        let fake = Fake::start().await;
        // The code's token counts as expiring at once (expires_in 0: it expires now); the refreshed
        // one does not.
        fake.with(|s| s.code_expires_in = 0);
        let client = fake.client(store(), |s| s.refresh_margin = Duration::from_secs(30));
        client.login().await.unwrap();
        assert_eq!(fake.with(|s| (s.code_exchanges, s.refreshes, s.mcp_401)), (1, 0, 1), "the login's probe");

        let t = fake.transport(&client);
        let outcomes = calls(&t, 1, 32).await;
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        assert_eq!(fake.with(|s| s.refreshes), 1, "one refresh for all 32 requests");
        assert_eq!(fake.with(|s| (s.code_exchanges, s.authorizations.len(), s.mcp_401)), (1, 1, 1));
    })
    .await;
}

#[tokio::test]
async fn thirty_two_first_requests_share_one_authorization() {
    within(async {
        let fake = Fake::start().await;
        let client = fake.client(store(), |_| {});
        let t = fake.transport(&client);
        let outcomes = calls(&t, 1, 32).await;
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        fake.with(|s| {
            assert_eq!(s.registrations.len(), 1, "one registration");
            assert_eq!(s.authorizations.len(), 1, "one browser step");
            assert_eq!(s.code_exchanges, 1, "one code exchange");
            assert_eq!(s.refreshes, 0);
        });
    })
    .await;
}

#[tokio::test]
async fn a_refused_refresh_token_leads_back_to_the_code_flow() {
    within(async {
        let fake = Fake::start().await;
        fake.with(|s| s.code_expires_in = 0);
        let client = fake.client(store(), |s| s.refresh_margin = Duration::from_secs(30));
        client.login().await.unwrap();
        fake.with(|s| {
            s.refuse_refresh = true;
            s.code_expires_in = 3600;
        });
        let t = fake.transport(&client);
        call(&t, 1).await.unwrap();
        fake.with(|s| {
            assert_eq!(s.refreshes, 1, "the refresh was tried");
            assert_eq!(s.authorizations.len(), 2, "a second browser step");
            assert_eq!(s.code_exchanges, 2, "a second code exchange");
            assert_eq!(s.registrations.len(), 1, "the registration is reused");
        });
    })
    .await;
}

#[tokio::test]
async fn a_refused_refresh_for_32_concurrent_requests_leads_to_one_new_authorization() {
    within(async {
        let fake = Fake::start().await;
        fake.with(|s| s.code_expires_in = 0);
        let client = fake.client(store(), |s| s.refresh_margin = Duration::from_secs(30));
        client.login().await.unwrap();
        fake.with(|s| {
            s.refuse_refresh = true;
            s.code_expires_in = 3600;
        });
        let outcomes = calls(&fake.transport(&client), 1, 32).await;
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        fake.with(|s| {
            assert_eq!(s.refreshes, 1, "one refused refresh");
            assert_eq!((s.authorizations.len(), s.code_exchanges, s.registrations.len()), (2, 2, 1));
        });
    })
    .await;
}

#[tokio::test]
async fn thirty_two_requests_short_of_a_scope_share_one_step_up() {
    within(async {
        let fake = Fake::start().await;
        let client = fake.client(store(), |_| {});
        let t = fake.transport(&client);
        call(&t, 1).await.unwrap();
        fake.with(|s| s.call_requires = Some("write".into()));
        let outcomes = calls(&t, 2, 32).await;
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        assert_eq!(fake.with(|s| s.authorizations.clone()), [vec!["read"], vec!["read", "write"]]);
    })
    .await;
}

#[tokio::test]
async fn a_second_run_reuses_the_registration_and_the_tokens() {
    within(async {
        let fake = Fake::start().await;
        let shared = store();
        let first = fake.client(shared.clone(), |_| {});
        call(&fake.transport(&first), 1).await.unwrap();
        assert_eq!(fake.with(|s| (s.registrations.len(), s.authorizations.len(), s.code_exchanges)), (1, 1, 1));

        // A second, unattended run with the same store: the stored token is used as it is (an
        // authorization would fail: there is no browser step).
        let second = fake.client(shared.clone(), |s| s.browser = None);
        let t = fake.transport(&second);
        call(&t, 2).await.unwrap();
        fake.with(|s| {
            assert_eq!((s.registrations.len(), s.authorizations.len(), s.code_exchanges), (1, 1, 1));
            assert_eq!((s.refreshes, s.mcp_401), (0, 1), "only the first run was challenged");
        });

        // A third run whose token is revoked and whose refresh is refused authorizes again,
        // with the stored registration.
        fake.with(|s| {
            s.revoke_access();
            s.refuse_refresh = true;
        });
        let third = fake.client(shared.clone(), |_| {});
        call(&fake.transport(&third), 3).await.unwrap();
        fake.with(|s| {
            assert_eq!(s.registrations.len(), 1, "no new registration");
            assert_eq!((s.authorizations.len(), s.code_exchanges), (2, 2));
        });

        // An unattended run whose stored token has expired refreshes it, without a login.
        fake.with(|s| s.refuse_refresh = false);
        let refreshes = fake.with(|s| s.refreshes);
        let fourth = fake.client(shared.clone(), |s| s.browser = None);
        let (key, mut creds) = shared.entries(fourth.resource()).unwrap().remove(0);
        creds.tokens.as_mut().unwrap().expires_at = Some(mcp_transport::auth::store::now_secs() - 1);
        shared.save(&key, &creds).unwrap();
        call(&fake.transport(&fourth), 4).await.unwrap();
        fake.with(|s| {
            assert_eq!(s.refreshes, refreshes + 1);
            assert_eq!((s.registrations.len(), s.authorizations.len(), s.code_exchanges), (1, 2, 2));
        });
    })
    .await;
}

#[tokio::test]
async fn a_redirect_with_the_wrong_state_or_an_error_is_refused() {
    within(async {
        for (mode, needle) in [(BrowserMode::WrongState, "state"), (BrowserMode::Deny, "access_denied")] {
            let fake = Fake::start().await;
            fake.with(|s| s.browser_mode = mode);
            let client = fake.client(store(), |_| {});
            let e = auth_error(&fake, call(&fake.transport(&client), 1).await);
            assert_eq!(e.step, AuthStep::Authorization, "{e}");
            assert!(e.to_string().contains("authorization") && e.to_string().contains(needle), "{e}");
            assert_eq!(fake.with(|s| (s.authorizations.len(), s.code_exchanges)), (1, 0), "{mode:?}");
        }
    })
    .await;
}

/// The error of one tools/call against a fake set up by `setup`, with `tweak`ed settings.
async fn failure(
    setup: impl FnOnce(&mut crate::oauth_support::FakeState),
    tweak: impl FnOnce(&mut mcp_transport::auth::oauth::OAuthSettings),
) -> (Fake, AuthError) {
    let fake = Fake::start().await;
    fake.with(setup);
    let client = fake.client(store(), tweak);
    let e = auth_error(&fake, call(&fake.transport(&client), 1).await);
    (fake, e)
}

#[tokio::test]
async fn each_error_names_its_step() {
    within(async {
        let (_, e) = failure(|s| s.as_metadata_missing = true, |_| {}).await;
        assert_eq!(e.step, AuthStep::Discovery, "{e}");
        assert!(e.to_string().contains("discovery"), "{e}");

        let (_, e) = failure(|s| s.prm_status = 500, |_| {}).await;
        assert_eq!(e.step, AuthStep::Discovery, "{e}");
        assert!(e.to_string().contains("discovery"), "{e}");

        let (fake, e) = failure(|s| s.refuse_register = true, |_| {}).await;
        assert_eq!(e.step, AuthStep::Registration, "{e}");
        assert!(e.to_string().contains("client registration") && e.to_string().contains("invalid_client_metadata"));
        assert_eq!(fake.with(|s| (s.registrations.len(), s.authorizations.len())), (1, 0));

        let (fake, e) = failure(|s| s.refuse_code = true, |_| {}).await;
        assert_eq!(e.step, AuthStep::Token, "{e}");
        assert!(e.to_string().contains("token request") && e.to_string().contains("invalid_grant"), "{e}");
        assert_eq!(fake.with(|s| s.code_exchanges), 1);

        let (fake, e) = failure(|_| {}, |s| s.browser = None).await;
        assert_eq!(e.step, AuthStep::LoginRequired, "{e}");
        assert!(e.needs_login());
        assert!(e.to_string().contains("login required"), "{e}");
        assert_eq!(fake.with(|s| (s.registrations.len(), s.authorizations.len())), (0, 0));
    })
    .await;
}

#[tokio::test]
async fn insufficient_scope_steps_up_to_the_union_once() {
    within(async {
        let fake = Fake::start().await;
        fake.with(|s| s.call_requires = Some("write".into()));
        let client = fake.client(store(), |_| {});
        call(&fake.transport(&client), 1).await.unwrap();
        assert_eq!(fake.with(|s| s.authorizations.clone()), [vec!["read"], vec!["read", "write"]]);
    })
    .await;
}

#[tokio::test]
async fn a_scope_the_token_already_has_is_not_asked_for_again() {
    within(async {
        // The token gets "read" then "read write"; the server keeps asking for "write".
        let fake = Fake::start().await;
        fake.with(|s| s.call_always_403 = Some("write".into()));
        let client = fake.client(store(), |_| {});
        let e = auth_error(&fake, call(&fake.transport(&client), 1).await);
        assert_eq!(e.step, AuthStep::Refused, "{e}");
        assert_eq!(fake.with(|s| s.authorizations.clone()), [vec!["read"], vec!["read", "write"]], "no loop");

        // The token has "write" from the start: no step-up at all.
        let fake = Fake::start().await;
        fake.with(|s| s.call_always_403 = Some("write".into()));
        let client = fake.client(store(), |s| s.scopes = Some(vec!["read".into(), "write".into()]));
        let e = auth_error(&fake, call(&fake.transport(&client), 1).await);
        assert_eq!(e.step, AuthStep::Refused, "{e}");
        assert!(e.to_string().contains("access refused"), "{e}");
        assert_eq!(fake.with(|s| s.authorizations.len()), 1);
    })
    .await;
}

#[tokio::test]
async fn the_resource_moving_to_another_authorization_server_registers_there() {
    within(async {
        let fake = Fake::start().await;
        let shared = store();
        let client = fake.client(shared.clone(), |_| {});
        let t = fake.transport(&client);
        call(&t, 1).await.unwrap();

        fake.with(|s| s.active_as = 2);
        call(&t, 2).await.unwrap();
        let (as1, as2) = (fake.issuer(1), fake.issuer(2));
        fake.with(|s| {
            assert_eq!(s.registrations, [as1.clone(), as2.clone()]);
            assert_eq!((s.authorizations.len(), s.code_exchanges), (2, 2));
        });
        let keys: Vec<CredentialKey> = shared.entries(client.resource()).unwrap().into_iter().map(|(k, _)| k).collect();
        let resource = fake.url("/mcp");
        for issuer in [as1, as2] {
            assert!(keys.contains(&CredentialKey { resource: resource.clone(), issuer }), "{keys:?}");
        }
        call(&t, 3).await.unwrap();
        assert_eq!(fake.with(|s| s.code_exchanges), 2, "the new token is used");

        // A later run starts from the entry of the new issuer.
        let next_run = fake.client(shared, |_| {});
        call(&fake.transport(&next_run), 4).await.unwrap();
        fake.with(|s| {
            assert_eq!(s.registrations.len(), 2, "no new registration");
            assert_eq!((s.authorizations.len(), s.code_exchanges), (2, 2), "no new authorization");
        });
    })
    .await;
}
