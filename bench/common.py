"""Shared helpers of the benchmarks: corpus pages, medians with min and max, the machine."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(url: str, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    """Poll `url` until it answers 200; fail if the process exits first."""
    import httpx

    deadline = time.monotonic() + seconds
    with httpx.Client(timeout=2, trust_env=False) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
            try:
                if client.get(url).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer within {seconds} s")


@contextmanager
def serve(env: dict[str, str], workers: int = 1) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A `paperanchor serve` process on a free loopback port; yields its base URL."""
    port = free_port()
    full_env = {
        **os.environ,
        "PAPERANCHOR_RATE_LIMIT": "0",
        **env,
        "PAPERANCHOR_HOST": "127.0.0.1",
        "PAPERANCHOR_PORT": str(port),
    }
    command = [str(ROOT / ".venv" / "bin" / "paperanchor"), "serve"]
    if workers > 1:
        command += ["--workers", str(workers)]
    process = subprocess.Popen(
        command, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{base}/healthz", process)
        yield base, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def load(
    urls: list[str],
    seconds: float,
    concurrency: int,
    *,
    mcp: dict[str, object] | None = None,
    cpus: str | None = None,
) -> dict[str, float]:
    """Run bench/load.py in a separate process against `urls`; its JSON summary."""
    command = [
        sys.executable,
        "-m",
        "bench.load",
        "--seconds",
        str(seconds),
        "--concurrency",
        str(concurrency),
        *urls,
    ]
    if mcp is not None:
        command += ["--mcp-call", json.dumps(mcp)]
    result = subprocess.run(
        pinned(command, cpus), capture_output=True, text=True, check=True, cwd=ROOT
    )
    summary: dict[str, float] = json.loads(result.stdout)
    return summary


def rss_kb(pid: int) -> int:
    """Resident memory of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pinned(command: list[str], cpus: str | None) -> list[str]:
    """`command` run on the given CPUs only (`taskset -c`), or as it is when None."""
    return ["taskset", "-c", cpus, *command] if cpus else command


def _wrk(url: str, seconds: float, connections: int, cpus: str | None = None) -> dict[str, float]:
    wrk = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency", url]
    result = subprocess.run(
        pinned(wrk, cpus),
        capture_output=True,
        text=True,
        check=True,
    )
    out = result.stdout

    def latency(label: str) -> float:
        match = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.MULTILINE)
        if not match:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": rps,
        "p50_ms": latency("50"),
        "p99_ms": latency("99"),
        "errors": float(errors.group(1)) if errors else 0.0,
    }


def measure(
    url: str, seconds: float, connections: int, cpus: str | None = None
) -> dict[str, float]:
    """Requests/s and latency of GETs of `url` from a separate process: wrk, else bench/load.py
    (on `cpus` only, when given)."""
    if shutil.which("wrk"):
        return _wrk(url, seconds, connections, cpus)
    return load([url], seconds, connections, cpus=cpus)
