"""HTML pages (SPEC §6, §8): the landing page, a paper's outline and a section's page,
server-rendered.

Templates are jinja2 with autoescaping on, so everything taken from a paper is text; the one
piece of HTML they take whole is a section's body, which render/html.py builds with every
string escaped. The pages use no JavaScript. Errors become an HTML page in `error_page`, and
nowhere else.
"""

from __future__ import annotations

import asyncio
import math
import re
from typing import Annotated, Any
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from paperanchor import __version__, refs
from paperanchor.api import rest
from paperanchor.discovery import query
from paperanchor.errors import PaperAnchorError
from paperanchor.paper import Paper
from paperanchor.refs import parse_ref
from paperanchor.render import html
from paperanchor.sources import LocalFile, local_files
from paperanchor.tree import Section

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

# Papers of this process's memory listed on the landing page, most recent first.
RECENT_PAPERS = 20


def render(name: str, **context: Any) -> str:
    """A template rendered with `context` (autoescaped)."""
    return templates.get_template(name).render(**context)


# The landing page: the form to open a paper, local and recent papers, an arXiv search.
# (Endpoints take comments, not docstrings: FastAPI publishes a docstring in /openapi.json.)
@router.get(
    "/",
    summary="Landing page: open a paper by reference",
    response_class=HTMLResponse,
    responses={
        303: {"description": "to the paper's page, when ?paper= is given"},
        # a bad reference, or the search's own error (the page shows it with its status)
        **{
            status: answer
            for status, answer in rest.error_responses(rest.HTML_TYPE).items()
            if status != 304
        },
    },
)
async def landing(
    request: Request,
    paper: Annotated[str | None, Query(description="a paper reference to open")] = None,
    q: Annotated[str | None, Query(description="an arXiv search, shown on the page")] = None,
    start: Annotated[int | None, Query(description="the search's first result")] = None,
) -> Response:
    if paper is not None and paper.strip():
        try:
            ref = parse_ref(paper)
        except PaperAnchorError as error:
            return error_page(error, "/", typed=paper)
        return RedirectResponse(f"/{quote(ref.idv, safe='/')}", status_code=303)
    settings = request.app.state.settings
    searching = q is not None and q.strip() != ""
    search: dict[str, Any] | None = None
    failed: PaperAnchorError | None = None
    if searching:
        try:
            search = dict(await rest.service(request).search_arxiv(q, start=start))
        except PaperAnchorError as error:
            failed = error
    local: list[LocalFile] = []
    more = 0
    if settings.local_dir is not None:
        local, more = await asyncio.to_thread(local_files, settings.local_dir)
    listed = {entry.reference for entry in local}
    recent = [
        {"reference": idv, "title": title}
        for idv, title in rest.service(request).recent(RECENT_PAPERS)
        if idv not in listed
    ]
    examples = [entry.reference for entry in local] + [entry["reference"] for entry in recent]
    if not settings.offline:
        examples.append("1706.03762")  # a well-known paper, fetched from arXiv
    page = render(
        "landing.html",
        local=local,
        more=more,
        recent=recent,
        example=examples[0] if examples else None,
        offline=settings.offline,
        local_dir_set=settings.local_dir is not None,
        # a search box where arXiv can be searched; a search asked for is shown whatever
        can_search=bool(settings.arxiv_api_url) and not settings.offline,
        query=(q or "").strip()[:MAX_TYPED],
        search=search,
        pages=_pages(search) if search is not None else None,
        failed=failed,
    )
    headers = {"Cache-Control": rest.NOT_CACHEABLE}
    if failed is not None and failed.retry_after is not None:
        headers["Retry-After"] = str(max(1, math.ceil(failed.retry_after)))
    status = failed.status if failed is not None else 200
    return HTMLResponse(page, status_code=status, headers=headers)


def _pages(search: dict[str, Any]) -> dict[str, int | None]:
    """The starts of the previous and next pages of a search (None at either end)."""
    start, shown, total = search["start"], len(search["hits"]), search["total"]
    size = shown or 10
    following = (
        start + shown if shown and start + shown < min(total, query.RESULTS_WINDOW) else None
    )
    return {"previous": max(0, start - size) if start > 0 else None, "next": following}


