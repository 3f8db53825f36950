"""The wheel as a user installs it: built from the checkout, installed into a fresh venv that
does not see the checkout, then served (REST, pages, /docs, MCP over HTTP and stdio) and run
on the command line. `uvx --from` and `pipx install`, the two one-line installs, are run too."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from paperanchor import __version__, operations
from tests.conftest import ROOT, STARTUP_S, free_port, stop_process, wait_healthy
from tests.packaging.conftest import UV, command, tools_and_a_read, uv

READER_TOOLS = [operation.name for operation in operations.listed("reader")]

# Run inside the installed venv: every file opened or listed under the checkout is written to
# the log named by argv[1] (with the checkout's path in argv[2]), then the command line runs.
AUDITED = """\
import os, sys
log = open(sys.argv.pop(1), "w")
checkout = sys.argv.pop(1)
def audit(event, args):
    if event in ("open", "os.listdir", "os.scandir") and args and args[0] is not None:
        if isinstance(args[0], int):
            return
        path = os.path.abspath(os.fsdecode(args[0]))
        if path == checkout or path.startswith(checkout + os.sep):
            log.write(event + " " + path + "\\n")
            log.flush()
sys.addaudithook(audit)
log.write("sys.path " + repr([p for p in sys.path if p.startswith(checkout)]) + "\\n")
log.flush()
from paperanchor.cli import main
sys.exit(main(sys.argv[1:]))
"""


@dataclass(frozen=True, slots=True)
class Installed:
    """A venv holding only the wheel and its dependencies, and a place that is not the checkout."""

    wheel: Path
    venv: Path
    home: Path
    papers: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def paperanchor(self) -> Path:
        return self.venv / "bin" / "paperanchor"

    def env(self, **settings: str) -> dict[str, str]:
        """An environment naming nothing of the checkout (no PYTHONPATH, a home of its own)."""
        keep = {"PATH", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE"}
        env = {name: value for name, value in os.environ.items() if name in keep}
        env.update(HOME=str(self.home), XDG_CACHE_HOME=str(self.home / "cache"))
        env.update({f"PAPERANCHOR_{name.upper()}": value for name, value in settings.items()})
        return env

    def run(self, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
        """The installed console script, from the home directory."""
        return subprocess.run(
            [str(self.paperanchor), *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.home,
            env=self.env(offline="1", **settings),
        )


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel, installed with its dependencies into a fresh venv."""
    base = tmp_path_factory.mktemp("installed")
    venv = base / "venv"
    uv("venv", "--quiet", "--python", sys._base_executable, str(venv), cwd=base)
    uv("pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheel), cwd=base)
    home = base / "home"
    papers = home / "papers"  # the user's own papers: copies, so no read is of the checkout
    shutil.copytree(ROOT / "fixtures" / "html", papers)
    shutil.copy(ROOT / "fixtures" / "pdf" / "short.pdf", home / "draft.pdf")
    return Installed(wheel, venv, home, papers)


def test_the_wheel_holds_every_file_of_the_package_the_repository_tracks(
    installed: Installed,
) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "src/paperanchor"], capture_output=True, text=True, cwd=ROOT
    ).stdout.split()
    assert tracked
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
    # samples/ is a link to fixtures/html: the files under it, but the XSS test page and the
    # landing page's list of fixtures it leaves out (.unlisted), which only a checkout needs
    files = [path for path in tracked if not (ROOT / path).is_dir()]
    samples = ROOT / "src" / "paperanchor" / "samples"
    files += [
        str(path.relative_to(samples.resolve()).as_posix())
        for path in samples.resolve().rglob("*")
        if path.is_file() and not path.name.startswith(("xss", "."))
        and not path.parent.name.startswith("xss")
    ]  # fmt: skip
    files = [f if f.startswith("src/") else f"src/paperanchor/samples/{f}" for f in files]
    missing = [path for path in files if path.removeprefix("src/") not in names]
    assert missing == []
    assert not [name for name in names if "xss" in name]
    # what the server reads at run time besides modules, named so a lost glob is seen
    for data in (
        "paperanchor/data/arxiv_taxonomy.json",
        "paperanchor/data/warmup.html",
        "paperanchor/templates/section.html",
        "paperanchor/parse/pdf/pdfium_worker.py",
        "paperanchor/py.typed",
        "paperanchor/samples/short.html",
        "paperanchor/samples/full/fig-loss-a.png",
    ):
        assert data in names


def test_the_installed_package_is_imported_from_the_venv_not_the_checkout(
    installed: Installed,
) -> None:
    result = subprocess.run(
        [str(installed.python), "-c", "import paperanchor, sys; print(paperanchor.__file__)"],
        capture_output=True,
        text=True,
        cwd=installed.home,
        env=installed.env(),
    )
    assert result.returncode == 0, result.stderr
    where = Path(result.stdout.strip())
    assert where.is_relative_to(installed.venv) and not where.is_relative_to(ROOT)


