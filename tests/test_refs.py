"""Paper references (contract §1): every spelling normalised to paper/idv; everything else
rejected."""

from __future__ import annotations

import pytest

from paperanchor.errors import BadRequest
from paperanchor.refs import parse_ref


@pytest.mark.parametrize(
    ("text", "paper", "idv"),
    [
        ("1706.03762", "1706.03762", "1706.03762"),
        ("1706.03762v7", "1706.03762", "1706.03762v7"),
        ("0704.0001", "0704.0001", "0704.0001"),  # 4-digit suffix before 2015
        ("  2501.11120v1\n", "2501.11120", "2501.11120v1"),  # surrounding whitespace ignored
        ("hep-th/9901001", "hep-th/9901001", "hep-th/9901001"),
        ("hep-th/9901001v2", "hep-th/9901001", "hep-th/9901001v2"),
        ("math.GT/0309136", "math.GT/0309136", "math.GT/0309136"),
        ("arXiv:1706.03762v7", "1706.03762", "1706.03762v7"),
        ("ARXIV:1706.03762", "1706.03762", "1706.03762"),  # the prefix in any case
        ("arxiv:hep-th/9901001v2", "hep-th/9901001", "hep-th/9901001v2"),
        ("https://arxiv.org/abs/1706.03762", "1706.03762", "1706.03762"),
        ("https://arxiv.org/pdf/1706.03762v7", "1706.03762", "1706.03762v7"),
        ("https://arxiv.org/pdf/1706.03762v7.pdf", "1706.03762", "1706.03762v7"),
        ("https://arxiv.org/html/1706.03762v7", "1706.03762", "1706.03762v7"),
        ("http://arxiv.org/abs/hep-th/9901001v2", "hep-th/9901001", "hep-th/9901001v2"),
        ("https://ar5iv.labs.arxiv.org/html/1706.03762", "1706.03762", "1706.03762"),
        ("https://ar5iv.org/abs/1706.03762", "1706.03762", "1706.03762"),
        ("https://arxiv.org/abs/1706.03762v7#S3", "1706.03762", "1706.03762v7"),  # fragment dropped
        ("local/short", "local/short", "local/short"),
        ("local/my-paper_2.v1", "local/my-paper_2.v1", "local/my-paper_2.v1"),
    ],
)
def test_every_spelling_normalises_to_paper_and_idv(text: str, paper: str, idv: str) -> None:
    ref = parse_ref(text)
    assert (ref.paper, ref.idv) == (paper, idv)


def test_legacy_ids_name_their_file_with_an_underscore() -> None:
    assert parse_ref("hep-th/9901001v2").file_stem == "hep-th_9901001v2"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "attention is all you need",
        "1706.3762",  # suffix too short
        "1706.037621",  # suffix too long
        "1513.00001",  # month 13
        "1412.00001",  # 5-digit suffix before 2015
        "1706.03762v0",  # versions start at 1
        "hep-th/990100",  # legacy numbers have 7 digits
        "https://example.org/abs/1706.03762",  # not an arXiv host
        "http://127.0.0.1:22/",
        "file:///etc/passwd",
        "//evil.example/x",
        "../../etc/passwd",
        "%2e%2e%2f",
        "local/../etc/passwd",
        "local/a/b",
        "local/",
        "1706.03762\x00",
    ],
)
def test_anything_else_is_a_bad_request_naming_what_was_received(text: str) -> None:
    with pytest.raises(BadRequest) as caught:
        parse_ref(text)
    assert caught.value.code == "bad-request"
    shown = text.strip().replace("\x00", "\\x00")
    assert shown[:40] in caught.value.detail
