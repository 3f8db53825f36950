"""The converters a user would pick instead, on the same pages: how fast and how exact.

Each converter turns a corpus page's HTML into Markdown: paperanchor (parse + the whole paper's
Markdown), markitdown and html2text (the bench extra). Speed is each one's time ÷ a bare
`lxml.html.fromstring` of the same bytes, in the same run; exactness is counted on each output
with the rules of tests/render/test_markdown_corpus.py, against the page itself with lxml:
body paragraphs kept, display equations whose TeX stands inside `$$`, tables written as pipe
tables, bibliography entries kept, top-level sections written as headings, chrome strings.

    .venv/bin/python -m bench.peers
"""

from __future__ import annotations

import io
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import lxml.html
from tests.corpus_pages import has_class as _has_class
from tests.render.test_markdown_corpus import _alnum, _entry_numbers, _markdown_words, _page_text

from bench.common import Spread, corpus_pages, interleaved

RUNS = 3
CHROME = (
    "Report issue",
    "Report Issue",
    "Instructions for reporting errors",
    "Why HTML?",
    "arXiv is now an independent nonprofit!",
    "view the build logs",
    "Back to Abstract",
    "Generated on",
    "by LaTeXML",
)
_DISPLAY = re.compile(r"\$\$(.*?)\$\$", re.DOTALL)
_SEPARATOR = re.compile(r"^\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-{0,}:?\s*$", re.MULTILINE)


def _tex(math: Any) -> str:
    for node in math.iter():
        if isinstance(node.tag, str) and node.get("encoding") == "application/x-tex":
            return (node.text or "").strip()
    return (math.get("alttext") or "").strip()


@dataclass
class Truth:
    """What a page holds, counted with lxml."""

    paragraphs: list[str]
    displays: list[str]
    tables: int
    entries: list[str]
    headings: list[str]

    @classmethod
    def of(cls, root: Any) -> Truth:
        documents = root.xpath(f"//article[{_has_class('ltx_document')}]") or root.xpath(
            f"//*[{_has_class('ltx_document')}]"
        )
        document = documents[0] if documents else root
        entries_of = _entry_numbers(root)
        paragraphs = [
            _alnum(_page_text(p, entries_of))
            for p in document.xpath(
                f".//p[{_has_class('ltx_p')}][not(ancestor::figure)]"
                f"[not(ancestor::*[{_has_class('ltx_note')}])]"
                f"[not(ancestor::*[{_has_class('ltx_authors')}])]"
            )
        ]
        displays = []
        for table in document.xpath(
            f".//table[{_has_class('ltx_equation')} or {_has_class('ltx_equationgroup')}]"
            f"[not(ancestor::table[{_has_class('ltx_equationgroup')}])]"
        ):
            for math in table.iter("{*}math", "math"):
                tex = _tex(math)
                if tex:
                    displays.append(tex)
        tables = len(
            document.xpath(
                f".//figure[{_has_class('ltx_table')}][.//table[{_has_class('ltx_tabular')}]]"
                f"[not(ancestor::figure[{_has_class('ltx_table')}])]"
            )
        )
        entries = [
            _alnum(_page_text(b))
            for item in document.xpath(f".//li[{_has_class('ltx_bibitem')}]")
            for b in (item.xpath(f".//*[{_has_class('ltx_bibblock')}]") or [item])
        ]
        headings = []
        for child in document:
            names = (child.get("class") or "").split() if isinstance(child.tag, str) else []
            if any(k in names for k in ("ltx_section", "ltx_appendix", "ltx_bibliography")):
                title = child.xpath(f"./*[{_has_class('ltx_title')}]")
                headings.append(_alnum(_page_text(title[0])) if title else "")
        return cls([p for p in paragraphs if p], displays, tables, entries, headings)


