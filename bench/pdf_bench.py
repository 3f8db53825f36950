"""PDF benchmark: `parse_pdf` of every corpus PDF ÷ pypdf's plain `extract_text()` of the same
file in the same run, per page and per MB, and the peak memory of both.

`parse_pdf` is the whole way from bytes to the tree: PDFium in its bounded child process
(started afresh for every paper, as the service does), the JSON it writes back, and the tree.
pypdf's baseline is `PdfReader(bytes)` and `page.extract_text()` of every page, in-process:
one long string, no structure, the other arXiv servers' PDF fallback. Both are timed by wall
clock, interleaved (pypdf, parse, pypdf, parse …) so that a noisy neighbour hits them alike,
and by CPU seconds (the child's plus ours for `parse_pdf`), which the shared machine's load
moves less. Issue 15's target: parse ≤ 3× pypdf.
"""

from __future__ import annotations

import io
import logging
import subprocess
import sys
import time
from pathlib import Path

from bench.common import CORPUS, Spread

RUNS = 3
# pypdf logs a warning per font it cannot fully decode without fontTools: not our figures
logging.getLogger("pypdf").setLevel(logging.ERROR)

# Peak memory in a fresh process, from /proc's VmHWM (see bench/memory.py for why not
# ru_maxrss): pypdf's whole run, and parse_pdf's own side with its child's peak beside it.
_PEAK = """
import io, sys

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1])

data = open(sys.argv[2], "rb").read()
before = status("VmHWM:")
child = 0
if sys.argv[1] == "pypdf":
    import logging
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    from pypdf import PdfReader
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
else:
    from paperanchor.parse.pdf import document_from_pages
    from paperanchor.parse.pdf.extract import read_pdf
    pages, run = read_pdf(data)
    document_from_pages(pages)
    child = run.peak_rss // 1024
print(before, status("VmHWM:"), child)
"""


def corpus_pdfs() -> list[Path]:
    return sorted((CORPUS / "pdf").glob("*.pdf")) + sorted(
        (CORPUS / "pdf" / "excerpts").glob("*.pdf")
    )


def _pypdf(data: bytes) -> tuple[int, int]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    text = "".join(page.extract_text() for page in reader.pages)
    return len(reader.pages), len(text)


def _parse(data: bytes) -> tuple[float, float]:
    """parse_pdf's steps as parse_pdf runs them; the child's CPU seconds and its peak RSS."""
    from paperanchor.parse.pdf import document_from_pages
    from paperanchor.parse.pdf.extract import read_pdf

    pages, run = read_pdf(data)
    assert not isinstance(pages, Exception), pages
    document_from_pages(pages)
    return run.cpu_seconds, run.peak_rss


def run(runs: int = RUNS) -> list[dict[str, object]]:
    """Per corpus PDF: pages, bytes, wall and CPU spreads of both, the child's peak RSS."""
    rows = []
    for path in corpus_pdfs():
        data = path.read_bytes()
        walls: dict[str, list[float]] = {"pypdf": [], "parse": []}
        cpus: dict[str, list[float]] = {"pypdf": [], "parse": []}
        child_peak = 0.0
        pages = 0
        for _ in range(runs):
            cpu, wall = time.process_time(), time.perf_counter()
            pages, _chars = _pypdf(data)
            walls["pypdf"].append(time.perf_counter() - wall)
            cpus["pypdf"].append(time.process_time() - cpu)
            cpu, wall = time.process_time(), time.perf_counter()
            child_cpu, peak = _parse(data)
            walls["parse"].append(time.perf_counter() - wall)
            cpus["parse"].append(time.process_time() - cpu + child_cpu)
            child_peak = max(child_peak, peak)
        wall_spread = {k: Spread.of(v) for k, v in walls.items()}
        cpu_spread = {k: Spread.of(v) for k, v in cpus.items()}
        rows.append(
            {
                "pdf": str(path.relative_to(CORPUS / "pdf")),
                "pages": pages,
                "bytes": len(data),
                "wall": wall_spread,
                "cpu": cpu_spread,
                "ratio": wall_spread["parse"].ratio_to(wall_spread["pypdf"]),
                "cpu_ratio": cpu_spread["parse"].ratio_to(cpu_spread["pypdf"]),
                "child_peak": child_peak,
            }
        )
    return rows


def peaks() -> dict[str, object]:
    """Peak memory of both on the largest corpus PDF, each in a fresh process."""
    largest = max(corpus_pdfs(), key=lambda p: p.stat().st_size)
    found: dict[str, object] = {"pdf": largest.name, "bytes": largest.stat().st_size}
    for name in ("pypdf", "parse"):
        out = subprocess.run(
            [sys.executable, "-c", _PEAK, name, str(largest)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        before, after, child = (int(x) for x in out)
        found[name] = {"own_kb": after - before, "child_kb": child}
    return found


def main() -> int:
    for row in run():
        wall, pages, ratio, cpu_ratio = row["wall"], row["pages"], row["ratio"], row["cpu_ratio"]
        assert isinstance(wall, dict) and isinstance(pages, int)
        assert isinstance(ratio, Spread) and isinstance(cpu_ratio, Spread)
        per_page = wall["parse"].median / max(1, pages) * 1000
        print(
            f"{row['pdf']:<30} {pages:>3} pages  parse {wall['parse'].show()} s "
            f"({per_page:.0f} ms/page)  pypdf {wall['pypdf'].show()} s  "
            f"ratio {ratio.show()}  CPU ratio {cpu_ratio.show()}"
        )
    print(peaks())
    return 0


if __name__ == "__main__":
    sys.exit(main())
