"""Requests whose cost grows with their input are bounded before the cost is paid (issue 21):
cite by text on a large page (#3) and a quote that NFKC multiplies (#6), through a real
`paperanchor serve` while `/healthz` is asked every 20 ms."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.api.live import ServeProcess
from tests.api.test_mcp import call, text_of
from tests.conftest import ROOT
from tests.reliability.costly_pages import made_up_quote, words_page
from tests.reliability.test_hostile_pages import _Healthz

# Loose bounds for a busy CI machine; the figures are far below (docs/reliability.md).
CITE_S = 5.0
HEALTHZ_WORST_S = 2.0
GROWTH_MB = 150.0


@pytest.fixture(scope="module")
def words_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    folder = tmp_path_factory.mktemp("words")
    (folder / "papers").mkdir()
    (folder / "papers" / "words3.html").write_bytes(words_page(3))
    (folder / "papers" / "words1.html").write_bytes(words_page(1))
    env = {
        **os.environ,
        "PAPERANCHOR_LOCAL_DIR": str(folder / "papers"),
        "PAPERANCHOR_OFFLINE": "1",
        "PAPERANCHOR_CACHE_DIR": str(folder / "cache"),
        "PAPERANCHOR_RATE_LIMIT": "0",
    }
    server = ServeProcess(env, cwd=ROOT).wait_ready()
    try:
        with httpx.Client(base_url=server.url, timeout=120, trust_env=False) as client:
            for name in ("words3", "words1"):  # parsed once, before anything is timed
                assert client.get(f"/local/{name}/outline.json").status_code == 200
        yield server
    finally:
        server.stop()


def _watched(server: ServeProcess) -> _Healthz:
    healthz = _Healthz(server.url)
    healthz.start()
    return healthz


def _stopped(healthz: _Healthz) -> float:
    healthz.stop.set()
    healthz.join(10)
    assert healthz.failures == 0
    return healthz.worst


def test_a_made_up_quote_on_a_3_mb_page_is_answered_within_seconds(
    words_server: ServeProcess,
) -> None:
    healthz = _watched(words_server)
    started = time.perf_counter()
    with httpx.Client(base_url=words_server.url, timeout=120, trust_env=False) as client:
        answer = client.get("/local/words3/cite.json", params={"text": made_up_quote(2_000)})
    elapsed = time.perf_counter() - started
    worst = _stopped(healthz)
    assert answer.status_code == 404 and "the closest is" in answer.json()["error"]["detail"]
    assert elapsed < CITE_S and worst < HEALTHZ_WORST_S, (elapsed, worst)


def test_six_made_up_quotes_at_once_leave_healthz_answering(words_server: ServeProcess) -> None:
    times: list[float] = []

    def one(length: int) -> None:
        started = time.perf_counter()
        with httpx.Client(base_url=words_server.url, timeout=120, trust_env=False) as client:
            answer = client.get("/local/words1/cite.json", params={"text": made_up_quote(length)})
        assert answer.status_code == 404
        times.append(time.perf_counter() - started)

    healthz = _watched(words_server)
    threads = [threading.Thread(target=one, args=(n,)) for n in (60, 100, 300, 700, 1500, 2000)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    worst = _stopped(healthz)
    assert len(times) == 6 and max(times) < 2 * CITE_S and worst < HEALTHZ_WORST_S, (times, worst)


def test_a_quote_that_nfkc_would_multiply_is_refused_before_it_is_normalised(
    words_server: ServeProcess,
) -> None:
    before = words_server.memory_mb("VmHWM")
    started = time.perf_counter()
    # 3.9 MB of U+FDFA, 18 characters each under NFKC: 23.4 M characters if normalised first
    result = call(
        f"{words_server.url}/mcp", "cite", {"paper": "local/words1", "text": "\ufdfa" * 1_300_000}
    )
    elapsed = time.perf_counter() - started
    growth = words_server.memory_mb("VmHWM") - before
    assert result.is_error and text_of(result).startswith("bad-request: text is 1300000 characters")
    assert elapsed < CITE_S and growth < GROWTH_MB, (elapsed, growth)


def test_the_range_is_checked_on_the_quote_as_sent_and_as_compared() -> None:
    from paperanchor.errors import BadRequest
    from paperanchor.quotes import checked_quote

    assert checked_quote("  Ten   chars here  ") == "ten chars here"
    for bad in ("\ufdfa" * 200, "x" * 2_001, "short", 5):
        with pytest.raises(BadRequest):
            checked_quote(bad)
    assert checked_quote("\ufb01" * 1_000) == "fi" * 1_000  # expands into range: accepted
