//! The JWTs the client signs: RFC 7523 client assertions (`private_key_jwt`) and RFC 9449 DPoP
//! proofs, through `jsonwebtoken` (JWS) on the `aws-lc-rs` backend (keys, signatures, random,
//! SHA-256). Nothing here is hand-rolled cryptography.
//!
//! - [`SigningKey`]: an ES256 (P-256) or RS256 private key, read from PEM (PKCS#8, SEC1 or
//!   PKCS#1). Its `Debug` never shows the key.
//! - [`DpopKey`]: the client's DPoP key pair (ES256, generated once and kept in the token
//!   store) and the nonces servers gave it; [`DpopKey::proof`] makes a fresh proof per request.

use std::fmt;
use std::sync::Mutex;

use aws_lc_rs::rand::SecureRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject;
use serde::Serialize;

use super::store::now_secs;
use crate::Secret;

/// The signature algorithms the client signs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SigningAlgorithm {
    /// ECDSA with P-256 and SHA-256.
    Es256,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
}

impl SigningAlgorithm {
    /// The JOSE name (`ES256`, `RS256`).
    pub fn name(self) -> &'static str {
        match self {
            SigningAlgorithm::Es256 => "ES256",
            SigningAlgorithm::Rs256 => "RS256",
        }
    }

    fn jose(self) -> Algorithm {
        match self {
            SigningAlgorithm::Es256 => Algorithm::ES256,
            SigningAlgorithm::Rs256 => Algorithm::RS256,
        }
    }
}

impl std::str::FromStr for SigningAlgorithm {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_uppercase().as_str() {
            "ES256" => Ok(SigningAlgorithm::Es256),
            "RS256" => Ok(SigningAlgorithm::Rs256),
            _ => Err(format!("unsupported signing algorithm {s:?}: expected \"ES256\" or \"RS256\"")),
        }
    }
}

/// Why a key could not be used. Never holds key material.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KeyError(String);

/// A private signing key. See the module docs.
#[derive(Clone)]
pub struct SigningKey {
    algorithm: SigningAlgorithm,
    key: EncodingKey,
    jwk: Jwk,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey").field("algorithm", &self.algorithm).field("key", &"<redacted>").finish()
    }
}

/// A fresh random identifier: 16 random bytes, base64url (a `jti`).
pub(crate) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    // The system random source does not fail on the platforms we build for; should it,
    // the time and a counter still make the identifier unique within this process.
    if aws_lc_rs::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        bytes[..8].copy_from_slice(&nanos.as_nanos().to_le_bytes()[..8]);
        bytes[8..].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    }
    URL_SAFE_NO_PAD.encode(bytes)
}

/// base64url(SHA-256(`value`)): DPoP's `ath`, PKCE's S256.
pub(crate) fn sha256_b64(value: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, value))
}

