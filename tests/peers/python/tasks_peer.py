"""A Python SDK server (`mcp` 2.3.0, `MCPServer`) with long-running task tools, for the interop
tests in `tests/tests/peers_tasks.rs`.

The SDK has no tasks runtime of its own (its tasks story is deferred; `fastmcp` 4.2.3 needs the
separate `fastmcp-tasks` package), but it has the extension interface of SEP-2133: this server
is the tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663) written on it.
An `Extension` intercepts `tools/call` of the task tools and answers with a task handle
(`resultType: "task"`), and serves `tasks/get`, `tasks/update` and `tasks/cancel`.

The 2025-11-25 design (`task` params, `CreateTaskResult`, `tasks/result`) cannot be served on
this SDK: its runner sieves every `tools/call` result of a legacy connection through the
2025-11-25 `CallToolResult`, so a `CreateTaskResult` never reaches the wire. The peer therefore
runs in the modern era only (`--era modern`, the default and the only value).

Task tools (answered with a task only when the request declares the extension):
- `long_job(steps)`: one step every 200 ms, the status message says which; then completes.
- `ask_job`: asks the user which python is meant (an `elicitation/create` input request in
  `tasks/get`), waits for `tasks/update`, then completes with the answer.
- `failing_job`: fails with a JSON-RPC error (-32603, "the job broke").
Plain tool:
- `was_cancelled(task_id)`: "true" once `tasks/cancel` reached the task (and the job stopped).

Usage:
    python tasks_peer.py --transport stdio
    python tasks_peer.py --transport streamable-http --port PORT   (binds 127.0.0.1 only)
"""

import argparse
import asyncio
import datetime
import secrets
from typing import Any

from mcp_types import RequestParams
from pydantic import Field

from mcp.server import MCPServer
from mcp.server.extension import Extension, MethodBinding

TASKS = "io.modelcontextprotocol/tasks"
TASK_TOOLS = {"long_job", "ask_job", "failing_job"}
POLL_MS = 200

# task id -> the task's state (the members of a DetailedTask).
STATE: dict[str, dict[str, Any]] = {}
# task id -> the answers that came with tasks/update.
ANSWERS: dict[str, asyncio.Queue] = {}
CANCELLED: set[str] = set()
JOBS: dict[str, asyncio.Task] = {}


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def update(task_id: str, status: str, message: str | None = None, **payload: Any) -> None:
    task = STATE[task_id]
    if task["status"] in ("completed", "failed", "cancelled"):
        return
    task.update(status=status, lastUpdatedAt=now())
    task.pop("inputRequests", None)
    if message is not None:
        task["statusMessage"] = message
    task.update(payload)


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


async def run_long_job(task_id: str, arguments: dict[str, Any]) -> None:
    steps = int(arguments.get("steps", 3))
    for step in range(1, steps + 1):
        await asyncio.sleep(0.2)
        update(task_id, "working", f"step {step} of {steps}")
    update(task_id, "completed", "done", result=text_result(f"done after {steps} steps"))


async def run_ask_job(task_id: str, _arguments: dict[str, Any]) -> None:
    await asyncio.sleep(0.2)
    question = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Which python do you mean?",
            "requestedSchema": {
                "type": "object",
                "properties": {"interpretation": {"type": "string", "enum": ["programming", "snake"]}},
                "required": ["interpretation"],
            },
        },
    }
    update(task_id, "input_required", "waiting for the user", inputRequests={f"{task_id}-q1": question})
    answers = await ANSWERS[task_id].get()
    answer = answers.get(f"{task_id}-q1") or {}
    chosen = (answer.get("content") or {}).get("interpretation", "nothing")
    update(task_id, "working", f"the user chose {chosen}")
    await asyncio.sleep(0.2)
    update(task_id, "completed", "done", result=text_result(f"the user chose {chosen}"))


async def run_failing_job(task_id: str, _arguments: dict[str, Any]) -> None:
    await asyncio.sleep(0.2)
    update(task_id, "failed", "the job broke", error={"code": -32603, "message": "the job broke"})


JOB_FUNCTIONS = {"long_job": run_long_job, "ask_job": run_ask_job, "failing_job": run_failing_job}


class TaskIdParams(RequestParams):
    task_id: str = Field(alias="taskId")


class UpdateParams(RequestParams):
    task_id: str = Field(alias="taskId")
    input_responses: dict[str, Any] = Field(alias="inputResponses")


def declared_tasks(ctx: Any) -> bool:
    meta = ctx.meta or {}
    caps = meta.get("io.modelcontextprotocol/clientCapabilities") or {}
    return TASKS in (caps.get("extensions") or {})


def known(task_id: str) -> dict[str, Any]:
    from mcp import MCPError

    if task_id not in STATE:
        raise MCPError(code=-32602, message=f"Failed to retrieve task: unknown task {task_id}")
    return STATE[task_id]


class TasksExtension(Extension):
    identifier = TASKS

    def methods(self):
        return (
            MethodBinding(method="tasks/get", params_type=TaskIdParams, handler=self.get),
            MethodBinding(method="tasks/update", params_type=UpdateParams, handler=self.update),
            MethodBinding(method="tasks/cancel", params_type=TaskIdParams, handler=self.cancel),
        )

    async def intercept_tool_call(self, params, ctx, call_next):
        if params.name not in TASK_TOOLS or not declared_tasks(ctx):
            return await call_next(ctx)
        task_id = secrets.token_hex(16)
        created = now()
        STATE[task_id] = {
            "taskId": task_id,
            "status": "working",
            "statusMessage": "started",
            "createdAt": created,
            "lastUpdatedAt": created,
            "ttlMs": 60_000,
            "pollIntervalMs": POLL_MS,
        }
        ANSWERS[task_id] = asyncio.Queue()
        job = JOB_FUNCTIONS[params.name](task_id, dict(params.arguments or {}))
        JOBS[task_id] = asyncio.get_running_loop().create_task(job)
        return {"resultType": "task", **STATE[task_id]}

    async def get(self, _ctx, params: TaskIdParams):
        return dict(known(params.task_id))

    async def update(self, _ctx, params: UpdateParams):
        known(params.task_id)
        ANSWERS[params.task_id].put_nowait(params.input_responses)
        return {}

    async def cancel(self, _ctx, params: TaskIdParams):
        known(params.task_id)
        job = JOBS.get(params.task_id)
        if job is not None and not job.done():
            job.cancel()
        update(params.task_id, "cancelled", "cancelled by the client")
        CANCELLED.add(params.task_id)
        return {}


server = MCPServer(
    "py-tasks-peer",
    version="2.3.0-tasks",
    instructions="Long-running task tools (tasks extension).",
    log_level="WARNING",
    extensions=[TasksExtension()],
)


@server.tool()
def long_job(steps: int = 3) -> str:
    """A job of `steps` steps of 200 ms (a task when the client declares the extension)."""
    return f"done after {steps} steps"


@server.tool()
def ask_job() -> str:
    """Asks the user which python is meant (a task)."""
    return "not run as a task"


@server.tool()
def failing_job() -> str:
    """Fails (a task)."""
    return "not run as a task"


@server.tool()
def was_cancelled(task_id: str) -> str:
    """Whether tasks/cancel reached task `task_id`."""
    return "true" if task_id in CANCELLED else "false"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], required=True)
    parser.add_argument("--port", type=int, help="the port of 127.0.0.1 to listen on (streamable-http)")
    parser.add_argument("--era", choices=["modern"], default="modern", help="the only era this SDK serves tasks in")
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run("stdio")
    else:
        if args.port is None:
            parser.error("--transport streamable-http needs --port")
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
