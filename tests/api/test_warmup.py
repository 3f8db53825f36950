"""A server warms up before its first request (src/paperanchor/warmup.py): the built-in page
runs through the parser, every operation and the cache codec, and nothing of it is kept."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest

from paperanchor import warmup
from paperanchor.errors import PaperAnchorError
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.tree import Equation, Figure, Footnote, Section, Table, Theorem, walk
from tests.api.conftest import settings_for
from tests.api.live import live_server
from tests.conftest import FIXTURES


def test_the_warm_up_page_is_the_full_fixture_as_latexml_last_made_it() -> None:
    # package data, since an installed server has no fixtures/ folder: a symbolic link to the
    # fixture in the checkout, which a wheel carries as the file itself
    assert warmup.warm_page() == (FIXTURES / "html" / "full.html").read_bytes()


def test_the_warm_up_page_holds_every_kind_of_block_a_request_meets() -> None:
    document = parse_document(warmup.warm_page(), warmup.WARM_URL)
    kinds = {type(v.node) for v in walk(document.roots())}
    assert {Section, Equation, Figure, Table, Theorem} <= kinds
    assert document.references and document.footnotes
    assert all(isinstance(note, Footnote) for note in document.footnotes.values())
    assert document.quality != "failed"


def test_a_started_server_has_warmed_up_and_kept_nothing_of_it(
    replay_server: Any, tmp_path: Path
) -> None:
    with live_server(settings_for(replay_server, tmp_path)) as live:
        state = live.app.state
        assert isinstance(state.warm_up_s, float) and state.warm_up_s > 0
        library = state.papers
        assert library.memory_held == 0 and library.cache_hits == 0 and library.fetches == 0
        assert state.service.views == 0 and state.service.recent() == []
        assert library.cache.read_paper(warmup.WARM_IDV, PARSER_VERSION) is None
        assert library.store.get(f"warm-up:{os.getpid()}") is None  # written, then deleted
        with live.client() as client:
            assert client.get("/healthz").status_code == 200
            # the warm-up's paper is not served: it was never a paper of this server
            missing = client.get(f"/local/{warmup.WARM_IDV}/outline.json")
            assert missing.status_code == 404


def test_a_warm_up_that_fails_is_logged_and_the_server_serves_anyway(
    replay_server: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # a built-in page broken in the package: bytes that are no HTML paper at all
    monkeypatch.setattr(warmup, "warm_page", lambda: b"\x00" * 64)
    with pytest.raises(PaperAnchorError):
        warmup.warm_up()
    with caplog.at_level(logging.ERROR), live_server(settings_for(replay_server, tmp_path)) as live:
        assert live.app.state.warm_up_s is None
        with live.client() as client:
            assert client.get("/healthz").status_code == 200
    assert any("warm-up failed" in record.getMessage() for record in caplog.records)
