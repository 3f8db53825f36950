"""TeX -> MathML for the section page, with bounded cost and nothing of the paper run as markup.

latex2mathml parses the TeX; its own serialiser is not used: it copies `\\text{<script>}` into
the output unescaped (it un-escapes the whole string at the end) and passes `\\href{javascript:…}`,
`\\style{…}`, `\\class{…}` and `\\rule{1000cm}{1000cm}` through as attributes. Its element tree is
written out here instead, through an allowlist of MathML Core elements and attributes, every
text escaped and every length bounded. A formula that cannot be converted, or that would pass a
page's budget, is shown as its TeX, as text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from xml.etree.ElementTree import Element

from latex2mathml.converter import convert_to_element

# latex2mathml costs about 15 µs per character of TeX (8,000 characters of `x+x+…`: 0.12 s;
# the corpus's longest formula, 1,788 characters: 26 ms) and 0.29 ms per formula on average
# over the corpus's 6,707 formulas. A formula far longer than any in the corpus is shown as
# TeX; a page converts at most so many characters and formulas, about 1.5 s of the worst kind,
# while the most formula-heavy corpus paper, 1311.0066, holds 34,000 characters of TeX in all.
MAX_FORMULA_CHARS = 8_000
PAGE_TEX_CHARS = 100_000
PAGE_FORMULAS = 20_000

# MathML Core's elements (what Chromium, Firefox and Safari draw), plus those latex2mathml
# writes that degrade to a row. Anything else is dropped with its subtree kept as a row.
# fmt: off
_ELEMENTS = frozenset((
    "math", "mrow", "mi", "mn", "mo", "mtext", "ms", "mspace", "msub", "msup", "msubsup",
    "munder", "mover", "munderover", "mfrac", "msqrt", "mroot", "mstyle", "mpadded", "mphantom",
    "mtable", "mtr", "mtd", "mmultiscripts", "mprescripts", "none", "merror", "menclose",
    "mfenced", "semantics",
))
_ROW = "mrow"
# Attributes that only change layout. No href, style, class, id, colour or event handler.
_ATTRIBUTES = frozenset((
    "mathvariant", "stretchy", "fence", "form", "separator", "accent", "accentunder",
    "movablelimits", "largeop", "symmetric", "minsize", "maxsize", "lspace", "rspace",
    "linethickness", "displaystyle", "scriptlevel", "columnalign", "rowalign", "columnspacing",
    "rowspacing", "columnlines", "rowlines", "frame", "width", "height", "depth", "voffset",
    "notation", "linebreak", "open", "close", "separators", "columnspan", "rowspan",
))
_LENGTHS = frozenset((
    "minsize", "maxsize", "lspace", "rspace", "width", "height", "depth", "voffset",
    "columnspacing", "rowspacing", "linethickness",
))
_NAMED_SPACES = frozenset((
    "veryverythinmathspace", "verythinmathspace", "thinmathspace", "mediummathspace",
    "thickmathspace", "verythickmathspace", "veryverythickmathspace",
    "negativeveryverythinmathspace", "negativeverythinmathspace", "negativethinmathspace",
    "negativemediummathspace", "negativethickmathspace", "negativeverythickmathspace",
    "negativeveryverythickmathspace",
))
# fmt: on
_VALUE = re.compile(r"[A-Za-z0-9 .%+\-]{1,40}")
_LENGTH = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(em|ex|mu|pt|px|%)?")
# em per unit; a length beyond MAX_EM (a `\hspace{1000cm}`, `\rule`) is dropped, so a formula
# cannot cover the page. cm, mm and in are not MathML Core units and are dropped too.
_EM_PER = {"em": 1.0, "ex": 0.5, "mu": 1 / 18, "pt": 0.1, "px": 1 / 16, "": 1.0, "%": 0.01}
MAX_EM = 12.0
_CHAR_REFERENCE = re.compile(r"&#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}));")


@dataclass
class MathBudget:
    """What one page may still spend on conversions (the constants above)."""

    chars: int = PAGE_TEX_CHARS
    formulas: int = PAGE_FORMULAS


def mathml(tex: str, *, display: bool, budget: MathBudget) -> str:
    """The formula as a `<math>` element; its TeX as escaped text when it cannot be converted."""
    tex = tex.strip()
    if not tex:
        return ""
    if len(tex) > MAX_FORMULA_CHARS or len(tex) > budget.chars or budget.formulas <= 0:
        return tex_fallback(tex, display=display)
    budget.chars -= len(tex)
    budget.formulas -= 1
    try:
        element = convert_to_element(_normalised(tex), display="block" if display else "inline")
    except Exception:  # latex2mathml raises its own errors, and RecursionError on deep nesting
        return tex_fallback(tex, display=display)
    return serialise(element, display=display)


# latex2mathml lays out `split` and `array` as tables but writes the `&` of `aligned` and
# `gathered` as a letter: they are the same layouts under other names. LaTeXML writes sized
# delimiters with braces (`\bigl{(}`), which latex2mathml reads as a brace and a group.
_ALIGNED = re.compile(r"\\(begin|end)\{(?:aligned|align\*?|flalign\*?|eqnarray\*?)\}")
_GATHERED = re.compile(r"\\(begin|end)\{(?:gathered|gather\*?)\}")
_BRACED_DELIMITER = re.compile(
    r"\\(left|right|middle|[bB]igg?[lrm]?)\s*\{(\\[a-zA-Z]+|\\[{}|.]|[^{}\s\\])\}"
)


def _normalised(tex: str) -> str:
    if "{" in tex and ("\\big" in tex or "\\Big" in tex or "\\left" in tex):
        tex = _BRACED_DELIMITER.sub(lambda m: f"\\{m[1]}{m[2]} ", tex)
    if "\\begin" not in tex:
        return tex
    tex = _ALIGNED.sub(lambda m: f"\\{m[1]}{{split}}", tex)
    return _GATHERED.sub(lambda m: "\\begin{array}{c}" if m[1] == "begin" else "\\end{array}", tex)


def tex_fallback(tex: str, *, display: bool) -> str:
    delimiter = "$$" if display else "$"
    kind = "tex display" if display else "tex"
    return f'<code class="{kind}">{escape(delimiter + tex + delimiter)}</code>'


def serialise(root: Element, *, display: bool) -> str:
    """latex2mathml's tree as MathML through the allowlists, without recursion."""
    out: list[str] = []
    # (element, closing tag) pairs; a closing tag alone is written when popped
    stack: list[tuple[Element | None, str]] = [(root, "")]
    while stack:
        element, closing = stack.pop()
        if element is None:
            out.append(closing)
            continue
        tag = _tag(element.tag)
        name = tag if tag in _ELEMENTS else _ROW
        if tag == "math":
            attributes = ' display="block"' if display else ""
            out.append(f'<math xmlns="http://www.w3.org/1998/Math/MathML"{attributes}>')
        else:
            out.append(f"<{name}{_attributes(element)}>")
        out.append(_text(element.text, element.get("mathvariant"), tag))
        tail = _text(element.tail, None, "") if element is not root else ""
        stack.append((None, f"</{name}>{tail}"))
        for child in reversed(element):
            stack.append((child, ""))
    return "".join(out)


