"""Hostile LaTeXML-looking pages, generated: each abuses one rule of the parser
(contract §3 Limits).

`python -m tests.reliability.hostile_pages DIR` writes them to DIR as `<name>.html`, so a
server's local directory can serve them; `measure NAME` parses and renders one in this process
and prints its time and peak memory as JSON (the tests run it in a fresh process each).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

HEAD = (
    "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Hostile</title>{head}</head>"
    "<body><div class='ltx_page_main'><article class='ltx_document'>"
    "<h1 class='ltx_title ltx_title_document'>A hostile page</h1>{body}"
    "</article></div></body></html>"
)


def _page(body: str, head: str = "") -> bytes:
    return HEAD.format(head=head, body=body).encode()


def span_bomb_table() -> bytes:
    """16 cells that each span 1000 rows and 1000 columns: a 1 KB table of 16 million cells."""
    cells = "".join(
        f"<td class='ltx_td' rowspan='1000' colspan='1000'>c{i}</td>" for i in range(16)
    )
    table = (
        "<figure class='ltx_table' id='S1.T1'><figcaption class='ltx_caption'>"
        "<span class='ltx_tag ltx_tag_table'>Table 1: </span>Spans</figcaption>"
        f"<table class='ltx_tabular' id='S1.T1.1'><tr class='ltx_tr'>{cells}</tr></table>"
        "</figure>"
    )
    return _page(_section("S1", "1", "Tables", table))


def span_bomb_span_table() -> bytes:
    """The span bomb as a tabular written in spans, its spans said by classes (`ltx_rowspan_N`),
    under `\\resizebox`'s wrapper."""
    cells = "".join(
        "<span class='ltx_td ltx_rowspan ltx_rowspan_1000 ltx_colspan ltx_colspan_1000'>"
        f"c{i}</span>"
        for i in range(16)
    )
    table = (
        "<figure class='ltx_table' id='S1.T1'><figcaption class='ltx_caption'>"
        "<span class='ltx_tag ltx_tag_table'>Table 1: </span>Spans</figcaption>"
        "<div class='ltx_inline-block ltx_transformed_outer'><span class='ltx_transformed_inner'>"
        f"<span class='ltx_tabular' id='S1.T1.1'><span class='ltx_tr'>{cells}</span></span>"
        "</span></div></figure>"
    )
    return _page(_section("S1", "1", "Tables", table))


def nested_pictures(depth: int = 450) -> bytes:
    """Boxes of text inside boxes of text, 450 deep (1,800 levels of elements: each picture one
    foreignObject holding a paragraph and the next picture), and 20,000 foreignObjects side by
    side in one picture."""
    opening = (
        "<svg class='ltx_picture'><g><foreignObject width='9'><span class='ltx_para'>"
        "<span class='ltx_p'>boxed words</span>"
    )
    nested = opening * depth + "</span></foreignObject></g></svg>" * depth
    wide = (
        "<svg class='ltx_picture'>"
        + "<g><foreignObject><span class='ltx_p'>side words</span></foreignObject></g>" * 20_000
        + "</svg>"
    )
    body = f"<div class='ltx_para' id='S1.p1'>{nested}</div><div class='ltx_para'>{wide}</div>"
    return _page(_section("S1", "1", "Pictures", body))


def nested_spans(depth: int = 2_000) -> bytes:
    """A paragraph whose text sits under 2,000 nested spans (libxml2 reads 2,048 levels)."""
    inner = "<span class='ltx_text'>" * depth + "deep words" + "</span>" * depth
    return _page(_section("S1", "1", "Spans", f"<p class='ltx_p'>Start {inner} end.</p>"))


def alike_sections(count: int = 20_000) -> bytes:
    """20,000 sections with the same title: each needs its own slug."""
    body = "".join(
        _section(f"S{i}", str(i), "Results", f"<p class='ltx_p'>Paragraph {i}.</p>")
        for i in range(1, count + 1)
    )
    return _page(body)


def deep_lists(depth: int = 250) -> bytes:
    """Itemize lists nested 250 deep."""
    opening = (
        "<ul class='ltx_itemize'><li class='ltx_item'><div class='ltx_para'>"
        "<p class='ltx_p'>item</p>"
    )
    closing = "</div></li></ul>"
    return _page(_section("S1", "1", "Lists", opening * depth + closing * depth))


def deep_quotes(depth: int = 250) -> bytes:
    """Quotes nested 250 deep."""
    opening = "<blockquote class='ltx_quote'><p class='ltx_p'>quoted</p>"
    return _page(_section("S1", "1", "Quotes", opening * depth + "</blockquote>" * depth))


def deep_sections(depth: int = 2_000) -> bytes:
    """Subsections nested 2,000 deep, each with a conversion error inside."""
    opening = (
        "<section class='ltx_subsection' id='S1.SS{i}'><h3 class='ltx_title'>Deeper</h3>"
        "<p class='ltx_p'><span class='ltx_ERROR undefined'>\\bad</span> text</p>"
    )
    body = "".join(opening.format(i=i) for i in range(depth)) + "</section>" * depth
    return _page(_section("S1", "1", "Sections", body))


