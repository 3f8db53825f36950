"""Arguments the web frameworks rejected before the service saw them, as one `bad-request`.

FastAPI (query parameters) and the MCP SDK (tool arguments) both validate with pydantic; this
turns pydantic's error list into the wording the service uses for its own checks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from paperanchor.errors import BadRequest
from paperanchor.refs import shown

# pydantic error type prefix -> what the argument must be
_EXPECTED = {
    "int": "an integer",
    "float": "a number",
    "string": "a string",
    "bool": "true or false",
    "list": "a list",
    "dict": "an object",
}
# where FastAPI says an argument came from, ahead of its name
_LOCATIONS = {"query", "path", "header", "body", "cookie"}


def invalid_arguments(errors: Iterable[Mapping[str, Any]]) -> BadRequest:
    """One `BadRequest` naming every rejected argument and what it must be."""
    problems: dict[str, str] = {}
    for error in errors:
        location = [str(part) for part in error.get("loc", ())]
        if len(location) > 1 and location[0] in _LOCATIONS:  # FastAPI's ("query", "limit")
            location = location[1:]
        name = ".".join(location) or "arguments"
        kind = str(error.get("type", ""))
        if kind == "missing":
            problem = f"{name} is required"
        else:
            expected = _EXPECTED.get(kind.split("_", 1)[0])
            got = shown_value(error.get("input"))
            problem = (
                f"{name} must be {expected}, got {got}"
                if expected
                else f"{name} is not valid ({error.get('msg', kind)}), got {got}"
            )
        problems.setdefault(name, problem)
    return BadRequest("; ".join(problems.values()) or "invalid arguments")


def shown_value(value: Any) -> str:
    """A request's value as JSON, shortened and escaped for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return shown(text)
