"""The parser version: a digest of everything that decides what the parser builds.

Cached papers are keyed by it (contract §2), so it must change whenever the tree for some page
would. It digests the code of tree.py, of every module under parse/, of the cache codec
(codec.py, which writes the tree into the cache) and of every paperanchor module they import,
each without its comment lines and blank lines, which change nothing; and the versions of lxml,
libxml2 and the Unicode database. What none of these can see (a change in another library's
behaviour) is caught by tests/test_parser_version.py, which fails when the parsed fixtures
change and the version did not: then bump REVISION.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path

from lxml import etree

# Bump by hand only for an output change the digest cannot see (see above).
REVISION = 1

_PACKAGE = Path(__file__).resolve().parent.parent


def parser_version() -> str:
    """16 hex digits naming the parser's code and what it depends on."""
    digest = hashlib.sha256()
    facts = (REVISION, etree.LXML_VERSION, etree.LIBXML_VERSION)
    digest.update(repr((*facts, unicodedata.unidata_version)).encode())
    sources = {name: path.read_text(encoding="utf-8") for name, path in parser_modules().items()}
    for name in sorted(sources):
        digest.update(f"\0{name}\0".encode())
        digest.update(_normalised(sources[name]).encode())
    return digest.hexdigest()[:16]


def parser_modules() -> dict[str, Path]:
    """The modules that decide what is cached: tree, parse/**, the cache codec, their imports."""
    found: dict[str, Path] = {}
    pending = ["paperanchor.tree", "paperanchor.codec", *_under("paperanchor.parse")]
    while pending:
        name = pending.pop()
        if name in found:
            continue
        path = _file_of(name)
        if path is None:
            continue
        found[name] = path
        pending.extend(_imports(path.read_text(encoding="utf-8")))
    return found


def _under(package: str) -> list[str]:
    folder = _PACKAGE.joinpath(*package.split(".")[1:])
    names = []
    for path in folder.rglob("*.py"):
        parts = path.relative_to(_PACKAGE.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _file_of(name: str) -> Path | None:
    if name != "paperanchor" and not name.startswith("paperanchor."):
        return None
    base = _PACKAGE.joinpath(*name.split(".")[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(paperanchor(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)"
    r"|import[ \t]+(paperanchor(?:\.\w+)*))",
    re.MULTILINE,
)


def _imports(source: str) -> list[str]:
    """paperanchor modules the source imports anywhere (lazy imports in functions included)."""
    out: list[str] = []
    for match in _IMPORT.finditer(source):
        module = match[1] or match[3]
        out.append(module)
        if match[2]:
            # `from paperanchor.parse import blocks` may name a module, not only a variable
            names = match[2].strip("()").replace("\n", " ").split(",")
            out.extend(f"{module}.{n.split()[0]}" for n in names if n.split())
    return out


def _normalised(source: str) -> str:
    """The source without blank lines, comment lines and trailing blanks: reading and
    digesting it takes about a millisecond at import, where parsing it would take 40."""
    lines = (line.rstrip() for line in source.splitlines())
    return "\n".join(line for line in lines if line and not line.lstrip().startswith("#"))
