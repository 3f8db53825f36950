"""Shared fixtures: where the corpus lives, and the programs some tests need."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("PAPERANCHOR_CORPUS", ROOT.parent / "shared" / "corpus")).resolve()
FIXTURES = ROOT / "fixtures"


def require_program(available: bool, reason: str) -> None:
    """Skip when a program is missing, except under CI=true where the missing program fails."""
    if available:
        return
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"CI must provide it: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not (CORPUS / "html").is_dir():
        require_program(False, f"the shared corpus is not at {CORPUS} (set PAPERANCHOR_CORPUS)")
    return CORPUS


# -- the replay upstream (tests/replay.py) and the loopback guard -----------------------------

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
_PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


def _is_loopback(host: object) -> bool:
    import ipaddress

    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse, and record, every name lookup or connection that would leave loopback."""
    import socket

    attempts: list[str] = []
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if host is not None and not _is_loopback(host):
            attempts.append(f"lookup {host!r}")
            raise socket.gaierror(socket.EAI_NONAME, f"tests may not resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    def allowed(address: object) -> bool:
        return not isinstance(address, tuple) or _is_loopback(address[0])

    def connect(self: socket.socket, address: object) -> None:
        if not allowed(address):
            attempts.append(f"connect {address!r}")
            raise ConnectionRefusedError(f"tests may not connect to {address!r}")
        real_connect(self, address)  # type: ignore[arg-type]

    def connect_ex(self: socket.socket, address: object) -> int:
        if not allowed(address):
            attempts.append(f"connect {address!r}")
            raise ConnectionRefusedError(f"tests may not connect to {address!r}")
        return real_connect_ex(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    return attempts


@pytest.fixture(scope="session")
def replay_server(corpus: Path):  # type: ignore[no-untyped-def]
    from tests.replay import Replay

    server = Replay(corpus / "html")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def replay(replay_server, loopback_only, monkeypatch):  # type: ignore[no-untyped-def]
    """The replay upstream, its script and log emptied; nothing may leave loopback meanwhile.

    `.base_url`, `.arxiv_url`, `.ar5iv_url`, `.script(path, *replies)`, `.requests`, `.reset()`,
    `.settings(cache_dir, **overrides)` and `.environ(**overrides)`; replies are built by the
    functions of tests/replay.py. PAPERANCHOR_* and proxy variables are cleared for the test.
    """
    for name in list(os.environ):
        if name.startswith("PAPERANCHOR_") and name != "PAPERANCHOR_CORPUS":
            monkeypatch.delenv(name)
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    replay_server.reset()
    yield replay_server
    replay_server.reset()
