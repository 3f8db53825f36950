"""Discovery (contract §4): arXiv metadata and search, BibTeX, citations, categories and trends.

Pure but one: these modules turn upstream answers (bytes) into contract §5 shapes and compose the
requests' parameters; they import no web, HTTP, cache or Redis library. `client.py` is the
exception: it sends the requests through the polite layer and keeps the answers in the store
(importing this package does not import it).

    atom.py        arXiv API Atom feeds -> Metadata, Hit, search pages; arXiv's error feeds
    query.py       search_query composition, id_list requests, argument checking
    latex.py       text -> BibTeX-safe LaTeX (escaping, math kept, case protection)
    bibtex.py      @misc entries, keys, a paper's bibliography as BibTeX
    s2.py          Semantic Scholar Graph API answers -> Citations; request paths
    categories.py  arXiv's taxonomy (package data), category checking, trends
    entries.py     answers as cache entries: JSON naming its key, checked when read back
    client.py      the arXiv API and Semantic Scholar clients: polite, cached (not pure)
"""
