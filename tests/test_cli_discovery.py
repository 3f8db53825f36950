"""The discovery commands (search-arxiv, bibtex, citations, trends), generated from the
operations table like the reading ones, against the replay of recorded arXiv API and Semantic
Scholar answers; their JSON is what the MCP tools and REST routes answer."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from paperanchor import operations
from paperanchor.discovery import query
from paperanchor.discovery.client import api_url
from tests.discovery.recorded import TESTING_100, atom
from tests.discovery.test_client import script_citations, target
from tests.replay import page
from tests.test_cli import run


def discover(replay: Any, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line, pointed at the replay with discovery on."""
    return run(*args, env=replay.environ(discovery=True, cache_dir=tmp_path, offline="0"))


def test_every_operation_of_the_table_is_a_command() -> None:
    names = [operation.command_name for operation in operations.commands()]
    # every tool, and the arXiv record; not arXiv's whole taxonomy (/categories.json)
    assert len(names) == len(operations.listed("all")) + 1
    assert names[-5:] == ["search-arxiv", "bibtex", "citations", "trends", "metadata"]


def test_search_arxiv_prints_two_lines_a_hit_and_the_count_on_stderr(replay, tmp_path) -> None:
    result = discover(replay, tmp_path, "search-arxiv", "au:del_maestro", "AND", "ti:checkerboard")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "cond-mat/0603029v1  2006-03-02  From stripe to checkerboard order on the square lattice "
        "in the presence of quenched disorder",
        "    Adrian Del Maestro, Bernd Rosenow, Subir Sachdev",
    ]
    assert result.stderr == "1-1 of 1 for 'au:del_maestro AND ti:checkerboard'\n"


def test_search_arxiv_json_is_the_search_page_and_takes_its_flags(replay, tmp_path) -> None:
    result = discover(replay, tmp_path, "search-arxiv", "testing", "--start", "10", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["query"] == "testing" and answer["start"] == 10 and len(answer["hits"]) == 10


def test_bibtex_of_a_paper_is_its_misc_entry(replay, tmp_path) -> None:
    result = discover(replay, tmp_path, "bibtex", "1111.2011v2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("@misc{murray2011quantum,\n")
    assert "  eprint = {1111.2011},\n" in result.stdout
    wrapped = discover(replay, tmp_path, "bibtex", "1111.2011v2", "--json")
    assert json.loads(wrapped.stdout) == {"bibtex": result.stdout}


def test_bibtex_takes_papers_or_a_bibliography_not_both_nor_neither(replay, tmp_path) -> None:
    neither = discover(replay, tmp_path, "bibtex")
    both = discover(replay, tmp_path, "bibtex", "1111.2011v2", "--references-of", "1111.2011v2")
    for result in (neither, both):
        assert result.returncode == 1
        assert result.stderr == (
            "bad-request: bibtex takes a PAPER or --references-of PAPER, one of the two\n"
        )


def test_citations_prints_the_count_and_a_line_a_citing_paper(replay, tmp_path) -> None:
    script_citations(replay, "2304.05376", count=3)
    result = discover(replay, tmp_path, "citations", "2304.05376", "--limit", "3")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "500 papers cite 2304.05376" and len(lines) == 4


def test_trends_prints_a_line_a_day_and_the_top_terms(replay, tmp_path) -> None:
    asked, _ = query.trends_query("cs.SE", 30, today=datetime.now(UTC).date())
    replay.script(target(api_url(replay.arxiv_api_url, asked.params())), page(atom(TESTING_100)))
    result = discover(replay, tmp_path, "trends", "cs.SE", "--days", "30", "--json")
    assert result.returncode == 0, result.stderr
    trends = json.loads(result.stdout)
    text = discover(replay, tmp_path, "trends", "cs.SE", "--days", "30")
    assert text.stdout.startswith(f"cs.SE: {trends['submissions']} submissions, ")
    assert text.stdout.splitlines()[-1].startswith("top title terms: ")


def test_a_discovery_command_offline_says_what_it_cannot_reach(tmp_path) -> None:
    result = run("search-arxiv", "attention", env={"PAPERANCHOR_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 1
    assert result.stderr.startswith('not-found: The search "attention" is not in the cache')
    assert "PAPERANCHOR_OFFLINE=1" in result.stderr
    assert "Traceback" not in result.stderr


def test_metadata_prints_the_arxiv_record(replay, tmp_path) -> None:
    result = discover(replay, tmp_path, "metadata", "1111.2011v2")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Quantum Criticality for Extended Nodes on a Bethe Lattice")
    assert lines[1] == "James M. Murray, Adrian Del Maestro, Zlatko Tesanovic"
    assert "doi: 10.1103/PhysRevB.85.115117" in lines
    assert (
        json.loads(discover(replay, tmp_path, "metadata", "1111.2011v2", "--json").stdout)["doi"]
        == "10.1103/PhysRevB.85.115117"
    )
