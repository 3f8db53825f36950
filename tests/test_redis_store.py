"""The Redis store over a real redis-server: bytes, lifetimes, outages that degrade to the disk."""

from __future__ import annotations

import logging
import time

import pytest

from paperanchor import outage as outage_module
from paperanchor.errors import PaperAnchorError
from paperanchor.papers import LoadedPaper, paper_codec
from paperanchor.settings import Settings
from paperanchor.store import DiskStore, PaperCache, RedisStore, open_store
from paperanchor.tree import Document, Inline
from tests.conftest import free_port


@pytest.fixture
def fast_retry(monkeypatch):
    # Ask an absent Redis again after 50 ms rather than 1 s, so that a test sees it come back soon.
    monkeypatch.setattr(outage_module, "REDIS_RETRY_S", 0.05)


def test_a_redis_store_keeps_bytes_under_its_prefix_with_lifetimes(shared_redis):
    store = RedisStore(shared_redis.url)
    try:
        store.set("k", b"\x00value")
        store.set("short", b"v", ttl=0.05)
        assert store.get("k") == b"\x00value"
        assert shared_redis.all_keys() == ["paperanchor:k", "paperanchor:short"]
        time.sleep(0.1)
        assert store.get("short") is None
        store.delete("k")
        store.delete("never-set")  # deleting a missing key is fine
        assert store.get("k") is None
        assert shared_redis.all_keys() == []
    finally:
        store.close()
        store.close()  # closing twice is harmless


def test_the_paper_cache_works_the_same_over_redis(shared_redis):
    store = RedisStore(shared_redis.url)
    paper = LoadedPaper(
        Document(Inline("Attention", "Attention"), (), None, None, ()),
        *("1706.03762", "1706.03762v7", 7, True, "arxiv", "https://arxiv.org/html/1706.03762v7"),
    )
    try:
        cache = PaperCache(store, paper_codec())
        cache.put_paper("1706.03762v7", "1", paper)
        cache.put_latest("1706.03762", "1706.03762v7", ttl=60)

        assert cache.get_paper("1706.03762v7", "1") == paper
        assert cache.get_latest("1706.03762") == "1706.03762v7"
        key = PaperCache.paper_key("1706.03762v7", "1")
        raw = store.get(key)
        assert raw is not None
        store.set(key, raw[:-1])
        assert cache.get_paper("1706.03762v7", "1") is None  # damaged: dropped, never served
        assert shared_redis.all_keys() == ["paperanchor:latest:1706.03762"]
    finally:
        store.close()


def test_a_redis_cache_url_opens_a_redis_store_without_connecting(tmp_path, caplog):
    dead = free_port()
    settings = Settings(
        _env_file=None, cache_dir=tmp_path / "disk", cache_url=f"redis://:secret@127.0.0.1:{dead}/2"
    )

    store = open_store(settings)
    try:
        assert isinstance(store, RedisStore)
        assert store.where == f"redis://127.0.0.1:{dead}/2"
        assert not (tmp_path / "disk").exists()  # the disk is opened only when Redis is away
        assert store.get("k") is None
    finally:
        store.close()
    assert "unreachable" in caplog.text and "secret" not in caplog.text


def test_an_unusable_redis_url_is_a_clear_error_without_the_password():
    with pytest.raises(PaperAnchorError, match="not a usable Redis URL") as raised:
        RedisStore("redis://:secret@127.0.0.1:notaport/0")
    assert "secret" not in str(raised.value)


def test_while_redis_is_away_the_disk_stands_in_and_each_outage_warns_once(
    own_redis, tmp_path, caplog, fast_retry
):
    caplog.set_level(logging.WARNING, logger="paperanchor.store")
    store = RedisStore(own_redis.url, fallback=lambda: DiskStore(tmp_path / "disk"))
    try:
        store.set("before", b"in redis")
        own_redis.stop()

        for _ in range(3):
            assert store.get("before") is None  # a miss, not an error
            store.set("during", b"on disk")
            assert store.get("during") == b"on disk"
            time.sleep(0.06)  # each round asks Redis again
        assert store.is_down

        own_redis.start()
        time.sleep(0.06)
        assert store.get("during") is None  # back on Redis, which restarted empty
        store.set("after", b"in redis")
        assert own_redis.all_keys() == ["paperanchor:after"]

        own_redis.stop()
        time.sleep(0.06)
        assert store.get("after") is None
        own_redis.start()
        time.sleep(0.06)
        assert store.get("after") is None and not store.is_down
    finally:
        store.close()

    messages = [record.getMessage() for record in caplog.records]
    assert sum("unreachable" in message for message in messages) == 2  # two outages
    assert sum("is back after" in message for message in messages) == 2
    disk = DiskStore(tmp_path / "disk")
    try:
        assert disk.get("during") == b"on disk"  # what was written meanwhile stays local
    finally:
        disk.close()
