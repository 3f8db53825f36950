"""The command line: the seven operations on a file or a reference, plus fetch/serve/mcp."""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import logging.config
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paperanchor import service
from paperanchor.errors import BadRequest, NotFound, PaperAnchorError, ParseError, internal
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.terminal import TerminalText

Operation = Callable[[service.Paper, argparse.Namespace], Any]


def _file_paper(path: Path) -> service.Paper:
    """A paper read straight from a file: LaTeXML HTML (`.html`, `.html.gz`) or a PDF."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise NotFound(f"Cannot read {path}: {exc.strerror}") from None
    if path.name.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise BadRequest(f"{path} is not a readable gzip file ({exc})") from None
    name = path.name.removesuffix(".gz")
    if _is_pdf(path, data):
        # a private draft read before it is on arXiv: the same tree from its text layer
        from paperanchor.parse.pdf import parse_pdf

        name = name.removesuffix(".pdf").removesuffix(".PDF")
        try:
            document = parse_pdf(data, path.resolve().as_uri())
        except PaperAnchorError as exc:
            # the same error, naming the file it is about
            raise type(exc)(f"{path}: {exc.detail}") from None
    else:
        name = name.removesuffix(".html")
        document = parse_document(data, path.resolve().as_uri())
    return service.Paper.open(
        service.LocalPaper(document, f"local/{name}", f"local/{name}", source_url=str(path))
    )


def _is_pdf(path: Path, data: bytes) -> bool:
    """A `.pdf` name, or PDF bytes under another name (a PDF saved without its extension)."""
    return path.suffix.lower() == ".pdf" or data[:1024].lstrip().startswith(b"%PDF-")


def _looks_like_path(text: str) -> bool:
    if text.endswith((".html", ".htm", ".html.gz", ".xhtml")) or Path(text).is_file():
        return True
    # `https://arxiv.org/pdf/1706.03762v7.pdf` is a paper reference, not a file
    return text.lower().endswith(".pdf") and "://" not in text


async def _with_paper(reference: str, job: Callable[[service.Paper], Any]) -> Any:
    if _looks_like_path(reference):
        try:
            paper = _file_paper(Path(reference))
        except ParseError as exc:
            # a file on this machine is no upstream's answer: say what it is not
            if reference.lower().endswith(".pdf") or exc.detail.startswith(reference):
                raise BadRequest(exc.detail) from None  # the PDF reader names the file
            raise BadRequest(f"{reference} is not a LaTeXML document ({exc.detail})") from None
        return job(paper)
    from paperanchor.library import Library
    from paperanchor.settings import get_settings

    settings = get_settings()
    library = Library(settings, parse=parse_document, parser_version=PARSER_VERSION)
    try:
        svc = service.PaperService(library, settings.public_base)
        return job(await svc.paper(reference))
    finally:
        await library.aclose()


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _show_outline(result: dict[str, Any]) -> None:
    print(result["title"])
    if result["authors"]:
        print(", ".join(result["authors"]))
    quality = "" if result["quality"] == "ok" else f" · {result['quality']}"
    print(f"{result['idv']} · {result['source']} · {result['tokens']} tokens{quality}")
    if result["tldr"]:
        print(f"\nTL;DR: {result['tldr']}")
    print()

    def walk(sections: list[dict[str, Any]], depth: int) -> None:
        for section in sections:
            number = f"{section['number']} " if section["number"] else ""
            count = section["errors"]
            errors = f"  [{count} conversion error{'s' if count != 1 else ''}]" if count else ""
            print(
                f"{'  ' * depth}{number}{section['title']}  ({section['id']}, "
                f"{section['tokens']} tokens){errors}"
            )
            walk(section["children"], depth + 1)

    walk(result["sections"], 0)


def _run(args: argparse.Namespace) -> int:
    command = args.command
    if command == "fetch":
        return asyncio.run(_fetch_all(args.papers))
    if command == "serve":
        return _serve(args)
    if command == "mcp":
        return _mcp_stdio()
    as_json = getattr(args, "json", False)

    def job(paper: service.Paper) -> Any:
        if command == "outline":
            return service.outline(paper)
        if command == "read":
            return service.read(paper, args.anchor, args.max_tokens, door="cli")
        if command == "cite":
            if (args.anchor is None) == (args.text is None):
                raise BadRequest("cite takes an ANCHOR or --text QUOTE, one of the two")
            if args.text is not None:
                return service.cite_text(paper, args.text, _public_url())
            return service.cite(paper, args.anchor, _public_url())
        if command == "references":
            return service.references(paper, args.id)
        if command == "figure":
            return service.figure(paper, args.anchor)
        if command == "equation":
            return service.equation(paper, args.anchor)
        if command == "search":
            return service.search_paper(paper, " ".join(args.query), args.limit)
        raise BadRequest(f"unknown command {command}")

    result = asyncio.run(_with_paper(args.paper, job))
    if command == "read":
        if as_json:
            _print_json(result.to_json())
        else:
            sys.stdout.write(result.markdown)
    elif as_json:
        _print_json(result)
    elif command == "outline":
        _show_outline(result)
    elif command == "cite":
        print(result["text"])
        match = f", {result['match']} match" if "match" in result else ""
        score = f" {result['score']}" if "score" in result else ""
        where = result["permalink"] or result["url"]
        print(f"\n— {where} ({result['anchor']}{match}{score}; hash {result['hash']})")
    elif command == "references":
        entries = result.get("references", [result])
        for entry in entries:
            print(f"[{entry['number']}] {entry['text']}")
            if "citedIn" in entry:
                print(f"  cited in: {', '.join(entry['citedIn']) or '(nowhere)'}")
    elif command == "figure":
        print(f"{result['id']}: {result['caption']}")
        for url in result["images"]:
            print(url)
        for row in result.get("rows", []):
            print(" | ".join(row))
    elif command == "equation":
        number = f" ({result['number']})" if result["number"] else ""
        # an equation read from a PDF has no TeX, only its extracted text
        shown = result["latex"] if result["latex"] is not None else result.get("text", "")
        print(f"{result['id']}{number}: {shown}")
    elif command == "search":
        if not result:
            words = " ".join(args.query)
            print(f'no paragraph of {args.paper} contains "{words}"', file=sys.stderr)
        for hit in result:
            print(f"{hit['anchor']} [{hit['sectionId']}]: {hit['snippet']}")
    return 0


async def _fetch_all(references: list[str]) -> int:
    """Prefetch papers into the cache with a progress bar; one summary line at the end."""
    import time

    from tqdm import tqdm

    from paperanchor.library import Library
    from paperanchor.refs import parse_ref
    from paperanchor.settings import get_settings

    settings = get_settings()
    started = time.monotonic()
    fetched = cached = failed = 0
    async with Library(settings, parse=parse_document, parser_version=PARSER_VERSION) as library:
        with tqdm(
            total=len(references), unit="paper", file=sys.stderr, disable=None
        ) as bar:  # disable=None: no bar when stderr is not a terminal
            for reference in references:
                bar.set_postfix_str(reference[:40])
                before = library.cache_hits
                if _looks_like_path(reference):
                    # a file is read and parsed to check it; it is not an arXiv paper to cache
                    try:
                        paper = await _with_paper(reference, lambda found: found)
                    except PaperAnchorError as exc:
                        failed += 1
                        tqdm.write(f"{reference}: {exc.wire_text()}", file=sys.stderr)
                    else:
                        fetched += 1
                        tqdm.write(f"{reference}: file, {paper.tokens()} tokens", file=sys.stdout)
                    bar.update(1)
                    continue
                try:
                    loaded = await library.load(parse_ref(reference))
                except PaperAnchorError as exc:
                    failed += 1
                    tqdm.write(f"{reference}: {exc.wire_text()}", file=sys.stderr)
                else:
                    if library.cache_hits > before:
                        cached += 1
                    else:
                        fetched += 1
                    tqdm.write(f"{loaded.idv}: {loaded.source}", file=sys.stdout)
                bar.update(1)
    elapsed = time.monotonic() - started
    print(
        f"{len(references)} papers: {fetched} fetched, {cached} already cached, "
        f"{failed} failed in {elapsed:.1f} s",
        file=sys.stderr,
    )
    return 1 if failed else 0


def _serve(args: argparse.Namespace) -> int:
    """`paperanchor serve`: REST, MCP at /mcp and the pages, in one uvicorn server."""
    import uvicorn

    from paperanchor.api.logs import log_config
    from paperanchor.api.transport import raise_open_file_limit, server_options
    from paperanchor.app import create_app
    from paperanchor.settings import get_settings

    logging.config.dictConfig(log_config())  # before the MCP SDK installs a handler of its own
    raise_open_file_limit()  # before the connection cap is fitted to it; workers inherit it
    flags = {"host": args.host, "port": args.port, "public_url": args.public_url}
    overrides = {name: value for name, value in flags.items() if value is not None}
    common: dict[str, Any] = {"log_level": args.log_level, "log_config": log_config()}
    if args.workers > 1:
        # Worker processes build their own app from the environment: hand the flags over there.
        for name, value in overrides.items():
            os.environ[f"PAPERANCHOR_{name.upper()}"] = str(value)
        settings = get_settings()
        uvicorn.run(
            "paperanchor.app:create_app",
            factory=True,
            workers=args.workers,
            host=settings.host,
            port=settings.port,
            **common,
            **server_options(settings, workers=args.workers),
        )
        return 0
    settings = get_settings()
    if overrides:
        settings = type(settings).model_validate({**settings.model_dump(), **overrides})
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        workers=1,  # explicit: uvicorn would otherwise read WEB_CONCURRENCY
        **common,
        **server_options(settings),
    )
    return 0


def _mcp_stdio() -> int:
    """`paperanchor mcp`: the seven MCP tools over stdin/stdout."""
    from paperanchor.api.mcp import serve_stdio
    from paperanchor.settings import get_settings

    asyncio.run(serve_stdio(get_settings()))
    return 0


def _public_url() -> str:
    from paperanchor.settings import get_settings

    return get_settings().public_base


PAPER_HELP = (
    "a LaTeXML HTML file (.html, .html.gz), or an arXiv reference: 1706.03762, "
    "1706.03762v7, arXiv:1706.03762, hep-th/9901001v2, an arxiv.org or ar5iv URL, or "
    "local/<name> for <name>.html in PAPERANCHOR_LOCAL_DIR (which must be set)"
)
ANCHOR_HELP = (
    "a node: its id (S3.SS2, S3.SS2.p1), alias (S3.2, F1, T2, E1), slug (introduction) or "
    "printed label (3.2, Table 2, Eq. (4))"
)


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The command line, and each subcommand's parser (to print its own usage on errors)."""
    from paperanchor import __version__

    parser = argparse.ArgumentParser(
        prog="paperanchor",
        description="Read scientific papers one section at a time. PAPER is an HTML or PDF file "
        "or an arXiv reference (1706.03762, arXiv:1706.03762v7, an arxiv.org URL, local/<name>).",
    )
    parser.add_argument("--version", action="version", version=f"paperanchor {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on an unexpected error, print its traceback after the `internal:` line",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, argparse.ArgumentParser] = {}

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        cmd.add_argument("paper", metavar="PAPER", help=PAPER_HELP)
        cmd.add_argument("--json", action="store_true", help="print the JSON answer (SPEC §5)")
        commands[name] = cmd
        return cmd

    command("outline", "title, authors, abstract, TL;DR and the section tree with token counts")
    read = command("read", "a section (or any anchor) as Markdown; the whole paper without one")
    read.add_argument("anchor", nargs="?", metavar="ANCHOR", help=f"{ANCHOR_HELP}; or paper")
    read.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help="cut the Markdown at about N tokens (100-100000, default 8000)",
    )
    cite = command(
        "cite", "exact plain text of a paragraph or section with a permalink; or verify a quote"
    )
    cite.add_argument("anchor", nargs="?", metavar="ANCHOR", help=ANCHOR_HELP)
    cite.add_argument(
        "--text",
        metavar="QUOTE",
        help="instead of ANCHOR: a quote of 10-2000 characters to find in the paper (exact, "
        "else fuzzy at a score of 90 or more)",
    )
    command("references", "the bibliography, or one entry and where it is cited").add_argument(
        "id", nargs="?", metavar="ID", help="bib.bib12, 12 or [12]; omit for all entries"
    )
    command("figure", "a figure (caption, image URLs, panels) or a table (cells)").add_argument(
        "anchor", metavar="ANCHOR", help="S3.F1, F1, S6.T2, T2, Figure 3, Table 2"
    )
    command("equation", "an equation's LaTeX and printed number").add_argument(
        "anchor", metavar="ANCHOR", help="S3.E1, E1, Eq. (1), (1), or a group id"
    )
    search = command("search", "paragraphs containing the query's words, best first")
    search.add_argument("query", nargs="+", metavar="WORD", help="words to find (case-blind)")
    search.add_argument(
        "--limit", type=int, default=None, metavar="N", help="hits to show, 1-50 (default 5)"
    )
    fetch = sub.add_parser(
        "fetch",
        help="prefetch papers into the cache",
        description="prefetch papers into the cache (a file is parsed to check it, not cached)",
    )
    fetch.add_argument("papers", nargs="+", metavar="PAPER", help=PAPER_HELP)
    commands["fetch"] = fetch
    serve = sub.add_parser(
        "serve",
        help="serve REST, MCP (/mcp) and the HTML pages over HTTP",
        description="serve REST, MCP (/mcp) and the HTML pages over HTTP",
    )
    serve.add_argument("--host", default=None, help="default PAPERANCHOR_HOST (127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="default PAPERANCHOR_PORT (8000)")
    serve.add_argument("--public-url", default=None, help="default PAPERANCHOR_PUBLIC_URL")
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="worker processes (default 1); with several, share a Redis: PAPERANCHOR_CACHE_URL",
    )
    serve.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    commands["serve"] = serve
    commands["mcp"] = sub.add_parser(
        "mcp", help="serve the MCP tools over stdio (for Claude Desktop, Claude Code)"
    )
    return parser, commands


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `paperanchor` console script."""
    parser, commands = _parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the subcommand's own usage, not the top-level one
        commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    streams = sys.stdout, sys.stderr
    if args.command not in ("serve", "mcp"):  # a reader's terminal, not a protocol or a log
        sys.stdout, sys.stderr = TerminalText(sys.stdout), TerminalText(sys.stderr)
    try:
        return _main(args)
    finally:
        sys.stdout, sys.stderr = streams


def _main(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except PaperAnchorError as exc:
        print(exc.wire_text(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`| head`): stop quietly, as other Unix tools do
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 0
    except Exception as exc:  # no traceback on the command line unless asked for
        print(internal(exc).wire_text(), file=sys.stderr)
        if args.debug:
            traceback.print_exception(exc, file=sys.stderr)
        else:
            print("(run with --debug for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
