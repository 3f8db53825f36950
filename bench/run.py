"""`make bench`: run every benchmark and rewrite BENCHMARKS.md.

Every figure is a ratio against a baseline measured in the same run (this machine is shared
and noisy), as the median of several runs with min and max. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime

import httpx

from bench import (
    agent_bench,
    cache_bench,
    mcp_cost,
    memory,
    parse_bench,
    pdf_bench,
    peers,
    requests_bench,
    tokens,
    workers,
)
from bench.common import ROOT, machine, serve
from paperanchor.tokens import count as count_tokens

OUT = ROOT / "BENCHMARKS.md"
TARGETS = {
    "parse": 3.0,
    "parse_goal": 2.0,
    "warm": 0.75,  # issue 15 (0.5 before it)
    "mcp": 0.9,  # issue 15: MCP read >= 0.9x the REST route
    "outline": 0.08,
    "flow": 0.15,
    "cache_load": 0.3,
    "cold": 4.0,  # issue 15: cold outline <= 4x lxml, median over the pages
    "cold_max": 8.0,  # and no page over 8x
    "memory_mb": 1.0,  # issue 15: <= 1 MB of process memory per cached paper
    "pdf": 3.0,  # issue 15: PDF parse <= 3x pypdf's extract_text of the same file
}


def _kept_sections() -> str:
    """The sections of BENCHMARKS.md that have their own targets (`make bench-anchors`,
    `make bench-changes`), kept as they are."""
    from bench import anchors, changes

    text = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
    kept = ""
    for begin, end in ((anchors.BEGIN, anchors.END), (changes.BEGIN, changes.END)):
        if begin in text and end in text:
            kept += "\n" + begin + text.split(begin, 1)[1].split(end, 1)[0] + end + "\n"
    return kept


def _tools_list_tokens() -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as cache:
        env = {"PAPERANCHOR_OFFLINE": "1", "PAPERANCHOR_CACHE_DIR": cache}
        with serve(env) as (base, _process):
            response = httpx.post(
                f"{base}/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Accept": "application/json, text/event-stream"},
                trust_env=False,
            )
            response.raise_for_status()
            text = json.dumps(response.json()["result"], separators=(",", ":"))
    return len(text), count_tokens(text)


def _profile_top() -> str:
    """pyinstrument's flat view (self time per function) of parsing a slow page."""
    from pyinstrument import Profiler
    from pyinstrument.renderers import ConsoleRenderer

    from paperanchor.parse import parse_document

    data = (ROOT.parent / "shared" / "corpus" / "html" / "2501.11120v1.arxiv.html").read_bytes()
    profiler = Profiler(interval=0.0005)
    with profiler:
        for _ in range(20):
            parse_document(data)
    text = profiler.output(ConsoleRenderer(flat=True, time="percent_of_total"))
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[:25])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke run")
    args = parser.parse_args()
    rounds = 2 if args.quick else 5
    started = time.monotonic()
    parse_rows = parse_bench.run(runs=3 if args.quick else 9)
    peak = memory.parse_peak()
    server = memory.server_rss_runs(1 if args.quick else 3)
    large = memory.large_pages_rss()
    cache_rows = cache_bench.run(runs=3 if args.quick else 9)
    req = requests_bench.run(
        rounds=rounds,
        seconds=2 if args.quick else 5,
        cold_rounds=1 if args.quick else requests_bench.COLD_ROUNDS,
    )
    req["mcp_cost"] = mcp_cost.run(rounds=5 if args.quick else 15)
    token_rows = tokens.run()
    worker_rows = (
        {
            layout: workers.run(
                rounds=rounds, seconds=2 if args.quick else 4, server_cpus=cpus, load_cpus=load
            )
            for layout, (cpus, load) in workers.LAYOUTS.items()
        }
        if shutil.which("redis-server")
        else None
    )
    tools_chars, tools_tokens = _tools_list_tokens()
    pdf_rows = pdf_bench.run(runs=1 if args.quick else pdf_bench.RUNS)
    pdf_peaks = pdf_bench.peaks()
    peer_rows = peers.run(runs=1 if args.quick else peers.RUNS)
    profile = _profile_top()
    elapsed = time.monotonic() - started
    report = _report(parse_rows=parse_rows, peak=peak, server=server, req=req,
                     token_rows=token_rows, tools_chars=tools_chars, tools_tokens=tools_tokens,
                     profile=profile, elapsed=elapsed, worker_rows=worker_rows,
                     large=large, cache_rows=cache_rows, pdf_rows=pdf_rows,
                     pdf_peaks=pdf_peaks, peer_rows=peer_rows)  # fmt: skip
    OUT.write_text(report + _kept_sections(), encoding="utf-8")
    agent_bench.update(OUT)  # its own section, which `python -m bench.agent_bench` rewrites alone
    print(f"wrote {OUT.relative_to(ROOT)} in {elapsed:.0f} s")
    return 0


