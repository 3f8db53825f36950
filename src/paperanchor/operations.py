"""The operations, declared once: the table the MCP tools, the command line and the warm-up
are generated from.

Each `Operation` names its arguments (with their bounds and defaults, checked here and nowhere
else), its result's shapes, a short description, how it runs over the service, the pure
function that answers it on one `Paper` (the command line and the warm-up call that), and its
renderings: the JSON a tool returns, the text the command line prints. Adding an operation is
one entry here and one pure function (service.py), plus its tests; api/mcp.py and cli.py read
the table and need no edit.

This module imports no web, MCP or HTTP library: the doors turn its declarations into their
own types (pydantic fields, argparse arguments).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from paperanchor import compact, service, shapes
from paperanchor.errors import BadRequest
from paperanchor.images import MAX_IMAGES, Image
from paperanchor.paper import Paper
from paperanchor.service import Door, PaperService, Served
from paperanchor.tree import Equation, Figure, Paragraph, Table, walk

Kind = Literal["text", "integer", "number", "texts", "boolean"]
"""An argument's type: text, a whole number, a number, a list of texts, true or false."""

ToolSet = Literal["reader", "all"]

DEFAULT_WAIT_S: Final = 10.0
"""contract §4: agents wait for the inferred fields by default (MCP); REST and pages do not"""

PAPER_HELP: Final = "arXiv id or URL (1706.03762v7) or local/<name>"
ANCHOR_HELP: Final = "id, alias or slug: S3.SS2, S3.2, introduction"

CLI_PAPER_HELP: Final = (
    "a LaTeXML HTML file (.html, .html.gz), or an arXiv reference: 1706.03762, "
    "1706.03762v7, arXiv:1706.03762, hep-th/9901001v2, an arxiv.org or ar5iv URL, or "
    "local/<name> for <name>.html in PAPERANCHOR_LOCAL_DIR (which must be set)"
)
CLI_ANCHOR_HELP: Final = (
    "a node: its id (S3.SS2, S3.SS2.p1), alias (S3.2, F1, T2, E1), slug (introduction) or "
    "printed label (3.2, Table 2, Eq. (4))"
)


@dataclass(frozen=True, slots=True)
class CliArgument:
    """How the command line takes an argument: a positional (`flag` None) or a flag."""

    metavar: str
    help: str
    flag: str | None = None
    nargs: str | None = None
    switch: bool = False
    """a flag without a value that stands for 1 (`--anchors`)"""


@dataclass(frozen=True, slots=True)
class Rest:
    """How the REST routes take an argument: in the path where the route's path names it
    (`{paper:path}`, `{reference_id}`), else in the query."""

    help: str
    """its description in /openapi.json"""
    name: str | None = None
    """its Python name in /openapi.json and the path where not the argument's (`q`)"""
    alias: str | None = None
    """its name in the query where that is not `name` (`maxTokens`, `from`)"""
    required: bool | None = None
    """whether the query must give it, where REST differs from MCP (None: as `required`)"""
    absent: Any = None
    """what the argument is when the query leaves it out (None: absent)"""


@dataclass(frozen=True, slots=True)
class Argument:
    """One argument of an operation, as MCP and REST name it (`maxTokens`, `from`)."""

    name: str
    kind: Kind
    help: str
    """its description in the MCP tool's schema"""
    required: bool = False
    bounds: tuple[float, float] | None = None
    """the range a number must be in, checked by `Operation.check`"""
    default: float | None = None
    """what an absent bounded argument stands for"""
    unit: str = ""
    """what a number counts, for its error message (`seconds`)"""
    blank: bool = False
    """optional text where null is absent and a number stands for its digits (`id: 12`)"""
    keyword: str | None = None
    """the Python name where the wire name is a Python keyword (`from` -> `date_from`)"""
    what: str | None = None
    """how an either-or error message names it (`a text to verify`)"""
    cli: CliArgument | None = None
    """how the command line takes it; None: not on the command line"""
    rest: Rest | None = None
    """how the REST routes take it; None: not in a REST route's path or query"""
    tool: bool = True
    """whether the MCP tool takes it (`anchors` is always on over MCP, contract §11)"""

    @property
    def python_name(self) -> str:
        """The name the service's functions take it by."""
        return self.keyword or self.name

    @property
    def rest_name(self) -> str:
        """Its Python name in a REST route (/openapi.json titles it by it)."""
        return (self.rest.name if self.rest is not None else None) or self.python_name


Arguments = Mapping[str, Any]
"""An operation's arguments by Python name, after `Operation.check`."""


@dataclass(frozen=True, slots=True)
class Context:
    """What a pure function needs beyond the paper: the public URL and the reader's door."""

    public_url: str
    door: Door


