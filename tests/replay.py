"""A replay upstream: arXiv-like and ar5iv-like pages served on a loopback port.

It is a raw asyncio HTTP/1.1 server in a background thread rather than an ASGI app, because
the faults it scripts must be byte-exact: a Content-Length larger than the body sent, a body
trickled slower than a timeout, a stream past the size cap. ASGI servers refuse to send such
responses. Every response closes its connection, so each upstream request is one connection.

    arXiv   {base_url}/html/<ref>        (PAPERANCHOR_ARXIV_HTML_URL = replay.arxiv_url)
    ar5iv   {base_url}/ar5iv/html/<ref>  (PAPERANCHOR_AR5IV_URL = replay.ar5iv_url)

Unscripted paths follow the real services: the corpus pages below are served, arXiv answers
other ids 404 ("No HTML for …" for the ar5iv-only papers), ar5iv redirects unknown ids to
https://arxiv.org/abs/<ref> (another host: a client must not follow it).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ARXIV = "/html"
AR5IV = "/ar5iv/html"
HTML = (("Content-Type", "text/html; charset=utf-8"),)

# Papers the replay serves without a script: arXiv id -> (corpus file, arXiv's latest version).
ARXIV_PAPERS = {"2501.11120": ("2501.11120v1.arxiv.html", 1)}
AR5IV_PAPERS = {"1808.08002": "1808.08002.ar5iv.html", "2307.00235": "2307.00235.ar5iv.html"}


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer. `body` is sent in `chunk_size` pieces, `chunk_delay` s apart."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = HTML
    declared_length: int | None = None  # the Content-Length sent, when it lies
    chunked: bool = False  # Transfer-Encoding: chunked, no Content-Length
    unframed: bool = False  # neither: the body ends where the connection does
    chunk_size: int = 64 * 1024
    chunk_delay: float = 0.0


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    at: float  # time.monotonic() when the request head had arrived
    headers: dict[str, str] = field(default_factory=dict)


_REASONS = {
    200: "OK",
    301: "Moved Permanently",
    302: "Found",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


# -- replies ---------------------------------------------------------------------------------


def page(body: bytes) -> Reply:
    return Reply(200, body)


def redirect(location: str, status: int = 302) -> Reply:
    return Reply(status, b"", (("Location", location), *HTML))


def no_html(paper: str) -> Reply:
    """arXiv's answer for a paper it has no HTML rendering of."""
    body = (
        f"<!DOCTYPE html><html><head><title>No HTML for '{paper}'</title></head><body>"
        f"<h1>No HTML for '{paper}'</h1><p>HTML is not available for the source.</p>"
        "</body></html>"
    ).encode()
    return Reply(404, body)


def not_found() -> Reply:
    return Reply(404, b"<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>")


def status(code: int, retry_after: str | float | None = None) -> Reply:
    headers = HTML if retry_after is None else (("Retry-After", str(retry_after)), *HTML)
    return Reply(code, f"<html><body>{code}</body></html>".encode(), headers)


def empty() -> Reply:
    return Reply(200, b"")


def truncated(body: bytes, sent: int) -> Reply:
    """Declares the whole body's length, sends `sent` bytes of it, then hangs up."""
    return Reply(200, body[:sent], declared_length=len(body))


def random_bytes(size: int, seed: int = 7) -> Reply:
    return Reply(200, random.Random(seed).randbytes(size))


def slow(body: bytes, chunk_size: int, delay: float) -> Reply:
    return Reply(200, body, chunk_size=chunk_size, chunk_delay=delay)


def unframed(body: bytes) -> Reply:
    """A 200 without Content-Length or chunking: the client cannot tell a cut body from a whole."""
    return Reply(200, body, unframed=True)


def encoded(body: bytes, encoding: str, code: int = 200) -> Reply:
    """`body` as sent (already encoded) under `Content-Encoding: encoding`."""
    return Reply(code, body, (("Content-Encoding", encoding), *HTML))


