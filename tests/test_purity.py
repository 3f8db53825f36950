"""The pure modules (and the service) import no web, MCP, HTTP, cache or Redis library."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

BLOCKED = ("fastapi", "starlette", "mcp", "httpx", "diskcache", "redis", "uvicorn")
PURE = (
    "paperanchor.tree",
    "paperanchor.parse",
    "paperanchor.parse.pdf",
    "paperanchor.render.markdown",
    "paperanchor.render.text",
    "paperanchor.render.json",
    "paperanchor.render.html",
    "paperanchor.render.mathml",
    "paperanchor.render.critic",
    "paperanchor.changes",
    "paperanchor.anchors",
    "paperanchor.search",
    "paperanchor.infer",
    "paperanchor.refs",
    "paperanchor.errors",
    "paperanchor.codec",
    "paperanchor.shapes",
    "paperanchor.service",
    "paperanchor.discovery.atom",
    "paperanchor.discovery.query",
    "paperanchor.discovery.categories",
    "paperanchor.discovery.latex",
    "paperanchor.discovery.bibtex",
    "paperanchor.discovery.s2",
    "paperanchor.discovery.entries",
)


@pytest.mark.parametrize("module", PURE)
def test_a_pure_module_imports_with_web_and_network_libraries_blocked(module: str) -> None:
    script = textwrap.dedent(f"""
        import importlib.abc, sys
        BLOCKED = {BLOCKED!r}
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ImportError("blocked: " + name)
                return None
        sys.meta_path.insert(0, Block())
        import {module}
        leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        assert not leaked, leaked
    """)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_the_blocker_itself_catches_an_impure_import() -> None:
    script = (
        "import importlib.abc, sys\n"
        "class B(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'httpx': raise ImportError('blocked')\n"
        "sys.meta_path.insert(0, B())\n"
        "import paperanchor.sources\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0 and "blocked" in result.stderr


@pytest.mark.parametrize("module", ["paperanchor.upstream", "paperanchor.coordination"])
def test_http_pacing_imports_no_cache_backend(module: str) -> None:
    # The host turns and pauses know Redis through outage.RedisLink, never through the store.
    script = textwrap.dedent(f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "paperanchor.store" or name.split(".")[0] == "diskcache":
                    raise ImportError("blocked: " + name)
                return None
        sys.meta_path.insert(0, Block())
        import {module}
    """)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
