"""The landing page's list of the local directory (sources.local_files): what opens each file,
its title, and the bounds on a hostile folder."""

from __future__ import annotations

import gzip
from pathlib import Path

from paperanchor import sources
from paperanchor.refs import parse_ref
from paperanchor.sources import LocalFile, local_files


def _page(title: str, filler: int = 0) -> bytes:
    return f"<html><head>{' ' * filler}<title>{title}</title></head><body></body></html>".encode()


def test_each_file_is_listed_by_the_reference_that_opens_it_with_its_title(tmp_path: Path) -> None:
    (tmp_path / "2501.11120v1.html").write_bytes(_page("Tell me &amp; about <i>x</i>"))
    (tmp_path / "hep-th_9901001v2.html").write_bytes(_page("A legacy   paper"))
    with gzip.open(tmp_path / "notes.html.gz", "wb") as stream:
        stream.write(_page("Compressed"))
    (tmp_path / "figure.png").write_bytes(b"\x89PNG")
    (tmp_path / "-starts-with-a-dash.html").write_bytes(_page("no reference names this"))
    (tmp_path / "folder.html").mkdir()

    listed, more = local_files(tmp_path)

    assert listed == [
        LocalFile("2501.11120v1", "2501.11120v1.html", "Tell me & about <i>x</i>"),
        LocalFile("hep-th/9901001v2", "hep-th_9901001v2.html", "A legacy paper"),
        LocalFile("local/notes", "notes.html.gz", "Compressed"),
    ]
    assert more == 0
    for entry in listed:  # every listed reference is one the service accepts
        assert parse_ref(entry.reference).idv == entry.reference


def test_a_title_is_read_from_the_first_bytes_only_and_shortened(tmp_path: Path) -> None:
    (tmp_path / "late.html").write_bytes(_page("Too late", filler=70_000))
    (tmp_path / "long.html").write_bytes(_page("word " * 1_000))
    (tmp_path / "none.html").write_bytes(b"<html><body>no head</body></html>")

    titles = {entry.name: entry.title for entry in local_files(tmp_path)[0]}

    assert titles["late.html"] is None
    assert titles["none.html"] is None
    long_title = titles["long.html"]
    assert long_title is not None and len(long_title) <= 300


def test_a_huge_folder_costs_a_bounded_scan_and_a_bounded_list(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sources, "SCANNED_LOCAL_ENTRIES", 300)
    for i in range(500):
        (tmp_path / f"p{i:04}.html").write_bytes(b"")

    listed, more = local_files(tmp_path, limit=50)

    assert len(listed) == 50
    assert len(listed) + more == 300  # only the first 300 entries of the folder were read


def test_a_missing_folder_lists_nothing(tmp_path: Path) -> None:
    assert local_files(tmp_path / "gone") == ([], 0)


def test_a_pdf_is_listed_by_its_reference_unless_an_html_file_of_its_name_opens_instead(
    tmp_path: Path,
) -> None:
    (tmp_path / "draft.pdf").write_bytes(b"%PDF-1.5\n")
    (tmp_path / "1804.07821v1.pdf").write_bytes(b"%PDF-1.5\n")
    (tmp_path / "notes.html").write_bytes(_page("Notes"))
    (tmp_path / "notes.pdf").write_bytes(b"%PDF-1.5\n")  # local/notes opens notes.html

    listed, more = local_files(tmp_path)

    # a PDF's title is in its text layer: only a parse would find it
    assert listed == [
        LocalFile("1804.07821v1", "1804.07821v1.pdf", None),
        LocalFile("local/draft", "draft.pdf", None),
        LocalFile("local/notes", "notes.html", "Notes"),
    ]
    assert more == 0


def test_ar5iv_titles_lose_the_id_they_open_with(tmp_path: Path) -> None:
    # corpus/html/1808.08002.ar5iv.html's <title>, as ar5iv writes it
    (tmp_path / "1808.08002.html").write_bytes(
        _page("\n   [1808.08002] Polynomial Chaos-Based Adaptive Control\n")
    )
    (tmp_path / "brackets.html").write_bytes(_page("[Re] A replication"))  # not an id: kept

    titles = {entry.name: entry.title for entry in local_files(tmp_path)[0]}

    assert titles["1808.08002.html"] == "Polynomial Chaos-Based Adaptive Control"
    assert titles["brackets.html"] == "[Re] A replication"


def test_pages_named_in_the_unlisted_file_are_left_off_the_list(tmp_path: Path) -> None:
    for name in ("paper.html", "fixture.html", "draft.html"):
        (tmp_path / name).write_bytes(_page(name))
    (tmp_path / ".unlisted").write_text("# test pages\nfixture.html  # escaping\n\ndraft.html\n")

    listed, more = local_files(tmp_path)

    assert [entry.name for entry in listed] == ["paper.html"] and more == 0


def test_the_sample_papers_do_not_list_the_escaping_fixture() -> None:
    from tests.conftest import FIXTURES

    listed = {entry.reference for entry in local_files(FIXTURES / "html")[0]}

    assert "local/xss" not in listed and "local/full" in listed
