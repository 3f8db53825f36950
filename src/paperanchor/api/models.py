"""The JSON shapes of SPEC §5 as the web sees them: the schemas of /openapi.json and of the
MCP tools' output.

The shapes are written once, as TypedDicts in paperanchor/shapes.py, which the service builds
its answers as; they are named here for the adapters, and pydantic reads their schemas from
them (the tests validate every answer against the same classes).
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from paperanchor.shapes import (
    Archive,
    BibTeX,
    Category,
    Citations,
    Cite,
    Citing,
    Counts,
    DayCount,
    Equation,
    Error,
    ErrorCode,
    ErrorDetail,
    Figure,
    Float,
    Group,
    Health,
    Hit,
    Hits,
    Metadata,
    Outline,
    Reference,
    ReferenceAnswer,
    References,
    SearchHit,
    SearchPage,
    Section,
    SectionText,
    Table,
    Taxonomy,
    TermCount,
    Trends,
)

__all__ = [
    "Archive",
    "BibTeX",
    "Category",
    "Citations",
    "Cite",
    "Citing",
    "Counts",
    "DayCount",
    "Equation",
    "Error",
    "ErrorCode",
    "ErrorDetail",
    "Figure",
    "Float",
    "Group",
    "Health",
    "Hit",
    "Hits",
    "Metadata",
    "Outline",
    "Reference",
    "ReferenceAnswer",
    "References",
    "SearchHit",
    "SearchPage",
    "Section",
    "SectionText",
    "Table",
    "Taxonomy",
    "TermCount",
    "Trends",
    "compact",
    "compact_schema",
    "shallow_schema",
]


def compact_schema(model: Any) -> dict[str, Any]:
    """`model`'s JSON schema without titles and descriptions, `X | None` written as a list of
    types: the same constraints in fewer characters."""
    return compact(TypeAdapter(model).json_schema(by_alias=True), drop=("title", "description"))


def shallow_schema(*models: Any) -> dict[str, Any]:
    """One object schema with the top-level fields of `models` and their JSON types only.

    MCP tool definitions are paid for in tokens on every request (SPEC §7 caps the seven at
    1,500): the nested shapes are in /openapi.json, the tools carry their outline.
    """
    properties: dict[str, Any] = {}
    for model in models:
        schema = compact_schema(model)
        if "$ref" in schema:  # a recursive model is a reference into its own $defs
            schema = schema["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
        for name, field in schema.get("properties", {}).items():
            kind = field.get("type", "object" if "$ref" in field else None)
            properties.setdefault(name, {"type": kind} if kind is not None else {})
    return {"type": "object", "properties": properties}


def compact(schema: dict[str, Any], drop: tuple[str, ...] = ("title",)) -> dict[str, Any]:
    """A JSON schema without the annotations named in `drop` and null or blank defaults, `X | None`
    written as a list of types."""
    compacted: dict[str, Any] = _compact(schema, drop)
    return compacted


def _compact(node: Any, drop: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_compact(item, drop) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in drop and isinstance(value, str):
            continue
        if key == "default" and value in (None, ""):  # absent and blank text mean the same
            continue
        if key == "properties":
            out[key] = {name: _compact(sub, drop) for name, sub in value.items()}
        else:
            out[key] = _compact(value, drop)
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (other,) = [option for option in options if option != {"type": "null"}]
        if isinstance(other.get("type"), str):
            del out["anyOf"]
            out = {**other, **out, "type": [other["type"], "null"]}
    return out
