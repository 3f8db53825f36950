"""A cookie jar that keeps nothing: the upstream client sends no cookies.

httpx keeps every `Set-Cookie` it is given and replays it on later requests to that host:
after five pages setting 120 cookies each, every request carried a 65 KB `Cookie:` header and
arXiv would answer 431 for good, and a cookie set for an upstream would follow every user of
the server. paperanchor needs no state with its upstreams, so none is kept.
"""

from __future__ import annotations

from http.cookiejar import Cookie, CookieJar
from typing import Any


class NoCookies(CookieJar):
    """A `CookieJar` that stores no cookie and so adds no `Cookie` header."""

    def set_cookie(self, cookie: Cookie) -> None:
        """Drop it."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        """Keep none of a response's `Set-Cookie` headers."""

    def set_cookie_if_ok(self, cookie: Cookie, request: Any) -> None:
        """Drop it."""