impl SigningKey {
    /// The key in `pem` (PKCS#8, SEC1 `EC PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`). With
    /// `algorithm`, the key must be of that kind; without, it is the key's own (P-256: ES256,
    /// RSA: RS256).
    pub fn from_pem(pem: &str, algorithm: Option<SigningAlgorithm>) -> Result<Self, KeyError> {
        let der = PrivateKeyDer::from_pem_slice(pem.trim().as_bytes())
            .map_err(|e| KeyError(format!("not a PEM private key (PKCS#8, SEC1 or PKCS#1): {}", pem_error_kind(&e))))?;
        let (found, key) = match &der {
            PrivateKeyDer::Pkcs1(_) => (SigningAlgorithm::Rs256, rsa_key(pem)?),
            PrivateKeyDer::Sec1(sec1) => {
                let pair = EcdsaKeyPair::from_private_key_der(&ECDSA_P256_SHA256_FIXED_SIGNING, sec1.secret_sec1_der())
                    .map_err(|_| KeyError("the EC key is not a P-256 key (ES256 needs P-256)".into()))?;
                let pkcs8 = pair.to_pkcs8v1().map_err(|_| KeyError("the EC key cannot be converted".into()))?;
                (SigningAlgorithm::Es256, EncodingKey::from_ec_der(pkcs8.as_ref()))
            }
            PrivateKeyDer::Pkcs8(pkcs8) => {
                if EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.secret_pkcs8_der()).is_ok() {
                    (SigningAlgorithm::Es256, EncodingKey::from_ec_der(pkcs8.secret_pkcs8_der()))
                } else if aws_lc_rs::rsa::KeyPair::from_pkcs8(pkcs8.secret_pkcs8_der()).is_ok() {
                    (SigningAlgorithm::Rs256, rsa_key(pem)?)
                } else {
                    return Err(KeyError("the PKCS#8 key is neither a P-256 key nor an RSA key".into()));
                }
            }
            _ => return Err(KeyError("unsupported private key format".into())),
        };
        if let Some(wanted) = algorithm
            && wanted != found
        {
            return Err(KeyError(format!("the key is a {} key, not one for {}", found.name(), wanted.name())));
        }
        Self::new(found, key)
    }

    fn new(algorithm: SigningAlgorithm, key: EncodingKey) -> Result<Self, KeyError> {
        let jwk = Jwk::from_encoding_key(&key, algorithm.jose())
            .map_err(|e| KeyError(format!("the {} key is not usable: {e}", algorithm.name())))?;
        let signing = SigningKey { algorithm, key, jwk };
        // Sign once now, so that a bad key fails where it is configured, not at a request.
        signing.sign(Header::new(algorithm.jose()), &serde_json::json!({})).map_err(|e| KeyError(e.message))?;
        Ok(signing)
    }

    /// A new ES256 key and its PKCS#8 DER (what the store keeps).
    pub fn generate_es256() -> Result<(Self, Vec<u8>), KeyError> {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &aws_lc_rs::rand::SystemRandom::new())
                .map_err(|_| KeyError("could not generate a P-256 key".into()))?;
        let der = pkcs8.as_ref().to_vec();
        Ok((Self::from_es256_pkcs8(&der)?, der))
    }

    /// An ES256 key from its PKCS#8 DER.
    pub fn from_es256_pkcs8(der: &[u8]) -> Result<Self, KeyError> {
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der)
            .map_err(|_| KeyError("the stored key is not a P-256 PKCS#8 key".into()))?;
        Self::new(SigningAlgorithm::Es256, EncodingKey::from_ec_der(der))
    }

    /// The algorithm this key signs with.
    pub fn algorithm(&self) -> SigningAlgorithm {
        self.algorithm
    }

    /// The public key, as a JWK (`kty`, `crv`, `x`, `y` or `n`, `e`; never a private member).
    pub fn public_jwk(&self) -> &Jwk {
        &self.jwk
    }

    /// The JWK SHA-256 thumbprint (RFC 7638): what a DPoP-bound token's `cnf.jkt` names.
    pub fn thumbprint(&self) -> String {
        self.jwk.thumbprint(ThumbprintHash::SHA256).unwrap_or_default()
    }

    fn sign(&self, header: Header, claims: &impl Serialize) -> Result<String, super::AuthError> {
        jsonwebtoken::encode(&header, claims, &self.key).map_err(|e| {
            super::AuthError::new(
                super::AuthStep::Token,
                format!("signing a {} JWT failed: {e}", self.algorithm.name()),
            )
        })
    }
}

fn rsa_key(pem: &str) -> Result<EncodingKey, KeyError> {
    EncodingKey::from_rsa_pem(pem.trim().as_bytes()).map_err(|e| KeyError(format!("not a usable RSA key: {e}")))
}

fn pem_error_kind(e: &rustls_pki_types::pem::Error) -> &'static str {
    match e {
        rustls_pki_types::pem::Error::NoItemsFound => "no private key block found",
        _ => "the PEM text is malformed",
    }
}

/// How long a client assertion is valid.
const ASSERTION_LIFETIME_SECS: u64 = 60;

#[derive(Serialize)]
struct AssertionClaims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    jti: String,
    iat: u64,
    exp: u64,
}

