"""Every setting, read once from the environment and `.env`; README's table is made from it."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

_RATE_LIMIT = re.compile(r"^(?:0|[1-9]\d*\s*/\s*(?:second|minute|hour|day))$")
# What an API key may hold: it is sent as a header value, so no space, control character or
# anything a header could be split on. Semantic Scholar's keys are 40 letters and digits.
_API_KEY = re.compile(r"^[\x21-\x7e]{1,200}$")
# Semantic Scholar's rates (its API documentation): one request a second with a key; without
# one, a pool shared by every anonymous client, so we ask no more than arXiv's rate of it.
S2_GAP_WITH_KEY_S = 1.0
S2_GAP_WITHOUT_KEY_S = 3.0


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "paperanchor"


def _env(field: str) -> str:
    return f"PAPERANCHOR_{field.upper()}"


class Settings(BaseSettings):
    """The service's configuration; each field is the variable `PAPERANCHOR_<FIELD>`."""

    model_config = SettingsConfigDict(
        env_prefix="PAPERANCHOR_",
        env_file=".env",
        extra="ignore",
        frozen=True,
        # pydantic's errors repeat the value they refused: not for PAPERANCHOR_S2_API_KEY (our
        # own messages name the other values)
        hide_input_in_errors=True,
        # each field's docstring is its description: the table of settings is made from them
        # (scripts/docs_tables.py)
        use_attribute_docstrings=True,
    )

    host: str = "127.0.0.1"
    """The address `paperanchor serve` listens on (`--host`)."""
    port: int = 8000
    """The port `paperanchor serve` listens on (`--port`), 0-65535."""
    public_url: str | None = None
    """The base of every URL handed out (`cite`'s `url`, the pages' links); unset:
    `http://HOST:PORT`."""
    arxiv_html_url: str = "https://arxiv.org/html"
    """arXiv's HTML renderings, the first network source; empty turns it off."""
    ar5iv_url: str = "https://ar5iv.labs.arxiv.org/html"
    """ar5iv's renderings, asked when arXiv has none; empty turns it off."""
    arxiv_pdf_url: str = "https://arxiv.org/pdf"
    """The last source: a paper's PDF, read into the tree from its text layer; empty turns it off.
    """
    arxiv_abs_url: str = "https://arxiv.org/abs"
    """The arXiv listing (abs page) a public server reads a paper's licence from when the page
    names none; empty leaves such a licence unknown."""
    public: bool = False
    """A server anyone can reach: a paper's text is served only where its licence allows
    (Creative Commons, public domain); the rest answers `forbidden` naming the licence."""
    auth_tokens_file: Path | None = None
    """A file of bearer tokens' SHA-256 hex digests, one a line: REST and `/mcp` answer 401 without
    one of them (but `/healthz`, and loopback clients of a server that is not public)."""
    arxiv_api_url: str = "https://export.arxiv.org/api/query"
    """The arXiv API (metadata, search, BibTeX, trends); empty turns discovery by arXiv off."""
    s2_url: str = "https://api.semanticscholar.org/graph/v1"
    """Semantic Scholar's Graph API (citations); empty turns it off."""
    s2_api_key: SecretStr | None = None
    """A Semantic Scholar API key, sent as `x-api-key`; never logged or shown."""
    tools: Literal["reader", "all"] = "reader"
    """MCP tool set: `reader`, the seven reading tools; `all`, the four discovery tools too."""
    local_dir: Path | None = None
    """A directory of your own papers: `local/<name>` opens `<name>.html`, `.html.gz` or `.pdf`."""
    offline: bool = False
    """Never fetch: answer from the cache and the local directory only."""
    cache_dir: Path = Field(
        default_factory=_default_cache_dir,
        json_schema_extra={"shown_default": "$XDG_CACHE_HOME/paperanchor or ~/.cache/paperanchor"},
    )
    """Where fetched and parsed papers are kept on disk (an embedded diskcache)."""
    cache_url: str | None = None
    """A `redis://` (or `rediss://`) URL: the cache, the politeness gaps and the rate limit shared
    by every process."""
    min_gap_s: float = 3.0
    """Seconds from the end of one request to an upstream host to the start of the next."""
    max_retries: int = 3
    """Retries of one upstream request (0-20), with full-jitter backoff."""
    timeout_s: float = 30.0
    """Seconds one upstream attempt may take, from the request to the last byte of the body."""
    max_html_mb: float = 50.0
    """The largest page or PDF accepted, in MiB after decoding; larger is `too-large`."""
    rate_limit: str = "120/minute"
    """Requests per client address: `N/second`, `N/minute`, `N/hour` or `N/day`; `0` turns it off.
    """
    rate_limit_loopback: bool = False
    """Limit clients on this machine too (an agent beside its server is not limited unless 1)."""
    latest_ttl_s: float = 86400.0
    """Seconds a bare id's latest version, and a paper whose version is not confirmed, are kept."""
    memory_mb: float = 512.0
    """MiB of parsed papers kept in memory per process; `0` keeps none (each request reads the
    cache)."""
    # The backoff of retries: full jitter, doubling from backoff_s, capped at backoff_cap_s; a
    # Retry-After longer than the cap is not waited for.
    backoff_s: float = 1.0
    """Seconds of backoff before the first retry (doubling after each)."""
    backoff_cap_s: float = 30.0
    """The cap of every wait between retries; a longer `Retry-After` fails at once with
    `unavailable`."""
    # The gaps of the discovery upstreams, each its own gate (upstream.py). arXiv asks API
    # clients for one request every three seconds, across all of a user's machines (with Redis
    # the gap holds across processes); Semantic Scholar's is 1 s with a key and 3 s without.
    arxiv_api_gap_s: float = 3.0
    """Seconds between two requests to the arXiv API (arXiv asks for 3, across all your machines).
    """
    s2_gap_s: float | None = None
    """Seconds between two requests to Semantic Scholar; unset: 1 with `PAPERANCHOR_S2_API_KEY`,
    else 3."""
    lock_lease_s: float = 10.0
    """With Redis: seconds a host's turn or a paper's fetch lock outlives a process that died
    holding it."""
    # -- the HTTP server's own limits (docs/serving.md, *Connections*) --
    trust_proxy: bool = False
    """Believe `X-Forwarded-For`, from the addresses in uvicorn's `FORWARDED_ALLOW_IPS` only."""
    request_timeout_s: float = 10.0
    """Seconds a client has to send one whole request; a slowloris is closed after it."""
    keep_alive_s: float = 5.0
    """Seconds an idle keep-alive connection is kept."""
    max_connections: int = 1000
    """Open connections at most (lowered to fit the open-file limit); past it the one waiting
    longest is closed."""
    down_s: float = 30.0
    """Seconds an unreachable upstream host is left alone; `0` turns it off."""
    max_queue: int = 32
    """Requests of one process waiting for a host's turn; past it `unavailable` at once."""
    not_found_ttl_s: float = 600.0
    """Seconds "no such paper" is remembered; `0` turns it off."""

    @property
    def public_base(self) -> str:
        """Base of every URL the service hands out, without a trailing slash."""
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @property
    def s2_gap(self) -> float:
        """Seconds between two requests to Semantic Scholar."""
        if self.s2_gap_s is not None:
            return self.s2_gap_s
        return S2_GAP_WITH_KEY_S if self.s2_api_key is not None else S2_GAP_WITHOUT_KEY_S

    @property
    def max_html_bytes(self) -> int:
        return int(self.max_html_mb * 1024 * 1024)

    @property
    def memory_bytes(self) -> int:
        return int(self.memory_mb * 1024 * 1024)

    @field_validator(
        "public_url",
        "cache_url",
        "local_dir",
        "s2_api_key",
        "s2_gap_s",
        "auth_tokens_file",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator(
        "arxiv_html_url",
        "ar5iv_url",
        "arxiv_pdf_url",
        "public_url",
        "arxiv_api_url",
        "s2_url",
        "arxiv_abs_url",
    )
    @classmethod
    def _http_base(cls, value: str | None, info: ValidationInfo) -> str | None:
        # An empty upstream base disables that source (contract §2).
        if value is None or not value.strip():
            return "" if value is not None else None
        value = value.strip().rstrip("/")
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            name = info.field_name or "url"
            raise ValueError(f"{_env(name)} must be an http(s) URL, got {value!r}")
        if parts.query or parts.fragment:
            name = info.field_name or "url"
            raise ValueError(f"{_env(name)} must not carry a query or fragment, got {value!r}")
        return value

    @field_validator("port")
    @classmethod
    def _port(cls, value: int) -> int:
        if not 0 <= value <= 65535:
            raise ValueError(f"PAPERANCHOR_PORT must be 0-65535, got {value}")
        return value

    @field_validator("min_gap_s", "latest_ttl_s", "backoff_s")
    @classmethod
    def _not_negative(cls, value: float, info: ValidationInfo) -> float:
        if not value >= 0:  # also rejects NaN
            raise ValueError(f"{_env(info.field_name or '')} must be >= 0, got {value}")
        return value

    @field_validator(
        "timeout_s",
        "max_html_mb",
        "backoff_cap_s",
        "lock_lease_s",
        "request_timeout_s",
        "keep_alive_s",
    )
    @classmethod
    def _positive(cls, value: float, info: ValidationInfo) -> float:
        if not value > 0 or value == float("inf"):
            name = _env(info.field_name or "")
            raise ValueError(f"{name} must be a positive number, got {value}")
        return value

    @field_validator("memory_mb")
    @classmethod
    def _memory(cls, value: float) -> float:
        # 0 keeps no parsed paper in memory: every request reads the cache
        if not 0 <= value < float("inf"):  # also rejects NaN
            raise ValueError(f"PAPERANCHOR_MEMORY_MB must be a number >= 0, got {value}")
        return value

    @field_validator("max_retries")
    @classmethod
    def _retries(cls, value: int) -> int:
        if not 0 <= value <= 20:
            raise ValueError(f"PAPERANCHOR_MAX_RETRIES must be 0-20, got {value}")
        return value

    @field_validator("max_connections")
    @classmethod
    def _max_connections(cls, value: int) -> int:
        if not 1 <= value <= 1_000_000:
            raise ValueError(f"PAPERANCHOR_MAX_CONNECTIONS must be 1-1000000, got {value}")
        return value

    @field_validator("s2_api_key")
    @classmethod
    def _api_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _API_KEY.match(value.get_secret_value()):
            # the key itself is never shown: it is a secret
            raise ValueError(
                "PAPERANCHOR_S2_API_KEY must be 1-200 printable ASCII characters without spaces"
            )
        return value

    @field_validator("tools", mode="before")
    @classmethod
    def _tools(cls, value: object) -> object:
        if isinstance(value, str):
            value = value.strip().lower()
            if value not in {"reader", "all"}:
                raise ValueError(f"PAPERANCHOR_TOOLS must be reader or all, got {value!r}")
        return value

    @field_validator("down_s", "not_found_ttl_s", "arxiv_api_gap_s", "s2_gap_s")
    @classmethod
    def _finite_seconds(cls, value: float | None, info: ValidationInfo) -> float | None:
        # 0 turns the memory off; an infinite one would never be forgotten (nor fit Redis's PX).
        if value is not None and not 0 <= value < float("inf"):
            name = _env(info.field_name or "")
            raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        return value

    @field_validator("max_queue")
    @classmethod
    def _max_queue(cls, value: int) -> int:
        if not 1 <= value <= 100_000:
            raise ValueError(f"PAPERANCHOR_MAX_QUEUE must be 1-100000, got {value}")
        return value

    @field_validator("rate_limit")
    @classmethod
    def _rate_limit(cls, value: str) -> str:
        value = value.strip()
        if not _RATE_LIMIT.match(value):
            raise ValueError(
                f"PAPERANCHOR_RATE_LIMIT must be N/second|minute|hour|day or 0, got {value!r}"
            )
        return value

    @field_validator("cache_url")
    @classmethod
    def _cache_url(cls, value: str | None) -> str | None:
        if value is not None and urlsplit(value).scheme not in {"redis", "rediss"}:
            raise ValueError(f"PAPERANCHOR_CACHE_URL must be a redis:// URL, got {value!r}")
        return value


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read from the environment (and `.env`) on first use."""
    return Settings()
