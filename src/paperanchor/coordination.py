"""What the processes serving papers coordinate: a host's turn, a host's pause, a paper's fetch.

    coordination = open_coordination(link, lease_s=settings.lock_lease_s)  # runtime.py
    async with coordination.host_turn(host, gap) as turn: ...  # turn.gap: what the end costs
    await coordination.defer_host(host, seconds)             # a Retry-After, for everyone
    await coordination.pause_host(host, seconds)             # a long one: fail fast meanwhile
    await coordination.once(name, work, result)              # one process does `work`

`Coordination` is the protocol; upstream.py and papers.py take one and never ask which.
`LocalCoordination` is a process alone (a disk cache or no cache): the upstream client's own
gate and the papers' single flight already are the whole coordination, so its turns are given
at once, its pauses are the gate's and its `once` is `work()`. `RedisCoordination` is every
process sharing one Redis (contract §2, `PAPERANCHOR_CACHE_URL`):

- **A host's turn**: one request at a time to an upstream host across every process, each
  starting no sooner than the host's next-allowed time, which the request's end sets to
  `MIN_GAP_S` later (Redis's clock). Measured from the end, like the local gate, so arrivals at
  the host are `MIN_GAP_S` apart whatever the latency, or a process stalling between being
  given its time and sending.
- **A host's pause**: `Retry-After` deferrals and blocks reach every process.
- **A paper's fetch lock** (redis-py's `Lock`): the first process fetches; the others wait until
  it releases the lock, then read its result from the shared cache (or its error); when it
  died, they take over.

Locks are leases that their holder renews every third of `PAPERANCHOR_LOCK_LEASE_S`, so a
holder that dies frees them that long after, and a slow holder keeps them. The commands go
through `redis.asyncio`, on the event loop. While Redis is unreachable (connection refused,
reset, timed out, loading) every operation degrades to local behaviour: the `RedisLink` it
shares with the store and the rate limit (outage.py) logs one warning per outage, and the caller
goes on as if it were alone (its local gate and single flight still apply). A Redis that
answers with an error is not an outage and is not hidden: a full (OOM) or read-only Redis makes
the request fail with `unavailable`, and a script error propagates as the bug it is.

Keys (after the link's `paperanchor:` prefix): `host:<scheme://host:port>:turn|next|pause`,
`lock:<name>`, `failed:<name>`. This module knows nothing of the cache's backend.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import redis.asyncio
from redis.asyncio.lock import Lock
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    ConnectionError as RedisConnectionError,
)
from redis.exceptions import (
    LockError,
    OutOfMemoryError,
    ReadOnlyError,
)
from redis.exceptions import (
    TimeoutError as RedisTimeoutError,
)

from paperanchor.errors import (
    BadRequest,
    NotFound,
    PaperAnchorError,
    RateLimited,
    TooLarge,
    Unavailable,
    UpstreamError,
)
from paperanchor.outage import REDIS_CONNECT_TIMEOUT_S, REDIS_TIMEOUT_S, RedisDown, RedisLink

log = logging.getLogger(__name__)

T = TypeVar("T")

# How often a process waiting for a host's turn or a paper's fetch asks Redis again. Both waits
# are for work that takes from tens of milliseconds (a loopback fetch) to seconds: 50 ms adds
# little latency and costs one tiny command per waiting process, never per request (the local
# gate and single flight keep one waiter per process), and the wait is a coroutine sleeping
# on the event loop, not a worker thread.
POLL_S = 0.05
# A failed fetch's error is kept this long for the processes that waited for it; later requests
# try again.
FAILURE_NOTE_S = 10.0
# The longest pause a host's `pause` key may hold, whoever wrote it (sources clamp Retry-After
# to the same bound; this also shortens a longer key left by an older version or a crafted one).
MAX_PAUSE_S = 3600.0

# The family by wire code, to raise a failed fetch's error again in the processes that waited.
_ERRORS: dict[str, type[PaperAnchorError]] = {
    cls.code: cls
    for cls in (BadRequest, NotFound, TooLarge, RateLimited, UpstreamError, Unavailable)
}
_UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)

# KEYS: turn, next, pause. ARGV: token, lease ms, longest pause ms.
# -> {0, ms to wait before sending} (the turn is ours), {1, ms the holder keeps it}, {2, ms paused}
_TAKE_TURN = """
local paused = redis.call('PTTL', KEYS[3])
if paused > tonumber(ARGV[3]) then
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
  paused = tonumber(ARGV[3])
