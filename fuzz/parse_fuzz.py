"""Coverage-guided fuzzing of the parser with atheris (libFuzzer), for `make soak`.

    .venv/bin/python fuzz/parse_fuzz.py -runs=50000 [-max_total_time=900]

Each input picks a corpus page, a mutation kind and a seed (tests/parse/mutations.py), or is
parsed as raw bytes; the parser must return a tree or raise the project's own error, and the
outline and a section read must work on any tree it returns. Anything else is a crash that
libFuzzer reports with the input that caused it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from paperanchor.errors import PaperAnchorError
    from paperanchor.parse import parse_document
    from paperanchor.service import LocalPaper, Paper, outline, read

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.conftest import CORPUS  # noqa: E402
from tests.parse.mutations import KINDS, mutate  # noqa: E402

PAGES = [
    p.read_bytes()
    for p in sorted((CORPUS / "html").glob("*.html"))
    + sorted((CORPUS / "generated").glob("*.html"))
    if p.stat().st_size < 1_000_000
]  # the large pages make each run slow without new paths


def one(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    choice = provider.ConsumeIntInRange(0, len(KINDS))
    if choice == len(KINDS):
        page = provider.ConsumeBytes(provider.remaining_bytes())
    else:
        base = PAGES[provider.ConsumeIntInRange(0, len(PAGES) - 1)]
        page = mutate(base, KINDS[choice], random.Random(provider.ConsumeInt(8)))
    try:
        document = parse_document(page, "https://example.org/fuzz.html")
    except PaperAnchorError:
        return
    paper = Paper.open(LocalPaper(document, "local/fuzz", "local/fuzz"))
    outline(paper)
    for section in document.sections[:2]:
        read(paper, section.id, 500)


def main() -> None:
    atheris.Setup(sys.argv, one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
