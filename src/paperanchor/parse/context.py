"""State shared while one page is parsed: footnotes found, base URL, positional ids."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from paperanchor.render.escape import safe_url
from paperanchor.tree import Footnote


@dataclass
class ParseContext:
    base_url: str = ""
    footnotes: dict[str, Footnote] = field(default_factory=dict)
    # conversion errors inside each section element, counted once per page
    section_errors: dict[Any, int] = field(default_factory=dict)
    _positional: dict[str, int] = field(default_factory=dict)

    def positional_id(self, parent_id: str, marker: str = "b") -> str:
        """A stable id for an element LaTeXML left without one: `<parent>.<marker><n>`."""
        key = f"{parent_id}.{marker}"
        count = self._positional.get(key, 0) + 1
        self._positional[key] = count
        return f"{key}{count}"

    def absolute(self, url: str) -> str:
        """`url` resolved against the page, when that is an http(s) URL; else "" (SPEC §3)."""
        url = url.strip()
        if not url:
            return ""
        try:
            resolved = urljoin(self.base_url, url) if self.base_url else url
        except ValueError:  # a malformed URL on a hostile page
            return ""
        return safe_url(resolved) or ""
