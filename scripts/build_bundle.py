"""Lay out the Claude Desktop bundle (MCPB) of paperanchor: its manifest and the wheel.

    .venv/bin/python scripts/build_bundle.py WHEEL DIRECTORY

writes DIRECTORY/manifest.json and copies WHEEL beside it; `make bundle` then checks the
manifest with `mcpb validate` and zips the directory with `mcpb pack` into
dist/paperanchor-<version>.mcpb. The bundle holds no Python: Claude Desktop runs
`uvx --from <the bundled wheel> paperanchor mcp`, so uv must be installed (it fetches the
wheel's dependencies from PyPI once and keeps them). The tools listed are the operations
table's (operations.py), the options a user sets are settings of settings.py.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # the checkout's package: its version, tools, settings

from paperanchor import __version__, operations  # noqa: E402
from paperanchor.api.mcp import UNTRUSTED  # noqa: E402

MANIFEST_VERSION = "0.3"
"""The MCPB manifest version written (the newest that is not marked experimental)."""

# What a user of Claude Desktop sets, as the environment of `paperanchor mcp`.
USER_CONFIG: dict[str, tuple[str, dict[str, Any]]] = {
    "tools": (
        "PAPERANCHOR_TOOLS",
        {
            "type": "string",
            "title": "Tool set",
            "description": "reader: the seven reading tools; all: also search_arxiv, bibtex, "
            "citations and category_trends",
            "default": "reader",
            "required": False,
        },
    ),
    "local_dir": (
        "PAPERANCHOR_LOCAL_DIR",
        {
            "type": "directory",
            "title": "Your papers",
            "description": "A folder of LaTeXML HTML or PDF files, opened as local/<name>",
            "default": "",
            "required": False,
        },
    ),
    "s2_api_key": (
        "PAPERANCHOR_S2_API_KEY",
        {
            "type": "string",
            "title": "Semantic Scholar API key",
            "description": "For the citations tool: one request a second instead of one in three",
            "default": "",
            "required": False,
            "sensitive": True,
        },
    ),
}


def manifest(wheel_name: str) -> dict[str, Any]:
    """The bundle's manifest.json: the command Claude Desktop runs and what it offers."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": "paperanchor",
        "display_name": "paperanchor",
        "version": __version__,
        "description": "Read arXiv papers one section at a time: outline, sections, quotes "
        "with permalinks and hashes, figures, equations and references.",
        "long_description": "paperanchor fetches a paper's HTML rendering from arXiv (else "
        "ar5iv, else its PDF), parses it into a tree of anchored sections and answers an "
        "agent's reading tools from it: the outline first, then one section, so a paper costs "
        f"a few thousand tokens instead of fifteen thousand. {UNTRUSTED} Needs uv "
        "(https://docs.astral.sh/uv/): the bundle runs `uvx --from <its wheel> paperanchor mcp`.",
        "author": {"name": "paperanchor contributors"},
        "license": "MIT",
        "keywords": ["arxiv", "papers", "latexml", "citations", "reading"],
        "server": {
            "type": "python",
            "entry_point": wheel_name,
            "mcp_config": {
                "command": "uvx",
                "args": ["--from", f"${{__dirname}}/{wheel_name}", "paperanchor", "mcp"],
                "env": {env: f"${{user_config.{key}}}" for key, (env, _) in USER_CONFIG.items()},
            },
        },
        "tools": [
            {"name": operation.name, "description": operation.description}
            for operation in operations.listed("all")
        ],
        "user_config": {key: option for key, (_, option) in USER_CONFIG.items()},
        "compatibility": {
            "platforms": ["darwin", "win32", "linux"],
            "runtimes": {"python": ">=3.11"},
        },
    }


def main() -> int:
    """Write the manifest and copy the wheel into the bundle's directory."""
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    wheel, directory = Path(sys.argv[1]), Path(sys.argv[2])
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    shutil.copy(wheel, directory / wheel.name)
    text = json.dumps(manifest(wheel.name), indent=2, ensure_ascii=False) + "\n"
    (directory / "manifest.json").write_text(text, encoding="utf-8")
    print(f"{directory}: manifest.json and {wheel.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
