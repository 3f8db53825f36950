"""CriticMarkup of two editions (contract §10): read back by a CriticMarkup reader, the marks give
both editions' Markdown exactly, the paper's own text never makes a mark, and a hostile pair of
huge paragraphs costs bounded time and memory."""

from __future__ import annotations

import itertools
import json
import random
import re
import subprocess
import sys
import time

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from paperanchor.paper import LoadedPaper, Paper
from paperanchor.render import critic
from paperanchor.render.escape import escape_text, math_markdown
from paperanchor.search import units
from paperanchor.tree import Paragraph, walk
from tests.corpus_pages import PAIR_PAGES, parsed
from tests.render.critic_reader import marks, sides

# The marks of CriticMarkup, as a paper may write them in its text and its TeX.
HOSTILE = [
    "{++", "++}", "{--", "--}", "{~~", "~~}", "~>", "{==x==}", "{>>note<<}", "C{++}",
    "a ~> b", "{~~a~>b~~}", "\\{++", "\\\\{++", "++}}", "{{++", "x{", "}", "{+", "+}",
    "~~", "{++x++}{--y--}", "\\", "-->", "<!--", "++}\\",
]  # fmt: skip
HOSTILE_TEX = ["a^{++}", "x_{--}", "\\{++\\}", "a~>b", "\\\\{--", "{~~}", "b~~}"]
CORPUS_PAGES = PAIR_PAGES


def _escaped_text(text: str) -> str:
    return critic.escape(escape_text(text))


def test_the_papers_own_text_never_makes_a_criticmarkup_mark() -> None:
    for text in HOSTILE:
        assert marks(_escaped_text(text)) == 0, text
        assert marks(_escaped_text(f"word {text} word")) == 0, text
    for tex in HOSTILE_TEX:
        assert marks(critic.escape(f"${math_markdown(tex)}$")) == 0, tex
        assert marks(critic.escape(f"$${math_markdown(tex)}$$")) == 0, tex
        assert marks(critic.escape(f"`{tex}`")) == 0, tex


RENDERER = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin)


def _shown(markdown: str) -> str:
    # what a reader sees: the rendered text, math with TeX's insignificant spaces dropped
    html = RENDERER.render(markdown)
    return re.sub(r"\s+", "", re.sub(r"<[^>]+>", "", html))


def test_escaping_the_marks_changes_nothing_a_commonmark_renderer_or_tex_shows() -> None:
    for text in HOSTILE:
        markdown = escape_text(f"the {text} text")
        assert _shown(critic.escape(markdown)) == _shown(markdown), text
    for tex in HOSTILE_TEX:
        markdown = f"so ${math_markdown(tex)}$ holds"
        assert _shown(critic.escape(markdown)) == _shown(markdown), tex


def _check(old: str, new: str) -> str:
    marked = critic.chunk(old, new)
    assert sides(marked) == (old, new), marked
    return marked


def test_an_edited_sentence_is_marked_at_word_level() -> None:
    marked = _check("The BLEU score is 41.8 on WMT.", "The BLEU score is 41.0 on the WMT test.")
    assert marked == "The BLEU score is {~~41.8~>41.0~~} on {++the ++}WMT{++ test++}."


def test_hostile_words_inserted_deleted_and_substituted_read_back_exactly() -> None:
    for text in HOSTILE:
        hostile = _escaped_text(text)
        plain = _escaped_text("a plain sentence of words")
        _check(plain, _escaped_text(f"a plain {text} sentence of words"))
        _check(_escaped_text(f"a plain {text} sentence of words"), plain)
        _check(hostile, _escaped_text("other"))
        _check(_escaped_text(f"{text}{text}"), hostile)
        _check(_escaped_text(f"x{text}"), _escaped_text(f"{text}x"))
    for tex in HOSTILE_TEX:
        _check(critic.escape(f"so ${math_markdown(tex)}$ holds"), "so $x$ holds")
        _check("so $x$ holds", critic.escape(f"so ${math_markdown(tex)}$ holds"))


def _paragraph_markdown(name: str) -> list[str]:
    paper = Paper.open(LoadedPaper(parsed(name), "local/x", "local/x"))
    found = [
        paper.markdown(v.node.id).strip()
        for v in walk(paper.document.roots())
        if isinstance(v.node, Paragraph)
    ]
    return [text for text in found if text]