def huge(size: int) -> Reply:
    """An HTML page of `size` bytes, streamed chunked, so no Content-Length warns the client."""
    head = b"<!DOCTYPE html><html><body><article class='ltx_document'>"
    filler = b"<p class='ltx_p'>" + b"x" * 1000 + b"</p>\n"
    body = head + filler * (size // len(filler) + 1)
    return Reply(200, body[:size], chunked=True)


# -- the server ------------------------------------------------------------------------------


class Replay:
    """The upstream server; tests reach it through the `replay` fixture."""

    def __init__(self, corpus_html: Path) -> None:
        self.corpus_html = corpus_html
        self.port = 0
        self._lock = threading.Lock()
        self._scripts: dict[str, list[Reply]] = {}
        self._log: list[Request] = []
        self._pages: dict[str, bytes] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def arxiv_url(self) -> str:
        return self.base_url + ARXIV

    @property
    def ar5iv_url(self) -> str:
        return self.base_url + AR5IV

    def corpus_page(self, name: str) -> bytes:
        """A corpus file's bytes, read in place once."""
        with self._lock:
            if name not in self._pages:
                self._pages[name] = (self.corpus_html / name).read_bytes()
            return self._pages[name]

    def script(self, path: str, *replies: Reply) -> None:
        """Answer `path` with `replies` in order; the last one repeats forever."""
        if not replies:
            raise ValueError("script() needs at least one reply")
        with self._lock:
            self._scripts[path] = list(replies)

    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._log)

    def paths(self) -> list[str]:
        return [request.path for request in self.requests]

    def count(self, path: str | None = None) -> int:
        return sum(1 for request in self.requests if path is None or request.path == path)

    def reset(self) -> None:
        with self._lock:
            self._scripts.clear()
            self._log.clear()

    def environ(self, **overrides: Any) -> dict[str, str]:
        """PAPERANCHOR_* variables pointing a paperanchor process at this replay."""
        env = {
            "PAPERANCHOR_ARXIV_HTML_URL": self.arxiv_url,
            "PAPERANCHOR_AR5IV_URL": self.ar5iv_url,
            "PAPERANCHOR_MIN_GAP_S": "0",
            "PAPERANCHOR_MAX_RETRIES": "2",
            "PAPERANCHOR_TIMEOUT_S": "5",
            "PAPERANCHOR_BACKOFF_S": "0.01",
            "PAPERANCHOR_BACKOFF_CAP_S": "2",
        }
        env.update({f"PAPERANCHOR_{key.upper()}": str(value) for key, value in overrides.items()})
        return env

    def settings(self, cache_dir: Path, **overrides: Any) -> Any:
        """Settings pointing at this replay, fast politeness, no `.env`; `overrides` win."""
        from paperanchor.settings import Settings

        values: dict[str, Any] = {
            "arxiv_html_url": self.arxiv_url,
            "ar5iv_url": self.ar5iv_url,
            "cache_dir": cache_dir,
            "local_dir": None,
            "offline": False,
            "cache_url": None,
            "min_gap_s": 0,
            "max_retries": 2,
            "timeout_s": 5,
            "backoff_s": 0.01,
            "backoff_cap_s": 2,
            "latest_ttl_s": 86400,
        }
        values.update(overrides)
        return Settings(_env_file=None, **values)

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        ready = threading.Event()
        loop = self._loop = asyncio.new_event_loop()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            self._server = loop.run_until_complete(
                asyncio.start_server(self._accept, "127.0.0.1", 0)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()

        self._thread = threading.Thread(target=serve, name="replay-upstream", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the replay upstream did not start")

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
                await self._server.wait_closed()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        self._loop = self._thread = None

    # -- serving ------------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve_one(reader, writer)
        except (ConnectionError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away: that is one of the things being tested
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        arrived = time.monotonic()
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        with self._lock:
            self._log.append(Request(method, target, arrived, headers))
            queue = self._scripts.get(target)
            reply = (queue.pop(0) if len(queue) > 1 else queue[0]) if queue else None
        if reply is None:
            reply = self._default(target)
        await self._send(writer, reply, head_only=method == "HEAD")

    async def _send(self, writer: asyncio.StreamWriter, reply: Reply, *, head_only: bool) -> None:
        lines = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
        lines += [f"{name}: {value}" for name, value in reply.headers]
        if reply.chunked:
            lines.append("Transfer-Encoding: chunked")
        elif reply.unframed:
            pass
        else:
            length = reply.declared_length if reply.declared_length is not None else len(reply.body)
            lines.append(f"Content-Length: {length}")
        lines.append("Connection: close")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        if head_only:
            return
        for chunk in _chunks(reply.body, reply.chunk_size):
            if reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            if writer.is_closing():
                return
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if reply.chunked else chunk)
            await writer.drain()
        if reply.chunked:
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    def _default(self, target: str) -> Reply:
        path = target.split("?", 1)[0]
        if path.startswith(AR5IV + "/"):
            ref = path[len(AR5IV) + 1 :]
            if ref in AR5IV_PAPERS:
                return page(self.corpus_page(AR5IV_PAPERS[ref]))
            return redirect(f"https://arxiv.org/abs/{ref}", 301)
        if path.startswith(ARXIV + "/"):
            ref = path[len(ARXIV) + 1 :].rstrip("/")
            for paper, (name, latest) in ARXIV_PAPERS.items():
                if ref == paper:
                    return redirect(f"{ARXIV}/{paper}v{latest}")
                if ref == f"{paper}v{latest}":
                    return page(self.corpus_page(name))
            if re.sub(r"v\d+$", "", ref) in AR5IV_PAPERS:
                return no_html(ref)
        return not_found()


def _chunks(body: bytes, size: int) -> Iterable[bytes]:
    for start in range(0, len(body), max(1, size)):
        yield body[start : start + size]


# -- client-side helpers for tests -----------------------------------------------------------


async def load(settings: Any, text: str) -> Any:
    """Load one paper through a fresh Library (real parser) over the settings' cache, then close."""
    from paperanchor.library import Library
    from paperanchor.parse import PARSER_VERSION, parse_document
    from paperanchor.refs import parse_ref

    library = Library(settings, parse=parse_document, parser_version=PARSER_VERSION)
    try:
        return await library.load(parse_ref(text))
    finally:
        await library.aclose()


def cache_entries(cache_dir: Path) -> dict[str, float | None]:
    """Live keys of the on-disk cache with their remaining lifetime in s (None: forever)."""
    import diskcache

    entries: dict[str, float | None] = {}
    with diskcache.Cache(str(cache_dir)) as cache:
        for key in cache.iterkeys():
            value, expires = cache.get(key, default=None, expire_time=True)
            if value is not None:
                entries[key] = None if expires is None else expires - time.time()
    return entries
