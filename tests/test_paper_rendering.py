"""A paper's view renders each section once and shares its chunks with its parents and the
whole paper: what it answers must be exactly what rendering each node afresh gives."""

from __future__ import annotations

import pytest

from paperanchor import service
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.render.markdown import document_chunks, join, node_chunks, tokens_of
from paperanchor.tree import Document, Inline, Section, Text, walk
from tests.corpus_pages import ALL_PAGES, parsed


def _view(name: str) -> service.Paper:
    return service.Paper.open(LoadedPaper(parsed(name), f"local/{name}", f"local/{name}"))


@pytest.mark.parametrize("name", ALL_PAGES)
def test_every_nodes_markdown_and_tokens_equal_a_fresh_rendering_of_it(name: str) -> None:
    document = parsed(name)
    view = _view(name)
    outline = service.outline(view)  # renders every section through the shared chunks first
    assert outline["tokens"] == tokens_of(join(document_chunks(document)))
    assert view.markdown() == join(document_chunks(document))
    for located in view.index.nodes.values():
        node = located.node
        fresh = join(node_chunks(node, document))
        assert view.tokens(node.id) == tokens_of(fresh), node.id
        assert view.markdown(node.id) == fresh, node.id


def test_the_outline_counts_tokens_without_keeping_any_sections_markdown() -> None:
    view = _view("html/2501.11120v1.arxiv.html")
    outline = service.outline(view)
    sections = [v.node for v in walk(view.document.roots()) if isinstance(v.node, Section)]
    assert len(sections) > 10 and outline["sections"]
    assert view._markdown == {}  # only a read joins and keeps a node's Markdown
    first = outline["sections"][0]["id"]
    service.read(view, first)
    assert list(view._markdown) == [first]


def test_a_section_is_rendered_once_however_deep_it_sits() -> None:
    view = _view("html/2501.11120v1.arxiv.html")
    service.outline(view)
    sections = [v.node for v in walk(view.document.roots()) if isinstance(v.node, Section)]
    # one entry per section, and a parent's chunk list holds its children's very strings
    assert len(view._sections) == len(sections)
    for section in sections:
        for child in section.children:
            child_first = view._sections[child.id][1][0]  # the child's heading
            assert any(chunk is child_first for chunk in view._sections[section.id][1])


def test_two_sections_a_hostile_page_gave_one_id_each_render_their_own_text() -> None:
    def section(words: str) -> Section:
        text = Text("S1.p1", Inline(words, words))
        return Section("S1", "section", "1", "1", Inline("Twice", "Twice"), 1, (text,))

    document = Document(Inline("T", "T"), (), None, None, (section("first"), section("second")))
    markdown = Paper.open(LoadedPaper(document, "local/x", "local/x")).markdown()
    assert "first" in markdown and "second" in markdown


def test_a_marked_read_counts_its_nodes_tokens_once_and_says_the_count_of_what_it_sends() -> None:
    view = _view("html/2501.11120v1.arxiv.html")
    first = service.read(view, "S2", anchors=True)
    assert first.tokens == tokens_of(first.markdown) == tokens_of(view.markdown("S2", anchors=True))
    assert list(view._anchored_tokens) == ["S2"]  # kept: the next read of S2 counts nothing
    view._anchored_tokens["S2"] = -1  # what a second read says is the kept count
    assert service.read(view, "S2", anchors=True).tokens == -1
