"""scripts/ensure-tools.sh decides what `make test` installs from what is on PATH: run with
`--dry-run` and `--command` on a PATH made by the test, so nothing is installed or removed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "ensure-tools.sh"
EVERY_PROGRAM = [
    "make",
    "redis-server",
    "chromium",
    "latexmlc",
    "pdflatex",
    "bibtex",
    "pdftotext",
    "npx",
]


def machine(tmp_path: Path, *, programs: list[str], uid: int = 0, apt: bool = True) -> Path:
    """A bin folder holding `programs` (each does nothing), an `id` that answers `uid`, the real
    python3 (its venv module decides python3-venv), and apt-get when `apt`."""
    folder = tmp_path / f"bin-{uid}-{apt}-{len(programs)}"
    folder.mkdir()
    for name in programs + (["apt-get"] if apt else []):
        (folder / name).symlink_to(shutil.which("true") or "/bin/true")
    (folder / "python3").symlink_to(sys.executable)
    fake_id = folder / "id"
    fake_id.write_text(f"#!/bin/sh\necho {uid}\n")
    fake_id.chmod(0o755)
    return folder


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/bash", str(SCRIPT), *args],
        env={"PATH": str(folder)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def without(*missing: str) -> list[str]:
    return [name for name in EVERY_PROGRAM if name not in missing]


def test_nothing_is_done_or_said_when_every_program_is_there(tmp_path):
    result = run(machine(tmp_path, programs=EVERY_PROGRAM), "--dry-run")

    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize(
    ("missing", "packages"),
    [
        (["redis-server"], "redis-server"),
        (["npx"], "nodejs npm"),
        (["chromium", "latexmlc"], "chromium latexml"),
        (
            ["pdflatex", "bibtex", "pdftotext"],
            # without TeX, REVTeX and IEEEtran come in the same install
            "texlive-latex-base texlive-latex-recommended texlive-fonts-recommended "
            "texlive-bibtex-extra poppler-utils texlive-publishers",
        ),
        (["make", "redis-server", "npx"], "make redis-server nodejs npm"),
        (
            ["pdflatex"],
            "texlive-latex-base texlive-latex-recommended texlive-fonts-recommended "
            "texlive-publishers",
        ),
    ],
)
def test_as_root_on_debian_only_the_missing_programs_packages_are_installed(
    tmp_path, missing, packages
):
    folder = machine(tmp_path, programs=without(*missing))

    dry = run(folder, "--dry-run")
    command = run(folder, "--command")

    assert dry.returncode == 0
    assert dry.stdout == f"would run: apt-get update -qq && apt-get install -y -qq {packages}\n"
    assert command.stdout == f"apt-get install -y {packages}\n"


def test_debians_other_name_for_chromium_counts(tmp_path):
    folder = machine(tmp_path, programs=[*without("chromium"), "chromium-browser"])

    assert run(folder, "--dry-run").stdout == ""


def test_not_root_it_prints_the_one_command_and_lets_the_tests_skip(tmp_path):
    folder = machine(tmp_path, programs=without("redis-server", "pdftotext"), uid=1000)

    result = run(folder)  # not a dry run: there is nothing it may do

    assert result.returncode == 0 and result.stdout == ""
    assert "missing: redis-server pdftotext" in result.stderr
    assert "  run: sudo apt-get install -y redis-server poppler-utils\n" in result.stderr
    assert run(folder, "--command").stdout == "sudo apt-get install -y redis-server poppler-utils\n"


def test_without_apt_it_names_the_programs_and_the_debian_packages(tmp_path):
    folder = machine(tmp_path, programs=without("npx"), apt=False)

    command = run(folder, "--command").stdout

    assert command == (
        "install npx with this system's package manager (Debian: apt-get install -y nodejs npm)\n"
    )
