"""One exception family; each class maps to exactly one error code of SPEC §9.

    PaperAnchorError                  internal      500
    ├── BadRequest                    bad-request   400
    ├── Unauthorized                  unauthorized  401
    ├── Forbidden                     forbidden     403
    ├── NotFound                      not-found     404
    ├── TooLarge                      too-large     413
    ├── RateLimited                   rate-limited  429
    ├── UpstreamError                 upstream-error 502
    │   └── ParseError                (the page is not LaTeXML HTML we can read)
    └── Unavailable                   unavailable   503

Adapters map the family to their wire form in one place each; `str(err)` is the detail.
"""

from __future__ import annotations

from paperanchor.render.escape import markdown_line


class PaperAnchorError(Exception):
    """Base of every error the project raises on purpose."""

    code = "internal"
    status = 500

    def __init__(self, detail: str, *, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.retry_after = retry_after

    def wire_text(self) -> str:
        """The `<code>: <detail>` text of the CLI and plain-text routes."""
        return f"{self.code}: {self.detail}"

    def wire_markdown(self) -> str:
        """`wire_text` as Markdown routes and MCP send it: the detail repeats a request or a
        paper's ids, which stay text (render/escape.py)."""
        return f"{self.code}: {markdown_line(self.detail)}"

    def to_json(self) -> dict[str, object]:
        """The `Error` shape of SPEC §5."""
        return {"error": {"code": self.code, "status": self.status, "detail": self.detail}}


class BadRequest(PaperAnchorError):
    code = "bad-request"
    status = 400


class Unauthorized(PaperAnchorError):
    """A bearer token is required (PAPERANCHOR_AUTH_TOKENS_FILE) and was missing or wrong."""

    code = "unauthorized"
    status = 401


class Forbidden(PaperAnchorError):
    """Public mode: the paper's licence does not allow serving its text (SPEC §12)."""

    code = "forbidden"
    status = 403


class NotFound(PaperAnchorError):
    code = "not-found"
    status = 404


class TooLarge(PaperAnchorError):
    code = "too-large"
    status = 413


class RateLimited(PaperAnchorError):
    code = "rate-limited"
    status = 429


class UpstreamError(PaperAnchorError):
    code = "upstream-error"
    status = 502


class ParseError(UpstreamError):
    """The bytes are not a LaTeXML document we can read."""


class Unavailable(PaperAnchorError):
    code = "unavailable"
    status = 503


def internal(exc: BaseException) -> PaperAnchorError:
    """Wrap an unexpected exception without leaking a stack trace into the detail."""
    return PaperAnchorError(f"unexpected {type(exc).__name__} while serving the request")