@pytest.fixture(scope="module")
def served(installed: Installed) -> Iterator[tuple[str, Path]]:
    """`paperanchor serve` from the venv, every read of a checkout file logged; its URL, log."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    audit = installed.home / "audit.log"
    server_log = installed.home / "serve.log"
    with server_log.open("w") as log:
        process = subprocess.Popen(
            [str(installed.python), "-c", AUDITED, str(audit), str(ROOT), "serve", "--port",
             str(port)],
            cwd=installed.home,
            env=installed.env(local_dir=str(installed.papers), offline="1"),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )  # fmt: skip
        try:
            wait_healthy(url, process, server_log.read_text)
            yield url, audit
        finally:
            stop_process(process, STARTUP_S)


def test_serve_from_the_wheel_answers_rest_pages_docs_and_the_taxonomy(
    served: tuple[str, Path],
) -> None:
    url, _ = served
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as http:
        outline = http.get("/local/short/outline.json")
        assert outline.status_code == 200
        assert outline.json()["title"] == "Sparse Anchoring for Incremental Document Alignment"
        section = http.get("/local/short/sections/S2.md")
        assert section.status_code == 200 and section.text.startswith("# 2 Method")
        assert "local/short" in http.get("/").text
        page = http.get("/local/short/sections/S2")
        assert page.status_code == 200 and "<math" in page.text
        docs = http.get("/docs")
        assert docs.status_code == 200
        # Swagger UI's script and style come from the installed fastapi-offline, not a CDN
        assets = re.findall(r'(?:src|href)="(/docs-assets/[^"]+)"', docs.text)
        assert len(assets) >= 2
        for asset in assets:
            assert http.get(asset).status_code == 200, asset
        assert "paths" in http.get("/openapi.json").json()
        categories = http.get("/categories.json")
        assert categories.status_code == 200 and "cs.LG" in categories.text


def test_mcp_over_http_from_the_wheel_lists_and_calls_the_reading_tools(
    served: tuple[str, Path],
) -> None:
    url, _ = served
    names, text = tools_and_a_read(f"{url}/mcp")
    assert names == READER_TOOLS
    assert text.startswith("# 3 Conclusion")


def test_the_served_wheel_reads_no_file_of_the_checkout(served: tuple[str, Path]) -> None:
    url, audit = served
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as http:
        assert http.get("/local/full/figures/T2.json").status_code == 200
    lines = audit.read_text().splitlines()
    assert lines[0] == "sys.path []"
    assert lines[1:] == []


def test_mcp_over_stdio_from_the_wheel_answers_through_the_official_client(
    installed: Installed,
) -> None:
    stdio = StdioServerParameters(
        command=str(installed.paperanchor),
        args=["mcp"],
        env=installed.env(local_dir=str(installed.papers), offline="1", tools="all"),
        cwd=str(installed.home),
    )

    async def job() -> tuple[list[str], Any]:
        async with Client(stdio) as client:
            listed = await client.list_tools()
            answer = await client.call_tool("cite", {"paper": "local/short", "anchor": "S2.p2"})
            return [tool.name for tool in listed.tools], answer.structured_content

    names, cite = asyncio.run(job())
    assert names == [operation.name for operation in operations.listed("all")]
    assert cite["anchor"] == "S2.p2" and cite["hash"] == "3730139d88724b6d"


def test_the_command_line_from_the_wheel_reads_html_pdf_and_local_references(
    installed: Installed,
) -> None:
    assert installed.run("--version").stdout == f"paperanchor {__version__}\n"
    outline = installed.run("outline", "local/short", local_dir=str(installed.papers))
    assert outline.returncode == 0, outline.stderr
    assert outline.stdout.startswith("Sparse Anchoring for Incremental Document Alignment\n")
    cited = installed.run("cite", str(installed.papers / "short.html"), "S2.p2", "--json")
    assert json.loads(cited.stdout)["hash"] == "3730139d88724b6d"
    # a PDF is read by a worker process started from the package's own file
    draft = installed.run("outline", str(installed.home / "draft.pdf"), "--json")
    assert draft.returncode == 0, draft.stderr
    assert json.loads(draft.stdout)["quality"] == "degraded"


def test_uvx_runs_the_wheel_as_the_readme_types_it(installed: Installed, tmp_path: Path) -> None:
    env = installed.env()
    env["PATH"] = f"{UV.parent}{os.pathsep}{env.get('PATH', '')}"
    env["UV_TOOL_DIR"] = str(tmp_path / "tools")
    result = command(
        ["uvx", "--from", str(installed.wheel), "paperanchor", "--version"], env, tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"paperanchor {__version__}\n"


def test_pipx_installs_the_wheel_as_the_readme_types_it(
    installed: Installed, tmp_path: Path
) -> None:
    env = installed.env()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "bin"),
        PIPX_MAN_DIR=str(tmp_path / "man"),
    )
    result = command(["pipx", "install", str(installed.wheel)], env, tmp_path)
    assert result.returncode == 0, result.stderr
    version = command([str(tmp_path / "bin" / "paperanchor"), "--version"], env, tmp_path)
    assert version.stdout == f"paperanchor {__version__}\n"


def test_serve_samples_from_the_wheel_serves_the_sample_papers_and_not_the_test_page(
    installed: Installed,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = installed.home / "samples.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(installed.paperanchor), "serve", "--samples", "--port", str(port)],
            cwd=installed.home,
            env=installed.env(),  # no local directory, not offline: --samples sets both
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )
        try:
            wait_healthy(url, process, log.read_text)
            with httpx.Client(base_url=url, timeout=60, trust_env=False) as http:
                landing = http.get("/").text
                assert "/local/short" in landing and "/local/full" in landing
                assert "local/xss" not in landing
                assert http.get("/local/full/figures/F1.json").status_code == 200
                assert http.get("/files/full/fig-loss-a.png").status_code == 200
                missing = http.get("/2501.11120/outline.json")  # offline: nothing is fetched
                assert missing.status_code == 404 and "offline" in missing.text
        finally:
            stop_process(process, STARTUP_S)


def test_mcp_samples_from_the_wheel_reads_a_sample_paper(installed: Installed) -> None:
    stdio = StdioServerParameters(
        command=str(installed.paperanchor),
        args=["mcp", "--samples"],
        env=installed.env(),
        cwd=str(installed.home),
    )
    names, text = tools_and_a_read(stdio)
    assert names == READER_TOOLS and text.startswith("# 3 Conclusion")
