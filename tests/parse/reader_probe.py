"""The probe as strict as a reader: every text-bearing element of a page has its words, in order,
in what `read` of its section gives, and every bibliography label is the one the page prints.

`python -m tests.parse.reader_probe` runs it over the whole corpus and prints its totals (words
missing, elements missing) by element kind; tests/parse/test_corpus.py asserts it page by page.

The page's words are read from lxml's own tree of the page (`tests.corpus_pages.page_root`),
math as its TeX (what the Markdown shows between `$`), and compared as runs of letters and digits,
lowercased and NFKC-folded, so that Markdown's escapes, emphasis and table pipes do not count.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from paperanchor.paper import LoadedPaper
from paperanchor.parse.dom import CHROME_CLASSES, CHROME_TAGS, HtmlElement
from paperanchor.parse.inline import is_internal_name, without_error_arguments
from paperanchor.parse.pictures import text_boxes
from paperanchor.parse.sections import section_kind
from paperanchor.render.markdown import reference_line
from paperanchor.service import Paper, read
from paperanchor.tree import Reference, walk

# What is not the paper's text, and so not looked for in what `read` gives:
# - site chrome (the tags and classes of `paperanchor.parse.dom.is_chrome`): the site's;
# - the front matter (title, authors, keywords, dates, classification): the outline's fields, not
#   a section that `read` reads; the abstract is, and is probed against `read("abstract")`;
# - MathML's own text (LaTeXML's presentation and content trees, `x-llamapun` annotations):
#   math is its TeX, which is what is compared;
# - conversion errors (`ltx_ERROR`: `\hdashline`, undefined macros): LaTeXML's residue where it
#   stands, counted as errors, never the paper's words; so is what an undefined macro leaves
#   right after it (its optional argument, `[HTML]E19898` of `\cellcolor`) and an internal name
#   standing alone as a paragraph (`tcb@breakable`), as the parser reads them (inline.py);
# - a drawing's labels (a picture without a paragraph, list, display or code in its
#   foreignObjects: a graph's node names, axis labels): the drawing's, as the words in an image;
# - footnote, thanks and margin-note marks (`ltx_note_mark`, `ltx_tag_note`) and the line
#   numbers of listings and algorithms (`ltx_tag_listingline`): markers; a footnote's text is
#   probed as its own element, at the end of its section's read;
# - notes other than footnotes and endnotes (`\thanks`, affiliations, `\marginpar`): front
#   matter and marginalia the parser does not read as body text (inline.py's `_note`);
# - equation tables (`ltx_equation`, `ltx_equationgroup`): displays, read as their TeX by the
#   equation probes of test_corpus.py, not as cells; their numbers are labels;
# - LaTeXML's furniture (`ltx_rdf`, `ltx_pagination`, `ltx_listing_data`): not printed;
# - a citation printed as its entry's BibTeX key (`dyson2014graviton`, a conversion that could
#   not label it): the Markdown prints the entry's number instead (docs/parsing.md);
# - a figure's own loose text runs, beside its images and outside its caption, tabulars, code
#   and boxes of text (pgfplots' axis titles, a forest tree LaTeXML could not draw, printed as
#   its code): the drawing's; a figure is its images, caption and those blocks.
_NOT_TEXT = (
    frozenset(
        {
            "ltx_ERROR",
            "ltx_note_mark",
            "ltx_tag_note",
            "ltx_tag_listingline",
            "ltx_rdf",
            "ltx_pagination",
            "ltx_listing_data",
        }
    )
    | CHROME_CLASSES
)
_FRONT = frozenset(
    {
        "ltx_authors",
        "ltx_title_document",
        "ltx_keywords",
        "ltx_classification",
        "ltx_dates",
        "ltx_date",
        "ltx_subtitle",
    }
)
_EQUATIONS = frozenset({"ltx_equation", "ltx_equationgroup", "ltx_eqn_table"})
_FLOATS = frozenset({"ltx_figure", "ltx_table", "ltx_float"})
# Letters, or digits: "v0.14" and "$\approx$61" split alike however the Markdown spaces them.
_WORD = re.compile(r"[^\W\d_]+|\d+")
TEX = "application/x-tex"
# How far past an element's length its words may spread in the Markdown: room for the marks,
# link targets and repeated cells that the Markdown adds between them.
_SLACK = 40


def _classes(el: HtmlElement) -> frozenset[str]:
    return frozenset((el.get("class") or "").split())


def _tag(el: HtmlElement) -> str:
    tag = el.tag
    return tag.rpartition("}")[2].lower() if isinstance(tag, str) else ""


def words(text: str) -> list[str]:
    """Runs of letters, runs of digits; `*`, backticks and backslashes are dropped first on both
    sides, since Markdown's emphasis and escapes may sit inside a word (`**W**eb`, `o\\*net`)."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return _WORD.findall(folded.replace("*", "").replace("`", "").replace("\\", ""))


