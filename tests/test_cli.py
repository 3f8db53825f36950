"""The command line: operations on files and local references; errors as `code: detail`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paperanchor.render.markdown import tokens_of
from tests.corpus_pages import fixture_path

FIXTURES_HTML = fixture_path("short").parent


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PAPERANCHOR_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "paperanchor.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=full_env,
    )


def test_outline_of_a_file_prints_the_section_tree() -> None:
    result = run("outline", str(fixture_path("short")))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Sparse Anchoring for Incremental Document Alignment\n")
    assert "1 Introduction  (S1," in result.stdout


def test_read_without_an_anchor_prints_the_whole_paper_as_markdown() -> None:
    result = run("read", str(fixture_path("short")))
    assert result.returncode == 0
    assert result.stdout.startswith("# Sparse Anchoring for Incremental Document Alignment\n")
    assert "# 3 Conclusion" in result.stdout


def test_read_json_and_max_tokens() -> None:
    result = run("read", str(fixture_path("full")), "S2", "--max-tokens", "100", "--json")
    data = json.loads(result.stdout)
    assert data["id"] == "S2" and data["truncated"] is True
    assert data["markdown"].startswith("# 2 Model")


def test_a_local_reference_is_found_in_the_local_directory() -> None:
    result = run(
        "cite", "local/short", "S2.p2", "--json", env={"PAPERANCHOR_LOCAL_DIR": str(FIXTURES_HTML)}
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["anchor"] == "S2.p2" and data["url"].endswith("/local/short/sections/S2.md")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("read", "{short}", "nowhere"), 'not-found: No anchor "nowhere" in local/short'),
        (("outline", "not a paper"), 'bad-request: Not a paper reference: "not a paper"'),
        (
            ("search", "{short}", "anchor", "--limit", "500"),
            "bad-request: limit=500 is out of range",
        ),
        (("outline", "/no/such/file.html"), "not-found: Cannot read /no/such/file.html"),
        (("equation", "{short}", "S1"), "not-found: No equation"),
    ],
)
def test_errors_go_to_stderr_as_code_and_detail_without_a_traceback(
    args: tuple[str, ...], expected: str
) -> None:
    result = run(*(a.format(short=fixture_path("short")) for a in args))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(expected), result.stderr
    assert "Traceback" not in result.stderr


def test_a_file_that_is_not_latexml_says_so_and_blames_no_upstream(tmp_path: Path) -> None:
    page = tmp_path / "plain.html"
    page.write_text("<html><body><p>hello</p></body></html>")
    result = run("outline", str(page))
    assert result.returncode == 1
    assert result.stderr.startswith(f"bad-request: {page} is not a LaTeXML document")
    assert "upstream" not in result.stderr


def test_version_prints_the_package_version() -> None:
    from paperanchor import __version__

    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"paperanchor {__version__}"


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("read", ["100-100000, default 8000", "PAPERANCHOR_LOCAL_DIR", "printed label"]),
        ("search", ["1-50 (default 5)", "local/<name>"]),
        ("cite", ["--text QUOTE", "10-2000 characters", "fuzzy"]),
        ("references", ["bib.bib12, 12 or [12]"]),
        ("figure", ["Table 2"]),
        ("fetch", ["a file is parsed"]),
    ],
)
def test_every_subcommand_says_what_its_arguments_take(command: str, says: list[str]) -> None:
    result = run(command, "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    for words in says:
        assert words in text, (command, words)


def test_an_unknown_flag_prints_the_subcommands_usage() -> None:
    result = run("read", str(fixture_path("short")), "--colour", "5")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: paperanchor read ")
    assert "unrecognized arguments: --colour 5" in result.stderr


def test_a_search_without_hits_says_so_on_stderr() -> None:
    result = run("search", str(fixture_path("short")), "zebra", "xylophone")
    assert result.returncode == 0 and result.stdout == ""
    assert 'contains "zebra xylophone"' in result.stderr


def test_fetch_accepts_a_file_path_like_the_other_commands() -> None:
    result = run("fetch", str(fixture_path("short")))
    assert result.returncode == 0, result.stderr
    assert f"{fixture_path('short')}: file, " in result.stdout
    assert "1 paper: 1 fetched" in result.stderr


def test_one_conversion_error_is_said_in_the_singular() -> None:
    result = run("outline", str(fixture_path("full")))
    assert "[1 conversion error]" in result.stdout
    assert "[1 conversion errors]" not in result.stdout


def test_a_cut_read_says_how_to_get_the_rest_on_the_command_line() -> None:
    result = run("read", str(fixture_path("short")), "S1", "--max-tokens", "100")
    assert result.returncode == 0
    lines = result.stdout.rstrip("\n").split("\n")
    assert lines[0] == "# 1 Introduction" and len(lines[2]) > 40  # body text, not only the heading
    assert lines[-1].startswith("…[truncated: ") and "rerun with --max-tokens " in lines[-1]
    assert tokens_of(result.stdout) <= 100


def test_cite_by_text_on_the_command_line() -> None:
    quote = "ANCHOR paragraphs and then aligns only the short stretches"
    result = run("cite", str(fixture_path("short")), "--text", quote, "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["match"] == "exact" and answer["anchor"] == "id1.id1"  # the abstract's text


PDF_FIXTURES = FIXTURES_HTML.parent / "pdf"


def test_outline_of_a_pdf_file_prints_the_section_tree_read_from_its_text_layer() -> None:
    result = run("outline", str(PDF_FIXTURES / "short.pdf"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Sparse Anchoring for Incremental Document Alignment\n")
    assert "local/short · local · " in result.stdout
    assert "1 Introduction  (S1," in result.stdout and "References  (bib," in result.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("read", "{pdf}", "S2"), "# 2 Model"),
        (("cite", "{pdf}", "S1.p1"), "/local/full/sections/S1.md (S1.p1; hash "),
        (("references", "{pdf}"), "[1] "),
        (("figure", "{pdf}", "T1"), "S4.T1: Accuracy of note placement"),
        (("equation", "{pdf}", "E1"), "S2.E1 (1): "),
        (("search", "{pdf}", "identifiers"), "S1.p1 [S1]: "),
        (("outline", "{pdf}", "--json"), '"title": "Stable Paragraph Identifiers Across'),
    ],
)
def test_every_operation_accepts_a_pdf_file(args: tuple[str, ...], expected: str) -> None:
    result = run(*(a.format(pdf=PDF_FIXTURES / "full.pdf") for a in args))
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout


def test_a_pdf_saved_without_its_extension_is_read_as_a_pdf(tmp_path: Path) -> None:
    draft = tmp_path / "draft"
    draft.write_bytes((PDF_FIXTURES / "short.pdf").read_bytes())
    result = run("outline", str(draft))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Sparse Anchoring for Incremental Document Alignment\n")


def test_a_broken_pdf_file_is_an_error_that_names_the_file(tmp_path: Path) -> None:
    cut = tmp_path / "cut.pdf"
    cut.write_bytes((PDF_FIXTURES / "short.pdf").read_bytes()[:20_000])
    result = run("outline", str(cut))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(f"bad-request: {cut}: the PDF is cut short"), result.stderr
    missing = run("outline", str(tmp_path / "missing.pdf"))
    assert missing.stderr.startswith(f"not-found: Cannot read {tmp_path / 'missing.pdf'}")


def test_a_pdf_url_is_a_paper_reference_not_a_file() -> None:
    result = run("outline", "https://arxiv.org/pdf/1706.03762v7.pdf")
    assert result.stderr.startswith("not-found: 1706.03762v7 is not in the cache"), result.stderr


def test_fetch_prefetches_into_the_cache_and_prints_a_summary(  # type: ignore[no-untyped-def]
    replay, tmp_path: Path
) -> None:
    env = {**replay.environ(cache_dir=tmp_path), "PAPERANCHOR_OFFLINE": "0"}
    first = run("fetch", "2501.11120", "1808.08002", "1706.99999", env=env)
    assert first.returncode == 1  # one of the three is unknown everywhere
    assert "2501.11120v1: arxiv" in first.stdout and "1808.08002: ar5iv" in first.stdout
    assert "3 papers: 2 fetched, 0 already cached, 1 failed" in first.stderr
    assert "1706.99999: not-found" in first.stderr
    requests_before = len(replay.requests)
    second = run("fetch", "2501.11120", "1808.08002", env=env)
    assert second.returncode == 0
    assert "2 papers: 0 fetched, 2 already cached, 0 failed" in second.stderr
    assert len(replay.requests) == requests_before  # served from the cache
    offline = run("outline", "2501.11120", "--json", env={**env, "PAPERANCHOR_OFFLINE": "1"})
    assert json.loads(offline.stdout)["idv"] == "2501.11120v1"


def test_serve_with_two_workers_answers_from_two_processes(tmp_path: Path) -> None:
    import time

    import httpx

    from tests.conftest import free_port

    port = free_port()
    env = {
        **os.environ,
        "PAPERANCHOR_LOCAL_DIR": str(FIXTURES_HTML),
        "PAPERANCHOR_OFFLINE": "1",
        "PAPERANCHOR_CACHE_DIR": str(tmp_path),
        "PAPERANCHOR_RATE_LIMIT": "0",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "paperanchor.cli", "serve", "--workers", "2", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        with httpx.Client(trust_env=False, timeout=10) as client:
            while True:
                try:
                    answer = client.get(f"http://127.0.0.1:{port}/local/short/outline.json")
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline and server.poll() is None
                    time.sleep(0.2)
        assert answer.status_code == 200 and answer.json()["idv"] == "local/short"
    finally:
        server.terminate()
        _, log = server.communicate(timeout=30)
    assert log.count("Started server process") == 2


# -- --debug: the traceback of an unexpected error, on request ---------------------------------

BAD_PORT = {"PAPERANCHOR_PORT": "70000"}  # a setting the command cannot start with


def test_an_unexpected_error_prints_one_line_and_points_at_debug() -> None:
    result = run("outline", "local/short", env=BAD_PORT)

    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "internal: unexpected ValidationError while serving the request",
        "(run with --debug for the traceback)",
    ]


def test_debug_prints_the_traceback_that_names_the_cause() -> None:
    result = run("--debug", "outline", "local/short", env=BAD_PORT)

    assert result.returncode == 1
    assert result.stderr.startswith("internal: unexpected ValidationError")
    assert "Traceback (most recent call last):" in result.stderr
    assert "PAPERANCHOR_PORT must be 0-65535, got 70000" in result.stderr


ABSTRACT_ONLY = (
    "<html><body><article class='ltx_document'><h1 class='ltx_title ltx_title_document'>Only an"
    " abstract</h1><div class='ltx_abstract'><h6 class='ltx_title'>Abstract</h6>"
    "<p class='ltx_p'>We study revisions of preprints at length.</p></div>"
    "<div class='ltx_para'><p class='ltx_p'>August 24, 2026</p></div></article></body></html>"
)


@pytest.mark.parametrize(
    ("page", "quality"),
    [("full", "degraded"), ("abstract-only", "failed"), ("short", None)],
)
def test_the_text_outline_says_degraded_or_failed_on_its_first_lines(
    page: str, quality: str | None, tmp_path: Path
) -> None:
    path = fixture_path(page)
    if page == "abstract-only":
        path = tmp_path / "abstract-only.html"
        path.write_text(ABSTRACT_ONLY, encoding="utf-8")
    result = run("outline", str(path))
    assert result.returncode == 0, result.stderr
    first_lines = result.stdout.splitlines()[:3]
    said = [q for q in ("degraded", "failed") if any(q in line for line in first_lines)]
    assert said == ([quality] if quality else [])
    as_json = json.loads(run("outline", str(path), "--json").stdout)
    assert as_json["quality"] == (quality or "ok")


def test_cite_from_another_file_re_anchors_its_node_in_this_one() -> None:
    editions = FIXTURES_HTML.parent / "editions" / "html"
    new, old = editions / "insert-section-new.html", editions / "insert-section-old.html"
    result = run("cite", str(new), "S2.p1", "--from", str(old))
    assert result.returncode == 0, result.stderr
    assert (
        "(S3.p1;" in result.stdout
        and "moved from S2.p1 of local/insert-section-old" in result.stdout
    )
    gone = run(
        "cite",
        str(editions / "delete-paragraph-new.html"),
        "S1.p3",
        "--from",
        str(editions / "delete-paragraph-old.html"),
    )
    assert gone.returncode != 0 and gone.stderr.startswith("not-found: S1.p3 of")
    mixed = run("cite", str(new), "S2.p1", "--from", "v1")
    assert mixed.returncode != 0 and "both files" in mixed.stderr


def test_outline_read_and_references_since_another_file_say_what_changed() -> None:
    editions = FIXTURES_HTML.parent / "editions" / "html"
    new, old = editions / "insert-section-new.html", editions / "insert-section-old.html"

    outline = run("outline", str(new), "--since", str(old))
    backwards = run("outline", str(old), "--since", str(new))
    marked = json.loads(run("outline", str(new), "--since", str(old), "--json").stdout)
    edit_new, edit_old = editions / "edit-sentence-new.html", editions / "edit-sentence-old.html"
    read = run("read", str(edit_new), "S2", "--since", str(edit_old))
    references = run("references", str(new), "--since", str(old), "--json")
    mixed = run("outline", str(new), "--since", "v1")

    assert outline.returncode == 0, outline.stderr
    assert "2 Background  (S2, 93 tokens)  [added]" in outline.stdout
    assert "[removed]" not in outline.stdout
    assert "2 Background  (S2)  [removed]" in backwards.stdout
    # the sections after the new one are renumbered, not changed: nothing to read again
    assert [s["change"] for s in marked["sections"][:3]] == ["same", "added", "same"]
    assert read.returncode == 0 and "{~~" in read.stdout and "~>" in read.stdout
    assert json.loads(references.stdout)["added"] == []
    assert mixed.returncode != 0 and "both files" in mixed.stderr
