"""Text -> the LaTeX of a BibTeX field value: our escaping rules (contract §4 BibTeX).

arXiv's titles and abstracts are text that authors wrote with some TeX in it. We read that
TeX the way arXiv's abstract pages show it, then write pure-ASCII LaTeX that compiles with
bibtex and pdflatex in a default `article` (OT1 fonts, no packages), and that runs nothing:

- `$…$` and `\\(…\\)` stay math when everything in them is on a whitelist of math commands
  (LaTeX's own, and a few of amsmath/amssymb that `needs` reports so the .bib can provide a
  fallback); anything else in a formula (`\\input`, `\\write18`, `^^5c`, `%`, `#`, `&`,
  unbalanced braces) makes the whole formula text, escaped.
- Outside math, TeX accents (`\\"u`, `{\\'e}`, `\\ss`) and escaped specials (`\\&`, `\\%`) are
  read as the characters they print; unescaped braces are grouping and are dropped; every
  other backslash is a literal backslash. The characters are then written back: specials
  escaped (`\\&`, `{\\textbackslash}`), accented letters as accent commands (`{\\"u}`), Greek and
  math symbols as math (`{$\\alpha$}`), and a character that pdflatex cannot set in OT1 as
  the visible marker `[U+XXXX]`.
- With `protect`, words that styles must not lower-case are braced: acronyms and CamelCase
  (`{BERT}`, `{ComicScene154}`, `{iPhone}`), single capitals after the first word (`Part {I}`),
  and every formula (`{$N$}`).

Every value is ASCII with balanced braces, whatever the input (checked on the way out).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# BibTeX keeps a formatted field in a 200,000-character global string (TeX Live 2022's
# "global-string-size"); a 30,000-author list overflowed it and took bibtex 2 min 11 s.
# 10,000 characters is thirty times a long title and five times a long printed reference.
MAX_FIELD_CHARS = 10_000
MAX_MATH_CHARS = 1_000

# -- what TeX the input may contain ----------------------------------------------------------

_ACCENT_SYMBOLS = {
    '"': "\u0308",
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
}
_ACCENT_LETTERS = {
    "u": "\u0306",
    "v": "\u030c",
    "H": "\u030b",
    "c": "\u0327",
    "k": "\u0328",
    "r": "\u030a",
    "d": "\u0323",
    "b": "\u0331",
}
_NAMED_LETTERS = {
    "ss": "ß",
    "o": "ø",
    "O": "Ø",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "aa": "å",
    "AA": "Å",
    "l": "ł",
    "L": "Ł",
    "i": "ı",
    "j": "ȷ",
    "ldots": "…",
    "dots": "…",
    "textendash": "–",
    "textemdash": "—",
}
_ESCAPED = set("&%$#_{}")
_SPACES = {" ": " ", ",": " ", ";": " ", ":": " ", "!": "", "-": "", "/": "", "\\": " "}

# -- what we write ---------------------------------------------------------------------------

_SAFE_ASCII = set(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 !\"'()*+,-./:;=?@[]`"
)
_ASCII_OUT = {
    "#": "\\#",
    "$": "\\$",
    "%": "\\%",
    "&": "\\&",
    "_": "\\_",
    "{": "{\\textbraceleft}",
    "}": "{\\textbraceright}",
    "\\": "{\\textbackslash}",
    "~": "{\\textasciitilde}",
    "^": "{\\textasciicircum}",
    "<": "{$<$}",
    ">": "{$>$}",
    "|": "{$|$}",
}
# Characters with an exact OT1 rendering (checked with pdflatex in a default article).
_TEXT_OUT = {
    "ß": "{\\ss}",
    "ø": "{\\o}",
    "Ø": "{\\O}",
    "æ": "{\\ae}",
    "Æ": "{\\AE}",
    "œ": "{\\oe}",
    "Œ": "{\\OE}",
    "å": "{\\aa}",
    "Å": "{\\AA}",
    "ł": "{\\l}",
    "Ł": "{\\L}",
    "ı": "{\\i}",
    "ȷ": "{\\j}",
    "\u00a0": "~",
    "–": "--",
    "—": "---",
    "‒": "--",
    "‐": "-",
    "‑": "-",
    "‘": "`",
    "’": "'",
    "‚": ",",
    "“": "``",
    "”": "''",
    "„": ",,",
    "…": "{\\ldots}",
    "•": "{\\textbullet}",
    "©": "{\\textcopyright}",
    "®": "{\\textregistered}",
    "§": "{\\S}",
    "¶": "{\\P}",
    "£": "{\\pounds}",
    "¡": "{!`}",
    "¿": "{?`}",
    "†": "{\\dag}",
    "‡": "{\\ddag}",
    "\u2009": " ",
    "\u2002": " ",
    "\u2003": " ",
    "\u202f": " ",
}
_COMBINING_OUT = {
    "\u0300": "`",
    "\u0301": "'",
    "\u0302": "^",
    "\u0303": "~",
    "\u0304": "=",
    "\u0306": "u",
    "\u0307": ".",
    "\u0308": '"',
    "\u030a": "r",
    "\u030b": "H",
    "\u030c": "v",
    "\u0327": "c",
    "\u0323": "d",
    "\u0331": "b",
}
_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon",
    "ζ": "zeta", "η": "eta", "θ": "theta", "ϑ": "vartheta", "ι": "iota", "κ": "kappa",
    "λ": "lambda", "μ": "mu", "µ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ϖ": "varpi",
    "ρ": "rho", "ϱ": "varrho", "σ": "sigma", "ς": "varsigma", "τ": "tau", "υ": "upsilon",
    "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega", "Γ": "Gamma",
    "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi", "Σ": "Sigma",
    "Υ": "Upsilon", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}  # fmt: skip
_GREEK_LATIN_CAPITALS = {
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Χ": "X",
}  # fmt: skip
_MATH_SYMBOLS = {
    "≤": "\\leq", "≥": "\\geq", "≠": "\\neq", "≈": "\\approx", "∼": "\\sim", "≃": "\\simeq",
    "≡": "\\equiv", "∝": "\\propto", "±": "\\pm", "∓": "\\mp", "×": "\\times", "÷": "\\div",
    "·": "\\cdot", "∙": "\\cdot", "⋅": "\\cdot", "∗": "*", "∘": "\\circ", "°": "^\\circ",
    "∞": "\\infty", "∂": "\\partial", "∇": "\\nabla", "√": "\\surd", "∀": "\\forall",
    "∃": "\\exists", "∅": "\\emptyset", "∈": "\\in", "∉": "\\notin", "∋": "\\ni",
    "⊂": "\\subset", "⊃": "\\supset", "⊆": "\\subseteq", "⊇": "\\supseteq", "∪": "\\cup",
    "∩": "\\cap", "∧": "\\wedge", "∨": "\\vee", "¬": "\\neg", "⊕": "\\oplus",
    "⊗": "\\otimes", "→": "\\rightarrow", "←": "\\leftarrow", "↔": "\\leftrightarrow",
    "⇒": "\\Rightarrow", "⇐": "\\Leftarrow", "⇔": "\\Leftrightarrow", "↦": "\\mapsto",
    "↑": "\\uparrow", "↓": "\\downarrow", "∑": "\\sum", "∏": "\\prod", "∫": "\\int",
    "∮": "\\oint", "ℓ": "\\ell", "ℏ": "\\hbar", "ℜ": "\\Re", "ℑ": "\\Im", "ℵ": "\\aleph",
    "′": "\\prime", "″": "\\prime\\prime", "⟨": "\\langle", "⟩": "\\rangle", "‖": "\\|",
    "−": "-", "⊥": "\\perp", "∥": "\\parallel", "≪": "\\ll", "≫": "\\gg", "≺": "\\prec",
    "≻": "\\succ", "⊢": "\\vdash", "∠": "\\angle", "△": "\\triangle", "²": "^{2}",
    "³": "^{3}", "¹": "^{1}", "¼": "\\frac{1}{4}", "½": "\\frac{1}{2}", "¾": "\\frac{3}{4}",
}  # fmt: skip

# LaTeX's own math commands: every one is defined in a default article.
KERNEL_MATH = frozenset(
    """
    alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu
    xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta
    Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega
    pm mp times div cdot ast star circ bullet cap cup vee wedge oplus ominus otimes oslash
    odot dagger ddagger setminus wr amalg uplus sqcap sqcup triangleleft triangleright
    leq le geq ge neq ne equiv sim simeq approx cong propto perp mid parallel subset supset
    subseteq supseteq in ni notin ll gg prec succ preceq succeq asymp doteq models vdash dashv
    bowtie smile frown sqsubseteq sqsupseteq
    to rightarrow leftarrow leftrightarrow Rightarrow Leftarrow Leftrightarrow mapsto
    longrightarrow longleftarrow longleftrightarrow Longrightarrow Longleftarrow
    Longleftrightarrow longmapsto uparrow downarrow updownarrow Uparrow Downarrow Updownarrow
    hookrightarrow hookleftarrow rightharpoonup rightharpoondown leftharpoonup
    leftharpoondown nearrow searrow swarrow nwarrow iff gets
    infty partial nabla forall exists neg lnot emptyset ell hbar imath jmath Re Im aleph wp
    prime angle triangle surd top bot flat natural sharp backslash ldots cdots vdots ddots
    dots clubsuit diamondsuit heartsuit spadesuit
    sum prod int oint coprod bigcup bigcap bigoplus bigotimes bigodot bigvee bigwedge
    biguplus bigsqcup
    sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh coth log ln lg exp det dim
    ker hom arg deg gcd inf sup lim liminf limsup max min Pr
    frac sqrt overline underline hat tilde bar vec dot ddot acute grave breve check widehat
    widetilde overbrace underbrace stackrel
    left right big Big bigg Bigg bigl bigr Bigl Bigr langle rangle lfloor rfloor lceil rceil
    lbrace rbrace vert Vert
    mathrm mathbf mathit mathsf mathtt mathcal mathnormal mbox
    quad qquad
    """.split()  # noqa: SIM905 - a word list reads better as words
)
# amsmath/amssymb commands arXiv titles use, with what a .bib can provide when the document
# has not loaded the package (`\providecommand` does nothing when it has).
AMS_FALLBACKS = {
    "mathbb": "\\providecommand{\\mathbb}[1]{\\mathbf{#1}}",
    "mathfrak": "\\providecommand{\\mathfrak}[1]{\\mathcal{#1}}",
    "mathscr": "\\providecommand{\\mathscr}[1]{\\mathcal{#1}}",
    "boldsymbol": "\\providecommand{\\boldsymbol}[1]{\\mathbf{#1}}",
    "text": "\\providecommand{\\text}[1]{\\mbox{#1}}",
    "operatorname": "\\providecommand{\\operatorname}[1]{\\mathrm{#1}}",
    "varnothing": "\\providecommand{\\varnothing}{\\emptyset}",
    "lesssim": "\\providecommand{\\lesssim}{\\stackrel{<}{\\sim}}",
    "gtrsim": "\\providecommand{\\gtrsim}{\\stackrel{>}{\\sim}}",
    "leqslant": "\\providecommand{\\leqslant}{\\leq}",
    "geqslant": "\\providecommand{\\geqslant}{\\geq}",
    "implies": "\\providecommand{\\implies}{\\Longrightarrow}",
    "dfrac": "\\providecommand{\\dfrac}{\\frac}",
    "tfrac": "\\providecommand{\\tfrac}{\\frac}",
}
_ONE_ARG = frozenset(
    """
    sqrt overline underline hat tilde bar vec dot ddot acute grave breve check widehat
    widetilde overbrace underbrace mathrm mathbf mathit mathsf mathtt mathcal mathnormal mbox
    mathbb mathfrak mathscr boldsymbol text operatorname
    """.split()  # noqa: SIM905 - a word list reads better as words
)
_TWO_ARGS = frozenset({"frac", "stackrel", "dfrac", "tfrac"})
_TEXT_ARGS = frozenset({"mbox", "text"})
_MATH_ASCII = set(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 +-=*/<>()[]|.,;:!?'^_{}~@\""
)
_MATH_SHORT = set(",;:! {}|")
_COMMAND = re.compile(r"[A-Za-z]+")
_SPACE_RUNS = re.compile(r"  +")


@dataclass(frozen=True, slots=True)
class Tex:
    """A field value's LaTeX, and the amsmath/amssymb commands it uses (for `@preamble`)."""

    value: str
    needs: frozenset[str] = frozenset()


