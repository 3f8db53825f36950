"""Cache backends behind one small protocol, and the paper cache built on it.

`DiskStore` is the embedded default (diskcache); `RedisStore` is a Redis server shared by any
number of processes and machines (`PAPERANCHOR_CACHE_URL=redis://…`), which is also what they
coordinate through (coordination.py). Both hold bytes only, and nothing read from them is unpickled:
a paper is written by the codec (codec.py) and read back only as the classes it names.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import stat
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import diskcache
import redis
from diskcache.core import MODE_BINARY, MODE_RAW, UNKNOWN
from redis.backoff import NoBackoff
from redis.retry import Retry

from paperanchor.codec import Codec, CodecError
from paperanchor.errors import PaperAnchorError
from paperanchor.outage import (
    REDIS_CONNECT_TIMEOUT_S,
    REDIS_TIMEOUT_S,
    RedisDown,
    RedisLink,
)
from paperanchor.refs import parse_ref
from paperanchor.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")
P = TypeVar("P")

# diskcache's own default, written down: about a thousand parsed papers of ~1 MB each; the
# least recently stored entries are evicted beyond it.
DISK_SIZE_LIMIT = 1 << 30

# Entry format: magic, SHA-256 of the payload, payload (codec.py's msgpack). The digest catches
# truncated and bit-flipped entries; it has no key, so it proves nothing about who wrote an entry:
# what keeps a crafted entry harmless is that the payload is data, checked field by field.
# (PAc1 was the pickle format: such entries are refused by their magic.)
_MAGIC = b"PAm1"
_DIGEST = 32
# The largest value a store hands over; a larger one is dropped unread. Paper entries are
# capped by the codec below this (papers.py); 2501.11120v1 is 0.4 MB, a 42 MB page 27 MB.
MAX_VALUE_BYTES = 256 << 20


# No arXiv id with its version comes near this; a longer "latest" entry is not ours.
_MAX_IDV = 200


class RefusedValue(Exception):
    """A stored value that is not bytes we wrote (a pickle, a path outside the cache, too large)."""


class Store(Protocol):
    """A byte store with optional per-key lifetimes."""

    def get(self, key: str) -> bytes | None: ...

    def set(self, key: str, value: bytes, ttl: float | None = None) -> None: ...

    def delete(self, key: str) -> None: ...

    def close(self) -> None: ...


# diskcache's own names for value files: two levels of folders, then 28 hex digits.
_VALUE_FILE = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{28}\.val")


class BytesDisk(diskcache.Disk):  # type: ignore[misc]
    """diskcache's serialisation limited to str keys and bytes values: it never unpickles.

    diskcache pickles any other key or value and unpickles rows marked so on read (its
    MODE_PICKLE), so a row written straight into its SQLite file would run code; here such a
    row, a value file named outside the cache folder, or one larger than `max_value_bytes` is
    refused unread, and files outside the folder are never removed.
    """

    # Set on the instance by DiskStore: a `disk_` setting would be stored in the cache's own
    # Settings table, and diskcache's plain Disk refuses it when it opens the folder.
    max_value_bytes = MAX_VALUE_BYTES

    def put(self, key: Any) -> tuple[Any, bool]:
        """diskcache's key encoding, for text keys only."""
        if type(key) is not str:
            raise TypeError(f"cache keys are str, got {type(key).__name__}")
        return super().put(key)  # type: ignore[no-any-return]

    def get(self, key: Any, raw: bool) -> Any:
        """A key as stored: text, never a pickle."""
        if not raw or type(key) is not str:
            raise RefusedValue("a pickled key")
        return key

    def store(self, value: Any, read: bool, key: Any = UNKNOWN) -> Any:
        """diskcache's value encoding, for bytes only."""
        if type(value) is not bytes:
            raise TypeError(f"cache values are bytes, got {type(value).__name__}")
        return super().store(value, read, key=key)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> bytes:
        """A stored value as bytes, refused when pickled, too large or a file outside the folder."""
        if read:
            raise RefusedValue("values are read whole")
        if mode == MODE_RAW:
            if type(value) is not bytes:
                raise RefusedValue(f"a stored {type(value).__name__}, not bytes")
            if len(value) > self.max_value_bytes:
                raise RefusedValue(f"a value of {len(value)} bytes")
            return value
        if mode != MODE_BINARY:
            raise RefusedValue(f"a value stored in diskcache mode {mode} (4 is a pickle)")
        path = self._value_path(filename)
        with open(path, "rb") as reader:
            info = os.fstat(reader.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > self.max_value_bytes:
                raise RefusedValue(f"a value file of {info.st_size} bytes")
            data = reader.read(self.max_value_bytes + 1)
        if len(data) > self.max_value_bytes:
            raise RefusedValue("a value file that grew while read")
        return data

    def remove(self, file_path: str) -> None:
        """Remove a value file, never one outside the cache folder."""
        try:
            self._value_path(file_path)
        except RefusedValue as exc:
            log.warning("not removing %s", exc)
            return
        super().remove(file_path)

    def _value_path(self, filename: str | None) -> str:
        if type(filename) is not str or not _VALUE_FILE.fullmatch(filename):
            raise RefusedValue(f"a value file named {filename!r}, outside the cache folder")
        return os.path.join(self._directory, filename)


def private_folder(directory: Path) -> None:
    """Create `directory` readable by its owner only (0700), or tighten it if it exists."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = stat.S_IMODE(directory.stat().st_mode)
    if mode != 0o700:
        try:
            directory.chmod(0o700)
        except OSError as exc:  # not ours: say so, the entries are still only data
            log.warning(
                "cannot make the cache folder %s private (mode %o): %s", directory, mode, exc
            )


class DiskStore(Store):
    """The embedded store: a diskcache directory, safe to share between processes."""

    def __init__(
        self,
        directory: Path,
        *,
        size_limit: int = DISK_SIZE_LIMIT,
        max_value_bytes: int = MAX_VALUE_BYTES,
    ) -> None:
        # diskcache keeps one SQLite connection per thread and closes only the calling
        # thread's; confining it to one worker thread keeps exactly one connection to close.
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="paperanchor-diskcache")
        self._closed = False
        self.directory = directory
        try:
            private_folder(directory)
            self._cache = self._call(
                lambda: diskcache.Cache(str(directory), size_limit=size_limit, disk=BytesDisk)
            )
            self._cache.disk.max_value_bytes = max_value_bytes
        except Exception as exc:
            self._worker.shutdown()
            raise PaperAnchorError(f"Cannot open the cache directory {directory}: {exc}") from exc

    def _call(self, job: Callable[[], T]) -> T:
        return self._worker.submit(job).result()

    def get(self, key: str) -> bytes | None:
        """The value, or None when absent, expired or refused."""
        try:
            value = self._call(lambda: self._cache.get(key, default=None))
        except RefusedValue as exc:
            log.warning("dropping cache entry %s: %s", key, exc)
            self.delete(key)
            return None
        return value if isinstance(value, bytes) else None

    def set(self, key: str, value: bytes, ttl: float | None = None) -> None:
        """Store `value` under `key` for `ttl` seconds (None: until evicted)."""
        self._call(lambda: self._cache.set(key, value, expire=ttl))

    def delete(self, key: str) -> None:
        """Forget `key`."""
        self._call(lambda: self._cache.delete(key))

    def close(self) -> None:
        """Close the cache's database."""
        if self._closed:
            return
        self._closed = True
        try:
            self._call(self._cache.close)
        finally:
            self._worker.shutdown()


class RedisStore(Store):
    """A Redis server shared by processes and machines; the disk cache stands in while it is away.

    Nothing connects until the first command, so a Redis that is down at start is an outage like
    any other. During an outage reads and writes go to `fallback` (opened on first need; the
    embedded cache under PAPERANCHOR_CACHE_DIR), and one warning is logged when it starts and one
    when Redis is back. What was written to the fallback stays there: it is not copied to Redis.
    """

    def __init__(
        self,
        url: str | RedisLink,
        *,
        fallback: Callable[[], Store] | None = None,
        max_value_bytes: int = MAX_VALUE_BYTES,
    ) -> None:
        """A store over the Redis at `url`, or over a `RedisLink` shared with the coordination
        and the rate limit (runtime.py): then an outage found by any of them is this store's."""
        self.link = url if isinstance(url, RedisLink) else RedisLink(url)
        self.where = self.link.where
        self.max_value_bytes = max_value_bytes
        try:
            self.client: redis.Redis = redis.Redis.from_url(
                self.link.url,
                socket_connect_timeout=REDIS_CONNECT_TIMEOUT_S,
                socket_timeout=REDIS_TIMEOUT_S,
                # One immediate retry on a fresh connection: after Redis restarts, every pooled
                # connection is dead, and the first command on each must not count as an outage.
                retry=Retry(NoBackoff(), 1),
            )
        except ValueError as exc:
            raise PaperAnchorError(
                f"PAPERANCHOR_CACHE_URL={self.where} is not a usable Redis URL: {exc}"
            ) from None
        self._fallback_factory = fallback
        self._fallback: Store | None = None
        self._fallback_failed = False
        self._state = threading.Lock()  # the fallback's opening
        self._closed = False

    @property
    def is_down(self) -> bool:
        """Whether the last command to this Redis (the store's or another client's) found it
        unreachable."""
        return self.link.is_down

    def run(self, command: Callable[[redis.Redis], T]) -> T:
        """`command(client)`; `RedisDown` while Redis is unreachable (logged once per outage).

        Other Redis errors (a full Redis refusing writes, a script error) propagate as they are.
        """
        self.link.check()
        try:
            result = command(self.client)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            self.link.failed(exc)
            raise RedisDown(f"Redis at {self.where} is unreachable: {exc}") from exc
        self.link.answered()
        return result

    def key(self, name: str) -> str:
        """The Redis key of a store key (under this store's prefix)."""
        return self.link.key(name)

    def get(self, key: str) -> bytes | None:
        """The value, or None; one larger than `max_value_bytes` is dropped after reading only
        that much of it (an empty value reads as missing: nothing stores one)."""
        name, limit = self.key(key), self.max_value_bytes

        def read(client: redis.Redis) -> list[Any]:
            pipe = client.pipeline(transaction=False)
            pipe.strlen(name)
            pipe.getrange(name, 0, limit - 1)  # never more than the limit, whatever it holds
            return pipe.execute()

        try:
            size, value = self.run(read)
        except RedisDown:
            fallback = self._local()
            return fallback.get(key) if fallback is not None else None
        if size > limit:
            log.warning("dropping cache entry %s: a value of %d bytes", key, size)
            self.delete(key)
            return None
        return value if isinstance(value, bytes) and value else None

    def set(self, key: str, value: bytes, ttl: float | None = None) -> None:
        """Store `value` for `ttl` seconds (None: until evicted); on the local fallback while
        Redis is down."""
        expiry = None if ttl is None else max(1, math.ceil(ttl * 1000))
        try:
            self.run(lambda client: client.set(self.key(key), value, px=expiry))
        except RedisDown:
            fallback = self._local()
            if fallback is not None:
                fallback.set(key, value, ttl)

    def delete(self, key: str) -> None:
        """Forget `key` (on the local fallback too while Redis is down)."""
        try:
            self.run(lambda client: client.delete(self.key(key)))
        except RedisDown:
            fallback = self._local()
            if fallback is not None:
                fallback.delete(key)

    def close(self) -> None:
        """Close the Redis connections and the local fallback."""
        if self._closed:
            return
        self._closed = True
        try:
            self.client.close()
        finally:
            if self._fallback is not None:
                self._fallback.close()

    def _local(self) -> Store | None:
        with self._state:
            if self._fallback is None and not self._fallback_failed and not self._closed:
                if self._fallback_factory is None:
                    self._fallback_failed = True
                else:
                    try:
                        self._fallback = self._fallback_factory()
                    except Exception as exc:
                        self._fallback_failed = True
                        log.warning("no local cache while Redis is away: %s", exc)
            return self._fallback


def redis_link(store: Store) -> RedisLink | None:
    """The link to the Redis a store keeps its values in; None for a store of one machine."""
    return store.link if isinstance(store, RedisStore) else None


def open_store(settings: Settings, link: RedisLink | None = None) -> Store:
    """The store the settings name: Redis for `cache_url` (over `link` when given), else
    diskcache under `cache_dir`; a cache folder that cannot be opened (a full disk, a read-only
    folder) is served without, with one warning, rather than stopping the server at start."""
    if settings.cache_url:
        cache_dir = settings.cache_dir
        return RedisStore(link or settings.cache_url, fallback=lambda: DiskStore(cache_dir))
    try:
        return DiskStore(settings.cache_dir)
    except PaperAnchorError as exc:
        log.warning("serving without a cache: %s", exc.detail)
        return NoStore(exc.detail)


class NoStore(Store):
    """A store that keeps nothing: what is served when the cache cannot be opened."""

    def __init__(self, reason: str) -> None:
        self.unavailable = reason
        """Why there is no cache (`/healthz` says there is none)."""

    def get(self, key: str) -> bytes | None:
        return None

    def set(self, key: str, value: bytes, ttl: float | None = None) -> None:
        pass

    def delete(self, key: str) -> None:
        pass

    def close(self) -> None:
        pass


class BestEffort:
    """A store whose failures are logged and passed over: a read that fails is a miss, a write
    or delete that fails is not made (not caching is always safe). The library, the paper
    cache and the discovery client keep entries through one of these."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, key: str) -> bytes | None:
        """The value, or None when the store fails (logged)."""
        try:
            return self.store.get(key)
        except Exception as exc:
            log.warning("cache read of %s failed: %s", key, exc)
            return None

    def set(self, key: str, value: bytes, ttl: float | None) -> None:
        """Store the value, or skip it when the store fails (logged)."""
        try:
            self.store.set(key, value, ttl)
        except Exception as exc:
            log.warning("cache write of %s failed: %s", key, exc)

    def delete(self, key: str) -> None:
        """Forget the key, or skip it when the store fails (logged)."""
        try:
            self.store.delete(key)
        except Exception as exc:
            log.warning("cache delete of %s failed: %s", key, exc)


class PaperCache(Generic[P]):
    """Parsed papers by idv and parser version, and bare id → latest idv, over a Store.

    Papers are written and read by `codec`; an entry names the key it was written for, so one
    copied under another paper's or parser version's key is refused. Every failure of the store
    or of an entry reads as a miss: a corrupt or crafted entry is dropped and reported, never
    served. Writes that fail are logged and skipped (not caching is safe).
    """

    def __init__(self, store: Store, codec: Codec[P]) -> None:
        self.store = store
        self.codec = codec
        kept = BestEffort(store)
        self._get, self._set, self._delete = kept.get, kept.set, kept.delete

    @staticmethod
    def paper_key(idv: str, parser_version: str) -> str:
        """The store key of a parsed paper: its idv under a parser version."""
        return f"paper:{parser_version}:{idv}"

    @staticmethod
    def latest_key(paper: str) -> str:
        """The store key of a bare id's latest idv."""
        return f"latest:{paper}"

    def get_paper(self, idv: str, parser_version: str) -> P | None:
        """The cached paper for `idv` made by `parser_version`, or None."""
        found = self.read_paper(idv, parser_version)
        return None if found is None else found[0]

    def read_paper(self, idv: str, parser_version: str) -> tuple[P, int] | None:
        """The cached paper for `idv` and the size of its entry in bytes, or None."""
        key = self.paper_key(idv, parser_version)
        raw = self._get(key)
        if raw is None:
            return None
        try:
            paper = self.codec.decode(_unwrap(raw), key)
        except (CodecError, ValueError) as exc:
            self.drop_paper(idv, parser_version, str(exc))
            return None
        return paper, len(raw)

    def drop_paper(self, idv: str, parser_version: str, reason: str) -> None:
        """Delete a paper's entry that cannot be served, saying why."""
        key = self.paper_key(idv, parser_version)
        log.warning("dropping corrupt cache entry %s: %s", key, reason)
        self._delete(key)

    def put_paper(self, idv: str, parser_version: str, paper: P, ttl: float | None = None) -> int:
        """Store `paper` for `idv`, forever unless `ttl` (seconds) is given; the bytes written,
        0 when it cannot be cached (too large or too deep: it is served uncached)."""
        key = self.paper_key(idv, parser_version)
        try:
            entry = _wrap(self.codec.encode(paper, key))
        except CodecError as exc:
            log.warning("not caching %s: %s", key, exc)
            return 0
        self._set(key, entry, ttl)
        return len(entry)

    def get_latest(self, paper: str) -> str | None:
        """The idv that `paper` (a bare id, or a request ar5iv answered) resolved to, or None."""
        key = self.latest_key(paper)
        raw = self._get(key)
        if raw is None:
            return None
        try:
            if len(raw) > _MAX_IDV:
                raise ValueError(f"{len(raw)} bytes long")
            idv = raw.decode("ascii")
            if parse_ref(idv).paper != parse_ref(paper).paper:
                raise ValueError(f"maps to another paper: {idv}")
        except Exception as exc:
            log.warning("dropping corrupt cache entry %s: %s", key, exc)
            self._delete(key)
            return None
        return idv

    def put_latest(self, paper: str, idv: str, ttl: float | None) -> None:
        """Remember the latest idv of a bare id for `ttl` seconds."""
        self._set(self.latest_key(paper), idv.encode("ascii"), ttl)


def _wrap(payload: bytes) -> bytes:
    return _MAGIC + hashlib.sha256(payload).digest() + payload


def _unwrap(raw: bytes) -> bytes:
    head = len(_MAGIC) + _DIGEST
    if len(raw) < head or not raw.startswith(_MAGIC):
        raise ValueError("not a paperanchor cache entry")
    digest, payload = raw[len(_MAGIC) : head], raw[head:]
    if hashlib.sha256(payload).digest() != digest:
        raise ValueError("checksum mismatch (truncated or damaged)")
    return payload
