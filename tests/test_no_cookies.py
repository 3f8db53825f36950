"""The upstream client keeps no cookie jar (issue 21, #9): pages that set 120 cookies each, some
for the upstream's whole domain, through a real `paperanchor serve`, and no later request to
the upstream carries a `Cookie` header."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.api.live import ServeProcess
from tests.conftest import FIXTURES, ROOT
from tests.replay import HTML, Reply

PAPERS = [f"2501.0000{n}v1" for n in range(1, 7)]


def _cookies(paper: str) -> tuple[tuple[str, str], ...]:
    value = "v" * 500  # 120 of them: 60 KB, past any upstream's header limit when sent back
    name = paper.replace(".", "_")
    many = [("Set-Cookie", f"{name}_{n}={value}; Path=/; Domain=127.0.0.1") for n in range(120)]
    return (*many, ("Set-Cookie", "session=abc; Path=/"))


def test_cookies_an_upstream_sets_are_never_sent_back(replay: Any, tmp_path: Path) -> None:
    body = (FIXTURES / "html" / "short.html").read_bytes()
    for paper in PAPERS:
        replay.script(f"/html/{paper}", Reply(200, body, HTML + _cookies(paper)))
    env = replay.environ(cache_dir=tmp_path / "cache", rate_limit="0")
    server = ServeProcess(env, cwd=ROOT).wait_ready()
    try:
        with httpx.Client(base_url=server.url, timeout=60, trust_env=False) as client:
            for paper in PAPERS:
                assert client.get(f"/{paper}/outline.json").status_code == 200, paper
    finally:
        server.stop()
    asked = [r for r in replay.requests if r.path.startswith("/html/")]
    assert [r.path for r in asked] == [f"/html/{p}" for p in PAPERS]
    assert all("cookie" not in {k.lower() for k in r.headers} for r in asked), [
        len(r.headers.get("cookie", "")) for r in asked
    ]
