"""The PDFium side of the PDF parser: run as a script in a child process with resource limits.

    python -I pdfium_worker.py < paper.pdf > lines.json

PDFium is C code. A hostile PDF can make it inflate a 2 MB stream into 3 GB (measured:
tests/parse/test_pdf_bounds.py) or crash it, so it never runs inside the server: this script
sets its own address-space, CPU-time and file-size limits first, then reads the PDF from stdin
and writes JSON to stdout, one object: `{"pages": [...]}` or `{"error": kind, ...}`. It imports
nothing of paperanchor, so the child starts in about 70 ms.

Each page is `{"width", "height", "stamp", "lines", "graphics"}`; a line is
`[text, x0, y0, x1, y1, size, bold, math, hyphen, italic]` in PDF points (y grows upwards): its
characters in content order, the font size most of them have, the share of bold and of math-font
characters, whether it ends in a line-end hyphen that PDFium marked as such, and the share of
italic characters (IEEEtran's subsection headings are italic). `stamp` is the arXiv margin
stamp when the page has one (rotated text `arXiv:IDvN [category] date`).
"""

from __future__ import annotations

import ctypes
import json
import math
import re
import resource
import sys
from typing import Any

# Sizes the parent passes on the command line: address space (MB), CPU seconds, pages, chars,
# lines.
_LIMIT_ARGS = 5

_STAMP = re.compile(
    r"arXiv:\s?((?:\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})v\d+)\s+\[[\w.\-]+\]\s+"
    r"\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4}"
)
_BOLD = re.compile(r"bold|black|heavy|semibold|demi|medi|cmbx|cmb\d|bx\d|-b$|tb$|\bsb", re.I)
_ITALIC = re.compile(r"ital|oblique|slant|cmti|cmsl|cmbxti|-it$|-i$", re.I)
_MATH = re.compile(
    r"cmmi|cmsy|cmex|msam|msbm|math|symbol|rsfs|eufm|eusm|stmary|wasy|txsy|pxsy|txex|pxex"
    r"|mnsymbol|lmmi|lmsy|lmex|cmbsy|cmmib|esint|dsrom|bbold|stix",
    re.I,
)
# A gap wider than this many font sizes between two characters of one line splits it: equation
# numbers at the margin, table cells, a column that PDFium ran on into its neighbour.
_SPLIT_GAP = 2.5


# Faked small capitals are set at 70-80% of the capital's size (IEEEtran: 8 pt beside 10 pt).
_CAPS_LOW = 0.6
_CAPS_HIGH = 0.9


# Page objects other than text, by PDFium's type number (FPDF_PAGEOBJ_*).
_KINDS = {2: "p", 3: "i", 4: "s", 5: "f"}
# Objects looked at per page, and boxes kept: the corpus's pages have at most 1,349 objects
# (a Quartz-printed table) and 100 boxes once slivers are joined.
_SCANNED_OBJECTS = 20_000
_KEPT_GRAPHICS = 400
# How thin, in points, a box is to be a rule.
_THIN = 2.0


def _limit(address_mb: int, cpu_s: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (address_mb << 20, address_mb << 20))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _fail(kind: str, **extra: Any) -> int:
    json.dump({"error": kind, **extra}, sys.stdout)
    return 0


