"""Crash safety: `kill -9` the server while it fetches, parses and writes papers to its disk
cache, then start it again on the same cache directory. The cache opens, every answer is what
the service computes from the page bytes, and what was not completely written is fetched again.

Each round starts a server on a fresh cache, asks for 12 uncached papers at once (some pages
trickle in slowly, so fetches are in flight), kills it at a random moment (in every other round
a random moment after a paper stored in a file was answered, so that even on a slow machine a
round has an entry to tear), copies the cache as the crash left it and reads the copy to learn
which papers were stored whole, cuts one stored entry's file in half (a torn write), restarts
the server and asks again. `make test` runs two rounds, `make soak` ten.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from paperanchor.paper import LoadedPaper
from paperanchor.papers import paper_codec
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.service import Paper, outline, read
from paperanchor.store import DiskStore, PaperCache
from tests.conftest import CORPUS, ROOT, free_port, stop_process, wait_healthy
from tests.reliability.report import SOAK, record
from tests.replay import page, slow

ROUNDS = 10 if SOAK else 2
PAGES = [
    CORPUS / "generated" / "synthetic.html",
    CORPUS / "html" / "2307.00235.ar5iv.html",
    CORPUS / "html" / "astronomical-data-ml-techniques.latexml.html",
    CORPUS / "generated" / "hypergrad.html",
]
PAPERS = [f"2402.{n:05d}v1" for n in range(1, 13)]
# diskcache keeps synthetic.html's entry (10 kB) in its SQLite file and the others' (60-100 kB)
# in files of their own, which a torn write cuts
IN_FILES = {paper for n, paper in enumerate(PAPERS) if n % len(PAGES) != 0}
KILL_WINDOW_S = (0.05, 1.5)
FIRST_ANSWER_S = 60.0


@contextlib.contextmanager
def server_process(env: dict[str, str], log: Any) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`paperanchor serve` on a free port, answering /healthz; killed on exit if still alive."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "paperanchor.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, **env, "PAPERANCHOR_PUBLIC_URL": url},
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
    )
    try:
        wait_healthy(url, process)
        yield url, process
    finally:
        stop_process(process)


def ask_everything(url: str) -> threading.Event:
    """First requests for every paper, three clients each, until the server dies; the event is
    set when the first paper whose entry goes to a file of its own is answered (a paper is
    stored before it is answered)."""
    answered = threading.Event()

    def client(paper: str) -> None:
        with contextlib.suppress(httpx.HTTPError):
            answer = httpx.get(f"{url}/{paper}/outline.json", timeout=30, trust_env=False)
            if answer.status_code == 200 and paper in IN_FILES:
                answered.set()

    threads = [threading.Thread(target=client, args=(p,)) for p in PAPERS for _ in range(3)]
    for thread in threads:
        thread.start()
    return answered


def stored_whole(cache_dir: Path) -> set[str]:
    """The papers a copy of the cache holds whole (reading it may repair the copy)."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "cache"
        shutil.copytree(cache_dir, copy)
        store = DiskStore(copy)
        try:
            cache = PaperCache(store, paper_codec())
            return {p for p in PAPERS if cache.get_paper(p, PARSER_VERSION) is not None}
        finally:
            store.close()


def tear_one_entry(cache_dir: Path, whole: set[str]) -> str | None:
    """Cut in half the value file of one stored paper (diskcache keeps large values in files);
    the key's row is looked up in a copy, so the server is the first to open the original."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "cache"
        shutil.copytree(cache_dir, copy)
        with contextlib.closing(sqlite3.connect(copy / "cache.db")) as db:
            rows = db.execute("SELECT key, filename FROM Cache WHERE filename IS NOT NULL")
            files = {key: name for key, name in rows}
    for paper in sorted(whole):
        name = files.get(PaperCache.paper_key(paper, PARSER_VERSION))
        if name:
            path = cache_dir / name
            path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
            return paper
    return None


def expected(arxiv_url: str, paper_id: str) -> tuple[dict[str, Any], str, str]:
    number = PAPERS.index(paper_id)
    source = f"{arxiv_url}/{paper_id}"
    document = parse_document(PAGES[number % len(PAGES)].read_bytes(), source)
    paper = Paper.open(
        LoadedPaper(document, paper_id[:-2], paper_id, 1, True, source="arxiv", source_url=source)
    )
    first = document.sections[0].id
    return outline(paper), first, read(paper, first, 100_000).markdown


def test_a_server_killed_while_writing_its_cache_restarts_and_serves_nothing_corrupt(
    replay, tmp_path: Path
):
    rng = random.Random(os.environ.get("PAPERANCHOR_CRASH_SEED", "7"))
    figures: Counter[str] = Counter()
    for round_number in range(ROUNDS):
        replay.reset()
        for number, paper in enumerate(PAPERS):
            body = PAGES[number % len(PAGES)].read_bytes()
            # every third page trickles in over ~0.4 s, so some fetches are mid-way at the kill
            first = slow(body, len(body) // 8 + 1, 0.05) if number % 3 == 0 else page(body)
            replay.script(f"/html/{paper}", first, page(body))
        cache_dir = tmp_path / f"cache-{round_number}"
        env = replay.environ(cache_dir=cache_dir, rate_limit="0")
        log = tmp_path / f"serve-{round_number}.log"

        with log.open("w+") as stderr, server_process(env, stderr) as (url, process):
            answered = ask_everything(url)
            if round_number % 2 == 0:
                # after a paper is stored in a file, while the others are fetched and written:
                # a kill that a slow machine would otherwise land before any write
                assert answered.wait(FIRST_ANSWER_S), "no paper answered"
                time.sleep(rng.uniform(0, KILL_WINDOW_S[1] / 2))
            else:
                time.sleep(rng.uniform(*KILL_WINDOW_S))
            os.kill(process.pid, signal.SIGKILL)
            process.wait(15)
        figures["kills"] += 1
        fetched_before = Counter(r.path for r in replay.requests)

        whole = stored_whole(cache_dir)
        torn = tear_one_entry(cache_dir, whole)
        replay.reset()
        for number, paper in enumerate(PAPERS):
            replay.script(f"/html/{paper}", page(PAGES[number % len(PAGES)].read_bytes()))

        with (
            log.open("a+") as stderr,
            server_process(env, stderr) as (url, _),
            httpx.Client(base_url=url, timeout=60, trust_env=False) as client,
        ):
            for paper in PAPERS:
                want_outline, section, want_markdown = expected(replay.arxiv_url, paper)
                answer = client.get(f"/{paper}/outline.json")
                assert answer.status_code == 200, answer.text
                assert answer.json() == want_outline
                markdown = client.get(f"/{paper}/sections/{section}.md")
                assert (markdown.status_code, markdown.text) == (200, want_markdown)

        refetched = Counter(r.path for r in replay.requests)
        for paper in PAPERS:
            again = refetched[f"/html/{paper}"]
            # stored whole: served from the cache; not stored, or torn: fetched once more
            assert again == (0 if paper in whole and paper != torn else 1), (paper, again)
        if torn is not None:
            assert "dropping corrupt cache entry" in log.read_text()
        figures["papers_requested_before_kill"] += len(fetched_before)
        figures["stored_whole_at_kill"] += len(whole)
        figures["torn_entries"] += torn is not None
        figures["refetched_after_restart"] += sum(refetched.values())
    assert figures["torn_entries"] > 0
    record("crash-safety", rounds=ROUNDS, **figures)
