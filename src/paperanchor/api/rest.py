"""REST adapter (contract §6): JSON and Markdown routes over the service, with HTTP caching.

Each route is arguments in, one service call, result out. `{paper}` may hold a slash (a legacy
id, `local/<name>`), so every route captures it with a path convertor and is told apart from the
others by its suffix; the HTML page `/{paper}` (api/pages.py) is registered last and takes what
is left. Errors become their wire form in `error_response`, and nowhere else.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import math
import pathlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response
from pydantic import TypeAdapter

from paperanchor import compact, operations
from paperanchor.api import models
from paperanchor.api.files import read_image
from paperanchor.errors import Forbidden, NotFound, PaperAnchorError
from paperanchor.refs import parse_ref, shown
from paperanchor.service import WAIT_RANGE, WHOLE_NODE, PaperService, Served
from paperanchor.store import NoStore

JSON_TYPE = "application/json"
MARKDOWN_TYPE = "text/markdown; charset=utf-8"
HTML_TYPE = "text/html; charset=utf-8"
# BibTeX as arXiv's own export serves it (arxiv.org/bibtex/{id}): a browser shows it, to copy
# or save; the text is ASCII (bibtex.py checks every value).
BIBTEX_TYPE = "text/plain; charset=utf-8"

# A version never changes; a bare id may get a newer version, the latest is re-checked daily
# upstream (PAPERANCHOR_LATEST_TTL_S) and an hour is the staleness a reader will not notice.
IMMUTABLE = "public, max-age=31536000, immutable"
LATEST = "public, max-age=3600"
# A local file can be edited at any time: store it, but ask again (a 304 when unchanged).
REVALIDATE = "no-cache"
NOT_CACHEABLE = "no-store"
# arXiv's taxonomy is package data: it changes with a release of this server.
TAXONOMY = "public, max-age=86400"

# Markdown routes answer the whole node unless ?maxTokens= asks for less (contract §6).
WHOLE = WHOLE_NODE


class MarkdownResponse(Response):
    media_type = "text/markdown"  # Starlette adds the charset to every text/* type


class BibTeXResponse(Response):
    media_type = "text/plain"


router = APIRouter()

# the pages' path parameters (api/pages.py), described as the table's routes describe them
PaperPath = Annotated[str, Path(description=operations.REST_PAPER.help)]
AnchorPath = Annotated[str, Path(description=operations.REST_ANCHOR.help)]


def error_responses(*media_types: str) -> dict[int | str, dict[str, Any]]:
    """The error answers of a route whose errors come in `media_types`, for /openapi.json."""
    statuses = {
        400: "bad-request: not a paper reference, an argument out of range",
        401: "unauthorized: a bearer token is required (PAPERANCHOR_AUTH_TOKENS_FILE)",
        403: "forbidden: public mode, the paper's licence does not allow serving its text",
        404: "not-found: unknown paper, no HTML rendering, unknown anchor or reference",
        413: "too-large: the page exceeds PAPERANCHOR_MAX_HTML_MB",
        429: "rate-limited: too many requests from this client; see Retry-After",
        500: "internal: a bug",
        502: "upstream-error: upstream answered garbage or kept failing",
        503: "unavailable: upstream rate-limited us or is unreachable; see Retry-After",
    }
    content: dict[str, Any] = {}
    for media_type in media_types:
        bare = media_type.split(";")[0]
        if bare == JSON_TYPE:
            content[bare] = {"schema": {"$ref": "#/components/schemas/Error"}}
        else:
            content[bare] = {"schema": {"type": "string"}}
    answers: dict[int | str, dict[str, Any]] = {
        304: {"description": "Not Modified: the If-None-Match ETag is still current"}
    }
    for status, description in statuses.items():
        # a reference, not the model: FastAPI builds a pydantic adapter for every model of
        # every route on the first request, and the 147 of `Error` cost it 62 ms (0.42 ms
        # each); the schema is registered once, by error_schemas
        answers[status] = {"description": description, "content": content}
    return answers


def error_schemas() -> dict[str, Any]:
    """The `Error` shape and what it refers to, as /openapi.json's components."""
    schema = TypeAdapter(models.Error).json_schema(ref_template="#/components/schemas/{model}")
    defined: dict[str, Any] = schema.pop("$defs", {})
    return {**defined, "Error": schema}


