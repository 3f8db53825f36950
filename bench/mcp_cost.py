"""What one warm MCP tool call costs the server in process, against the REST route of the same
answer: CPU time (time.process_time) of direct ASGI calls to the whole app, no HTTP and no
client in the measure, interleaved rounds, medians.

    python -m bench.mcp_cost [--tool read|outline] [--calls N] [--rounds N]
    python -m bench.mcp_cost --profile mcp|rest     # cProfile of N calls, Python calls per call

`read` is `tools/call read {paper, anchor}` against `GET /{paper}/sections/{anchor}.md`,
`outline` against `GET /{paper}/outline.json`, on the paper and section of the requests bench
(the corpus page 2501.11120v1 as 2601.00002v1, its S2) through the replay upstream. Issue 20's
target: an MCP read ≤ 1.2× the REST read. Over loopback (BENCHMARKS.md section 4) the calls/s
of both are bound by the load generator.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.asgi import asgi_request
from tests.replay import Replay, page

from bench.common import CORPUS
from bench.requests_bench import WARM_ANCHOR, WARM_IDV, WARM_PAGE

HOST = b"127.0.0.1:8765"
Request = tuple[str, str, list[tuple[bytes, bytes]], bytes]


def requests(tool: str) -> tuple[Request, Request]:
    """The MCP request and the REST request of the same answer."""
    arguments: dict[str, str] = {"paper": WARM_IDV}
    rest = f"/{WARM_IDV}/{tool}.json"
    if tool == "read":
        arguments["anchor"] = WARM_ANCHOR
        rest = f"/{WARM_IDV}/sections/{WARM_ANCHOR}.md"
    params = {"name": tool, "arguments": arguments}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    headers = [
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2025-06-18"),  # what bench/load.py sends
        (b"content-length", str(len(body)).encode()),
    ]
    return ("POST", "/mcp", headers, body.encode()), ("GET", rest, [], b"")


async def call(app: Any, request: Request) -> int:
    """One request straight to the ASGI app; its status."""
    method, path, headers, body = request
    sent = await asgi_request(app, method, path, headers, body, host=HOST)
    status: int = sent[0]["status"]
    return status


async def measure(
    replay: Replay, tool: str, calls: int, rounds: int, profile: str | None
) -> dict[str, Any]:
    from paperanchor.app import create_app

    mcp, rest = requests(tool)
    with tempfile.TemporaryDirectory() as cache:
        settings = replay.settings(Path(cache), public_url="http://127.0.0.1:8765", rate_limit="0")
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            for _ in range(20):  # cached, rendered, counted
                assert await call(app, rest) == 200 and await call(app, mcp) == 200
            if profile is not None:
                profiler = cProfile.Profile()
                profiler.enable()
                for _ in range(calls):
                    await call(app, mcp if profile == "mcp" else rest)
                profiler.disable()
                stats = pstats.Stats(profiler)
                print(f"{profile}: {stats.total_calls / calls:.0f} Python calls per request")
                stats.sort_stats("cumulative").print_stats(40)
                return {}
            ms: dict[str, list[float]] = {"mcp": [], "rest": []}
            for _ in range(rounds):  # interleaved: the machine's load hits both alike
                for name, request in (("rest", rest), ("mcp", mcp)):
                    start = time.process_time()
                    for _ in range(calls):
                        await call(app, request)
                    ms[name].append((time.process_time() - start) / calls * 1e3)
            ratios = [m / r for m, r in zip(ms["mcp"], ms["rest"], strict=True)]
            return {
                "mcp_ms": statistics.median(ms["mcp"]),
                "rest_ms": statistics.median(ms["rest"]),
                "ratio": statistics.median(ratios),
                "ratio_range": (min(ratios), max(ratios)),
            }


def run(tool: str = "read", calls: int = 200, rounds: int = 15) -> dict[str, Any]:
    """`measure` over a replay of the requests bench's warm paper (make bench's section 4)."""
    replay = Replay(CORPUS / "html")
    replay.start()
    try:
        replay.script(f"/html/{WARM_IDV}", page(WARM_PAGE.read_bytes()))
        return asyncio.run(measure(replay, tool, calls, rounds, None))
    finally:
        replay.stop()  # outside the event loop: the replay runs its own


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", choices=("read", "outline"), default="read")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--profile", choices=("mcp", "rest"), default=None)
    args = parser.parse_args()
    if args.profile is None:
        result = run(args.tool, args.calls, args.rounds)
    else:
        replay = Replay(CORPUS / "html")
        replay.start()
        try:
            replay.script(f"/html/{WARM_IDV}", page(WARM_PAGE.read_bytes()))
            result = asyncio.run(measure(replay, args.tool, args.calls, 1, args.profile))
        finally:
            replay.stop()
    if result:
        low, high = result["ratio_range"]
        print(
            f"{args.tool}: MCP {result['mcp_ms']:.3f} ms, REST {result['rest_ms']:.3f} ms per "
            f"call; MCP/REST {result['ratio']:.2f} ({low:.2f}-{high:.2f})"
        )


if __name__ == "__main__":
    main()
