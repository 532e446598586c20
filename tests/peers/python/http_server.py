"""A small MCP server written with the Python SDK's public API (`mcp` 2.3.0, `MCPServer`), served
over streamable HTTP on 127.0.0.1 for the interop tests in `tests/tests/peers_http.rs`.

The SDK is dual-era: it answers the legacy `initialize` handshake and the modern
`server/discover` alike; the tests speak the legacy era to it.

Usage: python http_server.py --port PORT
"""

import argparse

import anyio
from pydantic import BaseModel

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer(
    "py-http-peer",
    version="1.0.0",
    instructions="A test peer for the Rust client's HTTP interop tests.",
    log_level="WARNING",
)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers (structured output)."""
    return a + b


@server.tool()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@server.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Report progress once per step, then finish."""
    for step in range(1, steps + 1):
        await anyio.sleep(0.05)
        await ctx.report_progress(step, steps, f"step {step}")
    return "done"


class Answer(BaseModel):
    name: str


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Ask the user for their name with an elicitation request."""
    result = await ctx.elicit("What is your name?", Answer)
    if result.action == "accept":
        return f"Hello, {result.data.name}!"
    return f"no name ({result.action})"


@server.prompt(name="greet")
def greet_prompt(who: str) -> str:
    """A prompt that asks for a greeting."""
    return f"Say hello to {who}"


@server.resource("demo://hello", name="hello", mime_type="text/plain")
def hello() -> str:
    """A fixed text resource."""
    return "hello resource"


@server.resource("demo://greeting/{name}", name="greeting", mime_type="text/plain")
def greeting(name: str) -> str:
    """A resource template: one greeting per name."""
    return f"Greetings, {name}."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
