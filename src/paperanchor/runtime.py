"""The one place the middle is built: settings -> Redis link -> store -> coordination ->
upstream -> sources -> papers -> discovery -> service, and closed in the reverse order.

    async with Runtime.build(settings) as runtime:
        await runtime.service.read("1706.03762", "S3")

The ASGI app (app.py), the stdio MCP server (api/mcp.py), the command line (cli.py) and the
warm-up take a runtime; none of them builds a store, an HTTP client or a coordination of its
own. With `PAPERANCHOR_CACHE_URL` the store, the coordination and the HTTP API's rate limit
share one `RedisLink`, so one outage is found once; without it the coordination is local.
What the runtime opens it closes; a library handed in (the tests' broken parser) keeps
its own store and sources, and closes them itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from paperanchor.coordination import Coordination, open_coordination
from paperanchor.discovery.client import Discovery
from paperanchor.outage import RedisLink
from paperanchor.papers import Papers
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.service import PaperService
from paperanchor.settings import Settings
from paperanchor.sources import Sources
from paperanchor.store import Store, open_store, redis_link
from paperanchor.upstream import Upstream


@dataclass(slots=True)
class Runtime:
    """Everything a process serves papers with, built once from its settings."""

    settings: Settings
    link: RedisLink | None
    """the Redis the store, the coordination and the rate limit share; None without one"""
    store: Store
    coordination: Coordination
    """between the processes sharing `link`; local when one process is alone"""
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
        over_stdio: bool = False,
    ) -> Runtime:
        """The runtime of `settings`; `library` and `discovery` replace the default parts.
        `over_stdio`: no HTTP server runs, so no URL of this service is handed out unless
        PAPERANCHOR_PUBLIC_URL names one (SPEC §7)."""
        base = None if over_stdio and settings.public_url is None else settings.public_base
        if library is not None:
            papers = library(settings)
            store, coordination, sources = papers.store, papers.coordination, papers.sources
            link, owned = redis_link(store), False
        else:
            link = RedisLink(settings.cache_url) if settings.cache_url else None
            store = open_store(settings, link)
            coordination = open_coordination(link, lease_s=settings.lock_lease_s)
            upstream = Upstream(settings, coordination=coordination)
            sources = Sources(settings, upstream=upstream, service_base=base)
            papers = Papers(
                settings,
                parse=parse_document,
                parser_version=PARSER_VERSION,
                store=store,
                sources=sources,
                coordination=coordination,
            )
            owned = True
        upstream = sources.upstream
        finder = (
            discovery(papers)
            if discovery is not None
            else Discovery(settings, upstream=upstream, store=store)
        )
        service = PaperService(papers, base or "", finder)
        return cls(
            settings, link, store, coordination, upstream, sources, papers, finder, service, owned
        )

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
            await self.coordination.aclose()
            self.store.close()
