"""A cache that cannot be opened at start (issue 21, #11) does not stop `paperanchor serve`: it
serves without one, says so once in its log and on `/healthz`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.api.live import ServeProcess
from tests.conftest import FIXTURES, ROOT


def _not_a_folder(tmp_path: Path) -> Path:
    blocker = tmp_path / "a-file"
    blocker.write_text("a file where the cache folder would be")
    return blocker / "cache"


def _unopenable_database(tmp_path: Path) -> Path:
    folder = tmp_path / "cache"
    (folder / "cache.db").mkdir(parents=True)  # SQLite: "unable to open database file"
    return folder


@pytest.mark.parametrize("make", [_not_a_folder, _unopenable_database])
def test_serve_starts_without_the_cache_it_cannot_open(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    cache = make(tmp_path)
    env = {
        **os.environ,
        "PAPERANCHOR_LOCAL_DIR": str(FIXTURES / "html"),
        "PAPERANCHOR_OFFLINE": "1",
        "PAPERANCHOR_CACHE_DIR": str(cache),
        "PAPERANCHOR_RATE_LIMIT": "0",
    }
    server = ServeProcess(env, cwd=ROOT).wait_ready()
    try:
        with httpx.Client(base_url=server.url, timeout=60, trust_env=False) as client:
            assert client.get("/healthz").json() == {"status": "ok", "cache": "unavailable"}
            for _ in range(2):  # parsed each time: nothing is kept
                assert client.get("/local/short/outline.json").status_code == 200
        log = server.log()
    finally:
        server.stop()
    assert log.count("serving without a cache") == 1, log