def json_route(model: Any, summary: str) -> dict[str, Any]:
    """Route options of a JSON route: its answer's model and every error, for /openapi.json."""
    return {
        "summary": summary,
        "response_model": None,
        "responses": {
            200: {"model": model, "description": summary},
            **error_responses(JSON_TYPE),
        },
    }


def markdown_route(summary: str) -> dict[str, Any]:
    """Route options of a Markdown route: its text answer and every error, for /openapi.json."""
    return {
        "summary": summary,
        "response_class": MarkdownResponse,
        "responses": {
            200: {"description": summary},
            **error_responses(MARKDOWN_TYPE),
        },
    }


def bibtex_route(summary: str) -> dict[str, Any]:
    """Route options of a BibTeX route: its text answer and every error, for /openapi.json."""
    return {
        "summary": summary,
        "response_class": BibTeXResponse,
        "responses": {
            200: {
                "description": summary,
                "content": {"text/plain": {"schema": {"type": "string"}}},
            },
            **error_responses(BIBTEX_TYPE),
        },
    }


def image_route(summary: str) -> dict[str, Any]:
    """Route options of an image route: its bytes in one of five types, errors as JSON."""
    binary = {"schema": {"type": "string", "format": "binary"}}
    types = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml")
    return {
        "summary": summary,
        "response_class": Response,
        "responses": {
            200: {"description": summary, "content": dict.fromkeys(types, binary)},
            **error_responses(JSON_TYPE),
        },
    }


def service(request: Request) -> PaperService:
    """The service the app was built over."""
    paper_service: PaperService = request.app.state.service
    return paper_service


# -- the routes, in matching order: specific suffixes first ----------------------------------


# Liveness, never cached. (Endpoints take comments, not docstrings: FastAPI publishes a
# docstring in /openapi.json.)
@router.get("/healthz", **json_route(models.Health, "Liveness"))
async def healthz(request: Request) -> Response:
    cacheless = isinstance(request.app.state.papers.store, NoStore)  # store.open_store
    body = b'{"status":"ok","cache":"unavailable"}' if cacheless else b'{"status":"ok"}'
    return Response(body, media_type=JSON_TYPE, headers={"Cache-Control": "no-store"})


# The Prometheus metrics, never cached.
@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
async def metrics(request: Request) -> Response:
    body, content_type = request.app.state.metrics.exposition()
    return Response(body, media_type=content_type, headers={"Cache-Control": "no-store"})


# Images a local document's page refers to; nothing else of the local directory is served.
LOCAL_FILE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


# An image of a local document, by its path in PAPERANCHOR_LOCAL_DIR (no other file).
@router.get(
    "/files/{path:path}",
    summary="An image of a local document (PAPERANCHOR_LOCAL_DIR)",
    response_class=Response,
    responses={
        200: {"content": {"image/png": {"schema": {"type": "string", "format": "binary"}}}},
        **error_responses(JSON_TYPE),
    },
)
async def local_file(request: Request, path: str) -> Response:
    settings = request.app.state.settings
    parts = path.split("/")
    media_type = LOCAL_FILE_TYPES.get(pathlib.PurePosixPath(path).suffix.lower())
    unsafe = any(part in ("", ".", "..") or "\\" in part or "\0" in part for part in parts)
    if settings.local_dir is None or media_type is None or unsafe:
        raise NotFound(f"No image {shown(path)} in the local directory")
    if settings.public:
        # a figure is the paper's as much as its text: served where the paper's licence allows
        await service(request).check_text(_image_paper(parts, path), f"The image {shown(path)}")
    # regular files inside the folder only, links resolved, size-capped (api/files.py)
    body = await asyncio.to_thread(read_image, pathlib.Path(settings.local_dir), parts, shown(path))
    return Response(body, media_type=media_type, headers={"Cache-Control": "public, max-age=3600"})


