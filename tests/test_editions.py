"""Editions (contract §10): naming one, and aligning two (editions.py)."""

from __future__ import annotations

import asyncio
import os
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from paperanchor import editions
from paperanchor.errors import BadRequest
from paperanchor.parse import parse_document
from paperanchor.refs import parse_ref
from paperanchor.runtime import Runtime
from paperanchor.tree import Document, Inline, Paragraph, Section, Text
from tests.replay import page

PAIRS = Path(os.environ.get("PAPERANCHOR_CORPUS", "../shared/corpus")) / "pairs"


def _pair(stem: str, version: str) -> tuple[object, object]:
    old = parse_document((PAIRS / f"{stem}.ar5iv.html").read_bytes(), "")
    new = parse_document((PAIRS / f"{stem}{version}.arxiv.html").read_bytes(), "")
    return old, new


def test_an_edition_is_named_by_a_version_a_source_or_a_reference_of_the_same_paper() -> None:
    paper = parse_ref("2401.10225v2")
    assert editions.edition_of(paper, "v1") == (parse_ref("2401.10225v1"), None)
    assert editions.edition_of(paper, "ar5iv") == (paper, "ar5iv")
    assert editions.edition_of(paper, "PDF") == (paper, "pdf")
    assert editions.edition_of(paper, "https://ar5iv.org/abs/2401.10225")[1] == "ar5iv"
    assert editions.edition_of(paper, "local/draft") == (parse_ref("local/draft"), None)
    with pytest.raises(BadRequest, match="another paper"):
        editions.edition_of(paper, "1706.03762v1")


def test_paragraphs_with_the_same_text_under_another_id_are_matched_as_moved() -> None:
    old, new = _pair("2401.10225", "v1")
    alignment = editions.align_documents(old, new)  # type: ignore[arg-type]
    olds = {u.id: u for u in editions.block_units(old)}  # type: ignore[arg-type]
    news = {u.id: u for u in editions.block_units(new)}  # type: ignore[arg-type]
    moved = [p for p in alignment.blocks if p.status == "moved"]
    assert len(moved) >= 20
    for pair in moved:
        assert pair.old is not None and pair.new is not None and pair.old != pair.new
        assert olds[pair.old].text == news[pair.new].text
        assert alignment.of_old(pair.old) is pair and alignment.of_new(pair.new) is pair


def test_a_rewritten_paragraph_is_matched_as_edited_and_sections_follow_their_blocks() -> None:
    old, new = _pair("2310.08754", "v4")
    alignment = editions.align_documents(old, new)  # type: ignore[arg-type]
    olds = {u.id: u for u in editions.block_units(old)}  # type: ignore[arg-type]
    news = {u.id: u for u in editions.block_units(new)}  # type: ignore[arg-type]
    edited = [p for p in alignment.blocks if p.status == "edited"]
    assert edited
    for pair in edited:
        assert pair.old is not None and pair.new is not None
        assert olds[pair.old].text != news[pair.new].text
        assert 0 < pair.confidence <= 1
    statuses = {p.status for p in alignment.sections}
    assert "same" in statuses


def _script_pair(replay: Any, stem: str, version: str) -> None:
    replay.script(
        f"/html/{stem}{version}", page((PAIRS / f"{stem}{version}.arxiv.html").read_bytes())
    )
    replay.script(f"/ar5iv/html/{stem}", page((PAIRS / f"{stem}.ar5iv.html").read_bytes()))


def test_an_ar5iv_edition_is_fetched_from_ar5iv_only_cached_and_aligned_once(
    replay: Any, tmp_path: Path
) -> None:
    _script_pair(replay, "2401.10225", "v1")
    asyncio.run(_fetch_twice(replay, tmp_path))


async def _fetch_twice(replay: Any, tmp_path: Path) -> None:
    async with Runtime.build(replay.settings(tmp_path)) as runtime:
        svc = runtime.service
        new = await svc.paper("2401.10225v1")
        assert new.meta.source == "arxiv"
        asked = replay.count()
        old = await svc.edition("2401.10225v1", "ar5iv")
        assert old.meta.source == "ar5iv"
        assert replay.paths()[asked:] == ["/ar5iv/html/2401.10225"]
        again = await svc.edition("2401.10225v1", "ar5iv")
        assert again is old and replay.count() == asked + 1
        _new, _old, first, _ref = await svc.aligned("2401.10225v1", "ar5iv")
        _new, _old, second, _ref = await svc.aligned("2401.10225v1", "ar5iv")
        assert first is second and first.blocks
    # a fresh library reads the edition from the cache, asking no source
    async with Runtime.build(replay.settings(tmp_path)) as runtime:
        cached = await runtime.service.edition("2401.10225v1", "ar5iv")
        assert cached.meta.source == "ar5iv" and replay.count() == asked + 1


