"""Licences (contract §12): which names and URLs let a public server serve a paper's text, the
licence an arXiv listing links to (the corpus's saved abs pages), and hostile listings."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from paperanchor.licence import NON_EXCLUSIVE, abs_page_licence, allows_serving, name_of_url


@pytest.mark.parametrize(
    ("licence", "allowed"),
    [
        # the names arXiv's pages print in their furniture (corpus/html, corpus/pairs)
        ("CC BY 4.0", True),
        ("CC BY-SA 4.0", True),
        ("CC BY-NC-SA 4.0", True),
        ("CC Zero", True),
        ("Public Domain", True),
        (NON_EXCLUSIVE, False),
        (None, False),
        ("", False),
        ("Copyright 2024 the authors", False),
        ("CCBY", False),  # not a name any licence has
        # the same licences as the URLs listings link to
        ("http://creativecommons.org/licenses/by/4.0/", True),
        ("https://creativecommons.org/publicdomain/zero/1.0/", True),
        ("http://arxiv.org/licenses/nonexclusive-distrib/1.0/", False),
        ("https://creativecommons.org.evil.example/licenses/by/4.0/", False),
    ],
)
def test_only_creative_commons_and_public_domain_allow_serving(licence, allowed):
    assert allows_serving(licence) is allowed


def test_urls_are_named_as_the_pages_name_them():
    assert name_of_url("http://creativecommons.org/licenses/by-nc-sa/4.0/") == "CC BY-NC-SA 4.0"
    assert name_of_url("http://creativecommons.org/publicdomain/zero/1.0/") == "CC Zero"
    assert name_of_url("http://arxiv.org/licenses/nonexclusive-distrib/1.0/") == NON_EXCLUSIVE
    assert name_of_url("https://example.org/licence") is None


def test_the_corpus_listings_name_their_licence(corpus: Path):
    listings = sorted((corpus / "abs").glob("*.html"))

    assert [(page.stem, abs_page_licence(page.read_bytes())) for page in listings] == [
        ("2004.10162", NON_EXCLUSIVE),
        ("2106.09608", NON_EXCLUSIVE),
    ]


def test_a_listing_of_todays_markup_with_a_cc_licence_is_read():
    # arxiv.org/abs since 2023: the link carries its class and an icon
    body = (
        b'<div class="abs-license"><a href="http://creativecommons.org/licenses/by/4.0/" '
        b'title="Rights to this article" class="has_license"><img alt="license icon" '
        b'src="https://arxiv.org/icons/licenses/by-4.0.png"><span>view license</span></a></div>'
    )

    assert abs_page_licence(body) == "CC BY 4.0"


def test_a_cc_link_elsewhere_on_a_listing_is_not_its_licence():
    body = (
        b'<p>cites <a href="http://creativecommons.org/licenses/by/4.0/">a CC page</a></p>'
        b'<div class="abs-license">(<a href="http://arxiv.org/licenses/nonexclusive-distrib/1.0/"'
        b' title="Rights to this article">license</a>)</div>'
    )

    assert abs_page_licence(body) == NON_EXCLUSIVE


@pytest.mark.parametrize(
    "body",
    [
        b"<a " * 400_000,  # 1.2 MB of links that never close
        b"<a title='Rights to this article' href='" + b"x" * 1_000_000,
        (b"<a href='http://creativecommons.org/licenses/by/4.0/' " + b"c" * 390) * 3000,
    ],
    ids=["unclosed-links", "endless-href", "long-tags"],
)
def test_a_hostile_listing_is_read_in_bounded_time(body):
    started = time.perf_counter()
    found = abs_page_licence(body)
    elapsed = time.perf_counter() - started

    assert found is None
    # a bound, not a speed target (milliseconds here): a scan that backtracked over the 1 MB
    # would take minutes
    assert elapsed < 5, f"{elapsed:.2f} s"
