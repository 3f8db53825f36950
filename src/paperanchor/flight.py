"""Single flight: concurrent callers asking for one key share one execution."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

log = logging.getLogger(__name__)

Ready = Callable[[V], None]
"""Hands an execution's result to its waiters before the execution ends (from a worker thread)."""

# How long an execution that answered early waits, in its worker thread, for the request it
# answered to end before it goes on (a store write): Python code running in that thread would
# take the GIL from the event loop, which waits up to the switch interval (5 ms) for it at each
# turn while it sends the answer. A request ends within milliseconds of its answer; one that
# lives on (the command line's, a test's in-process client) is not waited for longer.
ANSWER_WAIT_S = 0.05


@dataclass(slots=True)
class _Flight(Generic[V]):
    answer: asyncio.Future[V]
    """the result its waiters get: handed over early by `ready`, else the task's own"""
    task: asyncio.Task[V] | None = None
    waiters: int = 0
    taken: threading.Event = field(default_factory=threading.Event)
    """set once the request an early answer went to has ended (or nobody waits for it)"""


class SingleFlight(Generic[K, V]):
    """Runs one `factory()` per key at a time; every concurrent caller of that key gets its result.

    An exception reaches every waiter. A waiter that is cancelled (its client went away) leaves
    the execution to the others; when the last one leaves, the execution is cancelled, since
    nobody is left to want its result, unless it has handed its result over already (`answered`).
    Nothing is remembered once the execution ends: the next call after completion runs the
    factory again (caching is the caller's business).
    """

    def __init__(self) -> None:
        self._running: dict[K, _Flight[V]] = {}

    def __len__(self) -> int:
        return len(self._running)

    async def run(self, key: K, factory: Callable[[], Awaitable[V]]) -> V:
        """Join the execution running for `key`, or start one."""
        return await self.answered(key, lambda _ready: factory())

    async def answered(self, key: K, factory: Callable[[Ready[V]], Awaitable[V]]) -> V:
        """As `run`, but the execution may hand its result to its waiters before it ends, by
        calling the `ready` it is given in a worker thread: `ready` returns once the request
        that got it has ended (at most ANSWER_WAIT_S), and the execution then finishes what it
        does after its answer (a store write) whether or not anyone still waits. A caller
        arriving before it ends gets that result at once."""
        flight = self._running.get(key)
        if flight is None:
            flight = self._start(key, factory)
        flight.waiters += 1
        answered = False
        try:
            # The shield keeps one waiter's cancellation from cancelling the shared work.
            value = await asyncio.shield(flight.answer)
            answered = True
        finally:
            flight.waiters -= 1
            if flight.waiters == 0 and not answered:
                flight.taken.set()  # nobody is left to send an answer: no reason to wait
                if not flight.answer.done():
                    # A caller arriving from now on starts afresh rather than joining a
                    # cancelled task.
                    if self._running.get(key) is flight:
                        del self._running[key]
                    if flight.task is not None:
                        flight.task.cancel()
        task = asyncio.current_task()
        if flight.taken.is_set() or task is None:
            flight.taken.set()
        else:  # answered before its execution ended: it goes on once this request is done
            task.add_done_callback(lambda _done: flight.taken.set())
        return value

    def _start(self, key: K, factory: Callable[[Ready[V]], Awaitable[V]]) -> _Flight[V]:
        loop = asyncio.get_running_loop()
        flight: _Flight[V] = _Flight(loop.create_future())

        def ready(value: V) -> None:
            loop.call_soon_threadsafe(_give, flight, value)
            flight.taken.wait(ANSWER_WAIT_S)

        flight.task = asyncio.ensure_future(factory(ready))
        self._running[key] = flight
        flight.task.add_done_callback(lambda done: self._finished(key, flight, done))
        return flight

    async def finish(self) -> None:
        """Wait for the executions still running (those that answered finish their work)."""
        flights = list(self._running.values())
        for flight in flights:
            flight.taken.set()
        tasks = [flight.task for flight in flights if flight.task is not None]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def _finished(self, key: K, flight: _Flight[V], task: asyncio.Task[V]) -> None:
        if self._running.get(key) is flight:
            del self._running[key]
        flight.taken.set()
        answer = flight.answer
        if task.cancelled():
            answer.cancel()
        elif (error := task.exception()) is not None:  # retrieved, even with nobody waiting
            if answer.done():  # what followed the answer failed: the answer stands
                log.warning("finishing %s after its answer failed: %r", key, error)
            else:
                answer.set_exception(error)
        elif not answer.done():
            answer.set_result(task.result())
        if answer.done() and not answer.cancelled():
            answer.exception()  # retrieved: waiters that were cancelled leave it unread


def _give(flight: _Flight[V], value: V) -> None:
    if flight.answer.done():
        flight.taken.set()
        return
    flight.answer.set_result(value)
    if flight.waiters == 0:
        flight.taken.set()