def _document(texts: list[str]) -> Document:
    """A page of these paragraphs, a hundred to a section."""
    sections = []
    for first in range(0, len(texts), 100):
        section_id = f"S{first // 100 + 1}"
        paragraphs = tuple(
            Paragraph(f"{section_id}.p{n + 1}", (Text(f"{section_id}.p{n + 1}.1", Inline(t, t)),))
            for n, t in enumerate(texts[first : first + 100])
        )
        sections.append(Section(section_id, "section", None, "", Inline("", ""), 1, paragraphs))
    return Document(Inline("t", "t"), (), None, None, tuple(sections))


def test_two_pages_of_50000_identical_paragraphs_align_in_linear_time() -> None:
    same = _document(["the same paragraph of text, over and over again"] * 50_000)
    started = time.perf_counter()
    alignment = editions.align_documents(same, same)
    elapsed = time.perf_counter() - started
    assert {pair.status for pair in alignment.blocks} == {"same"}
    assert len(alignment.blocks) == 50_000
    assert elapsed < 30  # 4-5 s on this machine (50,000 near-identical ones: 4.3 s)


def test_near_identical_paragraphs_cost_bounded_comparisons_and_memory() -> None:
    # every paragraph near every other: the fuzzy comparisons stop at MAX_COMPARISONS
    old = _document(
        [f"the same paragraph of text over and over again number {n}" for n in range(5000)]
    )
    new = _document(
        [f"the same paragraph of text over and over again numbr {n + 7}" for n in range(5000)]
    )
    tracemalloc.start()
    started = time.perf_counter()
    try:
        alignment = editions.align_documents(old, new)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - started
    assert len({p.old for p in alignment.blocks if p.old}) == 5000
    assert elapsed < 20
    assert peak < 64 << 20  # 24 MB measured: the units' texts and words, the pairs


def test_every_block_of_the_constructed_pairs_is_re_anchored_as_their_truth_says() -> None:
    from bench.anchor_truth import constructed

    from paperanchor import service
    from paperanchor.errors import NotFound
    from paperanchor.paper import LoadedPaper, Paper

    def opened(document: Document, name: str) -> Paper:
        return Paper.open(LoadedPaper(document, f"local/{name}", f"local/{name}"))

    checked = 0
    for case in constructed():
        old, new = opened(case.old, "old"), opened(case.new, "new")
        for a, b, targets in ((old, new, case.forward), (new, old, case.backward)):
            alignment = editions.align(a, b)
            for target in targets:
                try:
                    cited = service.reanchor(b, a, alignment, target.anchor, "")
                except NotFound:
                    assert target.status == "deleted", (case.name, target)
                    continue
                assert cited["anchor"] in target.truth, (case.name, target, cited["anchor"])
                assert cited["status"] == target.status, (case.name, target)
                checked += 1
    assert checked > 700


def _titled(sections: list[tuple[str, list[str]]]) -> Document:
    built = []
    for k, (title, texts) in enumerate(sections, start=1):
        paragraphs = tuple(
            Paragraph(f"S{k}.p{n}", (Text(f"S{k}.p{n}.1", Inline(t, t)),))
            for n, t in enumerate(texts, start=1)
        )
        built.append(Section(f"S{k}", "section", str(k), "", Inline(title, title), 1, paragraphs))
    return Document(Inline("t", "t"), (), None, None, tuple(built))


def test_a_sections_last_unmatched_paragraph_is_its_old_one_revised() -> None:
    # 0.62 alike, below a near match's 0.72, and the section moved before the paragraph that
    # anchors it: no matched neighbour vouches for it, the section's title does
    revised = (
        "Analyzing the vocabulary size revealed that in the English setting the medium "
        "vocabulary performs better (Table 5), whereas larger ones help every other language."
    )
    before = (
        "Analyzing the impact of the vocabulary size revealed that smaller vocabularies perform "
        "better for English (Table 3) while multilingual models gain from larger ones."
    )
    unrelated = "Compute budgets were fixed per model, and every run used the same random seed."
    stays = "An opening paragraph that stays as it was."
    old = _titled([("Results", [stays]), ("Vocabulary", [before])])
    new = _titled([("Vocabulary", [revised]), ("Results", [stays])])
    pair = editions.align_documents(old, new).of_old("S2.p1")
    assert pair is not None and pair.new == "S1.p1" and pair.status == "edited"
    # a paragraph replaced by an unrelated one is gone, not revised
    other = _titled([("Vocabulary", [unrelated]), ("Results", [stays])])
    pair = editions.align_documents(old, other).of_old("S2.p1")
    assert pair is not None and pair.status == "removed"
