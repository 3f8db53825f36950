"""An external client: the MCP Inspector's CLI (npm) against `paperanchor serve`.

The Inspector is pinned so npx's cache answers after the first run. 2.12.0 declares
node >= 22.19 but runs on Debian's node 20 (npm prints EBADENGINE warnings on stderr).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from paperanchor import operations
from tests.api.live import serve_command
from tests.conftest import ROOT, require_program

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
TOOLS = [operation.name for operation in operations.listed("reader")]


def inspector(url: str, *arguments: str) -> tuple[int, Any]:
    """Run the Inspector's CLI once; its exit code and the JSON it printed."""
    npx = shutil.which("npx")
    assert npx is not None
    done = subprocess.run(
        [npx, "-y", INSPECTOR, "--cli", url, "--transport", "http", *arguments],
        capture_output=True,
        text=True,
        timeout=600,  # the first run downloads the package from the npm registry
    )
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(
            f"the Inspector printed no JSON (exit {done.returncode}): {done.stderr[-2000:]}"
        )


@pytest.fixture(scope="module")
def served(replay_server: Any, papers_dir: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    require_program(shutil.which("npx") is not None, "npx (npm) is not installed")
    env = replay_server.environ(
        local_dir=papers_dir, cache_dir=tmp_path_factory.mktemp("cache"), rate_limit="0"
    )
    with serve_command(env, ROOT) as url:
        yield url


def test_the_inspector_lists_the_reading_tools_of_the_table(served):
    code, listed = inspector(f"{served}/mcp", "--method", "tools/list")

    assert code == 0
    assert [tool["name"] for tool in listed["tools"]] == TOOLS
    assert all(tool["annotations"]["readOnlyHint"] for tool in listed["tools"])


def test_the_inspector_calls_outline(served):
    code, result = inspector(
        f"{served}/mcp",
        "--method",
        "tools/call",
        "--tool-name",
        "outline",
        "--tool-arg",
        "paper=local/short",
    )

    assert code == 0 and result["isError"] is False
    outline = result["structuredContent"]
    assert outline["title"] == "Sparse Anchoring for Incremental Document Alignment"
    # the compact outline (contract §11): one "tokens id number title" line a section
    assert [line.split()[1] for line in outline["sections"]] == ["S1", "S2", "S3", "bib"]
    assert json.loads(result["content"][0]["text"]) == outline


def test_the_inspector_sees_a_failure_as_an_error_result(served):
    code, result = inspector(
        f"{served}/mcp",
        "--method",
        "tools/call",
        "--tool-name",
        "read",
        "--tool-arg",
        "paper=local/short",
        "--tool-arg",
        "anchor=intro",
    )

    assert code != 0  # the Inspector's exit code for a tool error
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith('not-found: No anchor "intro" in local/short')
