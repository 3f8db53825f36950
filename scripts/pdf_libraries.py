"""Measure the PDF text libraries we considered on every corpus PDF (docs/pdf.md has the last run).

    .venv/bin/pip install pypdf pdfplumber    (pypdfium2 is a dependency; the other two are not)
    .venv/bin/python scripts/pdf_libraries.py [CORPUS]   (default ../shared/corpus)

Each library reads each file in a fresh process, so its peak RSS (ru_maxrss) is its own. `chars`
is what a layout parser needs: font size and position for every character. `shingles` is a
two-column reading-order figure: the share of pdftotext's 6-word shingles (poppler reads columns
in order) that also occur in the library's plain text; text interleaved across columns scores low.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

# One job per library: the plain text in reading order, and the per-character layout walk a
# layout parser would make (font size and box of every character).
_JOB = r"""
import json, resource, sys, time
lib, path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.perf_counter()
text, pages = [], 0
if lib == "pypdfium2":
    import pypdfium2 as pdfium, pypdfium2.raw as raw
    doc = pdfium.PdfDocument(path)
    pages = len(doc)
    for page in doc:
        tp = page.get_textpage()
        if mode == "text":
            text.append(tp.get_text_bounded())
        else:
            rect = raw.FS_RECTF()
            for i in range(raw.FPDFText_CountChars(tp.raw)):
                raw.FPDFText_GetUnicode(tp.raw, i)
                raw.FPDFText_GetLooseCharBox(tp.raw, i, rect)
                raw.FPDFText_GetFontSize(tp.raw, i)
elif lib == "pypdf":
    from pypdf import PdfReader
    reader = PdfReader(path)
    pages = len(reader.pages)
    for page in reader.pages:
        if mode == "text":
            text.append(page.extract_text())
        else:
            # pypdf reports a font size per text-showing operator, never per character
            page.extract_text(visitor_text=lambda *a: None)
elif lib == "pdfplumber":
    import pdfplumber
    with pdfplumber.open(path) as pdf:
        pages = len(pdf.pages)
        for page in pdf.pages:
            if mode == "text":
                text.append(page.extract_text())
            else:
                [(c["text"], c["size"], c["x0"], c["top"]) for c in page.chars]
            page.flush_cache()
seconds = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": seconds, "pages": pages, "rss": rss, "text": "\n".join(text)}))
"""
LIBRARIES = ("pypdfium2", "pypdf", "pdfplumber")
CHARS = {"pypdfium2": "yes", "pypdf": "per operator", "pdfplumber": "yes"}
_WORD = re.compile(r"\w+")


def _run(lib: str, path: Path, mode: str) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", _JOB, lib, str(path), mode],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = [w.lower() for w in _WORD.findall(text)]
    return {tuple(words[i : i + 6]) for i in range(len(words) - 5)}


def _baseline(path: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout


def main() -> int:
    corpus = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/corpus")
    if shutil.which("pdftotext") is None:
        print("pdftotext (poppler-utils) is needed for the reading-order figure", file=sys.stderr)
        return 1
    files = sorted((corpus / "pdf").glob("*.pdf")) + sorted(
        (corpus / "pdf" / "excerpts").glob("*.pdf")
    )
    print("| file | pages | library | text ms/page | chars ms/page | peak RSS MB | shingles |")
    print("|---|---|---|---|---|---|---|")
    totals: dict[str, list[float]] = {lib: [0.0, 0.0, 0.0, 0.0] for lib in LIBRARIES}
    for path in files:
        reference = _shingles(_baseline(path))
        for lib in LIBRARIES:
            text = _run(lib, path, "text")
            chars = _run(lib, path, "chars")
            pages = int(text["pages"])  # type: ignore[call-overload]
            found = _shingles(str(text["text"]))
            share = len(reference & found) / len(reference) if reference else 0.0
            rss = max(float(text["rss"]), float(chars["rss"])) / 2**20  # type: ignore[arg-type]
            t_ms = float(text["seconds"]) * 1000 / pages  # type: ignore[arg-type]
            c_ms = float(chars["seconds"]) * 1000 / pages  # type: ignore[arg-type]
            row = [
                path.name,
                pages,
                lib,
                f"{t_ms:.0f}",
                f"{c_ms:.0f}",
                f"{rss:.0f}",
                f"{share:.0%}",
            ]
            print("| " + " | ".join(str(cell) for cell in row) + " |")
            total = totals[lib]
            total[0] += float(text["seconds"])  # type: ignore[arg-type]
            total[1] += float(chars["seconds"])  # type: ignore[arg-type]
            total[2] = max(total[2], rss)
            total[3] += pages
    print()
    print(
        "| library | text ms/page | chars ms/page | max peak RSS MB | font size and box per char |"
    )
    print("|---|---|---|---|---|")
    for lib, (text_s, chars_s, rss, pages) in totals.items():
        print(
            f"| {lib} | {text_s * 1000 / pages:.0f} | {chars_s * 1000 / pages:.0f} | {rss:.0f} "
            f"| {CHARS[lib]} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
