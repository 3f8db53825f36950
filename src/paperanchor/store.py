"""Cache backends behind one small protocol, and the paper cache built on it."""

from __future__ import annotations

import hashlib
import logging
import pickle
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol, TypeVar
from urllib.parse import urlsplit

import diskcache

from paperanchor.errors import BadRequest, PaperAnchorError
from paperanchor.refs import parse_ref
from paperanchor.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

# diskcache's own default, written down: about a thousand parsed papers of ~1 MB each; the
# least recently stored entries are evicted beyond it.
DISK_SIZE_LIMIT = 1 << 30

# Entry format: magic, SHA-256 of the payload, payload (a pickle). The digest catches truncated
# and bit-flipped entries; it is not a signature: the store must be writable only by us.
_MAGIC = b"PAc1"
_DIGEST = 32


class Store(Protocol):
    """A byte store with optional per-key lifetimes."""

    def get(self, key: str) -> bytes | None: ...

    def set(self, key: str, value: bytes, ttl: float | None = None) -> None: ...

    def delete(self, key: str) -> None: ...

    def close(self) -> None: ...


class DiskStore(Store):
    """The embedded store: a diskcache directory, safe to share between processes."""

    def __init__(self, directory: Path, *, size_limit: int = DISK_SIZE_LIMIT) -> None:
        # diskcache keeps one SQLite connection per thread and closes only the calling
        # thread's; confining it to one worker thread keeps exactly one connection to close.
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="paperanchor-diskcache")
        self._closed = False
        self.directory = directory
        try:
            self._cache = self._call(lambda: diskcache.Cache(str(directory), size_limit=size_limit))
        except Exception as exc:
            self._worker.shutdown()
            raise PaperAnchorError(f"Cannot open the cache directory {directory}: {exc}") from exc

    def _call(self, job: Callable[[], T]) -> T:
        return self._worker.submit(job).result()

    def get(self, key: str) -> bytes | None:
        value = self._call(lambda: self._cache.get(key, default=None))
        return value if isinstance(value, bytes) else None

    def set(self, key: str, value: bytes, ttl: float | None = None) -> None:
        self._call(lambda: self._cache.set(key, value, expire=ttl))

    def delete(self, key: str) -> None:
        self._call(lambda: self._cache.delete(key))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._call(self._cache.close)
        finally:
            self._worker.shutdown()


def open_store(settings: Settings) -> Store:
    """The store the settings name: diskcache under `cache_dir` (Redis comes later)."""
    if settings.cache_url:
        # Falling back to the disk silently would break what a shared cache promises (one
        # politeness gap across processes), so refuse until the Redis backend lands.
        parts = urlsplit(settings.cache_url)
        raise BadRequest(
            f"PAPERANCHOR_CACHE_URL={parts.scheme}://{parts.hostname or ''}… is not supported "
            "yet; unset it to use the embedded cache in PAPERANCHOR_CACHE_DIR"
        )
    return DiskStore(settings.cache_dir)


class PaperCache:
    """Parsed papers by idv and parser version, and bare id → latest idv, over a Store.

    Every failure of the store or of an entry reads as a miss: a corrupt entry is dropped and
    reported, never served. Writes that fail are logged and skipped (not caching is safe).
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    @staticmethod
    def paper_key(idv: str, parser_version: str) -> str:
        return f"paper:{parser_version}:{idv}"

    @staticmethod
    def latest_key(paper: str) -> str:
        return f"latest:{paper}"

    def get_paper(self, idv: str, parser_version: str) -> object | None:
        """The cached object for `idv` made by `parser_version`, or None."""
        key = self.paper_key(idv, parser_version)
        raw = self._get(key)
        if raw is None:
            return None
        try:
            stored_idv, stored_version, obj = pickle.loads(_unwrap(raw))
            if (stored_idv, stored_version) != (idv, parser_version):
                raise ValueError(f"entry holds {stored_idv} by parser {stored_version}")
        except Exception as exc:
            log.warning("dropping corrupt cache entry %s: %s", key, exc)
            self._delete(key)
            return None
        return obj  # type: ignore[no-any-return]

    def put_paper(
        self, idv: str, parser_version: str, obj: object, ttl: float | None = None
    ) -> None:
        """Store `obj` for `idv`; forever unless `ttl` (seconds) is given."""
        key = self.paper_key(idv, parser_version)
        try:
            payload = pickle.dumps((idv, parser_version, obj), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # a tree that cannot be pickled is a bug; serve it uncached
            log.error("cannot cache %s: %s", key, exc)
            return
        self._set(key, _wrap(payload), ttl)

    def get_latest(self, paper: str) -> str | None:
        """The idv that `paper` (a bare id, or a request ar5iv answered) resolved to, or None."""
        key = self.latest_key(paper)
        raw = self._get(key)
        if raw is None:
            return None
        try:
            idv = raw.decode("ascii")
            if parse_ref(idv).paper != parse_ref(paper).paper:
                raise ValueError(f"maps to another paper: {idv}")
        except Exception as exc:
            log.warning("dropping corrupt cache entry %s: %s", key, exc)
            self._delete(key)
            return None
        return idv

    def put_latest(self, paper: str, idv: str, ttl: float | None) -> None:
        self._set(self.latest_key(paper), idv.encode("ascii"), ttl)

    def _get(self, key: str) -> bytes | None:
        try:
            return self.store.get(key)
        except Exception as exc:
            log.warning("cache read of %s failed: %s", key, exc)
            return None

    def _set(self, key: str, value: bytes, ttl: float | None) -> None:
        try:
            self.store.set(key, value, ttl)
        except Exception as exc:
            log.warning("cache write of %s failed: %s", key, exc)

    def _delete(self, key: str) -> None:
        try:
            self.store.delete(key)
        except Exception as exc:
            log.warning("cache delete of %s failed: %s", key, exc)


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
