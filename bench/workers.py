"""Throughput with 1 and 2 server processes sharing a warm Redis cache, as a ratio to /healthz.

    .venv/bin/python -m bench.workers [--seconds 3] [--rounds 3] [--concurrency 16]

Starts its own redis-server on a loopback port, stores one parsed paper in it (2501.11120v1
from the corpus), then for N = 1 and 2 starts `paperanchor serve --workers N` (offline: the
shared cache is all the workers have) and loads it from a separate process (wrk when
installed, else bench/load.py). It measures requests/s of `GET /2501.11120v1/sections/S2.md`
and of `GET /healthz`, interleaved, and prints the medians with min–max and the ratio of the
two. Only loopback is ever contacted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.common import CORPUS, ROOT, Spread, free_port, machine, measure, pinned, wait_for

IDV = "2501.11120v1"
PAGE = "2501.11120v1.arxiv.html"
ANCHOR = "S2"


@contextmanager
def redis_server(directory: Path, cpus: str | None = None) -> Iterator[str]:
    program = shutil.which("redis-server")
    if program is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    process = subprocess.Popen(pinned(
        [program, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
         "no", "--dir", str(directory), "--logfile", str(directory / "redis.log")], cpus,
    ))  # fmt: skip
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
    from paperanchor.papers import LoadedPaper, paper_codec
    from paperanchor.parse import PARSER_VERSION, parse_document
    from paperanchor.store import PaperCache, RedisStore

    source_url = f"https://arxiv.org/html/{IDV}"
    document = parse_document((CORPUS / "html" / PAGE).read_bytes(), source_url)
    loaded = LoadedPaper(document, IDV.split("v")[0], IDV, 1, True, "arxiv", source_url)
    store = RedisStore(cache_url)
    try:
        PaperCache(store, paper_codec()).put_paper(IDV, PARSER_VERSION, loaded)
    finally:
        store.close()


@contextmanager
def workers(count: int, cache_url: str, cache_dir: Path, cpus: str | None = None) -> Iterator[str]:
    """`paperanchor serve --workers count` on one port, every worker on the shared Redis."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PAPERANCHOR_")}
    env.update(
        PAPERANCHOR_CACHE_URL=cache_url,
        PAPERANCHOR_CACHE_DIR=str(cache_dir),
        PAPERANCHOR_OFFLINE="1",
        PAPERANCHOR_RATE_LIMIT="0",
    )
    port = free_port()
    command = [sys.executable, "-m", "paperanchor.cli", "serve", "--port", str(port),
               "--workers", str(count), "--log-level", "warning"]  # fmt: skip
    process = subprocess.Popen(pinned(command, cpus), cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{url}/healthz", process)
        yield url
    finally:
        process.terminate()
        process.wait(15)


# How the cores are shared in each layout: (servers and Redis, load generator); None: anywhere.
LAYOUTS: dict[str, tuple[str | None, str | None]] = {
    "shared": (None, None),
    "load on its own core": ("0", "1"),
}


def run(
    rounds: int = 3,
    seconds: float = 3.0,
    concurrency: int = 16,
    server_cpus: str | None = None,
    load_cpus: str | None = None,
) -> dict[int, dict[str, Spread]]:
    """For 1 and 2 server processes: req/s of a cached section and of /healthz, and their ratio;
    the servers and Redis on `server_cpus`, the load generator on `load_cpus` (taskset)."""
    section = f"/{IDV}/sections/{ANCHOR}.md"
    results: dict[int, dict[str, Spread]] = {}
    with (
        tempfile.TemporaryDirectory() as scratch,
        redis_server(Path(scratch), server_cpus) as cache_url,
    ):
        warm(cache_url)
        for count in (1, 2):
            with workers(count, cache_url, Path(scratch) / "disk", server_cpus) as base:
                rates: dict[str, list[float]] = {"healthz": [], "section": []}
                for _ in range(rounds):
                    for name, path in (("healthz", "/healthz"), ("section", section)):
                        rate = measure(base + path, seconds, concurrency, load_cpus)["rps"]
                        rates[name].append(rate)
            healthz, sections = Spread.of(rates["healthz"]), Spread.of(rates["section"])
            results[count] = {
                "section": sections,
                "healthz": healthz,
                "ratio": sections.ratio_to(healthz),
            }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--server-cpus", help="taskset -c list for the servers and Redis")
    parser.add_argument("--load-cpus", help="taskset -c list for the load generator")
    args = parser.parse_args()
    print(
        f"{machine()}; {args.rounds} rounds of {args.seconds:g} s, {args.concurrency} "
        "concurrent requests from one load process"
    )
    figures_of = run(args.rounds, args.seconds, args.concurrency, args.server_cpus, args.load_cpus)
    for count, figures in figures_of.items():
        print(
            f"{count} process{'es' if count > 1 else ''}: GET /{IDV}/sections/{ANCHOR}.md "
            f"{figures['section'].show(0)} req/s; /healthz {figures['healthz'].show(0)} req/s; "
            f"ratio {figures['ratio'].show(3)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