def tex(text: str, *, protect: bool = True) -> Tex:
    """The BibTeX-safe LaTeX of `text`; with `protect`, words styles must not lower-case braced."""
    clean = _clean(text)
    out: list[str] = []
    needs: set[str] = set()
    first_word = True
    for kind, piece, written_as in _segments(clean):
        if kind == "math":
            formula = _math(piece)
            if formula is not None:
                value, used = formula
                out.append("{$" + value + "$}")
                needs |= used
                first_word = False
                continue
            piece = written_as  # not a formula we can keep: its text, escaped
        written, first_word = _text(_decode(piece), protect, first_word)
        out.append(written)
    value = "".join(out).strip()
    _check(value)
    return Tex(value, frozenset(needs))


def plain(text: str) -> str:
    """The characters `text` prints: TeX accents and escapes read, braces dropped, math kept."""
    out = []
    for kind, piece, written_as in _segments(_clean(text)):
        out.append(written_as if kind == "math" else _decode(piece))
    return "".join(out)


def ascii_fold(text: str) -> str:
    """Lower-case ASCII letters and digits of `text`: accents dropped (ü -> u, ß -> ss)."""
    folded = []
    for char in unicodedata.normalize("NFKD", _decode(_clean(text))):
        if unicodedata.combining(char):
            continue
        char = _FOLD.get(char, char)
        folded.append(char.lower() if char.isascii() else "")
    return "".join(c for c in "".join(folded) if c.isalnum())