@dataclass(frozen=True, slots=True)
class Command:
    """An operation on the command line: its subcommand and how its answer is printed."""

    name: str
    help: str
    text: Callable[[Any, Arguments], tuple[str, str]]
    """the answer as text: what goes to stdout and what to stderr"""
    json: Callable[[Any], Any] = lambda value: value


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation, declared once (module docstring)."""

    name: str
    description: str
    """the MCP tool's description (the untrusted-content note is added by api/mcp.py)"""
    arguments: tuple[Argument, ...]
    run: Callable[[PaperService, Arguments, Door], Awaitable[Any]]
    """the answer over the service (MCP, REST): a `Served` answer for an operation on one
    paper, the value itself for the others (`value_of` takes the value of either)"""
    tool: Callable[[Any], Any] | None
    """the tool's structured content from `run`'s answer; None: the answer is Markdown text"""
    shapes: tuple[Any, ...] = ()
    """the result's shapes (shapes.py), whose top-level fields the tool's output schema lists"""
    tools: ToolSet | None = "reader"
    """the tool set that lists it (PAPERANCHOR_TOOLS); None: no tool, a REST route only"""
    one_of: tuple[str, str] | None = None
    """two arguments of which exactly one must be given"""
    on_paper: Callable[[Paper, Arguments, Context], Any] | None = None
    """the pure function answering it on one paper (the command line, the warm-up)"""
    command: Command | None = None
    samples: Callable[[Paper], list[dict[str, Any]]] = lambda paper: []
    """arguments the warm-up runs `on_paper` with on its page (warmup.py)"""
    images: Callable[[Any], tuple[Image, ...]] = lambda value: ()
    """images the tool sends besides its JSON (MCP image content), from `run`'s answer"""
    notes: Callable[[Any], tuple[str, ...]] = lambda value: ()
    """lines the tool sends besides its JSON (why an image is not sent)"""

    def check(self, given: Mapping[str, Any], door: Door = "mcp") -> dict[str, Any]:
        """The arguments by Python name, each bounded one in its range (the one check); over
        MCP a blank optional text is absent (None)."""
        checked = dict(given)
        if door == "mcp":
            for argument in self.arguments:
                if argument.blank and checked.get(argument.python_name) == "":
                    checked[argument.python_name] = None
        for argument in self.arguments:
            value = checked.get(argument.python_name)
            if argument.bounds is not None and value is not None:
                name = argument.python_name
                if argument.kind == "number":
                    bounds, unit = argument.bounds, argument.unit
                    checked[name] = service.check_number(argument.name, value, bounds, unit)
                else:
                    checked[name] = service.check_integer(argument.name, value, argument.bounds)
        if self.one_of is not None:
            first, second = (self.argument(name) for name in self.one_of)
            if (checked.get(first.python_name) is None) == (
                checked.get(second.python_name) is None
            ):
                raise BadRequest(
                    f"{self.name if door != 'cli' else self.command_name} takes "
                    f"{_what(first, door)} or {_what(second, door)}, one of the two"
                )
        return checked

    def argument(self, name: str) -> Argument:
        """The argument of that wire name."""
        return next(argument for argument in self.arguments if argument.name == name)

    @property
    def command_name(self) -> str:
        """The subcommand's name (the operation's where it has none)."""
        return self.command.name if self.command is not None else self.name

    @property
    def renamed(self) -> dict[str, str]:
        """Wire names that are not Python names -> the Python names."""
        return {a.name: a.keyword for a in self.arguments if a.keyword is not None}


def _what(argument: Argument, door: Door) -> str:
    if door == "cli" and argument.cli is not None:
        cli = argument.cli
        if cli.flag is None:
            article = "an" if cli.metavar[:1] in "AEIOU" else "a"
            return f"{article} {cli.metavar}"
        return f"{cli.flag} {cli.metavar}"
    return argument.what or argument.name


# -- the arguments most operations share ----------------------------------------------------

REST_PAPER = Rest(
    "a paper: 1706.03762, 1706.03762v7, hep-th/9901001v2, arXiv:1706.03762, "
    "an arxiv.org or ar5iv URL, or local/<name>",
    name="paper",  # the bibtex operation's `papers` and `referencesOf` too
)
REST_ANCHOR = Rest("a node: its id (S3.SS2, S3.SS2.p1, S3.E1), alias (S3.2, F1, E1) or slug")

PAPER = Argument(
    "paper",
    "text",
    PAPER_HELP,
    required=True,
    cli=CliArgument("PAPER", CLI_PAPER_HELP),
    rest=REST_PAPER,
)

# tools/list is paid for on every request (contract §7: the seven under 1,500 tokens): the outline
# says what `since` is, read and references refer to it
SINCE_HELP: Final = "older edition (v1, ar5iv) to compare"
SINCE_CLI: Final = CliArgument(
    "EDITION",
    "what changed since this older edition (vN, arxiv, ar5iv, pdf, another reference of the "
    "paper, or a file when PAPER is one)",
    flag="--since",
)
SINCE = Argument(
    "since",
    "text",
    SINCE_HELP,
    cli=SINCE_CLI,
    rest=Rest(
        "an older edition of the paper: vN, arxiv, ar5iv, pdf or a reference of the same paper "
        "(contract §10)"
    ),
)
"""`since` (contract §10): in the query of the outline, read and references routes, in the path
of the changes routes"""
SINCE_AS_IN_OUTLINE = Argument("since", "text", "", cli=SINCE_CLI, rest=SINCE.rest)
"""`since` where the outline's schema has said what it is: no description of its own"""
SINCE_REQUIRED = Argument("since", "text", SINCE_HELP, required=True, rest=SINCE.rest)


def _flag(flag: str, metavar: str, help: str) -> CliArgument:
    """An optional argument of the command line, given as `--flag VALUE`."""
    return CliArgument(metavar, help, flag=flag)


def _option(
    name: str, kind: Kind, help: str, metavar: str, described: str, *, keyword: str | None = None
) -> Argument:
    """An optional argument taken as `--name VALUE` on the command line and as `name` in the
    query over REST (also where its Python name is `keyword`), both described by `described`
    (written once; `help` is the MCP schema's)."""
    return Argument(
        name,
        kind,
        help,
        keyword=keyword,
        cli=_flag(f"--{name}", metavar, described),
        rest=Rest(described, alias=name if keyword else None),
    )


def anchor(help: str, cli_help: str) -> Argument:
    """A required anchor argument."""
    return Argument(
        "anchor",
        "text",
        help,
        required=True,
        cli=CliArgument("ANCHOR", cli_help),
        rest=REST_ANCHOR,
    )


# -- the command line's text renderings ------------------------------------------------------


