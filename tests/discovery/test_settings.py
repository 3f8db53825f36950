"""The discovery settings (contract §2): upstream URLs, Semantic Scholar's key, gaps, tool sets."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from paperanchor.settings import Settings


def test_the_defaults_are_arxivs_api_and_semantic_scholar_with_the_seven_tools() -> None:
    settings = Settings(_env_file=None)

    assert settings.arxiv_api_url == "https://export.arxiv.org/api/query"
    assert settings.s2_url == "https://api.semanticscholar.org/graph/v1"
    assert settings.s2_api_key is None and settings.tools == "reader"
    assert settings.arxiv_api_gap_s == 3.0
    assert settings.s2_gap == 3.0  # no key: 3 s


def test_they_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERANCHOR_ARXIV_API_URL", "http://mirror.example/api/query/")
    monkeypatch.setenv("PAPERANCHOR_S2_URL", "")
    monkeypatch.setenv("PAPERANCHOR_S2_API_KEY", "k3yK3yk3y")
    monkeypatch.setenv("PAPERANCHOR_TOOLS", " All ")

    settings = Settings(_env_file=None)

    assert settings.arxiv_api_url == "http://mirror.example/api/query"
    assert settings.s2_url == ""  # off
    assert settings.s2_api_key is not None
    assert settings.s2_api_key.get_secret_value() == "k3yK3yk3y"
    assert settings.tools == "all"
    assert settings.s2_gap == 1.0  # with a key: 1 s
    assert "k3yK3yk3y" not in repr(settings)  # a secret is not printed with the settings


def test_a_gap_set_wins_over_the_keys_default() -> None:
    assert Settings(_env_file=None, s2_api_key="abc", s2_gap_s=2.5).s2_gap == 2.5
    assert Settings(_env_file=None, s2_gap_s="").s2_gap == 3.0  # empty is unset


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("tools", "everything", "PAPERANCHOR_TOOLS must be reader or all, got 'everything'"),
        ("arxiv_api_url", "ftp://export.arxiv.org", "PAPERANCHOR_ARXIV_API_URL must be an http"),
        ("s2_url", "https://x.example/?a=1", "PAPERANCHOR_S2_URL must not carry a query"),
        ("arxiv_api_gap_s", -1, "PAPERANCHOR_ARXIV_API_GAP_S must be a finite number >= 0"),
        ("s2_gap_s", float("inf"), "PAPERANCHOR_S2_GAP_S must be a finite number >= 0"),
        ("s2_api_key", "key with spaces", "PAPERANCHOR_S2_API_KEY must be 1-200 printable"),
        ("s2_api_key", "k\r\nX-Injected: 1", "PAPERANCHOR_S2_API_KEY must be 1-200 printable"),
        ("s2_api_key", "k" * 201, "PAPERANCHOR_S2_API_KEY must be 1-200 printable"),
    ],
)
def test_a_discovery_setting_out_of_range_is_refused_with_its_variable_named(
    field: str, value: object, message: str
) -> None:
    with pytest.raises(ValidationError, match=message) as refused:
        Settings(_env_file=None, **{field: value})
    if field == "s2_api_key":
        assert str(value) not in str(refused.value)  # nor is a refused key
