"""A Python SDK server (`mcp` 2.3.0, `MCPServer`) for the multi round-trip and URL elicitation
interop tests in `tests/tests/peers_python.rs`.

Tools:
- `greet_user`: asks the user's name (a resolver with `Elicit`). In the modern era the SDK answers
  with an `InputRequiredResult`; a middleware of this server writes `"jsonrpc": "2.0"` into every
  input request of such a result (the schema allows other members; the SDK itself writes none),
  so the client must type input requests that carry the JSON-RPC envelope.
- `slow_job`: a job that is "still working" twice: the first call answers with a `requestState`
  and no input requests, and so do the first two retries with that same state; the third retry
  completes with the number of retries seen.
- `read_files`: needs the user to authorize the account at a URL first: it raises
  `UrlElicitationRequiredError` (-32042) with a URL on this server's own `/authorize/{id}` route.
  Opening that URL (an HTTP GET) authorizes the account and, in the legacy era, sends
  `notifications/elicitation/complete` with the elicitation id to the session that asked. In the
  modern era (whose revision has no elicitation ids and no such notification) the URL carries
  no id in the params; the retry finds the account authorized.

Usage:
    python mrtr_peer.py --transport stdio
    python mrtr_peer.py --transport streamable-http --port PORT   (binds 127.0.0.1 only; needed
                                                                   for the /authorize route)
"""

import argparse
import secrets
import time
from typing import Annotated, Any

from mcp_types import ElicitRequestURLParams, InputRequiredResult
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from mcp import UrlElicitationRequiredError
from mcp.server import MCPServer
from mcp.server.mcpserver import Context, Elicit, Resolve

MODERN = "2026-07-28"

server = MCPServer(
    "py-mrtr-peer",
    version="2.3.0-mrtr",
    instructions="Multi round-trip and URL elicitation test peer.",
    log_level="WARNING",
)

# The base URL of this server's HTTP routes (set in main for streamable HTTP).
BASE_URL = "http://127.0.0.1:0"
# Elicitation id -> (account, the session to notify in the legacy era, or None).
PENDING: dict[str, tuple[str, Any]] = {}
AUTHORIZED: set[str] = set()
# requestState -> [retries seen, when the last answer went out, the shortest gap seen].
POLLS: dict[str, list[float]] = {}
# A retry that comes sooner than this after the "still working" answer was not paced.
PACED_SECONDS = 0.09


async def envelope_in_input_requests(ctx: Any, call_next: Any) -> Any:
    """Write the JSON-RPC envelope's `jsonrpc` member into every input request of a result."""
    result = await call_next(ctx)
    if isinstance(result, dict):
        requests = result.get("inputRequests")
        if isinstance(requests, dict):
            for request in requests.values():
                if isinstance(request, dict):
                    request["jsonrpc"] = "2.0"
    return result


server.middleware.append(envelope_in_input_requests)


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    """The resolver of `greet_user`'s name: ask the user."""
    return Elicit("What is your name?", Name)


@server.tool()
def greet_user(who: Annotated[Name, Resolve(ask_name)], greeting: str = "Hello") -> str:
    """Greet the user, asking for their name first (elicitation)."""
    return f"{greeting}, {who.name}!"


@server.tool()
async def slow_job(job: str, ctx: Context) -> InputRequiredResult | str:
    """A job that is still working for two retries, then done (multi round-trip, state only).

    The result says whether every retry came at least `PACED_SECONDS` after the answer before it
    (a client that pauses between such rounds; one that retries at once is "not paced")."""
    state = ctx.request_state
    now = time.monotonic()
    if state is None:
        state = f"job:{job}:{secrets.token_hex(4)}"
        POLLS[state] = [0, now, float("inf")]
        return InputRequiredResult(request_state=state)
    if state not in POLLS:
        return f"unknown job state {state!r}"
    poll = POLLS[state]
    poll[0] += 1
    poll[2] = min(poll[2], now - poll[1])
    poll[1] = now
    if poll[0] <= 2:
        return InputRequiredResult(request_state=state)
    del POLLS[state]
    paced = "paced" if poll[2] >= PACED_SECONDS else "not paced"
    return f"job {job} done after {int(poll[0])} retries, {paced}"


@server.tool()
async def read_files(account: str, ctx: Context) -> str:
    """The account's files, once the user has authorized it at a URL (-32042 until then)."""
    if account in AUTHORIZED:
        return f"files of {account}: notes.txt"
    elicitation_id = f"auth-{secrets.token_hex(6)}"
    modern = ctx.protocol_version == MODERN
    PENDING[elicitation_id] = (account, None if modern else ctx.session)
    raise UrlElicitationRequiredError(
        [
            ElicitRequestURLParams(
                message=f"Authorize access to the files of {account}",
                url=f"{BASE_URL}/authorize/{elicitation_id}",
                elicitation_id=None if modern else elicitation_id,
            )
        ]
    )


@server.custom_route("/authorize/{elicitation_id}", methods=["GET"])
async def authorize(request: Request) -> PlainTextResponse:
    """The user "opens" the URL: the account is authorized and the asking session is told."""
    elicitation_id = request.path_params["elicitation_id"]
    entry = PENDING.pop(elicitation_id, None)
    if entry is None:
        return PlainTextResponse("unknown elicitation", status_code=404)
    account, session = entry
    AUTHORIZED.add(account)
    if session is not None:
        await session.send_elicit_complete(elicitation_id)
    return PlainTextResponse(f"authorized {account}")


def main() -> None:
    global BASE_URL
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], required=True)
    parser.add_argument("--port", type=int, help="the port of 127.0.0.1 to listen on (streamable-http)")
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run("stdio")
    else:
        if args.port is None:
            parser.error("--transport streamable-http needs --port")
        BASE_URL = f"http://127.0.0.1:{args.port}"
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
