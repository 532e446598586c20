"""A dual-era MCP server on the Python SDK's public API (`mcp` 2.3.0, `MCPServer`) with a slow tool,
for the per-call control tests in `tests/tests/peers_control.rs`.

- `sleep(seconds)`: sleeps in steps of a tenth of `seconds`, reporting progress after each step,
  then answers "slept". A cancelled call (the SDK cancels the handler when the client sends
  `notifications/cancelled` for it) is counted before the cancellation goes on.
- `cancelled_sleeps()`: how many `sleep` calls were cancelled so far, as text.

State is per process: over stdio, one client's calls share it in either era.

Usage:
    python slow_peer.py --transport stdio
    python slow_peer.py --transport streamable-http --port PORT   (binds 127.0.0.1 only)
"""

import argparse

import anyio

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("py-slow-peer", version="2.3.0-peer", log_level="WARNING")

_cancelled = 0


@server.tool()
async def sleep(seconds: float, ctx: Context) -> str:
    """Sleep for `seconds`, reporting progress ten times."""
    global _cancelled
    try:
        for step in range(1, 11):
            await anyio.sleep(seconds / 10)
            await ctx.report_progress(step, 10, f"step {step} of 10")
    except anyio.get_cancelled_exc_class():
        _cancelled += 1
        raise
    return "slept"


@server.tool()
def cancelled_sleeps() -> str:
    """How many `sleep` calls were cancelled so far."""
    return str(_cancelled)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], required=True)
    parser.add_argument("--port", type=int, help="the port of 127.0.0.1 to listen on (streamable-http)")
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run("stdio")
    else:
        if args.port is None:
            parser.error("--transport streamable-http needs --port")
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
