"""Shared fixtures: where the corpus lives, and the programs some tests need."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("PAPERANCHOR_CORPUS", ROOT.parent / "shared" / "corpus")).resolve()
FIXTURES = ROOT / "fixtures"


def require_program(available: bool, reason: str) -> None:
    """Skip when a program is missing, except under CI=true where the missing program fails."""
    if available:
        return
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"CI must provide it: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not (CORPUS / "html").is_dir():
        require_program(False, f"the shared corpus is not at {CORPUS} (set PAPERANCHOR_CORPUS)")
    return CORPUS
