"""A dual-era MCP server on FastMCP (`fastmcp` 4.2.3, running on the `mcp` 2.3.0 SDK), for the
interop tests in `tests/tests/peers_python.rs`: a few tools, a prompt, a resource and a resource
template.

Usage:
    python fastmcp_peer.py --transport stdio
    python fastmcp_peer.py --transport streamable-http --port PORT   (binds 127.0.0.1 only)
"""

import argparse
import os

# No banner (it would check PyPI for updates) and no color codes in the log: set before fastmcp
# reads its settings.
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from fastmcp import FastMCP  # noqa: E402

server = FastMCP("py-fastmcp-peer", version="4.2.3-peer", instructions="A FastMCP test peer for the Rust client.")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def shout(text: str, times: int = 1) -> str:
    """Upper-case a text, repeated `times` times."""
    return " ".join([text.upper()] * times)


@server.prompt(name="summarize")
def summarize(topic: str) -> str:
    """A prompt that asks for a summary."""
    return f"Summarize {topic} in one sentence."


@server.resource("fastmcp://motd", name="motd", mime_type="text/plain")
def motd() -> str:
    """A fixed text resource."""
    return "message of the day"


@server.resource("fastmcp://square/{n}", name="square", mime_type="text/plain")
def square(n: int) -> str:
    """A resource template: the square of n."""
    return str(n * n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], required=True)
    parser.add_argument("--port", type=int, help="the port of 127.0.0.1 to listen on (streamable-http)")
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run("stdio", show_banner=False)
    else:
        if args.port is None:
            parser.error("--transport streamable-http needs --port")
        server.run("http", show_banner=False, host="127.0.0.1", port=args.port, path="/mcp")


if __name__ == "__main__":
    main()
