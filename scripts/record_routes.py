"""Record the answer of every route for the fixtures and the corpus, and compare two recordings.

    .venv/bin/python -m scripts.record_routes record /work/notes/before-routes
    .venv/bin/python -m scripts.record_routes compare /work/notes/before-routes /tmp/after

The proof that a refactoring of the middle changed no output: a real server on loopback over
a local directory holding the fixtures and every corpus page (symbolic links, nothing copied),
with tests/replay.py as arXiv, ar5iv, the arXiv API and Semantic Scholar. For every page it
records the REST JSON and Markdown routes, the HTML pages, the MCP tools (raw JSON-RPC over
/mcp, the bytes a client gets) and the command line's answers (text and --json), each with its
status and the headers a client reads. `compare` prints every answer that differs or is
missing, and exits 1 if any does.

The recording is deterministic: the public URL is fixed (ports are not compared by the Host
check), the cache is fresh, requests go one at a time in a fixed order.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("PAPERANCHOR_CORPUS", ROOT.parent / "shared" / "corpus"))
PUBLIC_URL = "http://127.0.0.1:8765"
KEPT_HEADERS = (
    "content-type",
    "cache-control",
    "etag",
    "vary",
    "preference-applied",
    "retry-after",
    "location",
)
SECTIONS_PER_PAPER = 25  # every section of the small pages; the big ones' first 25
CLI_CORPUS_PAGES = 8  # the command line re-parses a file per command: the fixtures and a few
ALIASES = ("F1", "F2", "T1", "S1.F1", "E1", "E2", "S2.E1", "nope")
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def local_dir(target: Path) -> dict[str, Path]:
    """Links to every fixture and corpus page in `target`: local name -> file."""
    pages: dict[str, Path] = {}
    for file in sorted((ROOT / "fixtures" / "html").glob("*.html")):
        pages[file.stem] = file
    for folder in ("html", "pairs", "generated"):
        for file in sorted((CORPUS / folder).glob("*.html")):
            pages[f"{folder}-{file.stem}"] = file
    for name, file in pages.items():
        (target / f"{name}.html").symlink_to(file.resolve())
    return pages


@contextlib.contextmanager
def serving(papers: Path, cache: Path) -> Iterator[str]:
    """A paperanchor server over `papers` on a loopback port; its URL."""
    import uvicorn
    from tests.replay import Replay

    from paperanchor.app import create_app

    replay = Replay(CORPUS / "html")
    replay.start()
    replay.answer_ids_from_recordings()
    settings = replay.settings(
        cache,
        discovery=True,
        local_dir=papers,
        public_url=PUBLIC_URL,
        rate_limit="0",
        tools="all",
        max_html_mb=60,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(settings), log_level="warning", access_log=False, lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
        replay.stop()


class Recorder:
    """Answers by key, in the order asked."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.answers: dict[str, dict[str, Any]] = {}

    def keep(self, key: str, status: int, headers: dict[str, str], body: bytes) -> None:
        try:
            text: str | None = body.decode()
        except UnicodeDecodeError:
            text = None
        answer: dict[str, Any] = {"status": status, "headers": headers}
        if text is not None:
            answer["text"] = text
        else:
            answer["base64"] = base64.b64encode(body).decode()
        self.answers[key] = answer

    def get(self, path: str, **headers: str) -> httpx.Response:
        response = self.client.get(path, headers=headers)
        kept = {name: response.headers[name] for name in KEPT_HEADERS if name in response.headers}
        key = f"GET {path}" + "".join(f" [{k}: {v}]" for k, v in headers.items())
        self.keep(key, response.status_code, kept, response.content)
        return response

    def mcp(self, method: str, params: dict[str, Any] | None = None) -> Any:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            body["params"] = params
        response = self.client.post("/mcp", json=body, headers=MCP_HEADERS)
        kept = {"content-type": response.headers.get("content-type", "")}
        key = f"MCP {method} {json.dumps(params, sort_keys=True)}"
        self.keep(key, response.status_code, kept, response.content)
        try:
            return response.json()
        except ValueError:
            return None


