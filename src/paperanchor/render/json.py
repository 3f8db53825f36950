"""Tree -> JSON-ready dicts of SPEC §5 (camelCase field names)."""

from __future__ import annotations

from typing import Any

from paperanchor.render.markdown import group_latex
from paperanchor.tree import Equation, EquationGroup, Figure, Reference, Table

JSON = dict[str, Any]


def reference_json(reference: Reference, cited_in: list[str] | None = None) -> JSON:
    out: JSON = {
        "id": reference.id,
        "number": reference.number,
        "text": reference.text,
        "authors": list(reference.authors),
        "title": reference.title,
        "year": reference.year,
        "arxiv": reference.arxiv,
        "doi": reference.doi,
        "url": reference.url,
    }
    if cited_in is not None:
        out["citedIn"] = cited_in
    return out


def float_json(node: Figure | Table, section_id: str) -> JSON:
    if isinstance(node, Table):
        return {
            "kind": "table",
            "id": node.id,
            "number": node.number,
            "caption": node.caption.text,
            "rows": [list(row) for row in node.rows],
            "headerRows": node.header_rows,
            "images": list(node.images),
            "panels": [float_json(panel, section_id) for panel in node.panels],
            "cut": node.cut,
            "sectionId": section_id,
        }
    return {
        "kind": "figure",
        "id": node.id,
        "number": node.number,
        "caption": node.caption.text,
        "images": list(node.images),
        "panels": [float_json(panel, section_id) for panel in node.panels],
        "sectionId": section_id,
    }


def equation_json(node: Equation | EquationGroup) -> JSON:
    if isinstance(node, EquationGroup):
        return {"id": node.id, "number": None, "latex": group_latex(node)}
    if node.latex is None:
        # from a PDF: no TeX, so `latex` is null and the extracted text comes beside it
        return {"id": node.id, "number": node.number, "latex": None, "text": node.text}
    return {"id": node.id, "number": node.number, "latex": node.latex}
