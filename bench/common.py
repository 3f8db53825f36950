"""Shared helpers of the benchmarks: corpus pages, medians with min and max, the machine."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("PAPERANCHOR_CORPUS", ROOT.parent / "shared" / "corpus")).resolve()


def corpus_pages() -> list[Path]:
    return sorted((CORPUS / "html").glob("*.html")) + sorted((CORPUS / "generated").glob("*.html"))


@dataclass(frozen=True)
class Spread:
    """Median with min and max of repeated measurements."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: list[float]) -> Spread:
        return cls(statistics.median(values), min(values), max(values))

    def ratio_to(self, base: Spread) -> Spread:
        return Spread(self.median / base.median, self.low / base.high, self.high / base.low)

    def show(self, digits: int = 2) -> str:
        return f"{self.median:.{digits}f} ({self.low:.{digits}f}–{self.high:.{digits}f})"


def timed(job: Callable[[], object], runs: int) -> Spread:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return Spread.of(times)


def interleaved(jobs: dict[str, Callable[[], object]], runs: int) -> dict[str, Spread]:
    """Time several jobs round-robin, so a noisy neighbour hits them alike."""
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(runs):
        for name, job in jobs.items():
            start = time.perf_counter()
            job()
            times[name].append(time.perf_counter() - start)
    return {name: Spread.of(values) for name, values in times.items()}


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores (nproc), {cpu}, Python {platform.python_version()}"