_FOLD = {
    "ß": "ss", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ł": "l",
    "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "ı": "i", "ȷ": "j",
}  # fmt: skip


# -- input -----------------------------------------------------------------------------------


def _clean(text: str) -> str:
    """Control, format and surrogate characters dropped, whitespace squashed, length capped."""
    text = str(text)
    if not (text.isascii() and text.isprintable()):  # printable ASCII: nothing to drop
        kept = []
        for char in text:
            if char in "\t\n\r\f\v":
                kept.append(" ")
            elif unicodedata.category(char) not in ("Cc", "Cf", "Cs"):
                kept.append(char)
        text = "".join(kept)
    squashed = " ".join(text.split())
    if len(squashed) > MAX_FIELD_CHARS:
        cut = squashed[: MAX_FIELD_CHARS - 1]
        squashed = cut[: cut.rfind(" ")] if " " in cut else cut
        squashed += "…"
    return squashed


def _segments(text: str) -> list[tuple[str, str, str]]:
    """Split into ("text", …) and ("math", formula, as written) pieces; an unpaired `$` is text."""
    if "$" not in text and "\\(" not in text:
        return [("text", text, text)] if text else []
    pieces: list[tuple[str, str, str]] = []
    buffer: list[str] = []
    # a closer not found from one place is not found from any later one: remembering it keeps
    # "\\(" * 5,000 linear (it took 45 s)
    hopeless: set[str] = set()
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        opener, closer = 0, ""
        if char == "\\" and i + 1 < n:
            if text[i + 1] != "(":
                buffer.append(text[i : i + 2])
                i += 2
                continue
            opener, closer = 2, "\\)"
        elif char == "$":
            opener, closer = (2, "$$") if text.startswith("$$", i) else (1, "$")
        if closer and closer not in hopeless:
            end = _closing(text, i + opener, closer)
            if end is None:
                hopeless.add(closer)
            elif end > i + opener:
                pieces.append(("text", "".join(buffer), ""))
                buffer = []
                pieces.append(("math", text[i + opener : end], text[i : end + len(closer)]))
                i = end + len(closer)
                continue
        buffer.append(char)
        i += 1
    pieces.append(("text", "".join(buffer), ""))
    return [(kind, piece, raw or piece) for kind, piece, raw in pieces if piece]


