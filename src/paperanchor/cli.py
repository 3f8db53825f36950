"""The command line: the reading operations of the table (operations.py) on a file or a
reference, each a subcommand generated from its entry, plus fetch, serve and mcp."""

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
from typing import TYPE_CHECKING, Any

from paperanchor import changes, editions, operations, service
from paperanchor.errors import BadRequest, NotFound, PaperAnchorError, ParseError, internal
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse import parse_document
from paperanchor.terminal import TerminalText

if TYPE_CHECKING:
    from paperanchor.settings import Settings


def _file_paper(path: Path) -> Paper:
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
    return Paper.open(LoadedPaper(document, f"local/{name}", f"local/{name}", source_url=str(path)))


def _is_pdf(path: Path, data: bytes) -> bool:
    """A `.pdf` name, or PDF bytes under another name (a PDF saved without its extension)."""
    return path.suffix.lower() == ".pdf" or data[:1024].lstrip().startswith(b"%PDF-")


def _looks_like_path(text: str) -> bool:
    if text.endswith((".html", ".htm", ".html.gz", ".xhtml")) or Path(text).is_file():
        return True
    # `https://arxiv.org/pdf/1706.03762v7.pdf` is a paper reference, not a file
    return text.lower().endswith(".pdf") and "://" not in text


async def _with_paper(reference: str, job: Callable[[Paper], Any]) -> Any:
    if _looks_like_path(reference):
        try:
            paper = _file_paper(Path(reference))
        except ParseError as exc:
            # a file on this machine is no upstream's answer: say what it is not
            if reference.lower().endswith(".pdf") or exc.detail.startswith(reference):
                raise BadRequest(exc.detail) from None  # the PDF reader names the file
            raise BadRequest(f"{reference} is not a LaTeXML document ({exc.detail})") from None
        return job(paper)
    from paperanchor.runtime import Runtime
    from paperanchor.settings import get_settings

    async with Runtime.build(get_settings()) as runtime:
        return job(await runtime.service.paper(reference))


def _two_files(reference: str, edition: str, flag: str) -> tuple[Paper, Paper] | None:
    """The papers of PAPER and of the edition `flag` names when both are files; None when both
    are paper references (the service fetches them); neither mixed."""
    if not (_looks_like_path(reference) or _looks_like_path(edition)):
        return None
    if not (_looks_like_path(reference) and _looks_like_path(edition)):
        raise BadRequest(f"{flag} and PAPER are both files or both paper references")
    return _file_paper(Path(reference)), _file_paper(Path(edition))


async def _reanchored(reference: str, given: dict[str, Any], public_url: str) -> Any:
    """cite --from: two files aligned here, or two editions of a paper through the service."""
    edition = given["edition"]
    if given.get("text"):
        raise BadRequest("--from goes with an ANCHOR: a quote is found in the paper itself")
    files = _two_files(reference, edition, "--from")
    if files is not None:
        new, old = files
        alignment = editions.align(old, new)
        return service.reanchor(new, old, alignment, given["anchor"], public_url)
    from paperanchor.runtime import Runtime
    from paperanchor.settings import get_settings

    async with Runtime.build(get_settings()) as runtime:
        return (await runtime.service.reanchor(reference, given["anchor"], edition)).value


async def _since(name: str, reference: str, given: dict[str, Any]) -> Any:
    """outline, read or references --since: two files compared here, or two editions of a
    paper through the service."""
    edition = given["since"]
    files = _two_files(reference, edition, "--since")
    if files is not None:
        new, old = files
        compared = changes.compare(old, new, editions.align(old, new))
        if name == "outline":
            return changes.marked_outline(service.outline(new), compared)
        if name == "read":
            return service.read_since(compared, given.get("anchor"), given.get("maxTokens"), "cli")
        return changes.references_shape(compared)
    from paperanchor.runtime import Runtime
    from paperanchor.settings import get_settings

    async with Runtime.build(get_settings()) as runtime:
        svc = runtime.service
        if name == "outline":
            return (await svc.outline_since(reference, edition)).value
        if name == "read":
            anchor, most = given.get("anchor"), given.get("maxTokens")
            return (await svc.read_since(reference, anchor, edition, most, "cli")).value
        return (await svc.references_since(reference, edition)).value


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _run(args: argparse.Namespace) -> int:
    command = args.command
    if command == "fetch":
        return asyncio.run(_fetch_all(args.papers))
    if command == "serve":
        return _serve(args)
    if command == "mcp":
        return _mcp_stdio(args)
    if command == "hash-token":
        return _hash_tokens()
    operation = _commands()[command]
    given = {
        argument.python_name: _cli_value(argument, getattr(args, argument.python_name))
        for argument in operation.arguments
        if argument.cli is not None
    }
    on_paper, shown = operation.on_paper, operation.command
    assert shown is not None
    if on_paper is None:  # a discovery command: over the service, which asks the upstreams
        result = asyncio.run(_over_service(operation, operation.check(given, door="cli")))
    else:
        # only cite hands out URLs: the other commands never read the settings for a file
        context = operations.Context(_public_url() if operation.name == "cite" else "", "cli")

        def job(paper: Paper) -> Any:
            # checked once the paper is read: an unreadable file is said first, as it always was
            return on_paper(paper, operation.check(given, door="cli"), context)

        if given.get("since"):
            checked = operation.check(given, door="cli")
            result = asyncio.run(_since(operation.name, args.paper, checked))
        elif operation.name == "cite" and given.get("edition"):
            checked = operation.check(given, door="cli")
            result = asyncio.run(_reanchored(args.paper, checked, context.public_url))
        else:
            result = asyncio.run(_with_paper(args.paper, job))
    if args.json:
        _print_json(shown.json(result))
        return 0
    out, err = shown.text(result, given)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return 0


