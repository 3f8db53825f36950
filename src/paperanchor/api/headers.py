"""Headers of defence on every answer (issue 21, #12): what a browser may do with our pages.

Every response says `X-Content-Type-Options: nosniff` (a Markdown or JSON body holding a
paper's `<script>` is never sniffed as HTML) and `Referrer-Policy: no-referrer` (a reader's
paper addresses do not leak to image hosts). HTML pages also get a Content-Security-Policy
with no script at all, images only from this server and the upstreams papers come from (a
paper naming `http://10.0.0.1/x.png` can no longer send a reader's browser to an intranet
address), no framing, no `<base>`, forms only to this server. The API's own documentation
page (`/docs`, Swagger UI's script) keeps its script and gets the rest.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from paperanchor.settings import Settings

DOCS_PREFIXES = ("/docs",)


def image_sources(settings: Settings) -> list[str]:
    """The origins a page's images may come from: ours and every configured paper upstream."""
    origins: dict[str, None] = {"'self'": None}
    for base in (settings.arxiv_html_url, settings.ar5iv_url):
        parts = urlsplit(base or "")
        if parts.scheme in ("http", "https") and parts.netloc:
            origins[f"{parts.scheme}://{parts.netloc}"] = None
    return list(origins)


def page_policy(settings: Settings) -> str:
    """The Content-Security-Policy of our HTML pages."""
    return "; ".join(
        [
            "default-src 'none'",
            "script-src 'none'",
            "style-src 'unsafe-inline'",  # the pages' one <style> and a few style attributes
            f"img-src {' '.join(image_sources(settings))} data:",
            "form-action 'self'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
        ]
    )


class DefenceHeaders:
    """ASGI middleware adding the headers above to every HTTP response."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.always = [
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"x-frame-options", b"DENY"),
        ]
        self.page = [(b"content-security-policy", page_policy(settings).encode())]
        self.docs = [(b"content-security-policy", b"frame-ancestors 'none'; base-uri 'none'")]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        docs = str(scope.get("path", "")).startswith(DOCS_PREFIXES)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _value in headers}
                headers.extend(h for h in self.always if h[0] not in names)
                html = any(
                    name.lower() == b"content-type" and value.startswith(b"text/html")
                    for name, value in headers
                )
                if html and b"content-security-policy" not in names:
                    headers.extend(self.docs if docs else self.page)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
