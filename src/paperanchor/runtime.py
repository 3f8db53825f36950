"""The one place the middle is built: settings -> Redis link -> store -> coordination ->
upstream -> sources -> papers -> discovery -> service, and closed in the reverse order.

    async with Runtime.build(settings) as runtime:
        await runtime.service.read("1706.03762", "S3")

The ASGI app (app.py), the stdio MCP server (api/mcp.py), the command line (cli.py) and the
warm-up take a runtime; none of them builds a store, an HTTP client or a coordination of its
own. With `PAPERANCHOR_CACHE_URL` the store, the coordination and the HTTP API's rate limit
share one `RedisLink`, so one outage is found once; without it the coordination is local.
What the runtime opens it closes. Tests replace a part through `Runtime.build`'s keywords (a
broken parser, a store that counts its reads); the rest is built as it always is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from paperanchor.coordination import Coordination, open_coordination
from paperanchor.discovery.client import Discovery
from paperanchor.images import Images
from paperanchor.outage import RedisLink
from paperanchor.papers import Papers, Parse
from paperanchor.parse import PARSER_VERSION, parse_document
from paperanchor.parse.pdf import parse_pdf
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

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        parse: Parse = parse_document,
        parser_version: str = PARSER_VERSION,
        parse_pdf: Parse = parse_pdf,
        store: Store | None = None,
        sources: Callable[[Settings, Upstream], Sources] = Sources.over,
        discovery: Callable[[Papers], Discovery] | None = None,
        over_stdio: bool = False,
    ) -> Runtime:
        """The runtime of `settings`. The keywords replace a part (tests): the parsers, the
        store (closed with the runtime as its own), the sources over the upstream client, the
        discovery client over the papers. `over_stdio`: no HTTP server runs, so no URL of this
        service is handed out unless PAPERANCHOR_PUBLIC_URL names one (contract §7)."""
        base = None if over_stdio and settings.public_url is None else settings.public_base
        if store is None:
            link = RedisLink(settings.cache_url) if settings.cache_url else None
            store = open_store(settings, link)
        else:
            link = redis_link(store)
        coordination = open_coordination(link, lease_s=settings.lock_lease_s)
        upstream = Upstream(settings, coordination=coordination)
        found_at = sources(settings, upstream)
        if base is None:
            found_at.service_base = None  # a local page's images: the files beside it
        papers = Papers(
            settings,
            store=store,
            sources=found_at,
            coordination=coordination,
            parse=parse,
            parser_version=parser_version,
            parse_pdf=parse_pdf,
        )
        finder = (
            discovery(papers)
            if discovery is not None
            else Discovery(settings, upstream=upstream, store=store)
        )
        images = Images(settings, upstream, store, settings.public_base)
        service = PaperService(papers, base or "", finder, images, public=settings.public)
        return cls(settings, link, store, coordination, upstream, found_at, papers, finder, service)

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close what was built, in the reverse order of building it."""
        await self.discovery.aclose()
        await self.papers.aclose()
        await self.sources.aclose()
        await self.coordination.aclose()
        self.store.close()
