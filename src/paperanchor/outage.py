"""The link to one Redis (`PAPERANCHOR_CACHE_URL`) and the one record of whether it answers.

The store, the coordination between processes and the per-client rate limit each talk to that
Redis through a client of their own, and all three share one `RedisLink`: the first of them to
find Redis unreachable starts the outage (one warning), every one of them then goes local
without waiting out a connect timeout, one caller tries Redis again every `REDIS_RETRY_S`, and
the first command that succeeds ends the outage (one warning, with its length).
"""

from __future__ import annotations

import logging
import threading
import time
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

# Redis on a LAN answers in well under a millisecond and moves a parsed paper (~1 MB) in a few;
# waiting longer than this for one command means it is gone, and every request would wait as long.
REDIS_CONNECT_TIMEOUT_S = 1.0
REDIS_TIMEOUT_S = 2.0
# While Redis is unreachable, one caller tries it again this often; the others go straight to
# local behaviour instead of each waiting out a connect timeout.
REDIS_RETRY_S = 1.0
# Every key this project writes to a Redis that may be shared with other applications.
REDIS_PREFIX = "paperanchor:"


class RedisDown(Exception):
    """Redis did not answer (connection refused, reset, timed out, loading): use local behaviour."""


class RedisLink:
    """One Redis: its URL, its key prefix, and whether it is reachable (thread-safe: the store
    calls from its worker threads, the coordination and the rate limit from the event loop)."""

    def __init__(self, url: str, *, prefix: str = REDIS_PREFIX) -> None:
        self.url = url
        self.where = redacted_url(url)
        """the URL without its password, for logs and error details"""
        self.prefix = prefix
        self._state = threading.Lock()
        self._down_since: float | None = None
        self._retry_at = 0.0

    def key(self, name: str) -> str:
        """The Redis key of `name` (under this link's prefix)."""
        return self.prefix + name

    @property
    def is_down(self) -> bool:
        """Whether the last command found Redis unreachable."""
        return self._down_since is not None

    def check(self) -> None:
        """Raise `RedisDown` while Redis is known to be away and it is not yet time to retry."""
        with self._state:
            if self._down_since is not None and time.monotonic() < self._retry_at:
                raise RedisDown(f"Redis at {self.where} is unreachable")

    def failed(self, exc: BaseException) -> None:
        """A command found Redis unreachable: the outage starts (logged once) or goes on."""
        with self._state:
            now = time.monotonic()
            self._retry_at = now + REDIS_RETRY_S
            if self._down_since is not None:
                return
            self._down_since = now
        log.warning(
            "Redis at %s is unreachable (%s): serving from the local cache, keeping the "
            "politeness gap and single flight within this process and counting rate limits "
            "locally until it is back",
            self.where,
            exc,
        )

    def answered(self) -> None:
        """A command got an answer: the outage, if there was one, is over (logged once)."""
        if self._down_since is None:
            return
        with self._state:
            if self._down_since is None:
                return
            outage, self._down_since = time.monotonic() - self._down_since, None
        log.warning("Redis at %s is back after %.1f s", self.where, outage)


def redacted_url(url: str) -> str:
    """A Redis URL without its password, fit for logs and error details."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return f"{url.split(':', 1)[0]}://…"
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"
