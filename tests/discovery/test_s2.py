"""Semantic Scholar answers -> Citations, errors with S2's words, and the request paths."""

from __future__ import annotations

import json

import pytest

from paperanchor.discovery.s2 import (
    CITATION_FIELDS,
    MAX_ANSWER_BYTES,
    citations,
    citations_request,
    cited_papers,
    headers,
    paper_request,
    raise_for_status,
    references_request,
)
from paperanchor.errors import BadRequest, NotFound, Unavailable, UpstreamError
from paperanchor.refs import parse_ref
from tests.discovery.recorded import s2

pytestmark = pytest.mark.usefixtures("corpus")

REF = parse_ref("2304.05376v2")
PAPER = "paperqa_test_bulk_doi_search_00.json"  # citationCount 500, externalIds.ArXiv 2304.05376


def page_of(*papers: object, **extra: object) -> bytes:
    return json.dumps({"offset": 0, "data": [{"citingPaper": p} for p in papers], **extra}).encode()


def test_the_requests_are_the_paper_and_its_citations_by_bare_arxiv_id() -> None:
    assert paper_request(REF) == (
        "paper/arXiv:2304.05376",
        {"fields": "title,externalIds,citationCount"},
    )
    assert citations_request(parse_ref("hep-th/9901001v2")) == (
        "paper/arXiv:hep-th/9901001/citations",
        {"fields": CITATION_FIELDS, "offset": "0", "limit": "20"},
    )
    assert citations_request(REF, "100")[1]["limit"] == "100"
    assert headers("k3y") == {"x-api-key": "k3y"} and headers(None) == {}


@pytest.mark.parametrize(
    ("limit", "detail"),
    [
        (0, "limit must be from 1 to 100 (got 0)"),
        (101, "limit must be from 1 to 100 (got 101)"),
        ("x", 'limit must be a whole number from 1 to 100 (got "x")'),
    ],
)
def test_a_limit_out_of_range_is_a_bad_request(limit: object, detail: str) -> None:
    with pytest.raises(BadRequest) as caught:
        citations_request(REF, limit)  # type: ignore[arg-type]
    assert caught.value.detail == detail


def test_a_local_document_has_no_citations() -> None:
    with pytest.raises(BadRequest, match="local/short is a local document"):
        paper_request(parse_ref("local/short"))


def test_a_recorded_citations_page_gives_the_count_and_the_citing_titles() -> None:
    result = citations(REF, s2(PAPER), s2("danielnsilva_test_get_paper_citations_00.json"))
    recorded = json.loads(s2("danielnsilva_test_get_paper_citations_00.json"))
    assert result["paper"] == "2304.05376" and result["count"] == 500
    assert len(result["citations"]) == 20  # the default limit of 20, of the 100 recorded
    assert [c["title"] for c in result["citations"]] == [
        " ".join(item["citingPaper"]["title"].split()) for item in recorded["data"][:20]
    ]
    # fields=title was all that recording asked for: the rest is null, never made up
    assert all(c["year"] is None and c["arxiv"] is None for c in result["citations"])


def test_citing_papers_carry_their_arxiv_id_doi_year_and_url() -> None:
    whole = json.loads(s2("danielnsilva_object_Paper.json"))  # S2's paper object, citations[1000]
    edge = json.loads(s2("danielnsilva_object_Citation.json"))  # one recorded citations edge
    page = page_of(edge["citingPaper"], *whole["citations"][:99])
    result = citations(REF, s2("danielnsilva_object_Paper.json"), page, limit=100)
    assert result["count"] == 10059
    first = result["citations"][0]
    assert first == {
        "title": "Learning to Throw With a Handful of Samples Using Decision Transformers",
        "year": 2023,
        "arxiv": None,
        "doi": "10.1109/LRA.2022.3229266",
        "url": "https://www.semanticscholar.org/paper/bdcbc589c8d1e4dd0c6572630f8511557406ad2f",
    }
    arxiv = [c["arxiv"] for c in result["citations"] if c["arxiv"]]
    expected = [
        p["externalIds"]["ArXiv"]
        for p in whole["citations"][:99]
        if (p.get("externalIds") or {}).get("ArXiv")
    ]
    assert arxiv == [parse_ref(a).paper for a in expected] and len(arxiv) > 10


def test_without_a_citation_count_the_last_page_counts_what_it_listed() -> None:
    last = s2("danielnsilva_test_get_paper_citations_18.json")  # offset 1800, 81 entries, no next
    result = citations(REF, s2("danielnsilva_test_get_paper_00.json"), last, limit=100)
    assert result["count"] == 1881
    with pytest.raises(UpstreamError, match=r"no citation count for 2304\.05376"):
        citations(
            REF,
            s2("danielnsilva_test_get_paper_00.json"),
            s2("danielnsilva_test_get_paper_citations_00.json"),
        )


def test_an_empty_citations_page_is_an_empty_list() -> None:
    result = citations(REF, json.dumps({"citationCount": 0}).encode(), page_of())
    assert result == {"paper": "2304.05376", "count": 0, "citations": []}


