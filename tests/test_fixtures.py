"""`make fixtures` reproduces the committed sample papers byte for byte."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT, require_program


def _files(folder: Path) -> dict[str, bytes]:
    # a dotfile is written by hand, not built: `.unlisted` (what the landing page leaves off)
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def test_the_fixture_build_reproduces_the_committed_html_and_images(tmp_path: Path) -> None:
    require_program(
        shutil.which("latexmlc") is not None,
        "latexmlc (apt-get install latexml) is needed to rebuild the fixtures",
    )
    out = tmp_path / "html"
    env = {**os.environ, "FIXTURES_OUT": str(out), "FIXTURES_LOGS": str(tmp_path / "logs")}
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "build-fixtures.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    built = _files(out)
    committed = _files(ROOT / "fixtures" / "html")
    assert set(built) == set(committed)
    changed = [name for name in built if built[name] != committed[name]]
    assert not changed, f"rebuilt fixtures differ: {changed}; run `make fixtures` and `make golden`"
