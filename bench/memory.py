"""Resident memory of a server holding 50 parsed papers, and of parsing the largest page.

The server gets a local directory of 50 names linked to corpus pages (each page several
times under different names, so 50 distinct papers are parsed and held), and the outline of
each is requested once. Peak memory of a parse is measured in a fresh process.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

from bench.common import corpus_pages, rss_kb, serve

PAPERS = 50

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


def server_rss() -> dict[str, float]:
    pages = corpus_pages()
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as cache:
        for n in range(PAPERS):
            (Path(folder) / f"p{n:02d}.html").symlink_to(pages[n % len(pages)])
        env = {
            "PAPERANCHOR_LOCAL_DIR": folder,
            "PAPERANCHOR_OFFLINE": "1",
            "PAPERANCHOR_CACHE_DIR": cache,
        }
        with serve(env) as (base, process), httpx.Client(timeout=120, trust_env=False) as client:
            client.get(f"{base}/healthz").raise_for_status()
            idle = rss_kb(process.pid)
            for n in range(PAPERS):
                client.get(f"{base}/local/p{n:02d}/outline.json").raise_for_status()
            held = rss_kb(process.pid)
    return {"idle_kb": idle, "held_kb": held, "per_paper_kb": (held - idle) / PAPERS}


if __name__ == "__main__":
    print(parse_peak())
    print(server_rss())
