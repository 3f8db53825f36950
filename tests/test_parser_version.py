"""The parser version follows the parser: what it builds cannot change while it stays the same."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from paperanchor.parse import PARSER_VERSION
from paperanchor.parse.version import parser_modules, parser_version
from tests.golden import recorded_version, trees_digest

ROOT = Path(__file__).resolve().parent.parent


def test_the_golden_record_is_of_this_parser_version() -> None:
    recorded = recorded_version()
    assert recorded is not None and recorded[0] == PARSER_VERSION, (
        "the parser's code changed since fixtures/golden/parser-version.txt was written: "
        "run `make golden` and review the diff"
    )


def test_the_parsed_fixtures_change_only_with_the_parser_version() -> None:
    # contract §2: a test fails when golden output changes and the version does not.
    recorded = recorded_version()
    assert recorded is not None
    version, digest = recorded
    if version == PARSER_VERSION:
        assert trees_digest() == digest, (
            "the parsed fixtures changed but PARSER_VERSION did not: bump REVISION in "
            "src/paperanchor/parse/version.py, then run `make golden`"
        )


def test_the_version_digests_the_tree_every_parser_module_and_the_codec() -> None:
    names = set(parser_modules())
    parse_folder = ROOT / "src" / "paperanchor" / "parse"
    expected = {f"paperanchor.parse.{p.stem}" for p in parse_folder.glob("*.py")} - {
        "paperanchor.parse.__init__"
    }
    assert expected | {"paperanchor.parse", "paperanchor.tree", "paperanchor.codec"} <= names
    assert "paperanchor.errors" in names  # imported by the parser, so it counts too
    assert "paperanchor.service" not in names and "paperanchor.render.markdown" not in names


def _version_of_copy(tmp_path: Path, edit: str | None, module: str = "parse/inline.py") -> str:
    """PARSER_VERSION of a copy of the package with `edit` appended to one module."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "paperanchor", copy / "paperanchor")
    if edit is not None:
        path = copy / "paperanchor" / module
        path.write_text(path.read_text(encoding="utf-8") + edit, encoding="utf-8")
    script = "from paperanchor.parse.version import parser_version; print(parser_version())"
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(copy)},
        cwd=tmp_path,
    )
    return out.stdout.strip()


def test_a_change_of_code_changes_the_version_and_comments_do_not(tmp_path: Path) -> None:
    assert _version_of_copy(tmp_path / "same", None) == parser_version()
    assert _version_of_copy(tmp_path / "comment", "\n# a comment\n\n") == parser_version()
    assert _version_of_copy(tmp_path / "code", "\nX = 1\n") != parser_version()
    assert _version_of_copy(tmp_path / "tree", "\nY = 2\n", "tree.py") != parser_version()
    assert _version_of_copy(tmp_path / "codec", "\nZ = 3\n", "codec.py") != parser_version()
