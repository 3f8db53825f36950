"""The Claude Desktop bundle (MCPB): laid out by scripts/build_bundle.py, checked and packed by
the @anthropic-ai/mcpb tool (`make` installs it into build/npm), and its command run as Claude
Desktop runs it, through the official MCP client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters

from paperanchor import __version__, operations
from paperanchor.settings import Settings
from tests.conftest import ROOT
from tests.packaging.conftest import UV, tools_and_a_read

MCPB = ROOT / "build" / "npm" / "node_modules" / ".bin" / "mcpb"


def mcpb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The mcpb command line; `make test` installs it first (make build/npm/...)."""
    assert MCPB.exists(), f"make {MCPB.relative_to(ROOT)} installs the mcpb tool"
    return subprocess.run([str(MCPB), *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def bundle(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle's directory, as `make bundle` lays it out before packing it."""
    directory = tmp_path_factory.mktemp("bundle") / "paperanchor"
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_bundle.py"), str(wheel), str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return directory


def test_mcpb_validate_passes_the_manifest_and_refuses_one_without_a_command(
    bundle: Path, tmp_path: Path
) -> None:
    passed = mcpb("validate", str(bundle / "manifest.json"), cwd=tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "validation passes" in passed.stdout
    # the same check on a broken copy fails: the validator is not a formality
    broken = json.loads((bundle / "manifest.json").read_text())
    del broken["server"]["mcp_config"]["command"]
    (tmp_path / "manifest.json").write_text(json.dumps(broken))
    refused = mcpb("validate", str(tmp_path / "manifest.json"), cwd=tmp_path)
    assert refused.returncode != 0


def test_the_manifest_offers_the_tables_tools_and_sets_real_settings(bundle: Path) -> None:
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["version"] == __version__
    assert [tool["name"] for tool in manifest["tools"]] == [
        op.name for op in operations.listed("all")
    ]
    settings = {f"PAPERANCHOR_{name.upper()}" for name in Settings.model_fields}
    env = manifest["server"]["mcp_config"]["env"]
    assert env and set(env) <= settings
    for value in env.values():
        assert value.removeprefix("${user_config.").removesuffix("}") in manifest["user_config"]


def test_the_packed_bundle_holds_the_manifest_and_the_wheel(
    bundle: Path, wheel: Path, tmp_path: Path
) -> None:
    packed = tmp_path / "paperanchor.mcpb"
    result = mcpb("pack", str(bundle), str(packed), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    with zipfile.ZipFile(packed) as archive:
        assert sorted(archive.namelist()) == sorted(["manifest.json", wheel.name])
        assert archive.read(wheel.name) == wheel.read_bytes()


def _as_claude_desktop_runs_it(
    manifest: dict[str, Any], directory: Path, config: dict[str, str]
) -> tuple[str, list[str], dict[str, str]]:
    """The manifest's command with `${__dirname}` and `${user_config.*}` filled in."""

    def fill(text: str) -> str:
        text = text.replace("${__dirname}", str(directory))
        for key, option in manifest["user_config"].items():
            text = text.replace(f"${{user_config.{key}}}", config.get(key, option["default"]))
        return text

    server = manifest["server"]["mcp_config"]
    env = {name: fill(value) for name, value in server["env"].items()}
    return server["command"], [fill(arg) for arg in server["args"]], env


def test_the_bundles_command_serves_the_tools_over_stdio(bundle: Path, tmp_path: Path) -> None:
    unpacked = tmp_path / "unpacked"
    shutil.copytree(bundle, unpacked)  # as Claude Desktop unpacks it: elsewhere than the checkout
    papers = tmp_path / "papers"
    shutil.copytree(ROOT / "fixtures" / "html", papers)
    manifest = json.loads((unpacked / "manifest.json").read_text())
    command, args, env = _as_claude_desktop_runs_it(manifest, unpacked, {"local_dir": str(papers)})
    assert command == "uvx"
    keep = {"PATH", "HOME", "LANG", "TMPDIR", "SSL_CERT_FILE"}
    full_env = {name: value for name, value in os.environ.items() if name in keep}
    full_env.update(env, PATH=f"{UV.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    full_env["PAPERANCHOR_OFFLINE"] = "1"  # the test's own: no upstream is reached
    full_env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    stdio = StdioServerParameters(command=command, args=args, env=full_env, cwd=str(tmp_path))

    names, text = tools_and_a_read(stdio)
    assert names == [operation.name for operation in operations.listed("reader")]
    assert text.startswith("# 3 Conclusion")
