"""The recorded upstream answers of the shared corpus: arXiv API feeds and Semantic Scholar."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from tests.conftest import CORPUS

ATOM = CORPUS / "atom"
S2 = CORPUS / "s2"
TESTING_100 = "arxivpy_2026_q_testing_s0_m100_cfe7536492ca.xml"


def atom_names() -> list[str]:
    return sorted(path.name for path in ATOM.glob("*.xml")) if ATOM.is_dir() else []


@cache
def atom(name: str) -> bytes:
    return (ATOM / name).read_bytes()


def meta(path: Path) -> dict[str, Any] | None:
    """The `.meta.json` beside a recorded answer, when there is one."""
    found = path.with_name(path.name.rsplit(".", 1)[0] + ".meta.json")
    return json.loads(found.read_text()) if found.exists() else None


@cache
def s2(name: str) -> bytes:
    return (S2 / name).read_bytes()


def all_metadata() -> dict[str, Any]:
    """Every paper of every recorded feed, by bare id (the first feed that has it)."""
    return {paper: entries[0] for paper, entries in recorded_entries().items()}


def recorded_entries() -> dict[str, list[Any]]:
    """Every entry of every recorded feed, by bare id, in feed-name order (a paper may be
    in several feeds)."""
    from paperanchor.discovery.atom import parse_feed
    from paperanchor.errors import PaperAnchorError

    papers: dict[str, list[Any]] = {}
    for name in atom_names():
        try:
            feed = parse_feed(atom(name))
        except PaperAnchorError:
            continue  # the error feed
        for entry in feed.entries:
            papers.setdefault(entry["paper"], []).append(entry)
    return papers
