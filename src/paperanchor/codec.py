"""Frozen dataclass trees as msgpack bytes, read back only into the same classes.

A cache entry is data, never code (contract §2). The schema comes from the dataclasses' own type
hints, so a field added to tree.py is written and checked without a change here, and a field
type this module cannot check is refused when a codec is built (tests build one over every class
in tree.py). Reading refuses anything but a tree of exactly those classes and types: an unknown
node kind, a wrong type, a missing or extra field, nesting deeper than `max_depth`, an entry
larger than `max_bytes`.

The layout: an entry is the msgpack array `[FORMAT, label, schema, root]`: `label` says what the
entry is for (the reader refuses another), `schema` names each class and its fields in order,
so an entry says what it holds, and a node is the array
`[tag, field, …]` with `tag` its class's index in `schema`. Reading is msgspec's typed decoder
over mirror classes (`msgspec.Struct`) built from the dataclasses: it checks each value as it
reads it, so a hostile entry is refused at its first wrong byte before it costs memory (a
generic unpacker would first build the whole thing: 25 MB of one-element arrays took 640 MB).
The mirrors are then turned into the dataclasses. Pure: no web, cache or network imports.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

import msgspec

from paperanchor.refs import shown

T = TypeVar("T")

# Bump when the layout above changes: entries of another format are refused. (Any change to
# this module also changes the parser version, parse/version.py, so entries are rebuilt.)
FORMAT = 1

# Node levels an entry may nest (a node inside a node's field is one level). The deepest
# corpus tree has 18; the parser itself gives up at a few hundred (Python's recursion limit).
# A tree deeper than this is served but not cached.
MAX_DEPTH = 100

_SCALARS: frozenset[Any] = frozenset({str, int, float, bool, bytes, type(None)})

Convert = Callable[[Any, int], Any]
Schema = tuple[tuple[str, tuple[str, ...]], ...]


class CodecError(ValueError):
    """Bytes that are not an entry of this codec, or a value it cannot write."""


@dataclasses.dataclass(slots=True)
class _Kind:
    """One dataclass of the schema: its mirror and the conversions both ways."""

    cls: type
    tag: int
    names: tuple[str, ...]
    mirror: Any = None
    to_tree: Convert | None = None
    to_wire: Convert | None = None


class Codec(Generic[T]):
    """Writes and reads trees of frozen dataclasses rooted at `root`, checking every field."""

    def __init__(self, root: type[T], *, max_bytes: int, max_depth: int = MAX_DEPTH) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self._kinds: dict[type, _Kind] = {}
        self._mirrors: dict[type, _Kind] = {}
        wire_root, self._root_to_tree, self._root_to_wire = self._type(root, root.__name__)
        self._schema: Schema = tuple((k.cls.__name__, k.names) for k in self._kinds.values())
        # The envelope is read first and the tree only when its label and schema are ours.
        head = tuple[Literal[FORMAT], str, Schema, msgspec.Raw]  # type: ignore[valid-type]
        self._head: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(head)
        self._body: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(wire_root)
        self._encoder = msgspec.msgpack.Encoder()

    @property
    def classes(self) -> tuple[type, ...]:
        """Every dataclass an entry may hold, in tag order."""
        return tuple(self._kinds)

    def encode(self, value: T, label: str) -> bytes:
        """`value` as an entry named `label` (what it is for: the reader asks for the same)."""
        if type(value) is not self.root:
            raise CodecError(f"expected a {self.root.__name__}, got {type(value).__name__}")
        try:
            wire = _apply(self._root_to_wire, value, 0)
            body = self._encoder.encode(wire)
            # A value of the wrong type in a field would be written and then refused on
            # every read: check it now, in C, without building the tree again.
            self._body.decode(body)
            data = self._encoder.encode((FORMAT, label, self._schema, msgspec.Raw(body)))
        except CodecError:
            raise
        except (TypeError, ValueError, OverflowError, RecursionError, msgspec.MsgspecError) as exc:
            raise CodecError(f"cannot encode: {exc}") from None
        if len(data) > self.max_bytes:
            raise CodecError(f"entry of {len(data)} bytes exceeds {self.max_bytes}")
        return data

    def decode(self, data: bytes, label: str) -> T:
        """The tree in `data`; `CodecError` for anything but a valid entry named `label`."""
        if type(data) is not bytes:
            raise CodecError(f"an entry is bytes, got {type(data).__name__}")
        if len(data) > self.max_bytes:
            raise CodecError(f"entry of {len(data)} bytes exceeds {self.max_bytes}")
        try:
            _format, stored_label, schema, body = self._head.decode(data)
            if stored_label != label:
                raise CodecError(f"entry is for {shown(stored_label)}, not {shown(label)}")
            if schema != self._schema:
                raise CodecError("entry was written with another schema")
            wire = self._body.decode(body)
        except msgspec.ValidationError as exc:
            raise CodecError(f"not an entry of this schema: {exc}") from None
        except (msgspec.MsgspecError, RecursionError) as exc:
            raise CodecError(f"not msgpack: {exc}") from None
        try:
            return _apply(self._root_to_tree, wire, 0)  # type: ignore[no-any-return]
        except RecursionError:
            raise CodecError("nested too deeply") from None
        except (TypeError, ValueError) as exc:  # a dataclass's own checks (__post_init__)
            raise CodecError(f"refused by its class: {exc}") from None

    # -- the schema, derived from type hints ------------------------------------------------

    def _type(self, hint: Any, where: str) -> tuple[Any, Convert | None, Convert | None]:
        """For values of `hint`: the type msgspec checks, and conversions to the tree and wire
        (None where the decoded value already is the tree's value)."""
        if hint in _SCALARS:
            return hint, None, None
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is Literal:
            if not all(type(a) in _SCALARS for a in args):
                raise TypeError(f"{where}: the cache codec cannot check {hint!r}")
            return hint, None, None
        if origin in (typing.Union, types.UnionType):
            return self._union(args, where)
        if origin is tuple:
            return self._tuple(args, where)
        if origin is dict and len(args) == 2:
            return self._dict(args, where)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            kind = self._kind(hint)
            return kind.mirror, self._node_to_tree(kind), self._node_to_wire(kind)
        raise TypeError(f"{where}: the cache codec cannot check values of type {hint!r}")

    def _kind(self, cls: type) -> _Kind:
        kind = self._kinds.get(cls)
        if kind is not None:
            return kind
        params = getattr(cls, "__dataclass_params__", None)
        if params is None or not params.frozen:
            raise TypeError(f"{cls.__name__}: the cache codec reads only frozen dataclasses")
        fields = dataclasses.fields(cls)
        for f in fields:
            if not f.init:
                raise TypeError(f"{cls.__name__}.{f.name}: a field outside __init__ is not cached")
        names = tuple(f.name for f in fields)
        kind = _Kind(cls, len(self._kinds), names)
        # The mirror exists before its field types, which may name it (a section's blocks
        # hold sections); msgspec reads the annotations when the decoder is built.
        kind.mirror = msgspec.defstruct(
            f"{cls.__name__}Wire",
            [(name, object) for name in names],
            tag=kind.tag,
            array_like=True,
            frozen=True,
            forbid_unknown_fields=True,
        )
        self._kinds[cls] = kind
        self._mirrors[kind.mirror] = kind
        hints = typing.get_type_hints(cls)
        parts = [self._type(hints[name], f"{cls.__name__}.{name}") for name in names]
        kind.mirror.__annotations__ = {name: p[0] for name, p in zip(names, parts, strict=True)}
        kind.to_tree = _fields_to_tree(cls, [p[1] for p in parts], self.max_depth)
        kind.to_wire = _fields_to_wire(kind.mirror, names, [p[2] for p in parts], self.max_depth)
        return kind

    def _node_to_tree(self, kind: _Kind) -> Convert:
        def convert(value: Any, depth: int) -> Any:
            return kind.to_tree(value, depth)  # type: ignore[misc]

        return convert

    def _node_to_wire(self, kind: _Kind) -> Convert:
        def convert(value: Any, depth: int) -> Any:
            if type(value) is not kind.cls:
                raise CodecError(f"expected a {kind.cls.__name__}, got {type(value).__name__}")
            return kind.to_wire(value, depth)  # type: ignore[misc]

        return convert

    def _union(
        self, args: tuple[Any, ...], where: str
    ) -> tuple[Any, Convert | None, Convert | None]:
        parts = [self._type(a, where) for a in args]
        wire = typing.Union[tuple(p[0] for p in parts)]  # type: ignore[valid-type]  # noqa: UP007
        if all(p[1] is None and p[2] is None for p in parts):
            return wire, None, None
        mirrors = self._mirrors
        kinds = self._kinds

        def to_tree(value: Any, depth: int) -> Any:
            kind = mirrors.get(type(value))
            return value if kind is None else kind.to_tree(value, depth)  # type: ignore[misc]

        allowed = frozenset(a for a in args if a in kinds)
        plain = frozenset(a for a in args if a not in kinds)

        def to_wire(value: Any, depth: int) -> Any:
            cls = type(value)
            if cls in allowed:
                return kinds[cls].to_wire(value, depth)  # type: ignore[misc]
            if cls not in plain:
                raise CodecError(f"{where}: {cls.__name__} is not allowed here")
            return value

        return wire, to_tree, to_wire

    def _tuple(
        self, args: tuple[Any, ...], where: str
    ) -> tuple[Any, Convert | None, Convert | None]:
        if len(args) == 2 and args[1] is Ellipsis:
            wire, to_tree, to_wire = self._type(args[0], f"{where}[]")
            return tuple[wire, ...], _each(to_tree), _each(to_wire)  # type: ignore[valid-type]
        if not args or Ellipsis in args:
            raise TypeError(f"{where}: the cache codec cannot check {args!r}")
        parts = [self._type(a, f"{where}[{n}]") for n, a in enumerate(args)]
        wire = tuple.__class_getitem__(tuple(p[0] for p in parts))
        return wire, _positions([p[1] for p in parts]), _positions([p[2] for p in parts])

    def _dict(
        self, args: tuple[Any, ...], where: str
    ) -> tuple[Any, Convert | None, Convert | None]:
        key, key_tree, key_wire = self._type(args[0], f"{where} key")
        if key_tree is not None or key_wire is not None:
            raise TypeError(f"{where}: dict keys must be plain values")
        item, item_tree, item_wire = self._type(args[1], f"{where} value")
        return dict[key, item], _values(item_tree), _values(item_wire)  # type: ignore[valid-type]


def _apply(convert: Convert | None, value: Any, depth: int) -> Any:
    return value if convert is None else convert(value, depth)


def _each(convert: Convert | None) -> Convert | None:
    if convert is None:
        return None
    inner = convert

    def each(value: Any, depth: int) -> Any:
        return tuple([inner(x, depth) for x in value])

    return each


def _positions(converts: list[Convert | None]) -> Convert | None:
    if all(c is None for c in converts):
        return None

    def positions(value: Any, depth: int) -> Any:
        return tuple([_apply(c, x, depth) for c, x in zip(converts, value, strict=True)])

    return positions


def _values(convert: Convert | None) -> Convert | None:
    if convert is None:
        return None
    inner = convert

    def values(value: Any, depth: int) -> Any:
        return {k: inner(v, depth) for k, v in value.items()}

    return values


def _fields_to_tree(cls: type, converts: list[Convert | None], max_depth: int) -> Convert:
    astuple = msgspec.structs.astuple
    if all(c is None for c in converts):

        def plain(value: Any, depth: int) -> Any:
            return cls(*astuple(value))

        return plain
    pairs = list(enumerate(converts))
    name = cls.__name__

    def to_tree(value: Any, depth: int) -> Any:
        if depth >= max_depth:
            raise CodecError(f"{name}: nested deeper than {max_depth} nodes")
        items = list(astuple(value))
        for index, convert in pairs:
            if convert is not None:
                items[index] = convert(items[index], depth + 1)
        return cls(*items)

    return to_tree


def _fields_to_wire(
    mirror: Any, names: tuple[str, ...], converts: list[Convert | None], max_depth: int
) -> Convert:
    pairs = list(zip(names, converts, strict=True))

    def to_wire(value: Any, depth: int) -> Any:
        if depth >= max_depth:
            raise CodecError(f"{type(value).__name__}: nested deeper than {max_depth} nodes")
        return mirror(
            *[
                getattr(value, name)
                if convert is None
                else convert(getattr(value, name), depth + 1)
                for name, convert in pairs
            ]
        )

    return to_wire
