"""Hostile arXiv API answers: each is refused or read in bounded time, and nothing expands."""

from __future__ import annotations

import time

import pytest

from paperanchor.discovery.atom import (
    MAX_AUTHORS,
    MAX_CATEGORIES,
    MAX_ENTRIES,
    MAX_FEED_BYTES,
    parse_feed,
)
from paperanchor.errors import BadRequest, UpstreamError
from tests.discovery import hostile

# Loose: each case takes milliseconds (docs/discovery.md has the figures); a second means the
# bound that case tests is gone.
BOUND_S = 5.0


def refused(body: bytes, match: str) -> str:
    started = time.monotonic()
    with pytest.raises(UpstreamError, match=match) as caught:
        parse_feed(body)
    assert time.monotonic() - started < BOUND_S
    return caught.value.detail


def test_a_billion_laughs_feed_is_refused_before_any_entity_expands() -> None:
    refused(hostile.billion_laughs(), "document type declaration")


def test_an_external_entity_is_never_read() -> None:
    detail = refused(hostile.external_entity(), "document type declaration")
    assert "root:" not in detail


def test_an_undeclared_entity_is_xml_that_does_not_parse() -> None:
    refused(hostile.feed(hostile.entry(title=b"&lol;")), "does not parse")


def test_a_utf16_feed_cannot_hide_a_doctype_from_the_scan() -> None:
    body = (
        hostile.billion_laughs()
        .decode()
        .replace("version='1.0'", "version='1.0' encoding='UTF-16'")
    )
    refused(body.encode("utf-16"), "not UTF-8")


def test_a_feed_past_the_size_cap_is_refused_unread() -> None:
    body = b" " * (MAX_FEED_BYTES + 1)
    started = time.monotonic()
    refused(body, "more than")
    assert time.monotonic() - started < 0.5


def test_a_huge_field_is_refused_and_a_long_one_is_kept() -> None:
    refused(hostile.huge_title(9_500_000), "has a title of over 100,000 characters")
    refused(hostile.huge_title(11_000_000), "does not parse")  # libxml2's own 10 MB text limit
    (entry,) = parse_feed(hostile.huge_title(99_000)).entries
    assert len(entry["title"]) == 99_000 - 1  # "word word … word" squashed, last space dropped


def test_deep_nesting_is_refused_by_the_parser_depth_limit() -> None:
    refused(hostile.deep(100_000), "Excessive depth")


def test_more_entries_than_arxiv_sends_are_refused() -> None:
    assert len(parse_feed(hostile.many_entries(MAX_ENTRIES)).entries) == MAX_ENTRIES
    refused(hostile.many_entries(MAX_ENTRIES + 1), "2001 entries")


@pytest.mark.parametrize(
    "date",
    [b"2021-13-45T00:00:00Z", b"yesterday", b"", b"9999-12-31T23:59:59-23:59", b"2021" * 1000],
)
def test_a_bad_date_is_an_upstream_error_naming_the_entry(date: bytes) -> None:
    refused(hostile.feed(hostile.entry(published=date)), "entry 1706.03762v7 has (no|a) published")


@pytest.mark.parametrize(
    "entry_id",
    [
        b"http://evil.example/abs/1706.03762v7",
        b"http://arxiv.org/abs/../../etc/passwdv1",
        b"http://arxiv.org/abs/1706.03762",
        b"http://arxiv.org/abs/1706.03762v0",
        b"http://arxiv.org/abs/local/secretv1",
        b"",
    ],
)
def test_an_entry_without_an_arxiv_id_is_an_upstream_error(entry_id: bytes) -> None:
    refused(hostile.feed(hostile.entry(entry_id=entry_id)), "entry 1 has no arXiv id")


def test_a_link_off_arxiv_is_not_passed_on() -> None:
    extra = b'<link href="javascript:alert(1)" title="pdf" rel="related"/>'
    (entry,) = parse_feed(hostile.feed(hostile.entry(extra=extra))).entries
    assert entry["pdfUrl"] == "https://arxiv.org/pdf/1706.03762v7"


def test_markup_inside_a_field_is_its_text() -> None:
    title = b"<b>Attention</b> &lt;script&gt;alert(1)&lt;/script&gt;"
    (entry,) = parse_feed(hostile.feed(hostile.entry(title=title))).entries
    assert entry["title"] == "Attention <script>alert(1)</script>"


def test_an_error_feed_message_is_one_line_with_control_characters_escaped() -> None:
    body = hostile.feed(
        hostile.entry(
            entry_id=b"https://arxiv.org/api/errors#x", summary=b"bad\x1b[31m input " * 40
        )
    )
    with pytest.raises(UpstreamError, match="does not parse"):
        parse_feed(body)  # XML 1.0 has no ESC: the feed itself is refused
    body = hostile.feed(
        hostile.entry(
            entry_id=b"https://arxiv.org/api/errors#x", summary=b"bad\xc2\x85 input " * 40
        )
    )
    with pytest.raises(BadRequest) as caught:
        parse_feed(body)
    assert "\x85" not in caught.value.detail and len(caught.value.detail) < 120


@pytest.mark.parametrize("count", [b"-1", b"1e9", b"x", b"9" * 20])
def test_a_total_that_is_not_a_count_is_an_upstream_error(count: bytes) -> None:
    head = hostile.HEAD.replace(
        b">1</opensearch:totalResults>", b">" + count + b"</opensearch:totalResults>"
    )
    refused(hostile.feed(hostile.entry(), head=head), "not a count")


@pytest.mark.parametrize(
    "body", [b"", b"not xml", b"<html><body>Service Unavailable</body></html>", b"\xff\xfe"]
)
def test_an_answer_that_is_not_an_atom_feed_is_an_upstream_error(body: bytes) -> None:
    refused(body, "arXiv API answered")


def test_a_field_of_many_child_elements_counts_their_text_too() -> None:
    refused(hostile.nested_title(140_000), "has a title of over 100,000 characters")
    (entry,) = parse_feed(hostile.nested_title(1_000)).entries  # 5,100 characters: kept
    assert entry["title"].startswith("x" * 100) and entry["title"].endswith("word")


def test_authors_and_categories_are_bounded() -> None:
    refused(hostile.many_authors(MAX_AUTHORS + 1), f"more than {MAX_AUTHORS:,} authors")
    refused(hostile.many_categories(MAX_CATEGORIES + 1), f"more than {MAX_CATEGORIES} categories")
    (entry,) = parse_feed(hostile.many_authors(3_000)).entries
    assert len(entry["authors"]) == 3_001
