"""The .bib compiles: real bibtex and pdflatex on every recorded arXiv API entry.

`python -m tests.discovery.test_bibtex_compile` prints the compile table of docs/discovery.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from paperanchor.discovery.bibtex import papers_bibtex, references_bibtex
from tests.conftest import CORPUS, require_program
from tests.discovery import texrun
from tests.discovery.recorded import all_metadata

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("corpus")]

STYLES = {"plain": (), "plainnat": ("natbib", "url")}
_KEY = re.compile(r"^@misc\{([^,]+),", re.MULTILINE)
_MATH = re.compile(r"\$[^$]*\$")
_WORD = re.compile(r"[A-Za-z0-9]+")


def keys_of(bib: str) -> list[str]:
    return _KEY.findall(bib)


def compiled_papers() -> list[Any]:
    """Every paper of every recorded feed, and three derived from them (said so below)."""
    papers = all_metadata()
    extra = [
        # no two recorded papers share a key: this one takes 1912.04900's (Zhu 2019
        # Datamorphic), with 1912.09881's metadata under an id of its own
        {**papers["1912.09881"], "paper": "1912.99881", "title": "Datamorphic Testing Revisited"},
        # the recorded titles have & and math but no % or _: two take recorded metadata
        # with such a title
        {**papers["1111.2011"], "paper": "1111.99999", "title": "100% of the $O(N)$ model_s"},
        {
            **papers["1202.0819"],
            "paper": "1202.99999",
            "title": "Snake_case, 50% & #1: $\\mathbb{R}^n$ {BERT}",
        },
    ]
    return [*papers.values(), *extra]


def acronyms(title: str) -> list[str]:
    """The ASCII words a style must not lower-case: capitals past the first letter."""
    text = _MATH.sub(" ", title)
    return [
        word
        for word in _WORD.findall(text)
        if any(c.isupper() for c in word[1:]) and word.isascii()
    ]


def in_text(word: str, text: str) -> bool:
    one_line = texrun.joined(text)
    return word in one_line or word in one_line.replace("-", "")


@pytest.fixture(scope="module")
def tex_ready() -> None:
    require_program(texrun.available(), "bibtex, pdflatex and pdftotext are not installed")


@pytest.mark.parametrize("style", list(STYLES))
def test_every_recorded_entry_compiles_without_an_error_or_warning(
    style: str, tex_ready: None, tmp_path: Path
) -> None:
    papers = compiled_papers()
    bib = papers_bibtex(papers)
    keys = keys_of(bib)
    assert len(keys) == len(papers) == 135
    assert "zhu2019datamorphica" in keys and "zhu2019datamorphicb" in keys
    result = texrun.compile_bib(bib, keys, tmp_path, style=style, packages=STYLES[style])
    assert result.bibtex_errors == 0, result.logs["blg"][-2000:]
    assert result.bibtex_warnings == []
    assert result.latex_errors == [], result.logs["log"][-3000:]
    assert result.latex_warnings == []
    bbl = (tmp_path / "doc.bbl").read_text("latin-1")
    assert bbl.count("\\bibitem") == len(keys)


def test_acronyms_stay_upper_case_in_the_pdf_and_other_words_are_lowered(
    tex_ready: None, tmp_path: Path
) -> None:
    papers = compiled_papers()
    bib = papers_bibtex(papers)
    result = texrun.compile_bib(bib, keys_of(bib), tmp_path, style="plain")
    assert result.latex_errors == []
    expected = sorted({word for paper in papers for word in acronyms(paper["title"])})
    assert len(expected) > 30  # OGLE, III, GANs, ChatGPT, ComicScene154, LLM, REST, …
    missing = [word for word in expected if not in_text(word, result.text)]
    assert missing == []
    # plain.bst lower-cases the rest of a title: the braces are what kept the acronyms
    assert "Quantum criticality for extended nodes on a bethe lattice" in texrun.joined(result.text)


def test_hostile_text_compiles_as_its_own_letters_and_runs_nothing_even_with_shell_escape(
    tex_ready: None, tmp_path: Path
) -> None:
    base = all_metadata()["1111.2011"]
    hostile = [
        "\\immediate\\write18{touch pwned} and $\\write18{touch pwned2}$",
        "\\input{/etc/passwd} $\\input{/etc/passwd}$ $^^5cinput{/etc/passwd}$",
        "}}}} unbalanced {{{ \\catcode`\\{=12 \\def\\x{y} \\csname relax\\endcsname",
        "\x00\x1b[31m control \x7f\u202e characters ~ ^ \\ # & % _ $",
    ]
    papers = [
        {
            **base,
            "paper": f"1111.201{n}",
            "title": title,
            "authors": [title + " Smith"],
            "journalRef": title,
        }
        for n, title in enumerate(hostile)
    ]
    bib = papers_bibtex(papers)
    result = texrun.compile_bib(bib, keys_of(bib), tmp_path, style="plain", shell_escape=True)
    assert result.bibtex_errors == 0 and result.latex_errors == []
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()
    text = texrun.joined(result.text)
    assert "root:" not in text
    assert "\\immediate\\write18" in text and "\\input" in text
    assert "unbalanced" in text


def test_the_bibliographies_of_the_corpus_pages_compile(tex_ready: None, tmp_path: Path) -> None:
    from paperanchor.errors import ParseError
    from paperanchor.parse import parse_document

    references = []
    for page in sorted((CORPUS / "html").glob("*.html")):
        try:
            references.extend(parse_document(page.read_bytes()).references)
        except ParseError:  # a page that is not a paper has no bibliography here
            continue
    bib = references_bibtex(references, {})
    keys = keys_of(bib)
    # a paper that is in the corpus twice (arXiv and ar5iv pages) gives its entries once
    assert len(references) > len(keys) > 800
    result = texrun.compile_bib(bib, keys, tmp_path, style="plain")
    assert result.bibtex_errors == 0, result.logs["blg"][-2000:]
    assert result.latex_errors == [], result.logs["log"][-3000:]
    assert result.latex_warnings == []
    assert (tmp_path / "doc.bbl").read_text("latin-1").count("\\bibitem") == len(keys)


def table() -> None:
    """Print the compile table (entries, errors, warnings, time) of each style."""
    import tempfile

    papers = compiled_papers()
    bib = papers_bibtex(papers)
    print(
        "| style | entries | bibtex errors | bibtex warnings | LaTeX errors | LaTeX warnings "
        "| box warnings | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for style, packages in STYLES.items():
        with tempfile.TemporaryDirectory() as folder:
            r = texrun.compile_bib(bib, keys_of(bib), Path(folder), style=style, packages=packages)
        print(
            f"| {style} | {r.entries} | {r.bibtex_errors} | {len(r.bibtex_warnings)} | "
            f"{len(r.latex_errors)} | {len(r.latex_warnings)} | {r.boxes} | {r.seconds:.2f} |"
        )


if __name__ == "__main__":
    table()


# TeX that passes a command whitelist and still stops pdflatex (issue 21, #8): each must come
# out as math that compiles, or as escaped text.
BROKEN_MATH = [
    "{" * 300 + "x" + "}" * 300,  # "TeX capacity exceeded", no PDF
    "x^a^b",
    "x_1_2",
    "x^2'",
    "\\left x\\right)",
    "\\big x",
    "\\sqrt[x",
    "\\frac\\frac12 3",
    "x^\\sqrt2",
    "\\frac\\mathrm{a}b",
    "{\\left( }\\right)",
]
KEPT_MATH = ["x^\\mathrm{T}", "x_\\mathrm{max}", "\\sqrt[3]{x}", "\\left(x\\right)", "x'^2"]


def test_math_that_would_not_compile_is_escaped_and_the_bib_compiles(
    tex_ready: None, tmp_path: Path
) -> None:
    from paperanchor.tree import Reference

    base = all_metadata()["1111.2011"]
    formulas = BROKEN_MATH + KEPT_MATH
    papers = [
        {**base, "paper": f"1111.3{n:03d}", "title": f"Formula ${formula}$ here"}
        for n, formula in enumerate(formulas)
    ]
    bib = papers_bibtex(papers)
    # a paper's own bibliography goes through the same writer (references.bib)
    references = [
        Reference(f"bib.bib{n}", str(n), f"[{n}]", f"A. Author. ${f}$. 2020.", "", ("A. Author",),
                  f"Title ${f}$", "2020", None, None, None)
        for n, f in enumerate(BROKEN_MATH)
    ]  # fmt: skip
    refs = references_bibtex(references, {})
    for name, source in [("papers", bib), ("references", refs)]:
        result = texrun.compile_bib(source, keys_of(source), tmp_path / name, style="plain")
        assert result.bibtex_errors == 0 and result.latex_errors == [], (name, result.latex_errors)
        assert result.seconds < 60
        assert (tmp_path / name / "doc.pdf").exists()
    kept = [f for f in KEPT_MATH if "{$" + f + "$}" in bib]
    assert kept == KEPT_MATH, bib