@pytest.mark.parametrize(
    ("name", "status", "error", "words"),
    [
        ("danielnsilva_test_not_found_00.json", 404, NotFound, "Paper with id 0 not found"),
        (
            "paperqa_test_bulk_doi_search_03.json",
            404,
            NotFound,
            "Paper with id DOI:10.1101/2024.04.01.587366 not found",
        ),
        (
            "danielnsilva_test_bad_query_parameters_00.json",
            400,
            BadRequest,
            "Unrecognized or unsupported fields: [unknown]",
        ),
        ("danielnsilva_test_debug_00.json", 403, Unavailable, "Forbidden"),
    ],
)
def test_recorded_errors_map_to_ours_with_semantic_scholars_words(
    name: str, status: int, error: type[Exception], words: str
) -> None:
    meta = json.loads(s2(name.replace(".json", ".meta.json")))
    assert meta["status"] == status
    with pytest.raises(error) as caught:
        raise_for_status(status, s2(name), "arXiv:2304.05376")
    assert (
        caught.value.detail == f"Semantic Scholar answered {status} for arXiv:2304.05376: {words}"
    )  # type: ignore[attr-defined]


def test_rate_limiting_is_unavailable_with_its_retry_after_and_a_5xx_is_upstream() -> None:
    with pytest.raises(Unavailable) as caught:
        raise_for_status(429, b'{"message": "Too Many Requests"}', "arXiv:1", retry_after=7.0)
    assert caught.value.retry_after == 7.0 and caught.value.detail.endswith("Too Many Requests")
    with pytest.raises(UpstreamError, match=r"answered 502 for arXiv:1$"):
        raise_for_status(502, b"<html>bad gateway</html>", "arXiv:1")
    raise_for_status(200, b"", "arXiv:1")


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"[]",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"citationCount": ' + b"9" * 5000 + b"}",
        b" " * (MAX_ANSWER_BYTES + 1),
    ],
)
def test_an_answer_that_is_not_a_json_object_is_an_upstream_error(body: bytes) -> None:
    with pytest.raises(UpstreamError, match="Semantic Scholar"):
        citations(REF, body, page_of())


def test_odd_fields_are_dropped_not_trusted() -> None:
    odd = [
        {
            "title": ["not", "text"],
            "year": "2020",
            "externalIds": {"ArXiv": "../../etc", "DOI": "javascript:x"},
            "url": "javascript:alert(1)",
        },
        {"title": "  spaced \n title ", "year": True, "externalIds": "no"},
        "not an object",
    ]
    page = json.dumps(
        {
            "offset": 0,
            "data": [
                {"citingPaper": odd[0]},
                {"citingPaper": odd[1]},
                odd[2],
                {"citingPaper": None},
            ],
        }
    ).encode()
    result = citations(REF, b'{"citationCount": 4}', page)
    assert result["citations"] == [
        {"title": "", "year": None, "arxiv": None, "doi": None, "url": None},
        {"title": "spaced title", "year": None, "arxiv": None, "doi": None, "url": None},
    ]
    with pytest.raises(UpstreamError, match="no data list"):
        citations(REF, b'{"citationCount": 4}', b'{"data": "x"}')
    with pytest.raises(UpstreamError, match="no citation count"):
        citations(REF, b'{"citationCount": -1}', page_of(next=100))


def test_the_references_request_asks_titles_and_external_ids_of_up_to_1000_in_one_page() -> None:
    assert references_request(REF) == (
        "paper/arXiv:2304.05376/references",
        {"fields": "title,externalIds", "offset": "0", "limit": "1000"},
    )
    with pytest.raises(BadRequest, match="local document"):
        references_request(parse_ref("local/full"))


def test_cited_papers_keeps_the_recorded_references_with_an_arxiv_id() -> None:
    edge = json.loads(s2("danielnsilva_object_Reference.json"))  # a recorded references edge
    body = json.dumps({"offset": 0, "data": [edge]}).encode()
    assert cited_papers(REF, body) == {
        "paper": "2304.05376",
        "cited": [{"title": "Neural Variational Inference and Learning in Belief Networks",
                   "arxiv": "1402.0030"}],
    }  # fmt: skip
    # a recorded page asked with fields=title only: titles, no external ids, nothing to keep
    titles_only = s2("danielnsilva_test_get_paper_references_00.json")
    assert cited_papers(REF, titles_only)["cited"] == []


@pytest.mark.parametrize(
    "body",
    [b"[]", b'{"data": 5}', b"not json", b'{"data": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"],
)
def test_a_references_answer_that_is_no_page_is_an_upstream_error(body: bytes) -> None:
    with pytest.raises(UpstreamError):
        cited_papers(REF, body)


def test_a_references_answer_over_the_cap_is_refused_unread() -> None:
    with pytest.raises(UpstreamError, match="more than"):
        cited_papers(REF, b'{"data": []}' + b" " * MAX_ANSWER_BYTES)
