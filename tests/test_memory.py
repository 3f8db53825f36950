"""The in-process memory of parsed papers is bounded in bytes (PAPERANCHOR_MEMORY_MB)."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from paperanchor.refs import parse_ref
from paperanchor.service import PaperService
from paperanchor.settings import Settings
from tests.conftest import CORPUS, ROOT, free_port, stop_process, wait_healthy
from tests.large_page import large_page
from tests.replay import page, papers_of

# Five papers on the arXiv-like route; their entries are 0.1-0.4 MB.
PAGES = {
    "2501.11120v1": "2501.11120v1.arxiv.html",
    "2402.01234v1": "submission-5393936.arxiv.html",
    "2211.01234v2": "split-cycle-axiomatic-characterization.arxiv.html",
    "2403.01234v1": "angular-momentum-evolution-cosmological-ic.arxiv.html",
    "2404.01234v1": "ssh-electron-phonon-superconductivity.arxiv.html",
}


def script(replay: Any) -> None:
    for idv, name in PAGES.items():
        replay.script(f"/html/{idv}", page(replay.corpus_page(name)))


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_a_memory_setting_out_of_range_is_refused_with_its_variable_named(value: str) -> None:
    with pytest.raises(ValidationError, match="PAPERANCHOR_MEMORY_MB must be a number >= 0"):
        Settings(_env_file=None, memory_mb=value)


def test_the_memory_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PAPERANCHOR_MEMORY_MB", "64")
    assert Settings(_env_file=None).memory_bytes == 64 << 20
    monkeypatch.delenv("PAPERANCHOR_MEMORY_MB")
    assert Settings(_env_file=None).memory_bytes == 512 << 20  # contract §2's default


def test_the_library_holds_papers_up_to_its_memory_in_bytes(replay: Any, tmp_path: Path):
    script(replay)
    settings = replay.settings(tmp_path, memory_mb=4)  # two or three of the five papers

    async def main() -> tuple[list[int], int, int]:
        async with papers_of(settings) as library:
            held: list[int] = []
            for idv in PAGES:
                await library.load(parse_ref(idv))
                await library.stored()  # held once stored, right after its answer
                held.append(library.memory_held)
            fetches = library.fetches
            first = await library.load(parse_ref("2501.11120v1"))  # evicted: from the store
            again = await library.load(parse_ref("2501.11120v1"))  # now held: the same object
            assert again is first
            return held, fetches, library.fetches

    held, fetches, after = asyncio.run(main())

    assert all(0 < h <= 4 << 20 for h in held)
    assert held[0] > 0 and len(set(held)) > 1
    assert fetches == after == 5 and replay.count() == 5  # nothing was fetched twice


def test_a_paper_larger_than_the_memory_is_served_but_not_held(replay: Any, tmp_path: Path):
    settings = replay.settings(tmp_path, memory_mb=0.5)  # 2501.11120v1 weighs 3.9 MB

    async def main() -> tuple[Any, Any, int]:
        async with papers_of(settings) as library:
            first = await library.load(parse_ref("2501.11120v1"))
            await library.stored()  # answered before its store write: until then it is found
            second = await library.load(parse_ref("2501.11120v1"))
            return first, second, library.memory_held

    first, second, held = asyncio.run(main())

    assert first == second and first is not second  # read from the store again
    assert held == 0 and replay.count() == 1


def test_a_view_lives_only_while_the_library_holds_its_paper(replay: Any, tmp_path: Path):
    script(replay)
    settings = replay.settings(tmp_path, memory_mb=4)

    async def main() -> tuple[int, int, bool]:
        async with papers_of(settings) as library:
            service = PaperService(library, "http://127.0.0.1:8000")
            for idv in PAGES:
                await service.outline(idv)
            gc.collect()
            last = list(PAGES)[-1]
            same = (await service.paper(last)) is (await service.paper(last))
            return service.views, len(library._settled), same

    views, held, same = asyncio.run(main())

    assert 0 < views <= held < len(PAGES)  # the evicted papers' views went with them
    assert same  # a held paper's view is reused


# -- a real server with large pages ----------------------------------------------------------

PAGE_MB = 8  # an 8.8 MB page, its entry 5.6 MB: it weighs 56 MB
COPIES = 6
MEMORY_MB = 120  # two of them fit; unbounded, six took 220 MB above idle (and 368 MB before)


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.slow
def test_a_server_holding_large_pages_stays_under_its_memory_setting(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    for n in range(COPIES):
        (folder / f"big{n}.html").write_bytes(large_page(PAGE_MB, title=f"Large {n}"))
    (folder / "small.html").symlink_to(CORPUS / "html" / "2510.11260v1.arxiv.html")
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PAPERANCHOR_")},
        "PAPERANCHOR_LOCAL_DIR": str(folder),
        "PAPERANCHOR_OFFLINE": "1",
        "PAPERANCHOR_CACHE_DIR": str(tmp_path / "cache"),
        "PAPERANCHOR_RATE_LIMIT": "0",
        "PAPERANCHOR_MEMORY_MB": str(MEMORY_MB),
    }
    command = [sys.executable, "-m", "paperanchor.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        grown = []
        with httpx.Client(timeout=120, trust_env=False) as client:
            # what any first request loads (routes, templates, the parser's tables) is not a paper
            client.get(f"{url}/local/small/outline.json").raise_for_status()
            idle = _rss_kb(process.pid)
            for n in range(COPIES):
                client.get(f"{url}/local/big{n}/outline.json").raise_for_status()
                client.get(f"{url}/local/big{n}/sections/S1.md").raise_for_status()
                grown.append((_rss_kb(process.pid) - idle) / 1024)
    finally:
        stop_process(process)

    assert max(grown) < MEMORY_MB, f"MB above idle after each paper: {grown}"
    assert grown[-1] > 2 * PAGE_MB  # it does hold a paper or two


# Before the heap was trimmed after every parse and glibc's arenas capped, a server holding
# 50 corpus papers took 3.2 MB of resident memory per paper (bench/memory.py) for 0.5 MB of
# objects each; now 0.6-0.9 MB. The bound is loose: the machine and the allocator move it.
HELD_PAPERS = 30
MAX_MB_PER_PAPER = 1.5


@pytest.mark.slow
def test_a_server_holding_many_corpus_papers_takes_little_memory_for_each(tmp_path: Path) -> None:
    pages = sorted((CORPUS / "html").glob("*.html")) + sorted((CORPUS / "generated").glob("*.html"))
    folder = tmp_path / "papers"
    folder.mkdir()
    for n in range(HELD_PAPERS):
        (folder / f"p{n:02d}.html").symlink_to(pages[n % len(pages)])
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PAPERANCHOR_")},
        "PAPERANCHOR_LOCAL_DIR": str(folder),
        "PAPERANCHOR_OFFLINE": "1",
        "PAPERANCHOR_CACHE_DIR": str(tmp_path / "cache"),
        "PAPERANCHOR_RATE_LIMIT": "0",
    }
    command = [sys.executable, "-m", "paperanchor.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        with httpx.Client(timeout=120, trust_env=False) as client:
            client.get(f"{url}/healthz").raise_for_status()
            idle = _rss_kb(process.pid)
            for n in range(HELD_PAPERS):
                client.get(f"{url}/local/p{n:02d}/outline.json").raise_for_status()
            held = _rss_kb(process.pid)
    finally:
        stop_process(process)
    per_paper = (held - idle) / 1024 / HELD_PAPERS
    assert per_paper < MAX_MB_PER_PAPER, f"{per_paper:.2f} MB per paper"


def test_small_parses_trim_the_heap_in_the_background_one_trim_at_a_time(tmp_path: Path) -> None:
    async def burst() -> None:
        settings = Settings(_env_file=None, cache_dir=tmp_path, offline=True)
        async with papers_of(settings) as lib:
            await lib._release(1000)
            first = lib._trimming
            assert first is not None and not first.done()  # not waited for
            # a burst of small parses while one trim runs adds no second one
            for _ in range(50):
                await lib._release(1000)
                assert lib._trimming is first
        assert first.done()  # closing the library waited for it

    asyncio.run(burst())


def test_the_malloc_arenas_are_capped_on_glibc() -> None:
    from paperanchor.papers import _LIBC, limit_malloc_arenas

    assert limit_malloc_arenas() is (_LIBC is not None)


def test_a_held_paper_s_renderings_count_in_the_memory_and_evict_others(
    replay: Any, tmp_path: Path
):
    script(replay)
    settings = replay.settings(tmp_path, memory_mb=8)  # both papers and their Markdown

    async def main() -> tuple[int, int, bool, bool]:
        async with papers_of(settings) as library:
            other, ref = parse_ref("2402.01234v1"), parse_ref("2501.11120v1")
            await library.get(other)
            paper = await library.get(ref)
            await library.stored()  # held once stored, right after its answer
            before = library.memory_held
            paper.tokens(None)  # an outline: every section rendered and kept
            rendered = paper.rendered_bytes
            assert await library.get(ref) is paper
            grown = library.memory_held - before
            # a 3.5 MB page takes the paper past the bound: the least recently used goes
            paper.page("S1", lambda _paper, _node_id: "x" * (7 << 19))
            await library.get(ref)
            kept = library._recall(ref.idv) is not None
            return grown, rendered, library._recall(other.idv) is None, kept

    grown, rendered, other_evicted, kept = asyncio.run(main())

    assert grown == rendered > 0
    assert other_evicted and kept
