"""Parse benchmark: tree build time of every corpus page ÷ a bare lxml parse of the same bytes."""

from __future__ import annotations

import sys

import lxml.html

from bench.common import corpus_pages, interleaved
from paperanchor.parse import parse_document

RUNS = 7


def run(runs: int = RUNS) -> list[dict[str, object]]:
    rows = []
    for page in corpus_pages():
        data = page.read_bytes()
        spreads = interleaved(
            {
                "lxml": lambda: lxml.html.fromstring(data),  # noqa: B023
                "tree": lambda: parse_document(data),  # noqa: B023
            },
            runs,
        )
        ratio = spreads["tree"].ratio_to(spreads["lxml"])
        rows.append(
            {
                "page": f"{page.parent.name}/{page.name}",
                "bytes": len(data),
                "lxml": spreads["lxml"],
                "tree": spreads["tree"],
                "ratio": ratio,
                "mb_s": len(data) / 1e6 / spreads["tree"].median,
            }
        )
    return rows


def main() -> int:
    rows = run()
    for row in rows:
        print(f"{row['page']:<62} {row['ratio'].show()}  {row['mb_s']:.1f} MB/s")  # type: ignore[attr-defined]
    total_tree = sum(r["tree"].median for r in rows)  # type: ignore[attr-defined]
    total_lxml = sum(r["lxml"].median for r in rows)  # type: ignore[attr-defined]
    print(f"all pages: {total_tree / total_lxml:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
