"""The command line never hands a paper's control characters to the terminal (issue 21, #4):
clear screen, window title, OSC 52 clipboard, OSC 8 links, concealed text, C1 controls and
bidi overrides in a paper (raw and as character references) and in an error detail come out
as visible `\\uXXXX` escapes on stdout and stderr; `--json` is the same JSON, still valid."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paperanchor.terminal import VISIBLE
from tests.conftest import ROOT

SEQUENCES = [
    "\x1b[2J\x1b[H",  # clear the screen
    "\x1b]0;pwned\x07",  # window title
    "\x1b]52;c;ZWNobyBwd25lZA==\x07",  # clipboard write
    "\x1b]8;;https://evil.example/\x1b\\innocent\x1b]8;;\x1b\\",  # hidden link
    "\x1b[8mconcealed\x1b[0m",
    "\x9b31m",  # C1 CSI
    "\u202egnp.exe",  # right-to-left override
    "\r\x08\x7f",
]
REFERENCES = ["&#x1b;[2J", "&#27;]0;title&#7;", "&#x202e;txt", "&#x9b;1m"]
ANSWER_S = 30.0


def _page() -> str:
    words = " and ".join([*SEQUENCES, *REFERENCES])
    return (
        "<html><head><meta charset='utf-8'></head><body><article class='ltx_document'>"
        f"<h1 class='ltx_title ltx_title_document'>Title {SEQUENCES[1]} here</h1>"
        "<section class='ltx_section' id='S1'><h2 class='ltx_title'>1 Controls</h2>"
        f"<div class='ltx_para' id='S1.p1'><p class='ltx_p'>Quotable start {words} end.</p>"
        "</div></section></article></body></html>"
    )


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "paperanchor.cli", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        env={**os.environ, "PAPERANCHOR_OFFLINE": "1"},
        timeout=120,
    )
    assert time.perf_counter() - started < ANSWER_S
    return result


def _assert_visible_only(text: str) -> None:
    bad = sorted({f"U+{ord(ch):04X}" for ch in text if ord(ch) in VISIBLE})
    assert not bad, bad


@pytest.fixture(scope="module")
def paper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("terminal") / "controls.html"
    path.write_text(_page(), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "args",
    [
        ("outline", "{p}"),
        ("read", "{p}"),
        ("read", "{p}", "S1"),
        ("cite", "{p}", "S1.p1"),
        ("cite", "{p}", "--text", "Quotable start"),
        ("search", "{p}", "concealed"),
        ("read", "{p}", "S1\u202e\x1b]0;x\x07"),  # the error detail repeats the anchor
    ],
)
def test_the_terminal_gets_visible_escapes_on_stdout_and_stderr(
    paper: Path, args: tuple[str, ...]
) -> None:
    result = _cli(*(a.replace("{p}", str(paper)) for a in args))
    _assert_visible_only(result.stdout)
    _assert_visible_only(result.stderr)
    assert result.stdout or result.stderr
    shown = result.stdout + result.stderr
    assert "\\u001b" in shown or "\\u202e" in shown, shown[:300]


@pytest.mark.parametrize("command", ["outline", "read", "cite"])
def test_json_output_is_the_same_json_with_the_controls_escaped(paper: Path, command: str) -> None:
    args = [command, str(paper), *(["S1.p1"] if command == "cite" else []), "--json"]
    result = _cli(*args)
    _assert_visible_only(result.stdout)
    text = " ".join(_strings(json.loads(result.stdout)))
    # the paper's characters are all there once decoded: only their spelling changed
    assert "\x1b]0;pwned\x07" in text, text[:300]  # the title
    assert command == "outline" or "\u202egnp.exe" in text, text[:300]  # the paragraph


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []
