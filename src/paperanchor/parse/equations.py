"""Display equations: single equations and groups (align, eqnarray) keyed on their rows' ids."""

from __future__ import annotations

from paperanchor.parse.context import ParseContext
from paperanchor.parse.dom import HtmlElement, children, classes, math_tex, tag_of, text_of
from paperanchor.tree import Equation, EquationGroup

_NOT_CONTENT = frozenset(
    {
        "ltx_eqn_center_padleft",
        "ltx_eqn_center_padright",
        "ltx_eqn_eqno",
        "ltx_eqn_left_padleft",
        "ltx_eqn_right_padright",
        "ltx_eqn_left_padright",
        "ltx_eqn_right_padleft",
    }
)


def _rows(table: HtmlElement) -> list[tuple[HtmlElement, HtmlElement | None]]:
    """Each equation row with the element that carries its id (a `tbody` in groups)."""
    found: list[tuple[HtmlElement, HtmlElement | None]] = []
    for child in children(table):
        tag = tag_of(child)
        if tag == "tr":
            found.append((child, child if child.get("id") else None))
        elif tag in ("tbody", "thead", "tfoot"):
            for row in children(child):
                if tag_of(row) == "tr":
                    holder = row if row.get("id") else child if child.get("id") else None
                    found.append((row, holder))
    return found


def _cells(row: HtmlElement) -> tuple[list[str], str | None]:
    cells: list[str] = []
    number: str | None = None
    for cell in children(row):
        if tag_of(cell) not in ("td", "th"):
            continue
        cls = classes(cell)
        if "ltx_eqn_eqno" in cls:
            tag_text = text_of(cell)
            if tag_text:
                number = tag_text.strip("()").strip() or None
            continue
        if cls & _NOT_CONTENT:
            continue
        # the cell's math found by libxml2 (a cell is mostly MathML: a Python test of each
        # element cost a tenth of a math-heavy page's parse); a prefixed `m:math`, which no
        # LaTeXML page writes, is not taken for math here
        texts = (math_tex(node) for node in cell.iter("{*}math"))
        cells.append(" ".join(tex for tex in texts if tex))
    return cells, number


def _join(cells: list[str]) -> str:
    return " ".join(c for c in cells if c)


def parse_equation(table: HtmlElement, ctx: ParseContext, parent_id: str) -> Equation:
    """A single display: one or more rows of one table, numbered by its tag."""
    eq_id = table.get("id") or ctx.positional_id(parent_id, "eq")
    rows = _rows(table)
    lines: list[str] = []
    cells_all: list[str] = []
    number: str | None = None
    for row, _holder in rows:
        cells, row_number = _cells(row)
        number = number or row_number
        line = _join(cells)
        if line:
            lines.append(line)
            cells_all.extend(cells)
    return Equation(eq_id, number, " \\\\ ".join(lines), tuple(cells_all))


def parse_group(table: HtmlElement, ctx: ParseContext, parent_id: str) -> EquationGroup:
    """An equation group keyed on its rows' ids (on `tbody`, or on `tr` in older output).

    A row without an id continues the row before it (a long line broken in two); a group
    with no row ids at all is one equation with a positional id under the group.
    """
    group_id = table.get("id") or ctx.positional_id(parent_id, "eqg")
    rows: list[Equation] = []
    holder_ids: list[str | None] = []
    for row, holder in _rows(table):
        cells, number = _cells(row)
        holder_id = holder.get("id") if holder is not None else None
        if rows and (holder_id is None or holder_id == holder_ids[-1]):
            prev = rows[-1]
            latex = " \\\\ ".join(x for x in (prev.latex, _join(cells)) if x)
            rows[-1] = Equation(
                prev.id, prev.number or number, latex, (*prev.cells, *cells), group_id
            )
            continue
        row_id = holder_id or f"{group_id}.r{len(rows) + 1}"
        rows.append(Equation(row_id, number, _join(cells), tuple(cells), group_id))
        holder_ids.append(holder_id)
    return EquationGroup(group_id, tuple(rows))


def aligned(group: EquationGroup) -> str:
    """The group as one `aligned` environment, cells separated by `&`."""
    lines = [" & ".join(row.cells) if row.cells else row.latex or "" for row in group.rows]
    return "\\begin{aligned}" + " \\\\ ".join(lines) + "\\end{aligned}"
