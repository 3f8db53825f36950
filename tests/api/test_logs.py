"""The burst filter of the server's log (api/logs.py), on a clock the test turns by hand."""

from __future__ import annotations

import logging

from paperanchor.api import logs
from paperanchor.api.logs import OncePerBurst


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def record(message: str, *args: object, level: int = logging.ERROR) -> logging.LogRecord:
    return logging.LogRecord("asyncio", level, __file__, 1, message, args, None)


def test_a_burst_of_like_errors_is_logged_once_then_once_a_minute_with_the_count():
    clock = Clock()
    bursts = OncePerBurst(clock)
    passed = []
    for _ in range(200):  # one each half second for 100 s
        entry = record("accept failed on fd %d", 9)
        if bursts.filter(entry):
            passed.append(entry.getMessage())
        clock.now += 0.5

    assert passed[0] == "accept failed on fd 9"
    assert passed[1] == "accept failed on fd 9 [119 more like it in the last 60 s]"
    assert len(passed) == 2


def test_the_next_burst_is_logged_again_with_what_the_last_one_left_unsaid():
    clock = Clock()
    bursts = OncePerBurst(clock)
    assert bursts.filter(record("x"))
    for _ in range(5):
        clock.now += 1
        assert not bursts.filter(record("x"))
    clock.now += logs.QUIET_S + 1
    again = record("x")

    assert bursts.filter(again)
    assert again.getMessage() == "x [5 more like it in the previous burst]"


def test_other_messages_and_info_lines_are_never_held_back():
    bursts = OncePerBurst(Clock())
    assert bursts.filter(record("one"))
    assert bursts.filter(record("two"))
    assert all(bursts.filter(record("a request", level=logging.INFO)) for _ in range(100))


def test_the_kinds_remembered_are_bounded(monkeypatch):
    monkeypatch.setattr(logs, "MAX_KINDS", 10)
    bursts = OncePerBurst(Clock())
    for number in range(100):
        bursts.filter(record(f"message {number}"))

    assert len(bursts._bursts) == 10
