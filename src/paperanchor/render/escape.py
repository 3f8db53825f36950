"""The paper's text as text in Markdown (contract §3): escaping and the URLs we let through.

A paper is untrusted: a `<script>`, raw HTML, `[x](javascript:…)` or a `**` written in its
text must reach a reader as those characters, never as markup. Escaping is by CommonMark's
backslash escapes, kept to what can start markup so that the Markdown stays readable: a
citation such as `[12]` stays as it is (no link definition of ours can match it), while the
`](` of an inline link, the `[^` of a footnote, a `<`, an entity, emphasis and code marks, and
the marks that open a block at the start of a line are escaped. `tests/render/test_escape.py`
renders our output back with markdown-it-py, and tests/render/test_renderers.py with marked
and commonmark.js on their defaults (no math), to show it.

TeX is the paper's too. It goes between `$…$` or `$$…$$` through `math_markdown`, which keeps
its meaning to TeX but leaves nothing a renderer that does not know math could read as markup
or as the end of the math: a `$` of its own, a line break (and so a new block), an HTML tag,
the `](` of a link, a trailing backslash that would escape the closing `$`.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, urlsplit

_BLOCK_START = re.compile(r"^(?:[#>+\-]|\d{1,9}[.)](?:\s|$)|\[)")
# the characters _BLOCK_START can open with, besides a digit: most chunks fail this test alone
_BLOCK_FIRST = frozenset("#>+-[")
_SAFE_SCHEMES = ("http", "https")


def escape_text(text: str, *, brackets: bool = False) -> str:
    """A run of the paper's words as Markdown that renders back to exactly those words;
    with `brackets`, every `[` and `]` is escaped too (text that sits inside `[…]`)."""
    if not may_need_escape(text):  # most runs of words: one scan in C, nothing to do
        return text
    escaped = (_ESCAPE_BRACKETS if brackets else _ESCAPE).sub(r"\\\g<0>", text)
    # `<` as an entity, not `\<`: a GFM renderer reads a bare URL just before it
    # (`http://x\<script>`, marked 18) as an autolink that swallows the backslash, and the tag
    # after it comes alive; an entity stays text inside or outside the link
    return escaped.replace("<", "&lt;") if "<" in escaped else escaped


# One pass in C (a character loop in Python cost a tenth of the parse on citation-heavy pages):
# the marks escaped wherever they are; a `]` that would close a link text (`](…)`, `][…]`); a
# `[` that would open a footnote reference (`[^…]`); an `&` that would start an entity (`&lt;`,
# `&#60;`); a `_` at a word boundary (CommonMark does not read an intraword `_` as emphasis).
_MARKS = r"[\\`*~$]|\](?=[(\[])|\[(?=\^)|&(?=[^\W\d_]|#)|(?<![^\W_])_|_(?![^\W_])"
_FIRST = r"(?=[\\`*<~$\]\[&_])"  # positions that cannot start a mark fail at once
_ESCAPE = re.compile(f"{_FIRST}(?:{_MARKS})")
_ESCAPE_BRACKETS = re.compile(f"{_FIRST}(?:{_MARKS}|[\\[\\]])")
_MAY_NEED = re.compile(r"[\\`*<~$\]&_\[]")
# A long text is faster asked character by character: `in` finds one character with memchr, and
# the ten searches take 0.5 us on 1,500 characters where the regex engine's scan takes 10 us.
_LONG_TEXT = 48


def may_need_escape(text: str) -> bool:
    """Whether a text holds a character `escape_text` may act on (else it is its own Markdown)."""
    if len(text) < _LONG_TEXT:
        return _MAY_NEED.search(text) is not None
    return (
        "\\" in text
        or "`" in text
        or "*" in text
        or "<" in text
        or "~" in text
        or "$" in text
        or "]" in text
        or "&" in text
        or "_" in text
        or "[" in text
    )


# What `escape_text` (without `brackets`) may change, a little more: a text without a match is
# its own Markdown. One search, where the parser would otherwise escape every run of words.
ESCAPE_MAY_CHANGE = r"[\\`*~$<&_]|\][(\[]|\[\^"


def escape_line_start(markdown: str) -> str:
    """Escape a mark that would open a block (heading, quote, list, link definition) where a
    chunk of our Markdown starts with the paper's text."""
    first = markdown[:1]
    if (first in _BLOCK_FIRST or first.isdecimal()) and _BLOCK_START.match(markdown):
        match = re.match(r"\d{1,9}", markdown)
        if match:  # "1. Introduction" as text, not an ordered list
            end = match.end()
            return f"{markdown[:end]}\\{markdown[end:]}"
        return "\\" + markdown
    return markdown


def escape_label(text: str) -> str:
    """Text inside `[…]` (an image's alt text, a footnote mark): brackets and newlines too."""
    return escape_text(" ".join(text.split()), brackets=True)


_NOTE_LABEL = re.compile(r"[^\w*†‡§¶#]")


def note_label(mark: str) -> str:
    """A footnote mark as a label GFM accepts: no spaces, brackets or carets."""
    return _NOTE_LABEL.sub("", mark)[:20] or "note"


