"""A real paperanchor server on a loopback port: uvicorn in a thread, or `paperanchor serve`.

The port is bound before the app is built, so the app's public URL (and every `cite` URL it hands
out) is the address the tests talk to.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from paperanchor.api.transport import server_options
from paperanchor.app import create_app
from paperanchor.settings import Settings
from tests.conftest import STARTUP_S, free_port, stop_process, wait_healthy


class LiveServer:
    """uvicorn serving `create_app(settings)` in a daemon thread."""

    def __init__(self, settings: Callable[[str], Settings], **parts: Any) -> None:
        """`parts` replace some of the runtime's (`Runtime.build`'s keywords)."""
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.settings = settings(self.url)
        self.app = create_app(self.settings, **parts)
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            log_config=None,  # pytest's capture keeps the records
            **server_options(self.settings),
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def start(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + STARTUP_S
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self._socket.close()
                raise RuntimeError("the paperanchor server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(STARTUP_S)
        self._socket.close()

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, trust_env=False)

    def stored(self) -> None:
        """Wait until the papers the server answered before their store write are stored (a cold
        paper's write follows its answer), so that a test may read the cache."""
        loop = self.server.servers[0].get_loop()
        papers = self.app.state.papers
        asyncio.run_coroutine_threadsafe(papers.stored(), loop).result(STARTUP_S)


@contextlib.contextmanager
def live_server(settings: Callable[[str], Settings], **parts: Any) -> Iterator[LiveServer]:
    """A started `LiveServer`, stopped on exit; `parts` replace some of its runtime's (a
    broken parser, a discovery client of the test's)."""
    server = LiveServer(settings, **parts).start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def serve_command(env: dict[str, str], cwd: Path) -> Iterator[str]:
    """`paperanchor serve` in a subprocess on a free port; yields its base URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    full_env = {**os.environ, **env, "PAPERANCHOR_PUBLIC_URL": url}
    # a file, not a pipe: a pipe nobody reads could fill up and block the server
    log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed in the finally below
    process = subprocess.Popen(
        [sys.executable, "-m", "paperanchor.cli", "serve", "--port", str(port)],
        cwd=cwd,
        env=full_env,
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
    )

    def logged() -> str:
        log.seek(0)
        return log.read()

    try:
        wait_healthy(url, process, logged)
        yield url
    finally:
        stop_process(process)
        log.close()


class ServeProcess:
    """`paperanchor serve` in a subprocess on a free loopback port, its log in a temporary file.

    `env` is the whole environment; `open_files` sets the process's limit of open files (soft and
    hard), as a machine with `ulimit -n` at that value would.
    """

    def __init__(
        self,
        env: dict[str, str],
        *args: str,
        open_files: int | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed in stop()

        def limit() -> None:
            if open_files is not None:
                import resource

                resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

        self.process = subprocess.Popen(
            [sys.executable, "-m", "paperanchor.cli", "serve", "--port", str(self.port), *args],
            cwd=cwd,
            env={"PAPERANCHOR_PUBLIC_URL": self.url, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
            preexec_fn=limit,  # only setrlimit, before exec
        )

    def wait_ready(self) -> ServeProcess:
        wait_healthy(self.url, self.process, self.log)
        return self

    def stop(self) -> None:
        stop_process(self.process)
        self._log.close()

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read()

    def open_files(self) -> int:
        """How many file descriptors the server holds now."""
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def memory_mb(self, field: str = "VmRSS") -> float:
        """Resident memory now (VmRSS) or at its peak (VmHWM), in MB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kilobytes = int(status.split(f"{field}:", 1)[1].split()[0])
        return kilobytes / 1024