def outline_text(result: shapes.Outline, _arguments: Arguments) -> tuple[str, str]:
    """The outline as the command line prints it: title, authors, the indented section tree."""
    lines = [result["title"]]
    if result["authors"]:
        lines.append(", ".join(result["authors"]))
    quality = "" if result["quality"] == "ok" else f" · {result['quality']}"
    lines.append(f"{result['idv']} · {result['source']} · {result['tokens']} tokens{quality}")
    if result["tldr"]:
        lines.append(f"\nTL;DR: {result['tldr']}")
    lines.append("")

    def walk(sections: Sequence[shapes.Section], depth: int) -> None:
        for section in sections:
            number = f"{section['number']} " if section["number"] else ""
            count = section["errors"]
            errors = f"  [{count} conversion error{'s' if count != 1 else ''}]" if count else ""
            change = section.get("change")
            if change in ("edited", "moved"):
                errors += f"  [{change}: {section.get('changed', 0)} changed]"
            elif change == "added":
                errors += "  [added]"
            lines.append(
                f"{'  ' * depth}{number}{section['title']}  ({section['id']}, "
                f"{section['tokens']} tokens){errors}"
            )
            walk(section["children"], depth + 1)

    walk(result["sections"], 0)
    for gone in result.get("changes", {}).get("removed", []):
        number = f"{gone['number']} " if gone["number"] else ""
        lines.append(f"{number}{gone['title']}  ({gone['id']})  [removed]")
    return "".join(line + "\n" for line in lines), ""


def cite_text(result: shapes.Cite, _arguments: Arguments) -> tuple[str, str]:
    """A node's text, then where to quote it from (and, re-anchored, where it came from)."""
    match = f", {result['match']} match" if "match" in result else ""
    score = f" {result['score']}" if "score" in result else ""
    where = result["permalink"] or result["url"]
    tail = f"\n— {where} ({result['anchor']}{match}{score}; hash {result['hash']})\n"
    if "status" in result:
        was = result.get("was")
        came = f" from {was['anchor']} of {was['idv']}" if was else ""
        tail += f"  {result['status']}{came}, confidence {result.get('confidence')}\n"
    return result["text"] + "\n" + tail, ""


def references_text(result: Any, _arguments: Arguments) -> tuple[str, str]:
    """Each entry as `[N] text`, with where it is cited when one entry was asked for."""
    lines = []
    if "since" in result:  # the entries added and removed since another edition
        for sign, kind in (("+", "added"), ("-", "removed")):
            lines += [f"{sign} [{entry['number']}] {entry['text']}" for entry in result[kind]]
        return "".join(line + "\n" for line in lines), ""
    for entry in result.get("references", [result]):
        lines.append(f"[{entry['number']}] {entry['text']}")
        if "citedIn" in entry:
            lines.append(f"  cited in: {', '.join(entry['citedIn']) or '(nowhere)'}")
    return "".join(line + "\n" for line in lines), ""


def figure_text(result: Any, _arguments: Arguments) -> tuple[str, str]:
    """The caption, the image URLs and a table's rows."""
    lines = [f"{result['id']}: {result['caption']}", *result["images"]]
    lines += [" | ".join(row) for row in result.get("rows", [])]
    return "".join(line + "\n" for line in lines), ""


def equation_text(result: shapes.Equation, _arguments: Arguments) -> tuple[str, str]:
    """The id, printed number and TeX (an equation read from a PDF: its extracted text)."""
    number = f" ({result['number']})" if result["number"] else ""
    said = result["latex"] if result["latex"] is not None else result.get("text", "")
    return f"{result['id']}{number}: {said}\n", ""


def search_text(result: list[shapes.SearchHit], arguments: Arguments) -> tuple[str, str]:
    """One line a hit; a search without hits says so on stderr."""
    note = ""
    if not result:
        note = f'no paragraph of {arguments["paper"]} contains "{arguments["query"]}"\n'
    lines = [f"{hit['anchor']} [{hit['sectionId']}]: {hit['snippet']}\n" for hit in result]
    return "".join(lines), note


def read_text(result: service.ReadResult, _arguments: Arguments) -> tuple[str, str]:
    """The Markdown as it is."""
    return result.markdown, ""


def search_arxiv_text(result: shapes.SearchPage, _arguments: Arguments) -> tuple[str, str]:
    """Two lines a hit (id, date and title; the first authors); the count on stderr."""
    lines = []
    for hit in result["hits"]:
        lines.append(f"{hit['idv']}  {hit['published'][:10]}  {hit['title']}")
        lines.append(f"    {', '.join(hit['authors'])}")
    shown = len(result["hits"])
    first = result["start"] + 1 if shown else result["start"]
    note = f"{first}-{result['start'] + shown} of {result['total']} for {result['query']!r}\n"
    return "".join(line + "\n" for line in lines), note


def bibtex_text(result: str, _arguments: Arguments) -> tuple[str, str]:
    """The BibTeX as it is."""
    return result, ""


def citations_text(result: shapes.Citations, _arguments: Arguments) -> tuple[str, str]:
    """The count, then one line a citing paper: year, title, arXiv id or DOI."""
    lines = [f"{result['count']} papers cite {result['paper']}"]
    for citing in result["citations"]:
        year = citing["year"] if citing["year"] is not None else "----"
        where = f"arXiv:{citing['arxiv']}" if citing["arxiv"] else (citing["doi"] or "")
        lines.append(f"{year}  {citing['title']}" + (f"  ({where})" if where else ""))
    return "".join(line + "\n" for line in lines), ""


def metadata_text(result: shapes.Metadata, _arguments: Arguments) -> tuple[str, str]:
    """The record's title, authors, dates, categories and addresses, one a line."""
    lines = [
        result["title"],
        ", ".join(result["authors"]),
        f"{result['paper']}v{result['latestVersion']} · {result['primaryCategory']} · "
        f"published {result['published'][:10]}, updated {result['updated'][:10]}",
    ]
    lines += [
        f"{label}: {value}"
        for label, value in (
            ("categories", " ".join(result["categories"])),
            ("doi", result["doi"]),
            ("journal", result["journalRef"]),
            ("comment", result["comment"]),
        )
        if value
    ]
    lines.append(result["absUrl"])
    return "".join(line + "\n" for line in lines), ""


