"""The fixtures' trees, Markdown and outlines equal their reviewed golden dumps."""

from __future__ import annotations

import pytest

from tests.golden import GOLDEN, NAMES, render


def test_every_fixture_has_golden_files() -> None:
    assert set(NAMES) >= {"short", "full", "authoryear", "xss"}


@pytest.mark.parametrize("name", NAMES)
def test_a_fixture_renders_exactly_as_its_golden_files(name: str) -> None:
    for file_name, text in render(name).items():
        golden = GOLDEN / file_name
        assert golden.exists(), f"missing {golden}: run `make golden` and review the diff"
        assert text == golden.read_text(encoding="utf-8"), f"{file_name} changed: run `make golden`"
