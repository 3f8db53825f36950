"""The outline as an agent receives it (contract §11): every section's id, number, title and
tokens at a fraction of the JSON, and any outline cut at a depth.

The REST outline is contract §5's `Outline` (schema 1); the MCP tool sends `compact(outline)`:
fields that are empty or at their default are left out, metadata that repeats the outline is
left out, and each section is one line `"<tokens> <id> <number> <title>"` in document order
(its level is in its id: `S3.SS1` is in `S3`). On 2501.11120v1 (96 sections) that is 2,239
o200k tokens where the JSON is 5,997 (37%).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, cast

from paperanchor import shapes

SECTION_FIELDS: Final = "tokens id number title"
"""What each of the compact outline's section lines holds, in order (the number is left out
where the section prints none); an outline `since` another edition ends each line that changed
with `[edited N]`, `[moved N]` or `[added]` (N: its blocks that differ, its subsections' too)"""

# Fields left out at these values: what a reader assumes when a field is not there.
_DEFAULTS: Final[dict[str, Any]] = {"inferred": "ready", "quality": "ok"}
_REPEATED: Final = ("paper", "title", "authors", "abstract")


def at_depth(outline: shapes.Outline, depth: int | None) -> shapes.Outline:
    """The outline with sections `depth` levels deep at most (1: the top level); a section's
    tokens already count everything under it."""
    if depth is None:
        return outline
    return {**outline, "sections": _cut(outline["sections"], depth)}


def _cut(sections: list[shapes.Section], depth: int) -> list[shapes.Section]:
    if depth <= 1:
        return [{**section, "children": []} for section in sections]
    return [{**section, "children": _cut(section["children"], depth - 1)} for section in sections]


def _walk(sections: list[shapes.Section]) -> Iterator[shapes.Section]:
    for section in sections:
        yield section
        yield from _walk(section["children"])


def section_line(section: shapes.Section) -> str:
    """`"<tokens> <id> <number> <title>"`, ` [errors N]` when it has conversion errors, and its
    change since another edition when it has one (SECTION_FIELDS)."""
    number = f" {section['number']}" if section["number"] else ""
    errors = f" [errors {section['errors']}]" if section["errors"] else ""
    line = f"{section['tokens']} {section['id']}{number} {section['title']}{errors}".rstrip()
    change = section.get("change")
    if change == "added":
        return f"{line} [added]"
    if change in ("edited", "moved"):
        return f"{line} [{change} {section.get('changed', 0)}]"
    return line


def compact(outline: shapes.Outline) -> shapes.CompactOutline:
    """The outline an agent receives over MCP (module docstring)."""
    full = cast(dict[str, Any], outline)
    out: dict[str, Any] = {}
    for name, value in full.items():
        if name == "sections":
            out["sectionFields"] = SECTION_FIELDS
            out["sections"] = [section_line(section) for section in _walk(value)]
        elif name == "counts":
            out["counts"] = {kind: count for kind, count in value.items() if count}
        elif name == "metadata":
            if value is not None:
                kept = {
                    key: item
                    for key, item in value.items()
                    if item not in (None, [], "") and not (key in _REPEATED and item == full[key])
                }
                out["metadata"] = kept
        elif name == "versionConfirmed":
            if full["version"] is not None and not value:
                out[name] = value
        elif value in (None, [], "") or _DEFAULTS.get(name, object()) == value:
            continue
        else:
            out[name] = value
    return cast(shapes.CompactOutline, out)
