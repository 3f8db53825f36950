"""Comparing two hostile editions costs bounded time and memory (each pair in a fresh process:
tests/changes/hostile.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.changes.hostile import PAIRS
from tests.conftest import ROOT

# Seconds of comparing (changes.py, the `.md` included) on 2 shared cores: many_edits measured
# 5.1 s (13,333 changed blocks of 30,000), twins 1.3 s, big_table 1.0 s (100,000 cells).
COMPARE_S = 15.0
MEMORY_MB = 400


@pytest.mark.parametrize("name", list(PAIRS))
def test_comparing_a_hostile_pair_of_editions_is_bounded(name: str) -> None:
    answer = subprocess.run(
        [sys.executable, "-m", "tests.changes.hostile", name],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    measured = json.loads(answer.stdout)
    assert measured["compare_s"] < COMPARE_S, measured
    assert measured["mb"] < MEMORY_MB, measured
    # the `.md` says every change: bounded by the pages, not by a product of them
    assert measured["md_chars"] < 4_000_000, measured