/// An RFC 7523 client assertion for `private_key_jwt`: `iss` = `sub` = `client_id`, `aud` =
/// the authorization server's issuer, a fresh `jti`, and a lifetime of a minute.
pub fn client_assertion(key: &SigningKey, client_id: &str, audience: &str) -> Result<Secret, super::AuthError> {
    let iat = now_secs();
    let claims = AssertionClaims {
        iss: client_id,
        sub: client_id,
        aud: audience,
        jti: random_id(),
        iat,
        exp: iat + ASSERTION_LIFETIME_SECS,
    };
    let mut header = Header::new(key.algorithm.jose());
    header.typ = Some("JWT".into());
    let jwt = key.sign(header, &claims)?;
    crate::redact::remember_secret(&jwt);
    Ok(Secret::new(jwt))
}

#[derive(Serialize)]
struct ProofClaims<'a> {
    jti: String,
    htm: &'a str,
    htu: String,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<String>,
}

/// Which server a DPoP nonce came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonceFrom {
    /// The authorization server (its token endpoint).
    AuthorizationServer,
    /// The resource server (the MCP server).
    ResourceServer,
}

/// The client's DPoP key and the latest nonce of each server. See the module docs.
pub struct DpopKey {
    key: SigningKey,
    as_nonce: Mutex<Option<String>>,
    rs_nonce: Mutex<Option<String>>,
}

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopKey").field("thumbprint", &self.key.thumbprint()).finish_non_exhaustive()
    }
}

/// The `htu` of a proof: the URL without its query and fragment (RFC 9449 §4.2).
pub fn htu(url: &url::Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

impl DpopKey {
    /// The DPoP key pair `key` (ES256).
    pub fn new(key: SigningKey) -> Self {
        DpopKey { key, as_nonce: Mutex::new(None), rs_nonce: Mutex::new(None) }
    }

    /// The key's JWK thumbprint.
    pub fn thumbprint(&self) -> String {
        self.key.thumbprint()
    }

    fn nonce_slot(&self, from: NonceFrom) -> &Mutex<Option<String>> {
        match from {
            NonceFrom::AuthorizationServer => &self.as_nonce,
            NonceFrom::ResourceServer => &self.rs_nonce,
        }
    }

    /// Remember the nonce a server gave (`DPoP-Nonce`). Returns whether it is new.
    pub fn set_nonce(&self, from: NonceFrom, nonce: &str) -> bool {
        let nonce = nonce.trim();
        // RFC 9449 §8.1: a nonce is a non-empty run of NQCHAR; anything else is ignored.
        if nonce.is_empty() || nonce.len() > 1024 || !nonce.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b'"') {
            return false;
        }
        let mut slot = self.nonce_slot(from).lock().unwrap_or_else(|p| p.into_inner());
        let fresh = slot.as_deref() != Some(nonce);
        *slot = Some(nonce.to_owned());
        fresh
    }

    /// A fresh proof for `method` `url`: `typ` `dpop+jwt`, the public `jwk`, a unique `jti`,
    /// `htm`, `htu` (no query), `iat`, the server's nonce when it gave one, and `ath` (the
    /// access token's hash) on requests to the resource server.
    pub fn proof(
        &self,
        method: &str,
        url: &url::Url,
        from: NonceFrom,
        access_token: Option<&Secret>,
    ) -> Result<String, super::AuthError> {
        let nonce = self.nonce_slot(from).lock().unwrap_or_else(|p| p.into_inner()).clone();
        let claims = ProofClaims {
            jti: random_id(),
            htm: method,
            htu: htu(url),
            iat: now_secs(),
            ath: access_token.map(|t| sha256_b64(t.expose().trim().as_bytes())),
            nonce,
        };
        let mut header = Header::new(self.key.algorithm.jose());
        header.typ = Some("dpop+jwt".into());
        let mut jwk = self.key.public_jwk().clone();
        jwk.common.key_algorithm = None;
        header.jwk = Some(jwk);
        self.key.sign(header, &claims)
    }
}
