"""Discovery cache entries are JSON naming their key, read back only in their shape."""

from __future__ import annotations

import json
import pickle
import time

import pytest

from paperanchor.discovery.atom import Metadata, SearchPage
from paperanchor.discovery.categories import Trends
from paperanchor.discovery.entries import MAX_ENTRY_BYTES, EntryError, decode, encode
from paperanchor.discovery.s2 import Citations
from tests.discovery.recorded import all_metadata

pytestmark = pytest.mark.usefixtures("corpus")

KEY = "meta:1:1111.2011"


def metadata() -> Metadata:
    found: Metadata = all_metadata()["1111.2011"]
    return found


def raw(value: object, key: str = KEY) -> bytes:
    return json.dumps({"key": key, "value": value}).encode()


def test_an_entry_reads_back_as_it_was_written() -> None:
    entry = encode(KEY, metadata())

    assert entry is not None and entry.startswith(b'{"key":"meta:1:1111.2011","value":{')
    assert decode(entry, KEY, Metadata) == metadata()


def test_every_shape_reads_back() -> None:
    page: SearchPage = {"query": "ti:x", "total": 0, "start": 0, "hits": []}
    citations: Citations = {
        "paper": "2304.05376",
        "count": 1,
        "citations": [{"title": "", "year": None, "arxiv": None, "doi": None, "url": None}],
    }
    trends: Trends = {
        "category": "cs.LG", "days": 1, "since": "2026-01-01", "until": "2026-01-01",
        "submissions": 0, "total": 0, "complete": True,
        "perDay": [{"date": "2026-01-01", "count": 0}], "topTerms": [],
    }  # fmt: skip
    for value, shape in ((page, SearchPage), (citations, Citations), (trends, Trends)):
        entry = encode("k", value)
        assert entry is not None and decode(entry, "k", shape) == value


def fields(**changed: object) -> dict[str, object]:
    return {**metadata(), **changed}


# (what an entry holds, why it is refused)
HOSTILE = [
    (pickle.dumps(metadata()), "not JSON"),  # an older format, or a crafted one: never unpickled
    (b"\xff\xfe{}", "not JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "not JSON"),  # deeper than Python's stack
    (b'{"key": "meta:1:1111.2011"}', "not an entry"),
    (json.dumps({"key": KEY, "value": {}, "extra": 1}).encode(), "not an entry"),
    (raw(metadata(), key="meta:1:1706.03762"), "another key"),
    (raw([metadata()]), "value is not an object"),
    (raw({k: v for k, v in metadata().items() if k != "title"}), "value has no title"),
    (raw(fields(title=0)), "value.title is not a str"),
    (raw(fields(latestVersion=True)), "value.latestVersion is not a whole number"),
    (raw(fields(latestVersion=2.0)), "value.latestVersion is not a whole number"),
    (raw(fields(authors="A. Author")), "value.authors is not a list"),
    (raw(fields(authors=["A", None])), r"value.authors\[1\] is not a str"),
    (raw(fields(doi={"$ref": "x"})), "value.doi is none of"),
    (b" " * (MAX_ENTRY_BYTES + 1), "an entry of"),
]


@pytest.mark.parametrize(("entry", "why"), HOSTILE, ids=[why for _, why in HOSTILE])
def test_an_entry_that_is_not_ours_is_refused_and_says_why(entry: bytes, why: str) -> None:
    started = time.monotonic()
    with pytest.raises(EntryError, match=why):
        decode(entry, KEY, Metadata)
    assert time.monotonic() - started < 2  # bounded: 1 MB at most is read


def test_fields_the_shape_does_not_name_are_dropped_not_served() -> None:
    value = decode(raw(fields(script="<script>")), KEY, Metadata)

    assert "script" not in value and value == metadata()


def test_an_answer_too_large_to_keep_is_not_written() -> None:
    huge = fields(abstract="x" * MAX_ENTRY_BYTES)

    assert encode(KEY, huge) is None