def trends_text(result: shapes.Trends, _arguments: Arguments) -> tuple[str, str]:
    """Submissions per day, then the top title terms."""
    partial = "" if result["complete"] else " (more than one query returns: a lower bound)"
    lines = [
        f"{result['category']}: {result['submissions']} submissions, {result['since']} to "
        f"{result['until']}{partial}"
    ]
    lines += [f"  {day['date']}  {day['count']}" for day in result["perDay"]]
    terms = ", ".join(f"{term['term']} ({term['count']})" for term in result["topTerms"])
    lines.append(f"top title terms: {terms or '(none)'}")
    return "".join(line + "\n" for line in lines), ""


# -- how each operation runs -----------------------------------------------------------------


DEPTH_RANGE: Final = (1, 10)


def depth_of(a: Arguments) -> int | None:
    """The outline's `depth` (contract §11): None for every level, else 1-10."""
    depth = a.get("depth")
    return None if depth is None else service.check_integer("depth", depth, DEPTH_RANGE)


async def _outline(svc: PaperService, a: Arguments, door: Door) -> Served[shapes.Outline]:
    depth = depth_of(a)
    if a.get("since"):
        found = await svc.outline_since(a["paper"], a["since"])
    else:
        found = await svc.outline(a["paper"])
    return replace(found, value=compact.at_depth(found.value, depth))


def _anchors(a: Arguments, door: Door) -> bool:
    """contract §11: MCP's reads always mark their blocks; REST and the command line ask."""
    asked = a.get("anchors")
    return door == "mcp" or (
        asked is not None and bool(service.check_integer("anchors", asked, (0, 1)))
    )


async def _read(svc: PaperService, a: Arguments, door: Door) -> Served[service.ReadResult]:
    if a.get("since"):
        return await svc.read_since(
            a["paper"], a.get("anchor"), a["since"], a.get("maxTokens"), door=door
        )
    anchors = _anchors(a, door)
    maximum = a.get("maxTokens")
    return await svc.read(a["paper"], a.get("anchor"), maximum, door, anchors=anchors)


async def _cite(svc: PaperService, a: Arguments, door: Door) -> Served[shapes.Cite]:
    """cite by anchor, by anchor from another edition, or by text (contract §4, §10)."""
    if a.get("text") is not None:
        if a.get("edition"):
            raise BadRequest("from goes with an anchor: a quote is found in the paper itself")
        return await svc.cite_text(a["paper"], a["text"], a.get("prefix"), a.get("suffix"))
    if a.get("edition"):
        return await svc.reanchor(a["paper"], a["anchor"], a["edition"])
    return await svc.cite(a["paper"], a["anchor"])


def _cite_on(paper: Paper, a: Arguments, context: Context) -> shapes.Cite:
    if a.get("text") is not None:
        return service.cite_text(
            paper, a["text"], context.public_url, a.get("prefix"), a.get("suffix")
        )
    return service.cite(paper, a["anchor"], context.public_url)


async def _references(
    svc: PaperService, a: Arguments, door: Door
) -> Served[shapes.ReferenceAnswer]:
    if a.get("since"):
        return await svc.references_since(a["paper"], a["since"])
    return await svc.reference_answer(a["paper"], a.get("id") or None)


async def _changes(svc: PaperService, a: Arguments, door: Door) -> Served[shapes.Changes]:
    return await svc.changes(a["paper"], a["since"])


async def _changes_markdown(svc: PaperService, a: Arguments, door: Door) -> Served[str]:
    return await svc.changes_markdown(a["paper"], a["since"])


async def _figure(svc: PaperService, a: Arguments, door: Door) -> Served[Any]:
    if a.get("image"):
        return await svc.figure_with_images(a["paper"], a["anchor"])
    return await svc.figure(a["paper"], a["anchor"])


async def _figure_image(svc: PaperService, a: Arguments, door: Door) -> Served[Image]:
    return await svc.figure_image(a["paper"], a["anchor"], a["n"])


def _figure_json(value: Any) -> Any:
    return value.figure if isinstance(value, service.Figured) else value


def _of_figured(field: str) -> Callable[[Any], tuple[Any, ...]]:
    return lambda value: getattr(value, field) if isinstance(value, service.Figured) else ()


async def _equation(svc: PaperService, a: Arguments, door: Door) -> Served[shapes.Equation]:
    return await svc.equation(a["paper"], a["anchor"])


async def _search_paper(
    svc: PaperService, a: Arguments, door: Door
) -> Served[list[shapes.SearchHit]]:
    return await svc.search_paper(a["paper"], a["query"], a.get("limit"))


SEARCH_ARXIV_ARGUMENTS = ("category", "date_from", "date_to", "sort", "start", "limit")


async def _search_arxiv(svc: PaperService, a: Arguments, door: Door) -> shapes.SearchPage:
    options = {name: a.get(name) for name in SEARCH_ARXIV_ARGUMENTS}
    return await svc.search_arxiv(a.get("query"), **options)


async def _bibtex(svc: PaperService, a: Arguments, door: Door) -> str | Served[str]:
    if a.get("papers") is not None:
        return await svc.bibtex(a["papers"])
    return await svc.references_bibtex(a["referencesOf"])


async def _citations(svc: PaperService, a: Arguments, door: Door) -> shapes.Citations:
    return await svc.citations(a["paper"], a.get("limit"))


async def _category_trends(svc: PaperService, a: Arguments, door: Door) -> shapes.Trends:
    return await svc.category_trends(a["category"], a.get("days"))


async def _metadata(svc: PaperService, a: Arguments, door: Door) -> shapes.Metadata:
    return await svc.metadata(a["paper"])


async def _categories(svc: PaperService, a: Arguments, door: Door) -> shapes.Taxonomy:
    return svc.categories()


def value_of(answer: Any) -> Any:
    """What `Operation.run` answered, without the facts about its paper when it has some."""
    return answer.value if isinstance(answer, Served) else answer


def over_paper(
    pure: Callable[[Paper, Arguments, Context], Any],
) -> Callable[[PaperService, Arguments, Door], Awaitable[Any]]:
    """An operation's `run` from its pure function: the paper loaded, `pure` run on it."""

    async def run(svc: PaperService, arguments: Arguments, door: Door) -> Any:
        context = Context(svc.public_url, door)
        return await svc.on_paper(arguments["paper"], lambda paper: pure(paper, arguments, context))

    return run


