"""The cache codec: trees of frozen dataclasses as msgpack, and nothing else read back."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import struct
import tracemalloc
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec
import pytest

from paperanchor import tree
from paperanchor.codec import FORMAT, MAX_DEPTH, Codec, CodecError
from paperanchor.papers import LoadedPaper, paper_codec
from paperanchor.parse import parse_document
from paperanchor.tree import Document, Inline, Paragraph, Quote, Section, Text
from tests.conftest import CORPUS, FIXTURES
from tests.test_crafted_entries import Marker

LABEL = "paper:v:2501.11120v1"
TREE_CLASSES = [
    obj
    for _, obj in inspect.getmembers(tree, inspect.isclass)
    if dataclasses.is_dataclass(obj) and obj.__module__ == tree.__name__
]


def pages() -> list[Path]:
    return sorted((CORPUS / "html").glob("*.html")) + sorted((FIXTURES / "html").glob("*.html"))


def paper_of(document: Document, idv: str = "2501.11120v1") -> LoadedPaper:
    return LoadedPaper(document, idv[:-2], idv, 1, True, "arxiv", f"https://arxiv.org/html/{idv}")


def small_paper(*blocks: Any) -> LoadedPaper:
    return paper_of(Document(Inline("T", "T"), ("A. Author",), None, None, tuple(blocks)))


def envelope(codec: Codec[Any], root: Any, label: str = LABEL) -> bytes:
    """An entry written by hand: the codec's own envelope around any msgpack value."""
    schema = [[cls.__name__, [f.name for f in dataclasses.fields(cls)]] for cls in codec.classes]
    body = msgspec.msgpack.encode(root)
    return msgspec.msgpack.encode([FORMAT, label, schema, msgspec.Raw(body)])


def tag(codec: Codec[Any], cls: type) -> int:
    return codec.classes.index(cls)


# -- what is written is read back whole --------------------------------------------------------


@pytest.mark.parametrize("path", pages(), ids=lambda p: p.name)
def test_every_corpus_page_reads_back_equal_to_its_parse(path: Path) -> None:
    codec = paper_codec()
    document = parse_document(path.read_bytes(), "https://arxiv.org/html/2501.11120v1")
    paper = paper_of(document)

    back = codec.decode(codec.encode(paper, LABEL), LABEL)

    assert back == paper
    assert type(back.document.blocks) is tuple and back.document.footnotes == document.footnotes


def test_the_codec_covers_every_class_of_the_tree() -> None:
    # Fails when a tree class gains a field of a type the codec cannot check (then teach it).
    for cls in TREE_CLASSES:
        Codec(cls, max_bytes=1 << 20)
    kinds = {*typing.get_args(tree.Block), tree.Reference, tree.ListItem, tree.Footnote}
    assert kinds | {Document, Inline} <= set(paper_codec().classes)


@dataclass(frozen=True)
class WithAny:
    value: Any


@dataclass(frozen=True)
class WithObject:
    value: object


@dataclass(frozen=True)
class WithList:
    value: list[str]


@dataclass(frozen=True)
class WithSet:
    value: frozenset[str]


@dataclass(frozen=True)
class WithNested:
    value: dict[str, list[int]]


@dataclass
class NotFrozen:
    value: str


@pytest.mark.parametrize("cls", [WithAny, WithObject, WithList, WithSet, WithNested, NotFrozen])
def test_a_field_type_the_codec_cannot_check_is_refused_when_it_is_built(cls: type) -> None:
    with pytest.raises(TypeError, match=r"cannot check|only frozen"):
        Codec(cls, max_bytes=1 << 20)


@dataclass(frozen=True, slots=True)
class Later:
    """Fields of the kinds tree.py is gaining: optional text, literals, dicts, defaults."""

    latex: str | None
    quality: Literal["ok", "degraded", "failed"] = "ok"
    notes: dict[str, Inline] = field(default_factory=dict)
    pairs: tuple[tuple[str, int], ...] = ()
    score: float = 0.5
    flag: bool = False


