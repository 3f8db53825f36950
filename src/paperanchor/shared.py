"""What processes sharing one Redis coordinate through (SPEC §2, `PAPERANCHOR_CACHE_URL`).

- **A host's turn**: one request at a time to an upstream host across every process, each
  starting no sooner than the host's next-allowed time, which the request's end sets to
  `MIN_GAP_S` later (Redis's clock). Measured from the end, like the local gate, so arrivals at
  the host are `MIN_GAP_S` apart whatever the latency, or a process stalling between being
  given its time and sending.
- **A host's pause**: `Retry-After` deferrals and blocks reach every process.
- **A paper's fetch lock**: the first process fetches; the others wait until it releases the
  lock, then read its result from the shared cache (or its error); when it died, they take over.

Locks are leases that their holder renews every third of `PAPERANCHOR_LOCK_LEASE_S`, so a
holder that dies frees them that long after, and a slow holder keeps them. Every operation
degrades to local behaviour while Redis is unreachable: the store logs one warning per outage,
and the caller goes on as if it were alone (its local gate and single flight still apply).

Keys (after the store's `paperanchor:` prefix): `host:<scheme://host:port>:turn|next|pause`,
`lock:<name>`, `failed:<name>`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import redis

from paperanchor.errors import (
    BadRequest,
    NotFound,
    PaperAnchorError,
    RateLimited,
    TooLarge,
    Unavailable,
    UpstreamError,
)
from paperanchor.store import RedisDown, RedisStore, Store

log = logging.getLogger(__name__)

T = TypeVar("T")

# How often a process waiting for a host's turn or a paper's fetch asks Redis again. Both waits
# are for work that takes from tens of milliseconds (a loopback fetch) to seconds: 50 ms adds
# little latency and costs one tiny command per waiting process, never per request (the local
# gate and single flight keep one waiter per process).
POLL_S = 0.05
# A failed fetch's error is kept this long for the processes that waited for it; later requests
# try again.
FAILURE_NOTE_S = 10.0

# The family by wire code, to raise a failed fetch's error again in the processes that waited.
_ERRORS: dict[str, type[PaperAnchorError]] = {
    cls.code: cls
    for cls in (BadRequest, NotFound, TooLarge, RateLimited, UpstreamError, Unavailable)
}

# KEYS: turn, next, pause. ARGV: token, lease ms.
# -> {0, ms to wait before sending} (the turn is ours), {1, ms the holder keeps it}, {2, ms paused}
_TAKE_TURN = """
local paused = redis.call('PTTL', KEYS[3])
if paused > 0 then return {2, paused} end
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return {1, redis.call('PTTL', KEYS[1])} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local wait = math.ceil(math.max(0, (tonumber(redis.call('GET', KEYS[2])) or 0) - now))
redis.call('SET', KEYS[1], ARGV[1], 'PX', wait + tonumber(ARGV[2]))
return {0, wait}
"""

# KEYS: next. ARGV: ms. The host's next-allowed time becomes at least now + ms (Redis's clock,
# in ms since the epoch: 13 digits, exact in Lua's doubles).
_PUSH_NEXT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local later = math.ceil(now + tonumber(ARGV[1]))
local current = tonumber(redis.call('GET', KEYS[1])) or 0
if later > current then
  redis.call('SET', KEYS[1], string.format('%.0f', later), 'PX', later - math.floor(now) + 1000)
end
return 1
"""

# KEYS: next, turn. ARGV: gap ms, token. The end of a request: next = now + gap, turn released.
_END_TURN = (
    _PUSH_NEXT.replace("return 1", "").strip()
    + """
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
return 1
"""
)

# KEYS: pause. ARGV: ms. The host is paused for at least ms from now.
_PAUSE = """
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
"""

# KEYS: lock. ARGV: token, lease ms. -> the holder's token (ours when we got it).
_LOCK = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return ARGV[1] end
return redis.call('GET', KEYS[1])
"""

# KEYS: lock. ARGV: token, lease ms. -> 1 while the lease is ours (renewed), 0 once lost.
_RENEW = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
"""

