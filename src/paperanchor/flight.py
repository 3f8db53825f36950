"""Single flight: concurrent callers asking for one key share one execution."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


@dataclass(slots=True)
class _Flight(Generic[V]):
    task: asyncio.Task[V]
    waiters: int = 0


class SingleFlight(Generic[K, V]):
    """Runs one `factory()` per key at a time; every concurrent caller of that key gets its result.

    An exception reaches every waiter. A waiter that is cancelled (its client went away) leaves
    the execution to the others; when the last one leaves, the execution is cancelled, since
    nobody is left to want its result. Nothing is remembered once the execution ends: the next
    call after completion runs the factory again (caching is the caller's business).
    """

    def __init__(self) -> None:
        self._running: dict[K, _Flight[V]] = {}

    def __len__(self) -> int:
        return len(self._running)

    async def run(self, key: K, factory: Callable[[], Awaitable[V]]) -> V:
        """Join the execution running for `key`, or start one."""
        flight = self._running.get(key)
        if flight is None:
            flight = _Flight(asyncio.ensure_future(factory()))
            self._running[key] = flight
            flight.task.add_done_callback(lambda done: self._finished(key, done))
        flight.waiters += 1
        try:
            # The shield keeps one waiter's cancellation from cancelling the shared work.
            return await asyncio.shield(flight.task)
        finally:
            flight.waiters -= 1
            if flight.waiters == 0 and not flight.task.done():
                # A caller arriving from now on starts afresh rather than joining a cancelled task.
                if self._running.get(key) is flight:
                    del self._running[key]
                flight.task.cancel()

    def _finished(self, key: K, task: asyncio.Task[V]) -> None:
        flight = self._running.get(key)
        if flight is not None and flight.task is task:
            del self._running[key]
        # Mark the exception as retrieved even when every waiter was cancelled, so that asyncio
        # does not log "Task exception was never retrieved".
        if not task.cancelled():
            task.exception()
