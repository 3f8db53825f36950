"""Tree -> the JSON shapes of SPEC §5 (paperanchor/shapes.py; camelCase field names).

Written as dict literals typed by the shape they return: mypy checks each against its
TypedDict, and a literal costs a third of calling the TypedDict (0.28 µs against 0.79 µs for
a three-field shape, timeit on this machine).
"""

from __future__ import annotations

from paperanchor import shapes
from paperanchor.render.markdown import group_latex
from paperanchor.tree import Equation, EquationGroup, Figure, Reference, Table


def reference_json(reference: Reference, cited_in: list[str] | None = None) -> shapes.Reference:
    """A bibliography entry; with `cited_in`, the paragraphs that cite it (one entry asked for)."""
    out: shapes.Reference = {
        "id": reference.id,
        "number": reference.number,
        "text": reference.text,
        "authors": list(reference.authors),
        "title": reference.title,
        "year": reference.year,
        "arxiv": reference.arxiv,
        "arxivFrom": "page" if reference.arxiv else None,
        "doi": reference.doi,
        "url": reference.url,
    }
    if cited_in is not None:
        out["citedIn"] = cited_in
    return out


def float_json(node: Figure | Table, section_id: str) -> shapes.Figure | shapes.Table:
    """A figure, or a table with its cells, and its panels."""
    if isinstance(node, Table):
        table: shapes.Table = {
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
        return table
    figure: shapes.Figure = {
        # other floats (listings, LaTeXML's generic floats) are figures to the JSON shape
        "kind": "algorithm" if node.kind == "algorithm" else "figure",
        "id": node.id,
        "number": node.number,
        "caption": node.caption.text,
        "images": list(node.images),
        "panels": [float_json(panel, section_id) for panel in node.panels],
        "sectionId": section_id,
    }
    return figure


def equation_json(node: Equation | EquationGroup) -> shapes.Equation:
    """An equation's TeX and printed number; a group's rows as one aligned block."""
    if isinstance(node, EquationGroup):
        return {"id": node.id, "number": None, "latex": group_latex(node)}
    if node.latex is None:
        # from a PDF: no TeX, so `latex` is null and the extracted text comes beside it
        return {"id": node.id, "number": node.number, "latex": None, "text": node.text}
    return {"id": node.id, "number": node.number, "latex": node.latex}
