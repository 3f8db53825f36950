"""The wheel built once from the checkout, for the tests of what a user installs."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import TextContent

from paperanchor import __version__
from tests.conftest import ROOT

UV = Path(sys.executable).with_name("uv")  # a dev extra: the tool a user runs `uvx` from
WHEEL_NAME = f"paperanchor-{__version__}-py3-none-any.whl"


def uv(*args: str, cwd: Path) -> None:
    """Run uv; fail with its stderr."""
    result = subprocess.run([str(UV), *args], capture_output=True, text=True, timeout=600, cwd=cwd)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel `make wheel` builds, built into a temporary directory."""
    assert UV.exists(), "uv comes with the dev extras: make install"
    out = tmp_path_factory.mktemp("dist")
    uv("build", "--wheel", "--out-dir", str(out), str(ROOT), cwd=out)
    return out / WHEEL_NAME


def command(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A user's command (uvx, pipx, paperanchor) run to its end; its output captured."""
    return subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=cwd, env=env)


def tools_and_a_read(target: Any) -> tuple[list[str], str]:
    """Through the official MCP client: the tools listed, and `read` of local/short's S3."""

    async def job() -> tuple[list[str], str]:
        async with Client(target) as client:
            listed = await client.list_tools()
            answer = await client.call_tool("read", {"paper": "local/short", "anchor": "S3"})
            (content,) = answer.content
            assert isinstance(content, TextContent)
            return [tool.name for tool in listed.tools], content.text

    return asyncio.run(job())
