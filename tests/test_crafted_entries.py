"""Crafted cache entries, in a real diskcache folder and a real redis-server: never run, never
served; each is dropped and the paper fetched again through the replay upstream."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import pickle
import shutil
import sqlite3
import stat
import struct
from pathlib import Path
from typing import Any

import diskcache
import msgspec
import pytest
import redis

from paperanchor.papers import LoadedPaper, paper_codec
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.store import DiskStore, PaperCache, RedisStore
from tests.replay import load

IDV = "2501.11120v1"
KEY = f"paper:{PARSER_VERSION}:{IDV}"
OTHER = "2402.01234v1"  # another paper the replay upstream serves


class Marker:
    """Unpickling it creates a file (what any code in a pickle could do instead)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


def old_envelope(payload: bytes) -> bytes:
    """The entry format before this change: magic, unkeyed SHA-256, then a pickle."""
    return b"PAc1" + hashlib.sha256(payload).digest() + payload


def wrapped(body: bytes) -> bytes:
    """The current envelope, with a valid checksum, around any payload."""
    return b"PAm1" + hashlib.sha256(body).digest() + body


def real_entry(replay: Any, idv: str, name: str, key: str) -> bytes:
    """A genuine entry for `idv` (its page `name`), labelled with `key`."""
    url = f"{replay.arxiv_url}/{idv}"
    document = parse_document(replay.corpus_page(name), url)
    paper = LoadedPaper(document, idv[:-2], idv, 1, True, "arxiv", url)
    return wrapped(paper_codec().encode(paper, key))


def wrong_types(replay: Any) -> bytes:
    """A genuine entry with the title's text replaced by an integer."""
    codec = paper_codec()
    head, body = _split(real_entry(replay, IDV, "2501.11120v1.arxiv.html", KEY)[36:])
    root = msgspec.msgpack.decode(body)
    root[1][1][2] = 12345  # LoadedPaper.document -> Document.title -> Inline.text
    entry = msgspec.msgpack.encode([*head, msgspec.Raw(msgspec.msgpack.encode(root))])
    with pytest.raises(ValueError):
        codec.decode(entry, KEY)
    return wrapped(entry)


def _split(entry: bytes) -> tuple[list[Any], bytes]:
    fmt, label, schema, body = msgspec.msgpack.Decoder(tuple[int, str, Any, msgspec.Raw]).decode(
        entry
    )
    return [fmt, label, schema], bytes(body)


def bomb() -> bytes:
    """20 MB of one-element arrays where the tree belongs, with a valid checksum."""
    codec = paper_codec()
    schema = [[c.__name__, [f.name for f in dataclasses.fields(c)]] for c in codec.classes]
    count = 10_000_000
    body = b"\xdd" + struct.pack(">I", count) + b"\x91\xc0" * count
    return wrapped(msgspec.msgpack.encode([1, KEY, schema, msgspec.Raw(body)]))


def crafted(kind: str, replay: Any, marker: Path) -> bytes:
    if kind == "the old pickle envelope":
        return old_envelope(pickle.dumps((IDV, PARSER_VERSION, Marker(marker))))
    if kind == "a pickle in the new envelope":
        return wrapped(pickle.dumps(Marker(marker)))
    if kind == "a msgpack bomb":
        return bomb()
    if kind == "wrong-typed fields":
        return wrong_types(replay)
    if kind == "another paper's entry":
        return real_entry(replay, OTHER, "submission-5393936.arxiv.html", KEY.replace(IDV, OTHER))
    if kind == "another paper under this label":
        return real_entry(replay, OTHER, "submission-5393936.arxiv.html", KEY)
    if kind == "another parser version's entry":
        return real_entry(replay, IDV, "2501.11120v1.arxiv.html", f"paper:0:{IDV}")
    raise AssertionError(kind)


KINDS = [
    "the old pickle envelope",
    "a pickle in the new envelope",
    "a msgpack bomb",
    "wrong-typed fields",
    "another paper's entry",
    "another paper under this label",
    "another parser version's entry",
]


def test_the_old_envelope_ran_its_pickle_when_read(tmp_path: Path) -> None:
    # The control: what `pickle.loads(_unwrap(raw))` did with the first crafted kind.
    marker = tmp_path / "ran"
    raw = old_envelope(pickle.dumps((IDV, PARSER_VERSION, Marker(marker))))
    assert hashlib.sha256(raw[36:]).digest() == raw[4:36]  # its checksum is valid
    pickle.loads(raw[36:])[2].close()
    assert marker.exists()


def assert_refetched(replay: Any, settings: Any, marker: Path, calls: int) -> LoadedPaper:
    loaded: LoadedPaper = asyncio.run(load(settings, IDV))
    assert not marker.exists()
    assert loaded.idv == IDV and loaded.document.title.text.startswith("Tell me")
    assert replay.count() == calls  # fetched again: the entry was not served
    return loaded


