"""The runtime (runtime.py): the middle built once from settings, one of each part shared by
the papers, discovery and the service, and closed in the reverse order."""

from __future__ import annotations

import asyncio
from pathlib import Path

from paperanchor.coordination import LocalCoordination
from paperanchor.runtime import Runtime
from paperanchor.settings import Settings
from tests.corpus_pages import fixture_path


def settings(tmp_path: Path) -> Settings:
    return Settings(
        _env_file=None, cache_dir=tmp_path, local_dir=fixture_path("short").parent, offline=True
    )


def test_papers_and_discovery_share_the_runtimes_one_store_and_upstream_client(tmp_path) -> None:
    runtime = Runtime.build(settings(tmp_path))
    try:
        assert runtime.papers.store is runtime.store
        assert runtime.papers.sources is runtime.sources
        assert runtime.sources.upstream is runtime.upstream
        assert runtime.discovery.upstream is runtime.upstream
        assert runtime.discovery.store is runtime.store
        assert runtime.service.loader is runtime.papers
        assert runtime.service.discovery is runtime.discovery
        # a disk store is one machine's: the coordination is the process's own
        assert isinstance(runtime.coordination, LocalCoordination) and runtime.link is None
        assert runtime.upstream.coordination is runtime.coordination
        assert runtime.papers.coordination is runtime.coordination
    finally:
        asyncio.run(runtime.aclose())


def test_a_runtime_serves_a_paper_and_closes_its_upstream_client(tmp_path) -> None:
    async def main() -> tuple[str, Runtime]:
        async with Runtime.build(settings(tmp_path)) as runtime:
            outline = await runtime.service.outline("local/short")
            return outline.value["idv"], runtime

    idv, runtime = asyncio.run(main())

    assert idv == "local/short"
    assert runtime.upstream._client.is_closed