def _math_tex(el: HtmlElement) -> str:
    for node in el.iter():
        if _tag(node) == "annotation" and node.get("encoding") == TEX:
            return node.text or ""
    return el.get("alttext") or ""


def _is_note(cls: frozenset[str]) -> bool:
    return "ltx_note" in cls


def _skipped(el: HtmlElement, cls: frozenset[str]) -> bool:
    return _tag(el) in CHROME_TAGS or not cls.isdisjoint(_NOT_TEXT) or _is_note(cls)


def _alnum(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _is_key(link: HtmlElement, labels: dict[str, str]) -> bool:
    """Whether a citation link prints its entry's BibTeX key rather than its label (one word
    that is no part of the label its entry prints: `dyson2014graviton`, `GPT3`)."""
    href = link.get("href") or ""
    label = labels.get(href.rpartition("#")[2])
    if label is None:
        return False
    word = "".join(link.itertext()).strip().rstrip(",").strip()
    if not word or any(ch.isspace() for ch in word):
        return False
    return bool(_alnum(word)) and _alnum(word) not in _alnum(label)


def element_text(el: HtmlElement, labels: dict[str, str] | None = None) -> str:
    """The element's words as a reader sees them on the page (see the list above), math as its
    TeX; `labels`: the bibliography's printed labels by entry id, to know a citation printed
    as its key."""
    return _page_text(el, labels or {}, tex=True)


def _page_text(el: HtmlElement, labels: dict[str, str], *, tex: bool) -> str:
    """Text of the page under `el`, without what is not the paper's: math as its TeX, or
    (`tex=False`) as its characters (MathML's presentation text, never its annotations)."""
    out: list[str] = []
    stack: list[tuple[HtmlElement, bool]] = [(el, True)]
    while stack:
        node, opening = stack.pop()
        if not opening:
            tail = node.tail or ""
            out.append(without_error_arguments(tail) if "ltx_ERROR" in _classes(node) else tail)
            continue
        if node is not el:
            stack.append((node, False))
        if not isinstance(node.tag, str):
            continue
        cls = _classes(node)
        tag = _tag(node)
        if node is not el and _skipped(node, cls):
            continue
        if tag in ("annotation", "annotation-xml"):
            continue
        if tag == "math" and tex:
            out.append(f" {_math_tex(node)} ")
            continue
        if tag == "svg":
            for box in text_boxes(node):
                out.append(f" {_page_text(box, labels, tex=tex)} ")
            continue
        if node is not el and not cls.isdisjoint(_EQUATIONS):
            continue
        if labels and tag == "a" and "ltx_ref" in cls and _is_key(node, labels):
            continue
        out.append(" " if tag in ("td", "th", "br", "li") else "")
        out.append(node.text or "")
        stack.extend((child, True) for child in reversed(node))
    return "".join(out)


@dataclass(frozen=True)
class Miss:
    kind: str
    element_id: str
    section: str
    missing: int
    total: int
    sample: str


@dataclass
class PageProbe:
    elements: Counter[str]
    words: Counter[str]
    misses: list[Miss]
    labels: int
    label_misses: list[tuple[str, str, str]]
    """(entry id, the page's printed label, the Markdown line's start)."""


def _kind(el: HtmlElement, cls: frozenset[str], tag: str) -> str | None:
    """The kind of text-bearing element, or None for one the probe does not look at itself."""
    if "ltx_p" in cls and tag in ("p", "span"):
        in_picture = any(_tag(a) == "foreignobject" for a in el.iterancestors())
        return "picture text" if in_picture else "text"
    if tag in ("td", "th") or (tag == "span" and not cls.isdisjoint({"ltx_td", "ltx_th"})):
        return "cell"
    if tag == "figcaption" or "ltx_caption" in cls:
        return "caption"
    if "ltx_item" in cls and tag in ("li", "dt", "dd"):
        return "list item"
    if "ltx_title_theorem" in cls or ("ltx_title" in cls and "ltx_theorem" in _parent_cls(el)):
        return "theorem"
    if "ltx_note" in cls and not cls.isdisjoint({"ltx_role_footnote", "ltx_role_endnote"}):
        return "footnote"
    if not cls.isdisjoint({"ltx_acknowledgements", "ltx_acknowledgement"}):
        return "acknowledgements"
    if "ltx_bibblock" in cls:
        return "bibliography entry"
    if "ltx_float_algorithm" in cls:
        return "algorithm"
    return None


def _holds_tabular(el: HtmlElement) -> bool:
    return any("ltx_tabular" in _classes(node) for node in el.iter() if node is not el)


def _parent_cls(el: HtmlElement) -> frozenset[str]:
    parent = el.getparent()
    return _classes(parent) if parent is not None else frozenset()


def _note_text(el: HtmlElement, labels: dict[str, str]) -> str:
    content = next(
        (n for n in el.iter() if "ltx_note_content" in _classes(n)),
        None,
    )
    return element_text(content, labels) if content is not None else ""


def _elements(document: HtmlElement) -> Iterator[tuple[str, HtmlElement, str]]:
    """(kind, element, home) for each text-bearing element: home is the id of the top-level
    section that holds it, "abstract", or "" for what sits outside any section."""
    stack: list[tuple[HtmlElement, str, bool]] = [
        (child, "", False) for child in reversed(list(document))
    ]
    while stack:
        node, home, drawing = stack.pop()
        if not isinstance(node.tag, str):
            continue
        cls = _classes(node)
        tag = _tag(node)
        if _tag(node) in CHROME_TAGS or not cls.isdisjoint(_NOT_TEXT) or not cls.isdisjoint(_FRONT):
            continue
        if not home:
            if "ltx_abstract" in cls:
                home = "abstract"
            elif section_kind(node) is not None and node.get("id"):
                home = node.get("id")
        if "ltx_note" in cls and not cls.isdisjoint({"ltx_role_footnote", "ltx_role_endnote"}):
            yield "footnote", node, home
            # a footnote's inside is the footnote's, read at its section's end
            for inner in node.iter():
                if inner is not node and "ltx_note_content" in _classes(inner):
                    stack.append((inner, home, False))
            continue
        if _is_note(cls):
            continue
        if tag == "math" or not cls.isdisjoint(_EQUATIONS):
            continue
        if tag == "svg":
            for box in text_boxes(node):
                stack.append((box, home, False))
            continue
        if tag == "figure" or not cls.isdisjoint(_FLOATS):
            drawing = "ltx_figure" in cls and "ltx_table" not in cls
        elif (
            tag in ("figcaption", "pre")
            or "ltx_tabular" in cls
            or not cls.isdisjoint({"ltx_caption", "ltx_listing", "ltx_verbatim"})
        ):
            drawing = False
        kind = _kind(node, cls, tag)
        if kind == "cell":
            yield kind, node, home
            continue  # a cell's words are the cell's, nested tabulars included
        if kind == "text" and (drawing or _holds_tabular(node)):
            kind = None  # a drawing's words, or a line holding a tabular: its cells are probed
        if kind is not None and kind != "footnote":
            yield kind, node, home
        stack.extend((child, home, drawing) for child in reversed(list(node)))


def _found(needle: list[str], haystack: list[str], positions: dict[str, list[int]]) -> int:
    """How many of `needle`'s words the best window of `haystack` holds in order."""
    if not needle:
        return 0
    best = 0
    starts: set[int] = set()
    for offset, word in enumerate(needle[:3]):
        starts.update(max(0, p - offset) for p in positions.get(word, ())[:2000])
    span = 2 * len(needle) + _SLACK
    for start in sorted(starts):
        at, found = start, 0
        end = min(len(haystack), start + span)
        for word in needle:
            try:
                at = haystack.index(word, at, end) + 1
                found += 1
            except ValueError:
                continue
        if found > best:
            best = found
            if best == len(needle):
                break
    return best


def _document_element(root: HtmlElement) -> HtmlElement:
    articles = [
        el
        for el in root.iter()
        if isinstance(el.tag, str)
        and "ltx_document" in _classes(el)
        and _tag(el) != "footer"
        and not any(_tag(a) == "footer" for a in el.iterancestors())
    ]
    return next((a for a in articles if _tag(a) == "article"), articles[0])


def probe(paper: Paper, root: HtmlElement) -> PageProbe:
    """The page's text-bearing elements looked for in what `read` gives of their sections."""
    document = _document_element(root)
    index = paper.index
    texts: dict[str, tuple[list[str], dict[str, list[int]]]] = {}

    def shown(home: str) -> tuple[list[str], dict[str, list[int]]]:
        if home not in texts:
            if home and home in index.nodes:
                markdown = read(paper, home, 100_000).markdown
                if len(markdown) > 350_000:  # a section past one read's budget: read in pages
                    markdown = paper.markdown(home)
            else:
                markdown = paper.markdown()
            markdown = _LT.sub("<", markdown)  # the `<` our Markdown writes as an entity
            found = words(_LINK_TARGET.sub("", markdown).replace("<http", "http"))
            positions: dict[str, list[int]] = {}
            for at, word in enumerate(found):
                positions.setdefault(word, []).append(at)
            texts[home] = (found, positions)
        return texts[home]

    result = PageProbe(Counter(), Counter(), [], 0, [])
    items = [i for i in document.iter("li") if "ltx_bibitem" in _classes(i)]
    tags = {item.get("id") or "": _label_tag(item) for item in items}
    labels = {entry: printed_label(tag) for entry, tag in tags.items() if tag is not None}
    for kind, el, home in _elements(document):
        text = _note_text(el, labels) if kind == "footnote" else element_text(el, labels)
        if is_internal_name(text):
            continue
        needle = words(text)
        if not needle:
            continue
        haystack, positions = shown(home)
        found = _found(needle, haystack, positions)
        result.elements[kind] += 1
        result.words[kind] += len(needle)
        if found < len(needle):
            element_id = el.get("id") or ""
            sample = " ".join(text.split())[:90]
            result.misses.append(
                Miss(kind, element_id, home, len(needle) - found, len(needle), sample)
            )
    references = {
        v.node.id: v.node for v in walk(paper.document.roots()) if isinstance(v.node, Reference)
    }
    for entry, tag in tags.items():
        if tag is None:
            continue
        printed = labels[entry]
        reference = references.get(entry)
        line = reference_line(reference) if reference is not None else ""
        shown_line = " ".join(_MARKDOWN_ESCAPE.sub(r"\1", line.removeprefix("- ")).split())
        result.labels += 1
        if not printed or not shown_line.startswith(printed):
            result.label_misses.append((entry, printed, shown_line[:40]))
    return result


def _label_tag(item: HtmlElement) -> HtmlElement | None:
    return next((c for c in item if "ltx_tag" in _classes(c)), None)


_MARKDOWN_ESCAPE = re.compile(r"\\(.)")
# A link's target is not on the page, and may sit inside a word the page prints whole
# (`[f](…)or` for "for"); an autolink's `<` may join a word to a URL the page prints after it.
_LT = re.compile(r"(?<!\\)&lt;")
_LINK_TARGET = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*\)")


