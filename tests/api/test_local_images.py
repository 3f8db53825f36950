"""`/files/{path}` reads only regular files inside the local directory, size-capped (issue 21,
#2), through a real `paperanchor serve`: a FIFO, `/dev/zero`, links out of the folder and an
oversized file are refused at once, and the paper routes keep answering."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import httpx

from paperanchor.api.files import MAX_IMAGE_BYTES
from tests.api.live import ServeProcess
from tests.conftest import FIXTURES, ROOT

ANSWER_S = 3.0  # each refusal; they take milliseconds
GROWTH_MB = 50.0
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64


def test_only_regular_files_inside_the_folder_are_served_and_within_a_cap(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    (papers / "full").mkdir(parents=True)
    shutil.copy(FIXTURES / "html" / "short.html", papers / "short.html")
    (papers / "full" / "fig.png").write_bytes(PNG)
    os.mkfifo(papers / "fifo.png")
    (papers / "zero.png").symlink_to("/dev/zero")
    outside = tmp_path / "secret.png"
    outside.write_bytes(PNG + b"secret")
    (papers / "outside.png").symlink_to(outside)
    (papers / "inside.png").symlink_to(papers / "full" / "fig.png")
    (papers / "loop.png").symlink_to(papers / "loop.png")
    with (papers / "huge.png").open("wb") as sparse:
        sparse.truncate(MAX_IMAGE_BYTES + 1)
    env = {
        **os.environ,
        "PAPERANCHOR_LOCAL_DIR": str(papers),
        "PAPERANCHOR_OFFLINE": "1",
        "PAPERANCHOR_CACHE_DIR": str(tmp_path / "cache"),
        "PAPERANCHOR_RATE_LIMIT": "0",
    }
    server = ServeProcess(env, cwd=ROOT).wait_ready()
    try:
        before = server.memory_mb("VmHWM")
        with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as client:
            # eight FIFO requests at once: more than the worker threads, each answered
            statuses: list[int] = []

            def fifo() -> None:
                with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as own:
                    statuses.append(own.get("/files/fifo.png").status_code)

            started = time.perf_counter()
            threads = [threading.Thread(target=fifo) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
            assert statuses == [404] * 8 and time.perf_counter() - started < ANSWER_S
            for name, status in [
                ("zero.png", 404),
                ("outside.png", 404),
                ("loop.png", 404),
                ("huge.png", 413),
                ("inside.png", 200),
                ("full/fig.png", 200),
            ]:
                started = time.perf_counter()
                answer = client.get(f"/files/{name}")
                assert answer.status_code == status, (name, answer.text)
                assert time.perf_counter() - started < ANSWER_S, name
                assert b"secret" not in answer.content
            assert client.get("/files/full/fig.png").content == PNG
            # the paper routes still answer
            assert client.get("/local/short/outline.json").status_code == 200
        assert server.memory_mb("VmHWM") - before < GROWTH_MB
    finally:
        server.stop()
