"""Prometheus metrics (`GET /metrics`): requests, latencies, cache hits and upstream fetches.

Each app has its own registry, so several apps in one process (the tests) do not collide.
Requests are labelled by route template (`/{paper:path}/outline.json`), never by raw path, so
the number of series stays bounded whatever clients ask for.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Seconds; a cached paper is answered in milliseconds, a first fetch waits for arXiv (and for
# the politeness gap, 3 s by default).
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    """The app's registry, the request middleware's instruments and the library's counters."""

    def __init__(self, library: Any) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "paperanchor_http_requests",
            "HTTP requests answered, by route template and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "paperanchor_http_request_duration_seconds",
            "Time to answer an HTTP request, by route template",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_LibraryCollector(library))

    def exposition(self) -> tuple[bytes, str]:
        """The Prometheus text exposition and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class _LibraryCollector:
    """Reads the library's own counters at scrape time."""

    def __init__(self, library: Any) -> None:
        self.library = library

    def collect(self) -> Iterator[Metric]:
        library = self.library
        yield CounterMetricFamily(
            "paperanchor_cache_hits", "Papers answered from the cache", value=library.cache_hits
        )
        yield CounterMetricFamily(
            "paperanchor_paper_fetches",
            "Papers fetched from a source and parsed (cache misses)",
            value=library.fetches,
        )
        yield CounterMetricFamily(
            "paperanchor_upstream_requests",
            "HTTP requests sent to arXiv or ar5iv, retries and redirects included",
            value=library.sources.requests_sent,
        )


class RequestMetrics:
    """ASGI middleware counting and timing every HTTP request.

    `routes` are the app's, to name the route of a request the router did not record in the
    scope (FastAPI records only its own routes there, not /mcp or /docs).
    """

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client gets when the app fails before answering

        async def send_and_record(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_record)
        finally:
            template = self._template(scope)
            method = scope["method"] if scope["method"] in _METHODS else "other"
            self.metrics.requests.labels(method, template, str(status)).inc()
            self.metrics.latency.labels(method, template).observe(time.perf_counter() - started)

    def _template(self, scope: Scope) -> str:
        route = scope.get("route")
        if route is None:
            route = next((r for r in self.routes if r.matches(scope)[0] is Match.FULL), None)
        path = getattr(route, "path", None)
        return path if isinstance(path, str) else "unmatched"
