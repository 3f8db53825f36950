"""Parse every corpus page and print a Markdown table of parse times and counts.

    .venv/bin/python scripts/corpus_report.py [CORPUS]   (default ../shared/corpus)

Times are medians of 5 runs on this machine; the lxml column is a bare
`lxml.html.fromstring` of the same bytes, the floor any parser pays.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import lxml.html

from paperanchor.parse import parse_document
from paperanchor.service import counts

RUNS = 5


def _median_ms(job) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    corpus = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/corpus")
    pages = sorted((corpus / "html").glob("*.html")) + sorted((corpus / "generated").glob("*.html"))
    print(
        "| page | KB | parse ms | lxml ms | sections | paragraphs | equations | figures | "
        "tables | references | ltx_ERROR |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for page in pages:
        data = page.read_bytes()
        parse_ms = _median_ms(lambda: parse_document(data))  # noqa: B023
        lxml_ms = _median_ms(lambda: lxml.html.fromstring(data))  # noqa: B023
        c = counts(parse_document(data))
        print(
            f"| {page.parent.name}/{page.name} | {len(data) // 1024} | {parse_ms:.0f} | "
            f"{lxml_ms:.0f} | {c['sections']} | {c['paragraphs']} | {c['equations']} | "
            f"{c['figures']} | {c['tables']} | {c['references']} | {c['errors']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
