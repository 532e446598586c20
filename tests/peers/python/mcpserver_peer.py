"""A dual-era MCP server on the Python SDK's public API (`mcp` 2.3.0, `MCPServer`), for the interop
tests in `tests/tests/peers_python.rs`.

The SDK answers both the legacy `initialize` handshake (2025-11-25) and the modern
`server/discover` (2026-07-28) on the same transport. `greet_user` asks the user for their name
through a resolver (`Resolve` + `Elicit`): in the modern era the SDK answers the call with an
`InputRequiredResult` holding an `elicitation/create` input request and finishes it when the
client retries with the answer (a multi round-trip request); in the legacy era it sends
`elicitation/create` to the client in the middle of the call.

Usage:
    python mcpserver_peer.py --transport stdio
    python mcpserver_peer.py --transport streamable-http --port PORT   (binds 127.0.0.1 only)
"""

import argparse
from typing import Annotated

from pydantic import BaseModel

from mcp.server import MCPServer
from mcp.server.mcpserver import Elicit, Resolve

server = MCPServer(
    "py-mcpserver-peer",
    version="2.3.0-peer",
    instructions="A dual-era test peer for the Rust client.",
    log_level="WARNING",
)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers (structured output)."""
    return a + b


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    """The resolver of `greet_user`'s name: ask the user."""
    return Elicit("What is your name?", Name)


@server.tool()
def greet_user(who: Annotated[Name, Resolve(ask_name)], greeting: str = "Hello") -> str:
    """Greet the user, asking for their name first (elicitation)."""
    return f"{greeting}, {who.name}!"


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