def _closing(text: str, start: int, closer: str) -> int | None:
    """Where `closer` next stands from `start`, escaped pairs (`\\$`) skipped; None if nowhere."""
    if closer.startswith("\\"):
        found = text.find(closer, start)
        return None if found < 0 else found
    i, n = start, len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(closer, i):
            return i
        i += 1
    return None


def _decode(text: str) -> str:
    """Outside math: TeX accents, named letters and escaped specials -> characters."""
    if "\\" not in text and "{" not in text and "}" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in "{}":
            i += 1  # grouping prints nothing
            continue
        if char != "\\" or i + 1 >= n:
            out.append(char)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _ESCAPED:
            out.append(nxt)
            i += 2
        elif nxt in _ACCENT_SYMBOLS:
            base, i = _accent_argument(text, i + 2)
            out.append(_accented(base, _ACCENT_SYMBOLS[nxt], nxt))
        elif nxt in _SPACES:
            out.append(_SPACES[nxt])
            i += 2
        elif nxt.isascii() and nxt.isalpha():
            name = _COMMAND.match(text, i + 1)
            assert name is not None
            word = name.group()
            after = name.end()
            if word in _ACCENT_LETTERS and after < n and text[after] in "{ ":
                base, i = _accent_argument(text, after + 1 if text[after] == " " else after)
                out.append(_accented(base, _ACCENT_LETTERS[word], word))
            elif word in _NAMED_LETTERS:
                out.append(_NAMED_LETTERS[word])
                if text.startswith("{}", after):
                    i = after + 2
                elif after < n and text[after] == " ":
                    i = after + 1  # the space that ends a control word prints nothing
                else:
                    i = after
            else:
                out.append("\\" + word)  # any other command is literal text
                i = after
        else:
            out.append("\\")
            i += 1
    # dropped braces can leave two spaces where the source showed one
    return _SPACE_RUNS.sub(" ", "".join(out))


