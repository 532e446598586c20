//! The JWTs the client signs, checked by verifiers that share no code with the signer: the
//! RustCrypto `p256` and `rsa` crates verify the signatures, and the header and claims are
//! decoded here by hand. Keys are generated per test (aws-lc-rs) and re-encoded by RustCrypto
//! into each PEM form a user may hold (PKCS#8, SEC1, PKCS#1).

use std::collections::HashSet;

use aws_lc_rs::encoding::AsDer;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_transport::Secret;
use mcp_transport::auth::jose::{DpopKey, NonceFrom, SigningAlgorithm, SigningKey, client_assertion, htu};
use p256::ecdsa::signature::Verifier;
use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use rsa::pkcs1::EncodeRsaPrivateKey;
use rsa::sha2::{Digest, Sha256};
use serde_json::Value;

/// A fresh P-256 key as PKCS#8 PEM and as SEC1 PEM.
fn p256_pems() -> (String, String) {
    let (_, der) = SigningKey::generate_es256().expect("generate");
    let secret = p256::SecretKey::from_pkcs8_der(&der).expect("RustCrypto reads the PKCS#8 key");
    let pkcs8 = secret.to_pkcs8_pem(LineEnding::LF).expect("pkcs8 pem").to_string();
    let sec1 = secret.to_sec1_pem(LineEnding::LF).expect("sec1 pem").to_string();
    (pkcs8, sec1)
}

/// A fresh RSA 2048 key as PKCS#8 PEM and as PKCS#1 PEM.
fn rsa_pems() -> (String, String) {
    let pair = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).expect("rsa");
    let der = AsDer::<aws_lc_rs::encoding::Pkcs8V1Der<'_>>::as_der(&pair).expect("der");
    let key = rsa::RsaPrivateKey::from_pkcs8_der(der.as_ref()).expect("RustCrypto reads the RSA key");
    let pkcs8 = key.to_pkcs8_pem(LineEnding::LF).expect("pkcs8").to_string();
    let pkcs1 = key.to_pkcs1_pem(LineEnding::LF).expect("pkcs1").to_string();
    (pkcs8, pkcs1)
}

/// A compact JWS, split and decoded: header, claims, signing input, signature.
struct Jws {
    header: Value,
    claims: Value,
    input: String,
    signature: Vec<u8>,
}

fn split(jwt: &str) -> Jws {
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3, "a compact JWS has three parts: {jwt}");
    let json =
        |p: &str| -> Value { serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).expect("base64url")).expect("json") };
    Jws {
        header: json(parts[0]),
        claims: json(parts[1]),
        input: format!("{}.{}", parts[0], parts[1]),
        signature: URL_SAFE_NO_PAD.decode(parts[2]).expect("signature base64url"),
    }
}

/// Verify an ES256 JWS with the public key `jwk` (raw r‖s signature, RFC 7518 §3.4).
fn verify_es256(jws: &Jws, jwk: &Value) {
    // RustCrypto's JWK reader takes the key members only (no `alg`).
    let members = serde_json::json!({"kty": jwk["kty"], "crv": jwk["crv"], "x": jwk["x"], "y": jwk["y"]});
    let public =
        p256::PublicKey::from_jwk_str(&members.to_string()).unwrap_or_else(|e| panic!("a P-256 JWK: {e} {jwk}"));
    let key = p256::ecdsa::VerifyingKey::from(public);
    let signature = p256::ecdsa::Signature::from_slice(&jws.signature).expect("64-byte r||s");
    key.verify(jws.input.as_bytes(), &signature).expect("the ES256 signature verifies");
}