end
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

# KEYS: turn. ARGV: token, lease ms. -> 1 while the lease is ours (renewed), 0 once lost.
_RENEW = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
"""


class HostPaused(Exception):
    """Another process was told to stay away from this host (a long `Retry-After`)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"paused for {seconds:.1f} s")
        self.seconds = seconds


@dataclass(slots=True)
class HostTurn:
    """One request's turn at a host; `gap` is what its end keeps the host waiting for."""

    gap: float


class Coordination(Protocol):
    """Host turns, host pauses and fetch locks: local to a process, or across processes."""

    def host_turn(self, host: str, gap: float) -> AbstractAsyncContextManager[HostTurn]:
        """Hold `host`'s turn from its next-allowed time to the block's end; `HostPaused` while
        the host is paused. The block may lower the turn's `gap` (a request that never reached
        the host costs it no gap)."""
        ...

    async def defer_host(self, host: str, seconds: float) -> None:
        """Every process waits `seconds` before its next request to `host` (a `Retry-After`)."""
        ...

    async def pause_host(self, host: str, seconds: float) -> None:
        """Every process fails fast on `host` for `seconds` (a `Retry-After` beyond the cap)."""
        ...

    async def once(
        self,
        name: str,
        work: Callable[[], Awaitable[T]],
        result: Callable[[], Awaitable[T | None]],
    ) -> T:
        """`work()` here, unless another process is doing it: then its result, read by
        `result()` (or its error)."""
        ...

    async def aclose(self) -> None:
        """Close what the coordination holds open."""
        ...


class LocalCoordination:
    """A process alone: nothing to share beyond its own gate and single flight."""

    @contextlib.asynccontextmanager
    async def host_turn(self, host: str, gap: float) -> AsyncIterator[HostTurn]:
        """The turn at once: the upstream client's local gate is the only one."""
        yield HostTurn(gap)

    async def defer_host(self, host: str, seconds: float) -> None:
        """Nothing beyond the local gate's deferral."""

    async def pause_host(self, host: str, seconds: float) -> None:
        """Nothing beyond the local gate's pause."""

    async def once(
        self,
        name: str,
        work: Callable[[], Awaitable[T]],
        result: Callable[[], Awaitable[T | None]],
    ) -> T:
        """`work()`: the single flight of this process is the only one."""
        return await work()

    async def aclose(self) -> None:
        """Nothing to close."""


def open_coordination(link: RedisLink | None, *, lease_s: float) -> Coordination:
    """The coordination of the processes sharing the Redis of `link`; local without one."""
    if link is None:
        return LocalCoordination()
    return RedisCoordination(link, lease_s=lease_s)


