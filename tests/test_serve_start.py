"""What `paperanchor serve` (and so `make run`) says when it starts, or cannot."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from tests.api.live import ServeProcess
from tests.conftest import free_port
from tests.corpus_pages import fixture_path

FIXTURES_HTML = fixture_path("short").parent


def test_serve_says_where_to_go_once_it_listens_and_each_address_answers() -> None:
    server = ServeProcess(
        {**os.environ, "PAPERANCHOR_LOCAL_DIR": str(FIXTURES_HTML), "PAPERANCHOR_OFFLINE": "1"}
    ).wait_ready()
    try:
        deadline = time.monotonic() + 10
        while "paperanchor is serving on" not in server.log() and time.monotonic() < deadline:
            time.sleep(0.05)
        log = server.log()
        guide = log[log.index("paperanchor is serving on") :]
        # uvicorn's own line comes first: the guide is printed once the port is bound
        assert log.index("Uvicorn running on") < log.index("paperanchor is serving on")
        addresses = [line.split()[0] for line in guide.splitlines()[1:] if line.startswith("  ")]
        assert [a.removeprefix(server.url) for a in addresses[:3]] == ["/", "/docs", "/mcp"]
        assert addresses[3].startswith(f"{server.url}/local/")
        assert f"claude mcp add --transport http paperanchor {server.url}/mcp" in guide
        with httpx.Client(timeout=30, trust_env=False) as client:
            for address in (addresses[0], addresses[1], addresses[3]):
                assert client.get(address).status_code == 200, address
    finally:
        server.stop()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_busy_port_is_said_with_the_flag_and_the_setting_that_move_it(workers: str) -> None:
    port = free_port()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "paperanchor.cli",
                "serve",
                "--port",
                str(port),
                "--workers",
                workers,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PAPERANCHOR_OFFLINE": "1"},
        )
    assert result.returncode == 1
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr
    assert f"--port {port + 1}" in result.stderr
    assert f"PAPERANCHOR_PORT={port + 1}" in result.stderr
    assert f"make run PORT={port + 1}" in result.stderr
    assert "Errno" not in result.stderr and "Traceback" not in result.stderr


def test_mcp_help_names_the_settings_an_mcp_client_sets() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "paperanchor.cli", "mcp", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    for setting in (
        "PAPERANCHOR_TOOLS",
        "PAPERANCHOR_LOCAL_DIR",
        "PAPERANCHOR_OFFLINE",
        "PAPERANCHOR_CACHE_DIR",
    ):
        assert setting in result.stdout
    assert "claude mcp add paperanchor -- paperanchor mcp" in result.stdout
