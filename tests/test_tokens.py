"""Tokens are o200k_base tokens (contract §3, §11): counted by GitHub's bpe crate offline, equal to
tiktoken's own count with OpenAI's vocabulary, reported within 1% of the tokenizer's count of
the Markdown served on every corpus page, and never exceeded by a cut read."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperanchor import service, tokens
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.render.markdown import join, tokens_of
from paperanchor.tree import Section, walk
from tests.conftest import ROOT
from tests.corpus_pages import ALL_PAGES, PAIR_PAGES, PAPER_PAGES, parsed

PAGES = ALL_PAGES + PAIR_PAGES
# tiktoken's published o200k_base file and the SHA-256 tiktoken checks it against
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def _view(name: str) -> Paper:
    return Paper.open(LoadedPaper(parsed(name), f"local/{name}", f"local/{name}"))


def _sections(paper: Paper) -> list[Section]:
    roots = paper.document.roots()
    return [v.node for v in walk(roots) if isinstance(v.node, Section)]


@pytest.fixture(scope="module")
def tiktoken_o200k(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """tiktoken's o200k_base, its vocabulary taken from the bpe-openai wheel through tiktoken's
    own hash-checked cache: nothing is downloaded (tiktoken's fetch is made to fail)."""
    import gzip
    import importlib.util

    import tiktoken
    import tiktoken.load

    spec = importlib.util.find_spec("bpe_openai")
    assert spec is not None and spec.submodule_search_locations
    shipped = Path(next(iter(spec.submodule_search_locations))) / "data" / "o200k_base.tiktoken.gz"
    vocabulary = gzip.decompress(shipped.read_bytes())
    assert hashlib.sha256(vocabulary).hexdigest() == O200K_SHA256  # OpenAI's file, byte for byte
    cache = tmp_path_factory.mktemp("tiktoken")
    (cache / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(vocabulary)
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))

    def no_download(blobpath: str) -> bytes:
        raise AssertionError(f"tiktoken tried to download {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", no_download)
    try:
        yield tiktoken.get_encoding("o200k_base")
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("name", PAGES)
def test_counts_equal_tiktokens_o200k_on_every_corpus_pages_markdown(
    name: str, tiktoken_o200k
) -> None:  # type: ignore[no-untyped-def]
    paper = _view(name)
    texts = [paper.markdown()] + [paper.markdown(s.id) for s in _sections(paper)]
    texts += [chunk for chunk in paper.chunks(None) if chunk]
    for text in texts:
        assert tokens.count(text) == len(tiktoken_o200k.encode_ordinary(text)), text[:200]


@pytest.mark.parametrize("name", PAGES)
def test_the_tokens_reported_are_within_one_percent_of_the_count_of_the_markdown_served(
    name: str,
) -> None:
    paper = _view(name)
    outline = service.outline(paper)
    whole = service.read(paper, None, service.WHOLE_NODE)
    assert not whole.truncated and whole.tokens == outline["tokens"]
    real = tokens.count(whole.markdown)
    assert abs(outline["tokens"] - real) <= real / 100

    def check(entries: list[service.shapes.Section]) -> None:
        for entry in entries:
            read = service.read(paper, entry["id"], service.WHOLE_NODE)
            real = tokens.count(read.markdown)
            assert read.tokens == entry["tokens"], entry["id"]
            assert abs(entry["tokens"] - real) <= real / 100, (entry["id"], entry["tokens"], real)
            check(entry["children"])

    check(outline["sections"])


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_a_cut_read_never_returns_more_tokens_than_max_tokens(name: str) -> None:
    paper = _view(name)
    anchors: list[str | None] = [None, *(s.id for s in paper.document.sections[:6])]
    for anchor in anchors:
        full = paper.markdown(anchor)
        for budget in (100, 1000, 8000):
            read = service.read(paper, anchor, budget, "mcp")
            assert read.tokens == tokens.count(read.markdown) <= budget, (anchor, budget)
            if not read.truncated:
                assert read.markdown == full
                continue
            shown, line = read.markdown.rstrip("\n").rsplit("\n\n", 1)
            assert line.startswith("…[truncated: ") and "call read with maxTokens=" in line
            # whole blocks, the last of them perhaps cut inside (at a word, or a table's row)
            before = shown.rsplit("\n\n", 1)[0] if "\n\n" in shown else ""
            assert full.startswith(shown + "\n\n") or full.startswith(before), (anchor, budget)