def _cli_value(argument: operations.Argument, value: Any) -> Any:
    """An argument as argparse read it, as the operation takes it (`WORD...` -> one text,
    no `PAPER...` -> not given)."""
    if isinstance(value, list):
        if argument.kind == "text":
            return " ".join(value)
        return value or None
    return value


async def _over_service(operation: operations.Operation, arguments: dict[str, Any]) -> Any:
    """An operation that is not about one paper, run over the whole service."""
    from paperanchor.runtime import Runtime
    from paperanchor.settings import get_settings

    async with Runtime.build(get_settings()) as runtime:
        return operations.value_of(await operation.run(runtime.service, arguments, "cli"))


async def _fetch_all(references: list[str]) -> int:
    """Prefetch papers into the cache with a progress bar; one summary line at the end."""
    import time

    from tqdm import tqdm

    from paperanchor.refs import parse_ref
    from paperanchor.runtime import Runtime
    from paperanchor.settings import get_settings

    started = time.monotonic()
    fetched = cached = failed = 0
    async with Runtime.build(get_settings()) as runtime:
        library = runtime.papers
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
    count = f"{len(references)} paper{'s' if len(references) != 1 else ''}"
    print(
        f"{count}: {fetched} fetched, {cached} already cached, {failed} failed in {elapsed:.1f} s",
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
    overrides.update(_samples(args))
    common: dict[str, Any] = {"log_level": args.log_level, "log_config": log_config()}
    if args.workers > 1:
        # Worker processes build their own app from the environment: hand the flags over there.
        for name, value in overrides.items():
            os.environ[f"PAPERANCHOR_{name.upper()}"] = str(value)
        settings = get_settings()
        _check_port(settings.host, settings.port)
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
    _check_port(settings.host, settings.port)
    config = uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        workers=1,  # explicit: uvicorn would otherwise read WEB_CONCURRENCY
        **common,
        **server_options(settings),
    )
    guide = serving_guide(settings)

    class GuidedServer(uvicorn.Server):
        """uvicorn's server, saying where to go once it listens (after uvicorn's own line)."""

        async def startup(self, sockets: list[Any] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                print(guide, file=sys.stderr, flush=True)

    GuidedServer(config).run()
    return 0


def _check_port(host: str, port: int) -> None:
    """A port another program holds, said with what to do instead of uvicorn's `[Errno 98]`."""
    import errno
    import socket

    if port == 0:
        return  # any free port
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return  # uvicorn says what else is wrong with the address
            other = port + 1 if port < 65535 else port - 1
            # SystemExit: printed as it is, exit status 1, no `code:` prefix and no traceback
            raise SystemExit(
                f"paperanchor: port {port} on {host} is in use by another program; serve on "
                f"another with `paperanchor serve --port {other}` or PAPERANCHOR_PORT={other} "
                f"(from a checkout: `make run PORT={other}`)"
            ) from None


def serving_guide(settings: Settings) -> str:
    """Where to go on a server that has started: its pages, API, MCP and a sample paper."""
    from paperanchor.sources import local_files

    base = settings.public_base
    lines = [
        f"paperanchor is serving on {base}",
        f"  {base}/         the papers: open any arXiv id or URL",
        f"  {base}/docs     the REST API (Swagger UI; /openapi.json)",
        f"  {base}/mcp      MCP (Streamable HTTP): claude mcp add --transport http "
        f"paperanchor {base}/mcp",
    ]
    if settings.local_dir is not None:
        found, more = local_files(settings.local_dir)
        if found:
            count = len(found) + more
            lines.append(f"  {base}/{found[0].reference}  a local paper (of {count}, listed at /)")
    return "\n".join(lines)


def _mcp_stdio(args: argparse.Namespace) -> int:
    """`paperanchor mcp`: the seven MCP tools over stdin/stdout."""
    from paperanchor.api.mcp import serve_stdio
    from paperanchor.settings import get_settings

    settings = get_settings()
    if overrides := _samples(args):
        settings = type(settings).model_validate({**settings.model_dump(), **overrides})
    asyncio.run(serve_stdio(settings))
    return 0


def _samples(args: argparse.Namespace) -> dict[str, Any]:
    """With --samples: the package's sample papers as the local directory, and offline."""
    if not args.samples:
        return {}
    from importlib import resources

    # a folder of the installed package (a link to fixtures/html in a checkout)
    return {"local_dir": Path(str(resources.files("paperanchor") / "samples")), "offline": True}


SAMPLES_HELP = (
    "serve the sample papers the package carries (local/short, local/full, ...) and nothing "
    "else: PAPERANCHOR_LOCAL_DIR set to them and PAPERANCHOR_OFFLINE=1"
)


def _hash_tokens() -> int:
    """`paperanchor hash-token`: the PAPERANCHOR_AUTH_TOKENS_FILE line of each token on stdin."""
    from paperanchor.api.auth import hash_token

    tokens = [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
    if not tokens:
        print("bad-request: no token on stdin (one a line)", file=sys.stderr)
        return 1
    for token in tokens:
        print(hash_token(token))
    return 0


def _public_url() -> str:
    from paperanchor.settings import get_settings

    return get_settings().public_base


PAPER_HELP = operations.CLI_PAPER_HELP

MCP_DESCRIPTION = """\
Serve the MCP tools over stdin and stdout, for a client that starts the server itself
(Claude Desktop, Claude Code, Cursor...). No paper text is written to a terminal.

Settings (environment variables, or a .env file in the working directory):
  PAPERANCHOR_TOOLS=reader|all  reader: the seven reading tools (default); all: also
                                search_arxiv, bibtex, citations and category_trends
  PAPERANCHOR_LOCAL_DIR=DIR     papers of your own: local/<name> opens DIR/<name>.html
  PAPERANCHOR_OFFLINE=1         never fetch: answer from the cache and DIR only
  PAPERANCHOR_CACHE_DIR=DIR     where fetched papers are kept (~/.cache/paperanchor)
  PAPERANCHOR_CACHE_URL=URL     a redis:// URL to share the cache between processes
  PAPERANCHOR_S2_API_KEY=KEY    a Semantic Scholar key for citations (1 request/s)
Every setting is in the README's table of settings.

Claude Code:  claude mcp add paperanchor -- paperanchor mcp
"""


def _commands() -> dict[str, operations.Operation]:
    """The table's operations by subcommand (read when the command line runs)."""
    return {operation.command_name: operation for operation in operations.commands()}


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
    for name, operation in _commands().items():
        assert operation.command is not None
        help_text = operation.command.help
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        commands[name] = cmd
        cmd.add_argument(
            "--json", action="store_true", help="print the JSON answer (docs/contract.md §5)"
        )
        for argument in operation.arguments:
            cli = argument.cli
            if cli is None:
                continue
            if cli.flag is None:
                cmd.add_argument(
                    argument.python_name, nargs=cli.nargs, metavar=cli.metavar, help=cli.help
                )
            elif cli.switch:
                cmd.add_argument(
                    cli.flag,
                    dest=argument.python_name,
                    action="store_const",
                    const=1,
                    default=None,
                    help=cli.help,
                )
            else:
                kind = {"integer": int, "number": float}.get(argument.kind)
                options: dict[str, Any] = {"type": kind, "default": None} if kind else {}
                cmd.add_argument(
                    cli.flag,
                    dest=argument.python_name,
                    metavar=cli.metavar,
                    help=cli.help,
                    **options,
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
    serve.add_argument("--samples", action="store_true", help=SAMPLES_HELP)
    commands["serve"] = serve
    commands["hash-token"] = sub.add_parser(
        "hash-token",
        help="print the PAPERANCHOR_AUTH_TOKENS_FILE line (SHA-256 hex) of each token on stdin",
        description="Read bearer tokens from stdin, one a line, and print the line of "
        "PAPERANCHOR_AUTH_TOKENS_FILE for each: its SHA-256 digest in hex. The file holds only "
        "digests; the server compares a request's token by its digest, in constant time. "
        "Example: openssl rand -hex 32 | tee token.txt | paperanchor hash-token >> tokens.sha256",
    )
    commands["mcp"] = sub.add_parser(
        "mcp",
        help="serve the MCP tools over stdio (for Claude Desktop, Claude Code)",
        description=MCP_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands["mcp"].add_argument("--samples", action="store_true", help=SAMPLES_HELP)
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
