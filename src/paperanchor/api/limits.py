"""Per-client rate limit of the HTTP API (`PAPERANCHOR_RATE_LIMIT`, contract §9).

With `PAPERANCHOR_CACHE_URL` the count is in that Redis, so every process sharing it enforces
one limit per client: `limits`' sliding-window counter (two counters per client, this period's
and the last one's weighted by how much of it is still inside the window; keys
`paperanchor:limit:…` expire after two periods). While Redis cannot be reached, and without one,
each process counts alone with a token bucket, and asks Redis again a second later: never a 500.
Whether Redis answers is the `RedisLink` the store and the coordination share (outage.py): an
outage any of them found is the limit's too, and is logged once. A Redis that refuses commands
(full, read-only) is no outage for the others; the limit alone counts locally meanwhile.

The bucket is ours rather than limits' in-memory store: that store walks every key on the event
loop to expire them, and with 100,000 clients a request took 161 µs and the loop stalled up to
190 ms; the bucket takes 4 µs (worst stall 35 ms) and drops idle clients only past MAX_CLIENTS.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import limits
import redis.exceptions
from limits.aio.storage import RedisStorage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from mcp_types import CallToolResult, TextContent
from starlette.types import ASGIApp, Receive, Scope, Send

from paperanchor.errors import RateLimited
from paperanchor.outage import RedisDown, RedisLink
from paperanchor.refs import shown

logger = logging.getLogger(__name__)

_PERIODS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}
# Buckets kept before idle ones are dropped; each is a few dozen bytes.
MAX_CLIENTS = 100_000
# Monitoring must not be locked out by the traffic it watches.
EXEMPT_PATHS = frozenset({"/healthz", "/metrics"})
# While Redis refuses commands, how long the process counts alone before asking it again (an
# unreachable Redis is asked again after outage.REDIS_RETRY_S, the same second).
RETRY_REDIS_S = 1.0
KEY_PREFIX = "paperanchor:limit"
# A Redis that does not answer costs a request at most this long (connect, then command), and
# is asked again only after RETRY_REDIS_S.
CONNECT_TIMEOUT_S = 1.0
COMMAND_TIMEOUT_S = 2.0
_REDIS_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


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
        return f"{self.requests}/{self.period}"

    @property
    def period(self) -> str:
        """The rate's period by name, as written in the setting (`120/minute`)."""
        return next(k for k, v in _PERIODS.items() if v == self.period_s)


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


class ClientLimit:
    """`take(client)`: 0 when the request may go ahead, else the seconds until it may retry."""

    def __init__(self, rate: Rate, link: RedisLink | None) -> None:
        """A limit of `rate` per client, counted in the Redis of `link` (runtime.py's), else in
        this process."""
        self.rate = rate
        self.item = limits.parse(str(rate))
        self._local = TokenBuckets(rate)
        self._link = link
        self._storage: RedisStorage | None = None
        self._window: SlidingWindowCounterRateLimiter | None = None
        if link is not None:
            self._storage = RedisStorage(
                f"async+{link.url}",
                implementation="redispy",
                key_prefix=KEY_PREFIX,
                socket_connect_timeout=CONNECT_TIMEOUT_S,
                socket_timeout=COMMAND_TIMEOUT_S,
            )
            self._window = SlidingWindowCounterRateLimiter(self._storage)
        self._refused_until = 0.0

    async def take(self, client: str) -> float:
        """Count one request of `client`: 0 when it may go ahead, else the seconds until it
        may retry."""
        if self._window is None or self._link is None or time.monotonic() < self._refused_until:
            return self._local.take(client)
        # Unreachable, or refusing (full with noeviction, a read-only replica): a rate limit is
        # no politeness to arXiv, so the process counts alone meanwhile.
        try:
            self._link.check()
            wait = await _take(self._window, self.item, client)
        except RedisDown:
            pass
        except _REDIS_DOWN as exc:
            self._link.failed(exc)
        except redis.exceptions.ResponseError as exc:
            if self._refused_until == 0.0:
                logger.warning("rate limit: Redis refuses commands (%s); counting locally", exc)
            self._refused_until = time.monotonic() + RETRY_REDIS_S
        else:
            self._link.answered()
            if self._refused_until:
                logger.warning("rate limit: Redis accepts commands again; counting there again")
            self._refused_until = 0.0
            return wait
        return self._local.take(client)

    async def aclose(self) -> None:
        """Close the connections to Redis."""
        if self._storage is not None:
            client: Any = getattr(self._storage.bridge, "storage", None)  # redis.asyncio.Redis
            if client is not None:
                await client.aclose()


async def _take(
    limiter: SlidingWindowCounterRateLimiter, item: limits.RateLimitItem, client: str
) -> float:
    if await limiter.hit(item, client):
        return 0.0
    stats = await limiter.get_window_stats(item, client)
    return max(stats.reset_time - time.time(), 0.0)


Refuse = Callable[[Scope, RateLimited], ASGIApp]


def is_loopback(address: str) -> bool:
    """Whether a client address is this machine's (127.0.0.0/8, ::1)."""
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


# The most of a refused /mcp request read to find its JSON-RPC id: a tools/call is a few
# hundred bytes; a longer one is answered without its id.
MCP_BODY_MAX = 64 * 1024


class RateLimitMiddleware:
    """Answers 429 with Retry-After, in the route's wire form, once a client is over the rate;
    on POST /mcp, a JSON-RPC answer an MCP client reads (contract §7): a refused tools/call is a
    tool error `rate-limited: retry in N s`. Loopback clients are not limited unless
    `loopback` (PAPERANCHOR_RATE_LIMIT_LOOPBACK)."""

    def __init__(
        self, app: ASGIApp, limit: ClientLimit, refuse: Refuse, loopback: bool = False
    ) -> None:
        self.app = app
        self.limit = limit
        self.refuse = refuse
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in EXEMPT_PATHS:
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = client[0] if client else "unknown"
        if not self.loopback and is_loopback(address):
            await self.app(scope, receive, send)
            return
        wait = await self.limit.take(address)
        if wait <= 0:
            await self.app(scope, receive, send)
            return
        seconds = max(1, math.ceil(wait))
        error = RateLimited(
            f"{scope['method']} {shown(scope['path'])}: more than {self.limit.rate} requests "
            f"from this client; retry in {seconds} s",
            retry_after=seconds,
        )
        if scope["path"] == "/mcp" and scope["method"] == "POST":
            await _refuse_mcp(seconds, receive, send)
            return
        await self.refuse(scope, error)(scope, receive, send)


async def _refuse_mcp(seconds: int, receive: Receive, send: Send) -> None:
    """A refused MCP request as JSON-RPC: a tools/call's tool error, another request's error
    object, a notification's 202 (Streamable HTTP answers notifications so)."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return  # the client left
        body += message.get("body", b"")[: MCP_BODY_MAX + 1 - len(body)]
        if not message.get("more_body", False):
            break
    text = f"rate-limited: retry in {seconds} s"
    request: Any = None
    if len(body) <= MCP_BODY_MAX:
        try:
            request = json.loads(body)
        except ValueError:
            request = None
    headers = [(b"retry-after", str(seconds).encode())]
    if isinstance(request, dict) and "id" not in request and "method" in request:
        await send({"type": "http.response.start", "status": 202, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return
    request_id = request.get("id") if isinstance(request, dict) else None
    answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    if isinstance(request, dict) and request.get("method") == "tools/call":
        result = CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        answer["result"] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    else:
        answer["error"] = {"code": -32000, "message": text, "data": {"retryAfter": seconds}}
    payload = json.dumps(answer).encode()
    headers += [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
