"""The one place the middle is built: settings -> store -> coordination -> upstream -> sources
-> papers -> discovery -> service, and closed in the reverse order.

    async with Runtime.build(settings) as runtime:
        await runtime.service.read("1706.03762", "S3")

The ASGI app (app.py), the stdio MCP server (api/mcp.py), the command line (cli.py) and the
warm-up take a runtime; none of them builds a store, an HTTP client or a coordination of its
own. What the runtime opens it closes; a library handed in (the tests' broken parser) keeps
its own store and sources, and closes them itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from paperanchor.coordination import Coordination
from paperanchor.discovery.client import Discovery
from paperanchor.papers import Papers
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.service import PaperService
from paperanchor.settings import Settings
from paperanchor.sources import Sources
from paperanchor.store import Store, open_store
from paperanchor.upstream import Upstream


@dataclass(slots=True)
class Runtime:
    """Everything a process serves papers with, built once from its settings."""

    settings: Settings
    store: Store
    coordination: Coordination | None
    """between processes (a Redis store's); None when one process is alone"""
    upstream: Upstream
    sources: Sources
    papers: Papers
    discovery: Discovery
    service: PaperService
    _owned: bool = field(default=True, repr=False)
    """whether the store, coordination and upstream client are this runtime's to close"""

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        library: Callable[[Settings], Papers] | None = None,
        discovery: Callable[[Papers], Discovery] | None = None,
    ) -> Runtime:
        """The runtime of `settings`; `library` and `discovery` replace the default parts."""
        if library is not None:
            papers = library(settings)
            store, shared, sources, owned = papers.store, papers.shared, papers.sources, False
        else:
            store = open_store(settings)
            shared = Coordination.over(store, settings.cache_url, lease_s=settings.lock_lease_s)
            sources = Sources(settings, polite=Upstream(settings, shared=shared))
            papers = Papers(
                settings,
                parse=parse_document,
                parser_version=PARSER_VERSION,
                store=store,
                sources=sources,
                shared=shared,
            )
            owned = True
        finder = (
            discovery(papers)
            if discovery is not None
            else Discovery(settings, polite=sources.polite, store=store)
        )
        service = PaperService(papers, settings.public_base, finder)
        return cls(settings, store, shared, sources.polite, sources, papers, finder, service, owned)

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close what was built, in the reverse order of building it."""
        await self.discovery.aclose()
        await self.papers.aclose()  # and what a library handed in opened itself
        if self._owned:
            await self.sources.aclose()
            if self.coordination is not None:
                await self.coordination.aclose()
            self.store.close()