# C0 controls and DEL: one scan in C (a loop over the characters cost a tenth of the parse of a
# page of links)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def safe_url(url: str) -> str | None:
    """An absolute http(s) URL fit to sit inside `<…>`, or None (contract §3: other schemes, such
    as javascript: and file:, are dropped)."""
    url = url.strip()
    if _PLAIN_HTTP.fullmatch(url):
        return url  # what the checks below return for it, without `urlsplit` (2 us a link)
    if not url or _CONTROL.search(url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in _SAFE_SCHEMES or not parts.netloc:
        return None
    # Percent-encode what would end an autolink or a link destination (spaces, angle brackets,
    # quotes, backslashes); parentheses stay, as `destination` puts such a URL inside `<…>`.
    if _URL_SAFE.fullmatch(url):
        return url  # what `quote` returns for it, without its byte-by-byte pass
    return quote(url, safe=_URL_SAFE_MARKS)


# An http(s) URL of a host without brackets (no IPv6 literal for `urlsplit` to check) and of
# `_URL_SAFE`'s characters only: scheme, host and the rest as `urlsplit` reads them.
_PLAIN_HTTP = re.compile(
    r"[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9!$&'()*+,;=:@%\-._~]+"
    r"(?:[/?#][A-Za-z0-9/:?#\[\]@!$&'()*+,;=%\-._~]*)?"
)
# `quote`'s safe characters: ASCII letters and digits, "_.-~", and the marks it is given
_URL_SAFE_MARKS = "/:?#[]@!$&'()*+,;=%-._~"
_URL_SAFE = re.compile(r"[A-Za-z0-9/:?#\[\]@!$&'()*+,;=%\-._~]*")


def local_image_url(url: str, base: str = "") -> str | None:
    """A `file:` URL of an image beside a local document read over stdio or by the command line
    (contract §7: `file://` paths of local images stay), or None: only under the folder of `base`
    when it is given (the page's own `file:` URL), never with a host, `..` or control characters."""
    url = url.strip()
    if not url.startswith("file:///") or _CONTROL.search(url):
        return None
    path = unquote(urlsplit(url).path)
    if _CONTROL.search(path) or "/../" in path + "/" or "/./" in path + "/" or "\\" in path:
        return None
    if base:
        if not base.startswith("file:///"):
            return None
        folder = unquote(urlsplit(base).path).rsplit("/", 1)[0] + "/"
        if not path.startswith(folder):
            return None
    return "file://" + quote(path, safe="/-._~")


def image_url(url: str) -> str | None:
    """An image URL fit for Markdown: http(s) (`safe_url`), or a local image's `file:` URL."""
    return safe_url(url) or local_image_url(url)


def destination(url: str) -> str:
    """A safe URL as the `(…)` part of a link or image: inside `<…>` when it has parentheses."""
    return f"<{url}>" if "(" in url or ")" in url else url


# A `%` or `$` preceded by an even number of backslashes (none included) is TeX's own: a comment
# to the end of the line, or a math shift that would close our delimiters.
_TEX_COMMENT = re.compile(r"(?<!\\)((?:\\\\)*)%[^\n]*")
_TEX_DOLLAR = re.compile(r"(?<!\\)((?:\\\\)*)\$")
_TEX_SPACE = re.compile(r"\s+")
# `<` followed by what could open an HTML tag, a comment or an autolink; TeX ignores spaces in
# math, so `a <b` is the same formula as `a<b`
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
# `](` or `][` would close a link text: an empty group between them means nothing to TeX
_LINK_CLOSE = re.compile(r"\](?=[(\[])")
_TRAILING_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\$")


def math_markdown(tex: str) -> str:
    """TeX as it goes between `$…$` or `$$…$$`: the same formula to TeX, one line, no `$` of
    its own, never an HTML tag or a link to a renderer that misses our math."""
    if "%" in tex:
        tex = _TEX_COMMENT.sub(r"\1", tex)
    if "$" in tex:
        tex = _TEX_DOLLAR.sub(r"\1", tex)
    tex = _TEX_SPACE.sub(" ", tex).strip()
    if "<" in tex:
        tex = _TAG_OPEN.sub("< ", tex)
    if "]" in tex:
        tex = _LINK_CLOSE.sub("]{}", tex)
    if _TRAILING_ESCAPE.search(tex) or tex.endswith("$"):
        # `\$` would escape our closing `$`; a control space and an empty group end it instead
        tex += " {}"
    return tex


_TEX_TEXT = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "#": r"\#",
    "%": r"\%",
    "&": r"\&",
    "_": r"\_",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
}
_TEX_TEXT_SPECIAL = re.compile(r"[\\{}$#%&_^~]")


def tex_text(text: str) -> str:
    """The paper's text (an equation number) as the argument of a TeX text command such as
    `\\tag{…}`: TeX's special characters escaped, so that it cannot close the argument."""
    escaped = _TEX_TEXT_SPECIAL.sub(lambda m: _TEX_TEXT[m.group()], text)
    return math_markdown(escaped)


def markdown_line(text: str) -> str:
    """A string from a paper or a request (an id, a detail, a hint) inside one line of our
    Markdown, within `[…]` or not: whitespace squashed, every mark and bracket escaped."""
    return escape_text(" ".join(text.split()), brackets=True)
