"""With an OpenTelemetry SDK set up, every MCP tool call has the SDK's span, the plain calls that
api/single_exchange.py answers in the request's own task too, and answers what it answers
without one. Each run is a process of its own: an SDK's tracer provider is set once a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.api.conftest import FIXTURE_HTML
from tests.conftest import ROOT

# One process: a tracer provider recording in memory (or none), the whole app, two plain
# tools/call POSTs to /mcp (a read, and a read of a paper that is not there) straight to it.
SCRIPT = r"""
import asyncio, json, sys
from paperanchor.app import create_app
from paperanchor.settings import Settings
from tests.asgi import asgi_request

exporter = None
if sys.argv[1] == "sdk":
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)


def post(paper, ident):
    params = {"name": "read", "arguments": {"paper": paper, "anchor": "S1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params})
    headers = [
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2025-06-18"),
        (b"content-length", str(len(body)).encode()),
    ]
    return headers, body.encode()


async def main():
    app = create_app(Settings(_env_file=None))
    answers = []
    async with app.router.lifespan_context(app):
        for ident, paper in ((1, "local/short"), (2, "local/absent")):
            headers, body = post(paper, ident)
            sent = await asgi_request(app, "POST", "/mcp", headers, body)
            answers.append(b"".join(m.get("body", b"") for m in sent[1:]).decode())
    spans = [
        {"name": s.name, "kind": s.kind.name, "attributes": dict(s.attributes),
         "status": s.status.status_code.name}
        for s in (exporter.get_finished_spans() if exporter else ())
    ]
    print(json.dumps({"answers": answers, "spans": spans}))


asyncio.run(main())
"""


def _run(replay: Any, tmp_path: Path, mode: str) -> dict[str, Any]:
    cache = tmp_path / mode
    env = {**os.environ, **replay.environ(local_dir=FIXTURE_HTML, cache_dir=cache)}
    env["PAPERANCHOR_RATE_LIMIT"] = "0"
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_plain_tool_call_has_the_sdks_span_when_an_opentelemetry_sdk_is_set_up(replay, tmp_path):
    traced = _run(replay, tmp_path, "sdk")
    plain = _run(replay, tmp_path, "none")

    # the same answers either way: the read's Markdown, and the missing paper's error
    assert traced["answers"] == plain["answers"]
    read, absent = (json.loads(answer) for answer in traced["answers"])
    assert "Introduction" in read["result"]["content"][0]["text"]
    assert absent["result"]["isError"] is True

    calls = [span for span in traced["spans"] if span["name"] == "tools/call read"]
    assert len(calls) == 2, traced["spans"]
    for span, ident in zip(calls, ("1", "2"), strict=True):
        assert span["kind"] == "SERVER"
        assert span["attributes"]["gen_ai.tool.name"] == "read"
        assert span["attributes"]["gen_ai.operation.name"] == "execute_tool"
        assert span["attributes"]["jsonrpc.request.id"] == ident
    # the missing paper's call is marked as the tool error it answers
    assert calls[0]["status"] == "UNSET" and calls[1]["status"] == "ERROR"
    assert calls[1]["attributes"]["error.type"] == "tool_error"
    assert plain["spans"] == []
