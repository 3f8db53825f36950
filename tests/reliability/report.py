"""Figures of the reliability tests: printed (`pytest -s`), and appended as JSON lines to
$PAPERANCHOR_SOAK_REPORT when set, which `make soak` sums up for docs/reliability.md."""

from __future__ import annotations

import json
import os
from typing import Any

# Read once, at import: the `replay` fixture clears every PAPERANCHOR_* variable for its test.
SOAK = os.environ.get("PAPERANCHOR_SOAK", "") not in ("", "0")
REPORT = os.environ.get("PAPERANCHOR_SOAK_REPORT")


def record(test: str, **figures: Any) -> None:
    print(f"\n[{test}] " + ", ".join(f"{name}={value}" for name, value in figures.items()))
    if REPORT:
        with open(REPORT, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"test": test, **figures}) + "\n")