def _same(value: Any) -> Any:
    return value


# -- what the warm-up asks of its page: the paths a first request takes ----------------------


def _first_sections(paper: Paper) -> list[str]:
    return [section.id for section in paper.document.sections[:2]]


def _first_of(paper: Paper, kinds: tuple[type, ...]) -> list[str]:
    found = next(
        (v.node.id for v in walk(paper.document.blocks) if isinstance(v.node, kinds)), None
    )
    return [] if found is None else [found]


def _read_samples(paper: Paper) -> list[dict[str, Any]]:
    # the whole paper, then a cut read of each of the first sections
    return [{"anchor": None}] + [
        {"anchor": node_id, "maxTokens": 100} for node_id in _first_sections(paper)
    ]


def _search_samples(paper: Paper) -> list[dict[str, Any]]:
    title = paper.document.title.text
    return [{"query": title.split()[0] if title else "a"}]


OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation(
        "outline",
        "Start here: title, authors, abstract, TL;DR, contributions and the section tree "
        "(ids, numbers, tokens).",
        (
            PAPER,
            Argument(
                "wait",
                "number",
                "s to wait for tldr/contributions, 0-60, default 10",
                bounds=service.WAIT_RANGE,
                default=DEFAULT_WAIT_S,
                unit="seconds",
            ),
            Argument(
                "depth",
                "integer",
                "section levels, 1-10",
                bounds=DEPTH_RANGE,
                cli=CliArgument(
                    "N",
                    "show N levels of sections (1-10; deeper ones count in their parents' tokens)",
                    flag="--depth",
                ),
                rest=Rest("levels of sections, 1-10 (default all)"),
            ),
            SINCE,
        ),
        _outline,
        compact.compact,
        (shapes.CompactOutline,),
        on_paper=lambda paper, a, context: compact.at_depth(service.outline(paper), depth_of(a)),
        samples=lambda paper: [{}],
        command=Command(
            "outline",
            "title, authors, abstract, TL;DR and the section tree with token counts",
            outline_text,
        ),
    ),
    Operation(
        "read",
        "A section or any block as Markdown, cut at maxTokens; cite <!--¶N--> as ¶N.",
        (
            PAPER,
            Argument(
                "anchor",
                "text",
                "as in outline, or paper for the whole paper",
                required=True,
                cli=CliArgument("ANCHOR", f"{CLI_ANCHOR_HELP}; or paper", nargs="?"),
                rest=REST_ANCHOR,
            ),
            Argument(
                "maxTokens",
                "integer",
                "100-100000, default 8000",
                bounds=service.MAX_TOKENS_RANGE,
                default=service.DEFAULT_MAX_TOKENS,
                cli=CliArgument(
                    "N",
                    "cut the Markdown at about N tokens (100-100000, default 8000)",
                    flag="--max-tokens",
                ),
                rest=Rest(
                    "cut the Markdown at a block boundary (100-100000)",
                    name="max_tokens",
                    alias="maxTokens",
                    # Markdown routes answer the whole node unless ?maxTokens= asks for less
                    # (contract §6)
                    absent=service.WHOLE_NODE,
                ),
            ),
            Argument(
                "anchors",
                "integer",
                "1: mark each citable block with its anchor",
                bounds=(0, 1),
                tool=False,
                cli=CliArgument(
                    "",
                    "mark each citable block with the anchor cite takes (<!--¶12-->)",
                    flag="--anchors",
                    switch=True,
                ),
                rest=Rest(
                    "1: mark each citable block with the anchor cite takes, as <!--¶12--> "
                    "(contract §11)"
                ),
            ),
            SINCE_AS_IN_OUTLINE,
        ),
        _read,
        None,
        on_paper=lambda paper, a, context: service.read(
            paper,
            a["anchor"],
            a.get("maxTokens"),
            context.door,
            anchors=_anchors(a, context.door),
        ),
        command=Command(
            "read",
            "a section (or any anchor) as Markdown; the whole paper without one",
            read_text,
            json=lambda result: result.to_json(),
        ),
        samples=_read_samples,
    ),
    Operation(
        "cite",
        "Exact text of a paragraph or section with a permalink to quote; or verify a quote "
        "(text) and get its paragraph.",
        (
            PAPER,
            Argument(
                "anchor",
                "text",
                "a node; or give text",
                blank=True,
                what="an anchor",
                cli=CliArgument("ANCHOR", CLI_ANCHOR_HELP, nargs="?"),
                rest=REST_ANCHOR,
            ),
            Argument(
                "text",
                "text",
                "a quote to verify, 10-2000 chars",
                blank=True,
                what="a text to verify",
                cli=CliArgument(
                    "QUOTE",
                    "instead of ANCHOR: a quote of 10-2000 characters to find in the paper "
                    "(exact, else fuzzy at a score of 90 or more)",
                    flag="--text",
                ),
                rest=Rest(
                    "the quoted text, 10-2000 characters (compared case- and space-blind)",
                    required=True,
                ),
            ),
            Argument(
                "from",
                "text",
                "anchor's edition: vN, arxiv, ar5iv, pdf",
                blank=True,
                keyword="edition",
                cli=CliArgument(
                    "EDITION",
                    "ANCHOR names a node of this edition of the paper (vN, arxiv, ar5iv, pdf, "
                    "another reference of the paper, a file): find it in PAPER",
                    flag="--from",
                ),
                rest=Rest(
                    "the edition the anchor names a node of (vN, arxiv, ar5iv, pdf, a reference)",
                    name="edition",
                    alias="from",
                ),
            ),
            Argument(
                "prefix",
                "text",
                "text before it",
                blank=True,
                cli=CliArgument(
                    "TEXT", "with --text: the text just before the quote", flag="--prefix"
                ),
                rest=Rest("the text just before the quote (a stored Cite's prefix)"),
            ),
            Argument(
                "suffix",
                "text",
                "text after it",
                blank=True,
                cli=CliArgument(
                    "TEXT", "with --text: the text just after the quote", flag="--suffix"
                ),
                rest=Rest("the text just after the quote (a stored Cite's suffix)"),
            ),
        ),
        _cite,
        _same,
        (shapes.Cite,),
        one_of=("anchor", "text"),
        on_paper=_cite_on,
        samples=lambda paper: [{"anchor": a} for a in _first_of(paper, (Paragraph,))],
        command=Command(
            "cite",
            "exact plain text of a paragraph or section with a permalink; or verify a quote",
            cite_text,
        ),
    ),
    Operation(
        "references",
        "The bibliography (references), or one entry with the paragraphs citing it "
        "(reference, when id is given).",
        (
            PAPER,
            Argument(
                "id",
                "text",
                "bib.bib12, 12 or [12]; omit for all",
                blank=True,
                cli=CliArgument("ID", "bib.bib12, 12 or [12]; omit for all entries", nargs="?"),
                rest=Rest("bib.bib12, 12 or [12]", name="reference_id"),
            ),
            SINCE_AS_IN_OUTLINE,
        ),
        _references,
        _same,
        (shapes.ReferenceAnswer,),
        on_paper=lambda paper, a, context: service.references(paper, a.get("id")),
        samples=lambda paper: [{}],
        command=Command(
            "references", "the bibliography, or one entry and where it is cited", references_text
        ),
    ),
    Operation(
        "figure",
        "A figure (caption, image URLs, panels) or a table (caption, cells).",
        (
            PAPER,
            anchor("S3.F1, F1, S6.T2, T2", "S3.F1, F1, S6.T2, T2, Figure 3, Table 2"),
            Argument("image", "boolean", f"true: its first {MAX_IMAGES} images too"),
        ),
        _figure,
        _figure_json,
        (shapes.Figure, shapes.Table),
        images=_of_figured("images"),
        notes=_of_figured("missing"),
        on_paper=lambda paper, a, context: service.figure(paper, a["anchor"]),
        samples=lambda paper: [{"anchor": a} for a in _first_of(paper, (Figure, Table))],
        command=Command(
            "figure", "a figure (caption, image URLs, panels) or a table (cells)", figure_text
        ),
    ),
    Operation(
        "equation",
        "An equation's LaTeX and printed number.",
        (PAPER, anchor("S3.E1, E1 or a group id", "S3.E1, E1, Eq. (1), (1), or a group id")),
        _equation,
        _same,
        (shapes.Equation,),
        on_paper=lambda paper, a, context: service.equation(paper, a["anchor"]),
        samples=lambda paper: [{"anchor": a} for a in _first_of(paper, (Equation,))],
        command=Command("equation", "an equation's LaTeX and printed number", equation_text),
    ),
    Operation(
        "search_paper",
        "Paragraphs of one paper containing the query's words, best first, with anchors.",
        (
            PAPER,
            Argument(
                "query",
                "text",
                "words to find",
                required=True,
                cli=CliArgument("WORD", "words to find (case-blind)", nargs="+"),
                rest=Rest("words to look for (case-insensitive substrings)", name="q"),
            ),
            Argument(
                "limit",
                "integer",
                "1-50, default 5",
                bounds=service.LIMIT_RANGE,
                default=service.DEFAULT_LIMIT,
                cli=CliArgument("N", "hits to show, 1-50 (default 5)", flag="--limit"),
                rest=Rest("hits to return, 1-50 (default 5)"),
            ),
        ),
        _search_paper,
        lambda hits: {"hits": hits},
        (shapes.Hits,),
        on_paper=lambda paper, a, context: service.search_paper(paper, a["query"], a.get("limit")),
        command=Command(
            "search", "paragraphs containing the query's words, best first", search_text
        ),
    ),
    Operation(
        "search_arxiv",
        "Search arXiv: compact hits (id, title, first authors, date, summary), newest "
        "with sort=submitted.",
        (
            Argument(
                "query",
                "text",
                "words, or ti: au: abs: cat: AND OR ANDNOT",
                required=True,
                cli=CliArgument(
                    "QUERY", "words, or arXiv's ti: au: abs: cat: AND OR ANDNOT", nargs="*"
                ),
                rest=Rest(
                    "arXiv's search_query: words, or ti:, au:, abs:, cat:, AND, OR, ANDNOT",
                    name="q",
                    required=False,  # a category alone is a search too
                ),
            ),
            _option(
                "category",
                "text",
                "cs.LG",
                "CAT",
                "an arXiv category, cs.LG",
            ),
            _option(
                "from",
                "text",
                "YYYY-MM-DD",
                "DAY",
                "first submission day, YYYY-MM-DD (UTC)",
                keyword="date_from",
            ),
            _option(
                "to",
                "text",
                "YYYY-MM-DD",
                "DAY",
                "last submission day, YYYY-MM-DD (UTC)",
                keyword="date_to",
            ),
            Argument(
                "sort",
                "text",
                "relevance|submitted|updated",
                cli=_flag("--sort", "ORDER", "relevance (default), submitted or updated"),
                rest=Rest("relevance, submitted or updated"),
            ),
            _option(
                "start",
                "integer",
                "from 0",
                "N",
                "the first result, from 0",
            ),
            _option(
                "limit",
                "integer",
                "1-50, default 10",
                "N",
                "results, 1-50 (default 10)",
            ),
        ),
        _search_arxiv,
        _same,
        (shapes.SearchPage,),
        tools="all",
        command=Command(
            "search-arxiv",
            "search arXiv (the arXiv API): id, date, title, first authors",
            search_arxiv_text,
        ),
    ),
    Operation(
        "bibtex",
        "BibTeX that compiles: of arXiv papers, or of a paper's bibliography (referencesOf).",
        (
            # over REST, one paper in the path: /{paper}.bib, /{paper}/references.bib
            Argument(
                "papers",
                "texts",
                "1-20 arXiv ids",
                cli=CliArgument("PAPER", "1-20 arXiv papers", nargs="*"),
                rest=REST_PAPER,
            ),
            Argument(
                "referencesOf",
                "text",
                "a paper: its bibliography",
                cli=_flag("--references-of", "PAPER", "instead: the bibliography of this paper"),
                rest=REST_PAPER,
            ),
        ),
        _bibtex,
        lambda bib: {"bibtex": bib},
        (shapes.BibTeX,),
        tools="all",
        one_of=("papers", "referencesOf"),
        command=Command(
            "bibtex",
            "BibTeX that compiles: of arXiv papers, or of a paper's bibliography",
            bibtex_text,
            json=lambda bib: {"bibtex": bib},
        ),
    ),
    Operation(
        "citations",
        "Papers citing an arXiv paper (Semantic Scholar): count, titles, years, arXiv ids.",
        (
            PAPER,
            Argument(
                "limit",
                "integer",
                "1-100, default 20",
                cli=_flag("--limit", "N", "citing papers to show, 1-100 (default 20)"),
                rest=Rest("citing papers, 1-100 (default 20)"),
            ),
        ),
        _citations,
        _same,
        (shapes.Citations,),
        tools="all",
        command=Command(
            "citations", "papers citing an arXiv paper (Semantic Scholar)", citations_text
        ),
    ),
    Operation(
        "category_trends",
        "An arXiv category's submissions per day and top title terms, last 1-30 days.",
        (
            Argument(
                "category",
                "text",
                "cs.LG, hep-th",
                required=True,
                cli=CliArgument("CATEGORY", "an arXiv category: cs.LG, hep-th"),
                rest=Rest("an arXiv category: cs.LG, hep-th, math.AG"),
            ),
            _option(
                "days",
                "integer",
                "1-30, default 7",
                "N",
                "the last 1-30 days (default 7)",
            ),
        ),
        _category_trends,
        _same,
        (shapes.Trends,),
        tools="all",
        command=Command(
            "trends", "an arXiv category's submissions per day and top title terms", trends_text
        ),
    ),
    # two answers only REST gives (contract §6): a paper's arXiv record and arXiv's taxonomy
    Operation(
        "metadata",
        "A paper's arXiv metadata.",
        (PAPER,),
        _metadata,
        _same,
        tools=None,
        command=Command(
            "metadata", "a paper's arXiv record: title, authors, dates, DOI", metadata_text
        ),
    ),
    Operation("categories", "arXiv's category taxonomy.", (), _categories, _same, tools=None),
    Operation(
        "figure_image",
        "One image of a figure or a table, as bytes.",
        (
            PAPER,
            anchor("S3.F1, F1", "S3.F1, F1, Figure 3"),
            Argument(
                "n",
                "integer",
                f"the image's number, 1-{MAX_IMAGES}",
                required=True,
                bounds=(1, MAX_IMAGES),
                rest=Rest(f"the image's number in the figure's `images`, 1-{MAX_IMAGES}"),
            ),
        ),
        _figure_image,
        _same,
        tools=None,
    ),
    # what changed since another edition, whole (contract §10): over MCP it is `since` on outline,
    # read and references
    Operation(
        "changes",
        "What changed since another edition: Changes with every section's change.",
        (PAPER, SINCE_REQUIRED),
        _changes,
        _same,
        tools=None,
    ),
    Operation(
        "changes_markdown",
        "What changed since another edition, as CriticMarkup.",
        (PAPER, SINCE_REQUIRED),
        _changes_markdown,
        None,
        tools=None,
    ),
)
"""Every operation, in the order the tools are listed and the subcommands offered."""

