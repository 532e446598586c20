"""An MCP server protected by OAuth, for `tests/tests/peers_oauth.rs`: FastMCP (`fastmcp` 4.2.3 on
the `mcp` 2.3.0 SDK) over streamable HTTP on 127.0.0.1, as a resource server of the oidc-provider
authorization server in `oidc-as.mjs`.

Usage:
    python protected_server.py --port PORT --issuer ISSUER

- Protected resource metadata at /.well-known/oauth-protected-resource/mcp: the resource is
  http://127.0.0.1:PORT/mcp, its authorization server ISSUER, its scope `mcp:tools`.
- Without a valid token: 401 with `WWW-Authenticate: Bearer ... resource_metadata="..."`.
- Tokens are checked for real: JWTs signed by a key of ISSUER's JWKS (ISSUER/jwks), issued by
  ISSUER, for the audience of this server's /mcp URL, with the scope `mcp:tools`, not expired.
- Tools: `add(a, b)`, and `whoami()`, which answers the token's subject and client id (never the
  token).
"""

import argparse
import os

os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from fastmcp import FastMCP  # noqa: E402
from fastmcp.server.auth import RemoteAuthProvider  # noqa: E402
from fastmcp.server.auth.providers.jwt import JWTVerifier  # noqa: E402
from fastmcp.server.dependencies import get_access_token  # noqa: E402

SCOPE = "mcp:tools"


def build(port: int, issuer: str) -> FastMCP:
    base = f"http://127.0.0.1:{port}"
    verifier = JWTVerifier(
        jwks_uri=f"{issuer}/jwks",
        issuer=issuer,
        audience=f"{base}/mcp",
        algorithm="RS256",
        required_scopes=[SCOPE],
    )
    auth = RemoteAuthProvider(
        token_verifier=verifier,
        authorization_servers=[issuer],
        base_url=base,
        scopes_supported=[SCOPE],
        resource_name="oauth-protected-peer",
    )
    server = FastMCP("oauth-protected-peer", version="4.2.3-peer", auth=auth)

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    def whoami() -> str:
        """The subject and client of the access token this call carried."""
        token = get_access_token()
        if token is None:
            return "anonymous"
        subject = token.claims.get("sub", "?") if token.claims else "?"
        return f"sub={subject} client={token.client_id}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--issuer", required=True)
    args = parser.parse_args()
    build(args.port, args.issuer.rstrip("/")).run(
        "http", show_banner=False, host="127.0.0.1", port=args.port, path="/mcp"
    )


if __name__ == "__main__":
    main()
