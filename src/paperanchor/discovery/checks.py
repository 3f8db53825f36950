"""Argument checks shared by the discovery requests: each failure is a `BadRequest` naming it."""

from __future__ import annotations

import re

from paperanchor.errors import BadRequest
from paperanchor.refs import shown

_WHOLE = re.compile(r"[+-]?\d{1,9}", re.ASCII)


def whole_number(name: str, value: int | str | None, default: int, low: int, high: int) -> int:
    """`value` as an int in [low, high]; None or "" is `default`; a REST string is parsed."""
    if value is None or value == "":
        return default
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise BadRequest(f"{name} must be a whole number from {low} to {high} (got {value!r})")
    if isinstance(value, int):
        number = value
    else:
        text = value.strip()
        if not _WHOLE.fullmatch(text):
            raise BadRequest(
                f'{name} must be a whole number from {low} to {high} (got "{shown(value)}")'
            )
        number = int(text)
    if not low <= number <= high:
        raise BadRequest(f"{name} must be from {low} to {high} (got {number})")
    return number
