"""An MCP server that accepts only DPoP-bound access tokens, for `tests/tests/peers_oauth_m2m.rs`:
the Python SDK's `MCPServer` (`mcp` 2.3.0) over streamable HTTP on 127.0.0.1, as a resource
server of the oidc-provider authorization server in `oidc-m2m.mjs`, behind an ASGI middleware
that checks the binding (RFC 9449) with PyJWT and `cryptography` (both dependencies of `mcp`).

Usage:
    python dpop_server.py --port PORT --issuer ISSUER [--public-url URL]

URL (default http://127.0.0.1:PORT) is where clients reach the server: a test may put a proxy
in front of it, and the resource, the metadata and the proofs' `htu` are then the proxy's.

- Protected resource metadata at /.well-known/oauth-protected-resource/mcp: the resource is
  URL/mcp, its authorization server ISSUER, its scope `mcp:tools`, DPoP-bound tokens required.
- Without a token: 401 `WWW-Authenticate: DPoP algs="ES256", resource_metadata="...", scope=...`.
- The access token must be a JWT signed by a key of ISSUER's JWKS (ISSUER/jwks), issued by
  ISSUER, for the audience of this server's /mcp URL, with the scope `mcp:tools`, not expired,
  and bound to a key (`cnf.jkt`). Presented as `Authorization: Bearer`: 401 `DPoP
  error="invalid_token"`.
- `Authorization: DPoP <token>` needs a `DPoP` proof: `typ` dpop+jwt, ES256, signed by its
  embedded `jwk`, whose RFC 7638 thumbprint is the token's `cnf.jkt`; `htm` the method, `htu`
  the URL without query, `iat` within 60 s, `ath` base64url(SHA-256(token)), `nonce` this
  server's current nonce (else 401 `DPoP error="use_dpop_nonce"` with a `DPoP-Nonce` header),
  and a `jti` never seen before (else 401 `DPoP error="invalid_dpop_proof"`: a replay).
- Every refusal and every accepted request is logged as one `event: NAME` line on stdout (no
  token, no proof).
- A test-only endpoint: POST /test/rotate-nonce makes a new nonce (the next proof with the old
  one is refused with `use_dpop_nonce`).
- Tools: `add(a, b)` and `echo(text)`.
"""

import argparse
import base64
import hashlib
import json
import secrets
import time

import jwt
import uvicorn
from mcp.server import MCPServer

