"""The figures of a `make soak` run, as the Markdown table docs/reliability.md carries.

.venv/bin/python -m tests.reliability.summary test-artifacts/soak
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any


def atheris_runs(log: str) -> tuple[int, int]:
    """(executions, seconds) from libFuzzer's final statistics."""
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
    done = re.findall(r"Done (\d+) runs in (\d+) second", log)
    seconds = int(done[-1][1]) if done else 0
    return (int(runs[-1]) if runs else int(done[-1][0]) if done else 0), seconds


def summary(folder: Path) -> str:
    rows: list[tuple[str, str]] = []
    hypothesis_file = folder / "hypothesis.json"
    if hypothesis_file.exists():
        fuzz = json.loads(hypothesis_file.read_text())
        rows.append(
            (
                "parser fuzzing, hypothesis",
                f"{fuzz['cases']:,} cases over {fuzz['pages']} pages: {fuzz.get('tree', 0):,} "
                f"trees, {fuzz.get('our-error', 0):,} ParseErrors, 0 other exceptions",
            )
        )
    atheris_file = folder / "atheris.log"
    if atheris_file.exists():
        runs, seconds = atheris_runs(atheris_file.read_text(errors="replace"))
        crashed = "crash-" in atheris_file.read_text(errors="replace")
        rows.append(
            (
                "parser fuzzing, atheris",
                f"{runs:,} executions in {seconds} s, {'a crash' if crashed else 'no crash'}",
            )
        )
    report = folder / "reliability.jsonl"
    for line in report.read_text().splitlines() if report.exists() else []:
        figures: dict[str, Any] = json.loads(line)
        test = figures.pop("test")
        rows.append(
            (
                test,
                ", ".join(
                    f"{name} {value:,}" if isinstance(value, int) else f"{name} {value}"
                    for name, value in figures.items()
                ),
            )
        )
    return "| run | figures |\n|---|---|\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)


if __name__ == "__main__":
    print(summary(Path(sys.argv[1] if len(sys.argv) > 1 else "test-artifacts/soak")))
