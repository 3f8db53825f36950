"""Whose request it is, for the rate limit: the peer's address, and X-Forwarded-For only with
PAPERANCHOR_TRUST_PROXY=1 (contract §2), against real `paperanchor serve` processes."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from tests.api.live import ServeProcess
from tests.conftest import FIXTURES

RATE = 3  # a minute


def serve(tmp_path_factory: pytest.TempPathFactory, **extra: str) -> Iterator[ServeProcess]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PAPERANCHOR_")}
    env = {
        **base,
        "PAPERANCHOR_LOCAL_DIR": str(FIXTURES / "html"),
        "PAPERANCHOR_OFFLINE": "1",
        "PAPERANCHOR_CACHE_DIR": str(tmp_path_factory.mktemp("cache")),
        "PAPERANCHOR_RATE_LIMIT": f"{RATE}/minute",
        "PAPERANCHOR_RATE_LIMIT_LOOPBACK": "1",  # the test's client is on this machine
        **extra,
    }
    process = ServeProcess(env, "--log-level", "warning")
    try:
        yield process.wait_ready()
    finally:
        process.stop()


@pytest.fixture
def plain(tmp_path_factory):
    yield from serve(tmp_path_factory)


@pytest.fixture
def behind_proxy(tmp_path_factory):
    yield from serve(tmp_path_factory, PAPERANCHOR_TRUST_PROXY="1")


def statuses(server: ServeProcess, forwarded_for: list[str]) -> list[int]:
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        return [
            client.get(
                "/local/short/outline.json", headers={"X-Forwarded-For": address}
            ).status_code
            for address in forwarded_for
        ]


ROTATED = [f"203.0.113.{n}" for n in range(1, 11)]


def test_a_client_rotating_x_forwarded_for_is_still_one_client(plain):
    assert statuses(plain, ROTATED) == [200] * RATE + [429] * (len(ROTATED) - RATE)


def test_behind_a_trusted_proxy_each_forwarded_address_is_its_own_client(behind_proxy):
    assert statuses(behind_proxy, ROTATED) == [200] * len(ROTATED)
    assert statuses(behind_proxy, ["198.51.100.7"] * 5) == [200] * RATE + [429] * (5 - RATE)