def _accent_argument(text: str, i: int) -> tuple[str, int]:
    """The letter an accent applies to: `x`, `{x}`, `\\i`, `{\\i}`; "" when there is none."""
    n = len(text)
    while i < n and text[i] == " ":
        i += 1  # an accent's argument, like any macro's, may follow spaces
    braced = i < n and text[i] == "{"
    j = i + 1 if braced else i
    if text.startswith("\\i", j) and not text[j + 2 : j + 3].isalpha():
        base, j = "i", j + 2
    elif text.startswith("\\j", j) and not text[j + 2 : j + 3].isalpha():
        base, j = "j", j + 2
    elif j < n and text[j].isalpha():
        base, j = text[j], j + 1
    else:
        base = ""
    if braced:
        while j < n and text[j] == " ":
            j += 1
        if j < n and text[j] == "}":
            j += 1
    return base, j


def _accented(base: str, mark: str, command: str) -> str:
    if not base:
        return "\\" + command if command.isalpha() else command
    return unicodedata.normalize("NFC", base + mark)


# -- math ------------------------------------------------------------------------------------


def _math(formula: str) -> tuple[str, frozenset[str]] | None:
    """The formula as we write it and the AMS commands it uses, or None when it is not safe
    or would not compile: commands off the whitelist, and TeX structure LaTeX refuses (braces
    past MAX_MATH_DEPTH, a double superscript or subscript, `\\left` or `\\big` without a
    delimiter, `\\left` and `\\right` in different groups, an unclosed `\\sqrt[`, a command
    taking arguments as an unbraced argument: `\\frac\\frac12`)."""
    body = "".join(_MATH_UNICODE.get(c, c) for c in formula).strip()
    if not body or len(body) > MAX_MATH_CHARS or "^^" in body:
        return None
    needs: set[str] = set()
    tex_depth = bib_depth = 0
    lefts: list[int] = []  # the group depth of each open \left
    chain: set[str] = set()  # the scripts already on the current nucleus
    chain_end = -1  # where a next script would continue that chain
    i, n = 0, len(body)
    while i < n:
        char = body[i]
        if char == "\\":
            if i + 1 >= n:
                return None
            nxt = body[i + 1]
            if nxt.isascii() and nxt.isalpha():
                match = _COMMAND.match(body, i + 1)
                assert match is not None
                word = match.group()
                if word in AMS_FALLBACKS:
                    needs.add(word)
                elif word not in KERNEL_MATH:
                    return None
                after: int | None = match.end()
                if word in _DELIMITED:
                    after = _delimiter(body, match.end())
                    if after is None:
                        return None
                    if word == "left":
                        lefts.append(tex_depth)
                    elif word == "right" and (not lefts or lefts.pop() != tex_depth):
                        return None
                    i = after
                    continue
                if word == "sqrt":
                    after = _optional(body, match.end())
                wanted = 2 if word in _TWO_ARGS else 1 if word in _ONE_ARG else 0
                for _ in range(wanted):
                    after = _argument(body, after) if after is not None else None
                if after is None:
                    return None
                if word in _TEXT_ARGS and any(c in body[match.end() : after] for c in "^_\\"):
                    return None  # text mode inside: a script or command there is an error
                i = match.end()
                continue
            if nxt not in _MATH_SHORT:
                return None
            if nxt in "{}":
                bib_depth += 1 if nxt == "{" else -1
                if bib_depth < 0:
                    return None
            i += 2
            continue
        if char not in _MATH_ASCII:
            return None
        if char in "{}":
            step = 1 if char == "{" else -1
            tex_depth += step
            bib_depth += step
            if tex_depth < 0 or bib_depth < 0 or max(tex_depth, bib_depth) > MAX_MATH_DEPTH:
                return None
            if lefts and lefts[-1] > tex_depth:
                return None  # a group closed over an open \left
        elif char in "^_'":
            script = "^" if char == "'" else char
            if i != chain_end:
                chain = set()
            if char == "'":
                if "^" in chain:
                    return None  # x^2' is a "Double superscript"
                chain_end = _skip_spaces(body, i + 1)
                i += 1
                continue
            if script in chain:
                return None  # "Double superscript" (or subscript)
            chain.add(script)
            end = _argument(body, i + 1, script=True)
            if end is None:
                return None
            chain_end = _skip_spaces(body, end)
        i += 1
    if tex_depth or bib_depth or lefts:
        return None
    return body, frozenset(needs)