WORDS = ["the", "model", "41.8", "$x^{++}$", "\\*", "{++", "~>", "&lt;", "--}", "[12]", "\n"]


def _edited(markdown: str, rng: random.Random) -> str:
    """A scripted edit of Markdown: words inserted, deleted, replaced and numbers changed."""
    tokens = critic.tokens(markdown)
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(tokens) + 1)
        action = rng.choice(["insert", "delete", "replace", "number"])
        if action == "insert":
            tokens.insert(at, rng.choice([" ", ""]) + rng.choice(WORDS))
        elif action == "delete" and tokens:
            del tokens[min(at, len(tokens) - 1) : at + rng.randint(1, 8)]
        elif action == "replace" and tokens:
            tokens[min(at, len(tokens) - 1)] = rng.choice(WORDS)
        else:
            tokens.insert(at, f" {rng.randint(0, 99)}.{rng.randint(0, 9)}")
    return "".join(tokens)


@pytest.mark.parametrize("name", CORPUS_PAGES)
def test_generated_edits_of_corpus_paragraphs_read_back_as_both_editions(name: str) -> None:
    rng = random.Random(name)
    paragraphs = _paragraph_markdown(name)
    assert len(paragraphs) > 10
    marked_words = 0
    for markdown in paragraphs:
        old = critic.escape(markdown)
        new = critic.escape(_edited(markdown, rng))
        marked = _check(old, new)
        marked_words += marks(marked)
        # the other way round, and against the neighbouring paragraph (unrelated text)
        _check(new, old)
    for first, second in itertools.pairwise(paragraphs):
        _check(critic.escape(first), critic.escape(second))
    assert marked_words > len(paragraphs)


def test_a_changed_number_in_a_paragraph_is_found_with_its_old_and_new_value() -> None:
    found = critic.numbers(
        "Our model reaches 41.8 BLEU on WMT 2014, 2.0 above the baseline.",
        "Our model reaches 41.0 BLEU on WMT 2014, 2.0 above the strong baseline.",
    )
    assert found == [critic.NumberChange("41.8", "41.0")]


def test_a_changed_table_cell_is_a_changed_number_and_an_added_one_is_not() -> None:
    assert critic.numbers("$41.8$", "$41.0$") == [critic.NumberChange("41.8", "41.0")]
    assert critic.numbers("BLEU | 41.8 | 28.4", "BLEU | 41.8 | 28.9") == [
        critic.NumberChange("28.4", "28.9")
    ]
    assert critic.numbers("we train 3 models", "we train 3 models in 12 hours") == []
    assert critic.numbers("same 1.5 text", "same 1.5 text") == []


def test_corpus_paragraphs_compared_with_themselves_show_no_change() -> None:
    document = parsed(CORPUS_PAGES[0])
    for unit in units(document):
        assert critic.numbers(unit.text, unit.text) == []
        escaped = critic.escape(unit.text)
        assert critic.chunk(escaped, escaped) == escaped


HUGE = """
import json, resource, sys, time
from paperanchor.render import critic
n = int(sys.argv[1])
old = " ".join(f"w{i}" for i in range(n))
new = " ".join(f"v{i % 7}" for i in range(n))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
marked = critic.chunk(old, critic.escape(new))
words = critic.words(old, new)
numbers = critic.numbers(old, new)
seconds = time.perf_counter() - start
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps({"seconds": seconds, "mb": grown, "marks": words.count("{~~")}))
"""


def test_two_huge_paragraphs_are_compared_in_bounded_time_and_memory() -> None:
    # 200,000 words a side: 4e10 token pairs, past MAX_CELLS, said as one substitution
    started = time.perf_counter()
    answer = subprocess.run(
        [sys.executable, "-c", HUGE, "200000"], capture_output=True, text=True, check=True
    )
    measured = json.loads(answer.stdout)
    assert measured["seconds"] < 6.0, measured  # 0.83 s on an idle machine; 2 shared cores
    assert measured["mb"] < 150, measured
    assert measured["marks"] == 1, measured
    assert time.perf_counter() - started < 20


@pytest.mark.parametrize("name", CORPUS_PAGES[:4])
def test_escaping_corpus_paragraphs_changes_nothing_a_renderer_shows(name: str) -> None:
    for markdown in _paragraph_markdown(name):
        escaped = critic.escape(markdown)
        assert _shown(escaped) == _shown(markdown)
        assert marks(escaped) == 0