def test_a_field_added_later_is_written_and_checked_without_changing_the_codec() -> None:
    codec = Codec(Later, max_bytes=1 << 20)
    value = Later(None, "degraded", {"n1": Inline("*a*", "a")}, (("x", 1),), 2.5, True)

    assert codec.decode(codec.encode(value, "k"), "k") == value
    with pytest.raises(CodecError, match="Invalid enum value 'broken'"):
        codec.decode(envelope(codec, [0, None, "broken", {}, [], 0.5, False], "k"), "k")
    with pytest.raises(CodecError, match="Expected `float`"):
        codec.decode(envelope(codec, [0, None, "ok", {}, [], "0.5", False], "k"), "k")


# -- what is refused ---------------------------------------------------------------------------


def at(cls: type, name: str) -> int:
    """Where field `name` of `cls` sits in its node's array (after the tag)."""
    return 1 + [f.name for f in dataclasses.fields(cls)].index(name)


def good_root(codec: Codec[Any]) -> list[Any]:
    """A valid entry's tree as plain msgpack arrays, to change in one place."""
    entry = codec.encode(small_paper(Text("S1.p1.1", Inline("a", "a"))), LABEL)
    root: list[Any] = msgspec.msgpack.decode(entry)[3]
    return root


def blocks_of(root: list[Any]) -> list[Any]:
    blocks: list[Any] = root[at(LoadedPaper, "document")][at(Document, "blocks")]
    return blocks


def test_a_hand_written_entry_of_the_right_shape_is_read() -> None:
    # The refusals below differ from this entry in one place each.
    codec = paper_codec()
    paper = codec.decode(envelope(codec, good_root(codec)), LABEL)
    assert paper.document.blocks == (Text("S1.p1.1", Inline("a", "a")),)


def _broken(codec: Codec[Any], case: str) -> list[Any]:
    root = good_root(codec)
    document = root[at(LoadedPaper, "document")]
    text = blocks_of(root)[0]
    inline = tag(codec, Inline)
    if case == "title is an int":
        document[at(Document, "title")] = 7
    elif case == "an int where text is":
        text[at(Text, "content")][at(Inline, "text")] = 5
    elif case == "true where a version number is":
        root[at(LoadedPaper, "version")] = True
    elif case == "an unknown node kind":
        text[0] = 99
    elif case == "a node kind not allowed there":
        blocks_of(root)[0] = [inline, "a", "a"]
    elif case == "an extra field":
        text.append("extra")
    elif case == "a missing field":
        text.pop()
    elif case == "a map where a node is":
        blocks_of(root)[0] = {"id": "S1"}
    elif case == "an extension type":
        text[at(Text, "content")][at(Inline, "text")] = msgspec.msgpack.Ext(1, b"x")
    elif case == "a float where a count is":
        document[at(Document, "errors")] = 1.0
    return root


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("title is an int", "Expected `array`, got `int`"),
        ("an int where text is", "Expected `str`, got `int`"),
        ("true where a version number is", "Expected `int | null`, got `bool`"),
        ("an unknown node kind", "Invalid value 99"),
        ("a node kind not allowed there", "Invalid value"),
        ("an extra field", "Expected `array` of at most length"),
        ("a missing field", "Expected `array` of at least length"),
        ("a map where a node is", "Expected `array`, got `object`"),
        ("an extension type", "Expected `str`, got `ext`"),
        ("a float where a count is", "Expected `int`, got `float`"),
    ],
)
def test_an_entry_that_breaks_the_schema_anywhere_is_refused(case: str, message: str) -> None:
    codec = paper_codec()
    with pytest.raises(CodecError, match=message):
        codec.decode(envelope(codec, _broken(codec, case)), LABEL)


def test_an_entry_for_another_key_schema_or_format_is_refused() -> None:
    codec = paper_codec()
    good = codec.encode(small_paper(), LABEL)
    other_key = "paper:v:2402.00001v1"
    with pytest.raises(CodecError, match=rf"is for {LABEL}, not {other_key}"):
        codec.decode(good, other_key)

    schema = [[c.__name__, [f.name for f in dataclasses.fields(c)]] for c in codec.classes]
    schema[0][1][0] = "renamed"  # the same classes, one field renamed
    body = msgspec.msgpack.encode(good_root(codec))
    other = msgspec.msgpack.encode([FORMAT, LABEL, schema, msgspec.Raw(body)])
    with pytest.raises(CodecError, match="another schema"):
        codec.decode(other, LABEL)
    with pytest.raises(CodecError, match="Invalid enum value 2"):
        codec.decode(msgspec.msgpack.encode([FORMAT + 1, LABEL, schema, msgspec.Raw(body)]), LABEL)


