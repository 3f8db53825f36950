"""Run PDFium in a bounded child process and read back the lines of every page.

The child (`pdfium_worker.py`) limits its own address space, CPU time and file writes before
it reads a byte of the PDF; this side adds a wall-clock limit, caps what it reads back, and
checks every value it gets, since a child that a hostile PDF took over could write anything.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from paperanchor.errors import ParseError, TooLarge

_WORKER = Path(__file__).with_name("pdfium_worker.py")

# The child's address space. Python with PDFium maps about 200 MB before it reads a page; the
# largest corpus PDF (79 pages, 3.7 MB) peaks at 31 MB RSS. 1 GiB leaves room for scanned-size
# images while a stream bomb (2 MB inflating to 3 GB, 3 GB RSS unbounded) fails at once.
ADDRESS_MB = 1024
# CPU seconds for the child, and the wall-clock seconds the parent waits: the corpus reads at
# 4-40 ms a page, so 1,000 pages fit in well under the minute.
CPU_S = 60
WALL_S = 90.0
# arXiv papers run to a few hundred pages; theses and proceedings past 1,000 are refused.
MAX_PAGES = 1000
# 5 million characters is about 1,000 dense pages; PDFium keeps ~160 bytes per character of a
# page (a 5 M character page measured 823 MB RSS), so one page alone past that meets ADDRESS_MB.
MAX_CHARS = 5_000_000
# Lines the tree is built from at most: the tree costs about 0.1 ms a line (measured on the
# dense two-column sample of tests/parse/test_pdf_bounds.py), and a 1,000-page paper has about
# 60,000 (the corpus: 40-80 a page), so this bounds the parent's own work near 10 s.
MAX_LINES = 100_000
# The JSON the child writes is about 3x the page text; anything far past that is not ours.
MAX_OUTPUT = MAX_CHARS * 12
# The tail a complete PDF ends with: `%%EOF` and perhaps a line break or a few bytes of padding.
_TAIL = 2048


@dataclass(frozen=True, slots=True)
class Line:
    """One line of text as PDFium set it, in PDF points with y growing upwards."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    bold: float
    math: float
    hyphen: bool
    italic: float = 0.0


@dataclass(frozen=True, slots=True)
class Graphic:
    """The box of a picture or a rule on a page: `kind` "i" image, "f" form (an included
    figure), "p" path, "s" shading."""

    kind: str
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True, slots=True)
class Page:
    number: int
    width: float
    height: float
    stamp: str | None
    lines: tuple[Line, ...]
    graphics: tuple[Graphic, ...] = ()


@dataclass(frozen=True, slots=True)
class WorkerRun:
    """What one child cost: wall seconds, CPU seconds and peak resident memory in bytes."""

    seconds: float
    cpu_seconds: float
    peak_rss: int
    returncode: int


def check_pdf(data: bytes) -> None:
    """Refuse what is not a whole PDF before any C code sees it."""
    if not data.strip():
        raise ParseError("the PDF is empty")
    if b"%PDF-" not in data[:1024]:
        raise ParseError("the bytes are not a PDF (no %PDF- header)")
    if b"%%EOF" not in data[-_TAIL:]:
        raise ParseError("the PDF is cut short (it does not end with %%EOF)")


def run_worker(data: bytes) -> tuple[bytes, bytes, WorkerRun]:
    """Run the child on `data`; its stdout, stderr and cost. The child is always reaped."""
    args = [str(ADDRESS_MB), str(CPU_S), str(MAX_PAGES), str(MAX_CHARS), str(MAX_LINES)]
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-I", str(_WORKER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdin and process.stdout and process.stderr
    stderr: list[bytes] = []
    killed = threading.Event()

    def feed() -> None:
        try:
            process.stdin.write(data)  # type: ignore[union-attr]
            process.stdin.close()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError):
            pass  # the child stopped reading: its exit status says why

    def drain() -> None:
        stderr.append(process.stderr.read(65536))  # type: ignore[union-attr]
        while process.stderr.read(65536):  # type: ignore[union-attr]
            pass

    def kill() -> None:
        killed.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    peak = [0]
    done = threading.Event()

    def watch() -> None:
        # ru_maxrss of a spawned child also counts the parent's pages it was forked from; the
        # child's own high-water mark is VmHWM, which only grows, so polling it loses nothing
        # but the last few milliseconds before exit
        status = Path(f"/proc/{process.pid}/status")
        while not done.wait(0.02):
            try:
                for row in status.read_text().splitlines():
                    if row.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(row.split()[1]) * 1024)
            except (OSError, ValueError, IndexError):
                return

    timer = threading.Timer(WALL_S, kill)
    threads = [
        threading.Thread(target=feed, daemon=True),
        threading.Thread(target=drain, daemon=True),
        threading.Thread(target=watch, daemon=True),
    ]
    timer.start()
    for thread in threads:
        thread.start()
    try:
        out = _read_capped(process.stdout, MAX_OUTPUT)
        if len(out) > MAX_OUTPUT:
            kill()
    finally:
        done.set()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        timer.cancel()
        for thread in threads:
            thread.join(timeout=5)
        for pipe in (process.stdin, process.stdout, process.stderr):
            # a broken pipe to a child that is gone has nothing left to flush
            with contextlib.suppress(OSError):
                pipe.close()
    run = WorkerRun(
        seconds=time.perf_counter() - start,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        peak_rss=peak[0],
        returncode=-signal.SIGKILL if killed.is_set() else process.returncode,
    )
    if len(out) > MAX_OUTPUT:
        raise ParseError("the PDF reader wrote more than the text it could hold")
    return out, b"".join(stderr), run