def test_the_default_read_of_1311_0066_s4_stays_within_8000_tokens_and_uses_them() -> None:
    """The issue's case: 8,000 characters ÷ 4 returned 12,530 o200k tokens of this section."""
    paper = _view("html/1311.0066.arxmliv.html")
    assert paper.tokens("S4") > 8000
    read = service.read(paper, "S4", None)
    real = tokens.count(read.markdown)
    assert read.truncated and read.tokens == real
    assert 7000 < real <= 8000


chunk_text = st.lists(
    st.sampled_from(
        [*"ab Z9.,;:!?()[]$\\|#*-_`'\" \n\t", "\u0301", "漢", "😀", "  ", "\n\n", "...", "$$"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(chunk_text, max_size=8))
def test_a_count_from_chunk_and_seam_counts_equals_the_count_of_the_joined_chunks(
    chunks: list[str],
) -> None:
    assert tokens.Counts().joined(chunks) == tokens.count(join(chunks))


HOSTILE_TEXTS = {
    "one word": "a" * 3_000_000,
    "digits": "1234567890" * 300_000,
    "white space": " \t" * 1_500_000,
    "newlines": "\n" * 3_000_000,
    "han": "漢字" * 1_500_000,
    "emoji": "😀" * 1_500_000,
    "marks": "e\u0301" * 1_500_000,
    "punctuation": ".,;:!?" * 500_000,
    "tex": "$\\alpha_{1}^{2}$ " * 200_000,
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_TEXTS))
def test_a_hostile_text_is_counted_in_linear_time_and_in_pieces_within_one_percent(
    kind: str,
) -> None:
    text = HOSTILE_TEXTS[kind]
    started = time.perf_counter()
    counted = tokens.count(text)
    assert time.perf_counter() - started < 5.0
    whole = tokens._tokenizer().count(text)  # one call, no pieces: the reference
    assert abs(counted - whole) <= whole / 100


def test_a_hostile_page_of_one_huge_paragraph_is_cut_within_its_budget() -> None:
    from paperanchor.parse import parse_document
    from tests.corpus_pages import section_page

    words = " ".join(f"w{i}$x^{i}$" for i in range(300_000))
    paper = Paper.open(LoadedPaper(parse_document(section_page(f"<p>{words}</p>")), "l/x", "l/x"))
    started = time.perf_counter()
    outline = service.outline(paper)
    for budget in (100, 8000, 100_000):
        read = service.read(paper, "S1", budget)
        assert read.truncated and tokens.count(read.markdown) <= budget
        assert tokens.count(read.markdown) > budget * 0.9  # the cut uses its budget
    assert outline["tokens"] > 100_000 and time.perf_counter() - started < 20.0


def test_the_tokenizer_loads_offline_without_the_python_package_and_no_warning() -> None:
    probe = (
        "import socket, sys\n"
        "def refuse(*a, **k): raise OSError('no network')\n"
        "socket.socket = refuse; socket.create_connection = refuse\n"
        "from paperanchor import tokens\n"
        "assert tokens.count('hello world') == 2\n"
        "assert 'bpe_openai' not in sys.modules\n"  # only its Rust binding was loaded
        "print(tokens.count('Tokens that are tokens.'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "5"


def test_tokens_of_is_the_o200k_count() -> None:
    assert tokens_of("hello world") == 2
    assert tokens_of("$$\\sum_{i=1}^{n} x_i$$") > len("$$\\sum_{i=1}^{n} x_i$$") / 4