fn verify_rs256(jws: &Jws, jwk: &Value) {
    let n = URL_SAFE_NO_PAD.decode(jwk["n"].as_str().expect("n")).expect("n");
    let e = URL_SAFE_NO_PAD.decode(jwk["e"].as_str().expect("e")).expect("e");
    let public = rsa::RsaPublicKey::new(rsa::BigUint::from_bytes_be(&n), rsa::BigUint::from_bytes_be(&e)).expect("rsa");
    let key = rsa::pkcs1v15::VerifyingKey::<Sha256>::new(public);
    let signature = rsa::pkcs1v15::Signature::try_from(jws.signature.as_slice()).expect("signature");
    key.verify(jws.input.as_bytes(), &signature).expect("the RS256 signature verifies");
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

fn jwk_of(key: &SigningKey) -> Value {
    serde_json::to_value(key.public_jwk()).unwrap()
}

fn check_assertion(key: &SigningKey, alg: &str) {
    let mut jtis = HashSet::new();
    for _ in 0..3 {
        let jwt = client_assertion(key, "client-7", "https://as.example").unwrap();
        let jws = split(jwt.expose());
        assert_eq!(jws.header["alg"], alg);
        assert_eq!(jws.header["typ"], "JWT");
        match alg {
            "ES256" => verify_es256(&jws, &jwk_of(key)),
            _ => verify_rs256(&jws, &jwk_of(key)),
        }
        let c = &jws.claims;
        assert_eq!(
            (c["iss"].as_str(), c["sub"].as_str()),
            (Some("client-7"), Some("client-7")),
            "iss = sub = client_id"
        );
        assert_eq!(c["aud"], "https://as.example", "aud is the authorization server's issuer");
        let (iat, exp) = (c["iat"].as_u64().unwrap(), c["exp"].as_u64().unwrap());
        assert!(iat.abs_diff(now()) <= 5, "iat is now");
        assert!(exp > iat && exp - iat <= 300, "a short lifetime: {}", exp - iat);
        assert!(jtis.insert(c["jti"].as_str().unwrap().to_owned()), "every assertion has its own jti");
    }
}

#[test]
fn es256_client_assertions_from_pkcs8_and_sec1_pem_verify_independently() {
    let (pkcs8, sec1) = p256_pems();
    for pem in [&pkcs8, &sec1] {
        let key = SigningKey::from_pem(pem, None).unwrap();
        assert_eq!(key.algorithm(), SigningAlgorithm::Es256);
        check_assertion(&key, "ES256");
    }
    // The same key in both forms is the same key.
    let a = SigningKey::from_pem(&pkcs8, Some(SigningAlgorithm::Es256)).unwrap();
    let b = SigningKey::from_pem(&sec1, None).unwrap();
    assert_eq!(a.thumbprint(), b.thumbprint());
}

#[test]
fn rs256_client_assertions_from_pkcs8_and_pkcs1_pem_verify_independently() {
    let (pkcs8, pkcs1) = rsa_pems();
    for pem in [&pkcs8, &pkcs1] {
        let key = SigningKey::from_pem(pem, Some(SigningAlgorithm::Rs256)).unwrap();
        assert_eq!(key.algorithm(), SigningAlgorithm::Rs256);
        let jwk = jwk_of(&key);
        assert_eq!(jwk["kty"], "RSA");
        assert!(jwk.get("d").is_none() && jwk.get("p").is_none(), "no private member in {jwk}");
        check_assertion(&key, "RS256");
    }
}

#[test]
fn dpop_proofs_carry_the_claims_rfc_9449_asks_for() {
    let (key, _) = SigningKey::generate_es256().unwrap();
    let dpop = DpopKey::new(key.clone());
    let url = url::Url::parse("https://mcp.example:8443/mcp?session=1#frag").unwrap();
    let token = Secret::new("at-123.456");
    let mut jtis = HashSet::new();
    for _ in 0..3 {
        let jws = split(&dpop.proof("POST", &url, NonceFrom::ResourceServer, Some(&token)).unwrap());
        assert_eq!(jws.header["typ"], "dpop+jwt");
        assert_eq!(jws.header["alg"], "ES256");
        let jwk = &jws.header["jwk"];
        assert_eq!((jwk["kty"].as_str(), jwk["crv"].as_str()), (Some("EC"), Some("P-256")));
        assert!(jwk.get("d").is_none(), "the proof carries the public key only: {jwk}");
        verify_es256(&jws, jwk);
        let c = &jws.claims;
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], "https://mcp.example:8443/mcp", "htu has no query and no fragment");
        assert!(c["iat"].as_u64().unwrap().abs_diff(now()) <= 5);
        let expected_ath = URL_SAFE_NO_PAD.encode(Sha256::digest(b"at-123.456"));
        assert_eq!(c["ath"], expected_ath.as_str(), "ath = base64url(SHA-256(access token))");
        assert!(c.get("nonce").is_none(), "no nonce before a server gives one");
        assert!(jtis.insert(c["jti"].as_str().unwrap().to_owned()), "a fresh jti per proof");
    }
    // The thumbprint (RFC 7638) of the proof's key, computed here from the JWK members.
    let jws = split(&dpop.proof("GET", &url, NonceFrom::AuthorizationServer, None).unwrap());
    let jwk = &jws.header["jwk"];
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":{},"y":{}}}"#, jwk["x"], jwk["y"]);
    assert_eq!(dpop.thumbprint(), URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes())));
    assert!(jws.claims.get("ath").is_none(), "token requests carry no ath");
}

