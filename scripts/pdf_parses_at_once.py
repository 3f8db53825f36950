"""How long the corpus PDFs take to parse with N parses at once (library.PDF_PARSES's reason).

    .venv/bin/python scripts/pdf_parses_at_once.py [CORPUS] [N ...]   (../shared/corpus; 1 2 4)

Every whole-paper PDF of CORPUS/pdf is parsed with `parse_pdf` from N worker threads, as the
library does (each parse runs PDFium in a child process of its own); the wall time of all of
them is printed for each N, with the peak resident memory of the children (ru_maxrss).
"""

from __future__ import annotations

import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from paperanchor.parse.pdf import parse_pdf


def main(argv: list[str]) -> None:
    corpus = Path(argv[0]) if argv and not argv[0].isdigit() else Path("../shared/corpus")
    counts = [int(a) for a in argv if a.isdigit()] or [1, 2, 4]
    files = sorted((corpus / "pdf").glob("*.pdf"))
    data = [path.read_bytes() for path in files]
    megabytes = sum(len(d) for d in data) / 2**20
    print(f"{len(files)} PDFs, {megabytes:.1f} MB")
    for count in counts:
        started = time.perf_counter()
        with ThreadPoolExecutor(count) as pool:
            list(pool.map(parse_pdf, data))
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(
            f"{count} at once: {time.perf_counter() - started:.2f} s "
            f"(largest child so far {children:.0f} MB)"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
