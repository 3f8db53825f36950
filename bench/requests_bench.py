"""Request benchmarks against real `paperanchor serve` processes on loopback.

* cold: the first `outline` of uncached papers through the replay upstream (gap 0), split
  into upstream time (a bare GET of the same page), parse time (parse_document of the same
  bytes) and the rest (server, caching, rendering);
* warm: requests/s and p50/p99 of a cached section's Markdown under load from a separate
  process, ÷ the same server's /healthz under the same load (wrk when installed);
* mcp: warm `read` calls/s over Streamable HTTP ÷ the REST route for the same read, both
  from the same httpx load script so the client's cost is alike.
"""

from __future__ import annotations

import json
import tempfile
import time

import httpx
from tests.replay import Replay, page

from bench.common import CORPUS, Spread, load, measure, serve, timed
from paperanchor.parse import parse_document

# Papers for the cold runs: replay paths -> corpus pages (served as arXiv pages, versioned).
COLD = {
    f"2601.{n:05d}v1": name
    for n, name in enumerate(
        [
            "1808.08002.ar5iv.html",
            "2501.11120v1.arxiv.html",
            "split-cycle-axiomatic-characterization.arxiv.html",
            "ssh-electron-phonon-superconductivity.arxiv.html",
            "submission-5393936.arxiv.html",
        ],
        start=1,
    )
}
WARM_IDV = "2601.00002v1"
WARM_ANCHOR = "S2"


def run(rounds: int = 3, seconds: float = 4, connections: int = 16) -> dict[str, object]:
    replay = Replay(CORPUS / "html")
    replay.start()
    try:
        for idv, name in COLD.items():
            replay.script(f"/html/{idv}", *[page(replay.corpus_page(name))] * 1000)
        with tempfile.TemporaryDirectory() as cache:
            env = {**replay.environ(), "PAPERANCHOR_CACHE_DIR": cache, "PAPERANCHOR_MIN_GAP_S": "0"}
            with serve(env) as (base, _process):
                cold = _cold(base, replay)
                warm = _warm(base, rounds, seconds, connections)
                mcp = _mcp(base, rounds, seconds, connections)
    finally:
        replay.stop()
    return {"cold": cold, "warm": warm, "mcp": mcp}


def _cold(base: str, replay: Replay) -> dict[str, Spread]:
    totals, upstream, parse = [], [], []
    with httpx.Client(timeout=60, trust_env=False) as client:
        for idv, name in COLD.items():
            start = time.perf_counter()
            response = client.get(f"{base}/{idv}/outline.json")
            totals.append(time.perf_counter() - start)
            response.raise_for_status()
            upstream.append(timed(lambda: client.get(f"{replay.arxiv_url}/{idv}"), 3).median)  # noqa: B023
            data = (CORPUS / "html" / name).read_bytes()
            parse.append(timed(lambda: parse_document(data), 3).median)  # noqa: B023
    rest = [t - u - p for t, u, p in zip(totals, upstream, parse, strict=True)]
    return {
        "total": Spread.of(totals),
        "upstream": Spread.of(upstream),
        "parse": Spread.of(parse),
        "rest": Spread.of(rest),
    }


def _warm(base: str, rounds: int, seconds: float, connections: int) -> dict[str, object]:
    section = f"{base}/{WARM_IDV}/sections/{WARM_ANCHOR}.md"
    httpx.get(section, timeout=60, trust_env=False).raise_for_status()  # cached and rendered
    runs: dict[str, list[dict[str, float]]] = {"section": [], "healthz": []}
    for _ in range(rounds):  # interleaved, so noise hits both alike
        runs["section"].append(measure(section, seconds, connections))
        runs["healthz"].append(measure(f"{base}/healthz", seconds, connections))
    return _summary(runs, "section", "healthz")


def _mcp(base: str, rounds: int, seconds: float, connections: int) -> dict[str, object]:
    call = {"name": "read", "arguments": {"paper": WARM_IDV, "anchor": WARM_ANCHOR}}
    rest = f"{base}/{WARM_IDV}/sections/{WARM_ANCHOR}.md"
    runs: dict[str, list[dict[str, float]]] = {"mcp": [], "rest": []}
    for _ in range(rounds):
        runs["mcp"].append(load([f"{base}/mcp"], seconds, connections, mcp=call))
        runs["rest"].append(load([rest], seconds, connections))
    return _summary(runs, "mcp", "rest")


def _summary(runs: dict[str, list[dict[str, float]]], top: str, base: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, results in runs.items():
        out[name] = {
            key: Spread.of([r[key] for r in results]) for key in ("rps", "p50_ms", "p99_ms")
        }
        out[f"{name}_errors"] = sum(r.get("errors", 0) for r in results)
    ratios = [a["rps"] / b["rps"] for a, b in zip(runs[top], runs[base], strict=True)]
    out["ratio"] = Spread.of(ratios)
    return out


if __name__ == "__main__":
    print(json.dumps(run(), default=lambda s: s.show(), indent=2))