# KEYS: lock. ARGV: token. Compare and delete: never another holder's lock.
_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class HostPaused(Exception):
    """Another process was told to stay away from this host (a long `Retry-After`)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"paused for {seconds:.1f} s")
        self.seconds = seconds


class Shared:
    """Host turns, host pauses and fetch locks in the Redis behind a `RedisStore`."""

    def __init__(self, store: RedisStore, *, lease_s: float) -> None:
        self.store = store
        self.lease_ms = max(1, math.ceil(lease_s * 1000))
        client = store.client
        # redis-py's scripts run by digest and load themselves again after Redis restarts.
        self._take_turn = client.register_script(_TAKE_TURN)
        self._push_next = client.register_script(_PUSH_NEXT)
        self._end = client.register_script(_END_TURN)
        self._pause = client.register_script(_PAUSE)
        self._lock = client.register_script(_LOCK)
        self._renew = client.register_script(_RENEW)
        self._unlock = client.register_script(_UNLOCK)

    @classmethod
    def over(cls, store: Store, *, lease_s: float) -> Shared | None:
        """The coordination of a Redis store; None for a store that only one machine sees."""
        return cls(store, lease_s=lease_s) if isinstance(store, RedisStore) else None

    # -- upstream hosts -------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def host_turn(self, host: str, gap: float) -> AsyncIterator[None]:
        """Hold `host`'s turn across processes, from its next-allowed time to the block's end.

        Raises `HostPaused` while the host is paused; without Redis, yields at once.
        """
        turn, following, paused = self._host_keys(host)
        token = secrets.token_hex(8)
        try:
            wait_ms = await self._take(turn, following, paused, token)
        except RedisDown:
            wait_ms = None  # the local gate alone
        if wait_ms is None:
            yield
            return
        async with self._leased(turn, token):
            if wait_ms:
                await asyncio.sleep(wait_ms / 1000)
            try:
                yield
            finally:
                await self._end_turn(turn, following, token, gap)

    async def _take(self, turn: str, following: str, paused: str, token: str) -> int:
        """Wait for the turn; the ms to wait from now until the host's next-allowed time."""
        while True:
            answer = await self._call(
                lambda client: self._take_turn(
                    keys=[turn, following, paused], args=[token, self.lease_ms], client=client
                )
            )
            state, ms = int(answer[0]), int(answer[1])
            if state == 0:
                return ms
            if state == 2:
                raise HostPaused(ms / 1000)
            await asyncio.sleep(min(POLL_S, max(ms, 1) / 1000))

    async def defer_host(self, host: str, seconds: float) -> None:
        """Every process waits `seconds` before its next request to `host` (a `Retry-After`)."""
        _, following, _ = self._host_keys(host)
        with contextlib.suppress(RedisDown):
            await self._call(
                lambda client: self._push_next(keys=[following], args=[_ms(seconds)], client=client)
            )

    async def pause_host(self, host: str, seconds: float) -> None:
        """Every process fails fast on `host` for `seconds` (a `Retry-After` beyond the cap)."""
        _, _, paused = self._host_keys(host)
        with contextlib.suppress(RedisDown):
            await self._call(
                lambda client: self._pause(
                    keys=[paused], args=[max(1, _ms(seconds))], client=client
                )
            )

    async def _end_turn(self, turn: str, following: str, token: str, gap: float) -> None:
        with contextlib.suppress(RedisDown):  # the turn's lease runs out by itself
            await self._call(
                lambda client: self._end(
                    keys=[following, turn], args=[_ms(gap), token], client=client
                )
            )

    def _host_keys(self, host: str) -> tuple[str, str, str]:
        base = self.store.key(f"host:{host}:")
        return base + "turn", base + "next", base + "pause"

    # -- one fetch at a time per paper ----------------------------------------------------------

    async def once(
        self,
        name: str,
        work: Callable[[], Awaitable[T]],
        result: Callable[[], Awaitable[T | None]],
    ) -> T:
        """`work()` here, unless another process is doing it: then its result, read by `result()`.

        The other process's error is raised here too when it failed with one of the family's
        errors; when it died, or finished without a result to read, this process takes over.
        Without Redis, `work()` runs here at once.
        """
        lock, failed = self.store.key(f"lock:{name}"), self.store.key(f"failed:{name}")
        token = secrets.token_hex(8)
        try:
            waited = await self._lock_or_wait(name, lock, failed, token, result)
        except RedisDown:
            return await work()  # this process alone
        if not isinstance(waited, bool):
            return waited  # the other process's result
        async with self._leased(lock, token):
            try:
                if waited:
                    # It may have finished between our last look and taking the lock.
                    found = await result()
                    if found is not None:
                        return found
                return await work()
            except PaperAnchorError as exc:
                await self._note_failure(failed, token, exc)
                raise
            finally:
                with contextlib.suppress(RedisDown):
                    await self._call(
                        lambda client: self._unlock(keys=[lock], args=[token], client=client)
                    )

    async def _lock_or_wait(
        self,
        name: str,
        lock: str,
        failed: str,
        token: str,
        result: Callable[[], Awaitable[T | None]],
    ) -> T | bool:
        """Take the lock (True when another holder was waited for first), or another's result."""
        waited = False
        while True:
            holder = _text(
                await self._call(
                    lambda client: self._lock(
                        keys=[lock], args=[token, self.lease_ms], client=client
                    )
                )
            )
            if holder == token:
                return waited
            waited = True
            while True:
                current = await self._call(lambda client: client.get(lock))
                if current is None or _text(current) != holder:
                    break
                await asyncio.sleep(POLL_S)
            found = await result()
            if found is not None:
                return found
            error = await self._failure(failed, holder)
            if error is not None:
                raise error
            log.info("taking over the fetch of %s from a process that left it unfinished", name)

    async def _note_failure(self, failed: str, token: str, exc: PaperAnchorError) -> None:
        note = json.dumps(
            {"token": token, "code": exc.code, "detail": exc.detail, "retryAfter": exc.retry_after}
        )
        with contextlib.suppress(RedisDown):
            await self._call(lambda client: client.set(failed, note, px=_ms(FAILURE_NOTE_S)))

    async def _failure(self, failed: str, holder: str) -> PaperAnchorError | None:
        raw = await self._call(lambda client: client.get(failed))
        if raw is None:
            return None
        try:
            note = json.loads(raw)
            if note["token"] != holder:
                return None
            kind = _ERRORS.get(note["code"], PaperAnchorError)
            return kind(str(note["detail"]), retry_after=note.get("retryAfter"))
        except (ValueError, KeyError, TypeError):
            return None

    # -- leases and calls -----------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _leased(self, key: str, token: str) -> AsyncIterator[None]:
        """Renew `key`'s lease while the block runs, so that only a dead holder loses it."""
        renewal = asyncio.ensure_future(self._renew_forever(key, token))
        try:
            yield
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal

    async def _renew_forever(self, key: str, token: str) -> None:
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            try:
                kept = await self._call(
                    lambda client: self._renew(
                        keys=[key], args=[token, self.lease_ms], client=client
                    )
                )
            except RedisDown:
                continue
            if kept == 0:
                log.warning("lost the lease of %s (Redis restarted, or this process stalled)", key)
                return

    async def _call(self, command: Callable[[redis.Redis], Any]) -> Any:
        """`command` in a worker thread; `RedisDown` when Redis is unreachable or refuses it."""
        try:
            return await asyncio.to_thread(self.store.run, command)
        except redis.RedisError as exc:
            log.warning("Redis refused a coordination command (%s); going on locally", exc)
            raise RedisDown(str(exc)) from exc


def _ms(seconds: float) -> int:
    return max(0, math.ceil(seconds * 1000))


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