def _read_capped(pipe: IO[bytes], cap: int) -> bytes:
    """At most `cap` + 1 bytes from the pipe, read a chunk at a time: one `read(cap + 1)`
    allocates the whole cap (60 MB) for a one-line error answer."""
    chunks: list[bytes] = []
    size = 0
    while size <= cap:
        chunk = pipe.read(min(1 << 20, cap + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _failure(run: WorkerRun, stderr: bytes) -> Exception:
    if run.returncode in (-signal.SIGXCPU, -signal.SIGKILL) or run.seconds >= WALL_S:
        return TooLarge(f"the PDF takes more than {CPU_S} s to read")
    if b"MemoryError" in stderr or b"memory" in stderr.lower() or run.returncode < 0:
        # PDFium aborts on a failed allocation; under the address-space limit that is the
        # usual way a child dies, and a crash on bad bytes reads the same from outside
        return TooLarge(f"reading the PDF needs more than {ADDRESS_MB} MB of memory")
    return ParseError(f"the PDF reader failed (exit status {run.returncode})")


def _error(answer: dict[str, object]) -> Exception:
    kind = answer.get("error")
    if kind == "password":
        return ParseError("the PDF is encrypted with a password")
    if kind == "pages":
        return TooLarge(f"the PDF has {answer.get('pages')} pages; at most {MAX_PAGES} are read")
    if kind == "chars":
        return TooLarge(
            f"the PDF has more than {MAX_CHARS:,} characters of text (by page {answer.get('page')})"
        )
    if kind == "lines":
        return _too_many_lines(f"more than {MAX_LINES:,}")
    return ParseError("the bytes are not a PDF that can be read")


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(value)
    return float(value)


def _line(item: object) -> Line:
    if not isinstance(item, list) or len(item) != 10 or not isinstance(item[0], str):
        raise ValueError(item)
    x0, y0, x1, y1, size, bold, math_share = (_number(v) for v in item[1:8])
    italic = _number(item[9])
    return Line(item[0], x0, y0, x1, y1, size, bold, math_share, item[8] is True, italic)


def _graphic(item: object) -> Graphic:
    if not isinstance(item, list) or len(item) != 5 or item[0] not in ("i", "f", "p", "s"):
        raise ValueError(item)
    x0, y0, x1, y1 = (_number(v) for v in item[1:])
    return Graphic(item[0], x0, y0, x1, y1)


def _too_many_lines(count: str) -> TooLarge:
    return TooLarge(f"the PDF has {count} lines of text; at most {MAX_LINES:,} are read")


def _pages(answer: dict[str, object]) -> tuple[Page, ...]:
    raw_pages = answer.get("pages")
    if not isinstance(raw_pages, list):
        raise ValueError("pages")
    # the worker stops past MAX_LINES; a child that does not is refused before its lines
    # are built as objects
    lines = sum(
        len(p["lines"])
        for p in raw_pages
        if isinstance(p, dict) and isinstance(p.get("lines"), list)
    )
    if lines > MAX_LINES:
        raise _too_many_lines(f"{lines:,}")
    pages = []
    for number, raw in enumerate(raw_pages, start=1):
        if not isinstance(raw, dict) or not isinstance(raw.get("lines"), list):
            raise ValueError("page")
        stamp = raw.get("stamp")
        graphics = raw.get("graphics", [])
        if not isinstance(graphics, list):
            raise ValueError("graphics")
        pages.append(
            Page(
                number,
                _number(raw.get("width", 0)),
                _number(raw.get("height", 0)),
                stamp if isinstance(stamp, str) else None,
                tuple(_line(item) for item in raw["lines"]),
                tuple(_graphic(item) for item in graphics),
            )
        )
    return tuple(pages)


def read_pdf(data: bytes) -> tuple[tuple[Page, ...] | Exception, WorkerRun]:
    """The pages, or the error that explains why not, and what the child cost."""
    check_pdf(data)
    out, stderr, run = run_worker(data)
    if run.returncode != 0 or not out:
        return _failure(run, stderr), run
    try:
        answer = json.loads(out)
        if not isinstance(answer, dict):
            raise ValueError("answer")
        if "error" in answer:
            return _error(answer), run
        pages = _pages(answer)
    except TooLarge as error:
        return error, run
    except (ValueError, TypeError, RecursionError):
        return ParseError("the PDF reader gave an answer that is not its format"), run
    return pages, run


def extract_pages(data: bytes) -> tuple[Page, ...]:
    """Every page's lines; raise `ParseError` or `TooLarge` when the PDF cannot be read."""
    result, _run = read_pdf(data)
    if isinstance(result, Exception):
        raise result
    return result
