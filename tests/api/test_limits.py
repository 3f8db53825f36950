"""The token bucket behind PAPERANCHOR_RATE_LIMIT, on a clock the test turns by hand."""

from __future__ import annotations

import pytest

from paperanchor.api import limits
from paperanchor.api.limits import Rate, TokenBuckets


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("text", "rate"),
    [("120/minute", Rate(120, 60.0)), ("5 / second", Rate(5, 1.0)), ("1/day", Rate(1, 86400.0))],
)
def test_a_rate_reads_the_settings_form(text, rate):
    assert Rate.parse(text) == rate
    assert str(rate) == text.replace(" ", "")


def test_zero_is_no_limit():
    assert Rate.parse("0") is None


def test_a_client_may_burst_the_whole_rate_then_waits_for_the_next_token():
    clock = Clock()
    buckets = TokenBuckets(Rate(3, 60.0), clock)

    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(20.0)  # one token every 20 s
    assert buckets.take("b") == 0.0  # buckets are per client

    clock.now += 19.0
    assert buckets.take("a") == pytest.approx(1.0)  # a refused request costs nothing
    clock.now += 1.0
    assert buckets.take("a") == 0.0
    assert buckets.take("a") > 0


def test_idle_clients_are_forgotten_when_there_are_too_many(monkeypatch):
    monkeypatch.setattr(limits, "MAX_CLIENTS", 10)
    clock = Clock()
    buckets = TokenBuckets(Rate(2, 1.0), clock)
    for n in range(10):
        buckets.take(f"old-{n}")
    clock.now += 5.0  # every old bucket has refilled
    buckets.take("new-0")
    buckets.take("new-1")

    assert set(buckets._buckets) == {"new-0", "new-1"}
