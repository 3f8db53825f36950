"""Single flight and politeness across processes sharing one Redis, over the replay upstream.

The first tests run two OS processes (this module is also their program: `python -m
tests.test_redis_papers PAPER…`); the others put two libraries, each with its own Redis
connections, local gates and single flight, in one event loop, which is what two processes are
to each other as far as Redis can tell.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import os
import subprocess
import sys
import time
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
import redis

from paperanchor import outage as outage_module
from paperanchor import papers as papers_module
from paperanchor.errors import NotFound, Unavailable
from paperanchor.papers import LoadedPaper, Papers
from paperanchor.parse import PARSER_VERSION
from paperanchor.refs import parse_ref
from paperanchor.settings import Settings
from tests.conftest import ROOT, free_port
from tests.replay import Reply, load, page, papers_of, slow, status

ARXIV_PAGE = "2501.11120v1.arxiv.html"
# Five papers on the arXiv-like route, each one request (a versioned id is not redirected).
PAGES = {
    "2501.11120v1": ARXIV_PAGE,
    "2402.01234v1": "submission-5393936.arxiv.html",
    "2211.01234v2": "split-cycle-axiomatic-characterization.arxiv.html",
    "2403.01234v1": "angular-momentum-evolution-cosmological-ic.arxiv.html",
    "2404.01234v1": "ssh-electron-phonon-superconductivity.arxiv.html",
}


def library(settings: Settings) -> AbstractAsyncContextManager[Papers]:
    """The papers of a runtime of `settings` (runtime.py)."""
    return papers_of(settings)


# -- two OS processes ------------------------------------------------------------------------


def run_processes(environ: dict[str, str], jobs: list[list[str]], repeat: int) -> list[Any]:
    """Start one worker per job, let them all go at once, and return what each reports."""
    env = {**os.environ, **environ}
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.test_redis_papers", *papers, "--repeat", str(repeat)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for papers in jobs
    ]
    try:
        for worker in workers:  # imports done, Papers not yet opened
            assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        outputs = [worker.communicate(timeout=60) for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()
    reports = []
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
        reports.append(json.loads(out))
    return reports


def _worker(papers: list[str], repeat: int) -> None:
    settings = Settings(_env_file=None)
    print("ready", flush=True)
    sys.stdin.readline()

    async def loads() -> dict[str, Any]:
        async with library(settings) as lib:
            results = await asyncio.gather(
                *(lib.load(parse_ref(text)) for text in papers for _ in range(repeat)),
                return_exceptions=True,
            )
            return {
                "fetches": lib.fetches,
                "hits": lib.cache_hits,
                "idvs": [r.idv for r in results if isinstance(r, LoadedPaper)],
                "titles": sorted(
                    {r.document.title.text for r in results if isinstance(r, LoadedPaper)}
                ),
                "errors": [repr(r) for r in results if not isinstance(r, LoadedPaper)],
            }

    print(json.dumps(asyncio.run(loads())), flush=True)


def test_two_processes_loading_one_uncached_paper_make_one_upstream_get(
    replay, shared_redis, tmp_path
):
    # A slow body keeps the fetch in flight while both processes ask, 20 times each.
    replay.script("/html/2501.11120v1", slow(replay.corpus_page(ARXIV_PAGE), 65_536, 0.03))
    environ = replay.environ(cache_url=shared_redis.url, cache_dir=tmp_path)

    first, second = run_processes(environ, [["2501.11120v1"], ["2501.11120v1"]], repeat=20)

    assert replay.paths() == ["/html/2501.11120v1"]
    assert first["fetches"] + second["fetches"] == 1
    assert first["errors"] == second["errors"] == []
    assert first["idvs"] == second["idvs"] == ["2501.11120v1"] * 20
    assert first["titles"] == second["titles"] and len(first["titles"]) == 1
    # The process that did not fetch read the other's result from Redis once.
    assert sorted([first["hits"], second["hits"]]) == [0, 1]
    assert f"paperanchor:paper:{PARSER_VERSION}:2501.11120v1" in shared_redis.all_keys()


def test_two_processes_fetching_five_papers_keep_the_gap_between_all_arrivals(
    replay, shared_redis, tmp_path
):
    for idv, name in PAGES.items():
        replay.script(f"/html/{idv}", page(replay.corpus_page(name)))
    environ = replay.environ(cache_url=shared_redis.url, cache_dir=tmp_path, min_gap_s=0.3)

    # Both want all five, in opposite orders: each paper once, one host, 0.3 s between arrivals.
    reports = run_processes(environ, [list(PAGES), list(reversed(PAGES))], repeat=1)

    assert sorted(replay.paths()) == sorted(f"/html/{idv}" for idv in PAGES)
    assert sum(report["fetches"] for report in reports) == 5
    assert all(report["errors"] == [] and len(report["idvs"]) == 5 for report in reports)
    arrivals = [request.at for request in replay.requests]
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert min(gaps) >= 0.3, gaps


# -- two libraries, as two processes see each other through Redis ----------------------------


def test_a_fetch_lock_left_by_a_dead_process_is_taken_over_when_its_lease_ends(
    replay, shared_redis, tmp_path
):
    # A process died holding the lock: nobody renews it, so it lapses after its lease.
    lock = "paperanchor:lock:fetch:2501.11120v1"
    assert shared_redis.command("SET", lock, "dead-process", "PX", "600") == "+OK"
    settings = replay.settings(tmp_path, cache_url=shared_redis.url)

    async def main() -> tuple[LoadedPaper, float]:
        async with library(settings) as lib:
            started = time.monotonic()
            loaded = await lib.load(parse_ref("2501.11120v1"))
            return loaded, time.monotonic() - started

    loaded, waited = asyncio.run(main())

    assert loaded.idv == "2501.11120v1" and replay.paths() == ["/html/2501.11120v1"]
    assert 0.4 < waited < 5
    assert lock not in shared_redis.all_keys()


def test_a_live_fetcher_keeps_its_lock_past_the_lease_and_the_other_waits(
    replay, shared_redis, tmp_path
):
    # The fetch takes ~1.3 s, twice the lease: renewals keep the other process waiting.
    replay.script("/html/2501.11120v1", slow(replay.corpus_page(ARXIV_PAGE), 65_536, 0.12))
    settings = replay.settings(tmp_path, cache_url=shared_redis.url, lock_lease_s=0.6)

    async def main() -> list[LoadedPaper]:
        async with library(settings) as one, library(settings) as two:
            first = asyncio.ensure_future(one.load(parse_ref("2501.11120v1")))
            await asyncio.sleep(0.1)
            return await asyncio.gather(first, two.load(parse_ref("2501.11120v1")))

    papers = asyncio.run(main())

    assert [paper.idv for paper in papers] == ["2501.11120v1"] * 2
    assert replay.paths() == ["/html/2501.11120v1"]


def test_processes_waiting_for_a_failed_fetch_get_its_error_without_fetching(
    replay, shared_redis, tmp_path
):
    # A 404 trickled over ~0.4 s, so that all three processes ask while it is in flight.
    body = b"<html><body>" + b" " * 2048 + b"</body></html>"
    replay.script("/html/2401.00009v1", Reply(404, body, chunk_size=256, chunk_delay=0.05))
    settings = replay.settings(tmp_path, cache_url=shared_redis.url)

    async def main() -> list[BaseException | LoadedPaper]:
        async with library(settings) as one, library(settings) as two, library(settings) as three:
            libraries = [one, two, three]
            return await asyncio.gather(
                *(lib.load(parse_ref("2401.00009v1")) for lib in libraries),
                return_exceptions=True,
            )

    errors = asyncio.run(main())

    assert all(isinstance(error, NotFound) for error in errors)
    assert {str(error) for error in errors} == {"Unknown paper 2401.00009v1"}
    assert replay.paths() == ["/html/2401.00009v1", "/ar5iv/html/2401.00009", "/pdf/2401.00009v1"]


def test_a_long_retry_after_pauses_the_host_for_every_process(replay, shared_redis, tmp_path):
    replay.script("/html/2501.11120v1", status(429, 120))
    settings = replay.settings(tmp_path, cache_url=shared_redis.url, backoff_cap_s=2)

    async def main() -> list[BaseException | LoadedPaper]:
        async with library(settings) as one, library(settings) as two:
            first = await asyncio.gather(
                one.load(parse_ref("2501.11120v1")), return_exceptions=True
            )
            second = await asyncio.gather(two.load(parse_ref("2307.00235")), return_exceptions=True)
            return [*first, *second]

    first, second = asyncio.run(main())

    assert isinstance(first, Unavailable) and first.retry_after == 120
    assert isinstance(second, Unavailable) and "asked us to pause" in str(second)
    assert second.retry_after is not None and 100 < second.retry_after <= 120
    assert replay.paths() == ["/html/2501.11120v1"]  # the other process did not ask


def test_a_short_retry_after_holds_back_the_other_process_too(replay, shared_redis, tmp_path):
    replay.script("/html/2501.11120v1", status(503, 1), page(replay.corpus_page(ARXIV_PAGE)))
    settings = replay.settings(tmp_path, cache_url=shared_redis.url)

    async def main() -> None:
        async with library(settings) as one, library(settings) as two:
            first = asyncio.ensure_future(one.load(parse_ref("2501.11120v1")))
            while replay.count() < 1:  # the 503 is in; the first process waits out its 1 s
                await asyncio.sleep(0.01)
            await asyncio.gather(first, two.load(parse_ref("2307.00235")))

    asyncio.run(main())

    times = {request.path: request.at for request in replay.requests}
    assert replay.count("/html/2501.11120v1") == 2
    first_503 = replay.requests[0].at
    assert times["/html/2307.00235"] - first_503 >= 1.0
    assert times["/ar5iv/html/2307.00235"] - first_503 >= 1.0


def test_redis_going_away_after_a_waiter_takes_over_the_lock_is_no_error(
    replay, own_redis, tmp_path
):
    # Another process held the lock and left nothing; Redis goes away just as this one, having
    # taken the lock over, looks for that process's result: it fetches on its own.
    from paperanchor.coordination import RedisCoordination
    from paperanchor.store import RedisStore

    lock = "paperanchor:lock:fetch:2501.11120v1"
    assert own_redis.command("SET", lock, "other-process", "PX", "300") == "+OK"
    store = RedisStore(own_redis.url)
    shared = RedisCoordination(store.link, lease_s=1)

    async def no_result() -> str | None:
        await asyncio.to_thread(own_redis.stop)
        return None

    async def fetch() -> str:
        return "fetched here"

    async def main() -> str:
        try:
            return await shared.once("fetch:2501.11120v1", fetch, no_result)
        finally:
            await shared.aclose()

    try:
        assert asyncio.run(main()) == "fetched here"
    finally:
        store.close()


# -- Redis that answers with an error: surfaced, never "going on locally" --------------------


def test_a_full_redis_makes_the_fetch_unavailable_instead_of_going_local(
    replay, own_redis, tmp_path, caplog
):
    # noeviction and no room: every write is refused with OOM, reads still work.
    assert own_redis.command("CONFIG", "SET", "maxmemory", "1") == "+OK"
    assert own_redis.command("CONFIG", "SET", "maxmemory-policy", "noeviction") == "+OK"
    settings = replay.settings(tmp_path, cache_url=own_redis.url)

    async def main() -> BaseException | LoadedPaper:
        async with library(settings) as lib:
            outcome = await asyncio.gather(
                lib.load(parse_ref("2501.11120v1")), return_exceptions=True
            )
            return outcome[0]

    outcome = asyncio.run(main())

    assert isinstance(outcome, Unavailable), outcome
    assert "the shared cache (Redis) refused a fetch lock (OutOfMemoryError)" in str(outcome)
    assert replay.requests == []  # no fetch behind the other processes' backs
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("maxmemory" in message for message in errors), errors


def test_a_script_error_in_redis_surfaces_as_an_error(replay, shared_redis, tmp_path):
    # The host's turn key holds a hash: the turn script fails with WRONGTYPE.
    turn = f"paperanchor:host:{replay.base_url}:turn"
    assert shared_redis.command("HSET", turn, "a", "b") == ":1"
    settings = replay.settings(tmp_path, cache_url=shared_redis.url)

    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        asyncio.run(load(settings, "2501.11120v1"))

    assert replay.requests == []


# -- Redis away ------------------------------------------------------------------------------


def test_with_redis_down_from_the_start_papers_are_fetched_and_cached_locally(
    replay, tmp_path, caplog
):
    caplog.set_level(logging.WARNING)
    settings = replay.settings(tmp_path, cache_url=f"redis://127.0.0.1:{free_port()}/0")

    async def main() -> tuple[list[LoadedPaper], int]:
        async with library(settings) as lib:
            papers = await asyncio.gather(*(lib.load(parse_ref("2501.11120v1")) for _ in range(5)))
            papers.append(await lib.load(parse_ref("2501.11120v1")))
            return papers, lib.fetches

    papers, fetches = asyncio.run(main())

    assert [paper.idv for paper in papers] == ["2501.11120v1"] * 6
    assert fetches == 1 and replay.paths() == ["/html/2501.11120v1"]  # then the local cache
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "unreachable" in warnings[0], warnings


def test_a_settled_paper_is_served_from_memory_while_redis_is_away(
    replay, own_redis, tmp_path, caplog, monkeypatch
):
    caplog.set_level(logging.WARNING)
    # An unconfirmed paper stays in memory only for a while; here, not at all.
    monkeypatch.setattr(papers_module, "UNSETTLED_MEMORY_S", 0)
    settings = replay.settings(tmp_path, cache_url=own_redis.url)

    async def main() -> list[LoadedPaper]:
        async with library(settings) as lib:
            # A confirmed version never changes: kept in memory. ar5iv's is not confirmed.
            first = [await lib.load(parse_ref(text)) for text in ("2501.11120v1", "2307.00235")]
            await lib.stored()  # their store writes, which follow their answers, are done
            own_redis.stop()
            settled = await lib.load(parse_ref("2501.11120v1"))
            assert caplog.records == []  # not even asked
            unsettled = await lib.load(parse_ref("2307.00235"))
            return [*first, settled, unsettled]

    first, ar5iv, settled, unsettled = asyncio.run(main())

    assert settled is first
    assert unsettled.document == ar5iv.document and unsettled is not ar5iv
    # The ar5iv paper was looked up in the store (Redis away: the empty disk), then fetched again.
    assert replay.paths() == [
        "/html/2501.11120v1",
        "/html/2307.00235",
        "/ar5iv/html/2307.00235",
        "/html/2307.00235",
        "/ar5iv/html/2307.00235",
    ]
    assert ["unreachable" in record.getMessage() for record in caplog.records] == [True]


def test_an_unconfirmed_paper_stays_in_memory_for_a_while(replay, own_redis, tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    settings = replay.settings(tmp_path, cache_url=own_redis.url)

    async def main() -> tuple[LoadedPaper, LoadedPaper]:
        async with library(settings) as lib:
            first = await lib.load(parse_ref("2307.00235"))
            own_redis.stop()
            again = await lib.load(parse_ref("2307.00235"))
            return first, again

    first, again = asyncio.run(main())
    assert again is first and not first.version_confirmed
    # only the first load reached the upstream: arXiv's 404, then ar5iv
    assert replay.paths() == ["/html/2307.00235", "/ar5iv/html/2307.00235"]


def test_restarting_redis_mid_run_gives_only_answers(replay, own_redis, tmp_path, monkeypatch):
    monkeypatch.setattr(outage_module, "REDIS_RETRY_S", 0.05)  # notice Redis is back sooner
    # New papers in every round, so that each round needs Redis: locks, turns, cache writes.
    idvs = [f"2605.{number:05d}v1" for number in range(1, 15)]
    for idv, name in zip(idvs, itertools.cycle(PAGES.values()), strict=False):
        replay.script(f"/html/{idv}", slow(replay.corpus_page(name), 131_072, 0.02))
    settings = replay.settings(tmp_path, cache_url=own_redis.url)
    # What happens to Redis in the middle of each round.
    events = [None, own_redis.restart, own_redis.stop, None, own_redis.start, None]

    async def main() -> list[str]:
        fresh = iter(idvs)
        asked: list[str] = []
        async with library(settings) as one, library(settings) as two:
            for event in events:
                asked += [next(fresh), next(fresh)]
                loads = asyncio.gather(
                    *(lib.load(parse_ref(idv)) for idv in asked for lib in (one, two))
                )
                if event is not None:
                    await asyncio.sleep(0.05)  # the fetches are under way
                    await asyncio.to_thread(event)
                await loads
                await asyncio.sleep(0.1)  # long enough to notice Redis is back
        return asked

    asked = asyncio.run(main())

    assert set(replay.paths()) == {f"/html/{idv}" for idv in asked}
    # Back on Redis, which restarted empty: the last papers are cached there.
    last = {f"paperanchor:paper:{PARSER_VERSION}:{idv}" for idv in asked[-2:]}
    assert last <= set(own_redis.all_keys())


if __name__ == "__main__":
    arguments = argparse.ArgumentParser()
    arguments.add_argument("papers", nargs="+")
    arguments.add_argument("--repeat", type=int, default=1)
    options = arguments.parse_args()
    _worker(options.papers, options.repeat)
