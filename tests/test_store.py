"""The store protocol's diskcache backend and the paper cache on it (Redis: test_redis_store.py)."""

from __future__ import annotations

import threading
import time

import pytest

from paperanchor.papers import LoadedPaper, paper_codec
from paperanchor.settings import Settings
from paperanchor.store import BestEffort, DiskStore, PaperCache, open_store
from paperanchor.tree import Document, Inline


def paper(title: str, idv: str = "1706.03762v7") -> LoadedPaper:
    document = Document(Inline(title, title), (), None, None, ())
    return LoadedPaper(document, idv[:10], idv, 7, True, "arxiv", f"https://arxiv.org/html/{idv}")


@pytest.fixture
def store(tmp_path):
    opened = DiskStore(tmp_path / "cache")
    yield opened
    opened.close()


def test_a_disk_store_keeps_bytes_until_deleted(store):
    store.set("k", b"\x00value")
    assert store.get("k") == b"\x00value"
    store.delete("k")
    assert store.get("k") is None
    store.delete("never-set")  # deleting a missing key is fine


def test_a_disk_store_entry_expires_after_its_ttl(store):
    store.set("short", b"v", ttl=0.05)
    store.set("long", b"v")
    time.sleep(0.1)
    assert store.get("short") is None
    assert store.get("long") == b"v"


def test_a_disk_store_persists_across_instances_and_serves_any_thread(tmp_path):
    first = DiskStore(tmp_path)
    first.set("k", b"v")
    first.close()
    first.close()  # closing twice is harmless

    second = DiskStore(tmp_path)
    seen: list[bytes | None] = []
    threads = [threading.Thread(target=lambda: seen.append(second.get("k"))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    second.close()
    assert seen == [b"v"] * 4


def test_open_store_is_the_disk_cache_under_cache_dir(tmp_path):
    opened = open_store(Settings(_env_file=None, cache_dir=tmp_path / "here"))
    try:
        assert isinstance(opened, DiskStore) and opened.directory == tmp_path / "here"
        assert (tmp_path / "here").is_dir()
    finally:
        opened.close()


def test_a_paper_is_cached_per_idv_and_parser_version(store):
    cache = PaperCache(store, paper_codec())
    cache.put_paper("1706.03762v7", "1", paper("Attention"))

    assert cache.get_paper("1706.03762v7", "1") == paper("Attention")
    assert cache.get_paper("1706.03762v7", "2") is None  # another parser's entry is ignored
    assert cache.get_paper("1706.03762v6", "1") is None


def test_a_paper_with_a_ttl_expires(store):
    cache = PaperCache(store, paper_codec())
    cache.put_paper("1706.03762", "1", paper("tree", "1706.03762"), ttl=0.05)
    time.sleep(0.1)
    assert cache.get_paper("1706.03762", "1") is None


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda raw: raw[: len(raw) // 2], id="truncated"),
        pytest.param(lambda raw: raw[:-1] + bytes([raw[-1] ^ 1]), id="bit-flip"),
        pytest.param(lambda raw: b"garbage", id="garbage"),
        pytest.param(lambda raw: b"", id="empty"),
    ],
)
def test_a_corrupt_paper_entry_is_dropped_and_reads_as_a_miss(store, damage, caplog):
    cache = PaperCache(store, paper_codec())
    cache.put_paper("1706.03762v7", "1", paper("Attention"))
    key = PaperCache.paper_key("1706.03762v7", "1")
    store.set(key, damage(store.get(key)))

    assert cache.get_paper("1706.03762v7", "1") is None
    assert store.get(key) is None  # dropped, so the next load refetches and rewrites it
    assert "dropping corrupt cache entry" in caplog.text


def test_an_entry_stored_under_another_key_is_not_served(store):
    cache = PaperCache(store, paper_codec())
    cache.put_paper("1706.03762v6", "1", paper("v6 tree", "1706.03762v6"))
    store.set(
        PaperCache.paper_key("1706.03762v7", "1"), store.get(cache.paper_key("1706.03762v6", "1"))
    )

    assert cache.get_paper("1706.03762v7", "1") is None


def test_the_latest_version_of_a_bare_id_is_remembered_for_its_ttl(store):
    cache = PaperCache(store, paper_codec())
    cache.put_latest("1706.03762", "1706.03762v7", ttl=0.05)
    cache.put_latest("hep-th/9901001", "hep-th/9901001v2", ttl=60)

    assert cache.get_latest("1706.03762") == "1706.03762v7"
    assert cache.get_latest("hep-th/9901001") == "hep-th/9901001v2"
    time.sleep(0.1)
    assert cache.get_latest("1706.03762") is None


@pytest.mark.parametrize("value", [b"\xff\xfe", b"not an id", b"1807.00001v2"])
def test_a_corrupt_latest_mapping_is_dropped(store, value):
    cache = PaperCache(store, paper_codec())
    store.set(PaperCache.latest_key("1706.03762"), value)

    assert cache.get_latest("1706.03762") is None
    assert store.get(PaperCache.latest_key("1706.03762")) is None


class _BrokenStore:
    def get(self, key: str) -> bytes | None:
        raise OSError("disk on fire")

    def set(self, key: str, value: bytes, ttl: float | None = None) -> None:
        raise OSError("disk on fire")

    def delete(self, key: str) -> None:
        raise OSError("disk on fire")

    def close(self) -> None:
        pass


def test_a_failing_store_reads_as_misses_and_skips_writes(caplog):
    cache = PaperCache(_BrokenStore(), paper_codec())

    cache.put_paper("1706.03762v7", "1", paper("tree"))
    cache.put_latest("1706.03762", "1706.03762v7", ttl=1)

    assert cache.get_paper("1706.03762v7", "1") is None
    assert cache.get_latest("1706.03762") is None
    assert "disk on fire" in caplog.text


def test_a_tree_the_codec_cannot_write_is_served_uncached_rather_than_failing(store, caplog):
    cache = PaperCache(store, paper_codec())
    odd = LoadedPaper(lambda: None, "1706.03762", "1706.03762v7", 7, True, "arxiv", "u")  # type: ignore[arg-type]

    assert cache.put_paper("1706.03762v7", "1", odd) == 0

    assert cache.get_paper("1706.03762v7", "1") is None
    assert "not caching" in caplog.text


def test_best_effort_reads_a_failing_store_as_a_miss_and_skips_its_writes_and_deletes(caplog):
    kept = BestEffort(_BrokenStore())

    assert kept.get("k") is None
    kept.set("k", b"v", 60)
    kept.delete("k")

    assert [r.getMessage() for r in caplog.records] == [
        "cache read of k failed: disk on fire",
        "cache write of k failed: disk on fire",
        "cache delete of k failed: disk on fire",
    ]
