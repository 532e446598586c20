"""A gateway built with FastMCP's proxy (`fastmcp` 4.2.3, `create_proxy`) in front of stdio MCP
servers, served over streamable HTTP on 127.0.0.1, for the scale-out interop test in
`tests/tests/peers_gateway.rs`.

The backends are given as a JSON object in the `mcpServers` format (`--backends`). Each is
started once, through one connected FastMCP `Client`, and mounted on the gateway under its name,
so its tools reach the clients as `<backend>_<tool>` and every client of the gateway shares the
backend's session (FastMCP's documented choice for a shared backend; its default, a fresh backend
session per front request, would start a stdio backend again for every request).

Usage:
    python gateway_peer.py --port PORT --backends JSON [--stateless]

`--stateless` serves without sessions (FastMCP's `stateless_http`): every request stands alone,
as a deployment behind a load balancer without sticky sessions needs.
"""

import argparse
import json
import os

# No banner (it would check PyPI for updates) and no color codes in the log: set before fastmcp
# reads its settings.
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from contextlib import AsyncExitStack  # noqa: E402

import anyio  # noqa: E402
from fastmcp import Client, FastMCP  # noqa: E402
from fastmcp.client.transports import StdioTransport  # noqa: E402
from fastmcp.server import create_proxy  # noqa: E402


async def serve(port: int, backends: dict, stateless: bool) -> None:
    gateway = FastMCP("py-gateway", instructions="A FastMCP gateway in front of stdio servers.")
    async with AsyncExitStack() as stack:
        for name, spec in backends["mcpServers"].items():
            transport = StdioTransport(spec["command"], spec.get("args", []), env=spec.get("env"))
            client = await stack.enter_async_context(Client(transport, mode="auto"))
            gateway.mount(create_proxy(client), namespace=name)
        await gateway.run_http_async(
            show_banner=False,
            host="127.0.0.1",
            port=port,
            path="/mcp",
            stateless_http=stateless,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="the port of 127.0.0.1 to listen on")
    parser.add_argument("--backends", required=True, help='{"mcpServers": {...}} as JSON')
    parser.add_argument("--stateless", action="store_true", help="serve without sessions")
    args = parser.parse_args()
    anyio.run(serve, args.port, json.loads(args.backends), args.stateless)


if __name__ == "__main__":
    main()
