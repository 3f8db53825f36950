"""scripts/replay_upstream.py, which README and docs/serving.md use to show discovery offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import ROOT


def test_replay_upstream_writes_an_environment_whose_api_answers_a_recorded_search(
    tmp_path: Path,
) -> None:
    env_file = tmp_path / "replay.env"
    script = ROOT / "scripts" / "replay_upstream.py"
    with subprocess.Popen(
        [sys.executable, str(script), str(env_file)], stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline().startswith("replay at http://127.0.0.1:")
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