@dataclass
class Score:
    paragraphs: int = 0
    displays: int = 0
    tables: int = 0
    entries: int = 0
    headings: int = 0
    chrome: int = 0
    ratios: list[float] = field(default_factory=list)
    seconds: float = 0.0
    floor_seconds: float = 0.0

    def add(self, other: Score) -> None:
        for name in ("paragraphs", "displays", "tables", "entries", "headings", "chrome"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def score(markdown: str, truth: Truth) -> Score:
    words = _markdown_words(markdown)
    inside = "\n".join(_DISPLAY.findall(markdown))
    headings = [_alnum(line) for line in markdown.splitlines() if line.startswith("#")]
    return Score(
        paragraphs=sum(1 for p in truth.paragraphs if p in words),
        displays=sum(1 for tex in truth.displays if tex in inside),
        tables=min(truth.tables, len(_SEPARATOR.findall(markdown))),
        entries=sum(1 for e in truth.entries if e and e in words),
        headings=sum(1 for h in truth.headings if any(h in line for line in headings)),
        chrome=sum(markdown.count(c) for c in CHROME),
    )


def converters() -> dict[str, Callable[[bytes], str]]:
    """Each converter's HTML -> Markdown; the peers are the bench extra's packages."""
    from paperanchor.paper import LoadedPaper, Paper
    from paperanchor.parse import parse_document

    def paperanchor(data: bytes) -> str:
        document = parse_document(data, "https://example.org/")
        return Paper.open(LoadedPaper(document, "local/x", "local/x")).markdown()

    found: dict[str, Callable[[bytes], str]] = {"paperanchor": paperanchor}
    try:
        import html2text

        def h2t(data: bytes) -> str:
            converter = html2text.HTML2Text()
            converter.body_width = 0
            return str(converter.handle(data.decode("utf-8", "replace")))

        found["html2text"] = h2t
    except ImportError:
        pass
    try:
        from markitdown import MarkItDown, StreamInfo

        engine = MarkItDown()

        def markitdown(data: bytes) -> str:
            info = StreamInfo(extension=".html", mimetype="text/html", charset="utf-8")
            return str(engine.convert_stream(io.BytesIO(data), stream_info=info).markdown)

        found["markitdown"] = markitdown
    except ImportError:
        pass
    return found


def run(runs: int = RUNS) -> dict[str, Any]:
    """Per converter: the median and all-pages ratios to lxml, and the exactness counts."""
    jobs = converters()
    totals = {name: Score() for name in jobs}
    whole = Score()
    pages = 0
    for page in corpus_pages():
        data = page.read_bytes()
        root = lxml.html.fromstring(re.sub(rb"^\s*<\?xml[^>]*\?>", b"", data))
        truth = Truth.of(root)
        if not truth.paragraphs:
            continue  # a failed conversion (2608.30667v1): nothing to keep
        pages += 1
        whole.add(
            Score(
                len(truth.paragraphs),
                len(truth.displays),
                truth.tables,
                len([e for e in truth.entries if e]),
                len(truth.headings),
            )
        )
        timed: dict[str, Callable[[], object]] = {"lxml": lambda: lxml.html.fromstring(data)}  # noqa: B023
        outputs: dict[str, str] = {}
        for name, convert in jobs.items():
            outputs[name] = convert(data)
            timed[name] = lambda convert=convert: convert(data)  # type: ignore[misc]  # noqa: B023
        spreads: dict[str, Spread] = interleaved(timed, runs)
        for name in jobs:
            result = score(outputs[name], truth)
            totals[name].add(result)
            totals[name].ratios.append(spreads[name].median / spreads["lxml"].median)
            totals[name].seconds += spreads[name].median
            totals[name].floor_seconds += spreads["lxml"].median
    return {"pages": pages, "whole": whole, "scores": totals}


def rows(result: dict[str, Any]) -> list[str]:
    """The report's Markdown table."""
    whole: Score = result["whole"]
    lines = [
        "| converter | median ratio to lxml | all pages | paragraphs | display TeX in `$$` | "
        "pipe tables | bibliography entries | headings | chrome strings |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, found in result["scores"].items():
        lines.append(
            f"| {name} | {statistics.median(found.ratios):.1f} | "
            f"{found.seconds / found.floor_seconds:.1f} | "
            f"{found.paragraphs}/{whole.paragraphs} | {found.displays}/{whole.displays} | "
            f"{found.tables}/{whole.tables} | {found.entries}/{whole.entries} | "
            f"{found.headings}/{whole.headings} | {found.chrome} |"
        )
    return lines


def main() -> int:
    result = run()
    print(f"{result['pages']} pages")
    print("\n".join(rows(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