BY_NAME: Final = {operation.name: operation for operation in OPERATIONS}


def operation(name: str) -> Operation:
    """The operation of that name in the table."""
    return next(op for op in OPERATIONS if op.name == name)


def listed(tools: ToolSet) -> list[Operation]:
    """The operations a tool set offers: `reader` the reading ones, `all` every one."""
    return [op for op in OPERATIONS if op.tools == "reader" or (tools == "all" and op.tools)]


def commands() -> list[Operation]:
    """The operations the command line offers, in the table's order: the reading ones, which
    run on one paper (`on_paper`), and the discovery ones, which run over the service."""
    return [op for op in OPERATIONS if op.command is not None]


def dumps(value: Any) -> str:
    """JSON as the tools send it: compact, UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- the REST routes (contract §6), in matching order: specific suffixes first ---------------------

Where = Literal["path", "query"]
Form = Literal["json", "markdown", "bibtex", "image"]
Caching = Literal["paper", "latest", "taxonomy", "local-or-latest", "outline"]
"""How a route's answer is kept (api/rest.py): as its paper's, an hour, a day, an hour unless
the paper is local, or as an outline (whose metadata may come later)."""


@dataclass(frozen=True, slots=True)
class Route:
    """One REST route of an operation: where it is, which of the operation's arguments it
    leaves out, how it answers. It takes every other argument that has a REST form (`Rest`):
    in the path where its path names it, else in the query."""

    operation: str
    path: str
    name: str
    """the endpoint's name (/openapi.json's operationId is made from it)"""
    summary: str
    leaves: tuple[str, ...] = ()
    """arguments (wire names) this route does not take: another route of the operation does"""
    form: Form = "json"
    shape: Any = None
    """the JSON answer's shape, for /openapi.json"""
    doc: str | None = None
    body: Callable[[Any], Any] = _same
    """the value -> what is sent: JSON to encode, or text"""
    caching: Caching = "paper"

    def arguments(self, operation: Operation) -> list[tuple[Argument, Where]]:
        """The arguments of `operation` this route takes, in the table's order, and where."""
        taken: list[tuple[Argument, Where]] = []
        for argument in operation.arguments:
            if argument.rest is None or argument.name in self.leaves:
                continue
            name = argument.rest_name
            in_path = f"{{{name}}}" in self.path or f"{{{name}:" in self.path
            taken.append((argument, "path" if in_path else "query"))
        return taken