def _ok(value: float, target: float, *, below: bool = True) -> str:
    return "meets" if (value <= target if below else value >= target) else "**misses**"


def _report(  # type: ignore[no-untyped-def]
    *,
    parse_rows,
    peak,
    server,
    req,
    token_rows,
    tools_chars,
    tools_tokens,
    profile,
    elapsed,
    worker_rows,
    large,
    cache_rows,
    pdf_rows,
    pdf_peaks,
    peer_rows=None,
) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmarks",
        "",
        f"Made by `make bench` (`.venv/bin/python -m bench.run`) on {now}, in {elapsed:.0f} s.",
        f"Machine: {machine()}. Every figure is a ratio to a baseline measured in the same run, "
        "as the median with (min–max) of repeated runs; the machine is shared, so absolute "
        "times move from run to run and only the ratios are compared with targets.",
        "",
        "## 1. Parse: tree build ÷ a bare `lxml.html.fromstring` of the same bytes",
        "",
        "Target ≤ 3, goal ≤ 2. Runs are interleaved (lxml, tree, lxml, tree …) so noise hits "
        "both alike.",
        "",
        "| page | KB | ratio | target | MB/s |",
        "|---|---|---|---|---|",
    ]
    for row in parse_rows:
        ratio = row["ratio"]
        lines.append(
            f"| {row['page']} | {row['bytes'] // 1024} | {ratio.show()} | "
            f"{_ok(ratio.median, TARGETS['parse'])} | {row['mb_s']:.1f} |"
        )
    all_tree = sum(r["tree"].median for r in parse_rows)
    all_lxml = sum(r["lxml"].median for r in parse_rows)
    lines += [
        "",
        f"All pages together: {all_tree / all_lxml:.2f}. Peak memory of parsing the largest "
        f"page ({peak['page']}, {peak['bytes'] // 1024} KB) in a fresh process: "
        f"{peak['peak_kb'] / 1024:.0f} MB, {peak['ratio']:.1f}× its size (lxml's tree of a "
        "MathML-heavy page is most of it).",
        "",
        "## 2. Cold request: the first `outline` of an uncached paper ÷ a bare lxml parse",
        "",
        "Every corpus page and fixture served by the replay upstream on loopback "
        "(`PAPERANCHOR_MIN_GAP_S=0`), its outline asked for once, ÷ `lxml.html.fromstring` of "
        "the same bytes timed right after it in the bench's process (median of "
        f"{requests_bench.LXML_RUNS}). Each of {req['cold_rounds']} rounds starts a fresh "
        "server over an empty cache and asks for the pages in another order, so the first "
        "request of a fresh server is counted (bench/requests_bench.py). Target (issue 15): "
        f"median ≤ {TARGETS['cold']:g}, no page over {TARGETS['cold_max']:g}.",
        "",
        "| page | KB | outline ms | ratio | target |",
        "|---|---|---|---|---|",
    ]
    cold = req["cold"]
    for row in cold["rows"]:
        ratio = row["ratio"]
        lines.append(
            f"| {row['page']} | {row['bytes'] // 1024} | {row['seconds'].median * 1e3:.0f} | "
            f"{ratio.show()} | {_ok(ratio.median, TARGETS['cold_max'])} |"
        )
    over = [r["page"] for r in cold["rows"] if r["ratio"].median > TARGETS["cold_max"]]
    firsts = ", ".join(f"{page} {ratio:.1f}" for page, ratio in cold["firsts"])
    lines += [
        "",
        f"Median over the pages: **{cold['median'].median:.2f}** "
        f"({_ok(cold['median'].median, TARGETS['cold'])} the target); "
        f"{len(over)} of {len(cold['rows'])} pages over {TARGETS['cold_max']:g}. "
        f"A fresh server's first request, per round: {firsts}. "
        "The floor of a cold request is two loopback HTTP exchanges (the client's and the "
        "upstream GET, about 1.5 ms each here) and a store write: a page whose bare lxml parse "
        "takes under a millisecond cannot be within 8× of it.",
    ]
    warm, mcp, cost = req["warm"], req["mcp"], req["mcp_cost"]
    lines += [
        "",
        "## 3. Warm requests: a cached section's Markdown ÷ `/healthz`, same server, same load",
        "",
        f"`GET /{requests_bench.WARM_IDV}/sections/{requests_bench.WARM_ANCHOR}.md` (the corpus "
        "page 2501.11120v1) and `GET /healthz`, 16 connections from a separate process "
        "(wrk when installed, else bench/load.py), interleaved rounds. Target (issue 15) "
        f"≥ {TARGETS['warm']:g}.",
        "",
        "| route | requests/s | p50 ms | p99 ms | errors |",
        "|---|---|---|---|---|",
        f"| section .md | {warm['section']['rps'].show(0)} | {warm['section']['p50_ms'].show()} | "
        f"{warm['section']['p99_ms'].show()} | {warm['section_errors']:.0f} |",
        f"| /healthz | {warm['healthz']['rps'].show(0)} | {warm['healthz']['p50_ms'].show()} | "
        f"{warm['healthz']['p99_ms'].show()} | {warm['healthz_errors']:.0f} |",
        "",
        f"Ratio: **{warm['ratio'].show()}** — "
        f"{_ok(warm['ratio'].median, TARGETS['warm'], below=False)} the target.",
        "",
        "## 4. MCP: warm `read` calls over Streamable HTTP ÷ the REST route for the same read",
        "",
        "Both from bench/load.py (the same client cost): JSON-RPC `tools/call read` POSTed to "
        "`/mcp` (stateless) against `GET …/sections/S2.md`.",
        "",
        "| front door | calls/s | p50 ms | p99 ms | errors |",
        "|---|---|---|---|---|",
        f"| MCP read | {mcp['mcp']['rps'].show(0)} | {mcp['mcp']['p50_ms'].show()} | "
        f"{mcp['mcp']['p99_ms'].show()} | {mcp['mcp_errors']:.0f} |",
        f"| REST .md | {mcp['rest']['rps'].show(0)} | {mcp['rest']['p50_ms'].show()} | "
        f"{mcp['rest']['p99_ms'].show()} | {mcp['rest_errors']:.0f} |",
        "",
        f"Ratio: **{mcp['ratio'].show()}** — "
        f"{_ok(mcp['ratio'].median, TARGETS['mcp'], below=False)} the target (issue 15: "
        f"≥ {TARGETS['mcp']:g}). Both are bound by the Python load generator here (2.6–3.1 ms "
        "of its CPU per call, more on a POST than a GET, against about 1 ms of the server's). "
        "In process (`python -m bench.mcp_cost`, CPU time of direct ASGI calls, interleaved "
        f"rounds) the MCP read costs the server {cost['ratio']:.2f}× "
        f"({cost['ratio_range'][0]:.2f}–{cost['ratio_range'][1]:.2f}) the REST read "
        f"({cost['mcp_ms']:.2f} against {cost['rest_ms']:.2f} ms; issue 20: ≤ 1.2): "
        "1.9× before MCP calls were answered in the request's own task "
        "(api/single_exchange.py), 1.6–1.8× before a plain tools/call skipped the SDK's "
        "runner and a marked read's token count was kept.",
        "",
        "## 5. Tokens: what an agent spends ÷ the whole paper's Markdown",
        "",
        "Outline = the `Outline` JSON (compact, as a tool result carries it). Flow = outline, "
        "read the first section, search two words of its title, cite its first two paragraphs "
        "(bench/tokens.py). Targets: outline ≤ 0.08, flow ≤ 0.15.",
        "",
        "| paper | whole | outline | ratio | flow | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for row in token_rows:
        o = row["outline"] / row["whole"]
        f = row["flow"] / row["whole"]
        lines.append(
            f"| {row['page']} | {row['whole']} | {row['outline']} | {o:.3f} "
            f"({_ok(o, TARGETS['outline'])}) | {row['flow']} | {f:.3f} "
            f"({_ok(f, TARGETS['flow'])}) |"
        )
    above_idle = ", ".join(f"{(a - large['idle_kb']) / 1024:.0f}" for a in large["after_kb"])
    met_o = sum(1 for r in token_rows if r["outline"] / r["whole"] <= TARGETS["outline"])
    met_f = sum(1 for r in token_rows if r["flow"] / r["whole"] <= TARGETS["flow"])
    lines += [
        "",
        f"Outline meets its target on {met_o} of {len(token_rows)} papers, the flow on {met_f}. "
        f"`tools/list`: {tools_chars} characters, {tools_tokens} tokens (limit 6,000 / 1,500).",
        "",
        "## 6. Memory: a server holding 50 parsed papers",
        "",
        "`paperanchor serve` over a local directory of 50 names linked to corpus pages, the "
        "outline of each requested once (bench/memory.py). Resident memory from /proc.",
        "",
        f"Each figure is the median (min–max) of {server['runs']} servers. Target (issue 15): "
        f"≤ {TARGETS['memory_mb']:g} MB per paper.",
        "",
        "| state | RSS MB |",
        "|---|---|",
        f"| idle (after /healthz) | {server['idle_mb'].show(0)} |",
        f"| holding 50 papers | {server['held_mb'].show(0)} |",
        f"| per paper | {server['per_paper_mb'].show()} |",
        "",
        f"**{server['per_paper_mb'].median:.2f} MB per paper** "
        f"({_ok(server['per_paper_mb'].median, TARGETS['memory_mb'])} the target; 3.0 MB at "
        "10:18 today, before the heap was trimmed after every parse and glibc's arenas were "
        "capped at two, src/paperanchor/papers.py). The papers' own objects (tree, anchor "
        "index, rendered chunks) are about 0.5 MB each by tracemalloc. The in-memory paper "
        "cache is bounded in bytes (`PAPERANCHOR_MEMORY_MB`, default 512): each held paper "
        "counts as `TREE_PER_ENTRY_BYTE` × its cache entry's size plus its renderings, least "
        "recently used first "
        "out, and the service keeps a paper's views exactly as long.",
        "",
        f"Six distinct copies of a page grown to {large['page_mb']:g} MB, each asked for its "
        "outline and a section, default setting: resident MB above idle after each paper "
        f"(bench/memory.py): {above_idle}; "
        f"peak {large['peak_kb'] / 1024:.0f} MB (a parse of such a page is most of it). Before the "
        "byte bound (measured once, on the code before it) the same six held 1,811 MB above idle.",
        "",
        "## 6b. Cache load: a store hit ÷ parsing the page again, and ÷ the old pickles",
        "",
        "bench/cache_bench.py: `PaperCache.read_paper` over an in-memory store (envelope, "
        "checksum, typed msgpack decode into the tree's classes) against `pickle.loads` of the "
        "same paper as the old format stored it, interleaved, and `parse_document` of the page "
        f"timed apart. Target (issue 15): ≤ {TARGETS['cache_load']}.",
        "",
        "| page | entry KB | pickle KB | entry ms | pickle ms | parse ms | ÷ parse | ÷ pickle |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in cache_rows:
        lines.append(
            f"| {row['page']} | {row['entry_bytes'] // 1024} | {row['pickle_bytes'] // 1024} | "
            f"{row['entry'].median * 1e3:.2f} | {row['pickle'].median * 1e3:.2f} | "
            f"{row['parse'].median * 1e3:.1f} | {row['to_parse'].show(3)} | "
            f"{row['to_pickle'].show()} |"
        )
    sums = cache_bench.totals(cache_rows)
    lines += [
        "",
        f"Corpus pages together: {sums['to_parse']:.3f} of parsing them again "
        f"({_ok(sums['to_parse'], TARGETS['cache_load'])} the target), {sums['to_pickle']:.2f} "
        "of unpickling them.",
        "",
        "## 7. Worker processes: 1 and 2 `paperanchor serve --workers N` over a shared Redis",
        "",
        "bench/workers.py: its own redis-server holding the parsed paper, offline workers, "
        "wrk from a separate process (docs/deploy.md), in two layouts of the cores: *shared* "
        "(nothing pinned: servers, Redis and wrk on both cores) and *load on its own core* "
        "(`taskset`: servers and Redis on CPU 0, wrk on CPU 1; "
        "`python -m bench.workers --server-cpus 0 --load-cpus 1`). Target (issue 15): two "
        "workers ≥ 1.6× one with the load generator on its own core.",
        "",
    ]
    if worker_rows is None:
        lines.append("Not measured: redis-server is not installed (apt-get install redis-server).")
    else:
        lines += [
            "| layout | workers | section .md req/s | /healthz req/s | ratio |",
            "|---|---|---|---|---|",
        ]
        for layout, rows in worker_rows.items():
            for count, figures in rows.items():
                lines.append(
                    f"| {layout} | {count} | {figures['section'].show(0)} | "
                    f"{figures['healthz'].show(0)} | {figures['ratio'].show()} |"
                )
        gains = ", ".join(
            f"{layout}: {rows[2]['section'].median / rows[1]['section'].median:.2f}×"
            for layout, rows in worker_rows.items()
        )
        lines += [
            "",
            f"Two workers ÷ one worker's section requests: {gains}. With the load generator on "
            "one of the machine's two cores, both workers share the other: 1.6× would need a "
            "third core, so this target cannot be met on this machine (and the machine is "
            "shared with other developers' test runs, which take cores from either layout).",
        ]
    lines += _pdf_section(pdf_rows, pdf_peaks)
    if peer_rows is not None:
        lines += [
            "",
            "## 9. Peers: the converters a user would pick instead, on the same pages",
            "",
            "Each turns every corpus page (but the failed conversion) into Markdown; speed is its",
            "time ÷ a bare `lxml.html.fromstring` of the same bytes in the same run (median over",
            "the pages, and all pages together); the counts are the corpus tests' rules, against",
            "the page itself (`bench/peers.py`).",
            "",
            *peers.rows(peer_rows),
        ]
    lines += [
        "",
        "## Profile of the slowest step",
        "",
    ]
    lines += PROFILE_HISTORY
    lines += [
        "",
        "Current profile (pyinstrument, 20 parses of 2501.11120v1):",
        "",
        "```",
        profile,
        "```",
        "",
    ]
    return "\n".join(lines) + "\n"


def _pdf_section(rows, peaks) -> list[str]:  # type: ignore[no-untyped-def]
    lines = [
        "",
        "## 8. PDF: `parse_pdf` ÷ pypdf's plain `extract_text()` of the same file",
        "",
        "bench/pdf_bench.py, every corpus PDF. `parse_pdf` is bytes to tree: PDFium in a fresh "
        "bounded child process, its JSON, the tree; pypdf is `PdfReader` and `extract_text()` "
        "of every page in-process, one string without structure. Interleaved runs; wall "
        "clock, and CPU seconds (the child's and ours), which the shared machine's load moves "
        f"less. Target (issue 15) ≤ {TARGETS['pdf']:.0f}.",
        "",
        "| PDF | pages | MB | parse s | ms/page | s/MB | pypdf s | ratio | CPU ratio | target | "
        "child peak MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        parse, pypdf = row["wall"]["parse"], row["wall"]["pypdf"]
        megabytes = row["bytes"] / 1e6
        lines.append(
            f"| {row['pdf']} | {row['pages']} | {megabytes:.2f} | {parse.show()} | "
            f"{parse.median / max(1, row['pages']) * 1000:.0f} | {parse.median / megabytes:.2f} | "
            f"{pypdf.show()} | {row['ratio'].show()} | {row['cpu_ratio'].show()} | "
            f"{_ok(row['ratio'].median, TARGETS['pdf'])} | {row['child_peak'] / 2**20:.0f} |"
        )
    parse_all = sum(r["wall"]["parse"].median for r in rows)
    pypdf_all = sum(r["wall"]["pypdf"].median for r in rows)
    pages_all = sum(r["pages"] for r in rows)
    bytes_all = sum(r["bytes"] for r in rows) / 1e6
    own, pypdf_peak = peaks["parse"], peaks["pypdf"]
    lines += [
        "",
        f"All PDFs together: {parse_all / pypdf_all:.2f} ({parse_all / pages_all * 1000:.0f} "
        f"ms a page, {parse_all / bytes_all:.2f} s a MB, against pypdf's "
        f"{pypdf_all / pages_all * 1000:.0f} ms and {pypdf_all / bytes_all:.2f} s). A page "
        "cut from a paper pays the child's start (about 100 ms: Python and PDFium's library) "
        f"against pypdf's tens of milliseconds. Peak memory on the largest ({peaks['pdf']}, "
        f"{peaks['bytes'] / 1e6:.1f} MB), each in a fresh process: parse_pdf "
        f"{own['own_kb'] / 1024:.0f} MB in the service's process plus "
        f"{own['child_kb'] / 1024:.0f} MB in PDFium's child (capped at 1 GiB), pypdf "
        f"{pypdf_peak['own_kb'] / 1024:.0f} MB.",
    ]
    return lines


# What profiling found and fixed, with the figures measured before and after on this machine.
PROFILE_HISTORY = [
    "1. **Warm requests.** Before: 72 requests/s for a cached section against 2,793 for "
    "`/healthz` (ratio 0.03), p50 77 ms. cProfile showed every request reading the paper from "
    "the store, unpickling it and rebuilding its anchor index and Markdown, because the "
    "service's view cache matched papers by object identity and the store returns a new "
    "object each time. Fix: the library keeps papers in process memory (bounded, above). "
    "After: 2,579 against 4,084 (ratio 0.63), p50 2.8 ms.",
    "3. **Several workers.** Before: `serve --workers 2` answered 356 /healthz requests/s "
    "against 3,975 for one process; one keep-alive connection got 22/s at 43 ms each. uvicorn "
    "hands its workers a listening socket made with protocol number 0, and asyncio only sets "
    "TCP_NODELAY on IPPROTO_TCP sockets, so every answer waited for the client's delayed ACK. "
    "Fix: uvicorn's HTTP protocol with TCP_NODELAY set per connection "
    "(src/paperanchor/api/transport.py). After: 4,744/s with 2 workers.",
    "2. **Parse.** Before: all pages 6.03× a bare lxml parse (worst page 13.8×). cProfile on "
    "2501.11120v1: lxml.html's per-element Python classes (88k lookups per parse), five "
    "whole-page XPath `contains(@class)` scans for front matter and errors, three walks of "
    "every float, class strings split again for every test. Fixes: a plain `etree` HTML "
    "parser, front matter looked for where LaTeXML puts it (XPath only when the bytes show the "
    "class), one walk per float that does not enter tabulars, cached class sets, whitespace "
    "squashed with `str.split`. After: all pages 2.32× (see section 1 for this run).",
    "4. **Cold outline** (issue 15). Before, on this morning's code: median 6.64× a bare lxml "
    "parse over the 33 pages of section 2 (1.07–114×, one round), and a fresh server's first "
    "outline took 51–68 ms where the next ones took 12–17 ms (fixtures/html/xss.html). "
    "cProfile with the worker threads run inline (10 cold outlines of 2510.11260v1): parse 22 "
    "ms, outline 12 ms of which Markdown 5 ms (every section rendered again at every depth, "
    "then the whole paper), the upstream GET 8 ms of which 1.6 ms were failed `import sniffio` "
    "in httpcore (0.27 ms each, six per GET), the store write 4 ms, and the cache looked up "
    "twice. Fixes: each section rendered once into chunks its parent and the paper share "
    "(service.Paper); sniffio installed; a warm-up at start (src/paperanchor/warmup.py); one "
    "cache lookup per cold load. After: section 2. Measured against the code before them in "
    "alternating runs at 13:15-13:20 (bench/requests_bench.py cold 3, the old src/ on "
    "PYTHONPATH, sniffio installed for both): before 5.56 and 3.85, after 4.39 and 4.20, the "
    "per-page ratio after ÷ before 1.04 (geometric mean): no gain beyond this machine's noise "
    "(without the background trims of section 6: 3.93). The outline's Markdown and the first "
    "request were not what bounds it: the parse of small pages and the fixed cost of a request "
    "are (two loopback exchanges, the polite GET through httpx, about 4 ms in-process for a "
    "5 KB page, and the store write).",
    "5. **Memory per paper** (issue 15). Before: 3.16 MB of resident memory per held paper "
    "(bench/memory.py), while tracemalloc counts 0.5 MB of objects per paper (tree 0.37, "
    "anchor index 0.09, the outline's chunks 0.07): the rest was what parses freed, kept by "
    "glibc across the worker threads' arenas. Fix: the heap trimmed after every parse (in the "
    "background below 4 MB) and two malloc arenas (src/paperanchor/papers.py). After: "
    "section 6.",
    "6. **MCP read**. In-process over ASGI, 300 calls each: the REST section read 1.15 ms, "
    "the same `tools/call read` 2.17 ms, of which the service's read is 0.07 ms; the rest was "
    "the MCP SDK's stateless transport, which builds a server session per request (an anyio "
    "task group, memory streams, eleven pydantic validations of the JSON-RPC message). Fix: "
    "tool calls answered in the request's own task (api/single_exchange.py), then a plain "
    "`tools/call` by the tool server itself, and a marked read's token count kept with the "
    "paper (the tokenizer ran over the section on every MCP read, two thirds of what was "
    "left). After: 0.18 ms against 0.27–0.31 ms for the REST read (`python -m bench.mcp_cost`; "
    "656 Python calls a call against 1,780).",
    "7. **Warm section read** (profiled, not changed). In-process the section read (0.66 ms) "
    "costs what `/healthz` does (0.70 ms): both go through the same middleware, and the "
    "route's own code is 0.14 ms (its Markdown is 1.9 KB); over loopback under wrk the gap "
    "between them moves with the machine's load (section 3's range).",
]


if __name__ == "__main__":
    sys.exit(main())
