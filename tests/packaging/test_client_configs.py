"""The MCP client configurations of docs/install.md, each started as its client would start it:
every stdio server of every JSON block, through the official MCP client, with the wheel built
from the checkout where the page says /path/to/paperanchor-<version>-py3-none-any.whl."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters

from paperanchor import operations
from tests.conftest import ROOT
from tests.packaging.conftest import UV, WHEEL_NAME, tools_and_a_read

PAGE = ROOT / "docs" / "install.md"
WHEEL_PLACEHOLDER = f"/path/to/{WHEEL_NAME}"
PAPERS_PLACEHOLDER = "/path/to/papers"


def _blocks() -> list[dict[str, Any]]:
    """The page's JSON blocks, parsed."""
    text = PAGE.read_text(encoding="utf-8")
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, re.DOTALL)]


def _servers() -> list[tuple[str, dict[str, Any]]]:
    """Every server of every block: Claude Desktop's and Cursor's `mcpServers`, VS Code's
    `servers`."""
    found = []
    for block in _blocks():
        for key in ("mcpServers", "servers"):
            for name, server in block.get(key, {}).items():
                found.append((f"{key}.{name}", server))
    return found


def test_the_page_configures_claude_desktop_cursor_and_vs_code() -> None:
    names = [name for name, _ in _servers()]
    assert names.count("mcpServers.paperanchor") == 2  # Claude Desktop's and Cursor's
    assert "servers.paperanchor" in names and "servers.paperanchor-http" in names
    for name, server in _servers():
        if "url" in server:
            assert server["url"].endswith("/mcp"), name
            assert server.get("type", "http") == "http", name
        if name.startswith("servers."):
            assert server["type"] in {"stdio", "http"}, name  # VS Code requires it


STDIO = [(name, server) for name, server in _servers() if "command" in server]


@pytest.mark.parametrize(("name", "server"), STDIO, ids=[name for name, _ in STDIO])
def test_each_stdio_server_of_the_page_starts_and_lists_its_tools(
    name: str, server: dict[str, Any], wheel: Path, tmp_path: Path
) -> None:
    papers = tmp_path / "papers"
    shutil.copytree(ROOT / "fixtures" / "html", papers)

    def filled(text: str) -> str:
        return text.replace(WHEEL_PLACEHOLDER, str(wheel)).replace(PAPERS_PLACEHOLDER, str(papers))

    env = {k: v for k, v in os.environ.items() if k in {"HOME", "LANG", "TMPDIR", "SSL_CERT_FILE"}}
    env["PATH"] = f"{UV.parent}{os.pathsep}{os.environ.get('PATH', '')}"  # where uvx is
    env.update({key: filled(value) for key, value in server.get("env", {}).items()})
    # the test's own: no upstream is reached, and local/short is there to read
    env.update(
        PAPERANCHOR_OFFLINE="1",
        PAPERANCHOR_LOCAL_DIR=str(papers),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    stdio = StdioServerParameters(
        command=server["command"],
        args=[filled(arg) for arg in server["args"]],
        env=env,
        cwd=str(tmp_path),
    )
    names, text = tools_and_a_read(stdio)
    tool_set = server.get("env", {}).get("PAPERANCHOR_TOOLS", "reader")
    assert names == [operation.name for operation in operations.listed(tool_set)]
    assert text.startswith("# 3 Conclusion")