def quadratic_base() -> bytes:
    """A 300 KB head of unterminated `<base` tags: a backtracking pattern over it is quadratic."""
    head = "<base " + "<base x" * 43_000
    return _page(_section("S1", "1", "Base", "<p class='ltx_p'>Body.</p>"), head=head)


def debris_text() -> bytes:
    """200 KB of backslashes and control words in one paragraph, then 20,000 conversion errors
    each followed by an option bracket that never closes: the debris rules' worst inputs."""
    words = "\\" * 100_000 + " \\@x@y" * 10_000
    errors = "<span class='ltx_ERROR undefined'>\\foo</span>[" * 20_000
    body = f"<p class='ltx_p'>{words}</p><p class='ltx_p'>{errors}</p>"
    return _page(_section("S1", "1", "Debris", body))


def loose_acknowledgements(count: int = 50_000) -> bytes:
    """Acknowledgements written straight into their element: 50,000 runs of text and spans."""
    runs = "We thank <span class='ltx_text'>someone</span> and " * count
    body = f"<div class='ltx_acknowledgements'>{runs}</div>"
    return _page(body)


def ampersand_authors(count: int = 50_000) -> bytes:
    """One author block of 50,000 ampersands and line breaks: the author separator's worst."""
    name = "Ada Lovelace<br class='ltx_break'>" + "&amp;x &amp; y<br class='ltx_break'>" * count
    creator = (
        "<div class='ltx_authors'><span class='ltx_creator ltx_role_author'>"
        f"<span class='ltx_personname'>{name}</span></span></div>"
    )
    return _page(creator + _section("S1", "1", "Text", "<p class='ltx_p'>Body.</p>"))


def _author_block(name: str) -> bytes:
    creator = (
        "<div class='ltx_authors'><span class='ltx_creator ltx_role_author'>"
        f"<span class='ltx_personname'>{name}</span></span></div>"
    )
    return _page(creator + _section("S1", "1", "Text", "<p class='ltx_p'>Body.</p>"))


def marked_authors(count: int = 20_000) -> bytes:
    """One author block of 20,000 lines of bold names that each end with ten marks (`sup`s, then
    math), every line written like the first: the name lines' worst."""
    line = (
        "<span class='ltx_text ltx_font_bold'>Ada Byron {i}" + "<sup class='ltx_sup'>1</sup>" * 10
        + "\u2002Alan Turing {i}<math><mi>a</mi></math></span><br class='ltx_break'>"
    )  # fmt: skip
    return _author_block("".join(line.format(i=i) for i in range(count)))


def tabular_authors(count: int = 20_000) -> bytes:
    """One author block of 20,000 authors' tabulars (a name row over two affiliation rows), the
    first one's name row holding tabulars nested 2,000 deep: the tabulars' worst."""
    nested = "<span class='ltx_tabular'><span class='ltx_tr'><span class='ltx_td'>x" * 500
    nested += "</span></span></span>" * 500
    table = (
        "<span class='ltx_tabular'><span class='ltx_tr'><span class='ltx_td'>Ada Byron {i}"
        "<sup class='ltx_sup'>1</sup>{nested}</span></span><span class='ltx_tr'><span "
        "class='ltx_td'>Harbourside Institute</span></span><span class='ltx_tr'><span "
        "class='ltx_td'>Upland</span></span></span>\u2003"
    )
    return _author_block(
        "".join(table.format(i=i, nested=nested if i == 0 else "") for i in range(count))
    )


def math_labels(count: int = 2_000) -> bytes:
    """2,000 bibliography entries whose labels hold 50 math superscripts each, all cited."""
    math = "<math><semantics><msup><mi></mi><mo>+</mo></msup><annotation>{}^{+}</annotation>"
    label = "[HNA" + (math + "</semantics></math>") * 50 + "17]"
    items = "".join(
        f"<li class='ltx_bibitem' id='bib.bib{i}'><span class='ltx_tag ltx_tag_bibitem'>{label}"
        f"</span><span class='ltx_bibblock'>Entry {i}.</span></li>"
        for i in range(count)
    )
    cites = "".join(
        f"<cite class='ltx_cite'>[<a class='ltx_ref' href='#bib.bib{i}'>HNA{math}"
        "</semantics></math>17</a>]</cite> "
        for i in range(count)
    )
    body = _section("S1", "1", "Cites", f"<p class='ltx_p'>{cites}</p>") + (
        "<section class='ltx_bibliography' id='bib'><h2 class='ltx_title'>References</h2>"
        f"<ul class='ltx_biblist'>{items}</ul></section>"
    )
    return _page(body)


def year_digits(pairs: int = 1_000_000) -> bytes:
    """A bibliography entry of 2,000,000 characters of "2020…", each "20" a place a year could
    start and none of them one: the entry's last year is looked for from its end."""
    items = (
        "<li class='ltx_bibitem' id='bib.bib1'><span class='ltx_tag ltx_tag_bibitem'>[1]</span>"
        f"<span class='ltx_bibblock'>A. Name, {'20' * pairs}</span></li>"
    )
    body = _section("S1", "1", "Text", "<p class='ltx_p'>Body.</p>") + (
        "<section class='ltx_bibliography' id='bib'><h2 class='ltx_title'>References</h2>"
        f"<ul class='ltx_biblist'>{items}</ul></section>"
    )
    return _page(body)


