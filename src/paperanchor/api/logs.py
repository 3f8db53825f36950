"""The server's logging: plain lines on stderr, and a warning or error logged once per burst.

A failure that repeats per connection or per request (`socket.accept() out of system resource`,
uvicorn's `Invalid HTTP request received.`, the connection limit) would otherwise be logged per
failure: at the open-file limit that filled 180 MB of log, and the MCP SDK's rich handler, which
imports a module to print the first traceback, turned the first one into a crash of the server.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# A run of like records is one burst until none has come for this long.
QUIET_S = 10.0
# During a long burst one record still gets through this often, with the count since the last.
REPEAT_S = 60.0
# Kinds of record remembered at once; each is a few dozen bytes (the keys are message templates,
# so only a bug that logs ever new templates reaches it).
MAX_KINDS = 1000


@dataclass(slots=True)
class _Burst:
    shown_at: float
    last_at: float
    suppressed: int = 0


class OncePerBurst(logging.Filter):
    """Lets the first of a run of like warnings through, then one per REPEAT_S with the count.

    Records are alike when they come from the same logger with the same message template and
    exception type; records below WARNING always pass.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._bursts: dict[tuple[str, str, str], _Burst] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """Let a record through once per burst of the same message."""
        if record.levelno < logging.WARNING:
            return True
        exc_type = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        key = (record.name, str(record.msg), exc_type)
        now = self._clock()
        burst = self._bursts.get(key)
        if burst is None or now - burst.last_at > QUIET_S:
            if burst is not None and burst.suppressed:
                _annotate(record, f"{burst.suppressed} more like it in the previous burst")
            self._remember(key, _Burst(now, now), now)
            return True
        burst.last_at = now
        if now - burst.shown_at < REPEAT_S:
            burst.suppressed += 1
            return False
        _annotate(
            record, f"{burst.suppressed} more like it in the last {now - burst.shown_at:.0f} s"
        )
        burst.shown_at, burst.suppressed = now, 0
        return True

    def _remember(self, key: tuple[str, str, str], burst: _Burst, now: float) -> None:
        self._bursts[key] = burst
        if len(self._bursts) > MAX_KINDS:
            for old, kept in list(self._bursts.items()):
                if now - kept.last_at > QUIET_S:
                    del self._bursts[old]
            while len(self._bursts) > MAX_KINDS:  # all of them busy: forget the oldest
                del self._bursts[next(iter(self._bursts))]


def _annotate(record: logging.LogRecord, note: str) -> None:
    record.msg = f"{record.getMessage()} [{note}]"
    record.args = None


def log_config() -> dict[str, Any]:
    """uvicorn's logging configuration with the burst filter on every handler, and a root handler
    of the same plain form, so that no other library installs its own (the MCP SDK's rich one)."""
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {"bursts": {"()": f"{__name__}.OncePerBurst"}}
    for handler in config["handlers"].values():
        handler["filters"] = ["bursts"]
    config["root"] = {"handlers": ["default"], "level": "WARNING"}
    return config
