"""The docs stand alone: no pointer outside the repository, and the generated tables (settings,
operations, shapes, errors) are those the code makes now."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

from paperanchor.cli import _parser
from paperanchor.settings import Settings
from tests.conftest import ROOT

OUTSIDE = re.compile(r"\bSPEC\b|\.\./shared")
"""The contract file and the shared folder beside the checkout, which the project does not ship."""

PACKAGE = ROOT / "src" / "paperanchor"


def _package_strings(path: Path) -> list[tuple[int, str]]:
    """Every string literal of a module (docstrings and f-string parts too), with its line."""
    kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    source = io.StringIO(path.read_text(encoding="utf-8")).readline
    return [(t.start[0], t.string) for t in tokenize.generate_tokens(source) if t.type in kinds]


def test_readme_docs_help_and_package_strings_point_at_nothing_outside_the_repository() -> None:
    found: list[str] = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{page.relative_to(ROOT)}:{number}: {line.strip()}")
    parser, commands = _parser()
    for name, command in {"paperanchor": parser, **commands}.items():
        if OUTSIDE.search(command.format_help()):
            found.append(f"{name} --help")
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix == ".py":
            found += [
                f"{path.relative_to(ROOT)}:{number}: {text[:80]}"
                for number, text in _package_strings(path)
                if OUTSIDE.search(text)
            ]
        elif path.suffix in {".html", ".json"} and OUTSIDE.search(path.read_text("utf-8")):
            found.append(str(path.relative_to(ROOT)))
    assert found == []


def test_the_check_finds_a_pointer_in_a_string_and_not_in_a_longer_word(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('_TEX_SPECIAL = 1\nx = f"see SPEC §4 {_TEX_SPECIAL}"\n', encoding="utf-8")
    assert [text for _, text in _package_strings(module) if OUTSIDE.search(text)] != []
    module.write_text('_TEX_SPECIAL = "a"\n', encoding="utf-8")
    assert [text for _, text in _package_strings(module) if OUTSIDE.search(text)] == []


def _readme_settings_rows() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("<!-- generated: settings by scripts/docs_tables.py -->\n")[1]
    table = table.split("<!-- end: settings -->")[0]
    return [row for row in table.splitlines() if row.startswith("| `PAPERANCHOR_")]


def test_every_setting_has_a_row_of_the_readme_table_with_its_default() -> None:
    rows = {row.split("`")[1]: row for row in _readme_settings_rows()}
    for name, field in Settings.model_fields.items():
        variable = f"PAPERANCHOR_{name.upper()}"
        assert variable in rows, f"{variable} is missing from README's table of settings"
        assert field.description and " ".join(field.description.split()) in rows[variable]
    assert "PAPERANCHOR_ARXIV_API_GAP_S" in rows and "PAPERANCHOR_S2_GAP_S" in rows
    assert len(rows) == len(Settings.model_fields)


def test_the_generated_tables_are_the_ones_the_code_makes_now() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "docs_tables.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
