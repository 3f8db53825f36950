"""`make fixtures` compiles the committed fixture PDFs again byte for byte (pdflatex)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT, require_program


def test_the_fixture_pdf_build_reproduces_the_committed_pdfs(tmp_path: Path) -> None:
    require_program(
        shutil.which("pdflatex") is not None,
        "pdflatex (apt-get install texlive-latex-base texlive-latex-recommended) is needed",
    )
    classes = subprocess.run(
        ["kpsewhich", "revtex4-2.cls", "IEEEtran.cls"], capture_output=True, text=True
    )
    require_program(
        len(classes.stdout.split()) == 2,
        "revtex4-2.cls and IEEEtran.cls (apt-get install texlive-publishers) are needed",
    )
    env = {**os.environ, "FIXTURE_PDFS_OUT": str(tmp_path)}
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "build-fixture-pdfs.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    committed = ROOT / "fixtures" / "pdf"
    built = sorted(p.name for p in tmp_path.glob("*.pdf"))
    assert built == sorted(p.name for p in committed.glob("*.pdf"))
    changed = [
        name for name in built if (tmp_path / name).read_bytes() != (committed / name).read_bytes()
    ]
    assert not changed, f"rebuilt fixture PDFs differ: {changed}; run `make fixtures`"