def _tag(tag: object) -> str:
    name = str(tag)
    return name.rpartition("}")[2] if name.startswith("{") else name


def _attributes(element: Element) -> str:
    parts: list[str] = []
    for name, value in element.attrib.items():
        if name not in _ATTRIBUTES or not _VALUE.fullmatch(value):
            continue
        if name in _LENGTHS and not _bounded_length(value):
            continue
        if name == "mathvariant" and value != "normal":
            continue  # drawn with Unicode's mathematical letters instead (_styled)
        parts.append(f' {name}="{escape(value, quote=True)}"')
    return "".join(parts)


def _bounded_length(value: str) -> bool:
    value = value.strip()
    if value in _NAMED_SPACES:
        return True
    match = _LENGTH.fullmatch(value)
    if match is None:
        return False
    return abs(float(match[1])) * _EM_PER[match[2] or ""] <= MAX_EM


def _text(text: str | None, variant: str | None, tag: str) -> str:
    if not text:
        return ""
    decoded = _CHAR_REFERENCE.sub(_character, text)
    if variant and variant != "normal" and tag in ("mi", "mn"):
        decoded = "".join(_styled(variant, char) for char in decoded)
    return escape(decoded, quote=False)


def _character(match: re.Match[str]) -> str:
    """latex2mathml writes symbols as character references in its text (`&#x02211;`)."""
    code = int(match[1], 16) if match[1] else int(match[2])
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF or code < 0x20 or code == 0x7F:
        return "\ufffd"
    return chr(code)


# mathvariant is not drawn by MathML Core (only "normal" is): `\mathbb{R}`, `\mathbf{x}` and
# `\mathcal{L}` are written with Unicode's mathematical alphanumeric symbols, as Core advises.
_VARIANT_NAMES = {
    "bold": "BOLD",
    "italic": "ITALIC",
    "bold-italic": "BOLD ITALIC",
    "double-struck": "DOUBLE-STRUCK",
    "script": "SCRIPT",
    "bold-script": "BOLD SCRIPT",
    "fraktur": "FRAKTUR",
    "bold-fraktur": "BOLD FRAKTUR",
    "sans-serif": "SANS-SERIF",
    "bold-sans-serif": "SANS-SERIF BOLD",
    "sans-serif-italic": "SANS-SERIF ITALIC",
    "sans-serif-bold-italic": "SANS-SERIF BOLD ITALIC",
    "monospace": "MONOSPACE",
}
# Letters Unicode had encoded before the mathematical block, in Letterlike Symbols.
_OLDER_NAMES = {"DOUBLE-STRUCK": "DOUBLE-STRUCK", "SCRIPT": "SCRIPT", "FRAKTUR": "BLACK-LETTER"}


@lru_cache(maxsize=4096)
def _styled(variant: str, char: str) -> str:
    style = _VARIANT_NAMES.get(variant)
    if style is None:
        return char
    try:
        name = unicodedata.name(char)
    except ValueError:
        return char
    # "LATIN CAPITAL LETTER A" -> "CAPITAL A", "GREEK SMALL LETTER ALPHA" -> "SMALL ALPHA"
    for prefix in ("LATIN ", "GREEK "):
        if name.startswith(prefix):
            name = name[len(prefix) :].replace("LETTER ", "")
            break
    else:
        if not name.startswith("DIGIT "):
            return char
    candidates = [f"MATHEMATICAL {style} {name}"]
    if style in _OLDER_NAMES:
        candidates.append(f"{_OLDER_NAMES[style]} {name}")
    if style == "ITALIC" and name == "SMALL H":
        candidates.append("PLANCK CONSTANT")
    for candidate in candidates:
        try:
            return unicodedata.lookup(candidate)
        except KeyError:
            continue
    return char
