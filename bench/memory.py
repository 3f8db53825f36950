"""Resident memory of a server holding 50 parsed papers, of one given six 40 MB pages, and of
parsing the largest page.

The server gets a local directory of 50 names linked to corpus pages (each page several
times under different names, so 50 distinct papers are parsed and held), and the outline of
each is requested once. For the large pages, six distinct copies of a real paper grown to
40 MB (tests/large_page.py), each asked for its outline and a section, under the default
PAPERANCHOR_MEMORY_MB. Peak memory of a parse is measured in a fresh process.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from tests.large_page import large_page

from bench.common import CORPUS, Spread, corpus_pages, rss_kb, serve

PAPERS = 50
LARGE_COPIES = 6
LARGE_MB = 40

# /proc's VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over from the parent
# across fork and exec, so a child of a large process would report the parent's peak.
_PEAK = """
import sys
from paperanchor.parse import parse_document

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1])

data = open(sys.argv[1], "rb").read()
before = status("VmHWM:")
document = parse_document(data)
after = status("VmHWM:")
print(before, after, len(data))
"""


def parse_peak() -> dict[str, float]:
    largest = max(corpus_pages(), key=lambda p: p.stat().st_size)
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, str(largest)], capture_output=True, text=True, check=True
    ).stdout.split()
    before, after, size = (int(x) for x in out)
    return {
        "page": largest.name,
        "bytes": size,
        "peak_kb": after - before,
        "ratio": (after - before) * 1024 / size,
    }


@contextmanager
def _offline_server(folder: str, cache: str) -> Iterator[tuple[str, int, httpx.Client]]:
    """`paperanchor serve` over a local folder, offline: its URL, its pid and a client."""
    env = {
        "PAPERANCHOR_LOCAL_DIR": folder,
        "PAPERANCHOR_OFFLINE": "1",
        "PAPERANCHOR_CACHE_DIR": cache,
    }
    with serve(env) as (base, process), httpx.Client(timeout=600, trust_env=False) as client:
        yield base, process.pid, client


def server_rss() -> dict[str, float]:
    pages = corpus_pages()
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as cache:
        for n in range(PAPERS):
            (Path(folder) / f"p{n:02d}.html").symlink_to(pages[n % len(pages)])
        with _offline_server(folder, cache) as (base, pid, client):
            client.get(f"{base}/healthz").raise_for_status()
            idle = rss_kb(pid)
            for n in range(PAPERS):
                client.get(f"{base}/local/p{n:02d}/outline.json").raise_for_status()
            held = rss_kb(pid)
    return {"idle_kb": idle, "held_kb": held, "per_paper_kb": (held - idle) / PAPERS}


def server_rss_runs(runs: int) -> dict[str, object]:
    """`server_rss` on `runs` fresh servers: medians with min and max, in MB."""
    found = [server_rss() for _ in range(runs)]
    return {
        "runs": runs,
        **{
            f"{name}_mb": Spread.of([run[f"{name}_kb"] / 1024 for run in found])
            for name in ("idle", "held", "per_paper")
        },
    }


def large_pages_rss(copies: int = LARGE_COPIES, megabytes: float = LARGE_MB) -> dict[str, object]:
    """RSS after each of `copies` large pages (and idle, after one small paper), default memory."""
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as cache:
        for n in range(copies):
            (Path(folder) / f"big{n}.html").write_bytes(large_page(megabytes, title=f"Large {n}"))
        (Path(folder) / "small.html").symlink_to(CORPUS / "html" / "2510.11260v1.arxiv.html")
        with _offline_server(folder, cache) as (base, pid, client):
            client.get(f"{base}/local/small/outline.json").raise_for_status()
            idle = rss_kb(pid)
            after = []
            for n in range(copies):
                client.get(f"{base}/local/big{n}/outline.json").raise_for_status()
                client.get(f"{base}/local/big{n}/sections/S1.md").raise_for_status()
                after.append(rss_kb(pid))
            status = Path(f"/proc/{pid}/status").read_text()
            peak = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM"))
    return {"idle_kb": idle, "after_kb": after, "peak_kb": peak, "page_mb": megabytes}


if __name__ == "__main__":
    print(parse_peak())
    print(server_rss())
    print(large_pages_rss())
