"""Polite GETs to upstream hosts (contract §2, Politeness), for every client of an upstream.

    upstream = Upstream(settings, coordination=coordination)  # one per process (runtime.py)
    answer = await upstream.get(url, label="arXiv", subject="1706.03762", limit=max_bytes,
                              broken=lambda body: None)   # -> Answer(url, status, headers, body)
    answer = await upstream.get(url, ..., upstream=Gate("arxiv-api", gap=3.0),
                              headers={"Accept": "application/atom+xml"})
    await upstream.reachable(url)                        # False while its host is marked down
    upstream.requests_sent                               # HTTP requests started, every attempt
    await upstream.aclose()

Each upstream host (scheme, host, port) has its own gate: one request at a time, at least
`MIN_GAP_S` from the end of one to the start of the next (across processes too, given a
`RedisCoordination`), at most `MAX_QUEUE` requests waiting for their turn. A service with a
rate of its own (the arXiv API, Semantic Scholar) names its own `Gate` and gap: its turns,
pauses and being down are kept apart from the other services of the same host. A request is
retried on 429, 5xx, timeouts and broken responses with capped full-jitter backoff, or after the
`Retry-After` the host asked for; a `Retry-After` beyond the backoff cap fails at once and
pauses the host (never longer than `MAX_PAUSE_S`). A host that cannot be reached at all (DNS
failure, connection refused, no connection within `CONNECT_TIMEOUT_S`) is tried once more,
then marked down for `DOWN_S`: its requests fail at once with `Unreachable` meanwhile. A body
costs at most `limit` bytes after decoding: one gzip or deflate layer is decoded in bounded
steps, stacked or unknown encodings are refused.

The layers of a `get`, outermost first: tenacity's retrying loop (attempts, backoff, the wait
for `Retry-After`), the host's gate (`_HostGate.turn`: queue, gap, pause, down mark), one
deadline of `TIMEOUT_S` per attempt, and one streamed GET (`_get_once`). An attempt either
answers or raises `_Retry` with why it failed; everything else it raises is final.

What a `get` raises is the error family's: `Unavailable` (with `retry_after` when known; its
subclass `Unreachable` for a host marked down), `UpstreamError`, `TooLarge`. Answers other than
429/5xx come back as they are (a 404 with up to `error_limit` bytes of its page, a redirect
without its body): redirects, absent pages and content types are the caller's business.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import logging
import math
import re
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from urllib.parse import urlsplit

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)
from tenacity.wait import wait_base

from paperanchor.cookies import NoCookies
from paperanchor.coordination import (
    MAX_PAUSE_S,
    Coordination,
    HostPaused,
    HostTurn,
    LocalCoordination,
)
from paperanchor.errors import PaperAnchorError, TooLarge, Unavailable, UpstreamError
from paperanchor.refs import shown
from paperanchor.settings import Settings

log = logging.getLogger(__name__)

try:
    _VERSION = version("paperanchor")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    _VERSION = "0"

USER_AGENT = (
    f"paperanchor/{_VERSION} (reads LaTeXML HTML renderings of arXiv papers one section at a "
    f"time; polite: one request per host at a time; python-httpx/{httpx.__version__})"
)

# What a non-200 answer's body is read to (enough of a 404 page to recognise arXiv's
# "No HTML for …"); the rest is not needed.
ERROR_PAGE_BYTES = 256 * 1024
# Decoded bytes produced per step of a gzip body: a step takes about 2.5 ms of zlib on this
# machine (median; 11 ms at worst over 200 steps of zeros), and the event loop gets a turn
# between steps. A bomb of 3.5 KB that decodes to 2 GiB took 4.2 GB and held the loop for 18 s
# when decoded in one call (httpx's decoder).
DECODE_STEP = 1 << 20
# Retry-After is a count of seconds; more digits than this is beyond any pause we honour.
_DELTA_SECONDS = re.compile(r"\d{1,12}")
_REDIRECTS = {301, 302, 303, 307, 308}
_CODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
# A TCP (and TLS) connection to arXiv is made in well under a second; one not made in this
# long is a host that drops our packets, which counts as unreachable (below), instead of
# waiting out TIMEOUT_S (30 s) per attempt, four times.
CONNECT_TIMEOUT_S = 10.0
# Failed connections in a row, whichever requests made them, before a host is marked down: the
# first, and one retry. Three parallel papers at an unresolvable name made twelve attempts over
# 33 s before (each request retried on its own, queued behind the gap).
UNREACHABLE_ATTEMPTS = 2


@dataclass(slots=True)
class Answer:
    """One upstream answer: the final URL of this hop, status, headers, and the decoded body."""

    url: str
    status: int
    headers: httpx.Headers
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class Gate:
    """An upstream service with a gate of its own at each host: its name and its gap."""

    name: str
    gap: float


class Unreachable(Unavailable):
    """The host cannot be reached at all (DNS failure, connection refused): it is marked down."""


class _Broken(Exception):
    """The answer ended before its body did (a cut stream, a truncated gzip, an unended page)."""


@dataclass(frozen=True, slots=True)
class _Request:
    """What one `get` asks for, the same at every attempt."""

    url: str
    label: str
    subject: str
    limit: int
    limit_name: str
    error_limit: int
    broken: Callable[[bytes], str | None] | None
    headers: dict[str, str] | None


class _Retry(Exception):
    """An attempt worth another: why it failed (`failure`, for the error after the last one)."""

    def __init__(
        self,
        failure: str,
        *,
        broken: bool = False,
        retry_after: float | None = None,
        unconnected: str = "",
    ) -> None:
        super().__init__(failure)
        self.failure = failure
        self.broken = broken  # the answer came but was not whole: an upstream error at the end
        self.retry_after = retry_after  # what the host asked for, at most BACKOFF_CAP_S
        self.unconnected = unconnected  # why no connection was made: the host is down at the end


class _RetryAfterElse(wait_base):
    """The wait before the next attempt: what the host asked for (`Retry-After`), else `backoff`.

    The host's gate also holds every other request to it until then (`_HostGate.defer`).
    """

    def __init__(self, backoff: wait_base) -> None:
        self.backoff = backoff

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        failed = outcome.exception() if outcome is not None and outcome.failed else None
        if isinstance(failed, _Retry) and failed.retry_after is not None:
            return failed.retry_after
        return float(self.backoff(retry_state))


def _log_retry(request: _Request, retry_state: RetryCallState) -> None:
    outcome = retry_state.outcome
    failed = outcome.exception() if outcome is not None else None
    log.warning("%s: %s for %s; retrying", request.label, failed, request.url)


class Upstream:
    """Polite GETs over one HTTP client, a gate per upstream host."""

    def __init__(
        self,
        settings: Settings,
        *,
        coordination: Coordination | None = None,
        user_agent: str = USER_AGENT,
        accept: str = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
    ) -> None:
        self.settings = settings
        self.coordination: Coordination = coordination or LocalCoordination()
        """with the other processes (runtime.py's); a process alone without one"""
        self._client = httpx.AsyncClient(
            headers={
                "User-Agent": user_agent,
                "Accept": accept,
                # One layer we decode ourselves, with a bound (identity is always acceptable).
                "Accept-Encoding": "gzip",
            },
            # The one deadline of an attempt is `TIMEOUT_S` around it (`_attempt`); httpx bounds
            # only the connection, whose failure means the host is unreachable, not slow.
            timeout=httpx.Timeout(None, connect=_connect_timeout(settings)),
            follow_redirects=False,
            cookies=NoCookies(),  # no state with an upstream (cookies.py)
            event_hooks={"response": [_set_location_aside]},
        )
        self._gates: dict[tuple[str, str, str], _HostGate] = {}
        self.requests_sent = 0
        """HTTP requests started (each retry and each redirect hop counts)."""

    async def aclose(self) -> None:
        """Close the HTTP client and its connections."""
        await self._client.aclose()

    async def get(
        self,
        url: str,
        *,
        label: str,
        subject: str,
        limit: int,
        limit_name: str = "PAPERANCHOR_MAX_HTML_MB",
        error_limit: int = ERROR_PAGE_BYTES,
        broken: Callable[[bytes], str | None] | None = None,
        upstream: Gate | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """One GET of `url`, retried and paced as the module says.

        `label` names the upstream and `subject` what was asked of it, in every error detail.
        `broken(body)` may say why a 200 body is not whole (it is then retried as a broken
        response). `upstream` names a service's own gate (else the host's, at `MIN_GAP_S`);
        `headers` are added to the request's, replacing the client's of the same name (a PDF's
        `Accept`).
        """
        request = _Request(url, label, subject, limit, limit_name, error_limit, broken, headers)
        gate = self._gate(url, upstream)
        settings = self.settings
        attempts = settings.max_retries + 1
        # One retrying object per call, as tenacity's own decorator makes one: it keeps the
        # state of its loop in a thread-local, which concurrent calls on one loop would share.
        retrying = AsyncRetrying(
            sleep=asyncio.sleep,
            stop=stop_after_attempt(attempts),
            wait=_RetryAfterElse(
                wait_random_exponential(multiplier=settings.backoff_s, max=settings.backoff_cap_s)
            ),
            retry=retry_if_exception_type(_Retry),
            before_sleep=functools.partial(_log_retry, request),
            reraise=True,
        )
        try:
            return await retrying(self._attempt, gate, request)
        except _Retry as last:
            if last.unconnected:
                gate.mark_down(last.unconnected)
                raise gate.unreachable(label, subject) from None
            tried = f"after {attempts} attempt{'s' if attempts > 1 else ''}"
            if last.broken:
                raise UpstreamError(f"{label} sent {last.failure} for {subject} {tried}") from None
            raise Unavailable(
                f"{label} failed for {subject}: {last.failure} {tried}",
                retry_after=last.retry_after,
            ) from None

    async def _attempt(self, gate: _HostGate, request: _Request) -> Answer:
        """One attempt in the host's turn, within `TIMEOUT_S`: the answer, or `_Retry` saying
        why it is worth another (anything else raised is final)."""
        settings = self.settings
        label, subject = request.label, request.subject
        try:
            async with gate.turn(label, subject) as turn:
                self.requests_sent += 1
                try:
                    async with asyncio.timeout(settings.timeout_s):
                        answer = await self._get_once(request)
                except (httpx.ConnectError, httpx.ConnectTimeout):
                    turn.gap = 0.0  # nothing reached the host: no gap to keep for it
                    raise
                gate.reached()
                if _retried(answer.status):
                    retry_after = parse_retry_after(answer.headers.get("retry-after"))
                    failure = f"status {answer.status}"
                    # Within the turn, so that no request to the host, of this process or
                    # another, goes ahead before the pause is recorded. The host asked: every
                    # request to it waits; longer than the cap, they fail fast.
                    if retry_after is not None and retry_after > settings.backoff_cap_s:
                        await gate.block(retry_after)
                        raise Unavailable(
                            f"{label} asks to retry {subject} in {retry_after:.0f} s ({failure})",
                            retry_after=retry_after,
                        )
                    if retry_after is not None:
                        await gate.defer(retry_after)
                    raise _Retry(failure, retry_after=retry_after)
                reason = (
                    request.broken(answer.body) if request.broken and answer.status == 200 else None
                )
                if reason:
                    raise _Retry(f"a broken response ({reason})", broken=True)
                return answer
        except TimeoutError:
            raise _Retry(f"no complete answer within {settings.timeout_s:g} s") from None
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            gate.unconnected += 1
            if gate.unconnected >= UNREACHABLE_ATTEMPTS:
                gate.mark_down(_describe(exc))
                raise gate.unreachable(label, subject) from None
            raise _Retry(f"unreachable ({_describe(exc)})", unconnected=_describe(exc)) from None
        except _Broken as exc:
            raise _Retry(f"a broken response ({exc})", broken=True) from None
        except httpx.ProtocolError as exc:
            raise _Retry(f"a broken response ({_describe(exc)})", broken=True) from None
        except httpx.TransportError as exc:
            raise _Retry(f"a failed connection ({_describe(exc)})") from None
        except httpx.InvalidURL as exc:
            raise UpstreamError(
                f"{label} cannot be asked for {subject}: {shown(str(exc))}"
            ) from None

    async def reachable(self, url: str) -> bool:
        """Whether `url`'s host answers a TCP connection (no HTTP request is sent).

        False at once while the host is marked down; a failed probe marks it down.
        """
        gate = self._gate(url)
        # One probe at a time per host, and its answer kept: requests failing together must
        # not send a burst of connections to the other host.
        async with gate.probing:
            if gate.down_for() > 0:
                return False
            if gate.reached_recently():
                return True
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
            try:
                async with asyncio.timeout(_connect_timeout(self.settings)):
                    _, writer = await asyncio.open_connection(parts.hostname, port)
            except (OSError, TimeoutError) as exc:
                gate.mark_down(_describe(exc) if str(exc) else "no connection within the timeout")
                return False
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
            gate.reached()
            return True

    async def _get_once(self, request: _Request) -> Answer:
        label, subject, limit = request.label, request.subject, request.limit
        async with self._client.stream("GET", request.url, headers=request.headers) as response:
            answer = Answer(str(response.url), response.status_code, _headers(response))
            if answer.status in _REDIRECTS or _retried(answer.status):
                return answer
            wbits = _coding(response.headers, label, subject)
            if answer.status != 200:
                answer.body = await _read(response, wbits, request.error_limit, prefix=True)
                return answer
            declared = _content_length(response)
            if declared is not None and declared > limit:
                raise _too_large(label, subject, limit, request.limit_name)
            try:
                answer.body = await _read(response, wbits, limit, prefix=False)
            except _TooLarge:
                raise _too_large(label, subject, limit, request.limit_name) from None
            except zlib.error as exc:
                raise UpstreamError(
                    f"{label} answered {subject} with a corrupt compressed body ({exc})"
                ) from None
            return answer

    def turn_in(self, url: str, upstream: Gate | None = None) -> float:
        """Seconds until a GET of `url` would be sent, as this process sees its gate now."""
        return self._gate(url, upstream).turn_in()

    def _gate(self, url: str, upstream: Gate | None = None) -> _HostGate:
        parts = urlsplit(url)
        name = upstream.name if upstream is not None else ""
        key = (name, parts.scheme, parts.netloc.lower())
        gate = self._gates.get(key)
        if gate is None:
            settings = self.settings
            host = f"{key[1]}://{key[2]}"
            gate = self._gates[key] = _HostGate(
                gap=upstream.gap if upstream is not None else settings.min_gap_s,
                # the key of the turn in Redis: a named service's differs from its host's
                host=f"{name}@{host}" if name else host,
                shown_host=_shown_host(parts.scheme, parts.hostname, parts.port),
                down_s=settings.down_s,
                max_queue=settings.max_queue,
                coordination=self.coordination,
            )
        return gate


@dataclass(slots=True)
class _HostGate:
    """One request to a host at a time, `gap` seconds after the previous one ended.

    The local lock keeps one request of this process in line for the coordination's turn at a
    time; the coordination's turn does the same across processes (given at once to a process
    alone). `waiting` counts the
    requests in line for the local lock, bounded by `max_queue`.
    """

    gap: float
    host: str  # scheme://netloc: the key of the host's turn in Redis
    shown_host: str  # scheme://host[:port], no credentials: for error details
    down_s: float
    max_queue: int
    coordination: Coordination = field(default_factory=LocalCoordination)
    waiting: int = 0
    unconnected: int = 0  # failed connections in a row
    probing: asyncio.Lock = field(default_factory=asyncio.Lock)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _reached_at: float = -math.inf
    _ready_at: float = 0.0
    _blocked_until: float = 0.0
    _down_until: float = 0.0
    _down_reason: str = ""

    @asynccontextmanager
    async def turn(self, label: str, subject: str) -> AsyncIterator[HostTurn]:
        self._refuse(label, subject)
        if self.waiting >= self.max_queue:
            wait = max(1.0, (self.waiting + 1) * self.gap)
            raise Unavailable(
                f"{label} ({self.shown_host}) has {self.waiting} requests waiting already "
                f"(PAPERANCHOR_MAX_QUEUE); {subject} can be asked for in about {wait:.0f} s",
                retry_after=wait,
            )
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        try:
            self._refuse(label, subject)  # the host may have gone down while we waited
            now = time.monotonic()
            if self._ready_at > now:
                await asyncio.sleep(self._ready_at - now)
            async with AsyncExitStack() as stack:
                try:
                    turn = await stack.enter_async_context(
                        self.coordination.host_turn(self.host, self.gap)
                    )
                except HostPaused as paused:
                    seconds = min(paused.seconds, MAX_PAUSE_S)
                    self._blocked_until = time.monotonic() + seconds
                    raise _paused(label, subject, seconds) from None
                try:
                    yield turn
                finally:
                    # Measured from the end of a request, so that arrivals at the host are at
                    # least `gap` apart whatever the network's latency.
                    self._ready_at = max(self._ready_at, time.monotonic() + turn.gap)
        finally:
            self._lock.release()

    def turn_in(self) -> float:
        """Seconds until the next request would go out: a gap for the one in flight and each in
        line, else what is left of the gap after the last. Another process's turn in Redis is
        not counted, nor a host marked down (a request to it fails at once)."""
        if self._lock.locked():
            return (self.waiting + 1) * self.gap
        return max(0.0, self._ready_at - time.monotonic())

    def _refuse(self, label: str, subject: str) -> None:
        now = time.monotonic()
        if self._blocked_until > now:
            raise _paused(label, subject, self._blocked_until - now)
        if self._down_until > now:
            raise self.unreachable(label, subject)

    def reached(self) -> None:
        """A connection to the host was made."""
        self.unconnected = 0
        self._reached_at = time.monotonic()

    def reached_recently(self) -> bool:
        """Whether a connection was made within the last `down_s` (a probe is not repeated)."""
        return time.monotonic() - self._reached_at < self.down_s

    def down_for(self) -> float:
        """Seconds until the host is tried again (0 when it is not marked down)."""
        return max(0.0, self._down_until - time.monotonic())

    def mark_down(self, reason: str) -> None:
        """Leave the host alone for `down_s`: it cannot be reached, for `reason`."""
        self._down_until = max(self._down_until, time.monotonic() + self.down_s)
        self._down_reason = reason
        self.unconnected = 0
        log.warning(
            "%s is unreachable (%s); not asked again for %g s", self.shown_host, reason, self.down_s
        )

    def unreachable(self, label: str, subject: str) -> Unreachable:
        """The error of a request to this host while it is marked down (or was just found so)."""
        left = self.down_for()
        later = f"; {subject} can be fetched again in {math.ceil(left)} s" if left > 0 else ""
        return Unreachable(
            f"{label} ({self.shown_host}) is unreachable ({self._down_reason}){later}",
            retry_after=left if left > 0 else None,
        )

    async def defer(self, seconds: float) -> None:
        seconds = min(seconds, MAX_PAUSE_S)
        self._ready_at = max(self._ready_at, time.monotonic() + seconds)
        await self.coordination.defer_host(self.host, seconds)

    async def block(self, seconds: float) -> None:
        seconds = min(seconds, MAX_PAUSE_S)
        self._blocked_until = max(self._blocked_until, time.monotonic() + seconds)
        await self.coordination.pause_host(self.host, seconds)


def _paused(label: str, subject: str, wait: float) -> Unavailable:
    return Unavailable(
        f"{label} asked us to pause; {subject} can be fetched in {wait:.0f} s", retry_after=wait
    )


# -- pure helpers ------------------------------------------------------------------------------


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date), at most `MAX_PAUSE_S`.

    None for anything else (a negative or fractional number, `inf`, a word): ignored.
    """
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        if not _DELTA_SECONDS.fullmatch(value):
            return MAX_PAUSE_S  # hundreds of digits: a long time, and no float overflow
        return min(float(value), MAX_PAUSE_S)
    if len(value) > 64:  # an HTTP date is 29 characters
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return min(MAX_PAUSE_S, max(0.0, (when - datetime.now(UTC)).total_seconds()))


def _retried(status: int) -> bool:
    return status == 429 or status >= 500


def _connect_timeout(settings: Settings) -> float:
    return min(CONNECT_TIMEOUT_S, settings.timeout_s / 2)


def _coding(headers: httpx.Headers, label: str, subject: str) -> int | None:
    """zlib's `wbits` for the body's one content coding, None for identity; refuses the rest."""
    codings = [
        token.strip().lower()
        for value in headers.get_list("content-encoding")
        for token in value.split(",")
    ]
    codings = [coding for coding in codings if coding and coding != "identity"]
    if not codings:
        return None
    if len(codings) > 1:
        raise UpstreamError(
            f"{label} answered {subject} with stacked encodings ({shown(', '.join(codings))}); "
            "only one layer is accepted"
        )
    if codings[0] not in _CODINGS:
        raise UpstreamError(
            f"{label} answered {subject} with the encoding {shown(codings[0])}, not gzip"
        )
    return _CODINGS[codings[0]]


class _TooLarge(Exception):
    pass


async def _read(response: httpx.Response, wbits: int | None, limit: int, *, prefix: bool) -> bytes:
    """The decoded body, at most `limit` bytes: cut there when `prefix`, else `_TooLarge`.

    A prefix (an error page) is read for what it says: a damaged one is read as far as it goes.
    """
    body = bytearray()
    inflater = None if wbits is None else _Inflater(wbits)
    try:
        async for raw in response.aiter_raw():
            pieces = [raw] if inflater is None else inflater.pieces(raw, limit - len(body) + 1)
            for piece in pieces:
                body += piece
                if len(body) > limit:
                    if prefix:
                        return bytes(body[:limit])
                    raise _TooLarge
                if inflater is not None:
                    await asyncio.sleep(0)  # a turn for the event loop between decoding steps
    except zlib.error:
        if not prefix:
            raise
        return bytes(body)
    if inflater is not None and not inflater.ended and not prefix:
        raise _Broken("the compressed body stops before its end")
    return bytes(body)


class _Inflater:
    """A gzip or deflate stream decoded in pieces of at most `DECODE_STEP` bytes."""

    def __init__(self, wbits: int) -> None:
        self._wbits = wbits
        self._decoder = zlib.decompressobj(wbits)

    @property
    def ended(self) -> bool:
        return self._decoder.eof

    def pieces(self, data: bytes, room: int) -> Iterator[bytes]:
        """Decoded pieces of `data`, stopping once more than `room` bytes came out."""
        produced = 0
        while produced <= room:
            if self._decoder.eof:
                data = self._decoder.unused_data + data
                if not data.strip(b"\0"):
                    return  # nothing, or the zero padding some servers add
                # Another gzip member follows (concatenated, not stacked): decode it too.
                self._decoder = zlib.decompressobj(self._wbits)
            piece = self._decoder.decompress(data, DECODE_STEP)
            data = self._decoder.unconsumed_tail
            produced += len(piece)
            if piece:
                yield piece
            # A full piece may leave output pending inside zlib even with no input left.
            if not data and len(piece) < DECODE_STEP and not self._decoder.eof:
                return
            if not data and self._decoder.eof and not self._decoder.unused_data:
                return


_LOCATION = "paperanchor.location"


async def _set_location_aside(response: httpx.Response) -> None:
    """Hide a redirect's `Location` from httpx, which parses it to build the next request even
    when redirects are not followed, and raises on one that is not a URL (`http:\\\\host\\x`)
    before the caller sees the answer; the caller judges the Location instead."""
    locations = response.headers.get_list("location")
    if locations:
        del response.headers["location"]
        response.extensions[_LOCATION] = locations


def _headers(response: httpx.Response) -> httpx.Headers:
    """The answer's headers as the upstream sent them (its Location back in place)."""
    locations = response.extensions.get(_LOCATION)
    if not locations:
        return response.headers
    return httpx.Headers([*response.headers.multi_items(), *(("location", v) for v in locations)])


def _content_length(response: httpx.Response) -> int | None:
    try:
        return int(response.headers["content-length"])
    except (KeyError, ValueError):
        return None


def _too_large(label: str, subject: str, limit: int, limit_name: str) -> PaperAnchorError:
    return TooLarge(f"{label}'s page for {subject} is larger than {limit_name} ({limit} bytes)")


def _shown_host(scheme: str, host: str | None, port: int | None) -> str:
    return f"{scheme}://{host or ''}{f':{port}' if port else ''}"


def _describe(exc: BaseException) -> str:
    return shown(str(exc) or type(exc).__name__)
