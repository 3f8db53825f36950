"""BibTeX through the REST routes compiles with real bibtex and pdflatex: every recorded paper's
`GET /{paper}.bib`, and `GET /{paper}/references.bib` of an arXiv page and of a local paper
whose bibliography cites a recorded paper (that entry from the API, the rest as parsed).

`python -m tests.api.test_bibtex_rest` prints the compile table of docs/discovery.md.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.live import LiveServer
from tests.api.test_discovery import discovery_server, script_paper
from tests.conftest import CORPUS, FIXTURES, require_program
from tests.discovery import texrun
from tests.discovery.recorded import all_metadata
from tests.discovery.test_bibtex_compile import STYLES, acronyms, in_text, keys_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("corpus")]

# fixtures/html/full.html cites "arXiv:2301.00001", a made-up id: here it cites ResNet, whose
# API answer is recorded (atom-1512.03385.xml)
CITES_RESNET = "cites-resnet"


def local_dir(folder: Path) -> Path:
    page = (FIXTURES / "html" / "full.html").read_bytes()
    assert page.count(b"arXiv:2301.00001") == 1
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{CITES_RESNET}.html").write_bytes(page.replace(b"2301.00001", b"1512.03385"))
    return folder


@contextlib.contextmanager
def bib_server(replay: Any, folder: Path) -> Iterator[LiveServer]:
    """A server with discovery, the replay answering every recorded id from its entries."""
    replay.answer_ids_from_recordings()
    script_paper(replay, "2104.12255v1")  # a corpus page under a recorded id
    with discovery_server(replay, folder / "cache", local_dir(folder / "papers")) as live:
        yield live


def bibs(live: LiveServer) -> dict[str, str]:
    """The .bib texts the tests compile, each fetched through its REST route."""
    with live.client() as client:
        papers = []
        for paper in all_metadata():
            answer = client.get(f"/{paper}.bib")
            assert answer.status_code == 200, (paper, answer.text)
            assert answer.headers["content-type"] == "text/plain; charset=utf-8"
            papers.append(answer.text)
        references = {}
        for paper in ("2104.12255v1", f"local/{CITES_RESNET}"):
            answer = client.get(f"/{paper}/references.bib")
            assert answer.status_code == 200, (paper, answer.text)
            references[paper] = answer.text
    return {"papers": "\n".join(papers), **references}


@pytest.fixture(scope="module")
def fetched(replay_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    require_program(texrun.available(), "bibtex, pdflatex and pdftotext are not installed")
    replay_server.reset()
    try:
        with bib_server(replay_server, tmp_path_factory.mktemp("bib")) as live:
            return bibs(live)
    finally:
        replay_server.reset()


@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("which", ["papers", "2104.12255v1", f"local/{CITES_RESNET}"])
def test_the_rest_bibtex_compiles_without_an_error_or_warning(
    fetched: dict[str, str], which: str, style: str, tmp_path: Path
) -> None:
    bib = fetched[which]
    keys = keys_of(bib)
    assert len(keys) == len(set(keys))  # one key per entry, across the routes' answers too
    if which == "papers":
        assert len(keys) == 132

    result = texrun.compile_bib(bib, keys, tmp_path, style=style, packages=STYLES[style])

    assert result.bibtex_errors == 0, result.logs["blg"][-2000:]
    assert result.bibtex_warnings == []
    assert result.latex_errors == [], result.logs["log"][-3000:]
    assert result.latex_warnings == []
    assert (tmp_path / "doc.bbl").read_text("latin-1").count("\\bibitem") == len(keys)


def test_acronyms_from_the_rest_bibtex_stay_upper_case_in_the_pdf(
    fetched: dict[str, str], tmp_path: Path
) -> None:
    bib = fetched["papers"]

    result = texrun.compile_bib(bib, keys_of(bib), tmp_path, style="plain")

    expected = sorted(
        {word for paper in all_metadata().values() for word in acronyms(paper["title"])}
    )
    assert len(expected) > 30
    assert [word for word in expected if not in_text(word, result.text)] == []
    # plain.bst lowered the other words: the braces kept the acronyms
    assert "Quantum criticality for extended nodes on a bethe lattice" in texrun.joined(result.text)


def test_a_bibliographys_arxiv_paper_comes_from_the_api_the_rest_as_parsed(
    fetched: dict[str, str],
) -> None:
    bib = fetched[f"local/{CITES_RESNET}"]

    entries = re.split(r"\n(?=@misc\{)", bib.strip())
    (resnet,) = [entry for entry in entries if "eprint = {1512.03385}" in entry]
    assert resnet.startswith("@misc{he2015deep,")
    assert "title = {Deep Residual Learning for Image Recognition}" in resnet
    assert "primaryClass = {cs.CV}" in resnet  # only the API says so
    others = [entry for entry in entries if entry is not resnet]
    assert len(others) == 4 and all("note = {" in entry for entry in others)  # the printed text


def table() -> None:
    """Print the compile table of the REST answers (python -m tests.api.test_bibtex_rest)."""
    from tests.replay import Replay

    replay = Replay(CORPUS / "html")
    replay.start()
    try:
        with tempfile.TemporaryDirectory() as folder, bib_server(replay, Path(folder)) as live:
            fetched = bibs(live)
    finally:
        replay.stop()
    print(
        "| route | style | entries | bibtex errors | bibtex warnings | LaTeX errors "
        "| LaTeX warnings | box warnings | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    routes = {
        "papers": "/{paper}.bib x 132",
        "2104.12255v1": "/2104.12255v1/references.bib",
        f"local/{CITES_RESNET}": f"/local/{CITES_RESNET}/references.bib",
    }
    for which, bib in fetched.items():
        for style, packages in STYLES.items():
            with tempfile.TemporaryDirectory() as folder:
                r = texrun.compile_bib(
                    bib, keys_of(bib), Path(folder), style=style, packages=packages
                )
            print(
                f"| {routes[which]} | {style} | {r.entries} | {r.bibtex_errors} | "
                f"{len(r.bibtex_warnings)} | {len(r.latex_errors)} | {len(r.latex_warnings)} | "
                f"{r.boxes} | {r.seconds:.2f} |"
            )


if __name__ == "__main__":
    table()
