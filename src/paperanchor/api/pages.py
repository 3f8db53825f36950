"""HTML pages (SPEC §8): the landing page and a paper's outline, server-rendered.

Templates are jinja2 with autoescaping on, so everything taken from a paper is text; the pages
use no JavaScript. Errors become an HTML page in `error_page`, and nowhere else.
"""

from __future__ import annotations

import math
from typing import Annotated, Any
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from paperanchor import __version__
from paperanchor.api import rest
from paperanchor.errors import PaperAnchorError
from paperanchor.refs import parse_ref

templates = Environment(
    loader=PackageLoader("paperanchor", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
templates.filters["path"] = lambda value: quote(str(value), safe="/")
templates.globals["version"] = __version__

router = APIRouter()


def render(name: str, **context: Any) -> str:
    return templates.get_template(name).render(**context)


@router.get(
    "/",
    summary="Landing page: open a paper by reference",
    response_class=HTMLResponse,
    responses={
        303: {"description": "to the paper's page, when ?paper= is given"},
        400: {
            "description": "bad-request: not a paper reference",
            "content": {"text/html": {"schema": {"type": "string"}}},
        },
    },
)
async def landing(
    paper: Annotated[str | None, Query(description="a paper reference to open")] = None,
) -> Response:
    if paper is not None and paper.strip():
        ref = parse_ref(paper)
        return RedirectResponse(f"/{quote(ref.idv, safe='/')}", status_code=303)
    return HTMLResponse(render("landing.html"))


@router.get(
    "/{paper:path}",
    summary="A paper's outline as an HTML page, or as Outline JSON when Accept prefers it",
    response_class=HTMLResponse,
    responses={
        200: {
            "content": {
                "text/html": {"schema": {"type": "string"}},
                "application/json": {"schema": {"$ref": "#/components/schemas/Outline"}},
            }
        },
        **rest.error_responses(rest.HTML_TYPE, rest.JSON_TYPE),
    },
)
async def outline_page(request: Request, paper: rest.PaperPath) -> Response:
    if rest.prefers_json(request.headers.get("accept")):
        return await rest.outline_answer(request, paper, vary_accept=True)
    outline = await rest.service(request).outline(paper, default_wait=0.0)
    source = outline["sourceUrl"]
    page = render(
        "outline.html",
        outline=outline,
        source_url=source if urlsplit(source).scheme in ("http", "https") else None,
    )
    return rest.answer(request, paper, page.encode(), rest.HTML_TYPE, vary_accept=True)


def error_page(error: PaperAnchorError, asked: str) -> Response:
    """The one place an error becomes an HTML page: same status, the `code: detail` text."""
    headers = {"Cache-Control": rest.NOT_CACHEABLE}
    if error.retry_after is not None:
        headers["Retry-After"] = str(max(1, math.ceil(error.retry_after)))
    page = render("error.html", error=error, asked=asked)
    return HTMLResponse(page, status_code=error.status, headers=headers)