class RedisCoordination:
    """Host turns, host pauses and fetch locks in the Redis of a `RedisLink`.

    It talks to that Redis through its own `redis.asyncio` client, and goes local while the link
    knows Redis to be away (found by this client, the store's or the rate limit's).
    """

    def __init__(self, link: RedisLink, *, lease_s: float) -> None:
        self.link = link
        self.lease_s = lease_s
        self.lease_ms = max(1, math.ceil(lease_s * 1000))
        self.client: redis.asyncio.Redis = redis.asyncio.Redis.from_url(
            link.url,
            socket_connect_timeout=REDIS_CONNECT_TIMEOUT_S,
            socket_timeout=REDIS_TIMEOUT_S,
            # As the store's client: one immediate retry on a fresh connection after a restart.
            retry=Retry(NoBackoff(), 1),
        )
        # redis-py's scripts run by digest and load themselves again after Redis restarts.
        self._take_turn = self.client.register_script(_TAKE_TURN)
        self._push_next = self.client.register_script(_PUSH_NEXT)
        self._end = self.client.register_script(_END_TURN)
        self._pause = self.client.register_script(_PAUSE)
        self._renew = self.client.register_script(_RENEW)

    async def aclose(self) -> None:
        """Close the Redis connections of the coordination."""
        await self.client.aclose()

    # -- upstream hosts -------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def host_turn(self, host: str, gap: float) -> AsyncIterator[HostTurn]:
        """Hold `host`'s turn across processes, from its next-allowed time to the block's end.

        Raises `HostPaused` while the host is paused; without Redis, yields at once. The block
        may lower the turn's `gap` (a request that never reached the host costs it no gap).
        """
        turn_key, following, paused = self._host_keys(host)
        turn = HostTurn(gap)
        token = secrets.token_hex(8)
        try:
            wait_ms = await self._take(turn_key, following, paused, token)
        except RedisDown:
            wait_ms = None  # the local gate alone
        if wait_ms is None:
            yield turn
            return
        async with self._leased(lambda: self._renew_turn(turn_key, token), turn_key):
            if wait_ms:
                await asyncio.sleep(wait_ms / 1000)
            try:
                yield turn
            finally:
                await self._cleanup(
                    f"the end of a turn at {host}",
                    lambda client: self._end(
                        keys=[following, turn_key], args=[_ms(turn.gap), token], client=client
                    ),
                )

    async def _take(self, turn: str, following: str, paused: str, token: str) -> int:
        """Wait for the turn; the ms to wait from now until the host's next-allowed time."""
        while True:
            answer = await self._call(
                "a turn at an upstream host",
                lambda client: self._take_turn(
                    keys=[turn, following, paused],
                    args=[token, self.lease_ms, _ms(MAX_PAUSE_S)],
                    client=client,
                ),
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
        ms = _ms(min(seconds, MAX_PAUSE_S))
        with contextlib.suppress(RedisDown):
            await self._call(
                "a Retry-After of an upstream host",
                lambda client: self._push_next(keys=[following], args=[ms], client=client),
            )

    async def pause_host(self, host: str, seconds: float) -> None:
        """Every process fails fast on `host` for `seconds` (a `Retry-After` beyond the cap)."""
        _, _, paused = self._host_keys(host)
        ms = max(1, _ms(min(seconds, MAX_PAUSE_S)))
        with contextlib.suppress(RedisDown):
            await self._call(
                "a pause of an upstream host",
                lambda client: self._pause(keys=[paused], args=[ms], client=client),
            )

    def _host_keys(self, host: str) -> tuple[str, str, str]:
        base = self.link.key(f"host:{host}:")
        return base + "turn", base + "next", base + "pause"

    async def _renew_turn(self, key: str, token: str) -> bool:
        kept = await self._call(
            "a turn's lease",
            lambda client: self._renew(keys=[key], args=[token, self.lease_ms], client=client),
        )
        return bool(kept)

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
        key, failed = self.link.key(f"lock:{name}"), self.link.key(f"failed:{name}")
        lock = Lock(self.client, key, timeout=self.lease_s, sleep=POLL_S, thread_local=False)
        token = secrets.token_hex(8)
        try:
            holder = await self._acquire(lock, key, token)
        except RedisDown:
            return await work()  # this process alone
        async with self._leased(lambda: self._renew_lock(lock), key):
            try:
                if holder is not None:
                    # It finished, or died: its result, its error, or the work is ours.
                    found = await result()
                    if found is not None:
                        return found
                    error = await self._failure(failed, holder) if holder else None
                    if error is not None:
                        raise error
                    log.info("taking over the fetch of %s from a process that left it", name)
                try:
                    return await work()
                except PaperAnchorError as exc:
                    await self._note_failure(failed, token, exc)
                    raise
            finally:
                await self._cleanup(f"the fetch lock of {name}", lambda _: _release(lock))

    async def _acquire(self, lock: Lock, key: str, token: str) -> str | None:
        """Take `lock`: None when it was free, else the token of the holder that was waited for
        ("" when it let go before it could be read)."""
        if await self._call("a fetch lock", lambda _: lock.acquire(blocking=False, token=token)):
            return None
        holder = await self._call("a fetch lock", lambda client: client.get(key))
        await self._call("a fetch lock", lambda _: lock.acquire(blocking=True, token=token))
        return "" if holder is None else _text(holder)

    async def _renew_lock(self, lock: Lock) -> bool:
        try:
            await self._call("a fetch lock's lease", lambda _: lock.reacquire())
        except LockError:
            return False
        return True

    async def _note_failure(self, failed: str, token: str, exc: PaperAnchorError) -> None:
        note = json.dumps(
            {"token": token, "code": exc.code, "detail": exc.detail, "retryAfter": exc.retry_after}
        )
        await self._cleanup(
            "a failed fetch's note",
            lambda client: client.set(failed, note, px=_ms(FAILURE_NOTE_S)),
        )

    async def _failure(self, failed: str, holder: str) -> PaperAnchorError | None:
        """The error `holder`'s fetch ended with; None when there is none, or no Redis to ask
        (then this process fetches: the lock is already ours)."""
        try:
            raw = await self._call("a failed fetch's note", lambda client: client.get(failed))
        except RedisDown:
            return None
        if raw is None:
            return None
        try:
            note = json.loads(raw)
            if note["token"] != holder:
                return None
            kind = _ERRORS.get(note["code"], PaperAnchorError)
            retry_after = note.get("retryAfter")
            if retry_after is not None:
                retry_after = min(MAX_PAUSE_S, max(0.0, float(retry_after)))
            return kind(str(note["detail"])[:2000], retry_after=retry_after)
        except (ValueError, KeyError, TypeError):
            return None

    # -- leases and calls -----------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _leased(self, renew: Callable[[], Awaitable[bool]], key: str) -> AsyncIterator[None]:
        """Renew a lease while the block runs, so that only a dead holder loses it."""
        renewal = asyncio.ensure_future(self._renew_forever(renew, key))
        try:
            yield
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal

    async def _renew_forever(self, renew: Callable[[], Awaitable[bool]], key: str) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                kept = await renew()
            except (RedisDown, Unavailable):
                continue  # the lease may still be ours next time; a refusal was logged
            except Exception:
                log.exception("cannot renew the lease of %s", key)
                return
            if not kept:
                log.warning("lost the lease of %s (Redis restarted, or this process stalled)", key)
                return

    async def _call(self, what: str, command: Callable[[redis.asyncio.Redis], Any]) -> Any:
        """`command`'s answer; `RedisDown` when Redis is unreachable (go local).

        A full or read-only Redis is `Unavailable`: going local would quietly multiply the
        fleet's requests to arXiv and its fetches of one paper. Other errors (a script error)
        propagate.
        """
        self.link.check()
        try:
            answer = await command(self.client)
        except _UNREACHABLE as exc:
            self.link.failed(exc)  # the outage of the store and the rate limit too
            raise RedisDown(str(exc)) from exc
        except (OutOfMemoryError, ReadOnlyError) as exc:
            log.error("Redis at %s refused %s: %s", self.link.where, what, exc)
            raise Unavailable(
                f"the shared cache (Redis) refused {what} ({type(exc).__name__}); "
                "the processes cannot coordinate their requests to arXiv until it accepts writes"
            ) from exc
        self.link.answered()
        return answer

    async def _cleanup(self, what: str, command: Callable[[redis.asyncio.Redis], Any]) -> None:
        """A release or a note: a failure is logged, never raised (leases run out by themselves)."""
        try:
            await self._call(what, command)
        except (RedisDown, Unavailable, LockError):
            pass
        except Exception:
            log.exception("Redis at %s failed %s", self.link.where, what)


async def _release(lock: Lock) -> None:
    with contextlib.suppress(LockError):  # lost already: another process holds it now
        await lock.release()


def _ms(seconds: float) -> int:
    return max(0, math.ceil(seconds * 1000))


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