def _image_paper(parts: list[str], path: str) -> str:
    """The paper an image of the local directory belongs to: the page its folder is named
    after, as LaTeXML lays them out (`full/fig-1.png` is `full.html`'s, `2402.08939v1/x1.png`
    the arXiv paper's); an image in no page's folder belongs to no paper a licence is known of."""
    if len(parts) < 2:
        raise Forbidden(
            f"The image {shown(path)} is not in a page's folder: this public server serves "
            "the images of a paper whose licence allows it"
        )
    stem = parts[0]
    try:
        ref = parse_ref(stem.replace("_", "/"))
    except PaperAnchorError:
        return f"local/{stem}"
    return ref.idv if not ref.is_local else f"local/{stem}"


# -- the operations' routes, generated from their table (operations.ROUTES) -----------------

MEDIA_TYPES = {"json": JSON_TYPE, "markdown": MARKDOWN_TYPE, "bibtex": BIBTEX_TYPE}
KINDS: dict[str, Any] = {"text": str, "integer": int, "number": float, "boolean": bool}
# An image's bytes are upstream's, an SVG may hold scripts: never sniffed into another type,
# and an SVG opened from this server's address runs nothing and loads nothing.
IMAGE_HEADERS = {"X-Content-Type-Options": "nosniff"}
SVG_HEADERS = {
    **IMAGE_HEADERS,
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
}


def _route_options(route: operations.Route) -> dict[str, Any]:
    if route.form == "markdown":
        return markdown_route(route.summary)
    if route.form == "bibtex":
        return bibtex_route(route.summary)
    if route.form == "image":
        return image_route(route.summary)
    return json_route(route.shape, route.summary)


def _parameter(argument: operations.Argument, where: operations.Where) -> inspect.Parameter:
    """An argument as a route parameter FastAPI reads: its schema, description and alias."""
    rest = argument.rest
    assert rest is not None  # Route.arguments takes only arguments with a REST form
    marker = (Path if where == "path" else Query)(description=rest.help, alias=rest.alias)
    # a list in the path is one item of it (/{paper}.bib: one paper)
    kind = KINDS["text" if argument.kind == "texts" else argument.kind]
    required = where == "path" or (argument.required if rest.required is None else rest.required)
    if required:
        annotation: Any = Annotated[kind, marker]
        default: Any = inspect.Parameter.empty
    else:
        annotation, default = Annotated[kind | None, marker], None
    keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Parameter(argument.rest_name, keyword, default=default, annotation=annotation)


def _endpoint(
    route: operations.Route, operation: operations.Operation
) -> Callable[..., Awaitable[Response]]:
    """The route's endpoint: arguments in, checked by the table, the operation's one service
    call, the answer with its caching."""
    taken = route.arguments(operation)

    async def endpoint(request: Request, **given: Any) -> Response:
        arguments: dict[str, Any] = {
            argument.python_name: [value] if argument.kind == "texts" else value
            for argument, _where in taken
            if (value := given[argument.rest_name]) is not None
        }
        if route.caching == "outline":
            depth = operations.depth_of(arguments)
            since = arguments.get("since")
            return await outline_answer(request, arguments["paper"], since=since, depth=depth)
        checked = operation.check(arguments, "rest")
        for argument, _where in taken:
            absent = argument.rest.absent if argument.rest is not None else None
            if checked.get(argument.python_name) is None and absent is not None:
                checked[argument.python_name] = absent
        found = await operation.run(service(request), checked, "rest")
        value = operations.value_of(found)
        sent = route.body(value)
        if route.form == "image":
            headers = SVG_HEADERS if sent.media_type == "image/svg+xml" else IMAGE_HEADERS
            return answer(request, found, sent.data, sent.media_type, headers)
        body = dumps(sent) if route.form == "json" else sent.encode()
        media_type = MEDIA_TYPES[route.form]
        if route.caching == "paper":
            return answer(request, found, body, media_type)
        if isinstance(found, Served) and found.pending:
            # references.bib: the arXiv ids S2 may still give its entries (as references.json)
            return etagged(request, body, media_type, REVALIDATE)
        return etagged(request, body, media_type, _caching(route.caching, given))

    endpoint.__name__ = endpoint.__qualname__ = route.name
    endpoint.__doc__ = route.doc
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                "request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request
            ),
            *(_parameter(argument, where) for argument, where in taken),
        ],
        return_annotation=Response,
    )
    return endpoint


