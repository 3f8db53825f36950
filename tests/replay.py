"""A replay upstream: arXiv-like and ar5iv-like pages served on a loopback port.

It is a raw asyncio HTTP/1.1 server in a background thread rather than an ASGI app, because
the faults it scripts must be byte-exact: a Content-Length larger than the body sent, a body
trickled slower than a timeout, a stream past the size cap. ASGI servers refuse to send such
responses. Every response closes its connection, so each upstream request is one connection.

    arXiv   {base_url}/html/<ref>        (PAPERANCHOR_ARXIV_HTML_URL = replay.arxiv_url)
    ar5iv   {base_url}/ar5iv/html/<ref>  (PAPERANCHOR_AR5IV_URL = replay.ar5iv_url)
    PDF     {base_url}/pdf/<ref>         (PAPERANCHOR_ARXIV_PDF_URL = replay.pdf_url)
    listing {base_url}/abs/<ref>         (PAPERANCHOR_ARXIV_ABS_URL = replay.abs_url)
    arXiv API         {base_url}/api/query?…   (PAPERANCHOR_ARXIV_API_URL = replay.arxiv_api_url)
    Semantic Scholar  {base_url}/graph/v1/…    (PAPERANCHOR_S2_URL = replay.s2_url)

The two APIs answer what the corpus recorded (corpus/atom and corpus/s2, see `Recordings`),
with the recorded status, matched on the request's path and query; an unrecorded request
under them is a 404 that says so. After `answer_ids_from_recordings()` (until `reset()`), an
arXiv id_list request that no recording answers gets a feed of the recorded entries of those
ids, as arXiv answers any ids it has (an id never recorded is left out, as arXiv leaves out
an id it does not have).

Unscripted paths follow the real services: the corpus pages below are served, arXiv answers
other ids 404 ("No HTML for …" for the ar5iv-only papers and the corpus PDFs' papers), ar5iv
redirects unknown ids to https://arxiv.org/abs/<ref> (another host: a client must not follow
it). The PDFs of corpus/pdf are served as arXiv serves a PDF: at the id with its version
(`/pdf/1804.07821v1`) and, as the latest, at the bare id (`/pdf/1804.07821`, no redirect: the
version is in the PDF's margin stamp); other ids are a 404. The saved listings of corpus/abs
are served at `/abs/<id>` and `/abs/<id>vN`, as arxiv.org serves a paper's abs page.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import random
import re
import threading
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

ARXIV = "/html"
AR5IV = "/ar5iv/html"
PDF = "/pdf"
ABS = "/abs"
ARXIV_API = "/api/query"
S2_API = "/graph/v1"
HTML = (("Content-Type", "text/html; charset=utf-8"),)
PDF_TYPE = (("Content-Type", "application/pdf"),)

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
    400: "Bad Request",
    403: "Forbidden",
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


def pdf(body: bytes) -> Reply:
    """A PDF as arXiv serves one."""
    return Reply(200, body, PDF_TYPE)


def as_pdf(reply: Reply) -> Reply:
    """`reply` (a cut body, a trickle, random bytes …) served as `application/pdf`."""
    return replace(reply, headers=PDF_TYPE)


def huge_pdf(size: int, *, declared: bool = False) -> Reply:
    """A PDF of `size` bytes (a header, then filler), streamed chunked, or with its length."""
    body = b"%PDF-1.5\n" + b"%" + b"x" * 1023 + b"\n"
    body = (body * (size // len(body) + 1))[:size]
    return Reply(200, body, PDF_TYPE, chunked=not declared)


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
        self.corpus_pdf = corpus_html.parent / "pdf"
        self.port = 0
        self._lock = threading.Lock()
        self._scripts: dict[str, list[Reply]] = {}
        self._log: list[Request] = []
        self._pages: dict[str, bytes] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread: threading.Thread | None = None
        self._recordings: Recordings | None = None
        self._pdfs: dict[str, str] | None = None
        self._entries_answer = False

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def arxiv_api_url(self) -> str:
        return self.base_url + ARXIV_API

    @property
    def s2_url(self) -> str:
        return self.base_url + S2_API

    @property
    def recordings(self) -> Recordings:
        """The recorded arXiv API and Semantic Scholar answers, indexed once."""
        with self._lock:
            if self._recordings is None:
                self._recordings = Recordings(self.corpus_html.parent)
            return self._recordings

    @property
    def arxiv_url(self) -> str:
        return self.base_url + ARXIV

    @property
    def ar5iv_url(self) -> str:
        return self.base_url + AR5IV

    @property
    def pdf_url(self) -> str:
        return self.base_url + PDF

    @property
    def abs_url(self) -> str:
        return self.base_url + ABS

    def corpus_pdfs(self) -> dict[str, str]:
        """The corpus PDFs of whole papers served by default: arXiv id -> idv (each file is
        named by the version stamped in its margin)."""
        names = sorted(path.stem for path in self.corpus_pdf.glob("*.pdf"))
        return {re.sub(r"v\d+$", "", name): name for name in names}

    def corpus_pdf_bytes(self, name: str) -> bytes:
        """A file of corpus/pdf (`excerpts/…` included), read in place once."""
        return self._read_once(self.corpus_pdf / name)

    def corpus_page(self, name: str) -> bytes:
        """A corpus file's bytes, read in place once."""
        return self._read_once(self.corpus_html / name)

    def _read_once(self, path: Path) -> bytes:
        with self._lock:
            key = str(path)
            if key not in self._pages:
                self._pages[key] = path.read_bytes()
            return self._pages[key]

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
            self._entries_answer = False

    def answer_ids_from_recordings(self) -> None:
        """Answer unrecorded id_list requests with the recorded entries of the ids (module doc)."""
        with self._lock:
            self._entries_answer = True

    def discovery(self) -> dict[str, Any]:
        """Settings that point discovery (the arXiv API, Semantic Scholar) at this replay."""
        return {
            "arxiv_api_url": self.arxiv_api_url,
            "s2_url": self.s2_url,
            "arxiv_api_gap_s": 0,
            "s2_gap_s": 0,
        }

    def environ(self, *, discovery: bool = False, **overrides: Any) -> dict[str, str]:
        """PAPERANCHOR_* variables pointing a paperanchor process at this replay.

        Discovery is off (its URLs empty) unless `discovery`: an outline would otherwise ask
        the API for its metadata, and tests that count upstream requests would count those.
        """
        upstreams = self.discovery() if discovery else {"arxiv_api_url": "", "s2_url": ""}
        env = {
            "PAPERANCHOR_ARXIV_HTML_URL": self.arxiv_url,
            "PAPERANCHOR_AR5IV_URL": self.ar5iv_url,
            "PAPERANCHOR_ARXIV_PDF_URL": self.pdf_url,
            "PAPERANCHOR_ARXIV_ABS_URL": self.abs_url,
            **{f"PAPERANCHOR_{key.upper()}": str(value) for key, value in upstreams.items()},
            "PAPERANCHOR_MIN_GAP_S": "0",
            "PAPERANCHOR_MAX_RETRIES": "2",
            "PAPERANCHOR_TIMEOUT_S": "5",
            "PAPERANCHOR_BACKOFF_S": "0.01",
            "PAPERANCHOR_BACKOFF_CAP_S": "2",
        }
        env.update({f"PAPERANCHOR_{key.upper()}": str(value) for key, value in overrides.items()})
        return env

    def settings(self, cache_dir: Path, *, discovery: bool = False, **overrides: Any) -> Any:
        """Settings pointing at this replay, fast politeness, no `.env`; `overrides` win.

        Discovery is off unless `discovery`, as in `environ`.
        """
        from paperanchor.settings import Settings

        values: dict[str, Any] = {
            "arxiv_html_url": self.arxiv_url,
            "ar5iv_url": self.ar5iv_url,
            "arxiv_pdf_url": self.pdf_url,
            "arxiv_abs_url": self.abs_url,
            **(self.discovery() if discovery else {"arxiv_api_url": "", "s2_url": ""}),
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
        length = headers.get("content-length", "0")
        body = await reader.readexactly(int(length)) if length.isdigit() and int(length) else b""
        with self._lock:
            self._log.append(Request(method, target, arrived, headers))
            queue = self._scripts.get(target)
            reply = (queue.pop(0) if len(queue) > 1 else queue[0]) if queue else None
        if reply is None and target.startswith((ARXIV_API, S2_API + "/")):
            reply = self.recordings.reply(method, target, body)
            if reply.status == 404 and self._entries_answer:
                reply = self.recordings.entries_reply(target) or reply
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
            if re.sub(r"v\d+$", "", ref) in AR5IV_PAPERS or self._pdf_of(ref):
                return no_html(ref)
        if path.startswith(ABS + "/"):
            paper = re.sub(r"v\d+$", "", path[len(ABS) + 1 :])
            listing = self.corpus_html.parent / "abs" / f"{paper}.html"
            if "/" not in paper and listing.is_file():
                return page(self._read_once(listing))
        if path.startswith(PDF + "/"):
            name = self._pdf_of(path[len(PDF) + 1 :].removesuffix(".pdf"))
            if name is not None:
                return pdf(self.corpus_pdf_bytes(f"{name}.pdf"))
        return not_found()

    def _pdf_of(self, ref: str) -> str | None:
        """The corpus PDF arXiv would serve for `ref`: its own version, or the latest."""
        with self._lock:
            if self._pdfs is None:
                self._pdfs = self.corpus_pdfs()
            pdfs = self._pdfs
        latest = pdfs.get(ref)
        return latest if latest is not None else (ref if ref in pdfs.values() else None)


# -- recorded API answers --------------------------------------------------------------------

# arXiv treats an absent parameter as its default: a request and a recording that differ only
# there ask arXiv the same thing.
_ARXIV_DEFAULTS = {
    "search_query": "",
    "id_list": "",
    "start": "0",
    "max_results": "10",
    "sortBy": "relevance",
    "sortOrder": "descending",
}
_ECHO_LINK = re.compile(rb'<link href="([^"]*/api/query[^"]*)"')


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recorded answer: where it was asked, what came back, from which corpus file."""

    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    request_body: str | None
    status: int
    content_type: str
    file: Path
    # the feed's own echo of its request omits the sort: such a recording matches any sort
    sort_recorded: bool = True

    @property
    def target(self) -> str:
        """The request target to send for this recording (path and encoded query)."""
        from urllib.parse import quote, urlencode

        query = urlencode(self.query, quote_via=quote, safe=":,/")
        return quote(self.path, safe="/:") + (f"?{query}" if query else "")

    def reply(self) -> Reply:
        return Reply(self.status, self.file.read_bytes(), (("Content-Type", self.content_type),))


class Recordings:
    """corpus/atom and corpus/s2 indexed by request: each `.meta.json`'s method, URL, status.

    An Atom file without a `.meta.json` is indexed by the request its feed echoes (its
    `<link href>`), answered 200; that echo leaves out sortBy, so it matches any sort. An
    id_list request without a search_query also matches a recording of the same ids whose
    max_results differs, when both cover every id: arXiv's answer then depends on the ids alone.
    """

    def __init__(self, corpus: Path) -> None:
        self.corpus = corpus
        self._entries: dict[str, list[bytes]] | None = None
        self.all: list[Recorded] = []
        for directory in (corpus / "atom", corpus / "s2"):
            if directory.is_dir():
                for path in sorted(directory.iterdir()):
                    recorded = self._read(path)
                    if recorded is not None:
                        self.all.append(recorded)

    def _read(self, path: Path) -> Recorded | None:
        if path.name.endswith(".meta.json") or path.suffix not in (".xml", ".json"):
            return None
        meta_path = path.with_name(path.name.rsplit(".", 1)[0] + ".meta.json")
        if meta_path.exists():
            meta = json.loads(meta_path.read_text())
            url = urlsplit(meta["url"])
            return Recorded(
                method=meta.get("method", "GET"),
                path=unquote(url.path),
                query=tuple(parse_qsl(url.query, keep_blank_values=True)),
                request_body=meta.get("request_body") or meta.get("body"),
                status=int(meta["status"]),
                content_type=meta.get("content_type") or "application/octet-stream",
                file=path,
            )
        if path.suffix != ".xml":
            return None  # an S2 object whose request was not recorded
        echo = _ECHO_LINK.search(path.read_bytes())
        if echo is None:
            return None
        url = urlsplit(html.unescape(echo.group(1).decode()))
        raw_query = unquote(url.query) if "=" not in url.query else url.query
        return Recorded(
            method="GET",
            path=url.path,
            query=tuple(parse_qsl(raw_query, keep_blank_values=True)),
            request_body=None,
            status=200,
            content_type="application/atom+xml",
            file=path,
            sort_recorded=False,
        )

    def find(self, method: str, target: str, body: bytes = b"") -> Recorded | None:
        """The recording that answers this request, or None."""
        split = urlsplit(target)
        path = unquote(split.path)
        query = parse_qsl(split.query, keep_blank_values=True)
        candidates = [r for r in self.all if r.method == method and r.path == path]
        if path == ARXIV_API:
            # the request as it was recorded first: two recordings may ask arXiv the same thing
            exact = [r for r in candidates if sorted(r.query) == sorted(query)]
            return exact[0] if exact else _arxiv_match(candidates, dict(query))
        wanted_body = _json_key(body) if method == "POST" else None
        for recorded in candidates:
            if sorted(recorded.query) == sorted(query) and (
                wanted_body is None or _json_key(recorded.request_body) == wanted_body
            ):
                return recorded
        return None

    def entries_reply(self, target: str) -> Reply | None:
        """A feed of the recorded entries of an id_list request's ids (None for other requests)."""
        split = urlsplit(target)
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        if unquote(split.path) != ARXIV_API or not params.get("id_list"):
            return None
        if params.get("search_query") or params.get("start", "0") != "0":
            return None
        body = entries_feed(self.entries(), params["id_list"].split(","))
        return Reply(200, body, (("Content-Type", "application/atom+xml"),))

    def entries(self) -> dict[str, list[bytes]]:
        """Every recorded Atom entry by its id as arXiv writes it (`2104.12255v1`), and by its
        bare id: the serialised `<entry>` elements, newest version first."""
        if self._entries is None:
            from lxml import etree

            found: dict[str, list[tuple[int, bytes]]] = {}
            for recorded in self.all:
                if recorded.file.suffix != ".xml" or recorded.status != 200:
                    continue
                root = etree.fromstring(recorded.file.read_bytes())
                for entry in root.iter("{http://www.w3.org/2005/Atom}entry"):
                    entry_id = entry.findtext("{http://www.w3.org/2005/Atom}id") or ""
                    match = re.search(r"/abs/(.+)v(\d+)$", entry_id.strip())
                    if match is None:
                        continue
                    raw = etree.tostring(entry)
                    version = int(match[2])
                    for name in (match[1], f"{match[1]}v{version}"):
                        if all(raw != known for _, known in found.get(name, [])):
                            found.setdefault(name, []).append((version, raw))
            self._entries = {
                name: [raw for _, raw in sorted(kept, key=lambda item: -item[0])]
                for name, kept in found.items()
            }
        return self._entries

    def reply(self, method: str, target: str, body: bytes = b"") -> Reply:
        recorded = self.find(method, target, body)
        if recorded is None:
            text = f"replay: no recorded answer for {method} {target}".encode()
            return Reply(404, text, (("Content-Type", "text/plain; charset=utf-8"),))
        return recorded.reply()


def _canonical(params: dict[str, str], *, with_sort: bool = True) -> dict[str, str]:
    kept = {k: v for k, v in params.items() if _ARXIV_DEFAULTS.get(k) != v}
    if not with_sort:
        kept.pop("sortBy", None)
        kept.pop("sortOrder", None)
    return kept


def _arxiv_match(candidates: list[Recorded], params: dict[str, str]) -> Recorded | None:
    for recorded in candidates:
        with_sort = recorded.sort_recorded
        if _canonical(dict(recorded.query), with_sort=with_sort) == _canonical(
            params, with_sort=with_sort
        ):
            return recorded
    ids = params.get("id_list", "")
    if not ids or params.get("search_query"):
        return None
    wanted = len(ids.split(","))
    for recorded in candidates:
        theirs = dict(recorded.query)
        if (
            theirs.get("id_list") == ids
            and not theirs.get("search_query")
            and theirs.get("start", "0") == params.get("start", "0")
            and int(theirs.get("max_results", "10")) >= wanted
            and int(params.get("max_results", "10")) >= wanted
        ):
            return recorded
    return None


def entries_feed(entries: dict[str, list[bytes]], ids: list[str]) -> bytes:
    """An arXiv API feed (2025+ format) holding the recorded entry of each id that has one."""
    held = [entries[paper][0] for paper in dict.fromkeys(ids) if paper in entries]
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom">\n'
        "  <id>https://arxiv.org/api/replay</id>\n"
        f"  <title>arXiv Query: id_list={','.join(ids)}</title>\n"
        "  <updated>2026-01-01T00:00:00Z</updated>\n"
        f"  <opensearch:itemsPerPage>{len(ids)}</opensearch:itemsPerPage>\n"
        f"  <opensearch:totalResults>{len(held)}</opensearch:totalResults>\n"
        "  <opensearch:startIndex>0</opensearch:startIndex>\n"
    ).encode()
    return head + b"\n".join(held) + b"\n</feed>\n"


def _json_key(body: bytes | str | None) -> str | None:
    if not body:
        return None
    try:
        return json.dumps(json.loads(body), sort_keys=True)
    except ValueError:
        return None


def _chunks(body: bytes, size: int) -> Iterable[bytes]:
    for start in range(0, len(body), max(1, size)):
        yield body[start : start + size]


# -- client-side helpers for tests -----------------------------------------------------------


@contextlib.asynccontextmanager
async def papers_of(settings: Any, **parts: Any) -> AsyncIterator[Any]:
    """The `Papers` of a runtime built from `settings` (runtime.py; `parts` replace some of
    its parts, as `Runtime.build` takes them), closed with the runtime on exit."""
    from paperanchor.runtime import Runtime

    async with Runtime.build(settings, **parts) as runtime:
        yield runtime.papers


async def load(settings: Any, text: str) -> Any:
    """Load one paper through a fresh runtime (real parser) over the settings' cache, then close."""
    from paperanchor.refs import parse_ref

    async with papers_of(settings) as papers:
        return await papers.load(parse_ref(text))


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