#[test]
fn each_server_gets_its_own_nonce() {
    let (key, _) = SigningKey::generate_es256().unwrap();
    let dpop = DpopKey::new(key);
    let url = url::Url::parse("http://127.0.0.1:1/token").unwrap();
    assert!(dpop.set_nonce(NonceFrom::AuthorizationServer, "as-nonce-1"));
    assert!(!dpop.set_nonce(NonceFrom::AuthorizationServer, "as-nonce-1"), "the same nonce is not new");
    assert!(!dpop.set_nonce(NonceFrom::ResourceServer, "bad \"nonce\""), "a nonce that is not NQCHAR is ignored");
    let claims = |from| split(&dpop.proof("POST", &url, from, None).unwrap()).claims;
    assert_eq!(claims(NonceFrom::AuthorizationServer)["nonce"], "as-nonce-1");
    assert!(claims(NonceFrom::ResourceServer).get("nonce").is_none());
    assert!(dpop.set_nonce(NonceFrom::ResourceServer, "rs-nonce-9"));
    assert_eq!(claims(NonceFrom::ResourceServer)["nonce"], "rs-nonce-9");
    assert_eq!(htu(&url::Url::parse("http://h/p?q=1").unwrap()), "http://h/p");
}

#[test]
fn bad_keys_are_refused_without_echoing_them() {
    let (pkcs8, _) = p256_pems();
    let (rsa_pem, _) = rsa_pems();
    let body: String = pkcs8.lines().filter(|l| !l.starts_with("-----")).collect();
    let cases = [
        ("not a pem at all".to_owned(), "not a PEM private key"),
        (pkcs8.replace(&body[10..40], "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), ""),
        (rsa_pem.clone(), "not one for ES256"),
    ];
    for (i, (pem, wanted)) in cases.iter().enumerate() {
        let algorithm = if i == 2 { Some(SigningAlgorithm::Es256) } else { None };
        let error = SigningKey::from_pem(pem, algorithm).expect_err("refused").to_string();
        assert!(error.contains(wanted), "case {i}: {error}");
        for line in pem.lines().filter(|l| l.len() > 20 && !l.starts_with("-----")) {
            assert!(!error.contains(line), "case {i}: the error shows the key: {error}");
        }
    }
    let key = SigningKey::from_pem(&pkcs8, None).unwrap();
    let shown = format!("{key:?} {:?}", DpopKey::new(key.clone()));
    for line in pkcs8.lines().filter(|l| !l.starts_with("-----")) {
        assert!(!shown.contains(line), "Debug shows the key: {shown}");
    }
    assert!("ES384".parse::<SigningAlgorithm>().is_err());
}