def test_truncated_or_foreign_bytes_are_refused(tmp_path: Path) -> None:
    codec = paper_codec()
    good = codec.encode(small_paper(Text("S1.p1.1", Inline("a", "a"))), LABEL)
    marker = tmp_path / "ran"
    for raw in [
        good[:-1],
        good[: len(good) // 2],
        good + b"\x00",
        b"",
        pickle.dumps(Marker(marker)),
        b'{"title": "json"}',
    ]:
        with pytest.raises(CodecError):
            codec.decode(raw, LABEL)
    assert not marker.exists()  # the payload is live: tests/test_crafted_entries.py


def test_nesting_past_the_limit_is_refused_both_ways() -> None:
    codec = paper_codec()
    node: Any = Paragraph("p", (Text("t", Inline("a", "a")),))
    for level in range(MAX_DEPTH):
        node = Quote(f"q{level}", (node,))
    too_deep = small_paper(Section("S1", "section", "1", "", Inline("S", "S"), 1, (node,)))

    with pytest.raises(CodecError, match="nested deeper"):
        codec.encode(too_deep, LABEL)  # never written, so never refused on every read
    root = good_root(codec)
    wire: Any = blocks_of(root)[0]
    for level in range(MAX_DEPTH):
        wire = [tag(codec, Quote), f"q{level}", [wire]]
    blocks_of(root)[0] = wire
    with pytest.raises(CodecError, match="nested deeper"):
        codec.decode(envelope(codec, root), LABEL)
    # msgspec's own nesting is bounded too: 100,000 arrays deep is refused, not a crash
    with pytest.raises(CodecError):
        codec.decode(spliced(codec, b"\x91" * 100_000 + b"\xc0"), LABEL)


def test_a_value_of_the_wrong_type_is_never_written() -> None:
    codec = paper_codec()
    wrong = small_paper(Text("S1.p1.1", Inline("a", 3)))  # type: ignore[arg-type]
    with pytest.raises(CodecError, match="Expected `str`, got `int`"):
        codec.encode(wrong, LABEL)
    with pytest.raises(CodecError, match="expected a LoadedPaper"):
        codec.encode(small_paper().document, LABEL)  # type: ignore[arg-type]


def test_an_oversized_entry_is_refused_unread() -> None:
    codec = Codec(LoadedPaper, max_bytes=10_000)
    big = small_paper(Text("S1.p1.1", Inline("a" * 20_000, "a")))
    with pytest.raises(CodecError, match="exceeds 10000"):
        codec.encode(big, LABEL)
    raw = paper_codec().encode(big, LABEL)
    with pytest.raises(CodecError, match="exceeds 10000"):
        codec.decode(raw, LABEL)


def spliced(codec: Codec[Any], blocks: bytes) -> bytes:
    """A valid entry whose document's blocks are the raw msgpack `blocks`."""
    root = good_root(codec)
    root[at(LoadedPaper, "document")][at(Document, "blocks")] = "SPLICE-HERE"
    raw = envelope(codec, root)
    assert raw.count(b"\xabSPLICE-HERE") == 1
    return raw.replace(b"\xabSPLICE-HERE", blocks)


@pytest.mark.parametrize(
    "bomb",
    [
        # an array header announcing 4 billion nodes, and nothing after it
        "announced",
        # 20 MB of one-element arrays where nodes belong: a generic unpacker builds 10 million
        # tuples (640 MB) before anything can look at them
        "small arrays",
        # 20 MB of two-letter strings where nodes belong
        "short strings",
    ],
)
def test_a_msgpack_bomb_is_refused_at_its_first_wrong_byte(bomb: str) -> None:
    codec = paper_codec()
    count = 10_000_000
    blocks = {
        "announced": b"\xdd" + struct.pack(">I", 2**32 - 1),
        "small arrays": b"\xdd" + struct.pack(">I", count) + b"\x91\xc0" * count,
        "short strings": b"\xdd" + struct.pack(">I", count) + b"\xa2ab" * count,
    }[bomb]
    raw = spliced(codec, blocks)
    tracemalloc.start()
    try:
        with pytest.raises(CodecError):
            codec.decode(raw, LABEL)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"refusing a {len(raw) >> 20} MB bomb took {peak >> 20} MB"
