//! DPoP in the OAuth client (RFC 9449, SEP-1932): when to use it, the key of each stored entry,
//! and the resource server's half of the nonce dance (the authorization server's half is in
//! [`AuthHttp::send_token`](super::http::AuthHttp::send_token)).

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::discovery::Discovered;
use super::{OAuthClient, lock};
use crate::Secret;
use crate::auth::jose::{DpopKey, NonceFrom, SigningKey};
use crate::auth::store::{CredentialKey, StoredCredentials};
use crate::auth::{AuthError, AuthStep, Rejection, Verdict};

/// Whether tokens are DPoP-bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DpopPolicy {
    /// When the authorization server advertises ES256 proofs (`dpop_signing_alg_values_supported`)
    /// and the resource server takes DPoP-bound tokens (it challenges with the `DPoP` scheme, or
    /// its metadata lists DPoP algorithms or requires bound tokens).
    #[default]
    Auto,
    /// Always: proofs are sent even to a server that does not advertise DPoP.
    Always,
    /// Never: plain bearer tokens.
    Never,
}

impl OAuthClient {
    /// Whether token requests to `found`'s authorization server carry DPoP proofs: in `Auto`,
    /// when it advertises ES256 proofs and the resource server takes DPoP-bound tokens (a
    /// resource that knows only `Bearer` would refuse them).
    pub(super) fn wants_dpop(&self, found: &Discovered) -> bool {
        match self.settings.dpop {
            DpopPolicy::Never => false,
            DpopPolicy::Always => true,
            DpopPolicy::Auto => {
                let algs = found.server.dpop_signing_alg_values_supported.as_deref().unwrap_or_default();
                found.resource_dpop && algs.iter().any(|a| a == "ES256")
            }
        }
    }

    /// The DPoP key of the entry `key`: the one already in use, else the one `creds` keeps,
    /// else a new one, which is put in `creds` (to be stored with the tokens it binds).
    pub(super) fn dpop_key(
        &self,
        key: &CredentialKey,
        creds: &mut StoredCredentials,
    ) -> Result<Arc<DpopKey>, AuthError> {
        let store_error = |m: String| AuthError::new(AuthStep::Store, m);
        if let Some((k, dpop, der)) = lock(&self.state).dpop.as_ref()
            && k == key
        {
            creds.dpop_key = Some(der.clone());
            return Ok(dpop.clone());
        }
        let (signing, der) = match &creds.dpop_key {
            Some(kept) => {
                let bytes = URL_SAFE_NO_PAD
                    .decode(kept.expose().trim())
                    .map_err(|_| store_error("the stored DPoP key is not base64url".into()))?;
                let signing = SigningKey::from_es256_pkcs8(&bytes)
                    .map_err(|e| store_error(format!("the stored DPoP key is unusable: {e}")))?;
                (signing, kept.clone())
            }
            None => {
                let (signing, bytes) = SigningKey::generate_es256()
                    .map_err(|e| AuthError::new(AuthStep::Token, format!("no DPoP key: {e}")))?;
                tracing::debug!(server = %self.name, thumbprint = %signing.thumbprint(), "made a DPoP key");
                (signing, Secret::new(URL_SAFE_NO_PAD.encode(bytes)))
            }
        };
        let dpop = Arc::new(DpopKey::new(signing));
        creds.dpop_key = Some(der.clone());
        lock(&self.state).dpop = Some((key.clone(), dpop.clone(), der));
        Ok(dpop)
    }

    /// The resource server's DPoP refusals: `use_dpop_nonce` with a new nonce, or
    /// `invalid_dpop_proof`, are answered by sending again with a fresh proof (and the nonce),
    /// within the transport's bound on sends. `None`: not a DPoP matter.
    pub(super) fn dpop_rejected(&self, rejection: &Rejection) -> Option<Verdict> {
        let error = rejection.dpop.as_ref().and_then(|c| c.error())?;
        let dpop = lock(&self.state).dpop.as_ref().map(|(_, d, _)| d.clone())?;
        match error {
            "use_dpop_nonce" => {
                let fresh =
                    rejection.dpop_nonce.as_deref().is_some_and(|n| dpop.set_nonce(NonceFrom::ResourceServer, n));
                tracing::debug!(server = %self.name, fresh, "the server asked for a DPoP nonce");
                Some(if fresh { Verdict::Retry } else { Verdict::GiveUp })
            }
            // A fresh proof may pass where one did not (a clock step, a replay cache that
            // saw a jti twice); the transport bounds the sends of one request.
            "invalid_dpop_proof" => {
                if let Some(n) = rejection.dpop_nonce.as_deref() {
                    dpop.set_nonce(NonceFrom::ResourceServer, n);
                }
                Some(Verdict::Retry)
            }
            _ => None,
        }
    }
}
