"""Real bibtex and pdflatex on a .bib in a temporary folder: errors, warnings, the PDF's text."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

RUN_TIMEOUT_S = 300
_ERROR = re.compile(r"^! ", re.MULTILINE)
_LATEX_WARNING = re.compile(r"^(?:LaTeX|Package \S+|Class \S+) Warning", re.MULTILINE)
_BOX = re.compile(r"^(?:Over|Under)full \\[hv]box", re.MULTILINE)
_BIBTEX_ERRORS = re.compile(r"\(There (?:was|were) (\d+) error messages?\)")
_BIBTEX_WARNING = re.compile(r"^Warning--(.*)$", re.MULTILINE)


def available() -> bool:
    return all(shutil.which(tool) for tool in ("bibtex", "pdflatex", "pdftotext"))


@dataclass
class Compiled:
    """What one bibtex + pdflatex run of a .bib gave."""

    entries: int
    bibtex_errors: int
    bibtex_warnings: list[str]
    latex_errors: list[str]
    latex_warnings: list[str]
    boxes: int
    seconds: float
    text: str
    folder: Path
    logs: dict[str, str] = field(default_factory=dict)


def compile_bib(
    bib: str,
    keys: list[str],
    folder: Path,
    *,
    style: str = "plain",
    packages: tuple[str, ...] = (),
    shell_escape: bool = False,
) -> Compiled:
    """Cite every key of `bib` in a one-page article and build it: pdflatex, bibtex, pdflatex x2."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "refs.bib").write_text(bib, encoding="ascii")
    uses = "".join(f"\\usepackage{{{package}}}\n" for package in packages)
    (folder / "doc.tex").write_text(
        "\\documentclass{article}\n"
        + uses
        + "\\begin{document}\n\\sloppy\n"
        + "Cited: \\cite{"
        + ",".join(keys)
        + "}.\n\\bibliographystyle{"
        + style
        + "}\n\\bibliography{refs}\n\\end{document}\n",
        encoding="ascii",
    )
    env = {**os.environ, "openout_any": "p", "openin_any": "p"}
    flag = "-shell-escape" if shell_escape else "-no-shell-escape"
    latex = ["pdflatex", "-interaction=nonstopmode", flag, "doc.tex"]
    started = time.monotonic()
    logs: dict[str, str] = {}
    for step, command in enumerate((latex, ["bibtex", "doc"], latex, latex)):
        done = subprocess.run(
            command, cwd=folder, env=env, capture_output=True, timeout=RUN_TIMEOUT_S, check=False
        )
        logs[f"{step}-{command[0]}"] = done.stdout.decode("latin-1")
    seconds = time.monotonic() - started
    log = (folder / "doc.log").read_text("latin-1")
    blg = (folder / "doc.blg").read_text("latin-1")
    bibtex_errors = sum(int(n) for n in _BIBTEX_ERRORS.findall(blg))
    text = ""
    if (folder / "doc.pdf").exists():
        done = subprocess.run(
            ["pdftotext", "-layout", "doc.pdf", "-"],
            cwd=folder,
            capture_output=True,
            timeout=RUN_TIMEOUT_S,
            check=True,
        )
        text = done.stdout.decode("utf-8", "replace")
    return Compiled(
        entries=len(keys),
        bibtex_errors=bibtex_errors,
        bibtex_warnings=_BIBTEX_WARNING.findall(blg),
        latex_errors=[line for line in log.splitlines() if _ERROR.match(line)],
        latex_warnings=[m.group() for m in _LATEX_WARNING.finditer(log)],
        boxes=len(_BOX.findall(log)),
        seconds=seconds,
        text=text,
        folder=folder,
        logs={**logs, "log": log, "blg": blg},
    )


def joined(text: str) -> str:
    """The PDF's text with hyphenation at line ends undone and whitespace squashed."""
    return " ".join(re.sub(r"-\n\s*", "-", text).split())