class _Fonts:
    """Bold, math and italic flags per text object (characters of one object share its
    font), and per font: a page whose every glyph is an object of its own (a flood of
    one-letter lines) looks each font's name up once, not once a glyph."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.cache: dict[int | None, tuple[bool, bool, bool]] = {}
        self.by_font: dict[int | None, tuple[bool, bool, bool]] = {}
        self.buffer = ctypes.create_string_buffer(256)

    def clear(self) -> None:
        """Forget the page's objects and fonts (their handles are the page's)."""
        self.cache.clear()
        self.by_font.clear()

    def flags(self, textpage: Any, index: int) -> tuple[bool, bool, bool]:
        obj = self.raw.FPDFText_GetTextObject(textpage, index)
        key = ctypes.cast(obj, ctypes.c_void_p).value
        found = self.cache.get(key)
        if found is None:
            font = self.raw.FPDFTextObj_GetFont(obj) if key else None
            font_key = ctypes.cast(font, ctypes.c_void_p).value if font else None
            found = self.by_font.get(font_key)
            if found is None:
                found = self._font_flags(font)
                self.by_font[font_key] = found
            self.cache[key] = found
        return found

    def _font_flags(self, font: Any) -> tuple[bool, bool, bool]:
        name = ""
        weight = -1
        if font:
            length = self.raw.FPDFFont_GetBaseFontName(font, self.buffer, 256)
            name = self.buffer.raw[: max(0, min(length, 256) - 1)].decode("latin-1")
            weight = self.raw.FPDFFont_GetWeight(font)
        base = name.split("+", 1)[-1]
        is_math = bool(_MATH.search(base))
        return (
            weight >= 600 or bool(_BOLD.search(base)),
            is_math,
            not is_math and bool(_ITALIC.search(base)),
        )


def _page_text(raw: Any, textpage: Any, count: int) -> str:
    """The page's characters, one per index (PDFium's UTF-16 decoded); per index if that fails."""
    buffer = ctypes.create_string_buffer((count + 1) * 2)
    written = raw.FPDFText_GetText(
        textpage, 0, count, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort))
    )
    text = buffer.raw[: max(0, written - 1) * 2].decode("utf-16-le", errors="replace")
    if len(text) == count:
        return text
    return "".join(chr(raw.FPDFText_GetUnicode(textpage, i) or 0xFFFD) for i in range(count))


def _stamp(raw: Any, textpage: Any, text: str) -> tuple[str | None, range]:
    """The margin stamp and the character indices it covers: rotated text only, never body."""
    for match in _STAMP.finditer(text):
        angle = raw.FPDFText_GetCharAngle(textpage, match.start())
        if 1.2 < angle < 1.95 or 4.3 < angle < 5.1:  # about 90 or 270 degrees
            return match.group(1), range(match.start(), match.end())
    return None, range(0)


def _small_caps(chars: list[str], char: str, size: float, before: float, math_font: bool) -> bool:
    """Whether the space before `char` is the gap of faked small capitals: a word's capital at
    full size, its other letters as smaller capitals ("I NTRODUCTION", "R EFERENCES" from
    IEEEtran in Times), so it is no space at all."""
    if math_font or not chars or not char.isupper() or not chars[-1].isupper():
        return False
    if len(chars) > 1 and not chars[-2].isspace():
        return False  # the capital is a word's first letter only when it stands alone
    return _CAPS_LOW * before <= size <= _CAPS_HIGH * before


def _lines(
    raw: Any, textpage: Any, text: str, skip: range, fonts: _Fonts, budget: int
) -> list[list[Any]]:
    """The page's lines; it stops once it has more than `budget` (the paper's lines past that
    are refused, so they are never built: 900,000 one-letter lines cost 26 s and 540 MB in the
    parent when they were)."""
    rect = raw.FS_RECTF()
    matrix = raw.FS_MATRIX()
    out: list[list[Any]] = []
    chars: list[str] = []
    state: dict[str, float] = {}
    sizes: dict[float, int] = {}
    bold = maths = italics = 0
    space = False
    last_size = 0.0  # of the last character kept
    last_math = False

    def flush(hyphen: bool) -> None:
        nonlocal bold, maths, italics
        if chars:
            size = max(sizes.items(), key=lambda item: item[1])[0]
            visible = max(1, sum(sizes.values()))
            out.append(
                [
                    "".join(chars),
                    round(state["x0"], 2),
                    round(state["y0"], 2),
                    round(state["x1"], 2),
                    round(state["y1"], 2),
                    size,
                    round(bold / visible, 2),
                    round(maths / visible, 2),
                    hyphen,
                    round(italics / visible, 2),
                ]
            )
        chars.clear()
        sizes.clear()
        state.clear()
        bold = maths = italics = 0

    for index, char in enumerate(text):
        if len(out) > budget:
            return out
        if index in skip:
            continue
        if char in "\r\n":
            flush(False)
            space = False
            continue
        if char in "\x02\ufffe":  # PDFium's mark for a hyphen that ends a line (per index, in text)
            flush(True)
            space = False
            continue
        if char.isspace():
            space = True
            continue
        if char < " " or char in "\ufffe\uffff":
            continue
        raw.FPDFText_GetLooseCharBox(textpage, index, rect)
        left, right, bottom, top = rect.left, rect.right, rect.bottom, rect.top
        # the size as set on the page: the font size scaled by the text's matrix (a page a
        # browser printed sets every glyph at size 1 and scales it; a figure included as a
        # form draws 96 pt text at a tenth of that), vertically so that a squeezed font
        # keeps its size
        raw.FPDFText_GetMatrix(textpage, index, matrix)
        size = round(raw.FPDFText_GetFontSize(textpage, index) * math.hypot(matrix.c, matrix.d), 1)
        middle = (bottom + top) / 2
        if state:
            off_line = middle < state["b0"] or middle > state["b1"]
            gap = left - state["x1"]
            if off_line or gap < -2 * size or gap > _SPLIT_GAP * max(size, state["size"]):
                flush(False)
                space = False
        is_bold, is_math, is_italic = fonts.flags(textpage, index)
        if not state:
            state.update(x0=left, x1=right, y0=bottom, y1=top, b0=bottom, b1=top, size=size)
        else:
            if space and not _small_caps(chars, char, size, last_size, is_math or last_math):
                chars.append(" ")
            state["x0"] = min(state["x0"], left)
            state["x1"] = max(state["x1"], right)
            state["y0"] = min(state["y0"], bottom)
            state["y1"] = max(state["y1"], top)
            if size >= state["size"]:
                # the band of the line's largest characters decides what is still on it
                state["b0"] = min(state["b0"], bottom)
                state["b1"] = max(state["b1"], top)
                state["size"] = size
        space = False
        chars.append(char)
        last_size, last_math = size, is_math
        sizes[size] = sizes.get(size, 0) + 1
        bold += is_bold
        maths += is_math
        italics += is_italic
    flush(False)
    return out


def _graphics(raw: Any, page: Any) -> list[list[Any]]:
    """The boxes of the page's pictures and rules: `[kind, x0, y0, x1, y1]`, kind "i" an
    image, "f" a form (an included PDF figure), "p" a path, "s" a shading.

    A rule drawn as a row of slivers (a page printed through Quartz rasterises a table's
    rules into 1-point images) is joined into one box. At most `_SCANNED_OBJECTS` objects are
    looked at and `_KEPT_GRAPHICS` boxes kept, the longest first: a plot of a million points
    costs no more than that.
    """
    count = min(max(raw.FPDFPage_CountObjects(page), 0), _SCANNED_OBJECTS)
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    boxes: list[tuple[str, list[float]]] = []  # kind, [x0, y0, x1, y1]
    for index in range(count):
        obj = raw.FPDFPage_GetObject(page, index)
        kind = _KINDS.get(raw.FPDFPageObj_GetType(obj))
        if kind is None or not raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            continue
        box = [left.value, bottom.value, right.value, top.value]
        if all(math.isfinite(v) for v in box) and max(box[2] - box[0], box[3] - box[1]) >= 2:
            boxes.append((kind, box))
    boxes.sort(key=lambda item: (round(item[1][1]), item[1][0]))
    joined: list[tuple[str, list[float]]] = []
    for kind, box in boxes:
        last = joined[-1][1] if joined else None
        if (
            last is not None
            and box[3] - box[1] <= _THIN
            and last[3] - last[1] <= _THIN
            and abs(box[1] - last[1]) <= 0.5
            and box[0] <= last[2] + 1
        ):
            last[2] = max(last[2], box[2])
            last[3] = max(last[3], box[3])
            continue
        joined.append((kind, box))
    joined.sort(key=lambda item: -max(item[1][2] - item[1][0], item[1][3] - item[1][1]))
    return [[kind, *(round(v, 1) for v in box)] for kind, box in joined[:_KEPT_GRAPHICS]]


def main() -> int:
    limits = (int(a) for a in sys.argv[1 : 1 + _LIMIT_ARGS])
    address_mb, cpu_s, max_pages, max_chars, max_lines = limits
    _limit(address_mb, cpu_s)
    data = sys.stdin.buffer.read()
    # the bindings alone, not pypdfium2's helpers: they cost 50-100 ms more to import, a third
    # of reading a one-page PDF
    import pypdfium2_raw as raw

    raw.FPDF_InitLibrary()
    document = raw.FPDF_LoadMemDocument64(data, len(data), None)
    if not document:
        code = raw.FPDF_GetLastError()
        return _fail("password" if code == raw.FPDF_ERR_PASSWORD else "format", code=code)
    count = raw.FPDF_GetPageCount(document)
    if count > max_pages:
        return _fail("pages", pages=count)
    fonts = _Fonts(raw)
    pages: list[dict[str, Any]] = []
    total = 0
    total_lines = 0
    for number in range(max(count, 0)):
        page = raw.FPDF_LoadPage(document, number)
        textpage = raw.FPDFText_LoadPage(page) if page else None
        if not textpage:
            if page:
                raw.FPDF_ClosePage(page)
            pages.append({"width": 0, "height": 0, "stamp": None, "lines": [], "broken": True})
            continue
        width, height = raw.FPDF_GetPageWidthF(page), raw.FPDF_GetPageHeightF(page)
        chars = raw.FPDFText_CountChars(textpage)
        total += max(chars, 0)
        if total > max_chars:
            return _fail("chars", page=number + 1, chars=total)
        text = _page_text(raw, textpage, chars) if chars > 0 else ""
        stamp, skip = _stamp(raw, textpage, text)
        lines = _lines(raw, textpage, text, skip, fonts, max_lines - total_lines)
        total_lines += len(lines)
        if total_lines > max_lines:
            return _fail("lines", page=number + 1)
        graphics = _graphics(raw, page)
        pages.append(
            {"width": width, "height": height, "stamp": stamp, "lines": lines, "graphics": graphics}
        )
        raw.FPDFText_ClosePage(textpage)
        raw.FPDF_ClosePage(page)
        fonts.clear()
    raw.FPDF_CloseDocument(document)
    json.dump({"pages": pages}, sys.stdout, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
