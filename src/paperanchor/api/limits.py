"""Per-client rate limit of the HTTP API (`PAPERANCHOR_RATE_LIMIT`, SPEC §9): a token bucket.

A bucket per client address holds up to N tokens and refills at N per period, so a client may
burst N requests and then keeps to the rate. It is a few lines, in memory, per process; the
`limits` package would add storage backends this service has no use for yet (a shared Redis
limit would belong with the Redis cache of SPEC §2).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from paperanchor.errors import RateLimited
from paperanchor.refs import shown

_PERIODS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}
# Buckets kept before idle ones are dropped; each is a few dozen bytes.
MAX_CLIENTS = 100_000
# Monitoring must not be locked out by the traffic it watches.
EXEMPT_PATHS = frozenset({"/healthz", "/metrics"})


@dataclass(frozen=True, slots=True)
class Rate:
    requests: int
    period_s: float

    @classmethod
    def parse(cls, text: str) -> Rate | None:
        """`120/minute` -> Rate(120, 60.0); `0` -> None (no limit). Settings validated the form."""
        text = text.strip()
        if text == "0":
            return None
        count, _, period = text.partition("/")
        return cls(int(count), _PERIODS[period.strip()])

    def __str__(self) -> str:
        name = next(k for k, v in _PERIODS.items() if v == self.period_s)
        return f"{self.requests}/{name}"


class TokenBuckets:
    """One bucket per client; `take` spends a token or says how long until there is one."""

    def __init__(self, rate: Rate, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.capacity = float(rate.requests)
        self.per_second = rate.requests / rate.period_s
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, at)

    def take(self, client: str) -> float:
        """0 when the request may go ahead, else the seconds until the client may retry."""
        now = self._clock()
        tokens, at = self._buckets.get(client, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - at) * self.per_second)
        if tokens >= 1.0:
            self._buckets[client] = (tokens - 1.0, now)
            if len(self._buckets) > MAX_CLIENTS:
                self._forget_idle(now)
            return 0.0
        self._buckets[client] = (tokens, now)
        return (1.0 - tokens) / self.per_second

    def _forget_idle(self, now: float) -> None:
        # A bucket that has refilled is the same as no bucket.
        full_after = self.capacity / self.per_second
        for client, (_, at) in list(self._buckets.items()):
            if now - at >= full_after:
                del self._buckets[client]
        while len(self._buckets) > MAX_CLIENTS:  # a flood of addresses: oldest first
            del self._buckets[next(iter(self._buckets))]


Refuse = Callable[[Scope, RateLimited], ASGIApp]


class RateLimitMiddleware:
    """Answers 429 with Retry-After, in the route's wire form, once a client's bucket is empty."""

    def __init__(self, app: ASGIApp, buckets: TokenBuckets, refuse: Refuse) -> None:
        self.app = app
        self.buckets = buckets
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in EXEMPT_PATHS:
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        wait = self.buckets.take(client[0] if client else "unknown")
        if wait <= 0:
            await self.app(scope, receive, send)
            return
        seconds = max(1, math.ceil(wait))
        error = RateLimited(
            f"{scope['method']} {shown(scope['path'])}: more than {self.buckets.rate} requests "
            f"from this client; retry in {seconds} s",
            retry_after=seconds,
        )
        await self.refuse(scope, error)(scope, receive, send)
