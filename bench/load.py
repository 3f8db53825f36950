"""A load generator, run as its own process: GETs (or MCP tool calls) for a fixed time.

    python -m bench.load --seconds 5 --concurrency 16 URL [URL ...] [--mcp-call JSON]

Each worker loops over the URLs round-robin; with --mcp-call, each request is a JSON-RPC
`tools/call` POSTed to the URL (a stateless Streamable HTTP MCP endpoint). Prints one JSON
line: requests, errors, requests/s, p50 and p99 latency in ms. Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import httpx


async def _worker(
    client: httpx.AsyncClient,
    urls: list[str],
    stop: float,
    offset: int,
    mcp: dict[str, object] | None,
    latencies: list[float],
    errors: list[int],
) -> None:
    index = offset
    while time.perf_counter() < stop:
        url = urls[index % len(urls)]
        index += 1
        start = time.perf_counter()
        try:
            if mcp is None:
                response = await client.get(url)
            else:
                body = {"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": mcp}
                response = await client.post(
                    url,
                    json=body,
                    headers={
                        "Accept": "application/json, text/event-stream",
                        "MCP-Protocol-Version": "2025-06-18",
                    },
                )
            ok = response.status_code == 200 and (
                mcp is None or '"isError":true' not in response.text.replace(" ", "")
            )
        except httpx.HTTPError:
            ok = False
        latencies.append(time.perf_counter() - start)
        if not ok:
            errors.append(1)


async def main_async(
    urls: list[str], seconds: float, concurrency: int, mcp: dict[str, object] | None
) -> dict[str, float]:
    latencies: list[float] = []
    errors: list[int] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=30, limits=limits, trust_env=False) as client:
        # one warm-up round so connection set-up is not measured
        await asyncio.gather(
            *(client.get(urls[0].rsplit("/mcp", 1)[0] + "/healthz") for _ in range(concurrency))
        )
        start = time.perf_counter()
        stop = start + seconds
        await asyncio.gather(
            *(_worker(client, urls, stop, i, mcp, latencies, errors) for i in range(concurrency))
        )
        elapsed = time.perf_counter() - start
    ordered = sorted(latencies)
    return {
        "requests": len(latencies),
        "errors": len(errors),
        "rps": len(latencies) / elapsed,
        "p50_ms": statistics.median(ordered) * 1000 if ordered else 0.0,
        "p99_ms": ordered[int(len(ordered) * 0.99) - 1] * 1000 if ordered else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("urls", nargs="+")
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--mcp-call", default=None)
    args = parser.parse_args()
    mcp = json.loads(args.mcp_call) if args.mcp_call else None
    print(json.dumps(asyncio.run(main_async(args.urls, args.seconds, args.concurrency, mcp))))


if __name__ == "__main__":
    main()