@pytest.mark.parametrize("kind", KINDS)
def test_a_crafted_redis_entry_is_dropped_and_the_paper_refetched(
    kind: str, replay: Any, shared_redis: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    settings = replay.settings(tmp_path / "disk", cache_url=shared_redis.url)
    client = redis.Redis.from_url(shared_redis.url)
    try:
        client.set(f"paperanchor:{KEY}", crafted(kind, replay, marker))
        loaded = assert_refetched(replay, settings, marker, 1)
        stored = client.get(f"paperanchor:{KEY}")
    finally:
        client.close()
    assert stored is not None and stored[:4] == b"PAm1"  # rebuilt from the fetch
    store = RedisStore(shared_redis.url)
    try:
        assert PaperCache(store, paper_codec()).get_paper(IDV, PARSER_VERSION) == loaded
    finally:
        store.close()


def _diskcache_write(directory: Path, key: str, value: object) -> None:
    """Write with diskcache's own defaults, as any process sharing the folder could."""
    with diskcache.Cache(str(directory)) as cache:
        cache.set(key, value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_crafted_diskcache_entry_is_dropped_and_the_paper_refetched(
    kind: str, replay: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    cache_dir = tmp_path / "cache"
    DiskStore(cache_dir).close()
    _diskcache_write(cache_dir, KEY, crafted(kind, replay, marker))

    loaded = assert_refetched(replay, replay.settings(cache_dir), marker, 1)

    store = DiskStore(cache_dir)
    try:
        assert PaperCache(store, paper_codec()).get_paper(IDV, PARSER_VERSION) == loaded
    finally:
        store.close()


@pytest.mark.parametrize("where", ["in the database", "in a value file"])
def test_a_pickled_diskcache_value_is_never_unpickled(where: str, replay: Any, tmp_path: Path):
    # diskcache pickles values that are not bytes and unpickles them on read (MODE_PICKLE);
    # a large one lives in a value file, a small one in its SQLite row.
    marker = tmp_path / "ran"
    cache_dir = tmp_path / "cache"
    DiskStore(cache_dir).close()
    padding = "x" * (100_000 if where == "in a value file" else 10)
    _diskcache_write(cache_dir, KEY, (Marker(marker), padding))
    control = tmp_path / "control"
    shutil.copytree(cache_dir, control)
    with diskcache.Cache(str(control)) as plain:
        plain.get(KEY)[0].close()  # diskcache's own Disk runs it
    assert marker.exists()
    marker.unlink()

    assert_refetched(replay, replay.settings(cache_dir), marker, 1)


def test_a_value_file_outside_the_cache_folder_is_neither_read_nor_removed(
    replay: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache_dir = tmp_path / "cache"
    asyncio.run(load(replay.settings(cache_dir), IDV))
    outside = tmp_path / "outside.val"
    outside.write_bytes(b"PAm1 not ours")
    with contextlib.closing(sqlite3.connect(cache_dir / "cache.db")) as db, db:
        db.execute(
            "UPDATE Cache SET filename = ?, mode = 2, value = NULL WHERE key = ?",
            (f"../{outside.name}", KEY),
        )

    loaded = assert_refetched(replay, replay.settings(cache_dir), tmp_path / "ran", 2)

    assert outside.read_bytes() == b"PAm1 not ours"
    assert "outside the cache folder" in caplog.text
    assert loaded.source == "arxiv"


def test_a_redis_value_past_the_limit_is_dropped_after_reading_only_the_limit(
    shared_redis: Any,
) -> None:
    store = RedisStore(shared_redis.url, max_value_bytes=1000)
    try:
        store.set("big", b"x" * 5000)
        store.set("small", b"y" * 1000)
        assert store.get("big") is None
        assert store.get("small") == b"y" * 1000
        assert shared_redis.all_keys() == ["paperanchor:small"]
    finally:
        store.close()


def test_a_diskcache_value_past_the_limit_is_dropped(tmp_path: Path) -> None:
    store = DiskStore(tmp_path / "cache", max_value_bytes=100_000)
    try:
        store.set("file", b"x" * 200_000)  # diskcache keeps it in a value file
        store.set("row", b"y" * 1000)
        assert store.get("file") is None
        assert store.get("row") == b"y" * 1000
        assert store.get("file") is None  # and it is gone
    finally:
        store.close()


def test_the_cache_folder_is_created_private_and_tightened_if_it_exists(tmp_path: Path):
    fresh = tmp_path / "fresh" / "cache"
    DiskStore(fresh).close()
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700

    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    DiskStore(loose).close()
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700
