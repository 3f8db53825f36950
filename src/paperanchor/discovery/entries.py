"""Discovery answers as cache entries: JSON that names its key, checked field by field on read.

    raw = encode("meta:1:2104.12255v1", metadata)           # bytes for the store
    metadata = decode(raw, "meta:1:2104.12255v1", Metadata)   # or EntryError

An entry is `{"key": …, "value": …}` in UTF-8 JSON, never a pickle: what is read back is only
data, and it must have the shape of the TypedDict it is read as (every required field, of its
type; `bool` is not an `int`; fields the shape does not name are dropped), so an entry written
by anyone into a shared Redis or a cache folder is refused rather than served. The key inside
must be the key it was read under, so an entry copied under another key is refused too.
"""

from __future__ import annotations

import json
import types
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

# the shapes are typing_extensions' TypedDicts (shapes.py), which typing's check misses on 3.11
from typing_extensions import is_typeddict

T = TypeVar("T")

# The largest entry written or read. A search page of 50 hits is about 25 kB, a metadata entry
# a few kB (a collaboration's 3,000 names about 75 kB), trends a few kB: 1 MB is room for any
# real answer; a larger one is served but not cached.
MAX_ENTRY_BYTES = 1 << 20


class EntryError(ValueError):
    """A cache entry that is not one we wrote for this key, in this shape."""


def encode(key: str, value: Any) -> bytes | None:
    """The entry for `value` under `key`; None when it is too large to cache."""
    raw = json.dumps({"key": key, "value": value}, ensure_ascii=False, separators=(",", ":"))
    data = raw.encode()
    return data if len(data) <= MAX_ENTRY_BYTES else None


def decode(raw: bytes, key: str, shape: type[T]) -> T:
    """The value of an entry read under `key`, checked to be a `shape`; else `EntryError`."""
    if len(raw) > MAX_ENTRY_BYTES:
        raise EntryError(f"an entry of {len(raw)} bytes")
    try:
        entry = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise EntryError("not JSON") from None
    if not isinstance(entry, dict) or set(entry) != {"key", "value"}:
        raise EntryError("not an entry")
    if entry["key"] != key:
        raise EntryError(f"an entry written for another key ({str(entry['key'])[:200]!r})")
    checked: T = _checked(entry["value"], shape, "value")
    return checked


def _checked(value: Any, hint: Any, where: str) -> Any:
    """`value` as a `hint`: the same value, TypedDicts without fields they do not name."""
    if hint is Any:
        return value
    if is_typeddict(hint):
        if not isinstance(value, dict):
            raise EntryError(f"{where} is not an object")
        fields = get_type_hints(hint)
        missing = hint.__required_keys__ - set(value)
        if missing:
            raise EntryError(f"{where} has no {', '.join(sorted(missing))}")
        return {
            name: _checked(value[name], fields[name], f"{where}.{name}")
            for name in fields
            if name in value
        }
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        for option in get_args(hint):
            try:
                return _checked(value, option, where)
            except EntryError:
                continue
        raise EntryError(f"{where} is none of {hint}")
    if origin is list:
        (item,) = get_args(hint)
        if not isinstance(value, list):
            raise EntryError(f"{where} is not a list")
        return [_checked(element, item, f"{where}[{n}]") for n, element in enumerate(value)]
    if origin is dict:
        key_type, item = get_args(hint)
        if not isinstance(value, dict) or key_type is not str:
            raise EntryError(f"{where} is not an object")
        return {name: _checked(element, item, f"{where}.{name}") for name, element in value.items()}
    if hint is type(None):
        if value is not None:
            raise EntryError(f"{where} is not null")
        return None
    if hint is int and (type(value) is not int):  # bool is an int to isinstance
        raise EntryError(f"{where} is not a whole number")
    if hint in (str, bool) and type(value) is not hint:
        raise EntryError(f"{where} is not a {hint.__name__}")
    if hint not in (int, str, bool):
        raise TypeError(f"no check for {hint!r}")  # a shape this module cannot read: a bug
    return value
