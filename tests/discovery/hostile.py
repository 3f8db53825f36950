"""Hostile arXiv API answers, built from one recorded entry; `python -m tests.discovery.hostile`
prints the time and memory each costs the parser (the figures in docs/discovery.md)."""

from __future__ import annotations

HEAD = (
    b"<?xml version='1.0' encoding='UTF-8'?>\n"
    b'<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
    b'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">'
    b"<opensearch:totalResults>1</opensearch:totalResults>"
    b"<opensearch:startIndex>0</opensearch:startIndex>"
)
TAIL = b"</feed>"


def entry(
    *,
    entry_id: bytes = b"http://arxiv.org/abs/1706.03762v7",
    title: bytes = b"Attention Is All You Need",
    published: bytes = b"2017-06-12T17:57:34Z",
    updated: bytes = b"2023-08-02T00:41:18Z",
    summary: bytes = b"The dominant sequence transduction models are based on recurrent networks.",
    extra: bytes = b"",
) -> bytes:
    return (
        b"<entry><id>" + entry_id + b"</id><title>" + title + b"</title>"
        b"<updated>" + updated + b"</updated><published>" + published + b"</published>"
        b"<summary>" + summary + b"</summary>"
        b'<link href="https://arxiv.org/abs/1706.03762v7" rel="alternate" type="text/html"/>'
        b'<category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>'
        b'<arxiv:primary_category term="cs.CL"/>'
        b"<author><name>Ashish Vaswani</name></author>" + extra + b"</entry>"
    )


def feed(*entries: bytes, head: bytes = HEAD) -> bytes:
    return head + b"".join(entries) + TAIL


def billion_laughs() -> bytes:
    lines = [b'<!ENTITY lol0 "lol">']
    lines += [
        b'<!ENTITY lol%d "%s">' % (level, b"".join(b"&lol%d;" % (level - 1) for _ in range(10)))
        for level in range(1, 10)
    ]
    doctype = b"<!DOCTYPE feed [" + b"".join(lines) + b"]>"
    return b"<?xml version='1.0'?>" + doctype + feed(entry(title=b"&lol9;"), head=HEAD[22:])


def external_entity() -> bytes:
    doctype = b'<!DOCTYPE feed [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
    return b"<?xml version='1.0'?>" + doctype + feed(entry(title=b"&secret;"), head=HEAD[22:])


def huge_title(size: int) -> bytes:
    return feed(entry(title=b"word " * (size // 5)))


def nested_title(children: int = 140_000) -> bytes:
    """A title of `children` `<b>` elements: 14 M characters that `node.text` does not see."""
    return feed(entry(title=b"<b>" + b"x" * 100 + b"</b>" + b"<b>word</b>" * children))


def many_authors(count: int) -> bytes:
    return feed(entry(extra=b"<author><name>A. Author</name></author>" * count))


def many_categories(count: int) -> bytes:
    terms = b"".join(b'<category term="c%d.X"/>' % n for n in range(count))
    return feed(entry(extra=terms))


def many_entries(count: int) -> bytes:
    return feed(*[entry()] * count)


def deep(levels: int) -> bytes:
    return feed(entry(title=b"<b>" * levels + b"x" + b"</b>" * levels))


CASES = {
    "billion laughs (9 levels of 10)": billion_laughs,
    "external entity file:///etc/passwd": external_entity,
    "99 kB title (under MAX_FIELD_CHARS)": lambda: huge_title(99_000),
    "9.5 MB title in one entry": lambda: huge_title(9_500_000),
    "11 MB title (libxml2's 10 MB text node)": lambda: huge_title(11_000_000),
    "17 MB feed (past MAX_FEED_BYTES)": lambda: huge_title(17 * 1024 * 1024),
    "2,000 entries (the most asked for)": lambda: many_entries(2000),
    "2,001 entries": lambda: many_entries(2001),
    "100,000 nested elements": lambda: deep(100_000),
    "bad date 2021-13-45": lambda: feed(entry(published=b"2021-13-45T00:00:00Z")),
}


def main() -> None:
    import resource
    import subprocess
    import sys

    print(f"{'case':42} {'bytes':>11} {'result':14} {'ms':>8} {'peak RSS MB':>12}")
    for name in CASES:
        script = (
            "import resource, sys, time\n"
            "from tests.discovery.hostile import CASES\n"
            "from paperanchor.discovery.atom import parse_feed\n"
            f"body = CASES[{name!r}]()\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "start = time.perf_counter()\n"
            "try:\n"
            "    outcome = f'{len(parse_feed(body).entries)} entries'\n"
            "except Exception as exc:\n"
            "    outcome = type(exc).__name__\n"
            "ms = (time.perf_counter() - start) * 1000\n"
            "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
            "print(len(body), outcome, f'{ms:.1f}', f'{max(peak, 0) / 1024:.1f}')\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        )
        size, *outcome, ms, peak = done.stdout.split()
        print(f"{name:42} {int(size):>11,} {' '.join(outcome):14} {ms:>8} {peak:>12}")
    del resource


if __name__ == "__main__":
    main()
