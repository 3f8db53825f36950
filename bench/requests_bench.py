"""Request benchmarks against real `paperanchor serve` processes on loopback.

* cold: the first `outline` of every uncached page (the corpus's html and generated pages and
  the fixtures) through the replay upstream on loopback (gap 0), ÷ a bare `lxml.html.fromstring`
  of the same bytes timed right after it in the same process: a fresh server and an empty
  cache each round, the pages in another order each round, so each round's first request (a
  fresh server's first) is a different page's and is counted with the rest;
* warm: requests/s and p50/p99 of a cached section's Markdown under load from a separate
  process, ÷ the same server's /healthz under the same load (wrk when installed);
* mcp: warm `read` calls/s over Streamable HTTP ÷ the REST route for the same read, both
  from the same httpx load script so the client's cost is alike.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import httpx
import lxml.html
from tests.replay import Replay, page

from bench.common import CORPUS, ROOT, Spread, corpus_pages, load, measure, serve

WARM_IDV = "2601.00002v1"
WARM_ANCHOR = "S2"
WARM_PAGE = CORPUS / "html" / "2501.11120v1.arxiv.html"
COLD_ROUNDS = 3
# lxml's parse of a small page takes a millisecond or two: its median over a few runs, so
# that one slow run does not make the page's ratio
LXML_RUNS = 5


def cold_pages() -> list[Path]:
    """Every page the cold run asks for: corpus html, generated, then the fixtures."""
    return corpus_pages() + sorted((ROOT / "fixtures" / "html").glob("*.html"))


def _label(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def run(
    rounds: int = 3, seconds: float = 4, connections: int = 16, cold_rounds: int = COLD_ROUNDS
) -> dict[str, object]:
    pages = cold_pages()
    # replay path -> page; the warm paper is the corpus page 2501.11120v1 under WARM_IDV
    names = {f"2601.{n:05d}v1": path for n, path in enumerate(pages, start=10)}
    names[WARM_IDV] = WARM_PAGE
    replay = Replay(CORPUS / "html")
    replay.start()
    try:
        for idv, path in names.items():
            replay.script(f"/html/{idv}", page(path.read_bytes()))
        cold = _cold(replay, {idv: p for idv, p in names.items() if idv != WARM_IDV}, cold_rounds)
        with (
            tempfile.TemporaryDirectory() as cache,
            serve(_environ(replay, cache)) as (base, _process),
        ):
            warm = _warm(base, rounds, seconds, connections)
            mcp = _mcp(base, rounds, seconds, connections)
    finally:
        replay.stop()
    return {"cold": cold, "warm": warm, "mcp": mcp, "cold_rounds": cold_rounds}


def _environ(replay: Replay, cache: str) -> dict[str, str]:
    return {**replay.environ(), "PAPERANCHOR_CACHE_DIR": cache, "PAPERANCHOR_MIN_GAP_S": "0"}


def _lxml(data: bytes) -> float:
    times = []
    for _ in range(LXML_RUNS):
        start = time.perf_counter()
        lxml.html.fromstring(data)
        times.append(time.perf_counter() - start)
    return sorted(times)[LXML_RUNS // 2]


def _cold(replay: Replay, names: dict[str, Path], rounds: int) -> dict[str, object]:
    """Per page: its cold outline ÷ lxml, each round on a fresh server over an empty cache."""
    order = list(names)
    ratios: dict[str, list[float]] = {idv: [] for idv in order}
    seconds: dict[str, list[float]] = {idv: [] for idv in order}
    firsts: list[tuple[str, float]] = []
    for round_ in range(rounds):
        # a different page goes first on each fresh server (spread over the list)
        shift = round_ * len(order) // max(1, rounds)
        asked = order[shift:] + order[:shift]
        with (
            tempfile.TemporaryDirectory() as cache,
            serve(_environ(replay, cache)) as (base, _process),
            httpx.Client(timeout=120, trust_env=False) as client,
        ):
            for position, idv in enumerate(asked):
                start = time.perf_counter()
                response = client.get(f"{base}/{idv}/outline.json")
                took = time.perf_counter() - start
                response.raise_for_status()
                ratio = took / _lxml(names[idv].read_bytes())
                ratios[idv].append(ratio)
                seconds[idv].append(took)
                if position == 0:
                    firsts.append((_label(names[idv]), ratio))
    rows = [
        {
            "page": _label(names[idv]),
            "bytes": names[idv].stat().st_size,
            "seconds": Spread.of(seconds[idv]),
            "ratio": Spread.of(ratios[idv]),
        }
        for idv in order
    ]
    medians = [row["ratio"].median for row in rows]  # type: ignore[attr-defined]
    return {"rows": rows, "firsts": firsts, "median": Spread.of(medians)}


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


def cold_only(rounds: int = COLD_ROUNDS) -> dict[str, object]:
    """The cold run alone (`python -m bench.requests_bench cold`)."""
    pages = cold_pages()
    names = {f"2601.{n:05d}v1": path for n, path in enumerate(pages, start=10)}
    replay = Replay(CORPUS / "html")
    replay.start()
    try:
        for idv, path in names.items():
            replay.script(f"/html/{idv}", page(path.read_bytes()))
        return _cold(replay, names, rounds)
    finally:
        replay.stop()


def main(argv: list[str]) -> int:
    if argv[:1] == ["cold"]:
        cold = cold_only(int(argv[1]) if len(argv) > 1 else COLD_ROUNDS)
        for row in cold["rows"]:  # type: ignore[attr-defined]
            print(f"{row['page']:<62} {row['ratio'].show()}  {row['seconds'].median * 1e3:.0f} ms")
        print("first requests:", ", ".join(f"{p} {r:.1f}" for p, r in cold["firsts"]))  # type: ignore[attr-defined]
        print("median of pages:", cold["median"].show())  # type: ignore[attr-defined]
        return 0
    print(json.dumps(run(), default=lambda s: s.show(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
