"""Throughput with 1 and 2 server processes sharing a warm Redis cache, as a ratio to /healthz.

    .venv/bin/python -m bench.workers [--seconds 3] [--rounds 3] [--concurrency 16]

Starts its own redis-server on a loopback port, stores one parsed paper in it (2501.11120v1
from the corpus), then for N = 1 and 2 starts N `paperanchor serve` processes (offline: the
cache is all they have) and loads them from a separate process with an async httpx client that
spreads its requests round-robin over the servers, as a load balancer would. It measures
requests/s of `GET /2501.11120v1/sections/S2.md` and of `GET /healthz`, interleaved, and
prints the medians with min–max and the ratio of the two. Only loopback is ever contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.common import CORPUS, ROOT, Spread, free_port, machine, wait_for

IDV = "2501.11120v1"
PAGE = "2501.11120v1.arxiv.html"
ANCHOR = "S2"


@contextmanager
def redis_server(directory: Path) -> Iterator[str]:
    program = shutil.which("redis-server")
    if program is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    process = subprocess.Popen(
        [program, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
         "no", "--dir", str(directory), "--logfile", str(directory / "redis.log")],
    )  # fmt: skip
    try:
        import redis

        client = redis.Redis(host="127.0.0.1", port=port)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)
        finally:
            client.close()
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)


def warm(cache_url: str) -> None:
    """Store the parsed paper in Redis as a fetch from arXiv would have."""
    from paperanchor.library import LoadedPaper
    from paperanchor.parse import PARSER_VERSION, parse_document
    from paperanchor.store import PaperCache, RedisStore

    source_url = f"https://arxiv.org/html/{IDV}"
    document = parse_document((CORPUS / "html" / PAGE).read_bytes(), source_url)
    loaded = LoadedPaper(document, IDV.split("v")[0], IDV, 1, True, "arxiv", source_url)
    store = RedisStore(cache_url)
    try:
        PaperCache(store).put_paper(IDV, PARSER_VERSION, loaded)
    finally:
        store.close()


@contextmanager
def servers(count: int, cache_url: str, cache_dir: Path) -> Iterator[list[str]]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("PAPERANCHOR_")}
    env.update(
        PAPERANCHOR_CACHE_URL=cache_url,
        PAPERANCHOR_CACHE_DIR=str(cache_dir),
        PAPERANCHOR_OFFLINE="1",
        PAPERANCHOR_RATE_LIMIT="0",
    )
    started = []
    try:
        for _ in range(count):
            port = free_port()
            command = [sys.executable, "-m", "paperanchor.cli", "serve", "--port", str(port),
                       "--log-level", "warning"]  # fmt: skip
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
            started.append((f"http://127.0.0.1:{port}", process))
        for url, process in started:
            wait_for(f"{url}/healthz", process)
        yield [url for url, _ in started]
    finally:
        for _, process in started:
            process.terminate()
        for _, process in started:
            process.wait(15)


def measure(bases: list[str], path: str, seconds: float, concurrency: int) -> float:
    """Requests/s of `path` over `bases`, from a load process of its own."""
    command = [sys.executable, "-m", "bench.workers", "--load", path, "--seconds", str(seconds),
               "--concurrency", str(concurrency), *bases]  # fmt: skip
    out = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return float(json.loads(out)["rps"])


async def load(bases: list[str], path: str, seconds: float, concurrency: int) -> dict[str, float]:
    import httpx

    done = failed = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=30, trust_env=False, limits=limits) as client:
        for base in bases:  # connections open and the paper in each server's memory
            for _ in range(3):
                (await client.get(base + path)).raise_for_status()
        deadline = time.monotonic() + seconds
        started = time.monotonic()

        async def user(offset: int) -> None:
            nonlocal done, failed
            turn = offset
            while time.monotonic() < deadline:
                response = await client.get(bases[turn % len(bases)] + path)
                turn += 1
                if response.status_code == 200:
                    done += 1
                else:
                    failed += 1

        await asyncio.gather(*(user(n) for n in range(concurrency)))
        elapsed = time.monotonic() - started
    if failed:
        raise SystemExit(f"{failed} requests failed")
    return {"rps": done / elapsed, "requests": done}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--load", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("bases", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        print(json.dumps(asyncio.run(load(args.bases, args.load, args.seconds, args.concurrency))))
        return 0

    section = f"/{IDV}/sections/{ANCHOR}.md"
    print(f"{machine()}; {args.rounds} rounds of {args.seconds:g} s, {args.concurrency} "
          f"concurrent requests from one load process")  # fmt: skip
    with tempfile.TemporaryDirectory() as scratch, redis_server(Path(scratch)) as cache_url:
        warm(cache_url)
        for count in (1, 2):
            with servers(count, cache_url, Path(scratch) / "disk") as bases:
                rates: dict[str, list[float]] = {"healthz": [], "section": []}
                for _ in range(args.rounds):
                    for name, path in (("healthz", "/healthz"), ("section", section)):
                        rates[name].append(measure(bases, path, args.seconds, args.concurrency))
            healthz, sections = Spread.of(rates["healthz"]), Spread.of(rates["section"])
            print(f"{count} process{'es' if count > 1 else ''}: GET {section} "
                  f"{sections.show(0)} req/s; /healthz {healthz.show(0)} req/s; "
                  f"ratio {sections.ratio_to(healthz).show(3)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
