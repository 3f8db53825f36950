"""Bearer tokens for a server anyone can reach (SPEC §12): `PAPERANCHOR_AUTH_TOKENS_FILE`.

The file holds the SHA-256 digests of the tokens, one lowercase hex digest a line (`#` starts
a comment; blank lines are ignored), never the tokens themselves: a leaked file grants nothing.
`paperanchor hash-token` prints the line for a token. With the file set, every route but
`/healthz` (and the protected resource metadata, which tells a client how to authenticate)
needs `Authorization: Bearer <token>`: REST and the pages answer 401 `unauthorized` in the
route's wire form with `WWW-Authenticate`; `/mcp` is guarded by the MCP SDK's own hooks (its
`BearerAuthBackend` over our `TokenVerifier`, and the `RequireAuthMiddleware` the SDK puts on its
route), which answer 401 as the MCP authorization specification describes, with the metadata's
address (RFC 9728) in `WWW-Authenticate`. Loopback clients need no token unless the server is
public (`PAPERANCHOR_PUBLIC=1`).

A token is compared as its digest against every digest of the file with
`hmac.compare_digest`, all of them every time: the time an answer takes says nothing of how
much of a token was right, nor of which line it matched.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections.abc import Callable
from pathlib import Path

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl
from starlette.authentication import AuthCredentials, AuthenticationBackend, BaseUser
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from paperanchor.errors import PaperAnchorError, Unauthorized
from paperanchor.refs import shown
from paperanchor.settings import Settings

_DIGEST = re.compile(r"^[0-9a-f]{64}$")
# A tokens file is a few lines; a larger one is a mistake (the wrong file).
MAX_TOKENS_FILE_BYTES = 1 << 20
# The routes a client needs without a token: liveness, and where to learn how to authenticate.
OPEN_PATHS = ("/healthz", "/.well-known/oauth-protected-resource")
METADATA_PATH = "/.well-known/oauth-protected-resource"


def hash_token(token: str) -> str:
    """The line of the tokens file for `token`: its SHA-256, lowercase hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def read_tokens_file(path: Path) -> frozenset[bytes]:
    """The digests of a tokens file; ValueError naming the line that is not one."""
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_TOKENS_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"PAPERANCHOR_AUTH_TOKENS_FILE {path}: {exc.strerror}") from None
    if len(raw) > MAX_TOKENS_FILE_BYTES:
        raise ValueError(f"PAPERANCHOR_AUTH_TOKENS_FILE {path} is larger than 1 MB")
    digests: set[bytes] = set()
    for number, line in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
        text = line.split("#", 1)[0].strip().lower()
        if not text:
            continue
        if not _DIGEST.match(text):
            raise ValueError(
                f"PAPERANCHOR_AUTH_TOKENS_FILE {path}, line {number}: not a SHA-256 hex digest "
                "(write `paperanchor hash-token` of each token, one a line)"
            )
        digests.add(bytes.fromhex(text))
    if not digests:
        raise ValueError(f"PAPERANCHOR_AUTH_TOKENS_FILE {path} holds no token digest")
    return frozenset(digests)


class HashedTokens:
    """The MCP SDK's `TokenVerifier` over the digests of a tokens file."""

    def __init__(self, digests: frozenset[bytes]) -> None:
        self._digests = tuple(sorted(digests))

    def matches(self, token: str) -> bool:
        """Whether `token`'s digest is one of the file's, compared in constant time."""
        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        found = False
        for known in self._digests:  # every one, so the time is the same whichever matched
            found |= hmac.compare_digest(digest, known)
        return found

    async def verify_token(self, token: str) -> AccessToken | None:
        """An access token for a token of the file; None for any other."""
        if not self.matches(token):
            return None
        # the client is named by a prefix of its digest: logs never hold the token
        return AccessToken(token="", client_id=hash_token(token)[:12], scopes=[])


def auth_settings(settings: Settings) -> AuthSettings:
    """The SDK's auth settings of this server: a resource server at `{PUBLIC_URL}/mcp` whose
    tokens its operator hands out (the authorization server named is this server: there is no
    OAuth flow to follow, a client is configured with its token)."""
    base = settings.public_base
    return AuthSettings(
        issuer_url=AnyHttpUrl(base),
        resource_server_url=AnyHttpUrl(f"{base}/mcp"),
        # a static token is issued for this server only: nothing to compare an audience with
        validate_token_resource=False,
    )


def metadata_url(settings: Settings) -> str:
    """Where the protected resource metadata of `/mcp` is (RFC 9728 §3.1)."""
    return str(build_resource_metadata_url(AnyHttpUrl(f"{settings.public_base}/mcp")))


class _Loopback(BaseUser):
    """A client on this machine of a server that is not public: it needs no token."""

    @property
    def is_authenticated(self) -> bool:
        return True


class TokenOrLoopback(AuthenticationBackend):
    """The SDK's bearer backend, and loopback clients let in when the server is not public (as
    the SDK's user, so its guard on /mcp lets them in too)."""

    def __init__(self, verifier: HashedTokens, *, public: bool) -> None:
        self.bearer = BearerAuthBackend(verifier)
        self.public = public

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        found: tuple[AuthCredentials, BaseUser] | None = await self.bearer.authenticate(conn)
        if found is not None:
            return found
        if not self.public and _is_loopback(conn.client.host if conn.client else None):
            token = AccessToken(token="", client_id="loopback", scopes=[])
            return AuthCredentials([]), AuthenticatedUser(token)
        return None


def _is_loopback(host: str | None) -> bool:
    if host is None:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class RequireToken:
    """401 `unauthorized` with `WWW-Authenticate`, in the route's wire form, for a request
    without a good token on any route but OPEN_PATHS and /mcp (whose guard is the SDK's)."""

    def __init__(
        self,
        app: ASGIApp,
        settings: Settings,
        refuse: Callable[[Scope, PaperAnchorError], Response],
        mcp_path: str = "/mcp",
    ) -> None:
        self.app = app
        self.refuse = refuse
        self.mcp_path = mcp_path
        self.challenge = f'Bearer realm="paperanchor", resource_metadata="{metadata_url(settings)}"'

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        user = scope.get("user")
        if (
            scope["type"] != "http"
            or path == self.mcp_path
            or path.startswith(OPEN_PATHS)
            or (user is not None and user.is_authenticated)
        ):
            await self.app(scope, receive, send)
            return
        given = any(
            name == b"authorization" and value[:7].lower() == b"bearer "
            for name, value in scope["headers"]
        )
        error = Unauthorized(
            f"{scope['method']} {shown(path)}: "
            + ("the bearer token is not one of this server's" if given else "a bearer token is ")
            + ("" if given else "required (Authorization: Bearer <token>)")
        )
        challenge = self.challenge + (', error="invalid_token"' if given else "")
        answer = self.refuse(scope, error)
        answer.headers["WWW-Authenticate"] = challenge
        await answer(scope, receive, send)
