"""Small and hostile PDFs written byte by byte, so no test downloads or ships a bad file.

Every builder returns the bytes of a complete PDF (header, objects, xref, trailer, %%EOF)
unless its name says otherwise. The page content uses Helvetica, one of the 14 standard fonts
every reader has built in, so no font file is needed.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable

_HEADER = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"


def assemble(objects: Iterable[bytes], *, trailer_extra: bytes = b"") -> bytes:
    """Number the objects from 1 (object 1 is the catalog) and add the xref and trailer."""
    out = bytearray(_HEADER)
    offsets = []
    items = list(objects)
    for number, body in enumerate(items, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(items) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(items) + 1,
        trailer_extra,
        xref,
    )
    return bytes(out)


def stream(data: bytes, extra: bytes = b"", *, compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def _escape(text: str) -> bytes:
    raw = text.encode("latin-1")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def text_content(lines: Iterable[tuple[float, float, float, str]]) -> bytes:
    """A content stream drawing each (x, y, size, text) line in Helvetica."""
    ops = []
    for x, y, size, text in lines:
        ops.append(b"BT /F1 %.1f Tf %.1f %.1f Td (%s) Tj ET" % (size, x, y, _escape(text)))
    return b"\n".join(ops)


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"


def pages_pdf(contents: list[bytes], *, compress: bool = False) -> bytes:
    """One page per content stream (US Letter), all sharing one font."""
    count = len(contents)
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
        _FONT,
    ]
    for i, content in enumerate(contents):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * i)
        )
        objects.append(stream(content, compress=compress))
    return assemble(objects)


def text_pdf(pages: list[list[str]], *, size: float = 10.0) -> bytes:
    """Pages of plain lines set from the top of a 612x792 page, 14 pt apart."""
    contents = [
        text_content((72.0, 720.0 - 14.0 * row, size, line) for row, line in enumerate(lines))
        for lines in pages
    ]
    return pages_pdf(contents)


def _word(page: int) -> str:
    """A word of its own per page: lines that repeat on every page are running heads."""
    return chr(97 + page % 26) + chr(97 + page // 26 % 26) + "text"


def paper_pdf(pages: int = 1) -> bytes:
    """A tiny well-formed paper: title, abstract, a numbered section and a paragraph per page."""
    first = [
        (150.0, 720.0, 18.0, "A Tiny Paper About Nothing"),
        (250.0, 695.0, 11.0, "Ann Author"),
        (280.0, 660.0, 11.0, "Abstract"),
        (72.0, 640.0, 10.0, "We write a few words so that the paper has an abstract."),
        (72.0, 600.0, 12.0, "1 Introduction"),
    ]
    contents = []
    for page in range(pages):
        lines = list(first) if page == 0 else []
        top = 580.0 if page == 0 else 720.0
        for row in range(4):
            lines.append(
                (72.0, top - 12.0 * row, 10.0, f"Page {page + 1} line {row + 1} of {_word(page)}.")
            )
        lines.append((300.0, 40.0, 10.0, str(page + 1)))
        contents.append(text_content(lines))
    return pages_pdf(contents, compress=True)


def scanned_pdf(pages: int = 2) -> bytes:
    """Pages that are only an image (a grey square), as a scanner writes them: no text at all."""
    pixels = bytes([128]) * (100 * 100)
    image = stream(
        pixels,
        b" /Type /XObject /Subtype /Image /Width 100 /Height 100 /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8",
        compress=True,
    )
    count = pages
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
        image,
    ]
    for i in range(count):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /XObject << /Im1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * i)
        )
        objects.append(stream(b"q 500 0 0 700 50 50 cm /Im1 Do Q"))
    return assemble(objects)


def encrypted_pdf() -> bytes:
    """`paper_pdf` encrypted with a password (AES-256), by pypdf: the one sample not written
    byte by byte, since AES is not something to write by hand."""
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(paper_pdf())))
    writer.encrypt("secret", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def lying_page_count_pdf(count: int = 2_000_000_000) -> bytes:
    """One real page under a page tree that claims `count` pages."""
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
            _FONT,
            stream(text_content([(72.0, 720.0, 10.0, "One page only.")])),
        ]
    )


def many_pages_pdf(count: int) -> bytes:
    """`count` real pages that share one content stream (a small file, a huge page count)."""
    content_id = 4 + count
    kids = b" ".join(b"%d 0 R" % (4 + i) for i in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
        _FONT,
    ]
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % content_id
    )
    objects.extend(page for _ in range(count))
    objects.append(stream(text_content([(72.0, 720.0, 10.0, "The same words on every page.")])))
    return assemble(objects)


def deep_nesting_pdf(depth: int = 100_000) -> bytes:
    """A page whose resources hold an array nested `depth` levels deep."""
    nested = b"[" * depth + b"]" * depth
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Deep %s "
            b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>" % nested,
            _FONT,
            stream(text_content([(72.0, 720.0, 10.0, "Deep but short.")])),
        ]
    )


def deep_page_tree_pdf(depth: int = 5_000) -> bytes:
    """A page tree `depth` levels deep, one page at the bottom."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(depth):
        number = 2 + level
        parent = b" /Parent %d 0 R" % (number - 1) if level else b""
        objects.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1%s >>" % (number + 1, parent))
    page_number = 2 + depth
    objects.append(
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
        % (page_number - 1, page_number + 1, page_number + 2)
    )
    objects.append(_FONT)
    objects.append(stream(text_content([(72.0, 720.0, 10.0, "At the bottom of the tree.")])))
    return assemble(objects)


