"""uvicorn's h11 protocol with what it lacks against hostile clients, and the options of `serve`.

uvicorn (0.54, h11) arms no timer when a connection opens and cancels its keep-alive timer on
every byte received, so a client that sends nothing, or one header byte a second, holds its
connection forever; 10,000 such sockets reached the open-file limit, after which no request got
in. uvicorn's own bound, `limit_concurrency`, counts open connections too, so those same sockets
would make it answer every real request 503. Here instead:

- **a request deadline**: a client has `PAPERANCHOR_REQUEST_TIMEOUT_S` to send one whole request
  (head and body), counted from its connection or from the end of the previous answer, then the
  connection is closed; an idle keep-alive connection is closed after `PAPERANCHOR_KEEP_ALIVE_S`;
- **a connection cap** (`PAPERANCHOR_MAX_CONNECTIONS`, lowered to fit the open-file limit): a
  connection past it closes the one that has waited longest for its request among those of the
  client address with the most connections waiting, so half-open sockets from one address
  cannot lock out another client (`/healthz`); when every connection has a request being
  answered, the new one is closed. Each connection carries one request at a time, so this also
  bounds the requests in progress;
- **a bounded request head** (`MAX_HEAD_BYTES`), answered 400 and drained before closing;
- **TCP_NODELAY on every connection**: with `--workers N`, uvicorn hands its workers a listening
  socket made with protocol number 0, and asyncio sets TCP_NODELAY only on sockets whose protocol
  is IPPROTO_TCP; keep-alive answers then waited for the client's delayed ACK (22 requests/s on
  one connection instead of thousands, measured with wrk on /healthz).

`GuardedHttp` relies on H11Protocol's internals (the methods it overrides, `conn`, `client`,
`server_state`) as uvicorn 0.54 has them, and uvicorn is pinned to 0.54 for it (pyproject.toml);
uvicorn has no public hook for the deadline, the cap or TCP_NODELAY. tests/api/test_sdk_hooks.py
checks each method's signature and reads TCP_NODELAY from the server's side of a connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
import weakref
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from paperanchor.settings import Settings, get_settings

logger = logging.getLogger(__name__)

# A request head (request line and headers) may be this long. h11 applies its limit (16 KiB by
# default) only to a head that is still incomplete when a read ends, so a 100 kB request line
# passed when it arrived in one read and was refused with a reset when the machine was busy
# enough to split it. 128 KiB admits the bad-input table's 100 kB values in any number of reads,
# and costs at most 128 MiB over 1,000 connections all sending huge heads.
MAX_HEAD_BYTES = 128 * 1024
# Open files the process needs besides its client connections: a `paperanchor serve` on Redis
# held 10 after answering a local paper and an upstream one (ls /proc/PID/fd); the rest is room
# for upstream connections in flight, local files being read, the disk cache's SQLite files.
OTHER_FILES = 128
# asyncio accepts up to `backlog` connections in one turn of the loop before any is looked at,
# so the cap and the backlog share what the open-file limit leaves; uvicorn's default backlog.
MAX_BACKLOG = 2048
# A connection past the cap is accepted in one turn of asyncio's loop, its transport built in
# the next, looked at (connection_made) in the third and its file closed in the fourth; each of
# the three turns before may accept another `backlog`. So three backlogs fit in what the cap
# leaves: a backlog of 192 beside a cap of 192 (limit 512) ran the server out of files.
ACCEPT_TURNS = 3
# After answering a bad request head, how long its remaining bytes are read and dropped before
# the connection closes: closing with unread bytes makes the kernel send a reset, which can
# reach the client before the 400 does.
LINGER_S = 2.0


class _Connections:
    """What the protocols of one server share: how many connections it holds, and those that
    wait for their client, by client address, the longest-waiting first."""

    def __init__(self) -> None:
        self.held = 0
        self.waiting: dict[str, dict[GuardedHttp, None]] = {}

    def wait(self, connection: GuardedHttp) -> None:
        self.waiting.setdefault(connection.address, {})[connection] = None

    def done(self, connection: GuardedHttp) -> None:
        waiting = self.waiting.get(connection.address)
        if waiting is None:
            return
        waiting.pop(connection, None)
        if not waiting:
            del self.waiting[connection.address]

    def longest_waiting(self) -> GuardedHttp | None:
        """The longest-waiting connection of the address with the most connections waiting: a
        flood from one address makes room among its own sockets, not a monitor's."""
        if not self.waiting:
            return None
        busiest = max(self.waiting.values(), key=len)
        return next(iter(busiest))


_SHARED: weakref.WeakKeyDictionary[ServerState, _Connections] = weakref.WeakKeyDictionary()