# Braces nest at most this deep in a formula we keep: 300 levels made pdflatex stop with "TeX
# capacity exceeded" and no PDF; arXiv's titles use three or four.
MAX_MATH_DEPTH = 12
_DELIMITED = frozenset(
    "left right big Big bigg Bigg bigl bigr Bigl Bigr".split()  # noqa: SIM905 - words
)
_DELIMITERS = frozenset("()[]|./<>")
_DELIMITER_COMMANDS = frozenset(
    """
    langle rangle lfloor rfloor lceil rceil lbrace rbrace vert Vert uparrow downarrow
    updownarrow Uparrow Downarrow Updownarrow backslash
    """.split()  # noqa: SIM905 - a word list reads better as words
)


_TAKES_ARGUMENTS = _ONE_ARG | _TWO_ARGS | _DELIMITED
# checked with pdflatex, with and without amsmath (whose fallbacks the .bib provides)
_SCRIPT_FONTS = frozenset(
    "mathrm mathbf mathit mathsf mathtt mathcal mathnormal mathbb mathfrak mathscr".split()  # noqa: SIM905
)


def _skip_spaces(body: str, i: int) -> int:
    while i < len(body) and body[i] == " ":
        i += 1
    return i


def _delimiter(body: str, i: int) -> int | None:
    """The index after the delimiter `\\left` or `\\big` needs at `i`, or None: `\\left x`
    is "Missing delimiter"."""
    i = _skip_spaces(body, i)
    if i >= len(body):
        return None
    if body[i] in _DELIMITERS:
        return i + 1
    if body[i] == "\\":
        if body[i + 1 : i + 2] in ("{", "}", "|"):
            return i + 2
        match = _COMMAND.match(body, i + 1)
        if match and match.group() in _DELIMITER_COMMANDS:
            return match.end()
    return None


def _optional(body: str, i: int) -> int | None:
    """After `\\sqrt`: the index after its `[…]` when there is one (None when it does not
    close before the formula ends), else `i`."""
    j = _skip_spaces(body, i)
    if j >= len(body) or body[j] != "[":
        return i
    depth = 0
    for k in range(j + 1, len(body)):
        depth += (body[k] == "{") - (body[k] == "}")
        if depth < 0:
            return None
        if body[k] == "]" and depth == 0:
            return k + 1
    return None