def recursive_form_pdf() -> bytes:
    """A form XObject that draws itself: a reader must stop the recursion."""
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 4 0 R >> /XObject << /X1 6 0 R >> >> /Contents 5 0 R >>",
            _FONT,
            stream(b"/X1 Do"),
            stream(
                b"BT /F1 10 Tf 72 720 Td (again) Tj ET /X1 Do",
                b" /Type /XObject /Subtype /Form /BBox [0 0 612 792] "
                b"/Resources << /Font << /F1 4 0 R >> /XObject << /X1 6 0 R >> >>",
            ),
        ]
    )


def stream_bomb_pdf(megabytes: int = 1024) -> bytes:
    """A content stream of a few kilobytes that inflates to `megabytes` MB of blanks."""
    compressor = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    parts = [compressor.compress(b"BT /F1 10 Tf 72 720 Td (bomb) Tj ET\n")]
    parts.extend(compressor.compress(chunk) for _ in range(megabytes))
    parts.append(compressor.flush())
    data = b"".join(parts)
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
            _FONT,
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
        ]
    )


def text_bomb_pdf(characters: int = 5_000_000) -> bytes:
    """One page that shows `characters` glyphs from a small compressed stream."""
    line = b"(" + b"A" * 1000 + b") Tj 0 -1 Td\n"
    body = b"BT /F1 1 Tf 10 780 Td\n" + line * (characters // 1000) + b"ET"
    return pages_pdf([body], compress=True)


def _body(top: float, rows: int, word: str) -> list[tuple[float, float, float, str]]:
    """Lines of running text, full width, 12 pt apart from `top` down."""
    return [
        (
            72.0,
            top - 12.0 * row,
            10.0,
            f"Running text line {row + 1} about the {word} we discuss here.",
        )
        for row in range(rows)
    ]


def _rule(x: float, y: float, width: float) -> bytes:
    return b"%.1f %.1f %.1f 0.6 re f" % (x, y, width)


def table_pdf() -> bytes:
    """A paragraph, a booktabs-like table (caption, three rules, cells), a paragraph."""
    lines = _body(720.0, 4, "method")
    lines.append((72.0, 650.0, 9.0, "Table 1: Scores of the two methods on the test set."))
    cells = [(640.0, "Method", "Recall", "Precision"), (624.0, "Ours", "0.91", "0.88")]
    cells.append((612.0, "Baseline", "0.75", "0.70"))
    for y, *row in cells:
        for x, cell in zip((80.0, 250.0, 420.0), row, strict=True):
            lines.append((x, y, 9.0, cell))
    lines.extend(_body(570.0, 3, "results"))
    rules = b"\n".join(_rule(72.0, y, 468.0) for y in (646.0, 634.0, 606.0))
    return pages_pdf([text_content(lines) + b"\n" + rules])


def figure_pdf() -> bytes:
    """A paragraph, a figure drawn in a form XObject with its axis labels, its caption below."""
    lines = _body(720.0, 4, "curve")
    lines.append((150.0, 470.0, 9.0, "Figure 1: Loss of the model over the epochs."))
    lines.extend(_body(440.0, 3, "loss"))
    labels = text_content([(160.0, 500.0, 8.0, "Epoch"), (120.0, 600.0, 8.0, "0.5 1.0 Loss")])
    form = stream(
        b"0 0 0 RG 1 w 150 510 m 450 510 l S 150 510 m 150 650 l S 150 650 m 450 520 l S\n"
        + labels,
        b" /Type /XObject /Subtype /Form /BBox [100 490 460 660] "
        b"/Resources << /Font << /F1 3 0 R >> >>",
    )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        _FONT,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> /XObject << /Fm1 6 0 R >> >> /Contents 5 0 R >>",
        stream(text_content(lines) + b"\n/Fm1 Do"),
        form,
    ]
    return assemble(objects)