def printed_label(tag: HtmlElement) -> str:
    """A bibliography label as the page prints it: its text, math as its characters (`HNA+17`),
    never the annotations LaTeXML keeps beside it nor a saved page's "back to" arrow."""
    return " ".join(unicodedata.normalize("NFKC", _page_text(tag, {}, tex=False)).split())


def main() -> int:
    from tests.corpus_pages import PAIR_PAGES, PAPER_PAGES, page_root, parsed

    elements: Counter[str] = Counter()
    word_total: Counter[str] = Counter()
    missed_elements: Counter[str] = Counter()
    missed_words: Counter[str] = Counter()
    labels = label_misses = 0
    verbose = "-v" in sys.argv
    for name in PAPER_PAGES + PAIR_PAGES:
        paper = Paper.open(LoadedPaper(parsed(name), f"local/{name}", f"local/{name}"))
        found = probe(paper, page_root(name))
        elements.update(found.elements)
        word_total.update(found.words)
        labels += found.labels
        label_misses += len(found.label_misses)
        for miss in found.misses:
            missed_elements[miss.kind] += 1
            missed_words[miss.kind] += miss.missing
            if verbose:
                print(
                    f"{name}\t{miss.kind}\t{miss.element_id}\t{miss.section}\t"
                    f"{miss.missing}/{miss.total}\t{miss.sample}"
                )
        if verbose:
            for entry, printed, start in found.label_misses[:5]:
                print(f"{name}\tlabel\t{entry}\t{printed!r}\t{start!r}")
        if found.misses or found.label_misses:
            print(
                f"# {name}: {len(found.misses)} elements, "
                f"{sum(m.missing for m in found.misses)} words missing; "
                f"{len(found.label_misses)} of {found.labels} labels not as printed"
            )
    for kind in sorted(elements):
        print(
            f"{kind:20} elements {missed_elements[kind]:5} of {elements[kind]:6} missing, "
            f"words {missed_words[kind]:6} of {word_total[kind]:7} missing"
        )
    print(
        f"{'all':20} elements {sum(missed_elements.values()):5} of {sum(elements.values()):6} "
        f"missing, words {sum(missed_words.values()):6} of {sum(word_total.values()):7} missing"
    )
    print(f"labels not as printed: {label_misses} of {labels}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