def _argument(body: str, i: int, *, script: bool = False) -> int | None:
    """The index after one macro argument starting at `i` (spaces skipped), or None. A command
    that takes arguments is no unbraced argument (`\\frac\\frac12`, `x^\\sqrt2` and
    `\\frac\\mathrm{a}b` stop pdflatex), but for a font command after a `script`
    (`x_\\mathrm{max}`)."""
    n = len(body)
    while i < n and body[i] == " ":
        i += 1
    if i >= n or body[i] in "}^_&#%$":
        return None
    if body[i] == "{":
        depth, j = 0, i
        while j < n:
            if body[j] == "\\":
                j += 2  # \{ and \} do not group
                continue
            depth += (body[j] == "{") - (body[j] == "}")
            if depth == 0:
                return j + 1
            j += 1
        return None
    if body[i] == "\\":
        match = _COMMAND.match(body, i + 1)
        name = match.group() if match else ""
        if name in _TAKES_ARGUMENTS and not (script and name in _SCRIPT_FONTS):
            return None
        return match.end() if match else min(i + 2, n)
    return i + 1


_MATH_UNICODE = {
    **{char: "\\" + name + " " for char, name in _GREEK.items()},
    **_GREEK_LATIN_CAPITALS,
    **{char: value + " " for char, value in _MATH_SYMBOLS.items()},
}


# -- output ----------------------------------------------------------------------------------


def _text(text: str, protect: bool, first_word: bool) -> tuple[str, bool]:
    """Write decoded text as LaTeX; return it and whether the next word is the field's first."""
    out: list[str] = []
    # BibTeX keeps the first letter, and one that follows a colon and a space: 0 nothing
    # seen, 1 a colon, 2 a colon then white space
    colon = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if not token[0].isalnum():
            out.append(_char(token))
            colon = 1 if token == ":" else 2 if colon and token.isspace() else 0
            continue
        written = token if token.isascii() else "".join(_char(c) for c in token)
        if protect and _needs_braces(token, first_word or colon == 2):
            written = "{" + written + "}"
        out.append(written)
        first_word, colon = False, 0
    return "".join(out), first_word


# a word (letters and digits, with inner apostrophes: O'Brien), or any one other character
_TOKENS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|.", re.DOTALL)


def _needs_braces(word: str, kept_by_bibtex: bool) -> bool:
    if any(c.isupper() for c in word[1:]):
        return True  # an acronym or CamelCase: BERT, OGLE, iPhone, ComicScene154, GANs
    return len(word) == 1 and word.isupper() and not kept_by_bibtex


def _char(char: str) -> str:
    if char in _SAFE_ASCII:
        return char
    if char in _ASCII_OUT:
        return _ASCII_OUT[char]
    if char in _TEXT_OUT:
        return _TEXT_OUT[char]
    if char in _GREEK:
        return "{$\\" + _GREEK[char] + "$}"
    if char in _GREEK_LATIN_CAPITALS:
        return _GREEK_LATIN_CAPITALS[char]
    if char in _MATH_SYMBOLS:
        return "{$" + _MATH_SYMBOLS[char] + "$}"
    decomposed = unicodedata.normalize("NFD", char)
    base, marks = decomposed[0], decomposed[1:]
    if marks and base.isascii() and all(mark in _COMBINING_OUT for mark in marks):
        inner = {"i": "\\i", "j": "\\j"}.get(base, base)
        for mark in marks:
            command = _COMBINING_OUT[mark]
            if command.isalpha():
                inner = f"\\{command}{{{inner}}}"  # \v{c}: a letter accent takes a group
            elif len(inner) == 1 or inner in ("\\i", "\\j"):
                inner = f"\\{command}{inner}"  # \"u, \'\i
            else:
                inner = f"\\{command}{{{inner}}}"
        return "{" + inner + "}"
    return f"{{[U+{ord(char):04X}]}}"  # nothing in a default pdflatex sets it: say what it was


def _check(value: str) -> None:
    """Our own guarantee, checked: ASCII, and braces balanced as BibTeX and TeX count them."""
    if not value.isascii():
        raise AssertionError(f"non-ASCII LaTeX written: {value[:80]!r}")
    depth = 0
    for char in value:
        depth += (char == "{") - (char == "}")
        if depth < 0:
            raise AssertionError(f"unbalanced LaTeX written: {value[:80]!r}")
    if depth:
        raise AssertionError(f"unbalanced LaTeX written: {value[:80]!r}")


def words(text: str) -> list[str]:
    """The printed words of `text` outside its formulas (TeX accents read), in order."""
    printed = " ".join(
        _decode(piece) for kind, piece, _ in _segments(_clean(text)) if kind == "text"
    )
    return _WORDS.findall(printed)


_WORDS = re.compile(r"[^\W_]+")