ROUTES: Final[tuple[Route, ...]] = (
    # discovery first: a paper is never `search` or `categories`, and the paper routes would
    # take /search.json for a paper's
    Route(
        "search_arxiv",
        "/search.json",
        "search_arxiv",
        "Search arXiv",
        shape=shapes.SearchPage,
        doc="One page of an arXiv API search: `{query, total, start, hits}`; an empty page is an\n"
        "empty list (contract §4).",
        caching="latest",
    ),
    Route(
        "categories",
        "/categories.json",
        "categories",
        "arXiv's category taxonomy",
        shape=shapes.Taxonomy,
        caching="taxonomy",
    ),
    Route(
        "category_trends",
        "/categories/{category}/trends.json",
        "category_trends",
        "Daily submissions and top title terms of a category",
        shape=shapes.Trends,
        caching="latest",
    ),
    Route(
        "metadata",
        "/{paper:path}/metadata.json",
        "metadata",
        "arXiv metadata",
        shape=shapes.Metadata,
        doc="The arXiv API's record of the paper (a versioned id: that version's).",
        caching="latest",
    ),
    Route(
        "citations",
        "/{paper:path}/citations.json",
        "citations",
        "Papers that cite it (Semantic Scholar)",
        shape=shapes.Citations,
        caching="latest",
    ),
    Route(
        "bibtex",
        "/{paper:path}/references.bib",
        "references_bib",
        "The bibliography as BibTeX (arXiv papers from the arXiv API)",
        leaves=("papers",),
        form="bibtex",
        caching="local-or-latest",
    ),
    Route(
        "outline",
        "/{paper:path}/outline.json",
        "outline_json",
        "Outline",
        shape=shapes.Outline,
        doc="Title, authors, abstract, TL;DR, contributions and the section tree with token "
        "counts.\n`Prefer: wait=N` (0-60 s) waits for the inferred fields and is answered in\n"
        "`Preference-Applied`; `depth` keeps that many levels of sections, each counting the\n"
        "tokens of those under it.",
        caching="outline",
    ),
    Route(
        "changes",
        "/{paper:path}/changes/{since:path}.json",
        "changes_json",
        "What changed since another edition",
        shape=shapes.Changes,
        doc="`Changes` (contract §10): counts of sections, paragraphs, equations, tables, figures\n"
        "and references per kind of change, the numbers that changed, and every section's change.",
    ),
    Route(
        "changes_markdown",
        "/{paper:path}/changes/{since:path}.md",
        "changes_markdown",
        "What changed since another edition, as CriticMarkup",
        form="markdown",
        doc="The numbers that changed, the counts, then each changed section's changed blocks\n"
        "in CriticMarkup (`{++…++}`, `{--…--}`, `{~~old~>new~~}`).",
    ),
    Route(
        "read",
        "/{paper:path}/sections/{anchor}.md",
        "section_markdown",
        "A node as Markdown",
        form="markdown",
        body=lambda result: result.markdown,
    ),
    Route(
        "read",
        "/{paper:path}/sections/{anchor}.json",
        "section_json",
        "A node's Markdown",
        shape=shapes.SectionText,
        body=lambda result: result.to_json(),
    ),
    Route(
        "cite",
        "/{paper:path}/cite.json",
        "cite_text",
        "Verify a quote",
        leaves=("anchor", "from"),
        shape=shapes.Cite,
        doc="The paragraph that contains the quote: exact, else fuzzy (score 90 or more), else\n"
        "not-found naming the closest passage (contract §4, cite by text); prefix and suffix tell\n"
        "apart passages that hold the same quote (contract §10).",
    ),
    Route(
        "cite",
        "/{paper:path}/cite/{anchor}.json",
        "cite",
        "Quote a node",
        leaves=("text", "prefix", "suffix"),
        shape=shapes.Cite,
        doc="A node's exact text; with `from`, the node of that edition found in this one, with\n"
        "status, confidence and was, or not-found naming the closest passage (contract §10).",
    ),
    Route(
        "references",
        "/{paper:path}/references.json",
        "references",
        "Bibliography",
        leaves=("id",),
        shape=shapes.References | shapes.ReferenceAnswer,
    ),
    Route(
        "references",
        "/{paper:path}/references/{reference_id}.json",
        "reference",
        "One bibliography entry and where it is cited",
        leaves=("since",),
        shape=shapes.Reference,
        body=lambda answer: answer["reference"],
    ),
    Route(
        "figure",
        "/{paper:path}/figures/{anchor}.json",
        "figure",
        "Float",
        shape=shapes.Figure | shapes.Table,
    ),
    Route(
        "figure_image",
        "/{paper:path}/figures/{anchor}/{n}",
        "figure_image",
        "One image of a figure, as bytes",
        form="image",
        doc="The bytes of the figure's `n`th image (from 1, at most 4) as its own site serves\n"
        "them, with the media type read from its first bytes: PNG, JPEG, GIF, WebP or SVG.",
    ),
    Route(
        "equation",
        "/{paper:path}/equations/{anchor}.json",
        "equation",
        "Equation",
        shape=shapes.Equation,
    ),
    Route(
        "search_paper",
        "/{paper:path}/search.json",
        "search_paper",
        "Search a paper",
        shape=list[shapes.SearchHit],
    ),
    Route(
        "bibtex",
        "/{paper:path}.bib",
        "paper_bib",
        "The paper's BibTeX (@misc, from the arXiv API)",
        leaves=("referencesOf",),
        form="bibtex",
        caching="latest",
    ),
    Route(
        "read",
        "/{paper:path}.md",
        "paper_markdown",
        "The whole paper as Markdown",
        leaves=("anchor",),
        form="markdown",
        body=lambda result: result.markdown,
    ),
)
"""The REST routes of the operations; api/pages.py's HTML pages come after them."""
