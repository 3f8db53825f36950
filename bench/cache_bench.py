"""Cache load: reading a cached paper back (the warm path's store hit) ÷ parsing its page again,
and ÷ what the pickles of the old format took, with each entry's size.

Every corpus page and one generated 42 MB page (tests/large_page.py). "entry" is the store's
whole read (envelope checked, tree decoded and checked, as PaperCache.read_paper does),
"pickle" is `pickle.loads` of the same LoadedPaper as the old format stored it (its checksum
left out), "parse" is `parse_document` of the page. Issue 15's target: entry ≤ 0.3 × parse.
"""

from __future__ import annotations

import pickle
import sys

from tests.large_page import large_page

from bench.common import Spread, corpus_pages, interleaved, timed
from paperanchor.papers import LoadedPaper, paper_codec
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.store import PaperCache, Store

RUNS = 9
LARGE_MB = 40


class _Memory(Store):
    """A store in a dict: what is timed is the paper cache's own work, not the disk's."""

    def __init__(self) -> None:
        self.values: dict[str, bytes] = {}

    def get(self, key: str) -> bytes | None:
        return self.values.get(key)

    def set(self, key: str, value: bytes, ttl: float | None = None) -> None:
        self.values[key] = value

    def delete(self, key: str) -> None:
        self.values.pop(key, None)

    def close(self) -> None:
        pass


def _row(name: str, data: bytes, runs: int) -> dict[str, object]:
    idv = "2501.11120v1"
    url = f"https://arxiv.org/html/{idv}"
    cache = PaperCache(_Memory(), paper_codec(1 << 30))
    paper = LoadedPaper(parse_document(data, url), idv[:-2], idv, 1, True, "arxiv", url)
    size = cache.put_paper(idv, PARSER_VERSION, paper)
    pickled = pickle.dumps((idv, PARSER_VERSION, paper), protocol=pickle.HIGHEST_PROTOCOL)
    assert cache.get_paper(idv, PARSER_VERSION) == paper
    # Parsing is timed apart: the garbage a parse leaves would land in the next load's time.
    spreads = interleaved(
        {
            "entry": lambda: cache.read_paper(idv, PARSER_VERSION),
            "pickle": lambda: pickle.loads(pickled),
        },
        runs,
    )
    spreads["parse"] = timed(lambda: parse_document(data, url), max(1, runs // 2))
    return {
        "page": name,
        "html_bytes": len(data),
        "entry_bytes": size,
        "pickle_bytes": len(pickled),
        **spreads,
        "to_parse": spreads["entry"].ratio_to(spreads["parse"]),
        "to_pickle": spreads["entry"].ratio_to(spreads["pickle"]),
    }


def run(runs: int = RUNS, large_mb: float = LARGE_MB) -> list[dict[str, object]]:
    """One row per corpus page, then the large page (fewer runs: a parse takes seconds)."""
    rows = [_row(f"{p.parent.name}/{p.name}", p.read_bytes(), runs) for p in corpus_pages()]
    if large_mb:
        rows.append(_row(f"generated {large_mb:g} MB page", large_page(large_mb), min(runs, 3)))
    return rows


def totals(rows: list[dict[str, object]]) -> dict[str, float]:
    """Sums of the medians over the corpus pages (the large page apart)."""
    corpus = [r for r in rows if not str(r["page"]).startswith("generated")]
    sums = {k: sum(r[k].median for r in corpus) for k in ("entry", "pickle", "parse")}  # type: ignore[attr-defined]
    return {
        **sums,
        "to_parse": sums["entry"] / sums["parse"],
        "to_pickle": sums["entry"] / sums["pickle"],
    }


def main() -> int:
    rows = run()
    print(f"{'page':<58} {'KB':>6} {'entry KB':>8} {'pickle KB':>9}  entry ms  pickle ms", end="")
    print("  parse ms  ÷parse  ÷pickle")
    for r in rows:
        entry, pick, parse = (r[k] for k in ("entry", "pickle", "parse"))
        assert isinstance(entry, Spread) and isinstance(pick, Spread) and isinstance(parse, Spread)
        print(
            f"{r['page']!s:<58} {r['html_bytes'] // 1024:>6} {r['entry_bytes'] // 1024:>8} "  # type: ignore[operator]
            f"{r['pickle_bytes'] // 1024:>9}  {entry.median * 1e3:8.2f}  {pick.median * 1e3:9.2f}  "  # type: ignore[operator]
            f"{parse.median * 1e3:8.1f}  {r['to_parse'].median:6.3f}  {r['to_pickle'].median:7.2f}"  # type: ignore[attr-defined]
        )
    t = totals(rows)
    print(
        f"corpus: entry {t['entry'] * 1e3:.1f} ms, pickle {t['pickle'] * 1e3:.1f} ms, "
        f"parse {t['parse'] * 1e3:.0f} ms; entry ÷ parse {t['to_parse']:.3f}, "
        f"entry ÷ pickle {t['to_pickle']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