def framed_prose_pdf() -> bytes:
    """A framed box of prose (a prompt set in a figure) above its caption: the prose stays."""
    lines = _body(720.0, 2, "setup")
    prose = [
        (
            90.0,
            660.0 - 12.0 * row,
            9.0,
            f"You are a careful assistant: read the paper and answer {row}.",
        )
        for row in range(4)
    ]
    lines.extend(prose)
    lines.append((150.0, 590.0, 9.0, "Figure 2: The prompt given to the model."))
    frame = b"0.5 w 80 605 450 70 re S 81 606 448 68 re S 82 607 446 66 re S"
    frame += b" 83 608 444 64 re S 84 609 442 62 re S"
    return pages_pdf([text_content(lines) + b"\n" + frame])


def ruled_text_pdf() -> bytes:
    """Running text between two rules of one width and no caption: it is not a table."""
    lines = _body(700.0, 6, "framing")
    rules = _rule(72.0, 715.0, 468.0) + b"\n" + _rule(72.0, 625.0, 468.0)
    return pages_pdf([text_content(lines) + b"\n" + rules])


def many_paths_pdf(paths: int = 100_000, pages: int = 1) -> bytes:
    """Pages of a dense plot: `paths` touching little squares each, and one line of text."""
    squares = b"\n".join(
        b"%.1f %.1f 1.2 1.2 re f" % (72 + (i % 400) * 1.1, 100 + (i // 400) * 1.1)
        for i in range(paths)
    )
    contents = [
        text_content([(72.0, 740.0, 10.0, f"A page of points, the {_word(page)} one.")])
        + b"\n"
        + squares
        for page in range(pages)
    ]
    return pages_pdf(contents, compress=True)


def hostile_text_pdf() -> bytes:
    """A paper whose text layer holds Markdown and HTML: it must come out as text."""
    lines = [
        (150.0, 720.0, 18.0, "A Paper <script>alert(1)</script>"),
        (250.0, 695.0, 11.0, "Ann Author"),
        (72.0, 660.0, 12.0, "1 Introduction"),
        (72.0, 640.0, 10.0, "Click [x](javascript:alert(1)) or <img src=x onerror=alert(1)>."),
        (72.0, 628.0, 10.0, "Some **bold** and `code` and a ![pic](http://evil/x.png) here."),
        (72.0, 600.0, 10.0, "# not a heading"),
        (200.0, 570.0, 10.0, "<b>x</b> = [y](javascript:alert(2))"),
        (515.0, 570.0, 10.0, "(1)"),
        (72.0, 540.0, 10.0, "where <x> is [z]: a word of the text after the display."),
    ]
    return pages_pdf([text_content(lines)])


def numbered_head_pdf() -> bytes:
    """One page cut from a paper: its running head with the page number, then body text."""
    lines = [(150.0, 740.0, 8.0, "A Running Title for the Paper"), (460.0, 740.0, 8.0, "9")]
    lines.extend(_body(700.0, 4, "cut"))
    return pages_pdf([text_content(lines)])


def look_alike_first_lines_pdf() -> bytes:
    """Two pages that open with body lines alike but for a digit: text, not running heads."""
    pages = []
    for page in range(2):
        first = (72.0, 740.0, 10.0, f"Step {page + 1} of the method runs here and goes on.")
        body = [(x, y - 20.0, size, text) for x, y, size, text in _body(748.0, 5, _word(page))]
        pages.append(text_content([first, *body]))
    return pages_pdf(pages)


def contents_pdf() -> bytes:
    """A table of contents with dot leaders and page numbers, then the sections it lists."""
    first = [
        (150.0, 720.0, 18.0, "A Paper That Lists Its Parts"),
        (72.0, 680.0, 12.0, "Contents"),
        (72.0, 660.0, 10.0, "1 Introduction . . . . . . . . . . . . . 2"),
        (72.0, 646.0, 10.0, "2 Method . . . . . . . . . . . . . . . . 2"),
        (72.0, 632.0, 10.0, "References 3"),
    ]
    return pages_pdf([text_content(first), text_content(_two_sections())])


def _two_sections() -> list[tuple[float, float, float, str]]:
    """A page with the two sections the contents samples list, three lines of text each."""
    lines = [(72.0, 720.0, 12.0, "1 Introduction")]
    lines.extend(_body(700.0, 3, "motivation"))
    lines.append((72.0, 640.0, 12.0, "2 Method"))
    lines.extend(_body(620.0, 3, "procedure"))
    return lines


def contents_across_pages_pdf(notes: int = 1, *, keywords: bool = True) -> bytes:
    """Keywords, then a table of contents that runs onto the next page past `notes` footnote
    lines in smaller type at the foot of the first (2407.01603v3), then the sections."""
    first = [(150.0, 720.0, 18.0, "A Paper That Lists Its Parts")]
    first.append((72.0, 700.0, 10.0, "Abstract"))
    first.extend(_body(686.0, 4, "abstract"))
    if keywords:
        first.append((72.0, 630.0, 10.0, "Keywords Reading, Contents, Footnotes"))
    first.append((72.0, 600.0, 12.0, "Contents"))
    first.append((72.0, 580.0, 10.0, "1 Introduction . . . . . . . . . . . . . 3"))
    first.append((72.0, 566.0, 10.0, "1.1 Motivation . . . . . . . . . . . . . 3"))
    for row in range(notes):
        first.append((72.0, 90.0 - 9.0 * row, 8.0, f"Footnote line {row + 1} of the first page"))
    second = [
        (72.0, 720.0, 10.0, "1.2 Scope . . . . . . . . . . . . . . . . 3"),
        (72.0, 706.0, 10.0, "2 Method . . . . . . . . . . . . . . . . 4"),
    ]
    return pages_pdf([text_content(first), text_content(second), text_content(_two_sections())])


def contents_note_pile_pdf(pages: int) -> bytes:
    """A contents whose every entry follows six lines in smaller type, page after page: what
    the contents' look past footnotes must stay linear on."""
    contents = []
    for page in range(pages):
        lines = []
        if page == 0:
            lines = [(150.0, 740.0, 18.0, "A Pile of Notes"), (72.0, 720.0, 10.0, "Abstract")]
            lines.extend(_body(706.0, 3, "pile"))
            lines.append((72.0, 660.0, 12.0, "Contents"))
        # away from the pages' edges (no running head), the small lines short and the entries
        # long, so that the entries' size is the body's
        for group in range(8):
            top = 640.0 - 60.0 * group
            for row in range(6):
                lines.append((72.0, top - 7.0 * row, 8.0, f"s{row} g{group}"))
            number = f"{page % 90 + 1}.{group + 1}"
            leaders = " ." * 30
            lines.append((72.0, top - 50.0, 10.0, f"{number} Entry{leaders} {page + 1}"))
        contents.append(text_content(lines))
    return pages_pdf(contents)


def footnotes_across_pages_pdf() -> bytes:
    """A paragraph that runs onto the next page past two footnotes and a line of furniture at
    the first page's foot, set at 9 pt under 10 pt text (2206.10883v3: NeurIPS's notes are
    within the body's range of sizes)."""
    first = [(150.0, 720.0, 18.0, "A Paper With Notes")]
    first.append((72.0, 700.0, 12.0, "Abstract"))
    for row in range(4):
        first.append((72.0, 684.0 - 11.0 * row, 10.0, f"Abstract line {row + 1} of the notes."))
    first.append((72.0, 620.0, 12.0, "1 Introduction"))
    for row in range(10):
        text = f"Body line {row + 1} runs on without an end and goes"
        first.append((72.0, 600.0 - 12.0 * row, 10.0, text))
    first.append((72.0, 100.0, 9.0, "1https://example.org/first-note."))
    first.append((72.0, 89.0, 9.0, "2The second note, which wraps onto"))
    first.append((72.0, 78.0, 9.0, "a line of its own."))
    first.append((72.0, 52.0, 9.0, "Preprint. Under review."))
    second = [(72.0, 720.0, 10.0, "on to its end on the next page of the paper.")]
    second.extend(_body(700.0, 3, "rest"))
    return pages_pdf([text_content(first), text_content(second)])


def small_block_at_the_foot_pdf() -> bytes:
    """A page of eight lines of body size, then at its foot a block of ten lines in 9 pt, more
    than the page's text (a quotation, an algorithm's lines), then the next page: text where
    it stands, not notes to move after the paragraph."""
    first = [(150.0, 720.0, 18.0, "A Paper With A Small Block")]
    first.append((72.0, 700.0, 12.0, "Abstract"))
    first.extend(_body(684.0, 3, "abstract"))
    first.append((72.0, 620.0, 12.0, "1 Introduction"))
    first.append((72.0, 600.0, 10.0, "The text before the block runs on without an end and"))
    first.append((72.0, 588.0, 10.0, "goes on and on across the line and then across the"))
    for row in range(10):
        first.append((90.0, 540.0 - 11.0 * row, 9.0, f"Small block line {row + 1} stays put"))
    second = [(72.0, 720.0, 10.0, "page, where the paragraph that the block follows ends.")]
    second.extend(_body(700.0, 3, "rest"))
    return pages_pdf([text_content(first), text_content(second)])


NOTES_PER_PAGE = 8


def footnote_pile_pdf(pages: int) -> bytes:
    """Page after page of lines of text over eight marked notes in smaller type, each note a
    line: the notes' rules meet as many notes as the pages have."""
    contents = []
    for page in range(pages):
        lines = _body(720.0, 12, f"page {page + 1}")
        for row in range(NOTES_PER_PAGE):
            text = f"{row + 1}Note {row + 1} of page {page + 1}."
            lines.append((72.0, 500.0 - 11.0 * row, 9.0, text))
        contents.append(text_content(lines))
    return pages_pdf(contents)


def wrapped_bibliography_pdf() -> bytes:
    """Entries whose wrapped lines start with a year or an arXiv category: not new entries."""
    lines = [
        (72.0, 720.0, 12.0, "1 Introduction"),
        (72.0, 700.0, 10.0, "As shown in [1, 3] and in [2-3], reading works."),
        (72.0, 676.0, 10.0, "A range as wide as [1-9999] names what exists."),
        (72.0, 650.0, 12.0, "References"),
    ]
    entries = [
        ("[1] Ann Author and Bob Writer. A first title of a paper. arXiv:2305.12345",),
        ("[cs.CL], 2023.",),
        ("[2] Karl Kingsley and Tanis Stewart. Why not just google it? An",),
        ("2011. assessment of literacy skills. BMC medical education, 11:1-8.",),
        ("[3] Carl Coder. A third paper on reading. In Proceedings of Things, 2021.",),
    ]
    for row, (text,) in enumerate(entries):
        indent = 72.0 if text.startswith("[") else 90.0
        lines.append((indent, 630.0 - 12.0 * row, 9.0, text))
    return pages_pdf([text_content(lines)])


def dense_columns_pdf(pages: int = 200, rows: int = 120) -> bytes:
    """Pages packed with short lines in two columns, a line across both every few rows and
    every line a paragraph of its own: what the layout's band and row logic must stay linear
    on (every figure grows with lines per page, not with their square)."""
    contents = []
    for page in range(pages):
        lines = []
        for row in range(rows):
            y = 780.0 - row * 6.0
            if row % 7 == 0:
                lines.append((40.0, y, 5.0, f"across {page} {row} " + "w" * 120))
            else:
                lines.append((40.0, y, 5.0, f"left {row} of {_word(page)}."))
                lines.append((320.0, y, 5.0, f"right {row} of {_word(page)}."))
        contents.append(text_content(lines))
    return pages_pdf(contents, compress=True)


def many_lines_pdf(pages: int = 150, rows: int = 700) -> bytes:
    """Pages of tiny lines, one word each: more lines of text than the tree is built from."""
    contents = [
        text_content((72.0 + (row % 3) * 150, 780.0 - row * 1.1, 1.0, "w") for row in range(rows))
        for _ in range(pages)
    ]
    return pages_pdf(contents, compress=True)


# Helvetica's advance widths (thousandths of the size), so that a sample can centre a line
_WIDTHS = (
    "667 667 722 722 667 611 778 722 278 500 667 556 833 722 778 667 778 722 667 611 722 667 944 "
    "667 667 611 556 556 500 556 556 278 556 556 222 222 500 222 833 556 556 556 556 333 500 278 "
    "556 500 722 500 500 500 278 278 278"
)
_HELVETICA = dict(
    zip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz .,",
        map(int, re.findall(r"\d+", _WIDTHS)),
        strict=True,
    )
)


def _width(text: str, size: float) -> float:
    return sum(_HELVETICA.get(c, 556) for c in text) * size / 1000  # 556: a digit


def _centred(y: float, size: float, text: str, centre: float = 306.0) -> tuple[float, ...]:
    return (centre - _width(text, size) / 2, y, size, text)


def _small_caps(y: float, words: list[str], centre: float = 306.0) -> bytes:
    """A heading in faked small capitals, as IEEEtran sets them in Times: each word's first
    capital at 10 pt, the rest as 8 pt capitals 1.5 pt apart (PDFium reads a space there)."""
    pieces: list[tuple[float, str]] = []  # size, text
    for number, word in enumerate(words):
        lead = (" " if number else "") + word[0]
        if word[0].isupper() and len(word) > 1 and word[1:].isupper():
            pieces += [(10.0, lead), (8.0, word[1:])]
        else:
            pieces.append((10.0, lead + word[1:]))
    total = sum(_width(text, size) + 1.5 for size, text in pieces)
    x = centre - total / 2
    ops = []
    for size, text in pieces:
        ops.append(b"BT /F1 %.1f Tf %.1f %.1f Td (%s) Tj ET" % (size, x, y, _escape(text)))
        x += _width(text, size) + (1.5 if size == 10.0 else 0.0)
    return b"\n".join(ops)


def roman_headings_pdf() -> bytes:
    """A physics-style first page: an author line and an affiliation set like headings
    ("I. Ivanova,1 …", "1 Department of …"), "I." and "INTRODUCTION" on lines of their own,
    then IEEEtran's small capitals ("II. R ELATED W ORK", "R EFERENCES") and three entries."""
    body = "runs on across the column so that the line is as wide as the text block here"
    # headings are centred on the text block
    middle = 72.0 + _width(f"Part 10 {body}.", 10.0) / 2
    lines: list[tuple[float, ...]] = [
        _centred(740.0, 18.0, "Roman Headings in a Physics Paper", middle),
        _centred(712.0, 11.0, "I. Ivanova,1 A. Petrov,2 and K. Sato1", middle),
        _centred(698.0, 11.0, "1 Department of Physics, Northfield University, Oslo", middle),
        _centred(626.0, 10.0, "I.", middle),
        _centred(612.0, 10.0, "INTRODUCTION", middle),
    ]
    lines += [(72.0, 680.0 - 12.0 * row, 10.0, f"Part 1{row} {body}.") for row in range(4)]
    lines += [(72.0, 592.0 - 12.0 * row, 10.0, f"Part 2{row} {body}.") for row in range(5)]
    lines += [(72.0, 508.0 - 12.0 * row, 10.0, f"Part 3{row} {body}.") for row in range(5)]
    entries = ["Ann Author. A first title. 2020.", "Bob Writer. A second title. 2021."]
    entries.append("Carl Coder. A third title. 2022.")
    lines += [(72.0, 420.0 - 12.0 * n, 9.0, f"[{n + 1}] {text}") for n, text in enumerate(entries)]
    content = b"\n".join(
        [
            text_content(line for line in lines if len(line) == 4),  # type: ignore[misc]
            _small_caps(528.0, ["II.", "RELATED", "WORK"], middle),
            _small_caps(440.0, ["REFERENCES"], middle),
        ]
    )
    return pages_pdf([content])


def roman_pile_pdf(pages: int = 40, rows: int = 60) -> bytes:
    """Pages of nothing but heading bait: numbers alone on their lines, small-caps pieces
    and author-like lines, one after the other (what the heading rules must stay linear on)."""
    contents = []
    for page in range(pages):
        parts = []
        for row in range(rows):
            y = 770.0 - row * 12.0
            if row % 3 == 0:
                parts.append(text_content([(300.0, y, 10.0, "IV.")]))
            elif row % 3 == 1:
                parts.append(_small_caps(y, ["A", "MODEL", "OF", "EVERYTHING"]))
            else:
                parts.append(text_content([(200.0, y, 11.0, f"A. Ivanova,{page} B. Sato{row}")]))
        contents.append(b"\n".join(parts))
    return pages_pdf(contents, compress=True)


def line_flood_pdf(pages: int = 1000, rows: int = 900) -> bytes:
    """Pages of one-letter lines, every page drawing the same content stream: 900,000 lines
    of text in a PDF of a few kilobytes, nine times what the tree is built from."""
    content = text_content(
        (72.0 + (row % 3) * 150, 780.0 - row * 0.8, 1.0, "w") for row in range(rows)
    )
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        _FONT,
        stream(content, compress=True),
    ]
    objects += [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
    ] * pages
    return assemble(objects)


