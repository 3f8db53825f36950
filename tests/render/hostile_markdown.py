"""Pages whose TeX, equation numbers, ids and labels try to become markup in our Markdown.

Each payload of issue 21 (#1) sits where a paper can put it: display and inline TeX, an
equation's number, a section id (which reaches the truncation line and the not-found
suggestions), a section, figure, list and theorem label. `page()` is one LaTeXML-looking page
holding all of them; the tests render its Markdown with three renderers and look for markup.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from html import escape

# What a renderer that misses our math would read as a tag, a link, the end of the math or a
# new block; each names an `alert(n)` so that a failure says which one got through.
TEX = [
    "x$$ <img src=x onerror=alert(1)> $$y",
    r"\text{[click me](javascript:alert(2))}",
    r"a\\$ <img src=x onerror=alert(3)> $b",
    "a\n\n<img src=x onerror=alert(4)>\n\n[r]: javascript:alert(5)\n\n[r]",
    "a <!-- b --> <javascript:alert(6)> <?php ?> </p>",
    "x % <img src=x onerror=alert(7)>\n+ y",
    "trailing\\",
    r"\$",
    "$",
    r"\text{![i](javascript:alert(8))}",
    r"\text{[a]}\text{(javascript:alert(9))}",
    r"\href{javascript:alert(10)}{x} <a href=javascript:alert(11)>y</a>",
]
NUMBERS = [
    "2<img src=x onerror=alert(12)>",
    r"1}\href{javascript:alert(13)}{x",
    "3$$ <img src=x onerror=alert(14)> $$",
    "4](javascript:alert(15))",
]
SECTION_ID = "S1<img src=x onerror=alert(16)>](javascript:alert(17))"
LABELS = [
    "<img src=x onerror=alert(18)>",
    "[l](javascript:alert(19))",
    "*](javascript:alert(20))",
]


def _math(tex: str, display: bool) -> str:
    kind = "block" if display else "inline"
    return (
        f"<math class='ltx_Math' alttext='{escape(tex, quote=True)}' display='{kind}'>"
        f"<semantics><mi>x</mi><annotation encoding='application/x-tex'>{escape(tex)}"
        "</annotation></semantics></math>"
    )


def _equation(index: int, tex: str, number: str | None) -> str:
    tag = (
        "<td class='ltx_eqn_cell ltx_eqn_eqno ltx_align_middle ltx_align_right'>"
        f"<span class='ltx_tag ltx_tag_equation ltx_align_right'>({escape(number)})</span></td>"
        if number is not None
        else ""
    )
    return (
        f"<table id='S1.E{index}' class='ltx_equation ltx_eqn_table'><tbody>"
        "<tr class='ltx_equation ltx_eqn_row ltx_align_baseline'>"
        f"<td class='ltx_eqn_cell ltx_align_center'>{_math(tex, True)}</td>{tag}"
        "</tr></tbody></table>"
    )


@dataclass(frozen=True)
class Payloads:
    """What a page puts where a paper can: TeX, equation numbers, a section id, labels."""

    tex: list[str] = field(default_factory=lambda: list(TEX))
    numbers: list[str] = field(default_factory=lambda: list(NUMBERS))
    section_id: str = SECTION_ID
    labels: list[str] = field(default_factory=lambda: list(LABELS))


# The pieces a generated payload is spliced from: the marks that open or close Markdown,
# HTML and math, and the words that would make them live.
_PIECES = [
    "$", "$$", "\\", "\\$", "`", "``", "[", "]", "(", ")", "<", ">", "!", "*", "_", "~",
    "|", "#", "\n", "\n\n", "  ", "&", "&lt;", ";", ":", "'", '"', "=", "{", "}", "%",
    "<img src=x onerror=alert(99)>", "javascript:alert(98)", "](javascript:alert(97))",
    "<a href=javascript:alert(96)>", "<script>alert(95)</script>", "\\text{", "\\href{",
    "<!--", "-->", "<http://x>", "x", "1", "---",
]  # fmt: skip


def generated(seed: int) -> Payloads:
    """Payloads spliced at random (seeded, so a failure can be replayed) from `_PIECES`."""
    rng = random.Random(seed)

    def one() -> str:
        return "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 12)))

    tex = [one() for _ in range(6)]
    numbers = [one() for _ in range(3)]
    section_id = "S1" + "".join(one().split())  # an id never holds white space
    return Payloads(tex, numbers, section_id, [one() for _ in range(3)])


def page(paragraphs: int = 40, payloads: Payloads | None = None) -> bytes:
    """One page with every payload, and enough text that a small `maxTokens` cuts it."""
    put = payloads or Payloads()
    numbers = put.numbers
    equations = "".join(
        _equation(i, tex, numbers[i % len(numbers)] if i < 2 * len(numbers) else None)
        for i, tex in enumerate(put.tex, 1)
    )
    inline = "".join(
        f"<p class='ltx_p'>Inline {i}: {_math(tex, False)} and after.</p>"
        for i, tex in enumerate(put.tex, 1)
    )
    labels = "".join(
        f"<li class='ltx_item'><span class='ltx_tag ltx_tag_item'>{escape(label)}</span>"
        f"<div class='ltx_para'><p class='ltx_p'>Item {i}.</p></div></li>"
        for i, label in enumerate(put.labels, 1)
    )
    theorems = "".join(
        f"<div class='ltx_theorem ltx_theorem_theorem' id='Thm{i}'><h6 class='ltx_title "
        f"ltx_runin ltx_title_theorem'><span class='ltx_tag ltx_tag_theorem'>{escape(label)}"
        f"</span></h6><div class='ltx_para'><p class='ltx_p'>Claim {i}.</p></div></div>"
        for i, label in enumerate(put.labels, 1)
    )
    figure = (
        "<figure class='ltx_figure' id='S1.F1'><figcaption class='ltx_caption'>"
        f"<span class='ltx_tag ltx_tag_figure'>{escape(put.labels[0])} </span>"
        f"A caption {_math(put.tex[1], False)}</figcaption></figure>"
    )
    filler = "".join(
        f"<p class='ltx_p'>Filler paragraph {i} with enough words to make the section long "
        "enough that a small token budget cuts it and the truncation line is written.</p>"
        for i in range(paragraphs)
    )
    body = (
        f"<section class='ltx_section' id='{escape(put.section_id, quote=True)}'>"
        f"<h2 class='ltx_title ltx_title_section'><span class='ltx_tag ltx_tag_section'>"
        f"{escape(put.labels[1])} </span>Hostile {_math(put.tex[0], False)}</h2>"
        f"{equations}{inline}<ul class='ltx_itemize'>{labels}</ul>{theorems}{figure}{filler}"
        "</section>"
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Hostile</title></head>"
        "<body><div class='ltx_page_main'><article class='ltx_document'>"
        "<h1 class='ltx_title ltx_title_document'>A hostile page</h1>"
        f"{body}</article></div></body></html>"
    ).encode()