def crowded_head(count: int = 100_000) -> bytes:
    """A head of 100,000 canonical links and og:url metas, each naming another site."""
    head = (
        "<link rel='canonical stylesheet' href='/assets/ar5iv-x.css'>"
        "<meta property='og:url' content='https://ar5iv.labs.arxiv.org/html/1'>"
    ) * count
    return _page(_section("S1", "1", "Head", "<p class='ltx_p'>Body.</p>"), head=head)


def paragraphs(count: int, words: str = "word{i} of some text here") -> bytes:
    """One section of `count` short paragraphs: two tags and ~60 bytes each (issue 21 #5)."""
    body = "".join(
        f"<div class='ltx_para' id='S1.p{i}'><p class='ltx_p'>{words.format(i=i % 97)}</p></div>"
        for i in range(count)
    )
    return _page(_section("S1", "1", "Many", body))


def text_flood(characters: int = 21_000_000) -> bytes:
    """Past the parse's text bound in a handful of elements: 1 MB paragraphs of letters."""
    chunk = "lorem ipsum " * 83_334
    body = "".join(f"<p class='ltx_p'>{chunk}</p>" for _ in range(characters // len(chunk) + 1))
    return _page(_section("S1", "1", "Flood", body))


# Pages past the parse's bounds (parse/__init__.py): refused as too-large, not parsed.
TOO_LARGE: dict[str, Callable[[], bytes]] = {
    "paragraph-flood": lambda: paragraphs(510_000),  # 1,020,000 tags, 43 MB
    "text-flood": text_flood,
}


SPACED_IDS = (" S1", "S2 ", "S3\t")


def spaced_ids() -> bytes:
    """Sections whose ids begin or end in white space (LaTeXML writes none): a lookup that
    strips the anchor it is given would not find them by the ids the outline lists."""
    body = "".join(
        _section(
            section_id,
            str(n),
            f"Part {n}",
            f"<div class='ltx_para' id='{section_id}.p1'><p class='ltx_p'>Text of part {n}.</p>"
            "</div>",
        )
        for n, section_id in enumerate(SPACED_IDS, 1)
    )
    return _page(body)


def _section(section_id: str, number: str, title: str, body: str) -> str:
    return (
        f"<section class='ltx_section' id='{section_id}'><h2 class='ltx_title ltx_title_section'>"
        f"<span class='ltx_tag ltx_tag_section'>{number} </span>{title}</h2>{body}</section>"
    )


PAGES: dict[str, Callable[[], bytes]] = {
    "span-bomb-table": span_bomb_table,
    "span-bomb-span-table": span_bomb_span_table,
    "nested-pictures": nested_pictures,
    "nested-spans": nested_spans,
    "too-deep-spans": lambda: nested_spans(20_000),
    "alike-sections": alike_sections,
    "deep-lists": deep_lists,
    "deep-quotes": deep_quotes,
    "deep-sections": deep_sections,
    "quadratic-base": quadratic_base,
    "debris-text": debris_text,
    "loose-acknowledgements": loose_acknowledgements,
    "ampersand-authors": ampersand_authors,
    "marked-authors": marked_authors,
    "tabular-authors": tabular_authors,
    "math-labels": math_labels,
    "crowded-head": crowded_head,
    "year-digits": year_digits,
    "spaced-ids": spaced_ids,
}


def measure(name: str) -> dict[str, object]:
    """Parse one page, open it as a paper, render the whole of it and its outline."""
    from paperanchor.paper import LoadedPaper
    from paperanchor.parse import parse_document
    from paperanchor.service import Paper, outline, read

    html = PAGES[name]()
    started = time.perf_counter()
    document = parse_document(html, "https://example.org/")
    parsed = time.perf_counter()
    paper = Paper.open(LoadedPaper(document, f"local/{name}", f"local/{name}"))
    answer = outline(paper)
    markdown = read(paper, None, 100_000).markdown
    for section in document.sections[:50]:
        read(paper, section.id, 100_000)
    done = time.perf_counter()
    return {
        "page": name,
        "bytes": len(html),
        "parse_s": round(parsed - started, 3),
        "total_s": round(done - started, 3),
        "peak_rss_mb": round(_peak_kb() / 1024, 1),
        "sections": answer["counts"]["sections"],
        "tokens": answer["tokens"],
        "markdown_chars": len(markdown),
    }


def _peak_kb() -> int:
    """This process's peak resident memory (VmHWM): ru_maxrss would keep the high-water mark
    of the process that forked it across exec (a test run's hundreds of MB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(argv: list[str]) -> int:
    if argv[:1] == ["measure"]:
        print(json.dumps(measure(argv[1])))
        return 0
    folder = Path(argv[0])
    folder.mkdir(parents=True, exist_ok=True)
    for name, make in PAGES.items():
        (folder / f"{name}.html").write_bytes(make())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
