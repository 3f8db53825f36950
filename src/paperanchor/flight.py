"""Single flight: concurrent callers asking for one key share one execution."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class SingleFlight(Generic[K, V]):
    """Runs one `factory()` per key at a time; every concurrent caller of that key gets its result.

    An exception reaches every waiter. Nothing is remembered once the execution ends: the next
    call after completion runs the factory again (caching is the caller's business).
    """

    def __init__(self) -> None:
        self._running: dict[K, asyncio.Task[V]] = {}

    def __len__(self) -> int:
        return len(self._running)

    async def run(self, key: K, factory: Callable[[], Awaitable[V]]) -> V:
        """Join the execution running for `key`, or start one."""
        task = self._running.get(key)
        if task is None:
            task = asyncio.ensure_future(factory())
            self._running[key] = task
            task.add_done_callback(lambda done: self._finished(key, done))
        # A waiter that is cancelled (its client went away) must not cancel the work that
        # other waiters share, hence the shield.
        return await asyncio.shield(task)

    def _finished(self, key: K, task: asyncio.Task[V]) -> None:
        if self._running.get(key) is task:
            del self._running[key]
        # Mark the exception as retrieved even when every waiter was cancelled, so that asyncio
        # does not log "Task exception was never retrieved".
        if not task.cancelled():
            task.exception()
