"""The outline an agent receives (contract §11): every section's id, number, title and tokens, at
most 40% of the JSON on papers of more than 50 sections, and `depth`."""

from __future__ import annotations

import json

import pytest

from paperanchor import service
from paperanchor.compact import at_depth, compact
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.tokens import count
from tests.corpus_pages import PAPER_PAGES, parsed

LARGE = 50  # sections: contract §11's "large papers"
SHARE = 0.40


def _outline(name: str) -> service.shapes.Outline:
    return service.outline(Paper.open(LoadedPaper(parsed(name), "2501.11120", "2501.11120v1")))


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _sections(sections: list) -> list:
    return [s for section in sections for s in (section, *_sections(section["children"]))]


@pytest.mark.parametrize("name", PAPER_PAGES)
def test_the_compact_outline_keeps_every_section_in_a_fraction_of_the_json(name: str) -> None:
    outline = _outline(name)
    small = compact(outline)
    every = _sections(outline["sections"])
    assert len(small["sections"]) == len(every)
    for line, section in zip(small["sections"], every, strict=True):
        number = f" {section['number']}" if section["number"] else ""
        assert line.startswith(f"{section['tokens']} {section['id']}{number} {section['title']}")
    assert small["title"] == outline["title"] and small["tokens"] == outline["tokens"]
    if len(every) > LARGE:
        assert count(_dumps(small)) <= SHARE * count(_dumps(outline)), name


def test_empty_and_default_fields_are_left_out_and_the_rest_kept() -> None:
    outline = _outline("html/1808.08002.ar5iv.html")
    small = compact(outline)
    assert "license" not in small and "metadata" not in small and "quality" not in small
    assert "inferred" not in small and "errors" not in small["counts"]
    assert small["abstract"] == outline["abstract"] and small["authors"] == outline["authors"]
    pending = compact({**outline, "inferred": "pending", "tldr": None, "quality": "degraded"})
    assert pending["inferred"] == "pending" and pending["quality"] == "degraded"
    assert "tldr" not in pending


def test_a_depth_keeps_that_many_levels_whose_tokens_count_those_below() -> None:
    outline = _outline("html/2501.11120v1.arxiv.html")
    top = at_depth(outline, 1)
    assert [s["id"] for s in top["sections"]] == [s["id"] for s in outline["sections"]]
    assert all(s["children"] == [] for s in top["sections"])
    assert [s["tokens"] for s in top["sections"]] == [s["tokens"] for s in outline["sections"]]
    two = _sections(at_depth(outline, 2)["sections"])
    assert len(top["sections"]) < len(two) < len(_sections(outline["sections"]))
    assert count(_dumps(compact(top))) < count(_dumps(compact(outline)))


def test_a_section_that_changed_since_another_edition_says_how_on_its_line() -> None:
    def section(node_id: str, **change: object) -> dict[str, object]:
        base = {"id": node_id, "number": "1", "title": "Intro", "tokens": 10, "errors": 0}
        return {**base, "children": [], **change}

    outline = {
        "sections": [
            section("S1", change="same", changed=0),
            section("S2", change="edited", changed=3),
            section("S3", change="added"),
            section("S4", change="moved", changed=1),
            section("S5"),
        ]
    }
    lines = compact(outline)["sections"]  # type: ignore[arg-type]

    assert lines == [
        "10 S1 1 Intro",
        "10 S2 1 Intro [edited 3]",
        "10 S3 1 Intro [added]",
        "10 S4 1 Intro [moved 1]",
        "10 S5 1 Intro",
    ]