def section_ids(sections: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    for section in sections:
        found.append(section["id"])
        found += section_ids(section["children"])
    return found


def record_paper(rec: Recorder, paper: str) -> None:
    """Every route of one paper: REST, pages, MCP."""
    base = "/" + quote(paper, safe="/")
    response = rec.get(f"{base}/outline.json")
    rec.get(base)
    rec.get(base, accept="application/json")
    rec.get(f"{base}.md")
    rec.get(f"{base}.md?maxTokens=300")
    rec.get(f"{base}/references.json")
    rec.get(f"{base}/references/1.json")
    rec.get(f"{base}/references/%5B2%5D.json")
    rec.get(f"{base}/references.bib")
    rec.get(f"{base}/search.json?q=the&limit=3")
    rec.get(f"{base}/search.json?q=model")
    for alias in ALIASES:
        rec.get(f"{base}/figures/{alias}.json")
        rec.get(f"{base}/equations/{alias}.json")
    if response.status_code != 200:
        return
    outline = response.json()
    ids = section_ids(outline["sections"])[:SECTIONS_PER_PAPER]
    for anchor in ids:
        rec.get(f"{base}/sections/{quote(anchor, safe='')}.md")
        rec.get(f"{base}/sections/{quote(anchor, safe='')}.json?maxTokens=200")
        rec.get(f"{base}/sections/{quote(anchor, safe='')}")
        rec.get(f"{base}/cite/{quote(anchor, safe='')}.json")
    rec.get(f"{base}/sections/zz-unknown.md")
    rec.get(f"{base}/sections/zz-unknown")
    quote_text = ""
    for anchor in ids:
        cited = rec.client.get(f"{base}/cite/{quote(anchor, safe='')}.json?")
        if cited.status_code == 200 and len(cited.json()["text"]) > 80:
            quote_text = cited.json()["text"][20:100]
            break
    if quote_text:
        rec.get(f"{base}/cite.json?" + urlencode({"text": quote_text}))
        rec.get(f"{base}/cite.json?" + urlencode({"text": quote_text[::-1]}))
    first = ids[0] if ids else "S1"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("outline", {"paper": paper}),
        ("read", {"paper": paper, "anchor": first}),
        ("read", {"paper": paper, "anchor": first, "maxTokens": 100}),
        ("read", {"paper": paper, "anchor": "paper", "maxTokens": 500}),
        ("cite", {"paper": paper, "anchor": first}),
        ("references", {"paper": paper}),
        ("references", {"paper": paper, "id": 1}),
        ("figure", {"paper": paper, "anchor": "F1"}),
        ("equation", {"paper": paper, "anchor": "E1"}),
        ("search_paper", {"paper": paper, "query": "the", "limit": 2}),
        ("citations", {"paper": paper}),
        ("bibtex", {"referencesOf": paper}),
    ]
    if quote_text:
        calls.append(("cite", {"paper": paper, "text": quote_text}))
    for tool, arguments in calls:
        rec.mcp("tools/call", {"name": tool, "arguments": arguments})


def record_server(rec: Recorder, pages: dict[str, Path]) -> None:
    rec.get("/")
    rec.get("/healthz")
    rec.get("/openapi.json")
    rec.get("/docs")
    rec.get("/categories.json")
    rec.get("/?paper=1706.03762v7")
    rec.get("/?paper=nonsense%20ref")
    rec.get("/?q=testing")
    rec.mcp("tools/list")
    rec.mcp("tools/call", {"name": "nope", "arguments": {}})
    rec.mcp("tools/call", {"name": "read", "arguments": {"paper": "local/full", "bad": 1}})
    rec.mcp("tools/call", {"name": "read", "arguments": {"paper": "local/full", "anchor": 3}})
    rec.mcp("tools/call", {"name": "outline", "arguments": {"paper": "x", "wait": 99}})
    rec.mcp("tools/call", {"name": "cite", "arguments": {"paper": "local/full"}})
    rec.mcp("tools/call", {"name": "bibtex", "arguments": {"papers": ["2104.12255v1"]}})
    rec.mcp("tools/call", {"name": "search_arxiv", "arguments": {"query": "testing"}})
    rec.mcp(
        "tools/call",
        {"name": "search_arxiv", "arguments": {"query": "x", "from": "2024-02-01", "to": "x"}},
    )
    rec.mcp("tools/call", {"name": "category_trends", "arguments": {"category": "cs.XY"}})
    for path in (
        "/search.json?q=testing",
        "/search.json?q=testing&start=10",
        "/search.json?category=cs.LG&limit=5",
        "/search.json?q=x&limit=99",
        "/search.json?q=x&from=2024-02-01&to=2024-01-01",
        "/search.json",
        "/categories/cs.XY/trends.json",
        "/categories/cs.LG/trends.json?days=0",
        "/2104.12255v1/metadata.json",
        "/abc/metadata.json",
        "/2304.05376/citations.json?limit=5",
        "/astro-ph/0601001.bib",
        "/2104.12255v1.bib",
        "/local/full/metadata.json",
        "/local/full/search.json?q=x&limit=0",
        "/local/full/search.json",
        "/local/full/sections/S1.md?maxTokens=5",
        "/local/full/outline.json",
        "/local/nope/outline.json",
        "/local/nope",
        "/1706.99999/outline.json",
        "/files/nope.png",
        "/files/../x.png",
    ):
        rec.get(path)
    rec.get("/local/full/outline.json", prefer="wait=2")
    started = time.monotonic()
    papers = ["2501.11120v1", "2501.11120", "1808.08002", "2307.00235v1"]
    for paper in papers + [f"local/{name}" for name in pages]:
        record_paper(rec, paper)
        print(f"{time.monotonic() - started:6.1f} s {paper}", file=sys.stderr, flush=True)
    rec.get("/")


