"""A FastMCP server that is its own OAuth authorization server, for `tests/tests/peers_oauth.rs`:
`fastmcp` 4.2.3's `InMemoryOAuthProvider` (dynamic registration open, PKCE, refresh tokens,
authorization approved at once: the authorize endpoint redirects straight back with a code)
protecting a streamable HTTP endpoint on 127.0.0.1.

Usage:
    python fastmcp_oauth_server.py --port PORT

The resource is http://127.0.0.1:PORT/mcp; its metadata, the authorization server's metadata,
/register, /authorize and /token are served on the same port. Tools: `add(a, b)` and `whoami()`
(the client id of the token the call carried).
"""

import argparse
import os

os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from fastmcp import FastMCP  # noqa: E402
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider  # noqa: E402
from fastmcp.server.dependencies import get_access_token  # noqa: E402
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions  # noqa: E402


def build(port: int) -> FastMCP:
    auth = InMemoryOAuthProvider(
        base_url=f"http://127.0.0.1:{port}",
        client_registration_options=ClientRegistrationOptions(enabled=True),
        revocation_options=RevocationOptions(enabled=True),
    )
    server = FastMCP("fastmcp-oauth-peer", version="4.2.3-peer", auth=auth)

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    def whoami() -> str:
        """The client id of the access token this call carried."""
        token = get_access_token()
        return "anonymous" if token is None else f"client={token.client_id}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    build(args.port).run("http", show_banner=False, host="127.0.0.1", port=args.port, path="/mcp")


if __name__ == "__main__":
    main()
