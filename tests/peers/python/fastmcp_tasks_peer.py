"""A FastMCP server whose task tools run on `fastmcp-tasks`, the tasks runtime of the FastMCP
project (the `io.modelcontextprotocol/tasks` extension of 2026-07-28, SEP-2663, on the `docket`
engine with its in-memory backend), for the interop tests in `tests/tests/peers_tasks.rs`.

Unlike `tasks_peer.py`, which writes the extension's wire protocol itself on the `mcp` SDK's
extension interface, everything task-related here is the third-party runtime's: task creation,
`tasks/get` (status, status messages from `ctx.report_progress`, input requests, inlined
results), `tasks/update` and `tasks/cancel`. The runtime serves the modern era only (it refuses
the extension on a 2025-11-25 connection), so the tests run it with the modern era.

It needs `fastmcp[tasks]` 4.1.4 (`fastmcp-tasks` 4.1.4 pins `fastmcp-slim` 4.1.4, so it lives in
its own venv beside the main one: `target/peers/venv-tasks`, see `xtask/src/peers.rs`).

Task tools (`taskSupport: required`):
- `long_job(steps)`: one step every 200 ms, each reported with `ctx.report_progress` (the task's
  status message says which step), polled every 200 ms (`pollIntervalMs`); then completes.
- `ask_job`: asks the user which python is meant (an `elicitation/create` input request, the
  guard pattern: the tool returns an `InputRequiredResult` and runs again with the answer), then
  completes with "the user chose <answer>".
- `failing_job`: raises a `ToolError` ("the job broke").
- `slow_job(tag)`: sleeps for a minute; a cancellation that reaches it records `tag`.
Plain tool:
- `was_cancelled(tag)`: "true" once `slow_job(tag)` was cancelled.

Usage:
    python fastmcp_tasks_peer.py --transport stdio
    python fastmcp_tasks_peer.py --transport streamable-http --port PORT   (binds 127.0.0.1 only)
"""

import argparse
import asyncio
from datetime import timedelta

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools.base import InputRequiredToolResult
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

mcp = FastMCP("fastmcp-tasks-peer")
# The in-memory backend: one process, no Redis.
mcp.add_extension(TasksExtension(url="memory://"))
REQUIRED = TaskConfig(mode="required")
# The default interval is 5 s; long_job asks to be polled every 200 ms, so its steps are seen.
EAGER = TaskConfig(mode="required", poll_interval=timedelta(milliseconds=200))
CANCELLED: set[str] = set()


@mcp.tool(task=EAGER)
async def long_job(steps: int, ctx: Context) -> str:
    """Work for `steps` steps of 200 ms, reporting each."""
    for step in range(1, steps + 1):
        await asyncio.sleep(0.2)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"done after {steps} steps"


@mcp.tool(task=REQUIRED)
async def ask_job(ctx: Context):
    """Ask the user which python is meant, then answer with the choice."""
    responses = ctx.input_responses or {}
    answer = responses.get("which")
    if answer is None:
        ask = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(
                message="Which python do you mean?",
                requested_schema={
                    "type": "object",
                    "properties": {"answer": {"type": "string", "enum": ["snake", "language"]}},
                    "required": ["answer"],
                },
            )
        )
        return InputRequiredToolResult(mcp_types.InputRequiredResult(input_requests={"which": ask}))
    content = answer.content if hasattr(answer, "content") else answer.get("content")
    choice = (content or {}).get("answer", "nothing")
    return f"the user chose {choice}"


@mcp.tool(task=REQUIRED)
async def failing_job() -> str:
    """Fail after a moment."""
    await asyncio.sleep(0.1)
    raise ToolError("the job broke")


@mcp.tool(task=REQUIRED)
async def slow_job(tag: str) -> str:
    """Sleep for a minute, recording `tag` if cancelled."""
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        CANCELLED.add(tag)
        raise
    return "finished"


@mcp.tool
def was_cancelled(tag: str) -> str:
    """Whether slow_job(tag) was cancelled."""
    return "true" if tag in CANCELLED else "false"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    options = parser.parse_args()
    if options.transport == "stdio":
        mcp.run("stdio", show_banner=False)
    else:
        mcp.run("streamable-http", host="127.0.0.1", port=options.port, show_banner=False)


if __name__ == "__main__":
    main()
