"""What the outline's metadata costs: tokens, and time against the outline without discovery.

`python -m bench.discovery_bench` (not part of `make bench`: it adds no target). Two
`paperanchor serve` processes over one replay upstream: one with discovery pointed at the
replay's recorded arXiv API answers (gap 0), one with discovery off, the baseline. Each paper
is a corpus page served under a recorded id. Times are medians (min–max) of rounds
interleaved between the two servers, and ratios to the baseline's warm outline of the same run.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time

import httpx
from tests.discovery.recorded import atom
from tests.replay import Replay, page, slow, status

from bench.common import CORPUS, Spread, interleaved, serve
from paperanchor import tokens
from paperanchor.discovery import query
from paperanchor.discovery.client import api_url

# Recorded ids (their API answers are in corpus/atom) served as this corpus page.
PAPERS = ["1111.2011v2", "2104.12255v1", "hep-ex/0406020v1", "quant-ph/0201082v1"]
PAGE = "2501.11120v1.arxiv.html"
SLOW = "1207.7214v2"  # its API answer takes 3 s
DOWN = "1601.00001v1"  # its API answers 503
ROUNDS = 15


def _target(replay: Replay, idv: str) -> str:
    url = api_url(replay.arxiv_api_url, query.id_list_params(query.id_list([idv])))
    return url.removeprefix(replay.base_url)


def _tokens(outline: dict[str, object]) -> int:
    return tokens.count(json.dumps(outline, ensure_ascii=False, separators=(",", ":")))


def run() -> dict[str, object]:
    replay = Replay(CORPUS / "html")
    replay.start()
    replay.answer_ids_from_recordings()
    body = replay.corpus_page(PAGE)
    for idv in [*PAPERS, SLOW, DOWN]:
        replay.script(f"/html/{idv}", *[page(body)] * 1000)
    feed = atom("atom-1207.7214.xml")
    replay.script(_target(replay, SLOW), slow(feed, len(feed) // 3 + 1, 1.0))
    replay.script(_target(replay, DOWN), status(503))
    try:
        with tempfile.TemporaryDirectory() as on, tempfile.TemporaryDirectory() as off:
            with_env = {**replay.environ(discovery=True), "PAPERANCHOR_CACHE_DIR": on}
            base_env = {**replay.environ(), "PAPERANCHOR_CACHE_DIR": off}
            with serve(with_env) as (found, _), serve(base_env) as (plain, _):
                return _measure(found, plain)
    finally:
        replay.stop()


def _measure(found: str, plain: str) -> dict[str, object]:
    results: dict[str, object] = {}
    with httpx.Client(timeout=60, trust_env=False) as client:
        for base in (found, plain):  # every paper parsed and cached, no outline asked yet
            for idv in [*PAPERS, SLOW, DOWN]:
                client.get(f"{base}/{idv}.md").raise_for_status()
        # the first outline of a cached paper whose metadata is not: one API request
        first = []
        for idv in PAPERS:
            started = time.perf_counter()
            outline = client.get(f"{found}/{idv}/outline.json").json()
            first.append(time.perf_counter() - started)
            assert outline["metadata"] is not None, idv
        with_tokens = [_tokens(client.get(f"{found}/{idv}/outline.json").json()) for idv in PAPERS]
        without = [_tokens(client.get(f"{plain}/{idv}/outline.json").json()) for idv in PAPERS]
        results["tokens"] = (statistics.median(with_tokens), statistics.median(without))
        warm = interleaved(
            {
                "baseline": lambda: client.get(f"{plain}/{PAPERS[0]}/outline.json"),
                "with metadata": lambda: client.get(f"{found}/{PAPERS[0]}/outline.json"),
            },
            ROUNDS,
        )
        results["warm"] = warm
        results["first"] = Spread.of(first)
        # one request at a time to the API: the failing one first, then the slow one
        for name, idv in (("down", DOWN), ("slow", SLOW)):
            started = time.perf_counter()
            outline = client.get(f"{found}/{idv}/outline.json").json()
            results[name] = Spread.of([time.perf_counter() - started])
            assert outline["metadata"] is None, idv
        while client.get(f"{found}/{SLOW}/outline.json").json()["metadata"] is None:
            time.sleep(0.05)  # the slow answer comes, and is kept for the next outline
        results["filled"] = time.perf_counter() - started
    return results


def report(results: dict[str, object]) -> str:
    with_tokens, without = results["tokens"]  # type: ignore[misc]
    warm: dict[str, Spread] = results["warm"]  # type: ignore[assignment]
    base = warm["baseline"]
    lines = [
        f"outline tokens (median of {len(PAPERS)} papers): {with_tokens:.0f} with metadata, "
        f"{without:.0f} without (+{with_tokens - without:.0f})",
        "",
        "| outline | seconds | ÷ warm outline without discovery |",
        "|---|---|---|",
        f"| warm, without discovery (baseline) | {base.show(3)} | 1 |",
    ]
    rows = [
        ("warm, metadata kept", warm["with metadata"]),
        ("paper kept, metadata asked (API answers at once)", results["first"]),
        ("paper kept, API takes 3 s: answered without metadata", results["slow"]),
        ("paper kept, API answers 503: answered without metadata", results["down"]),
    ]
    for name, spread in rows:
        assert isinstance(spread, Spread)
        lines.append(f"| {name} | {spread.show(3)} | {spread.ratio_to(base).show(1)} |")
    lines += ["", f"the slow paper's metadata was in an outline {results['filled']:.1f} s after"]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