class GuardedHttp(H11Protocol):
    """uvicorn's h11 protocol with the request deadline, the connection cap and TCP_NODELAY."""

    request_timeout_s: ClassVar[float] = 10.0
    max_connections: ClassVar[int] = 1000

    @classmethod
    def configured(cls, request_timeout_s: float, max_connections: int) -> type[GuardedHttp]:
        """This protocol with its limits set (uvicorn builds one per connection from the class)."""
        limits = {"request_timeout_s": request_timeout_s, "max_connections": max_connections}
        return type(cls.__name__, (cls,), limits)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection; past the limit, close the one that waited longest (or this)."""
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._held = False
        self._lingering = False
        self.address = self.client[0] if self.client else ""
        shared = _SHARED.setdefault(self.server_state, _Connections())
        self._shared = shared
        if shared.held >= self.max_connections:
            longest = shared.longest_waiting()
            if longest is None:
                logger.error(
                    "%d connections, each with a request in progress "
                    "(PAPERANCHOR_MAX_CONNECTIONS): closing new connections",
                    shared.held,
                )
                transport.close()
                return
            logger.warning(
                "%d connections (PAPERANCHOR_MAX_CONNECTIONS): closing the ones that waited "
                "longest for their request, of the address with the most",
                shared.held,
            )
            longest._close()
        shared.held += 1
        self._held = True
        self._track()

    def data_received(self, data: bytes) -> None:
        """Feed the bytes to uvicorn's parser and track the request's deadline."""
        if self._lingering:
            return  # the rest of a refused request: read and dropped
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        """Track the connection's deadline once its response is sent."""
        super().on_response_complete()
        self._track()

    def connection_lost(self, exc: Exception | None) -> None:
        """Release the connection's place in the limit."""
        self._release()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's 400 for a head h11 refuses, with its length; the rest is drained, not reset."""
        body = msg.encode("ascii")
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        # Its file is open until it closes, so it stays counted in the cap, among the connections
        # that may be closed to make room (a flood of bad heads from sockets that never close
        # held one uncounted file each for LINGER_S and ran the server out of files).
        self._lingering = True
        self._disarm()
        if self._held:
            self._shared.wait(self)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)

    def _track(self) -> None:
        """Arm the deadline while the server waits for the client's request, disarm it once the
        whole request is in."""
        if not self._held or self._lingering or self.transport.is_closing():
            return
        state = self.conn.their_state
        if state in (h11.IDLE, h11.SEND_BODY):
            if self._deadline is None:
                self._deadline = self.loop.call_later(self.request_timeout_s, self._close)
                self._shared.wait(self)
        elif self._deadline is not None:
            self._disarm()
            self._shared.done(self)

    def _close(self) -> None:
        self._release()
        if not self.transport.is_closing():
            self.transport.close()

    def _disarm(self) -> None:
        """Cancel the request deadline, if it is armed."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _release(self) -> None:
        self._disarm()
        self._shared.done(self)
        if self._held:
            self._held = False
            self._shared.held -= 1


class EnvHttp(GuardedHttp):
    """The protocol of `--workers N`: each worker process reads the limits from the environment,
    as it builds its app (a class built at run time does not reach a spawned process)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        settings = get_settings()
        self.request_timeout_s = settings.request_timeout_s  # type: ignore[misc]
        self.max_connections = connection_budget(settings.max_connections)[0]  # type: ignore[misc]
        super().__init__(*args, **kwargs)


def raise_open_file_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; the limit now in force.

    Python and uvicorn keep the soft limit they are given, often 1,024, though the hard limit
    lets an unprivileged process go much higher (Go's runtime raises it the same way)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    if soft != resource.RLIM_INFINITY and soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connection_budget(max_connections: int) -> tuple[int, int]:
    """(connections, backlog) that fit in the open-file limit with OTHER_FILES to spare."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    spare = max(32, soft - OTHER_FILES)
    connections = min(max_connections, spare // 2)
    return connections, max(16, min(MAX_BACKLOG, (spare - connections) // ACCEPT_TURNS))


def server_options(settings: Settings, *, workers: int = 1) -> dict[str, Any]:
    """uvicorn's keyword arguments for these settings (`paperanchor serve` and the tests)."""
    connections, backlog = connection_budget(settings.max_connections)
    if connections < settings.max_connections:
        logger.warning(
            "PAPERANCHOR_MAX_CONNECTIONS=%d lowered to %d to fit the open-file limit (ulimit -n)",
            settings.max_connections,
            connections,
        )
    http: type[GuardedHttp] | str = (
        GuardedHttp.configured(settings.request_timeout_s, connections)
        if workers == 1
        else f"{__name__}:EnvHttp"
    )
    return {
        "http": http,
        "timeout_keep_alive": settings.keep_alive_s,
        "backlog": backlog,
        "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
        # uvicorn believes X-Forwarded-For from loopback by default: a client on the same host,
        # or any client behind a proxy there, could claim any address (contract §2)
        "proxy_headers": settings.trust_proxy,
        "server_header": False,
    }
