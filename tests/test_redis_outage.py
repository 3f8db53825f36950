"""One Redis outage, met by the store, the coordination or the rate limit, is all three's
(outage.py), against a real redis-server."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from paperanchor import outage as outage_module
from paperanchor.api.limits import ClientLimit, Rate
from paperanchor.coordination import RedisCoordination
from paperanchor.outage import RedisLink
from paperanchor.runtime import Runtime
from paperanchor.settings import Settings
from paperanchor.store import RedisStore


def test_a_runtime_over_redis_gives_its_store_and_coordination_one_link(own_redis, tmp_path):
    settings = Settings(_env_file=None, cache_dir=tmp_path, cache_url=own_redis.url, offline=True)
    runtime = Runtime.build(settings)
    try:
        assert isinstance(runtime.store, RedisStore) and runtime.store.link is runtime.link
        assert isinstance(runtime.coordination, RedisCoordination)
        assert runtime.coordination.link is runtime.link
        assert runtime.papers.coordination is runtime.upstream.coordination is runtime.coordination
    finally:
        asyncio.run(runtime.aclose())


def test_an_outage_the_store_meets_sends_the_others_local_with_one_warning(
    own_redis, tmp_path, caplog
):
    caplog.set_level(logging.WARNING)
    link = RedisLink(own_redis.url)
    store = RedisStore(link)
    own_redis.stop()

    async def main() -> tuple[str, float]:
        coordination = RedisCoordination(link, lease_s=1)
        limit = ClientLimit(Rate(1, 60.0), link)
        try:
            assert store.get("anything") is None  # the store meets the outage
            done = await coordination.once("fetch:x", _work, _no_result)
            async with coordination.host_turn("https://arxiv.org", 0.5) as turn:
                assert turn.gap == 0.5  # the local gate alone
            return done, await limit.take("client")
        finally:
            await limit.aclose()
            await coordination.aclose()

    try:
        done, wait = asyncio.run(main())
    finally:
        store.close()

    assert done == "done here" and wait == 0.0  # local work, a local count
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "is unreachable" in warnings[0], warnings


def test_the_first_answer_after_an_outage_ends_it_for_the_store_too(own_redis, monkeypatch, caplog):
    caplog.set_level(logging.WARNING)
    monkeypatch.setattr(outage_module, "REDIS_RETRY_S", 0.05)
    link = RedisLink(own_redis.url)
    store = RedisStore(link)

    async def main() -> None:
        limit = ClientLimit(Rate(5, 60.0), link)
        try:
            own_redis.stop()
            assert await limit.take("client") == 0.0  # the rate limit meets the outage
            assert store.is_down  # and the store knows it without asking
            own_redis.start()
            time.sleep(0.06)
            assert await limit.take("client") == 0.0  # counted in Redis again
            assert not store.is_down
        finally:
            await limit.aclose()

    try:
        asyncio.run(main())
    finally:
        store.close()

    messages = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("is unreachable" in m for m in messages) == 1, messages
    assert sum("is back after" in m for m in messages) == 1, messages


async def _work() -> str:
    return "done here"


async def _no_result() -> str | None:
    pytest.fail("a process alone never waits for another's result")
