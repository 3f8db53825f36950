"""Fixtures of the reliability tests: the API tests' paper folder, shared here."""

from __future__ import annotations

from tests.api.conftest import papers_dir

__all__ = ["papers_dir"]
