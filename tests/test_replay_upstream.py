"""scripts/replay_upstream.py, which README and docs/serving.md use to show discovery offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import CORPUS, ROOT

SCRIPT = ROOT / "scripts" / "replay_upstream.py"
# `make run` installs what serving needs, not pytest: the script runs with pytest unimportable
WITHOUT_PYTEST = (
    "import runpy, sys; sys.modules['pytest'] = None; sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


def replay_command(*args: str) -> list[str]:
    """The script's command line, run by a Python that cannot import pytest."""
    return [sys.executable, "-c", WITHOUT_PYTEST, str(SCRIPT), *args]


def test_replay_upstream_writes_an_environment_whose_api_answers_a_recorded_search(
    tmp_path: Path,
) -> None:
    env_file = tmp_path / "replay.env"
    with subprocess.Popen(
        replay_command(str(env_file)),
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PAPERANCHOR_CORPUS": str(CORPUS)},
    ) as child:
        try:
            assert child.stdout is not None
            said = child.stdout.readline()
            assert said.startswith(f"replay of {CORPUS} at http://127.0.0.1:"), said
            env = dict(
                line.removeprefix("export ").split("=", 1)
                for line in env_file.read_text().split("\n")
                if line
            )
            assert env["PAPERANCHOR_ARXIV_API_GAP_S"] == "0"
            answer = httpx.get(
                env["PAPERANCHOR_ARXIV_API_URL"],
                params={
                    "search_query": "au:del_maestro AND ti:checkerboard",
                    "start": "0",
                    "max_results": "10",
                },
            )
            assert answer.status_code == 200 and b"checkerboard order" in answer.content
            assert httpx.get(env["PAPERANCHOR_ARXIV_HTML_URL"] + "/2501.11120v1").status_code == 200
        finally:
            child.terminate()
            child.wait(timeout=10)


def test_replay_upstream_without_its_recordings_says_where_it_looked_and_stops(
    tmp_path: Path,
) -> None:
    (tmp_path / "html").mkdir()  # a corpus with pages but no recorded API answers
    result = subprocess.run(
        replay_command(str(tmp_path / "replay.env")),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PAPERANCHOR_CORPUS": str(tmp_path)},
    )
    assert result.returncode == 2
    assert f"no recordings at {tmp_path} (missing atom, s2/)" in result.stderr
    assert "set PAPERANCHOR_CORPUS" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "replay.env").exists()