# A node as an HTML page, or its SectionText JSON when Accept prefers it.
@router.get(
    "/{paper:path}/sections/{anchor}",
    summary="A node as an HTML page (math as MathML, no JavaScript), or its JSON when Accept "
    "prefers it",
    response_class=HTMLResponse,
    responses={
        200: {
            "content": {
                "text/html": {"schema": {"type": "string"}},
                "application/json": {"schema": {"$ref": "#/components/schemas/SectionText"}},
            }
        },
        **rest.error_responses(rest.HTML_TYPE, rest.JSON_TYPE),
    },
)
async def section_page(
    request: Request, paper: rest.PaperPath, anchor: rest.AnchorPath
) -> Response:
    if rest.prefers_json(request.headers.get("accept")):
        result = await rest.service(request).read(paper, anchor, rest.WHOLE)
        body = rest.dumps(result.value.to_json())
        return rest.answer(request, result, body, rest.JSON_TYPE, vary_accept=True)
    view = await rest.service(request).view(paper)
    # resolving an unknown anchor matches it fuzzily, and drawing a section's formulas takes up
    # to 0.8 s (1311.0066's section 4, 413 formulas): never on the event loop
    page = await asyncio.to_thread(_section_page, view.value, anchor)
    return rest.answer(request, view, page.encode(), rest.HTML_TYPE, vary_accept=True)


def _section_page(view: Paper, anchor: str) -> str:
    # kept on the paper (paper.py), so it goes with it and counts in the memory of papers
    return view.page(view.index.resolve(anchor).node.id, section_html)


def section_html(view: Paper, anchor: str) -> str:
    """The page of the node `anchor` names: its HTML between links to the sections around it."""
    located = view.index.resolve(anchor)
    node = located.node
    meta = view.meta
    idv = meta.idv

    def section_href(node_id: str) -> str:
        return f"/{quote(idv, safe='/')}/sections/{quote(node_id, safe='')}"

    def link(section: Section | None) -> dict[str, Any] | None:
        if section is None:
            return None
        return {"href": section_href(section.id), "label": Markup(html.heading_html(section))}

    section_id = node.id if isinstance(node, Section) else located.section_id
    around = html.neighbours(view.document, section_id)
    holder = view.index.nodes.get(section_id) if section_id != node.id else None
    parent = holder.node if holder is not None and isinstance(holder.node, Section) else None

    def paragraph_link(node_id: str) -> str | None:
        return refs.permalink(meta.paper, idv, meta.source, node_id)

    body = html.article(node, view.document, permalink=paragraph_link, section_href=section_href)
    permalink = paragraph_link(node.id)
    return render(
        "section.html",
        article=Markup(body.html),
        cut=body.cut,
        title=body.title,
        paper_title=view.document.title.text or idv,
        idv=idv,
        tokens=view.tokens(node.id),
        markdown_href=section_href(node.id) + ".md",
        permalink=permalink,
        source_host=urlsplit(permalink).hostname if permalink else None,
        previous=link(around.previous),
        next=link(around.next),
        parent=link(parent or around.parent),
    )


# A paper's outline as an HTML page, or its Outline JSON when Accept prefers it.
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
    served = await rest.service(request).outline(paper)
    outline = served.value

    def source_link(anchor: str | None) -> str | None:
        # the public, versioned address (SPEC §4 permalink), never a configured mirror's
        return refs.permalink(outline["paper"], outline["idv"], outline["source"], anchor)

    metadata = outline["metadata"]
    page = render(
        "outline.html",
        outline=outline,
        source_link=source_link,
        metadata=metadata,
        doi_link=_doi_link(metadata["doi"]) if metadata is not None else None,
        pending=served.pending,
        is_arxiv=not parse_ref(outline["paper"]).is_local,
    )
    cache = rest.outline_cache_control(served)
    return rest.answer(
        request, served, page.encode(), rest.HTML_TYPE, vary_accept=True, cache=cache
    )


# A DOI as arXiv records it: `10.` and a registrant, then anything but spaces (bounded).
_DOI = re.compile(r"^10\.\d{4,9}/\S{1,300}$")


def _doi_link(doi: str | None) -> str | None:
    """https://doi.org/ and the DOI, for a DOI that is one; None for anything else."""
    if doi is None or not _DOI.match(doi):
        return None
    return "https://doi.org/" + quote(doi, safe="/:;()._-")


def error_page(error: PaperAnchorError, asked: str, *, typed: str | None = None) -> Response:
    """The one place an error becomes an HTML page: same status, the `code: detail` text, and
    the form to open a paper holding what was typed (or the paper of the path asked for)."""
    headers = {"Cache-Control": rest.NOT_CACHEABLE}
    if error.retry_after is not None:
        headers["Retry-After"] = str(max(1, math.ceil(error.retry_after)))
    value = typed if typed is not None else typed_reference(asked)
    page = render("error.html", error=error, asked=asked, value=value.strip()[:MAX_TYPED])
    return HTMLResponse(page, status_code=error.status, headers=headers)


# The form keeps what was typed, up to a length no reference reaches (the longest are URLs).
MAX_TYPED = 500


def typed_reference(path: str) -> str:
    """The paper reference a page's path was asked with: `/1706.99999` -> `1706.99999`,
    `/local/x/sections/S9` -> `local/x`."""
    reference = path.lstrip("/")
    before, found, _ = reference.rpartition("/sections/")
    return before if found else reference
