"""Links on the outline page (issue 25, item 7): the addresses in an abstract are links (escaped,
http and https only), and the BibTeX link is shown only where it answers."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from paperanchor.api.pages import linked
from tests.api.conftest import LEGACY

CODE = "https://github.com/XuchanBao/behavioral-self-awareness"  # 2501.11120v1's abstract


def test_an_abstracts_address_is_a_link_without_the_sentences_full_stop(http, replay):
    page = http.get("/2501.11120v1")

    root = lxml_html.fromstring(page.text)
    (link,) = root.xpath("//p[@class='abstract']//a")
    assert link.get("href") == CODE and link.text == CODE
    assert link.get("rel") == "nofollow noopener noreferrer"
    assert root.xpath("string(//p[@class='abstract'])").endswith(f"{CODE}.")


@pytest.mark.parametrize(
    ("text", "links"),
    [
        ("code at https://github.com/a/b.", ["https://github.com/a/b"]),
        ("(see http://x.org/p_(1)), and", ["http://x.org/p_(1)"]),  # its own bracket stays
        ("[https://x.org/a] then", ["https://x.org/a"]),
        ("two: https://a.org, https://b.org;", ["https://a.org", "https://b.org"]),
        ("javascript:alert(1) and data:text/html,x and ftp://x.org", []),
        ("https:// nothing here", []),
    ],
)
def test_only_http_addresses_become_links(text, links):
    root = lxml_html.fromstring(f"<p>{linked(text)}</p>")

    assert [a.get("href") for a in root.iter("a")] == links
    assert root.text_content() == text  # the text reads the same


def test_an_address_cannot_break_out_of_its_link():
    hostile = 'see https://x.org/"onmouseover="alert(1) and <script>alert(2)</script>'

    shown = str(linked(hostile))

    assert "<script>" not in shown and 'onmouseover="' not in shown
    root = lxml_html.fromstring(f"<p>{shown}</p>")
    assert [a.attrib for a in root.iter("a")] == [
        {"href": "https://x.org/", "rel": "nofollow noopener noreferrer"}
    ]


def test_no_bibtex_link_where_arxiv_is_not_asked_and_no_metadata_is_kept(http):
    # this server asks no arXiv API: the paper's .bib answers 404, so the page offers none
    page = http.get(f"/{LEGACY}")

    assert page.status_code == 200 and 'class="bibtex"' not in page.text
    assert http.get(f"/{LEGACY}.bib").status_code == 404
