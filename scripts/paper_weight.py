"""What a held paper weighs per byte of its cache entry: its tree and index, and its renderings.

    .venv/bin/python scripts/paper_weight.py

The figures behind TREE_PER_ENTRY_BYTE (papers.py): the Python objects (tracemalloc) of decoding
a corpus paper's entry and opening its view, then of rendering every section as an outline does,
beside what `Paper.rendered_bytes` counts for those renderings.
"""

from __future__ import annotations

import gc
import os
import tracemalloc
from pathlib import Path

from paperanchor.paper import LoadedPaper, Paper
from paperanchor.papers import paper_codec
from paperanchor.parse import parse_document

CORPUS = Path(os.environ.get("PAPERANCHOR_CORPUS", Path(__file__).parents[2] / "shared/corpus"))
PAGES = (
    "2501.11120v1.arxiv.html",
    "submission-5393936.arxiv.html",
    "ssh-electron-phonon-superconductivity.arxiv.html",
)


def main() -> None:
    """Print each page's tree and renderings per entry byte."""
    codec = paper_codec()
    for name in PAGES:
        document = parse_document((CORPUS / "html" / name).read_bytes())
        entry = codec.encode(LoadedPaper(document, "x", "x"), "paper")
        del document
        gc.collect()
        tracemalloc.start()
        view = Paper.open(codec.decode(entry, "paper"))
        tree, _ = tracemalloc.get_traced_memory()
        view.tokens(None)
        for section in view.document.sections:
            view.tokens(section.id)
        total, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"{name}: entry {len(entry) / 1e6:.2f} MB, tree and index {tree / len(entry):.2f}x,"
            f" renderings {(total - tree) / len(entry):.2f}x allocated,"
            f" {view.rendered_bytes / len(entry):.2f}x counted"
        )


if __name__ == "__main__":
    main()
