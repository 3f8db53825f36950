"""Pages and requests whose cost grows with their size (issue 21: #3, #6), generated.

`words_page(megabytes)` is a LaTeXML-looking page of paragraphs of common words, and
`made_up_quote(length)` a quote of the same words that is in none of them: the worst case of
cite by text, as every passage shares its words and none holds it.
"""

from __future__ import annotations

import random

_TEXT = (
    "the model of a network with layers and weights is trained on data to predict the next "
    "token where loss falls as the size of the corpus grows and attention over heads learns "
    "which positions matter for each output in every sequence of the batch"
)
WORDS = _TEXT.split()


def words_page(megabytes: float, paragraph_chars: int = 1_500, seed: int = 1) -> bytes:
    """About `megabytes` MB of paragraphs of WORDS in one section."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    size = 0
    while size < megabytes * 1_000_000:
        words: list[str] = []
        length = 0
        while length < paragraph_chars:
            word = rng.choice(WORDS)
            words.append(word)
            length += len(word) + 1
        text = " ".join(words)
        paragraphs.append(f"<div class='ltx_para'><p class='ltx_p'>{text}.</p></div>")
        size += len(text) + 60
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Words</title></head><body>"
        "<div class='ltx_page_main'><article class='ltx_document'>"
        "<h1 class='ltx_title ltx_title_document'>Many words</h1>"
        "<section class='ltx_section' id='S1'><h2 class='ltx_title ltx_title_section'>"
        f"<span class='ltx_tag ltx_tag_section'>1 </span>Words</h2>{''.join(paragraphs)}"
        "</section></article></div></body></html>"
    ).encode()


def made_up_quote(length: int = 2_000, seed: int = 2) -> str:
    """`length` characters of WORDS in an order no page of `words_page` holds."""
    rng = random.Random(seed)
    words: list[str] = []
    size = 0
    while size < length:
        words.append(rng.choice(WORDS) + "s")  # plural: never a substring of the page
        size += len(words[-1]) + 1
    return " ".join(words)[:length].strip()