def _caching(caching: operations.Caching, parameters: dict[str, Any]) -> str:
    if caching == "taxonomy":
        return TAXONOMY
    if caching == "local-or-latest" and parse_ref(parameters["paper"]).is_local:
        return REVALIDATE
    return LATEST


def routes() -> APIRouter:
    """The server's own routes (`router`), then the operations', generated from the table as
    it is (operations.ROUTES) in its order: one router, whose routes FastAPI builds all at
    once when it routes its first request (app.py routes one at start)."""
    routes = APIRouter(routes=list(router.routes))
    for route in operations.ROUTES:
        endpoint = _endpoint(route, operations.operation(route.operation))
        routes.add_api_route(route.path, endpoint, methods=["GET"], **_route_options(route))
    return routes


# -- shared by the routes and the HTML page --------------------------------------------------


async def outline_answer(
    request: Request,
    paper: str,
    *,
    vary_accept: bool = False,
    since: str | None = None,
    depth: int | None = None,
) -> Response:
    """The outline as JSON, honouring `Prefer: wait=N` (RFC 7240); with `since`, marked with
    what changed since that edition (contract §10); `depth` levels of sections deep (§11)."""
    wait = prefer_wait(request.headers.getlist("prefer"))
    if since:
        outline = await service(request).outline_since(paper, since)
    else:
        outline = await service(request).outline(paper)
    if depth is not None:
        outline = replace(outline, value=compact.at_depth(outline.value, depth))
    applied = {"Preference-Applied": f"wait={wait:g}"} if wait is not None else {}
    return answer(
        request,
        outline,
        dumps(outline.value),
        JSON_TYPE,
        applied,
        vary_accept=vary_accept,
        cache=outline_cache_control(outline),
    )


def outline_cache_control(outline: Served[models.Outline]) -> str:
    """An outline's caching: the paper's, but metadata changes (a new version, a journal
    reference) and is kept a day, so an outline with it is kept an hour at most, and one whose
    metadata may still come is revalidated (its ETag changes when it comes)."""
    if outline.value["metadata"] is not None:
        paper_cache = cache_control(outline)
        return LATEST if paper_cache == IMMUTABLE else paper_cache
    if outline.pending:
        return REVALIDATE
    return cache_control(outline)


def prefer_wait(headers: list[str]) -> float | None:
    """The `wait` preference in seconds, capped at 60; None when absent or unreadable.

    A preference the server cannot honour is ignored (RFC 7240 §2), so `wait=abc` is not an
    error; a longer wait than 60 s is served as 60 s and says so in Preference-Applied.
    """
    for header in headers:
        for preference in header.split(","):
            name, _, value = preference.split(";", 1)[0].partition("=")
            if name.strip().lower() != "wait":
                continue
            try:
                seconds = float(value.strip().strip('"'))
            except ValueError:
                return None
            if not math.isfinite(seconds) or seconds < 0:
                return None
            return min(seconds, WAIT_RANGE[1])
    return None


