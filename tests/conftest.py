"""Shared fixtures: where the corpus lives, and the programs some tests need."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.replay import default_corpus

ROOT = Path(__file__).resolve().parent.parent
CORPUS = default_corpus()
FIXTURES = ROOT / "fixtures"


STARTUP_S = 30.0


def wait_healthy(url: str, process: Any, describe: Any = lambda: "") -> None:
    """Poll `url`/healthz until it answers 200; fail if the process exits or time runs out."""
    import time

    import httpx

    deadline = time.monotonic() + STARTUP_S
    with httpx.Client(timeout=2, trust_env=False) as client:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited: {describe()}")
            try:
                if client.get(f"{url}/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not answer /healthz: {describe()}")
            time.sleep(0.05)


def stop_process(process: Any, seconds: float = 15) -> None:
    """Terminate a child process we started; kill it if it does not stop in time."""
    import subprocess

    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(seconds)


def require_program(available: bool, reason: str) -> None:
    """Skip when a program is missing, except under CI=true where the missing program fails;
    either way the reason ends with the one command that installs what the tests need."""
    if available:
        return
    command = install_command()
    if command:
        reason = f"{reason}; to install what the tests need: {command}"
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"CI must provide it: {reason}")
    pytest.skip(reason)


_INSTALL_COMMAND: list[str] = []


def install_command() -> str:
    """What scripts/ensure-tools.sh says installs the missing programs ('' when none are)."""
    import subprocess

    if not _INSTALL_COMMAND:
        result = subprocess.run(
            ["bash", str(ROOT / "scripts" / "ensure-tools.sh"), "--command"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        _INSTALL_COMMAND.append(result.stdout.strip())
    return _INSTALL_COMMAND[0]


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


# -- a real redis-server on a loopback port of its own (tests/test_redis*.py) -----------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One `redis-server` on 127.0.0.1, in memory only (no RDB, no AOF): start, stop, restart.

    A restart keeps the port and loses every key, as a Redis without persistence does.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self._process: object = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import shutil
        import subprocess

        program = shutil.which("redis-server")
        assert program is not None
        self._process = process = subprocess.Popen(
            [program, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.directory),
             "--logfile", str(self.directory / "redis.log")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        import time

        deadline = time.monotonic() + 10
        while self.command("PING") != "+PONG":
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)

    def stop(self) -> None:
        import subprocess

        process = self._process
        if isinstance(process, subprocess.Popen):
            stop_process(process, 10)
        self._process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def command(self, *words: str) -> str | None:
        """One inline command's first reply line (`+PONG`, `:3`), or None when nothing answers."""
        import socket

        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as connection:
                connection.sendall((" ".join(words) + "\r\n").encode())
                return connection.makefile("rb").readline().decode().strip()
        except OSError:
            return None

    def all_keys(self) -> list[str]:
        """Every key, read with the RESP protocol (keys may hold spaces)."""
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.port)
        try:
            return sorted(key.decode() for key in client.keys("*"))
        finally:
            client.close()


def _redis(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    import shutil

    require_program(
        shutil.which("redis-server") is not None,
        "redis-server is not installed (apt-get install redis-server)",
    )
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A redis-server shared by the session's tests; use `shared_redis` for an empty one."""
    yield from _redis(tmp_path_factory)


@pytest.fixture
def shared_redis(redis_server: RedisServer) -> RedisServer:
    """The session's redis-server, emptied."""
    if redis_server.command("FLUSHALL") != "+OK":
        redis_server.restart()
    return redis_server


@pytest.fixture
def own_redis(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A redis-server of this test's own, to stop and restart at will."""
    yield from _redis(tmp_path_factory)
