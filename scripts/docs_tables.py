"""Write the generated parts of README.md and docs/contract.md from the code they describe.

    .venv/bin/python scripts/docs_tables.py           rewrite them
    .venv/bin/python scripts/docs_tables.py --check   exit 1 if one is stale (tests run it)

Each part sits between `<!-- generated: NAME by scripts/docs_tables.py -->` and
`<!-- end: NAME -->`: the table of settings (settings.py: every field, its variable, default
and docstring), the operations (operations.py's table), the JSON shapes (shapes.py) and the
error codes (errors.py). Everything else in those files is written by hand.
"""

from __future__ import annotations

import re
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, NotRequired, Union, get_args, get_origin

import typing_extensions

ROOT = Path(__file__).resolve().parent.parent

from paperanchor import errors, operations, shapes  # noqa: E402
from paperanchor.settings import Settings  # noqa: E402

README = ROOT / "README.md"
CONTRACT = ROOT / "docs" / "contract.md"


def _cell(text: str) -> str:
    """Text in one Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _default(field: Any) -> str:
    shown = (field.json_schema_extra or {}).get("shown_default")
    if shown is not None:
        return f"`{shown}`"
    value = field.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`1`" if value else "`0`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def settings_table() -> str:
    """Every setting of settings.py: its variable, default and what it does."""
    rows = ["| variable | default | what it does |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        assert field.description, f"settings.py: {name} has no docstring"
        rows.append(
            f"| `PAPERANCHOR_{name.upper()}` | {_default(field)} | {_cell(field.description)} |"
        )
    return "\n".join(rows)


def operations_table() -> str:
    """Every operation: its tool set, arguments, command and description."""
    rows = [
        "| operation (MCP tool) | tool set | arguments | command line | what it answers |",
        "|---|---|---|---|---|",
    ]
    for op in operations.OPERATIONS:
        arguments = ", ".join(f"`{a.name}`" + ("" if a.required else "?") for a in op.arguments)
        command = f"`paperanchor {op.command_name}`" if op.command is not None else "—"
        rows.append(
            f"| `{op.name}` | {op.tools or 'REST only'} | {arguments} | {command} | "
            f"{_cell(op.description)} |"
        )
    return "\n".join(rows)


def _type(hint: Any) -> str:
    """A field's type as the shapes block writes it: `str`, `int|null`, `[Section]`, `"a"|"b"`."""
    origin = get_origin(hint)
    if origin is typing.Annotated:
        return _type(get_args(hint)[0])
    if origin is NotRequired:
        return _type(get_args(hint)[0])
    if origin is Literal:
        return "|".join(f'"{v}"' if isinstance(v, str) else str(v) for v in get_args(hint))
    if origin in (Union, types.UnionType):
        return "|".join("null" if a is type(None) else _type(a) for a in get_args(hint))
    if origin is list:
        return f"[{_type(get_args(hint)[0])}]"
    if origin is dict:
        key, value = get_args(hint)
        return f"{{{_type(key)}: {_type(value)}}}"
    if hint is type(None):
        return "null"
    if isinstance(hint, type):
        return {"str": "str", "int": "int", "float": "float", "bool": "bool"}.get(
            hint.__name__, hint.__name__
        )
    return str(hint)


def _optional(cls: type, name: str) -> bool:
    return name in getattr(cls, "__optional_keys__", ())


def shapes_block() -> str:
    """Every JSON shape of shapes.py, one `Name {field: type, …}` each (plain `str` is bare)."""
    lines = []
    for name, cls in vars(shapes).items():
        if not (isinstance(cls, type) and typing_extensions.is_typeddict(cls)):
            continue
        if cls.__module__ != shapes.__name__:  # pydantic's ConfigDict is imported there
            continue
        hints = typing_extensions.get_type_hints(cls, include_extras=True)
        fields = []
        for field, hint in hints.items():
            mark = "?" if _optional(cls, field) or get_origin(hint) is NotRequired else ""
            shown = _type(hint)
            fields.append(f"{field}{mark}" if shown == "str" else f"{field}{mark}: {shown}")
        lines.append(f"{name} {{{', '.join(fields)}}}")
    return "```\n" + "\n".join(lines) + "\n```"


def errors_table() -> str:
    """Every error code: its HTTP status and when it is answered (errors.py's docstrings)."""
    rows = ["| code | status | when |", "|---|---|---|"]
    by_code: dict[str, type[errors.PaperAnchorError]] = {}
    for cls in (errors.PaperAnchorError, *_subclasses(errors.PaperAnchorError)):
        by_code.setdefault(cls.code, cls)  # a subclass of the same code (ParseError) is its own
    for code, cls in sorted(by_code.items(), key=lambda item: item[1].status):
        when = (cls.__doc__ or "").strip().split("\n\n")[0]  # the first paragraph
        assert when, f"errors.py: {cls.__name__} has no docstring"
        rows.append(f"| `{code}` | {cls.status} | {_cell(when)} |")
    return "\n".join(rows)


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


PARTS: dict[Path, dict[str, Callable[[], str]]] = {
    README: {"settings": settings_table},
    CONTRACT: {
        "operations": operations_table,
        "shapes": shapes_block,
        "errors": errors_table,
    },
}


def filled(text: str, name: str, content: str) -> str:
    """`text` with the part `name` replaced by `content`."""
    pattern = re.compile(
        rf"(<!-- generated: {name} by scripts/docs_tables.py -->\n).*?(^<!-- end: {name} -->)",
        re.DOTALL | re.MULTILINE,
    )
    if not pattern.search(text):
        raise SystemExit(f"no generated part {name!r} in the file")
    return pattern.sub(lambda m: m.group(1) + content + "\n" + m.group(2), text)


def generated(path: Path) -> str:
    """The file as it should be: every generated part of it rewritten."""
    text = path.read_text(encoding="utf-8")
    for name, make in PARTS[path].items():
        text = filled(text, name, make())
    return text


def main() -> int:
    """Rewrite the generated parts, or with --check say which file is stale."""
    check = sys.argv[1:] == ["--check"]
    stale = []
    for path in PARTS:
        text = generated(path)
        if text != path.read_text(encoding="utf-8"):
            stale.append(path.relative_to(ROOT))
            if not check:
                path.write_text(text, encoding="utf-8")
    if check and stale:
        print(f"stale: {', '.join(map(str, stale))}; run scripts/docs_tables.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