def italic_subsections_pdf() -> bytes:
    """IEEEtran's subsections in italics at the body size ("A. Detector" on a line of its
    own) under a roman section, and an italic paragraph that opens like one but runs to the
    column's edge ("B. Sato showed …"): the first is a subsection, the second text."""
    body = "runs on across the column so that the line is as wide as the text block here"
    middle = 72.0 + _width(f"Part 10 {body}.", 10.0) / 2
    plain = [
        _centred(740.0, 18.0, "Italic Subsections Under Roman Sections", middle),
        _centred(700.0, 10.0, "I. INTRODUCTION", middle),
    ]
    plain += [(72.0, 680.0 - 12.0 * row, 10.0, f"Part 1{row} {body}.") for row in range(3)]
    plain += [(72.0, 600.0 - 12.0 * row, 10.0, f"Part 2{row} {body}.") for row in range(3)]
    plain += [(72.0, 520.0 - 12.0 * row, 10.0, f"Part 3{row} {body}.") for row in range(3)]
    # a title-like opening as wide as the body's lines, in few words
    words = "Sato demonstrated considerable improvements throughout experimental measurements"
    wide = f"B. {words}"
    while _width(wide, 10.0) < _width(f"Part 10 {body}.", 10.0):
        wide += " nationwide"
    italic = [
        (72.0, 620.0, 10.0, "A. Detector"),
        (72.0, 540.0, 10.0, wide),
        (72.0, 528.0, 10.0, "and the italic paragraph ends on this line."),
    ]
    content = text_content(plain) + b"\n" + text_content(italic).replace(b"/F1 ", b"/F2 ")
    oblique = _FONT.replace(b"/Helvetica ", b"/Helvetica-Oblique ")
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
            _FONT,
            oblique,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents 6 0 R >>",
            stream(content),
        ]
    )
