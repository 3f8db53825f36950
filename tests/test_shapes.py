"""The JSON shapes of contract §5 are written once (paperanchor/shapes.py): the answers the service
builds, the schemas of /openapi.json and of the MCP tools all come from the same classes."""

from __future__ import annotations

import dataclasses

import pytest
from fastapi.testclient import TestClient
from pydantic import TypeAdapter, ValidationError

from paperanchor import service
from paperanchor.api import models
from paperanchor.app import create_app
from paperanchor.paper import LoadedPaper, shapes
from paperanchor.parse.pdf import parse_pdf
from paperanchor.settings import Settings
from tests.parse import pdf_samples as samples


def test_the_web_models_are_the_shapes_the_service_builds() -> None:
    for name in models.__all__:
        if name[0].isupper():
            assert getattr(models, name) is getattr(shapes, name), name


def test_a_shape_refuses_a_field_it_does_not_name() -> None:
    hit = {"anchor": "S1.p1", "sectionId": "S1", "snippet": "text"}
    TypeAdapter(shapes.SearchHit).validate_python(hit)

    with pytest.raises(ValidationError, match="extra"):
        TypeAdapter(shapes.SearchHit).validate_python({**hit, "score": 3})


def test_an_equation_read_from_a_pdf_has_the_equation_shape() -> None:
    # no TeX in a PDF: `latex` is null and the extracted text comes beside it, which the
    # shape says (the model written apart from the service's dict once refused this answer)
    answer = service.equation(_paper_of(samples.hostile_text_pdf()), "E1")

    assert answer["latex"] is None and "text" in answer
    TypeAdapter(shapes.Equation).validate_python(answer)


def test_a_cite_by_anchor_has_no_match_field_and_the_schema_allows_none_but_a_match() -> None:
    schema = TypeAdapter(shapes.Cite).json_schema()

    assert "match" not in schema["required"] and "score" not in schema["required"]
    # present only when a quote was verified, and then never null
    assert schema["properties"]["match"]["enum"] == ["exact", "fuzzy"]
    assert schema["properties"]["score"]["type"] == "integer"


def test_every_json_error_answer_in_openapi_refers_to_the_one_error_shape(tmp_path) -> None:
    settings = Settings(
        cache_dir=tmp_path, offline=True, rate_limit="0", public_url="http://testserver"
    )
    with TestClient(create_app(settings)) as client:
        schema = client.get("/openapi.json").json()

    components = schema["components"]["schemas"]
    error = TypeAdapter(shapes.Error).json_schema(ref_template="#/components/schemas/{model}")
    assert components["ErrorDetail"] == error.pop("$defs")["ErrorDetail"]
    assert components["Error"] == error
    errors_by_route = {}
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            for status, answer in operation["responses"].items():
                json_content = answer.get("content", {}).get("application/json")
                if status.startswith(("4", "5")) and json_content is not None:
                    assert json_content["schema"] == {"$ref": "#/components/schemas/Error"}
                    errors_by_route.setdefault(path, set()).add(status)
    assert "/{paper}/outline.json" in errors_by_route and "/{paper}" in errors_by_route
    # 401 where bearer tokens are asked for and 403 where a public server refuses a paper's
    # text (contract §9, §12) are listed on every route as the others are
    statuses = {"400", "401", "403", "404", "413", "429", "500", "502", "503"}
    assert all(found == statuses for found in errors_by_route.values()), errors_by_route


def test_a_read_result_has_exactly_the_fields_of_its_shape_in_order() -> None:
    # ReadResult keeps attribute access for Python callers (the CLI, the tests); its JSON is
    # the SectionText shape, and mypy checks to_json's literal against it
    fields = [field.name for field in dataclasses.fields(service.ReadResult)]
    assert fields == list(shapes.SectionText.__annotations__)
    result = service.read(_paper_of(samples.hostile_text_pdf()), "E1")
    assert list(result.to_json()) == fields
    TypeAdapter(shapes.SectionText).validate_python(result.to_json())


def _paper_of(pdf: bytes) -> service.Paper:
    return service.Paper.open(LoadedPaper(parse_pdf(pdf), "local/pdf", "local/pdf"))