def answer(
    request: Request,
    served: Served[Any],
    body: bytes,
    media_type: str,
    headers: dict[str, str] | None = None,
    *,
    vary_accept: bool = False,
    cache: str | None = None,
) -> Response:
    """`body`, the bytes of a `served` answer, with its ETag and Cache-Control (`cache`, else
    the paper's), or 304."""
    out = dict(headers or {})
    if vary_accept:
        out["Vary"] = "Accept"
    return etagged(request, body, media_type, cache or cache_control(served), out)


def etagged(
    request: Request,
    body: bytes,
    media_type: str,
    cache: str,
    headers: dict[str, str] | None = None,
) -> Response:
    """A successful answer with its ETag and `Cache-Control: cache`, or 304."""
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    out = {**(headers or {}), "ETag": etag, "Cache-Control": cache}
    if _matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=out)
    return Response(body, media_type=media_type, headers=out)


def cache_control(served: Served[Any]) -> str:
    """contract §6: immutable for a version that was asked for and confirmed, an hour otherwise;
    revalidated when a later answer may hold more (references whose S2 ids may still come), and
    for a file of the local directory (its ETag is of the bytes sent)."""
    if served.asked.is_local or served.pending or served.local_file:
        return REVALIDATE
    return IMMUTABLE if served.pinned else LATEST


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    candidates = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in candidates or etag in candidates


def dumps(value: Any) -> bytes:
    """JSON as every front door sends it: UTF-8, compact."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


# -- errors ----------------------------------------------------------------------------------


_FIGURE_IMAGE = re.compile(r"/figures/[^/]+/[^/]+$")


def wire_form(path: str, accept: str | None) -> str:
    """Which of contract §9's wire forms a request gets: "json", "markdown", "text" or "html"."""
    if path.endswith(".md"):
        return "markdown"
    if path.endswith(".bib"):
        return "text"  # `code: detail`, as the Markdown routes, in the .bib's type
    if path.endswith(".json") or path in ("/mcp", "/healthz", "/metrics"):
        return "json"
    if path.startswith("/files/") or _FIGURE_IMAGE.search(path):
        return "json"  # an image route: a program asked, not a person
    if prefers_json(accept):
        return "json"
    return "markdown" if prefers_markdown(accept) else "html"


def error_response(error: PaperAnchorError, form: str) -> Response:
    """The one place a REST error becomes its wire form: `Error` JSON or `code: detail` text."""
    headers = {"Cache-Control": NOT_CACHEABLE}
    if error.retry_after is not None:
        headers["Retry-After"] = str(max(1, math.ceil(error.retry_after)))
    if form in ("markdown", "text"):
        text = (error.wire_markdown() if form == "markdown" else error.wire_text()) + "\n"
        kind = MarkdownResponse if form == "markdown" else BibTeXResponse
        return kind(text.encode(), status_code=error.status, headers=headers)
    return Response(
        dumps(error.to_json()), status_code=error.status, media_type=JSON_TYPE, headers=headers
    )


def prefers_json(accept: str | None) -> bool:
    """Whether `Accept` ranks application/json above text/html."""
    if not accept:
        return False
    return _quality(accept, "application/json") > _quality(accept, "text/html")


def prefers_markdown(accept: str | None) -> bool:
    """Whether `Accept` ranks text/markdown above text/html (an agent's fetch of a page)."""
    if not accept:
        return False
    return _quality(accept, "text/markdown") > _quality(accept, "text/html")


def _quality(accept: str, media_type: str) -> float:
    kind = media_type.split("/", 1)[0]
    best: tuple[int, float] = (-1, 0.0)  # (specificity, q) of the most specific match
    for entry in accept.split(","):
        name, *params = (part.strip() for part in entry.split(";"))
        name = name.lower()
        if name == media_type:
            specificity = 2
        elif name == f"{kind}/*":
            specificity = 1
        elif name == "*/*":
            specificity = 0
        else:
            continue
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if specificity > best[0]:
            best = (specificity, q)
    return best[1]
