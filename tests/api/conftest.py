"""A live paperanchor server for the API tests: the fixture papers in its local directory, the
replay upstream of tests/replay.py as arXiv and ar5iv, a fresh cache, no rate limit."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from paperanchor.settings import Settings
from tests.api.live import LiveServer, live_server
from tests.conftest import FIXTURES

FIXTURE_HTML = FIXTURES / "html"
LEGACY = "hep-th/9901001v2"  # served from the local directory as hep-th_9901001v2.html
MAX_HTML_MB = 2  # above every page the tests fetch (the corpus's 2501.11120v1 is 0.7 MB)


@pytest.fixture(scope="session")
def papers_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fixtures/html, plus a copy of `short` under a legacy id (a paper whose id has a slash)."""
    target = tmp_path_factory.mktemp("papers") / "html"
    shutil.copytree(FIXTURE_HTML, target)
    shutil.copy(FIXTURE_HTML / "short.html", target / "hep-th_9901001v2.html")
    return target


def settings_for(replay: Any, cache_dir: Path, **overrides: Any) -> Callable[[str], Settings]:
    """Settings of a server at some URL: replay upstream, fast politeness, no rate limit."""

    def make(url: str) -> Settings:
        values: dict[str, Any] = {"public_url": url, "rate_limit": "0", "max_html_mb": MAX_HTML_MB}
        values.update(overrides)
        settings: Settings = replay.settings(cache_dir, **values)
        return settings

    return make


@pytest.fixture(scope="module")
def server(
    replay_server: Any, papers_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    cache = tmp_path_factory.mktemp("cache")
    with live_server(settings_for(replay_server, cache, local_dir=papers_dir)) as live:
        yield live


@pytest.fixture
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client
