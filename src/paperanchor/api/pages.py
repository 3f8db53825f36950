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
from markupsafe import Markup, escape

from paperanchor import __version__, changes, licence, refs
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
templates.filters["linked"] = lambda value: linked(str(value))
templates.globals["version"] = __version__

router = APIRouter()

# Papers of this process's memory listed on the landing page, most recent first.
RECENT_PAPERS = 20


# A web address in an abstract ("code at https://github.com/x/y."): http(s) only, up to a
# space, a quote or an angle bracket, bounded; what closes a sentence after it is not its own.
_URL = re.compile(r"\bhttps?://[^\s<>\"'`]{1,2000}", re.ASCII | re.IGNORECASE)
_TRAILING = ".,;:!?'\""


def linked(text: str) -> Markup:
    """`text` escaped, its http(s) addresses made links (nothing else of it is markup)."""
    parts: list[str] = []
    last = 0
    for match in _URL.finditer(text):
        url = match.group(0)
        # a closing bracket the address did not open, and a sentence's end, stay text
        while url and (
            url[-1] in _TRAILING
            or (url[-1] == ")" and url.count("(") < url.count(")"))
            or (url[-1] == "]" and url.count("[") < url.count("]"))
        ):
            url = url[:-1]
        if not urlsplit(url).netloc:
            continue
        parts.append(str(escape(text[last : match.start()])))
        href = escape(url)
        parts.append(f'<a href="{href}" rel="nofollow noopener noreferrer">{href}</a>')
        last = match.start() + len(url)
    parts.append(str(escape(text[last:])))
    return Markup("".join(parts))


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
    accept = request.headers.get("accept")
    if rest.prefers_json(accept) or rest.prefers_markdown(accept):
        return await _read_answer(request, paper, anchor, json=rest.prefers_json(accept))
    view = await rest.service(request).view(paper)
    # resolving an unknown anchor matches it fuzzily, and drawing a section's formulas takes up
    # to 0.8 s (1311.0066's section 4, 413 formulas): never on the event loop
    page = await asyncio.to_thread(_section_page, view.value, anchor)
    return rest.answer(request, view, page.encode(), rest.HTML_TYPE, vary_accept=True)


async def _read_answer(request: Request, paper: str, anchor: str | None, *, json: bool) -> Response:
    """The node (the whole paper for no anchor) as the JSON or Markdown route answers it, for
    a client whose `Accept` asks a page's address for that."""
    result = await rest.service(request).read(paper, anchor, rest.WHOLE)
    if json:
        body, media_type = rest.dumps(result.value.to_json()), rest.JSON_TYPE
    else:
        body, media_type = result.value.markdown.encode(), rest.MARKDOWN_TYPE
    return rest.answer(request, result, body, media_type, vary_accept=True)


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


# What changed since another edition, as an HTML page (SPEC §10).
@router.get(
    "/{paper:path}/changes/{since:path}",
    summary="What changed since another edition: an HTML page with <ins>/<del> and MathML, "
    "each section linked to its page, unchanged sections folded",
    response_class=HTMLResponse,
    responses=rest.error_responses(rest.HTML_TYPE),
)
async def changes_page(request: Request, paper: rest.PaperPath, since: str) -> Response:
    compared = await rest.service(request).compared_text(paper, since, "The changes of its text")
    page = await asyncio.to_thread(_changes_html, compared.value)
    return rest.answer(request, compared, page.encode(), rest.HTML_TYPE)


def _changes_html(result: changes.Comparison) -> str:
    new = result.new
    idv = new.meta.idv
    since = result.old.meta.idv

    def section_href(node_id: str) -> str:
        return f"/{quote(idv, safe='/')}/sections/{quote(node_id, safe='')}"

    shown, gone = changes.page_sections(result)
    numbers = [{**number, "href": section_href(number["anchor"])} for number in result.numbers]
    base = f"/{quote(idv, safe='/')}/changes/{quote(since, safe='/')}"
    return render(
        "changes.html",
        paper_title=new.document.title.text or idv,
        idv=idv,
        since=since,
        markdown_href=f"{base}.md",
        json_href=f"{base}.json",
        numbers=numbers,
        summary=changes.summary(result),
        sections=[
            {**_section_view(section), "href": section_href(section.id)} for section in shown
        ],
        removed=[_section_view(section) for section in gone],
    )


def _section_view(section: changes.PageSection) -> dict[str, Any]:
    return {
        "id": section.id,
        "label": section.label,
        # HTML built by render/html.py, every string of the paper escaped there
        "heading": Markup(section.heading),
        "change": section.change,
        "changed": section.changed,
        "body": Markup(section.body),
    }


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
    moved = _moved(paper)
    if moved is not None:
        return RedirectResponse(moved, status_code=308)
    accept = request.headers.get("accept")
    if rest.prefers_json(accept):
        return await rest.outline_answer(request, paper, vary_accept=True)
    if rest.prefers_markdown(accept):
        return await _read_answer(request, paper, None, json=False)
    served = await rest.service(request).outline(paper)
    outline = served.value

    def source_link(anchor: str | None) -> str | None:
        # the public, versioned address (SPEC §4 permalink), never a configured mirror's
        return refs.permalink(outline["paper"], outline["idv"], outline["source"], anchor)

    metadata = outline["metadata"]
    public = request.app.state.settings.public
    page = render(
        "outline.html",
        outline=outline,
        # SPEC §12: a public server shows the structure of a paper it may not serve the text of
        text_served=not public or licence.allows_serving(outline["license"]),
        arxiv_abs=None if parse_ref(outline["paper"]).is_local else _abs_link(outline["idv"]),
        source_link=source_link,
        metadata=metadata,
        doi_link=_doi_link(metadata["doi"]) if metadata is not None else None,
        pending=served.pending,
        # the BibTeX is made of arXiv's metadata: linked where the API is asked, or where the
        # metadata is kept (offline, an outline that shows it can make it too)
        bibtex=not parse_ref(outline["paper"]).is_local
        and (request.app.state.discovery.asks_arxiv or metadata is not None),
    )
    cache = rest.outline_cache_control(served)
    return rest.answer(
        request, served, page.encode(), rest.HTML_TYPE, vary_accept=True, cache=cache
    )


def _abs_link(idv: str) -> str:
    return f"https://arxiv.org/abs/{quote(idv, safe='/')}"


def _moved(paper: str) -> str | None:
    """Where a page's address a reader typed by habit lives: arXiv's own paths with this host
    (`/abs/1706.03762v7`, `/pdf/1706.03762v7.pdf`, `/html/…`) and a trailing slash
    (`/local/short/`) open the paper's page. The address is rebuilt from the parsed reference,
    never from the path (`//evil.example/` must not become a redirect to another site)."""
    ref = refs.arxiv_page_path(paper)
    if ref is None and paper.endswith("/"):
        try:
            ref = parse_ref(paper.rstrip("/"))
        except PaperAnchorError:
            return None
    if ref is None:
        return None
    return "/" + quote(ref.idv if not ref.is_local else ref.paper, safe="/")


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
