"""One rate limit per client across `paperanchor serve` processes sharing a real redis-server,
and a per-process one, never a 500, while Redis is away (api/limits.py)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.api.live import ServeProcess
from tests.conftest import FIXTURES, RedisServer

RATE = 4  # a minute


@pytest.fixture
def two_servers(own_redis: RedisServer, tmp_path_factory) -> Iterator[list[ServeProcess]]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PAPERANCHOR_")}
    env = {
        **base,
        "PAPERANCHOR_LOCAL_DIR": str(FIXTURES / "html"),
        "PAPERANCHOR_OFFLINE": "1",
        "PAPERANCHOR_CACHE_URL": own_redis.url,
        "PAPERANCHOR_RATE_LIMIT": f"{RATE}/minute",
        "PAPERANCHOR_RATE_LIMIT_LOOPBACK": "1",  # the test's client is on this machine
    }
    servers = [
        ServeProcess({**env, "PAPERANCHOR_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))})
        for _ in range(2)
    ]
    try:
        yield [server.wait_ready() for server in servers]
    finally:
        for server in servers:
            server.stop()


def ask(servers: list[ServeProcess], count: int) -> list[tuple[int, str | None]]:
    """`count` requests from one client, alternately to each server: (status, Retry-After)."""
    answers = []
    for number in range(count):
        server = servers[number % len(servers)]
        response = httpx.get(f"{server.url}/local/short/outline.json", trust_env=False, timeout=30)
        answers.append((response.status_code, response.headers.get("retry-after")))
    return answers


def test_two_servers_sharing_redis_enforce_one_limit_per_client(two_servers, own_redis):
    answers = ask(two_servers, 2 * RATE)

    assert [status for status, _ in answers] == [200] * RATE + [429] * RATE
    assert all(1 <= int(wait or 0) <= 60 for status, wait in answers if status == 429)
    assert any(key.startswith("paperanchor:limit:") for key in own_redis.all_keys())


def test_with_redis_away_each_server_counts_alone_and_nothing_answers_500(two_servers, own_redis):
    own_redis.stop()
    one, two = two_servers
    alone = [ask([one], RATE + 2), ask([two], RATE + 2)]

    for answers in alone:
        assert [status for status, _ in answers] == [200] * RATE + [429, 429]

    own_redis.start()  # empty, as a Redis without persistence comes back
    time.sleep(1.2)  # each server asks Redis again a second after it failed
    shared = ask(two_servers, 2 * RATE)

    assert [status for status, _ in shared] == [200] * RATE + [429] * RATE
    for server in two_servers:
        log = server.log()
        # one outage, one warning, whichever of the store and the rate limit met it first
        assert len(re.findall(r"Redis at \S+ is unreachable \(", log)) == 1, log[-2000:]
        assert len(re.findall(r"Redis at \S+ is back after", log)) == 1, log[-2000:]