def record_cli(rec: Recorder, pages: dict[str, Path]) -> None:
    """The command line's answers over files (the same in-process entry point as the script)."""
    from paperanchor import cli

    fixtures = [file for name, file in pages.items() if "-" not in name]
    corpus = [file for name, file in pages.items() if "-" in name][:CLI_CORPUS_PAGES]
    for file in fixtures + corpus:
        path = str(file)
        for argv in (
            ["outline", path],
            ["read", path, "S1"],
            ["read", path, "--max-tokens", "150"],
            ["cite", path, "S1"],
            ["references", path],
            ["references", path, "1"],
            ["figure", path, "F1"],
            ["equation", path, "E1"],
            ["search", path, "the", "model", "--limit", "3"],
        ):
            for extra in ([], ["--json"]):
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    try:
                        code = cli.main(argv + extra)
                    except SystemExit as exc:
                        code = exc.code if isinstance(exc.code, int) else 2
                streams = {"stdout": placed(out.getvalue()), "stderr": placed(err.getvalue())}
                key = placed("CLI " + " ".join(argv + extra))
                rec.keep(key, code, {}, json.dumps(streams).encode())


def placed(text: str) -> str:
    """`text` with the checkout's and the corpus's folders as `<root>` and `<corpus>`: the
    command line prints a file's path (its sourceUrl), and two checkouts must record alike."""
    for folder, name in ((CORPUS.resolve(), "<corpus>"), (CORPUS, "<corpus>"), (ROOT, "<root>")):
        text = text.replace(str(folder), name)
    return text


def record(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as temp:
        papers = Path(temp, "papers")
        papers.mkdir()
        pages = local_dir(papers)
        started = time.monotonic()
        with (
            serving(papers, Path(temp, "cache")) as url,
            httpx.Client(base_url=url, timeout=120, trust_env=False) as client,
        ):
            rec = Recorder(client)
            record_server(rec, pages)
        record_cli(rec, pages)
    with (out / "answers.jsonl").open("w") as file:
        for key, answer in rec.answers.items():
            file.write(json.dumps({"key": key, **answer}, ensure_ascii=False) + "\n")
    print(f"{len(rec.answers)} answers in {time.monotonic() - started:.0f} s -> {out}")
    return 0


def load(folder: Path) -> dict[str, dict[str, Any]]:
    answers = {}
    with (folder / "answers.jsonl").open() as file:
        for line in file:
            entry = json.loads(line)
            answers[entry.pop("key")] = entry
    return answers


# What differs between two recordings without any answer differing: the replay upstream's port
# (a free one each time), and in a recording made before `placed`, the folder the code ran from.
_REPLAY_PORT = re.compile(r"127\.0\.0\.1:(?!8765\b)\d+")
_ROOT = re.compile(re.escape(str(ROOT)) + "/")


def normal(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without the recording's own traces; its ETag kept only where the body is
    the same bytes (an ETag is a digest of the body)."""
    text = answer.get("text", "")
    clean = _ROOT.sub("<root>/", _REPLAY_PORT.sub("<replay>", text))
    headers = dict(answer["headers"])
    if clean != text:
        headers.pop("etag", None)
    return {**answer, "text": clean, "headers": headers}


def compare(before: Path, after: Path) -> int:
    """Print every answer of `before` that `after` lacks or answers otherwise."""
    old = {key: normal(answer) for key, answer in load(before).items()}
    new = {key: normal(answer) for key, answer in load(after).items()}
    differ = [key for key in old if key in new and old[key] != new[key]]
    missing = [key for key in old if key not in new]
    added = [key for key in new if key not in old]
    for key in differ:
        print(f"DIFFERS {key}")
        a, b = old[key], new[key]
        for part in ("status", "headers"):
            if a[part] != b[part]:
                print(f"  {part}: {a[part]} -> {b[part]}")
        ta, tb = a.get("text", ""), b.get("text", "")
        if ta != tb:
            at = next((i for i, (x, y) in enumerate(zip(ta, tb, strict=False)) if x != y), None)
            at = min(len(ta), len(tb)) if at is None else at
            print(f"  body differs at {at}: {ta[at - 60 : at + 60]!r} -> {tb[at - 60 : at + 60]!r}")
    for key in missing:
        print(f"MISSING {key}")
    for key in added:
        print(f"ADDED {key}")
    same = len(old) - len(differ) - len(missing)
    print(f"{same} of {len(old)} answers identical; {len(differ)} differ, {len(missing)} missing")
    return 1 if differ or missing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("record").add_argument("out", type=Path)
    both = sub.add_parser("compare")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        return record(args.out)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