SCOPE = "mcp:tools"
PROOF_MAX_AGE = 60
ALGS = ["ES256"]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def thumbprint(jwk: dict) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK."""
    members = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}
    names = members.get(jwk.get("kty"))
    if names is None:
        raise ValueError("unsupported key type")
    canonical = json.dumps({n: jwk[n] for n in names}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


class Refusal(Exception):
    def __init__(self, event: str, error: str, description: str, nonce: bool = False):
        super().__init__(description)
        self.event = event
        self.error = error
        self.description = description
        self.nonce = nonce


class DpopGuard:
    """The ASGI middleware in front of the MCP app. See the module docs."""

    def __init__(self, app, base: str, issuer: str):
        self.app = app
        self.base = base
        self.resource = f"{self.base}/mcp"
        self.issuer = issuer
        self.jwks = jwt.PyJWKClient(f"{issuer}/jwks", cache_keys=True, timeout=10)
        self.nonce = secrets.token_urlsafe(16)
        self.seen_jti: set[str] = set()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        if path == "/.well-known/oauth-protected-resource/mcp":
            return await self.json(send, 200, self.metadata())
        if path == "/test/rotate-nonce" and scope["method"] == "POST":
            self.nonce = secrets.token_urlsafe(16)
            log("nonce_rotated")
            return await self.json(send, 200, {})
        if path != "/mcp":
            return await self.json(send, 404, {"error": "not found"})
        headers = {}
        for name, value in scope["headers"]:
            headers.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
        try:
            claims = self.check(scope["method"], headers)
        except Refusal as refusal:
            log(refusal.event)
            return await self.refuse(send, refusal)
        log(f"dpop_verified client_id={claims.get('client_id')} jkt={claims['cnf']['jkt']} {scope['method']}")
        return await self.app(scope, receive, send)

    def metadata(self) -> dict:
        return {
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "scopes_supported": [SCOPE],
            "bearer_methods_supported": ["header"],
            "dpop_signing_alg_values_supported": ALGS,
            "dpop_bound_access_tokens_required": True,
        }

    def check(self, method: str, headers: dict) -> dict:
        authorization = headers.get("authorization", [])
        if not authorization:
            raise Refusal("no_token", "", "")
        if len(authorization) > 1:
            raise Refusal("bad_request", "invalid_request", "more than one Authorization header")
        scheme, _, token = authorization[0].partition(" ")
        token = token.strip()
        scheme = scheme.lower()
        if scheme not in ("dpop", "bearer") or not token:
            raise Refusal("bad_scheme", "invalid_token", "unsupported authorization scheme")
        claims = self.verify_token(token)
        if scheme == "bearer":
            raise Refusal("bearer_refused", "invalid_token", "a DPoP-bound token must be presented with DPoP")
        proofs = headers.get("dpop", [])
        if not proofs:
            raise Refusal("missing_proof", "invalid_dpop_proof", "no DPoP proof")
        if len(proofs) > 1:
            raise Refusal("bad_proof", "invalid_dpop_proof", "more than one DPoP proof")
        self.verify_proof(proofs[0], method, token, claims["cnf"]["jkt"])
        return claims

    def verify_token(self, token: str) -> dict:
        try:
            key = self.jwks.get_signing_key_from_jwt(token).key
            claims = jwt.decode(
                token,
                key,
                algorithms=["RS256", "PS256", "ES256"],
                audience=self.resource,
                issuer=self.issuer,
                options={"require": ["exp", "iat", "iss", "aud"]},
            )
        except jwt.PyJWTError as error:
            raise Refusal("invalid_token", "invalid_token", f"the access token is invalid: {type(error).__name__}")
        if SCOPE not in str(claims.get("scope", "")).split():
            raise Refusal("insufficient_scope", "insufficient_scope", f"the token lacks {SCOPE}")
        jkt = (claims.get("cnf") or {}).get("jkt")
        if not isinstance(jkt, str) or not jkt:
            raise Refusal("unbound_token", "invalid_token", "the token is not DPoP-bound")
        return claims

    def verify_proof(self, proof: str, method: str, token: str, jkt: str) -> None:
        def bad(event: str, description: str) -> Refusal:
            return Refusal(event, "invalid_dpop_proof", description)

        try:
            header = jwt.get_unverified_header(proof)
        except jwt.PyJWTError:
            raise bad("bad_proof", "the DPoP proof is not a JWS")
        if header.get("typ") != "dpop+jwt":
            raise bad("bad_proof", "the DPoP proof's typ is not dpop+jwt")
        if header.get("alg") not in ALGS:
            raise bad("bad_proof", "the DPoP proof's alg is not ES256")
        jwk = header.get("jwk")
        if not isinstance(jwk, dict) or any(k in jwk for k in ("d", "p", "q", "dp", "dq", "qi")):
            raise bad("bad_proof", "the DPoP proof has no public jwk")
        try:
            key = jwt.PyJWK(jwk, algorithm=header["alg"]).key
            claims = jwt.decode(proof, key, algorithms=ALGS, options={"verify_aud": False, "verify_exp": False})
        except (jwt.PyJWTError, ValueError, KeyError) as error:
            raise bad("bad_proof", f"the DPoP proof's signature does not verify: {type(error).__name__}")
        if thumbprint(jwk) != jkt:
            raise bad("wrong_key", "the DPoP proof's key is not the token's")
        if claims.get("htm") != method:
            raise bad("wrong_htm", "htm is not the request's method")
        if claims.get("htu") != self.resource:
            raise bad("wrong_htu", "htu is not the request's URL")
        iat = claims.get("iat")
        if not isinstance(iat, (int, float)) or abs(time.time() - iat) > PROOF_MAX_AGE:
            raise bad("stale_proof", "iat is not within 60 s")
        if claims.get("ath") != b64url(hashlib.sha256(token.encode("ascii")).digest()):
            raise bad("wrong_ath", "ath is not the token's hash")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti:
            raise bad("bad_proof", "the DPoP proof has no jti")
        if claims.get("nonce") != self.nonce:
            raise Refusal("use_dpop_nonce", "use_dpop_nonce", "a DPoP nonce is required", nonce=True)
        if jti in self.seen_jti:
            raise bad("replayed_proof", "the DPoP proof was used before")
        self.seen_jti.add(jti)

    async def refuse(self, send, refusal: Refusal) -> None:
        metadata = f"{self.base}/.well-known/oauth-protected-resource/mcp"
        parts = [f'algs="{" ".join(ALGS)}"']
        if refusal.error:
            parts.append(f'error="{refusal.error}"')
            parts.append(f'error_description="{refusal.description}"')
        parts += [f'resource_metadata="{metadata}"', f'scope="{SCOPE}"']
        headers = [(b"www-authenticate", ("DPoP " + ", ".join(parts)).encode("latin-1"))]
        if refusal.nonce:
            headers.append((b"dpop-nonce", self.nonce.encode("ascii")))
        status = 403 if refusal.error == "insufficient_scope" else 400 if refusal.error == "invalid_request" else 401
        await self.json(send, status, {"error": refusal.error or "unauthorized"}, headers)

    @staticmethod
    async def json(send, status: int, value: dict, headers=()) -> None:
        body = json.dumps(value).encode("utf-8")
        all_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": all_headers + list(headers)})
        await send({"type": "http.response.body", "body": body})


def log(event: str) -> None:
    print(f"event: {event}", flush=True)


def build() -> MCPServer:
    server = MCPServer("dpop-protected-peer", version="1.0.0", log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def echo(text: str) -> str:
        """Answer the text as it is."""
        return text

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--public-url")
    args = parser.parse_args()
    base = (args.public_url or f"http://127.0.0.1:{args.port}").rstrip("/")
    app = build().streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    guarded = DpopGuard(app, base, args.issuer.rstrip("/"))
    uvicorn.run(guarded, host="127.0.0.1", port=args.port, log_level="warning", access_log=False, lifespan="on")


if __name__ == "__main__":
    main()
