"""schemathesis against /openapi.json: requests generated from the published schema get no 500,
and every answer matches the status codes, content types, headers and schemas it declares.

The server is a real one on loopback, offline, with the fixture papers as its local directory
(the replay upstream stands behind it, unused: offline mode fetches nothing), so no generated
request reaches the network. The paper, anchor and reference parameters get examples of things
that exist, so that answers other than errors are checked too. `make test` runs a few dozen
cases per operation, `make soak` several hundred.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode, checks

from tests.api.conftest import settings_for
from tests.api.live import live_server
from tests.reliability.report import SOAK, record

EXAMPLES = 400 if SOAK else 25
# What the parameters of each route may name that exists in fixtures/html; generated strings
# mostly name nothing, and then the answers are errors.
KNOWN = {
    "paper": ["local/full", "local/short", "local/xss", "hep-th/9901001v2", "local/authoryear"],
    "anchor": ["S1", "S2.SS1", "S2.1", "S2.SS1.p1", "F1", "T1", "S4.T2", "E1", "introduction"],
    "reference_id": ["2", "[2]", "bib.bib1"],
    "q": ["paragraph identifier", "the"],
    "limit": [1, 5, 50],
    "maxTokens": [100, 8000],
    "n": [1, 2, 4],  # a figure's images (fixtures/html/full/*.png)
    "since": ["local/short", "v1"],  # an edition: another paper, or a version
}
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
]


@pytest.fixture(scope="module")
def api(
    replay_server: Any, papers_dir: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    cache = tmp_path_factory.mktemp("cache")
    make = settings_for(replay_server, cache, local_dir=papers_dir, offline=True)
    with live_server(make) as server:
        published = httpx.get(f"{server.url}/openapi.json", trust_env=False).json()
        loaded = schemathesis.openapi.from_dict(published)
        loaded.config.update(base_url=server.url)
        yield loaded


def known_cases(operation: Any) -> list[Any]:
    """Cases naming things that exist: each known value of each parameter, the others' first."""
    names = {p["name"]: p["in"] for p in operation.definition.raw.get("parameters", [])}
    chosen = {name: KNOWN[name] for name in names if name in KNOWN}
    cases = []
    for name, values in chosen.items():
        for value in values:
            picked = {other: known[0] for other, known in chosen.items()} | {name: value}
            path = {k: v for k, v in picked.items() if names[k] == "path"}
            query = {k: v for k, v in picked.items() if names[k] == "query"}
            cases.append(operation.Case(path_parameters=path or None, query=query or None))
    return cases


# schemathesis's own pytest plugin does not run under pytest 9 (it reads a private attribute
# pytest 9 removed), so the operations are walked here and each gets a hypothesis test.
def test_every_answer_matches_the_published_schema_and_none_is_a_500(api, replay):
    statuses: Counter[int] = Counter()
    operations = [result.ok() for result in api.get_all_operations()]
    for operation in operations:
        for case in known_cases(operation):
            statuses[case.call_and_validate(checks=CHECKS).status_code] += 1

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(
            case=st.one_of(
                operation.as_strategy(GenerationMode.POSITIVE),
                operation.as_strategy(GenerationMode.NEGATIVE),
            )
        )
        def generated(case: Any) -> None:
            statuses[case.call_and_validate(checks=CHECKS).status_code] += 1

        generated()
    assert statuses[200] > 0 and statuses[400] > 0
    record(
        "schemathesis",
        operations=len(operations),
        cases=statuses.total(),
        **{f"status_{code}": count for code, count in sorted(statuses.items())},
    )
